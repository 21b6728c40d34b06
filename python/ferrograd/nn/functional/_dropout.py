"""The dropout functions of :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import math
import warnings
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


def _channel_noise_dropout(input: Tensor, p: float, training: bool, inplace: bool, lead: int) -> Tensor:
    """Dropout with one mask value per index of the first ``lead`` dimensions
    (``lead`` of 2: per (sample, channel); of 1: per channel of an unbatched
    input). A 1-D input with ``lead`` 1 is dropped element by element."""
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return _drop_all(input, inplace)
    if input.dim() < lead:
        # An unbatched input that lacks even its channel dimension (a 0-D
        # input to dropout3d), or fewer than (N, C) dimensions for dropout2d.
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    noise_shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    return _dropout_with_noise_shape(input, p, noise_shape, inplace)


def _warn_deprecated_rank(input: Tensor, nd: int, name: str) -> None:
    """The warning for an input to dropout2d/dropout3d that has neither the
    batched nor the unbatched rank (``nd`` spatial dimensions)."""
    warnings.warn(
        f"{name}: Received a {input.dim()}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please use "
        f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with {nd} "
        f"spatial dimensions, a channel dimension, and an optional batch dimension (i.e. {nd + 1}D or "
        f"{nd + 2}D inputs).",
        UserWarning,
        stacklevel=3,
    )


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
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
            "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs)."
        )
    return _channel_noise_dropout(input, p, training, inplace, 2 if input.dim() == 3 else 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for ``(N, C, H, W)`` or ``(C, H, W)`` inputs.

    Inputs of other ranks are deprecated (a ``UserWarning``) but still
    accepted, masked over their first two dimensions: a 2-D input is dropped
    element by element, as :func:`dropout` does, and a 3-D input is read as
    ``(N, C, L)`` (a warning says so), whole channels ``input[n, c]`` zeroed.
    A 0-D or 1-D input raises in training.

    Args:
        {channel_dropout_args}

    Example:
        >>> F.dropout2d(ferrograd.ones(1, 2, 2, 2), p=0.5, training=False).sum()
        tensor(8.)
    """
    _check_p(p)
    if input.dim() == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
            "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
            "This behavior will change in a future release to interpret the input as one without a "
            "batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, "
            "please switch to using dropout1d instead.",
            UserWarning,
            stacklevel=2,
        )
    elif input.dim() != 4:
        _warn_deprecated_rank(input, 2, "dropout2d")
    return _channel_noise_dropout(input, p, training, inplace, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs.

    Inputs of other ranks are deprecated (a ``UserWarning``) but still
    accepted, read as unbatched: whole slices ``input[c]`` are zeroed, so a
    1-D input is dropped element by element. A 0-D input raises in training.

    Args:
        {channel_dropout_args}

    Example:
        >>> F.dropout3d(ferrograd.ones(1, 2, 1, 2, 2), p=0.5, training=False).sum()
        tensor(8.)
    """
    _check_p(p)
    if input.dim() not in (4, 5):
        _warn_deprecated_rank(input, 3, "dropout3d")
    return _channel_noise_dropout(input, p, training, inplace, 2 if input.dim() == 5 else 1)


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
