"""The multivariate normal distribution with a covariance of low-rank plus
diagonal form, ``W W^T + diag(D)``, worked with through the small
"capacitance" matrix ``C = I + W^T D^{-1} W``."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .distribution import _AtLoc
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _identity_plus(matrix):
    """``I + matrix`` for a batch of square matrices."""
    return matrix + ferrograd.eye(matrix.shape[-1], dtype=matrix.dtype, device=matrix.device)


def _batch_capacitance_tril(cov_factor, cov_diag):
    """The lower Cholesky factor of ``C = I + W^T D^{-1} W`` (``m x m``)."""
    wt_dinv = cov_factor.mT / cov_diag.unsqueeze(-2)
    return ferrograd.linalg.cholesky(_identity_plus(ferrograd.matmul(wt_dinv, cov_factor)))


def _batch_lowrank_logdet(cov_factor, cov_diag, capacitance_tril):
    """``log det(W W^T + D) = log det C + log det D`` (the matrix determinant
    lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + cov_diag.log().sum(-1)


def _batch_lowrank_mahalanobis(cov_factor, cov_diag, x, capacitance_tril):
    """``x^T (W W^T + D)^{-1} x`` by the Woodbury identity
    ``(W W^T + D)^{-1} = D^{-1} - D^{-1} W C^{-1} W^T D^{-1}``."""
    wt_dinv_x = _batch_mv(cov_factor.mT / cov_diag.unsqueeze(-2), x)
    return (x.pow(2) / cov_diag).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


def _require_tensor(name, value, least_dim, what):
    if not isinstance(value, ferrograd.Tensor):
        raise TypeError(f"{name} must be a Tensor, got {type(value).__name__}")
    if value.dim() < least_dim:
        raise ValueError(f"{name} must be at least {what}, with optional leading batch dimensions")


class LowRankMultivariateNormal(_AtLoc):
    """The multivariate normal distribution with mean ``loc`` and covariance
    ``cov_factor @ cov_factor.mT + diag(cov_diag)``.

    For a factor of rank ``m`` much smaller than the dimension ``n``, the
    log-density and entropy cost ``O(n m^2)`` instead of ``O(n^3)``: the
    determinant comes from the matrix determinant lemma and the Mahalanobis
    distance from the Woodbury identity, both through the Cholesky factor
    of the ``m x m`` capacitance matrix ``I + W^T diag(D)^{-1} W``.
    :meth:`rsample` is ``loc + W eps_W + sqrt(D) * eps_D`` with two standard
    normal draws (``eps_W`` of rank size, then ``eps_D``).

    Args:
        loc (Tensor): the mean, shape ``(*batch, n)``.
        cov_factor (Tensor): the factor ``W``, shape ``(*batch, n, m)``.
        cov_diag (Tensor): the diagonal ``D``, positive, shape ``(*batch, n)``.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import LowRankMultivariateNormal
        >>> factor = ferrograd.tensor([[1.0], [0.0]])
        >>> d = LowRankMultivariateNormal(ferrograd.zeros(2), factor, ferrograd.ones(2))
        >>> d.covariance_matrix
        tensor([[2., 0.],
                [0., 1.]])
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        _require_tensor("loc", loc, 1, "one-dimensional")
        _require_tensor("cov_factor", cov_factor, 2, "two-dimensional")
        _require_tensor("cov_diag", cov_diag, 1, "one-dimensional")
        n = loc.shape[-1]
        if cov_factor.shape[-2] != n:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {n} x m, got {tuple(cov_factor.shape)}"
            )
        if cov_diag.shape[-1] != n:
            raise ValueError(
                f"cov_diag must be a batch of vectors with shape ({n},), got {tuple(cov_diag.shape)}"
            )
        try:
            loc_, self.cov_factor, cov_diag_ = ferrograd.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1)
            )
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor {tuple(cov_factor.shape)}, "
                f"cov_diag {tuple(cov_diag.shape)}"
            ) from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        # Validation first: a non-positive diagonal makes the factorisation fail.
        super().__init__(self.loc.shape[:-1], (n,), validate_args=validate_args)
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape, _instance=None):
        n, m = self.cov_factor.shape[-2:]
        params = {"loc": (n,), "cov_diag": (n,), "cov_factor": (n, m)}
        new = self._expand_params(LowRankMultivariateNormal, batch_shape, _instance, params)
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def variance(self):
        """Tensor: the diagonal of the covariance."""
        variance = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return variance.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self):
        """Tensor: the lower Cholesky factor of the covariance,
        ``sqrt(D) chol(I + D^{-1/2} W W^T D^{-1/2})``."""
        sqrt_diag = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / sqrt_diag
        inner = _identity_plus(ferrograd.matmul(scaled, scaled.mT))
        return (sqrt_diag * ferrograd.linalg.cholesky(inner)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """Tensor: the covariance ``W W^T + diag(D)``."""
        factor = self._unbroadcasted_cov_factor
        covariance = ferrograd.matmul(factor, factor.mT) + ferrograd.diag_embed(self._unbroadcasted_cov_diag)
        return covariance.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """Tensor: the inverse covariance, by the Woodbury identity."""
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = ferrograd.linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = ferrograd.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = ferrograd.randn(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = ferrograd.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (
            self.loc
            + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
            + self._unbroadcasted_cov_diag.sqrt() * eps_d
        )

    def _log_det(self):
        return _batch_lowrank_logdet(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        )

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor,
            self._unbroadcasted_cov_diag,
            value - self.loc,
            self._capacitance_tril,
        )
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + mahalanobis)

    def entropy(self):
        entropy = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return entropy.expand(self._batch_shape)
