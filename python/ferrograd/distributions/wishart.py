"""The Wishart distribution over positive-definite matrices."""

from __future__ import annotations

import math
import numbers
import warnings

import ferrograd

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _FromScaleTril, _given_matrix, _half_log_det, _scale_tril_of
from .utils import all_true, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvlgamma(x, p):
    """The log multivariate gamma ``p(p-1)/4 log(pi) + sum_{i<p} lgamma(x - i/2)``
    (``ferrograd.mvlgamma`` without its domain check, which is data-dependent
    control flow under ``vmap``; the parameter constraints keep ``x`` in it)."""
    halves = ferrograd.arange(p, dtype=x.dtype, device=x.device) / 2
    return p * (p - 1) / 4 * math.log(math.pi) + ferrograd.lgamma(x.unsqueeze(-1) - halves).sum(-1)


def _mvdigamma(x, p):
    """The multivariate digamma ``sum_{i<p} digamma(x - i/2)``, the derivative
    of ``mvlgamma(x, p)``."""
    halves = ferrograd.arange(p, dtype=x.dtype, device=x.device) / 2
    return ferrograd.digamma(x.unsqueeze(-1) - halves).sum(-1)


class Wishart(_FromScaleTril, ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom and scale
    matrix ``V`` (``covariance_matrix``, or its inverse
    ``precision_matrix``, or its lower Cholesky factor ``scale_tril``; give
    exactly one): for integer ``df`` the law of ``sum_i x_i x_i^T`` over
    ``df`` independent ``x_i ~ N(0, V)``, with density
    ``|X|^((df-p-1)/2) exp(-tr(V^-1 X) / 2) / (2^(df p/2) |V|^(df/2)
    Gamma_p(df/2))`` on ``p x p`` positive-definite ``X``.

    Draws use the Bartlett decomposition ``X = (L A)(L A)^T``, with ``A``
    lower triangular, ``A_ii^2 ~ Chi2(df - i)`` and standard normal entries
    below the diagonal; they are differentiable in ``df`` and the scale.
    Draws that are numerically singular (likely when ``df < p``) are drawn
    again, at most ``max_try_correction`` times.

    Args:
        df (float or Tensor): the degrees of freedom, greater than ``p - 1``.
        covariance_matrix (Tensor, optional): the positive-definite scale
            matrix ``V``, shape ``(*batch, p, p)``.
        precision_matrix (Tensor, optional): ``V^-1``, positive definite.
        scale_tril (Tensor, optional): the lower Cholesky factor of ``V``
            with a positive diagonal.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import Wishart
        >>> d = Wishart(ferrograd.tensor(3.0), covariance_matrix=ferrograd.eye(2))
        >>> d.mean
        tensor([[3., 0.],
                [0., 3.]])
        >>> d.event_shape
        ferrograd.Size([2, 2])
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        """dict: the matrices are positive definite (lower Cholesky) and
        ``df > p - 1``."""
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(
        self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None
    ):
        name, matrix = _given_matrix(covariance_matrix, precision_matrix, scale_tril)
        if matrix.shape[-1] != matrix.shape[-2]:
            raise ValueError(f"{name} must be square matrices, got shape {tuple(matrix.shape)}")
        p = matrix.shape[-1]
        if isinstance(df, numbers.Number):
            batch_shape = tuple(matrix.shape[:-2])
            self.df = ferrograd.tensor(float(df), dtype=matrix.dtype, device=matrix.device)
        elif isinstance(df, ferrograd.Tensor):
            batch_shape = tuple(ferrograd.broadcast_shapes(matrix.shape[:-2], df.shape))
            self.df = df.expand(batch_shape)
        else:
            raise TypeError(f"df must be a number or a Tensor, got {type(df).__name__}")
        if not all_true(self.df > p - 1):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if not all_true(self.df >= p):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for "
                "ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        super().__init__(batch_shape, (p, p), validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, matrix)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self):
        """The chi-squared laws ``Chi2(df - i)``, ``i < p``, of the squared
        diagonal of the Bartlett factor."""
        p = self.event_shape[-1]
        offsets = ferrograd.arange(p, dtype=self._unbroadcasted_scale_tril.dtype, device=self.df.device)
        return Chi2(self.df.unsqueeze(-1) - offsets.expand(tuple(self.batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        p = self.event_shape[-1]
        params = {"covariance_matrix": (p, p), "precision_matrix": (p, p), "scale_tril": (p, p)}
        new = self._expand_params(Wishart, batch_shape, _instance, params)
        new.df = self.df.expand(batch_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new._dist_chi2 = new._bartlett_chi2()
        return new

    def _matrix_shape(self):
        return tuple(self.batch_shape) + tuple(self.event_shape)

    def _df_matrix(self, df):
        """``df`` (batch-shaped) with two trailing singleton dimensions."""
        return df.reshape(tuple(self.batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.event_shape[-1] - 1
        factor = ferrograd.where(factor > 0, factor, math.nan)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diagonal = v.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (v.pow(2) + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        p = self.event_shape[-1]
        eps = ferrograd.finfo(self._unbroadcasted_scale_tril.dtype).eps
        diagonal = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps)
        below = ferrograd.randn(
            tuple(sample_shape) + tuple(self.batch_shape) + (p * (p - 1) // 2,),
            dtype=diagonal.dtype,
            device=diagonal.device,
        )
        noise = vec_to_tril_matrix(below, diag=-1) + ferrograd.diag_embed(diagonal, dim1=-2, dim2=-1)
        factor = ferrograd.matmul(self._unbroadcasted_scale_tril, noise)
        return ferrograd.matmul(factor, factor.mT)

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Draws reparameterized samples by the Bartlett decomposition.

        Draws that fail the positive-definiteness check are drawn again, up
        to ``max_try_correction`` times (10 by default), with a warning; some
        may still be singular afterwards, and their ``log_prob`` may be
        ``-inf``: then raise ``df`` or ``max_try_correction``.

        Args:
            sample_shape (Size): the leading sample dimensions.
            max_try_correction (int, optional): the number of redraws of
                singular samples.
        """
        tries = 10 if max_try_correction is None else max_try_correction
        sample_shape = tuple(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(tries):
                redraw = self._bartlett_sampling(sample_shape)
                sample = ferrograd.where(singular.unsqueeze(-1).unsqueeze(-1), redraw, sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self.event_shape[-1]
        scale_tril = self._unbroadcasted_scale_tril
        trace = ferrograd.cholesky_solve(value, scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (
            -nu * (p * _LOG_2 / 2 + _half_log_det(scale_tril))
            - _mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * ferrograd.linalg.slogdet(value).logabsdet
            - trace / 2
        )

    def entropy(self):
        nu, p = self.df, self.event_shape[-1]
        return (
            (p + 1) * (p * _LOG_2 / 2 + _half_log_det(self._unbroadcasted_scale_tril))
            + _mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        p = self.event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self.event_shape[-1]
        shifted = y + (p + 1) / 2
        return shifted * (p * _LOG_2 - ferrograd.linalg.slogdet(-2 * x).logabsdet) + _mvlgamma(shifted, p)
