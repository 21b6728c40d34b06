"""Distance layers: ``PairwiseDistance`` and ``CosineSimilarity``."""

from __future__ import annotations

from ferrograd._core import Tensor

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class PairwiseDistance(Module):
    r"""``||x1 - x2 + eps||_p`` along the last dimension.

    Args:
        p (float): the norm degree. Default: 2.0.
        eps (float): added to the difference. Default: 1e-6.
        keepdim (bool): keep the last dim. Default: False.

    Shape:
        Inputs ``(N, D)`` or ``(D,)``, broadcastable; output ``(N)`` or ``()``.

    Example:
        >>> nn.PairwiseDistance(eps=0.0)(ferrograd.tensor([[3.0, 0.0]]), ferrograd.tensor([[0.0, 4.0]]))
        tensor([5.])
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.pairwise_distance` with this module's settings."""
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    r"""``x1 . x2 / max(||x1|| ||x2||, eps)`` along ``dim``.

    Args:
        dim (int): the dim to compute along. Default: 1.
        eps (float): the lower bound of the norms' product. Default: 1e-8.

    Example:
        >>> nn.CosineSimilarity(dim=0)(ferrograd.tensor([1.0, 0.0]), ferrograd.tensor([1.0, 1.0]))
        tensor(0.7071)
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.cosine_similarity` with this module's settings."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
