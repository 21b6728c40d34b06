"""Invertible (or at least computable) maps between constrained spaces, with
the log-absolute-determinant of their Jacobians for change of variables."""

from __future__ import annotations

import math
import numbers
import weakref

import ferrograd
from ferrograd.nn.functional import softplus

from . import constraints
from .utils import all_true, clamp_probs

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
    "Transform", "identity_transform",
]  # fmt: skip


def _sum_rightmost(value, dim):
    """Sums the ``dim`` right-most dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[: value.dim() - dim], -1).sum(-1)


class Transform:
    """An invertible map ``y = t(x)`` with its log-absolute-determinant
    Jacobian, used by :class:`~ferrograd.distributions.TransformedDistribution`.

    Args:
        cache_size (int): 1 to remember the latest ``(x, y)`` pair so that
            inverting a value just produced returns the input exactly; 0 for
            no cache.

    Example:
        >>> from ferrograd.distributions.transforms import ExpTransform
        >>> t = ExpTransform()
        >>> t.inv(t(ferrograd.tensor([0.0, 1.0])))
        tensor([0., 1.])
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = (None, None)
        self._inv = None

    @property
    def event_dim(self):
        """int: the event dimensions of the domain and codomain (when equal)."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """Transform: the inverse, with ``t.inv.inv is t``."""
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """int: the sign of the Jacobian determinant (for bijective maps)."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        """Returns this transform with the given cache size.

        Args:
            cache_size (int): 0 or 1.
        """
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """Returns ``log |dy/dx|`` for the pair ``(x, y = t(x))``.

        Args:
            x (Tensor): the input.
            y (Tensor): the output.
        """
        raise NotImplementedError

    def forward_shape(self, shape):
        """Returns the output shape for an input of ``shape``.

        Args:
            shape (Size): the input shape.
        """
        return shape

    def inverse_shape(self, shape):
        """Returns the input shape for an output of ``shape``.

        Args:
            shape (Size): the output shape.
        """
        return shape

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform, sharing its cache."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """Applies ``parts`` in order: ``parts[-1](...parts[0](x))``.

    Args:
        parts (list of Transform): the transforms.
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import AffineTransform, ComposeTransform, ExpTransform
        >>> t = ComposeTransform([ExpTransform(), AffineTransform(0.0, 2.0)])
        >>> t(ferrograd.tensor([0.0]))
        tensor([2.])
    """

    def __init__(self, parts, cache_size=0):
        if not all(isinstance(p, Transform) for p in parts):
            raise ValueError("ComposeTransform expects a list of Transform instances")
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def _event_dim_through(self, parts, first, last):
        # Walks the parts from the far end, tracking the event dimensions one
        # element of the near end's space must cover.
        event_dim = getattr(parts[-1], last).event_dim
        for part in reversed(parts):
            event_dim += getattr(part, first).event_dim - getattr(part, last).event_dim
            event_dim = max(event_dim, getattr(part, first).event_dim)
        return event_dim

    def _widened(self, constraint, event_dim):
        if event_dim > constraint.event_dim:
            return constraints.independent(constraint, event_dim - constraint.event_dim)
        return constraint

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        event_dim = self._event_dim_through(self.parts, "domain", "codomain")
        return self._widened(self.parts[0].domain, event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        event_dim = self._event_dim_through(self.parts[::-1], "codomain", "domain")
        return self._widened(self.parts[-1].codomain, event_dim)

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return ferrograd.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        result = 0
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:], strict=True):
            terms = part.log_abs_det_jacobian(xi, yi)
            result = result + _sum_rightmost(terms, event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class _ParameterFree(Transform):
    """A transform without parameters: all instances of a class are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_ParameterFree):
    """``y = exp(x)``.

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import ExpTransform
        >>> ExpTransform().log_abs_det_jacobian(ferrograd.tensor([2.0]), ferrograd.tensor([7.389]))
        tensor([2.])
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals.

    Args:
        exponent (Tensor or float): the power.
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import PowerTransform
        >>> PowerTransform(2.0)(ferrograd.tensor([3.0]))
        tensor([9.])
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _as_tensors(exponent)

    def with_cache(self, cache_size=1):
        return (
            self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size=cache_size)
        )

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and _same_value(self.exponent, other.exponent)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return ferrograd.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape


def _same_value(a, b):
    """Equality of two parameters, each a number or a tensor."""
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    return all_true(ferrograd.as_tensor(a).eq(ferrograd.as_tensor(b)))


def _as_tensors(*values):
    return tuple(v if isinstance(v, ferrograd.Tensor) else ferrograd.tensor(float(v)) for v in values)


class SigmoidTransform(_ParameterFree):
    """``y = 1 / (1 + exp(-x))``, clamped into the open unit interval.

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import SigmoidTransform
        >>> SigmoidTransform()(ferrograd.tensor([0.0]))
        tensor([0.5000])
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        return clamp_probs(ferrograd.sigmoid(x))

    def _inverse(self, y):
        y = clamp_probs(y)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class TanhTransform(_ParameterFree):
    """``y = tanh(x)``.

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import TanhTransform
        >>> TanhTransform()(ferrograd.tensor([0.0]))
        tensor([0.])
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return ferrograd.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written with softplus so it stays finite for large |x|.
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(_ParameterFree):
    """``y = |x|`` (not injective: the inverse picks the positive root).

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import AbsTransform
        >>> AbsTransform()(ferrograd.tensor([-2.0]))
        tensor([2.])
    """

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x``.

    Args:
        loc (Tensor or float): the shift.
        scale (Tensor or float): the scale.
        event_dim (int): the event dimensions (the Jacobian term is summed
            over them).
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import AffineTransform
        >>> AffineTransform(1.0, 3.0)(ferrograd.tensor([2.0]))
        tensor([7.])
    """

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return (
            constraints.real
            if self._event_dim == 0
            else constraints.independent(constraints.real, self._event_dim)
        )

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        return _same_value(self.loc, other.loc) and _same_value(self.scale, other.scale)

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = ferrograd.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        shape = tuple(x.shape)
        if self._event_dim:
            result = result.reshape(*result.shape[: result.dim() - self._event_dim], -1).sum(-1)
            shape = shape[: len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return ferrograd.broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )

    inverse_shape = forward_shape


class SoftmaxTransform(_ParameterFree):
    """Maps unconstrained vectors onto the simplex by ``exp`` and
    normalisation (not injective; the inverse returns ``log(y)``).

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import SoftmaxTransform
        >>> SoftmaxTransform()(ferrograd.zeros(2))
        tensor([0.5000, 0.5000])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True).values).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


# The structured transforms live in their own module (this one would pass
# 1000 lines); imported last, since they build on the classes above.
from .transforms_extra import (  # noqa: E402
    CatTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
)
