"""``PixelShuffle`` and ``PixelUnshuffle``: trade channels for spatial resolution."""

from __future__ import annotations

from ferrograd._core import Tensor

from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    r"""``(*, C r^2, H, W) -> (*, C, H r, W r)``.

    Args:
        upscale_factor (int): the factor ``r``.

    Example:
        >>> nn.PixelShuffle(3)(ferrograd.ones(1, 9, 4, 4)).shape
        ferrograd.Size([1, 1, 12, 12])
    """

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.pixel_shuffle` with this module's settings."""
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    r"""``(*, C, H r, W r) -> (*, C r^2, H, W)``.

    Args:
        downscale_factor (int): the factor ``r``.

    Example:
        >>> nn.PixelUnshuffle(3)(ferrograd.ones(1, 1, 12, 12)).shape
        ferrograd.Size([1, 9, 4, 4])
    """

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.pixel_unshuffle` with this module's settings."""
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"downscale_factor={self.downscale_factor}"
