"""More transforms: onto the simplex, triangular, correlation-Cholesky and
positive-definite matrices, softplus, and the functors that reshape,
concatenate, stack or reinterpret other transforms. Re-exported from
:mod:`ferrograd.distributions.transforms`, where they belong."""

from __future__ import annotations

import math

import ferrograd
from ferrograd.nn.functional import logsigmoid, pad, softplus

from . import constraints
from .transforms import Transform, _ParameterFree, _sum_rightmost
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = [
    "CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform", "SoftplusTransform",
    "StackTransform", "StickBreakingTransform",
]  # fmt: skip


def _require_last_dims(shape, n):
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")


class SoftplusTransform(_ParameterFree):
    """``y = log(1 + exp(x))`` (linear above ``x = 20``).

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import SoftplusTransform
        >>> t = SoftplusTransform()
        >>> t.inv(t(ferrograd.tensor([-1.0, 0.0, 2.0])))
        tensor([-1.0000,  0.0000,  2.0000])
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        # x = log(exp(y) - 1) = y + log(1 - exp(-y))
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


def _stick_offsets(k, like):
    """``log([k, k - 1, ..., 1])``: centres the stick-breaking logits so that
    ``x = 0`` maps to the simplex's centre."""
    return ferrograd.arange(k, 0, -1, dtype=like.dtype, device=like.device).log()


class StickBreakingTransform(_ParameterFree):
    """Maps ``R^K`` one-to-one onto the interior of the ``K + 1`` simplex by
    stick breaking: ``z_i = sigmoid(x_i - log(K + 1 - i))`` is the share
    broken off the stick left after the first ``i - 1`` pieces, and the last
    piece is the rest. Bijective (suitable for HMC), but it mixes the
    coordinates.

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import StickBreakingTransform
        >>> StickBreakingTransform()(ferrograd.zeros(2))
        tensor([0.3333, 0.3333, 0.3333])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        finfo = ferrograd.finfo(x.dtype)
        z = ferrograd.sigmoid(x - _stick_offsets(x.shape[-1], x)).clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        remaining = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(remaining, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=ferrograd.finfo(y.dtype).tiny)
        return y_crop.log() - remaining.log() + _stick_offsets(y_crop.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offsets(x.shape[-1], x)
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _require_last_dims(shape, 1)
        return ferrograd.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        _require_last_dims(shape, 1)
        return ferrograd.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


def _with_diagonal(x, fn):
    """The strictly lower triangle of ``x`` plus ``fn`` of its diagonal."""
    return x.tril(-1) + ferrograd.diag_embed(fn(x.diagonal(dim1=-2, dim2=-1)))


class LowerCholeskyTransform(_ParameterFree):
    """Maps square matrices onto lower-triangular ones with a positive
    diagonal: keeps the strictly lower triangle, exponentiates the diagonal
    and drops the upper triangle (so it is not injective).

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import LowerCholeskyTransform
        >>> LowerCholeskyTransform()(ferrograd.tensor([[0.0, 5.0], [2.0, 0.0]]))
        tensor([[1., 0.],
                [2., 1.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return _with_diagonal(x, ferrograd.exp)

    def _inverse(self, y):
        return _with_diagonal(y, ferrograd.log)


class PositiveDefiniteTransform(_ParameterFree):
    """Maps square matrices onto positive-definite ones: ``L L^T`` for ``L``
    the :class:`LowerCholeskyTransform` of the input; the inverse goes back
    through the Cholesky factor.

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import PositiveDefiniteTransform
        >>> PositiveDefiniteTransform()(ferrograd.tensor([[0.0, 0.0], [1.0, 0.0]]))
        tensor([[1., 1.],
                [1., 2.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(ferrograd.linalg.cholesky(y))


class CorrCholeskyTransform(_ParameterFree):
    """Maps a vector of ``D (D - 1) / 2`` reals onto the Cholesky factor of a
    ``D x D`` correlation matrix: lower triangular, positive diagonal, rows
    of unit norm.

    The entries, in row order, fill the strictly lower triangle after a
    ``tanh`` into ``(-1, 1)``; each row is then completed by a signed stick
    breaking of its squares, ``y_ij = r_ij sqrt(1 - sum_{k<j} y_ik^2)``, and
    the diagonal takes what is left. ``log_abs_det_jacobian`` is that of the
    map onto the strictly lower triangle (the only free entries).

    Args:
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import CorrCholeskyTransform
        >>> y = CorrCholeskyTransform()(ferrograd.tensor([0.5, -1.0, 2.0]))
        >>> (y * y).sum(-1)
        tensor([1.0000, 1.0000, 1.0000])
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = ferrograd.finfo(x.dtype).eps
        r = vec_to_tril_matrix(ferrograd.tanh(x).clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # y = sign(r) sqrt(r^2 * prod_{k<j} (1 - r_ik^2)) = r * prod_{k<j} sqrt(1 - r_ik^2)
        remaining = (1 - r.pow(2)).sqrt().cumprod(-1)
        r = r + ferrograd.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        remaining = pad((1 - (y * y).cumsum(-1))[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(remaining, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y):
        # The stick breaking contributes 1/2 log(1 - sum_{k<j} y_ik^2) per free
        # entry (diag=-2 picks those sums without shifting), tanh log(1 - tanh^2).
        remaining = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        stick_breaking = 0.5 * remaining.log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        _require_last_dims(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return ferrograd.Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        _require_last_dims(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return ferrograd.Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


class IndependentTransform(Transform):
    """Wraps ``base_transform`` so that its ``reinterpreted_batch_ndims``
    right-most batch dimensions count as event dimensions: the map is
    unchanged, :meth:`log_abs_det_jacobian` sums over those dimensions.

    Args:
        base_transform (Transform): the transform wrapped.
        reinterpreted_batch_ndims (int): how many extra right-most
            dimensions make one event.
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import ExpTransform, IndependentTransform
        >>> t = IndependentTransform(ExpTransform(), 1)
        >>> x = ferrograd.tensor([[0.0, 1.0], [2.0, 3.0]])
        >>> t.log_abs_det_jacobian(x, t(x))
        tensor([1., 5.])
    """

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        if not isinstance(base_transform, Transform):
            raise TypeError(f"base_transform must be a Transform, got {type(base_transform).__name__}")
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        _require_last_dims(x.shape, self.domain.event_dim)
        return self.base_transform(x)

    def _inverse(self, y):
        _require_last_dims(y.shape, self.codomain.event_dim)
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


def _reshaped_event(shape, old, new):
    """``shape`` with its right-most ``old`` part replaced by ``new``."""
    _require_last_dims(shape, len(old))
    cut = len(shape) - len(old)
    if tuple(shape[cut:]) != tuple(old):
        raise ValueError(f"Shape mismatch: expected a shape ending in {tuple(old)} but got {tuple(shape)}")
    return ferrograd.Size(tuple(shape[:cut]) + tuple(new))


class ReshapeTransform(Transform):
    """Reshapes the right-most ``in_shape`` part of a tensor to ``out_shape``
    (a unit Jacobian).

    Args:
        in_shape (Size): the input event shape.
        out_shape (Size): the output event shape, with as many elements.
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import ReshapeTransform
        >>> ReshapeTransform((4,), (2, 2))(ferrograd.zeros(3, 4)).shape
        ferrograd.Size([3, 2, 2])
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = ferrograd.Size(in_shape)
        self.out_shape = ferrograd.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(_reshaped_event(x.shape, self.in_shape, self.out_shape))

    def _inverse(self, y):
        return y.reshape(_reshaped_event(y.shape, self.out_shape, self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[: x.dim() - len(self.in_shape)])
        return ferrograd.zeros(batch_shape, dtype=x.dtype, device=x.device)

    def forward_shape(self, shape):
        return _reshaped_event(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return _reshaped_event(shape, self.out_shape, self.in_shape)


def _check_dim(what, value, dim, size, expected):
    if not -value.dim() <= dim < value.dim():
        raise IndexError(f"dim {dim} out of range for {what} with {value.dim()} dimensions")
    if value.size(dim) != expected:
        raise ValueError(f"{what}.size({dim}) = {value.size(dim)} must equal {size} {expected}")


class _PartsTransform(Transform):
    """The parts shared by the transforms applying one transform per slice
    along ``dim``: a subclass gives ``_slices(what, value)``, ``_join``
    (the op putting the pieces back together) and ``_combine`` (the
    constraint made of the parts' constraints)."""

    def __init__(self, tseq, dim, cache_size):
        tseq = list(tseq)
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("expected a sequence of Transform instances")
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else tseq
        self.dim = dim

    def _map(self, what, value, inverse):
        pieces = zip(self.transforms, self._slices(what, value), strict=True)
        return self._join([(t.inv if inverse else t)(s) for t, s in pieces], dim=self.dim)

    def _call(self, x):
        return self._map("x", x, inverse=False)

    def _inverse(self, y):
        return self._map("y", y, inverse=True)

    def _pieces(self, x, y):
        return zip(self.transforms, self._slices("x", x), self._slices("y", y), strict=True)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return self._combine([t.domain for t in self.transforms])

    @constraints.dependent_property
    def codomain(self):
        return self._combine([t.codomain for t in self.transforms])


class CatTransform(_PartsTransform):
    """Applies ``tseq[i]`` to the ``i``-th of consecutive slices of lengths
    ``lengths`` along ``dim``, as :func:`ferrograd.cat` would join them.

    Args:
        tseq (list of Transform): the transforms.
        dim (int): the dimension sliced.
        lengths (list of int, optional): the slice lengths (1 each by
            default).
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import CatTransform, ExpTransform, identity_transform
        >>> t = CatTransform([ExpTransform(), identity_transform], dim=0, lengths=[1, 2])
        >>> t(ferrograd.tensor([0.0, 5.0, 6.0]))
        tensor([1., 5., 6.])
    """

    _join = staticmethod(ferrograd.cat)

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(tseq, dim, cache_size)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(
                f"CatTransform: {len(self.transforms)} transforms but {len(self.lengths)} lengths"
            )

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        """int: the total length along ``dim``."""
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, what, value):
        _check_dim(what, value, self.dim, "length", self.length)
        start = 0
        for length in self.lengths:
            yield value.narrow(self.dim, start, length)
            start += length

    def _combine(self, parts):
        return constraints.cat(parts, self.dim, self.lengths)

    def log_abs_det_jacobian(self, x, y):
        event_dim = self.event_dim
        terms = [
            _sum_rightmost(t.log_abs_det_jacobian(xs, ys), event_dim - t.event_dim)
            for t, xs, ys in self._pieces(x, y)
        ]
        # Slicing along a batch dimension keeps the pieces apart; along an
        # event dimension they are summed into one value per event.
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + event_dim
        return ferrograd.cat(terms, dim=dim) if dim < 0 else sum(terms)


class StackTransform(_PartsTransform):
    """Applies ``tseq[i]`` to ``x.select(dim, i)``, as
    :func:`ferrograd.stack` would join the results.

    Args:
        tseq (list of Transform): the transforms, one per index along ``dim``.
        dim (int): the dimension sliced.
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions.transforms import ExpTransform, StackTransform, identity_transform
        >>> t = StackTransform([ExpTransform(), identity_transform], dim=1)
        >>> t(ferrograd.tensor([[0.0, 3.0], [1.0, 4.0]]))
        tensor([[1.0000, 3.0000],
                [2.7183, 4.0000]])
    """

    _join = staticmethod(ferrograd.stack)

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(tseq, dim, cache_size)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, what, value):
        _check_dim(what, value, self.dim, "len(transforms)", len(self.transforms))
        return value.unbind(self.dim)

    def _combine(self, parts):
        return constraints.stack(parts, self.dim)

    def log_abs_det_jacobian(self, x, y):
        terms = [t.log_abs_det_jacobian(xs, ys) for t, xs, ys in self._pieces(x, y)]
        return ferrograd.stack(terms, dim=self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: maps the distribution's support onto the
    unit interval (with ``log|dy/dx| = distribution.log_prob(x)``), e.g. to
    build copulas.

    Args:
        distribution (Distribution): a univariate distribution with ``cdf``
            and ``icdf``.
        cache_size (int): 0 or 1.

    Example:
        >>> from ferrograd.distributions import Normal
        >>> from ferrograd.distributions.transforms import CumulativeDistributionTransform
        >>> CumulativeDistributionTransform(Normal(0.0, 1.0))(ferrograd.tensor([0.0]))
        tensor([0.5000])
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
