"""Dropout layers. Active in training mode only; ``eval()`` makes them the identity."""

from __future__ import annotations

from ferrograd._core import Tensor

from .. import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    r"""In training, zeroes each element with probability ``p`` and scales the
    rest by ``1 / (1 - p)``; in evaluation, returns the input.

    Args:
        p (float): the probability of an element being dropped. Default: 0.5.
        inplace (bool): write the result into the input. Default: False.

    Example:
        >>> m = nn.Dropout(p=0.2).eval()
        >>> m(ferrograd.ones(3))
        tensor([1., 1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.dropout` with this module's settings."""
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    r"""Zeroes whole channels of ``(N, C, L)`` (or ``(C, L)``) inputs with probability ``p``.

    Args:
        p (float): the probability of an element being dropped. Default: 0.5.
        inplace (bool): write the result into the input. Default: False.

    Example:
        >>> nn.Dropout1d(0.5)(ferrograd.ones(2, 3, 4)).shape
        ferrograd.Size([2, 3, 4])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.dropout1d` with this module's settings."""
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    r"""Zeroes whole channels of ``(N, C, H, W)`` inputs with probability ``p``.

    Args:
        p (float): the probability of an element being dropped. Default: 0.5.
        inplace (bool): write the result into the input. Default: False.

    Example:
        >>> nn.Dropout2d(0.5)(ferrograd.ones(2, 3, 4, 4)).shape
        ferrograd.Size([2, 3, 4, 4])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.dropout2d` with this module's settings."""
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    r"""Zeroes whole channels of ``(N, C, D, H, W)`` inputs with probability ``p``.

    Args:
        p (float): the probability of an element being dropped. Default: 0.5.
        inplace (bool): write the result into the input. Default: False.

    Example:
        >>> nn.Dropout3d(0.5)(ferrograd.ones(1, 2, 2, 2, 2)).shape
        ferrograd.Size([1, 2, 2, 2, 2])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.dropout3d` with this module's settings."""
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    r"""Dropout for SELU networks: keeps zero mean and unit variance by setting
    dropped elements to SELU's negative saturation and applying an affine correction.

    Args:
        p (float): the probability of an element being dropped. Default: 0.5.
        inplace (bool): write the result into the input. Default: False.

    Example:
        >>> nn.AlphaDropout(0.2).eval()(ferrograd.ones(3))
        tensor([1., 1., 1.])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.alpha_dropout` with this module's settings."""
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    r"""Alpha dropout of whole channels.

    Args:
        p (float): the probability of an element being dropped. Default: 0.5.
        inplace (bool): write the result into the input. Default: False.

    Example:
        >>> nn.FeatureAlphaDropout(0.2).eval()(ferrograd.ones(1, 2, 3)).shape
        ferrograd.Size([1, 2, 3])
    """

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.feature_alpha_dropout` with this module's settings."""
        return F.feature_alpha_dropout(input, self.p, self.training)
