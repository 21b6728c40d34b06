"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math
import numbers

import ferrograd

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all
from .wishart import _mvlgamma

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution of the lower Cholesky factor ``L`` of a
    ``dim x dim`` correlation matrix ``M = L L^T``, with density proportional
    to ``det(M)^(eta - 1)`` for ``eta = concentration``: ``eta = 1`` is
    uniform over correlation matrices, larger values favour the identity.

    The density of ``L`` with respect to its strictly lower entries is
    ``prod_{i>=2} L_ii^(dim - i + 2 eta - 2)`` normalized. Draws use the
    onion method (Lewandowski, Kurowicka and Joe, 2009): row ``i`` is a
    uniform direction scaled to the root of a beta-distributed squared
    length, the diagonal entry completing it to unit norm.

    Args:
        dim (int): the size of the matrices, at least 2.
        concentration (float or Tensor): ``eta``, positive.
        validate_args (bool, optional): validate arguments and samples.

    Example:
        >>> from ferrograd.distributions import LKJCholesky
        >>> d = LKJCholesky(3, 0.5)
        >>> d.event_shape
        ferrograd.Size([3, 3])
        >>> d.log_prob(ferrograd.eye(3))  # -log(4 pi)
        tensor(-2.5310)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
            raise TypeError(f"dim must be an int, got {type(dim).__name__}")
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = int(dim)
        (self.concentration,) = broadcast_all(concentration)
        super().__init__(self.concentration.shape, (self.dim, self.dim), validate_args=validate_args)
        self._beta = self._row_beta()

    def _row_beta(self):
        """The beta laws of the squared lengths of the rows' off-diagonal
        parts: row ``i >= 1`` (``i`` entries) has ``Beta(i / 2, eta + (dim
        - 1 - i) / 2)``; row 0, whose part is empty, a placeholder like row 1's."""
        conc = self.concentration
        offset = ferrograd.arange(self.dim - 1, dtype=conc.dtype, device=conc.device)
        offset = ferrograd.cat([ferrograd.zeros(1, dtype=conc.dtype, device=conc.device), offset])
        marginal = conc + 0.5 * (self.dim - 2)
        return Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return self._finish_expand(new, tuple(batch_shape))

    def sample(self, sample_shape=()):
        with ferrograd.no_grad():
            squared_length = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            normal = ferrograd.randn(shape, dtype=squared_length.dtype, device=squared_length.device).tril(-1)
            norm = normal.norm(dim=-1, keepdim=True)
            # Row 0 has no entries below the diagonal: 0 / 0 there is replaced by 0.
            first_row = ferrograd.arange(self.dim, device=norm.device).unsqueeze(-1) == 0
            direction = ferrograd.where(first_row, 0.0, normal / norm)
            w = squared_length.sqrt() * direction
            tiny = ferrograd.finfo(w.dtype).tiny
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + ferrograd.diag_embed(diagonal)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        dim, conc = self.dim, self.concentration
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        rows = ferrograd.arange(2, dim + 1, dtype=conc.dtype, device=conc.device)
        exponents = 2 * (conc - 1).unsqueeze(-1) + dim - rows
        unnormalized = (exponents * diagonal.log()).sum(-1)
        dm1 = dim - 1
        alpha = conc + 0.5 * dm1
        log_normalizer = (
            0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1) - ferrograd.lgamma(alpha) * dm1
        )
        return unnormalized - log_normalizer
