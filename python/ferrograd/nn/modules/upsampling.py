"""``Upsample`` and its fixed-mode spellings."""

from __future__ import annotations

from typing import Any

from ferrograd._core import Tensor

from .. import functional as F
from .._docs import fill_docs as _fill_docs
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    r"""Resizes ``(N, C, *spatial)`` inputs to ``size`` or by ``scale_factor`` with
    :func:`~ferrograd.nn.functional.interpolate` (``mode`` ``'nearest'``,
    ``'linear'``, ``'bilinear'``, ...).

    Args:
        size (int or tuple of ints, optional): the output spatial size.
        scale_factor (float or tuple of floats, optional): the spatial scale (give it or ``size``).
        mode (str): ``'nearest'``, ``'linear'``, ``'bilinear'``, ``'bicubic'`` or ``'trilinear'``.
            Default: ``'nearest'``.
        align_corners (bool, optional): for the linear modes, align the corner pixels.
        recompute_scale_factor (bool, optional): derive the scale from the computed size.

    Example:
        >>> nn.Upsample(scale_factor=2)(ferrograd.tensor([[[1.0, 2.0]]]))
        tensor([[[1., 1., 2., 2.]]])
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name", "recompute_scale_factor"]

    def __init__(
        self,
        size: Any = None,
        scale_factor: Any = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        """Resizes ``input`` with :func:`ferrograd.nn.functional.interpolate` and this module's settings."""
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("recompute_scale_factor", True)
        super().__setstate__(state)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        info = (
            f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        )
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    r"""``Upsample`` with ``mode='nearest'``.

    {upsampling_2d_args:UpsamplingNearest2d}
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    r"""``Upsample`` with ``mode='bilinear'`` and ``align_corners=True``.

    {upsampling_2d_args:UpsamplingBilinear2d}
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


_fill_docs(globals())
