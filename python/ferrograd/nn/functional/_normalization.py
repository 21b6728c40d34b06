"""The normalisation layers of :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ferrograd as _fg
from ferrograd import _core
from ferrograd._core import Tensor

from ._padding import pad
from ._utils import _route


def layer_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises over the trailing ``normalized_shape`` dimensions (biased variance),
    then applies the elementwise affine ``weight``/``bias``.

    Args:
        input (Tensor): the input tensor.
        normalized_shape (tuple of ints): the trailing shape to normalise over.
        weight (Tensor, optional): the elementwise scale, of shape
            ``normalized_shape``. Default: ``None``.
        bias (Tensor, optional): the elementwise shift, of shape
            ``normalized_shape``. Default: ``None``.
        eps (float): added for numerical stability. Default: ``1e-05``.

    Example:
        >>> F.layer_norm(ferrograd.tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _core._layer_norm(input, [int(s) for s in normalized_shape], weight, bias, float(eps))


def rms_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Divides by the root mean square over ``normalized_shape`` (``eps`` defaults to the
    dtype's machine epsilon), then scales by ``weight``.

    Args:
        input (Tensor): the input tensor.
        normalized_shape (tuple of ints): the trailing shape to normalise over.
        weight (Tensor, optional): the elementwise scale, of shape
            ``normalized_shape``. Default: ``None``.
        eps (float, optional): added to the mean square. Default: ``None`` (the
            dtype's machine epsilon).

    Example:
        >>> F.rms_norm(ferrograd.tensor([[3.0, 4.0]]), (2,))
        tensor([[0.8485, 1.1314]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k :]) != tuple(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size{list(input.shape)}"
        )
    if eps is None:
        eps = {_fg.float64: 2.220446049250313e-16, _fg.float16: 0.0009765625, _fg.bfloat16: 0.0078125}.get(
            input.dtype, 1.1920928955078125e-07
        )
    dims = tuple(range(input.dim() - k, input.dim()))
    out = input * (input.square().mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def _moments(x: Tensor, dims: Any) -> tuple[Tensor, Tensor, Tensor]:
    """The mean of ``x`` over ``dims``, ``x`` minus the mean, and the biased
    variance (the statistics keep ``dims``)."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    return mean, centered, centered.square().mean(dims, keepdim=True)


def _normalize_with(input: Tensor, mean: Tensor, var: Tensor, shape: Sequence[int], eps: float) -> Tensor:
    """``input`` normalised with given per-channel statistics (the running
    ones in evaluation), reshaped to ``shape``."""
    return (input - mean.reshape(shape)) * (var.reshape(shape) + eps).rsqrt()


def _affine(out: Tensor, weight: Tensor | None, bias: Tensor | None, shape: Sequence[int]) -> Tensor:
    """``out`` scaled by ``weight`` and shifted by ``bias`` (each when given),
    reshaped to ``shape``."""
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises each group of ``C / num_groups`` channels per sample, then applies a
    per-channel affine.

    Args:
        input (Tensor): the input, of shape ``(N, C, *)``.
        num_groups (int): the number of groups ``C`` is divided into.
        weight (Tensor, optional): the scale per channel. Default: ``None``.
        bias (Tensor, optional): the shift per channel. Default: ``None``.
        eps (float): added for numerical stability. Default: ``1e-05``.

    Example:
        >>> F.group_norm(ferrograd.tensor([[[1.0], [3.0]]]), 1).flatten()
        tensor([-1.0000,  1.0000])
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups != 0:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of "
            f"shape {list(input.shape)} and num_groups={num_groups}"
        )
    grouped = input.reshape(n, num_groups, -1)
    _, centered, var = _moments(grouped, 2)
    out = (centered * (var + eps).rsqrt()).reshape(input.shape)
    affine_shape = [1, c] + [1] * (input.dim() - 2)
    return _affine(out, weight, bias, affine_shape)


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises each channel (dim 1) over the batch and spatial dimensions.

    In training the batch statistics are used and, when given, ``running_mean``
    and ``running_var`` are updated in place (``running_var`` with the unbiased
    batch variance); in evaluation the running statistics are used.

    Args:
        input (Tensor): the input, of shape ``(N, C, *)``.
        running_mean (Tensor, optional): the running mean per channel, updated
            in training.
        running_var (Tensor, optional): the running variance per channel,
            updated in training.
        weight (Tensor, optional): the scale ``gamma`` per channel. Default:
            ``None``.
        bias (Tensor, optional): the shift ``beta`` per channel. Default:
            ``None``.
        training (bool): use the batch statistics (and update the running ones).
            Default: ``False``.
        momentum (float): the weight of the new batch statistics in the running
            averages. Default: ``0.1``.
        eps (float): added for numerical stability. Default: ``1e-05``.

    Example:
        >>> x = ferrograd.tensor([[1.0], [3.0]])
        >>> F.batch_norm(x, None, None, training=True).flatten()
        tensor([-1.0000,  1.0000])
    """
    if input.dim() < 2:
        raise ValueError(f"expected 2D or higher input (got {input.dim()}D input)")
    c = input.shape[1]
    dims = (0,) + tuple(range(2, input.dim()))
    shape = [1, c] + [1] * (input.dim() - 2)
    if training:
        count = input.numel() // c if c else 0
        if count <= 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {input.shape}"
            )
        mean, centered, var = _moments(input, dims)
        if running_mean is not None or running_var is not None:
            with _fg.no_grad():
                if running_mean is not None:
                    running_mean.mul_(1.0 - momentum).add_(
                        mean.detach().reshape(c).to(running_mean.dtype) * momentum
                    )
                if running_var is not None:
                    unbiased = var.detach().reshape(c) * (count / (count - 1))
                    running_var.mul_(1.0 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
        out = centered * (var + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        out = _normalize_with(input, running_mean, running_var, shape, eps)
    return _affine(out, weight, bias, shape)


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises each (sample, channel) plane over its spatial dimensions.

    Args:
        input (Tensor): the input, of shape ``(N, C, *)``.
        running_mean (Tensor, optional): the running mean per channel, updated
            when ``use_input_stats``. Default: ``None``.
        running_var (Tensor, optional): the running variance per channel.
            Default: ``None``.
        weight (Tensor, optional): the scale ``gamma`` per channel. Default:
            ``None``.
        bias (Tensor, optional): the shift ``beta`` per channel. Default:
            ``None``.
        use_input_stats (bool): normalise with each instance's statistics;
            ``False`` uses the running ones. Default: ``True``.
        momentum (float): the weight of the new statistics in the running
            averages. Default: ``0.1``.
        eps (float): added for numerical stability. Default: ``1e-05``.

    Example:
        >>> F.instance_norm(ferrograd.tensor([[[1.0, 3.0]]])).flatten()
        tensor([-1.0000,  1.0000])
    """
    if input.dim() < 3:
        raise ValueError(f"expected 3D or higher input (got {input.dim()}D input)")
    n, c = input.shape[0], input.shape[1]
    shape = [1, c] + [1] * (input.dim() - 2)
    if use_input_stats:
        dims = tuple(range(2, input.dim()))
        spatial = input.numel() // (n * c) if n * c else 0
        if spatial <= 1:
            raise ValueError(
                f"Expected more than 1 spatial element when training, got input size {input.shape}"
            )
        mean, centered, var = _moments(input, dims)
        with _fg.no_grad():
            # torch averages the per-instance running updates over the batch.
            if running_mean is not None:
                batch_mean = mean.detach().reshape(n, c).mean(0)
                running_mean.mul_(1.0 - momentum).add_(batch_mean.to(running_mean.dtype) * momentum)
            if running_var is not None:
                unbiased = var.detach().reshape(n, c) * (spatial / (spatial - 1))
                running_var.mul_(1.0 - momentum).add_(unbiased.mean(0).to(running_var.dtype) * momentum)
        out = centered * (var + eps).rsqrt()
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError(
                "Expected running_mean and running_var to be defined when use_input_stats is false"
            )
        out = _normalize_with(input, running_mean, running_var, shape, eps)
    return _affine(out, weight, bias, shape)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Divides each channel by ``(k + alpha / size * sum of squares over size
    neighbouring channels) ** beta``.

    Args:
        input (Tensor): the input tensor.
        size (int): the number of neighbouring channels summed over.
        alpha (float): the multiplicative factor. Default: ``0.0001``.
        beta (float): the exponent. Default: ``0.75``.
        k (float): the additive constant. Default: ``1.0``.

    Example:
        >>> F.local_response_norm(ferrograd.ones(1, 3, 2), 2).shape
        ferrograd.Size([1, 3, 2])
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    sq = input.square()
    # Window over channels [c - size//2, c + (size-1)//2], zero padded.
    padded = pad(sq.movedim(1, -1), (size // 2, (size - 1) // 2))
    c = input.shape[1]
    windows = _fg.stack([padded.narrow(-1, i, c) for i in range(size)], 0).sum(0)
    div = (windows.movedim(-1, 1) * (alpha / size) + k).pow(beta)
    return input / div


_route(globals())
