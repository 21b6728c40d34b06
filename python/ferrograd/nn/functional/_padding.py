"""Padding, for :mod:`ferrograd.nn.functional` (and the convolution and
pooling parts, which pad the spatial dimensions through it)."""

from __future__ import annotations

from collections.abc import Sequence

import ferrograd as _fg
from ferrograd._core import Tensor

from ._utils import _route


def _pad_index(size: int, left: int, right: int, mode: str) -> Tensor:
    """Source index along one dimension for the non-constant padding modes."""
    positions = _fg.arange(-left, size + right)
    if mode == "reflect":
        period = 2 * (size - 1)
        if period == 0:
            return positions * 0
        r = positions.remainder(period)
        return _fg.where(r >= size, period - r, r)
    if mode == "replicate":
        return positions.clamp(0, size - 1)
    return positions.remainder(size)  # circular


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pads the last ``len(pad) // 2`` dimensions; ``pad`` lists (left, right) pairs
    starting from the last dimension. Negative amounts crop.

    Args:
        input (Tensor): the input tensor.
        pad (tuple of ints): ``(left, right)`` sizes for the last dim, then for
            the one before, ... (negative values crop).
        mode (str): ``'constant'``, ``'reflect'``, ``'replicate'`` or
            ``'circular'``. Default: ``'constant'``.
        value (float, optional): the fill value for ``'constant'``. Default:
            ``None`` (0).

    Example:
        >>> F.pad(ferrograd.tensor([[1.0, 2.0]]), (1, 2), value=9.0)
        tensor([[9., 1., 2., 9., 9.]])
    """
    pad = [int(p) for p in pad]
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    npairs = len(pad) // 2
    if npairs > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension")
    if mode == "constant":
        fill = 0.0 if value is None else value
        out = input
        for k in range(npairs):
            d = input.dim() - 1 - k
            left, right = pad[2 * k], pad[2 * k + 1]
            # Crop first (negative amounts), then grow with constant blocks.
            start = max(-left, 0)
            stop = out.shape[d] - max(-right, 0)
            if stop < start:
                raise RuntimeError(
                    f"The input size {input.shape[d]}, plus negative padding {left} and {right} "
                    "resulted in a negative output size, which is invalid. Check dimension "
                    f"{d} of your input."
                )
            out = out.narrow(d, start, stop - start)
            pieces = []
            for amount in (max(left, 0), max(right, 0)):
                shape = list(out.shape)
                shape[d] = amount
                pieces.append(_fg.full(shape, fill, dtype=input.dtype))
            if left > 0 or right > 0:
                out = _fg.cat([pieces[0], out, pieces[1]], dim=d)
        return out
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    if npairs > 3 or input.dim() not in (npairs + 1, npairs + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    out = input
    for k in range(npairs):
        d = input.dim() - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        size = input.shape[d]
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({left}, {right}) at dimension {d} of input {list(input.shape)}"
            )
        if mode == "circular" and (left > size or right > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + left + right < 0:
            raise RuntimeError(f"input size after padding at dimension {d} is negative")
        out = out.index_select(d, _pad_index(size, left, right, mode))
    return out


def _pad_spatial(x: Tensor, pairs: Sequence[tuple[int, int]], value: float = 0.0) -> Tensor:
    if all(a == 0 and b == 0 for a, b in pairs):
        return x
    flat: list[int] = []
    for left, right in reversed(pairs):
        flat += [left, right]
    return pad(x, flat, value=value)


_route(globals())
