"""The dropout functions of :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import ferrograd as _fg
from ferrograd._core import Tensor

from ._utils import _apply_inplace, _route


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _drop_all(input: Tensor, inplace: bool) -> Tensor:
    """Dropout with ``p == 1``: ``input`` times zero, written into ``input``
    when ``inplace``."""
    out = input * _fg.zeros((), dtype=input.dtype)
    return _apply_inplace(input, out) if inplace else out


def _dropout_with_noise_shape(input: Tensor, p: float, noise_shape: Sequence[int], inplace: bool) -> Tensor:
    if p == 1.0:
        return _drop_all(input, inplace)
    # Same sampling call as torch (bernoulli_(1 - p) on an empty tensor), so
    # seeded masks agree with torch's.
    noise = _fg.empty(tuple(noise_shape), dtype=input.dtype).bernoulli_(1.0 - p)
    noise = noise / (1.0 - p)
    if inplace:
        return input.mul_(noise)
    return input * noise


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability ``p`` and scales the rest by ``1 / (1 - p)``.

    Args:
        input (Tensor): the input tensor.
        p (float): the probability of an element being zeroed. Default: ``0.5``.
        {dropout_training_arg}
        {inplace_arg}

    Example:
        >>> F.dropout(ferrograd.ones(3), p=0.5, training=False)
        tensor([1., 1., 1.])
    """
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _dropout_with_noise_shape(input, p, input.shape, inplace)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, nd: int, name: str) -> Tensor:
    _check_p(p)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}: Expected {nd + 1}D or {nd + 2}D input, but received a {input.dim()}D input. "
            f"Note that {name} exists to provide channel-wise dropout on inputs with {nd} spatial "
            "dimension(s), a channel dimension, and an optional batch dimension."
        )
    if not training or p == 0.0:
        return input
    batched = input.dim() == nd + 2
    lead = tuple(input.shape[:2]) if batched else tuple(input.shape[:1])
    noise_shape = lead + (1,) * nd
    return _dropout_with_noise_shape(input, p, noise_shape, inplace)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for ``(N, C, L)`` or ``(C, L)`` inputs: whole channels are zeroed.

    Args:
        {channel_dropout_args}

    Example:
        >>> _ = ferrograd.manual_seed(0)
        >>> F.dropout1d(ferrograd.ones(1, 4, 3), p=0.5)  # whole channels zeroed, the rest doubled
        tensor([[[0., 0., 0.],
                 [0., 0., 0.],
                 [2., 2., 2.],
                 [0., 0., 0.]]])
    """
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for ``(N, C, H, W)`` or ``(C, H, W)`` inputs.

    Args:
        {channel_dropout_args}

    Example:
        >>> F.dropout2d(ferrograd.ones(1, 2, 2, 2), p=0.5, training=False).sum()
        tensor(8.)
    """
    return _feature_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs.

    Args:
        {channel_dropout_args}

    Example:
        >>> F.dropout3d(ferrograd.ones(1, 2, 1, 2, 2), p=0.5, training=False).sum()
        tensor(8.)
    """
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


_SELU_DROPOUT_ALPHA = 1.7580993408473766  # -SELU_SCALE * SELU_ALPHA, the negative saturation


def _alpha_dropout_impl(input: Tensor, p: float, noise_shape: Sequence[int], inplace: bool) -> Tensor:
    if p == 1.0:
        return _drop_all(input, inplace)
    keep = _fg.empty(tuple(noise_shape), dtype=input.dtype).bernoulli_(1.0 - p)
    # Dropped units are set to the SELU saturation value, then an affine map
    # (a, b) restores zero mean and unit variance.
    a = 1.0 / math.sqrt((_SELU_DROPOUT_ALPHA**2 * p + 1) * (1 - p))
    b = (keep - 1.0) * (_SELU_DROPOUT_ALPHA * a) + _SELU_DROPOUT_ALPHA * a * p
    out = input * (keep * a) + b
    return _apply_inplace(input, out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: keeps the input's mean and variance.

    Args:
        {alpha_dropout_args}

    Example:
        >>> F.alpha_dropout(ferrograd.ones(3), 0.5, training=False)
        tensor([1., 1., 1.])
    """
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    return _alpha_dropout_impl(input, p, input.shape, inplace)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """:func:`alpha_dropout` over whole channels.

    Args:
        {alpha_dropout_args}

    Example:
        >>> F.feature_alpha_dropout(ferrograd.ones(1, 2, 3), 0.5, training=False)
        tensor([[[1., 1., 1.],
                 [1., 1., 1.]]])
    """
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    noise_shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    return _alpha_dropout_impl(input, p, noise_shape, inplace)


_route(globals())
