"""The multivariate normal distribution, parameterised through a
lower-triangular Cholesky factor of its covariance."""

from __future__ import annotations

import math

import ferrograd

from . import constraints
from .distribution import _AtLoc
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector product over broadcast batch dimensions."""
    return ferrograd.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(b_l, b_x):
    """Returns ``x^T (L L^T)^{-1} x`` for a lower-triangular ``L``, i.e. the
    squared norm of ``L^{-1} x``, over the broadcast batch dimensions."""
    n = b_x.shape[-1]
    batch = ferrograd.broadcast_shapes(b_l.shape[:-2], b_x.shape[:-1])
    b_l = b_l.expand(tuple(batch) + (n, n))
    b_x = b_x.expand(tuple(batch) + (n,))
    solved = ferrograd.linalg.solve_triangular(b_l, b_x.unsqueeze(-1), upper=False).squeeze(-1)
    return solved.pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    """The lower Cholesky factor of ``precision^{-1}``, without forming the
    inverse: with ``J P J = U U^T`` (``J`` the flip), ``L = (J U J)^{-T}``."""
    flipped = ferrograd.linalg.cholesky(ferrograd.flip(precision, (-2, -1)))
    l_inv = ferrograd.flip(flipped, (-2, -1)).mT
    eye = ferrograd.eye(precision.shape[-1], dtype=precision.dtype, device=precision.device)
    return ferrograd.linalg.solve_triangular(l_inv, eye, upper=False)


def _given_matrix(covariance_matrix, precision_matrix, scale_tril):
    """The one matrix parameter given, as ``(name, tensor)``; ValueError
    unless exactly one is given and it has at least two dimensions."""
    given = {
        "covariance_matrix": covariance_matrix,
        "precision_matrix": precision_matrix,
        "scale_tril": scale_tril,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if len(given) != 1:
        raise ValueError(
            "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."
        )
    ((name, matrix),) = given.items()
    if not isinstance(matrix, ferrograd.Tensor) or matrix.dim() < 2:
        raise ValueError(
            f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions"
        )
    return name, matrix


def _scale_tril_of(name, matrix):
    """The lower Cholesky factor of the covariance given as ``name`` (one of
    ``covariance_matrix``, ``precision_matrix``, ``scale_tril``)."""
    if name == "scale_tril":
        return matrix
    if name == "covariance_matrix":
        return ferrograd.linalg.cholesky(matrix)
    return _precision_to_scale_tril(matrix)


def _half_log_det(scale_tril):
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


class _FromScaleTril:
    """The three forms of a covariance (or scale) matrix held as its lower
    Cholesky factor ``_unbroadcasted_scale_tril``, each derived on first use
    (unless given) and expanded to ``_matrix_shape()``."""

    @lazy_property
    def scale_tril(self):
        """Tensor: the lower Cholesky factor of the covariance (scale) matrix."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """Tensor: the covariance (scale) matrix."""
        factor = self._unbroadcasted_scale_tril
        return ferrograd.matmul(factor, factor.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """Tensor: the inverse of the covariance (scale) matrix."""
        return ferrograd.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())


class MultivariateNormal(_FromScaleTril, _AtLoc):
    """The multivariate normal distribution with mean ``loc`` and a covariance
    given by exactly one of ``covariance_matrix``, ``precision_matrix`` (its
    inverse) or ``scale_tril`` (its lower Cholesky factor, the cheapest).

    Args:
        loc (Tensor): the mean, shape ``(*batch, n)``.
        covariance_matrix (Tensor, optional): positive-definite covariance,
            shape ``(*batch, n, n)``.
        precision_matrix (Tensor, optional): positive-definite inverse
            covariance.
        scale_tril (Tensor, optional): lower-triangular factor with a positive
            diagonal.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import MultivariateNormal
        >>> d = MultivariateNormal(ferrograd.zeros(2), covariance_matrix=ferrograd.eye(2))
        >>> d.log_prob(ferrograd.zeros(2))
        tensor(-1.8379)
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None
    ):
        if not isinstance(loc, ferrograd.Tensor) or loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = _given_matrix(covariance_matrix, precision_matrix, scale_tril)
        if matrix.shape[-1] != matrix.shape[-2] or matrix.shape[-1] != loc.shape[-1]:
            raise ValueError(
                f"{name} of shape {tuple(matrix.shape)} does not match loc of shape {tuple(loc.shape)}: "
                "expected (..., n, n) with n = loc.shape[-1]"
            )
        batch_shape = tuple(ferrograd.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1]))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, matrix)

    def expand(self, batch_shape, _instance=None):
        n = self.event_shape[0]
        params = {"loc": (n,), "covariance_matrix": (n, n), "precision_matrix": (n, n), "scale_tril": (n, n)}
        new = self._expand_params(MultivariateNormal, batch_shape, _instance, params)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def variance(self):
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ferrograd.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + mahalanobis) - _half_log_det(
            self._unbroadcasted_scale_tril
        )

    def entropy(self):
        n = self._event_shape[0]
        entropy = 0.5 * n * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return entropy.expand(self._batch_shape)
