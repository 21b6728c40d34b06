"""The activation functions of :mod:`ferrograd.nn.functional`."""

from __future__ import annotations

import math
import warnings
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from ._utils import _apply_inplace, _inplace_source, _route


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``max(0, x)`` elementwise.

    Args:
        input (Tensor): the input tensor.
        {inplace_arg}

    Example:
        >>> F.relu(ferrograd.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    """In-place version of :func:`relu`."""
    return input.relu_()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """Clamps ``x`` to ``[min_val, max_val]``; the gradient is zero outside the open interval.

    Args:
        input (Tensor): the input tensor.
        min_val (float): the lower bound. Default: ``-1.0``.
        max_val (float): the upper bound. Default: ``1.0``.
        {inplace_arg}

    Example:
        >>> F.hardtanh(ferrograd.tensor([-2.0, 0.5, 3.0]))
        tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    src = _inplace_source(input, inplace)
    # masked_fill gives a zero gradient on the clipped entries (including the
    # boundary itself), which is torch's hardtanh_backward rule.
    out = src.masked_fill(src <= min_val, min_val).masked_fill(src >= max_val, max_val)
    return _apply_inplace(input, out) if inplace else out


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place version of :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``min(max(0, x), 6)`` elementwise.

    Args:
        input (Tensor): the input tensor.
        {inplace_arg}

    Example:
        >>> F.relu6(ferrograd.tensor([-1.0, 7.0]))
        tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """Applies ``x`` for ``x > 0`` and ``negative_slope * x`` otherwise.

    Args:
        input (Tensor): the input tensor.
        negative_slope (float): the slope for negative inputs. Default:
            ``0.01``.
        {inplace_arg}

    Example:
        >>> F.leaky_relu(ferrograd.tensor([-2.0, 3.0]), 0.5)
        tensor([-1.,  3.])
    """
    src = _inplace_source(input, inplace)
    out = _fg.where(src > 0, src, src * negative_slope)
    return _apply_inplace(input, out) if inplace else out


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place version of :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Applies ``x`` for ``x > 0`` and ``alpha * (exp(x) - 1)`` otherwise.

    Args:
        input (Tensor): the input tensor.
        alpha (float): the value the function tends to for large negative ``x``
            is ``-alpha``. Default: ``1.0``.
        {inplace_arg}

    Example:
        >>> F.elu(ferrograd.tensor([0.0, 1.0]))
        tensor([0., 1.])
    """
    src = _inplace_source(input, inplace)
    # expm1 sees only the non-positive part so large x cannot overflow into
    # inf and poison the masked-out gradient with 0 * inf.
    negative = src.clamp_max(0.0).expm1() * alpha
    out = _fg.where(src > 0, src, negative)
    return _apply_inplace(input, out) if inplace else out


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place version of :func:`elu`."""
    return elu(input, alpha, inplace=True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``scale * elu(x, alpha)`` with the self-normalising constants.

    Args:
        input (Tensor): the input tensor.
        {inplace_arg}

    Example:
        >>> F.selu(ferrograd.tensor([0.0]))
        tensor([0.])
    """
    src = _inplace_source(input, inplace)
    out = elu(src, _SELU_ALPHA) * _SELU_SCALE
    return _apply_inplace(input, out) if inplace else out


def selu_(input: Tensor) -> Tensor:
    """In-place version of :func:`selu`."""
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Applies ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        input (Tensor): the input tensor.
        alpha (float): the ``alpha`` of the formula. Default: ``1.0``.
        {inplace_arg}

    Example:
        >>> F.celu(ferrograd.tensor([0.0, 2.0]))
        tensor([0., 2.])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    src = _inplace_source(input, inplace)
    negative = (src.clamp_max(0.0) / alpha).expm1() * alpha
    out = _fg.where(src > 0, src, negative)
    return _apply_inplace(input, out) if inplace else out


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place version of :func:`celu`."""
    return celu(input, alpha, inplace=True)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """Applies ``max(0, x) + weight * min(0, x)`` with a learned slope per channel (dim 1) or one shared.

    Args:
        input (Tensor): the input tensor.
        weight (Tensor): the slopes: one element, or one per channel of ``input``.

    Example:
        >>> F.prelu(ferrograd.tensor([[-2.0, 3.0]]), ferrograd.tensor([0.25]))
        tensor([[-0.5000,  3.0000]])
    """
    n = weight.numel()
    if n != 1:
        channel_dim = 1 if input.dim() >= 2 else 0
        channels = input.shape[channel_dim] if input.dim() > 0 else 1
        if channels != n:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                f"{n} and channel size = {channels}."
            )
        shape = [1] * input.dim()
        shape[channel_dim] = n
        weight = weight.reshape(shape)
    return _fg.where(input > 0, input, weight * input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, ``x * Phi(x)``, or its tanh approximation.

    Args:
        input (Tensor): the input tensor.
        approximate (str): ``'none'`` for the exact form, ``'tanh'`` for the
            tanh approximation. Default: ``'none'``.

    Example:
        >>> F.gelu(ferrograd.tensor([0.0]))
        tensor([0.])
    """
    if approximate == "none":
        return input * 0.5 * (1.0 + (input * (1.0 / math.sqrt(2.0))).erf())
    if approximate == "tanh":
        inner = (input + 0.044715 * input * input * input) * math.sqrt(2.0 / math.pi)
        return input * 0.5 * (1.0 + inner.tanh())
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``x * sigmoid(x)``.

    Args:
        input (Tensor): the input tensor.
        {inplace_arg}

    Example:
        >>> F.silu(ferrograd.tensor([0.0]))
        tensor([0.])
    """
    src = _inplace_source(input, inplace)
    out = src * src.sigmoid()
    return _apply_inplace(input, out) if inplace else out


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """Applies ``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    Args:
        input (Tensor): the input tensor.
        beta (float): the ``beta`` of the formula. Default: ``1.0``.
        threshold (float): above ``beta * x > threshold`` the result is ``x``.
            Default: ``20.0``.

    Example:
        >>> F.softplus(ferrograd.tensor([0.0]))
        tensor([0.6931])
    """
    scaled = input * beta
    # Clamp before exp so the unused branch stays finite (see elu).
    smooth = scaled.clamp_max(threshold).exp().log1p() / beta
    return _fg.where(scaled > threshold, input, smooth)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``x * tanh(softplus(x))``.

    Args:
        input (Tensor): the input tensor.
        {inplace_arg}

    Example:
        >>> F.mish(ferrograd.tensor([0.0]))
        tensor([0.])
    """
    src = _inplace_source(input, inplace)
    out = src * softplus(src).tanh()
    return _apply_inplace(input, out) if inplace else out


def softsign(input: Tensor) -> Tensor:
    """Applies ``x / (1 + |x|)``.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> F.softsign(ferrograd.tensor([1.0]))
        tensor([0.5000])
    """
    return input / (input.abs() + 1.0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``relu6(x + 3) / 6``.

    Args:
        input (Tensor): the input tensor.
        {inplace_arg}

    Example:
        >>> F.hardsigmoid(ferrograd.tensor([0.0]))
        tensor([0.5000])
    """
    src = _inplace_source(input, inplace)
    out = hardtanh(src + 3.0, 0.0, 6.0) / 6.0
    return _apply_inplace(input, out) if inplace else out


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``x * relu6(x + 3) / 6``.

    Args:
        input (Tensor): the input tensor.
        {inplace_arg}

    Example:
        >>> F.hardswish(ferrograd.tensor([3.0]))
        tensor([3.])
    """
    src = _inplace_source(input, inplace)
    out = src * hardsigmoid(src)
    return _apply_inplace(input, out) if inplace else out


def sigmoid(input: Tensor) -> Tensor:
    """Applies ``1 / (1 + exp(-x))``.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> F.sigmoid(ferrograd.tensor([0.0, 2.0]))
        tensor([0.5000, 0.8808])
    """
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """Applies the hyperbolic tangent.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> F.tanh(ferrograd.tensor([0.0, 1.0]))
        tensor([0.0000, 0.7616])
    """
    return input.tanh()


def logsigmoid(input: Tensor) -> Tensor:
    """Applies ``log(sigmoid(x))`` in the stable form ``min(x, 0) - log1p(exp(-|x|))``.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> F.logsigmoid(ferrograd.tensor([0.0]))
        tensor([-0.6931])
    """
    # Each branch sees only its half-line: x - log1p(exp(x)) for x < 0 and
    # -log1p(exp(-x)) otherwise, so nothing overflows and the gradient is
    # exactly 1/2 at 0 and +0 (not -0) far to the right.
    neg = input.clamp_max(0.0)
    pos = input.clamp_min(0.0)
    return _fg.where(input < 0, neg - neg.exp().log1p(), -(-pos).exp().log1p())


def log_sigmoid(input: Tensor) -> Tensor:
    """The name of :func:`logsigmoid` among torch's ATen entry points
    (``torch._C._nn.log_sigmoid``): ``log(sigmoid(x))``, computed stably.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> F.log_sigmoid(ferrograd.tensor([0.0]))
        tensor([-0.6931])
    """
    return logsigmoid(input)


def _log1p_exp(z: Tensor) -> Tensor:
    """``log(1 + exp(z))`` without overflow.

    Each branch only sees the half-line it is used on, so neither produces an
    inf, and at ``z == 0`` the derivative is the exact ``1/2`` (a form built on
    ``|z|`` would give ``sign(0) = 0`` there).
    """
    pos = z.clamp_min(0.0)
    neg = z.clamp_max(0.0)
    return _fg.where(z > 0, pos + (-pos).exp().log1p(), neg.exp().log1p())


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """Keeps ``x`` where ``x > threshold`` and replaces the rest with ``value``.

    Args:
        input (Tensor): the input tensor.
        threshold (float): the threshold.
        value (float): the replacement value.
        {inplace_arg}

    Example:
        >>> F.threshold(ferrograd.tensor([1.0, 3.0]), 2.0, -1.0)
        tensor([-1.,  3.])
    """
    return _threshold(input, threshold, value, inplace)


def _threshold(input: Tensor, limit: float, value: float, inplace: bool) -> Tensor:
    src = _inplace_source(input, inplace)
    out = src.masked_fill(src <= limit, value)
    return _apply_inplace(input, out) if inplace else out


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place version of :func:`threshold`."""
    return _threshold(input, threshold, value, inplace=True)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """Applies ``exp(x) / sum(exp(x))`` along ``dim``.

    Args:
        input (Tensor): the input tensor.
        {softmax_args}

    Example:
        >>> F.softmax(ferrograd.tensor([0.0, 0.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype=dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax (concrete) distribution:
    ``softmax((logits + g) / tau)`` along ``dim`` with ``g = -log(E)``, ``E``
    standard exponential draws from the global generator (the same call
    torch makes, so a seeded run gives torch's sample).

    With ``hard=True`` the result is the one-hot vector of each sample's
    largest entry in the forward pass, while the gradient is that of the
    soft sample (the straight-through estimator ``y_hard - y.detach() + y``).

    Args:
        logits (Tensor): unnormalized log-probabilities (floating).
        tau (float): the temperature (positive). Default: ``1.0``.
        hard (bool): return one-hot samples with the soft sample's gradient.
            Default: ``False``.
        eps (float): deprecated and unused (a value other than the default
            warns). Default: ``1e-10``.
        dim (int): the dimension the sample is a distribution over.
            Default: ``-1``.

    Example:
        >>> y = F.gumbel_softmax(ferrograd.zeros(2, 3), hard=True)
        >>> y.sum(-1)
        tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_fg.empty_like(logits).exponential_().log()
    soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = _fg.zeros_like(logits).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """Applies ``softmax(-x)`` along ``dim``.

    Args:
        input (Tensor): the input tensor.
        {softmax_args}

    Example:
        >>> F.softmin(ferrograd.tensor([1.0, 2.0]), dim=0)
        tensor([0.7311, 0.2689])
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """Applies ``log(softmax(x))`` along ``dim``, computed stably.

    Args:
        input (Tensor): the input tensor.
        {softmax_args}

    Example:
        >>> F.log_softmax(ferrograd.tensor([0.0, 0.0]), dim=0)
        tensor([-0.6931, -0.6931])
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype=dtype)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: splits ``dim`` in halves ``a, b`` and returns ``a * sigmoid(b)``.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension split in halves (its size must be even).
            Default: ``-1``.

    Example:
        >>> F.glu(ferrograd.tensor([2.0, 0.0]))
        tensor([1.])
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2 != 0:
        d = dim % input.dim()
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {size}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Keeps ``x`` where ``|x| > lambd`` and zeroes the rest.

    Args:
        input (Tensor): the input tensor.
        lambd (float): the threshold ``lambda``. Default: ``0.5``.

    Example:
        >>> F.hardshrink(ferrograd.tensor([-1.0, 0.2, 0.7]))
        tensor([-1.0000,  0.0000,  0.7000])
    """
    return input.masked_fill(input.abs() <= lambd, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Shrinks ``x`` towards 0 by ``lambd``, zeroing ``[-lambd, lambd]``.

    Args:
        input (Tensor): the input tensor.
        lambd (float): the threshold ``lambda``. Default: ``0.5``.

    Example:
        >>> F.softshrink(ferrograd.tensor([-1.0, 0.2, 0.7]))
        tensor([-0.5000,  0.0000,  0.2000])
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    shrunk = input - input.sign() * lambd
    return shrunk.masked_fill(input.abs() <= lambd, 0.0)


def tanhshrink(input: Tensor) -> Tensor:
    """Applies ``x - tanh(x)``.

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> F.tanhshrink(ferrograd.tensor([0.0, 1.0]))
        tensor([0.0000, 0.2384])
    """
    return input - input.tanh()


def rrelu(
    input: Tensor,
    lower: float = 1.0 / 8,
    upper: float = 1.0 / 3,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomised leaky ReLU: the negative slope is ``(lower + upper) / 2`` in
    evaluation and drawn from ``U(lower, upper)`` per element in training.

    Args:
        input (Tensor): the input tensor.
        lower (float): the lower bound of the random slope. Default: ``0.125``.
        upper (float): the upper bound of the random slope. Default:
            ``0.3333333333333333``.
        training (bool): draw a random slope per element; when ``False`` the
            slope is ``(lower + upper) / 2``. Default: ``False``.
        {inplace_arg}

    Example:
        >>> F.rrelu(ferrograd.tensor([-2.0, 1.0]), 0.25, 0.25)
        tensor([-0.5000,  1.0000])
    """
    src = _inplace_source(input, inplace)
    if training:
        slopes = _fg.empty(tuple(src.shape), dtype=src.dtype).uniform_(lower, upper)
        out = _fg.where(src > 0, src, src * slopes)
    else:
        out = _fg.where(src > 0, src, src * ((lower + upper) / 2))
    return _apply_inplace(input, out) if inplace else out


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place version of :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


_route(globals())
