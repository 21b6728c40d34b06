"""``ferrograd.nn.init``: in-place initialisations of parameters.

Every initialiser runs under ``no_grad``, fills the tensor in place and
returns it. Random ones draw through the tensor's own ``uniform_`` /
``normal_`` with the same arguments torch passes, so for the same seed the
values agree with torch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from ._docs import fill_docs as _fill_docs

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]

_LINEAR_FNS = ("linear", *(f"conv{kind}{n}d" for kind in ("", "_transpose") for n in (1, 2, 3)))


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """Recommended gain for a nonlinearity: 1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu, 3/4 for selu.

    Args:
        nonlinearity (str): the function's name: ``'linear'``, ``'conv1d'`` (to
            ``'conv_transpose3d'``), ``'sigmoid'``, ``'tanh'``, ``'relu'``,
            ``'leaky_relu'`` or ``'selu'``.
        param (float, optional): the negative slope for ``'leaky_relu'`` (0.01
            when ``None``). Default: ``None``.

    Returns:
        float: the gain.

    Example:
        >>> nn.init.calculate_gain("tanh")
        1.6666666666666667
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``fan_in = size(1) * receptive``, ``fan_out = size(0) * receptive``, where
    ``receptive`` is the product of the dimensions after the first two."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:]) if tensor.dim() > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fills ``tensor`` with draws from ``U(a, b)``.

    Args:
        {fill_tensor_arg}
        a (float): the lower bound. Default: ``0.0``.
        b (float): the upper bound. Default: ``1.0``.
        {generator_arg}

    {returns_tensor}

    Example:
        >>> w = nn.init.uniform_(ferrograd.empty(3, 5), -0.1, 0.1)
    """
    with _fg.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fills ``tensor`` with draws from ``N(mean, std^2)``.

    Args:
        {fill_tensor_arg}
        mean (float): the mean of the normal distribution. Default: ``0.0``.
        std (float): the standard deviation of the normal distribution. Default:
            ``1.0``.
        {generator_arg}

    {returns_tensor}

    Example:
        >>> w = nn.init.normal_(ferrograd.empty(3, 5), std=0.02)
    """
    with _fg.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:
    """Fills ``tensor`` with draws from ``N(mean, std^2)`` truncated to ``[a, b]``.

    Sampling is by rejection, as in torch: when ``[a, b]`` holds more than 30%
    of the mass, normal draws outside it are redrawn; otherwise uniform
    proposals on ``[a, b]`` are accepted with probability ``pdf(x) / pdf(mode)``.
    Every redraw fills a full-size buffer, so the stream matches torch's.

    Args:
        {fill_tensor_arg}
        mean (float): the mean of the normal distribution. Default: ``0.0``.
        std (float): the standard deviation of the normal distribution. Default:
            ``1.0``.
        a (float): the lower bound. Default: ``-2.0``.
        b (float): the upper bound. Default: ``2.0``.
        {generator_arg}

    {returns_tensor}

    Example:
        >>> w = nn.init.trunc_normal_(ferrograd.empty(3, 5), std=0.02, a=-0.04, b=0.04)
        >>> bool(w.abs().max() <= 0.04)
        True
    """

    def norm_cdf(v: float) -> float:
        return (1.0 + math.erf(v / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with _fg.no_grad():
        mass = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if mass > 0.3:
            # Bounds rounded to the tensor's dtype, so the rejection test agrees
            # with the values actually stored.
            lo = _fg.tensor(a, dtype=tensor.dtype).item()
            hi = _fg.tensor(b, dtype=tensor.dtype).item()
            tensor.normal_(mean, std, generator=generator)
            while True:
                outside = (tensor < lo) | (tensor > hi)
                if not bool(outside.any()):
                    break
                fresh = _fg.empty_like(tensor).normal_(mean, std, generator=generator)
                tensor.copy_(_fg.where(outside, fresh, tensor))
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2

        def rejected(candidates: Tensor) -> Tensor:
            # log u > log(pdf(x) / pdf(mode)) rejects x.
            log_ratio = candidates.sub(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
            return _fg.empty_like(tensor).uniform_(generator=generator).log_() > log_ratio

        tensor.uniform_(a, b, generator=generator)
        pending = rejected(tensor)
        while bool(pending.any()):
            candidates = _fg.empty_like(tensor).uniform_(a, b, generator=generator)
            tensor.copy_(_fg.where(pending, candidates, tensor))
            pending = pending & rejected(candidates)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fills ``tensor`` with ``val``.

    Args:
        {fill_tensor_arg}
        val (float): the fill value.

    {returns_tensor}

    Example:
        >>> nn.init.constant_(ferrograd.empty(2), 0.5)
        tensor([0.5000, 0.5000])
    """
    with _fg.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` with ones.

    Args:
        {fill_tensor_arg}

    {returns_tensor}

    Example:
        >>> nn.init.ones_(ferrograd.empty(2))
        tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fills ``tensor`` with zeros.

    Args:
        {fill_tensor_arg}

    {returns_tensor}

    Example:
        >>> nn.init.zeros_(ferrograd.empty(2))
        tensor([0., 0.])
    """
    with _fg.no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fills a 2-D ``tensor`` with the identity (ones on the main diagonal).

    Args:
        tensor (Tensor): a 2-D tensor to fill in place.

    {returns_tensor}

    Example:
        >>> nn.init.eye_(ferrograd.empty(2, 3))
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _fg.no_grad():
        return tensor.copy_(_fg.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fills a 3-, 4- or 5-D conv weight with the Dirac delta, so the convolution
    preserves its input channels (per group).

    Args:
        tensor (Tensor): a 3-, 4- or 5-D tensor to fill in place.
        groups (int): the number of groups of the convolution. Default: ``1``.

    {returns_tensor}

    Example:
        >>> w = nn.init.dirac_(ferrograd.empty(2, 2, 3))
        >>> w[:, :, 1]
        tensor([[1., 0.],
                [0., 1.]])
    """
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    channels = min(per_group, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    with _fg.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(channels):
                tensor[(g * per_group + d, d, *centre)] = 1
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    {xavier_args}

    Example:
        >>> w = nn.init.xavier_uniform_(ferrograd.empty(3, 5), gain=nn.init.calculate_gain("relu"))
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: ``N(0, std^2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    {xavier_args}

    Example:
        >>> w = nn.init.xavier_normal_(ferrograd.empty(200, 100))
        >>> round(w.std().item(), 3)  # sqrt(2 / (100 + 200))
        0.082
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Any = None) -> Tensor:
    """He uniform: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan_mode)``.

    {kaiming_args}

    Example:
        >>> w = nn.init.kaiming_uniform_(ferrograd.empty(3, 5), mode="fan_out", nonlinearity="relu")
    """
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Any = None) -> Tensor:
    """He normal: ``N(0, std^2)`` with ``std = gain / sqrt(fan_mode)``.

    {kaiming_args}

    Example:
        >>> w = nn.init.kaiming_normal_(ferrograd.empty(200, 100), nonlinearity="relu")
        >>> round(w.std().item(), 2)  # sqrt(2 / 100)
        0.14
    """
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Fills ``tensor`` (viewed as ``(size(0), -1)``) with a (semi-)orthogonal matrix:
    the Q factor of a Gaussian matrix, with signs fixed so ``diag(R) > 0``.

    Args:
        tensor (Tensor): a tensor with at least 2 dims to fill in place.
        {gain_generator_args}

    {returns_tensor}

    Example:
        >>> q = nn.init.orthogonal_(ferrograd.empty(4, 4))
        >>> bool((q.T @ q - ferrograd.eye(4)).abs().max() < 1e-5)
        True
    """
    import numpy as np  # QR is not a ferrograd op; LAPACK's Householder QR via NumPy

    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with _fg.no_grad():
        flat = _fg.empty(rows, cols, dtype=tensor.dtype).normal_(0, 1, generator=generator)
        matrix = np.array(flat.double().tolist())
        if rows < cols:
            matrix = matrix.T
        q, r = np.linalg.qr(matrix)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        result = _fg.tensor(q.tolist(), dtype=tensor.dtype).reshape(tensor.shape)
        tensor.copy_(result)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fills a 2-D ``tensor`` with ``N(0, std^2)`` draws, then zeroes
    ``ceil(sparsity * rows)`` random entries of every column.

    Args:
        tensor (Tensor): a 2-D tensor to fill in place.
        sparsity (float): the fraction of each column set to zero.
        std (float): the standard deviation of the normal distribution. Default:
            ``0.01``.
        {generator_arg}

    {returns_tensor}

    Example:
        >>> w = nn.init.sparse_(ferrograd.empty(10, 3), sparsity=0.3)
        >>> int((w == 0).sum())
        9
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with _fg.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            order = _fg.randperm(rows, generator=generator) if generator is not None else _fg.randperm(rows)
            tensor[order[:num_zeros], col] = 0
    return tensor


_fill_docs(globals())
