"""Registries from constraints to transforms: ``biject_to(c)`` returns a
bijection from unconstrained space onto the set ``c``, ``transform_to(c)``
a transform onto ``c`` that need not be injective (cheaper, or better
conditioned for optimisation). Both dispatch on the constraint's class:

- ``real``: the identity; ``independent``: an ``IndependentTransform`` of
  the base constraint's transform; ``cat`` and ``stack``: a
  ``CatTransform``/``StackTransform`` of the parts' transforms.
- ``positive``, ``nonnegative``, ``greater_than(_eq)``: ``exp`` then a
  shift; ``less_than``: ``exp`` then a negation and shift.
- ``interval``, ``half_open_interval``: ``sigmoid`` (then an affine map
  unless the bounds are 0 and 1).
- ``simplex``: ``StickBreakingTransform`` (``biject_to``),
  ``SoftmaxTransform`` (``transform_to``).
- ``corr_cholesky``: ``CorrCholeskyTransform``; only in ``transform_to``:
  ``lower_cholesky`` (``LowerCholeskyTransform``) and
  ``positive_definite``/``positive_semidefinite``
  (``PositiveDefiniteTransform``).
"""

from __future__ import annotations

import functools
import numbers

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A registry of factories building a transform onto each kind of
    constraint; calling the registry with a constraint object returns the
    transform.

    Example:
        >>> from ferrograd.distributions import biject_to, constraints
        >>> t = biject_to(constraints.interval(0.0, 2.0))
        >>> t(ferrograd.tensor([0.0]))
        tensor([1.])
    """

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Registers ``factory`` for a constraint class; used as a decorator
        when ``factory`` is omitted.

        Args:
            constraint (type or Constraint): a subclass of
                :class:`~ferrograd.distributions.constraints.Constraint`, or
                an instance standing for its class.
            factory (callable, optional): called with a constraint object,
                returns a :class:`~ferrograd.distributions.transforms.Transform`.

        Example:
            >>> from ferrograd.distributions import constraints, transforms
            >>> from ferrograd.distributions.constraint_registry import ConstraintRegistry
            >>> registry = ConstraintRegistry()
            >>> @registry.register(constraints.positive)
            ... def _to_positive(constraint):
            ...     return transforms.SoftplusTransform()
            >>> registry(constraints.positive)
            SoftplusTransform()
        """
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(
                f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}"
            )
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        """Returns the transform registered for ``constraint``'s class.

        Args:
            constraint (Constraint): the constraint.

        Raises:
            NotImplementedError: nothing is registered for that class.
        """
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _register_both(*constraint_classes):
    """Registers a factory in both registries for every class given."""

    def decorator(factory):
        for registry in (biject_to, transform_to):
            for c in constraint_classes:
                registry.register(c, factory)
        return factory

    return decorator


@_register_both(constraints.real)
def _transform_to_real(constraint):
    return transforms.identity_transform


# ``positive`` and ``nonnegative`` are instances of these classes: they get
# ``exp`` followed by a shift by 0, as in torch.
@_register_both(constraints.greater_than, constraints.greater_than_eq)
def _transform_to_greater_than(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)]
    )


@_register_both(constraints.less_than)
def _transform_to_less_than(constraint):
    return transforms.ComposeTransform(
        [transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)]
    )


@_register_both(constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if isinstance(lower, numbers.Number) and lower == 0 and isinstance(upper, numbers.Number) and upper == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform(
        [transforms.SigmoidTransform(), transforms.AffineTransform(lower, upper - lower)]
    )


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_register_both(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


# The functors: the registry's transform for each part of the constraint.


def _independent(registry, constraint):
    return transforms.IndependentTransform(
        registry(constraint.base_constraint), constraint.reinterpreted_batch_ndims
    )


def _cat(registry, constraint):
    return transforms.CatTransform([registry(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


def _stack(registry, constraint):
    return transforms.StackTransform([registry(c) for c in constraint.cseq], constraint.dim)


for _registry in (biject_to, transform_to):
    _registry.register(constraints.independent, functools.partial(_independent, _registry))
    _registry.register(constraints.cat, functools.partial(_cat, _registry))
    _registry.register(constraints.stack, functools.partial(_stack, _registry))
del _registry
