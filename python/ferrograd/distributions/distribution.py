"""The :class:`Distribution` base class: shapes, argument validation and the
sampling/density interface every distribution fills in."""

from __future__ import annotations

import warnings

import ferrograd

from . import constraints
from .utils import all_true, broadcast_all, lazy_property

__all__ = ["Distribution"]


def _size(shape):
    return shape if isinstance(shape, ferrograd.Size) else ferrograd.Size(shape)


def _require_distribution(base):
    if not isinstance(base, Distribution):
        raise TypeError(f"base_distribution must be a Distribution, got {type(base).__name__}")


class Distribution:
    """Abstract base class for probability distributions.

    A distribution has a ``batch_shape`` (independent, differently
    parameterised copies) and an ``event_shape`` (the shape of one draw);
    ``sample(sample_shape)`` returns ``sample_shape + batch_shape +
    event_shape``.

    Args:
        batch_shape (Size): the batch shape.
        event_shape (Size): the event shape.
        validate_args (bool, optional): check parameters and the values
            passed to :meth:`log_prob` (the class default, see
            :meth:`set_default_validate_args`, when ``None``).

    Example:
        >>> from ferrograd.distributions import Normal
        >>> d = Normal(ferrograd.zeros(3), 1.0)
        >>> d.batch_shape, d.event_shape
        (ferrograd.Size([3]), ferrograd.Size([]))
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Sets whether argument validation is on by default.

        Args:
            value (bool): the new default.

        Example:
            >>> from ferrograd.distributions import Distribution
            >>> Distribution.set_default_validate_args(True)
        """
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args expects True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = _size(batch_shape)
        self._event_shape = _size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if not self._validate_args:
            return
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(
                f"{type(self).__name__} does not define `arg_constraints`; please set it to {{}} "
                "if it has no parameters to validate",
                stacklevel=2,
            )
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # a parameter derived lazily from the one given
            value = getattr(self, param)
            if not all_true(constraint.check(value)):
                raise ValueError(
                    f"Expected parameter {param} ({value.__class__.__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                    f"but found invalid values:\n{value}"
                )

    def expand(self, batch_shape, _instance=None):
        """Returns a new distribution whose batch dimensions are expanded to
        ``batch_shape`` (parameters are expanded views, no copies).

        Args:
            batch_shape (Size): the desired batch shape.
            _instance: an instance to fill in, used by subclasses.
        """
        raise NotImplementedError

    @property
    def batch_shape(self):
        """Size: the shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """Size: the shape of a single sample."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """dict: the constraint each parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """Constraint: the set the samples lie in."""
        raise NotImplementedError

    @property
    def mean(self):
        """Tensor: the mean."""
        raise NotImplementedError

    @property
    def mode(self):
        """Tensor: the mode."""
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        """Tensor: the variance."""
        raise NotImplementedError

    @property
    def stddev(self):
        """Tensor: the standard deviation."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """Draws a sample (or a batch of samples of shape ``sample_shape``)
        without recording gradients.

        Args:
            sample_shape (Size): the leading sample dimensions.
        """
        with ferrograd.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """Draws a reparameterized sample: differentiable with respect to the
        parameters.

        Args:
            sample_shape (Size): the leading sample dimensions.
        """
        raise NotImplementedError

    def sample_n(self, n):
        """Draws ``n`` samples (deprecated: use ``sample((n,))``).

        Args:
            n (int): the number of samples.
        """
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2
        )
        return self.sample(ferrograd.Size((n,)))

    def log_prob(self, value):
        """Returns the log of the probability density/mass at ``value``.

        Args:
            value (Tensor): the values.
        """
        raise NotImplementedError

    def cdf(self, value):
        """Returns the cumulative distribution function at ``value``.

        Args:
            value (Tensor): the values.
        """
        raise NotImplementedError

    def icdf(self, value):
        """Returns the inverse cumulative distribution function at ``value``.

        Args:
            value (Tensor): probabilities.
        """
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Returns all values of a discrete support, along a new leading
        dimension.

        Args:
            expand (bool): expand the result over the batch dimensions.
        """
        raise NotImplementedError

    def entropy(self):
        """Returns the entropy, one value per batch element."""
        raise NotImplementedError

    def perplexity(self):
        """Returns ``exp(entropy)``."""
        return ferrograd.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        """Returns ``sample_shape + batch_shape + event_shape``.

        Args:
            sample_shape (Size): the leading sample dimensions.
        """
        return ferrograd.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """Raises ValueError when ``value`` has the wrong shape or lies
        outside the support.

        Args:
            value (Tensor): the values to check.
        """
        if not isinstance(value, ferrograd.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.shape} vs {self._event_shape}."
            )
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(tuple(value.shape)), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{value.shape} vs {ferrograd.Size(expected)}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{type(self).__name__} does not define `support` to enable sample validation.", stacklevel=2
            )
            return
        if not all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({value.__class__.__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {type(self).__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, _instance, params):
        """Returns a copy of this distribution with the parameters named in
        ``params`` (name -> trailing event shape) expanded to ``batch_shape``;
        a parameter not yet computed (a lazy one) is left to be derived.

        Args:
            cls (type): the class whose ``expand`` is running.
            batch_shape (Size): the new batch shape.
            _instance: an instance to fill in, used by subclasses.
            params (dict): parameter name -> its trailing (event) shape.
        """
        new = self._get_checked_instance(cls, _instance)
        batch_shape = tuple(batch_shape)
        for name, trailing in params.items():
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape + tuple(trailing)))
        return self._finish_expand(new, batch_shape)

    def _finish_expand(self, new, batch_shape):
        """Gives ``new`` (an expanded copy) its shapes and this distribution's
        validation setting, without validating again."""
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _family(self, base):
        """The class that derives directly from ``base`` among this one's
        ancestors: the family a shared ``expand`` checks subclasses against."""
        return next(c for c in type(self).__mro__ if base in c.__bases__)

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names
        )
        return f"{type(self).__name__}({shown})"


class _AtLoc(Distribution):
    """The parts shared by the distributions centred at their ``loc``
    parameter: ``mean = mode = loc``."""

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc


class _LocScale(_AtLoc):
    """The parts shared by the location-scale families on the real line:
    ``loc`` and ``scale`` broadcast together, ``mean = mode = loc``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(self._family(_LocScale), batch_shape, _instance, {"loc": (), "scale": ()})
