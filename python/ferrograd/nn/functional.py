"""``ferrograd.nn.functional``: the functional forms of the layers,
activations and losses.

Every function here is a composition of existing ferrograd tensor ops, so
reverse mode, double backward and forward mode all follow from the
derivative formulas of those ops; nothing in this module defines a gradient.
The convolution and pooling work happens in a few private functions
(``_window_view``, ``_convnd``, ``_conv_transposend``, ``_max_poolnd``,
``_avg_poolnd``) that take normalised arguments; a native kernel can replace
any of them without touching the public functions.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import ferrograd as _fg
from ferrograd import _core
from ferrograd._core import Tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "alpha_dropout",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_embedding_loss",
    "cosine_similarity",
    "cross_entropy",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "elu_",
    "embedding",
    "feature_alpha_dropout",
    "fold",
    "gaussian_nll_loss",
    "gelu",
    "glu",
    "group_norm",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "hinge_embedding_loss",
    "huber_loss",
    "instance_norm",
    "interpolate",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "leaky_relu_",
    "linear",
    "local_response_norm",
    "log_softmax",
    "logsigmoid",
    "lp_pool1d",
    "lp_pool2d",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "mish",
    "mse_loss",
    "multi_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "relu",
    "relu6",
    "relu_",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "scaled_dot_product_attention",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "soft_margin_loss",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "unfold",
]


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def _tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """Expand an int (or a 1-sequence) to an n-tuple, as torch's _ntuple does."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values")
    return value


def _apply_inplace(input: Tensor, result: Tensor) -> Tensor:
    """Write ``result`` into ``input`` and return ``input``, torch's ``inplace=True``."""
    input.copy_(result)
    return input


def _inplace_source(input: Tensor, inplace: bool) -> Tensor:
    # The formula must not save ``input`` itself when ``input`` is about to be
    # overwritten, or backward would see a bumped version counter; a clone
    # keeps the saved values intact while the result still lands in ``input``.
    if inplace and input.requires_grad:
        return input.clone()
    return input


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """Map the deprecated ``size_average``/``reduce`` pair to a ``reduction`` string."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn(
        "size_average and reduce args will be deprecated, please use reduction='"
        + ("mean" if (size_average is None or size_average) and (reduce is None or reduce) else "sum")
        + "' instead.",
        UserWarning,
        stacklevel=3,
    )
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    if reduce:
        return "sum"
    return "none"


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size_mismatch(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies ``max(0, x)`` elementwise.

    Args:
        input (Tensor): the input tensor.
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        dim (int, optional): the dimension the values are normalised along
            (required; ``None`` picks one as torch's legacy rule does, with a
            warning). Default: ``None``.
        dtype (dtype, optional): cast the input to this dtype first (avoids
            overflow for low-precision inputs). Default: ``None``.

    Example:
        >>> F.softmax(ferrograd.tensor([0.0, 0.0]), dim=0)
        tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype=dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """Applies ``softmax(-x)`` along ``dim``.

    Args:
        input (Tensor): the input tensor.
        dim (int, optional): the dimension the values are normalised along
            (required; ``None`` picks one as torch's legacy rule does, with a
            warning). Default: ``None``.
        dtype (dtype, optional): cast the input to this dtype first (avoids
            overflow for low-precision inputs). Default: ``None``.

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
        dim (int, optional): the dimension the values are normalised along
            (required; ``None`` picks one as torch's legacy rule does, with a
            warning). Default: ``None``.
        dtype (dtype, optional): cast the input to this dtype first (avoids
            overflow for low-precision inputs). Default: ``None``.

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


# ---------------------------------------------------------------------------
# Linear layers, dropout, embeddings, padding, distances
# ---------------------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """Applies ``x @ weight.T + bias``.

    Args:
        input (Tensor): the input, of shape ``(*, in_features)``.
        weight (Tensor): the weight, of shape ``(out_features, in_features)``
            (or ``(in_features,)``).
        bias (Tensor, optional): the bias, of shape ``(out_features,)``.
            Default: ``None``.

    Example:
        >>> F.linear(ferrograd.ones(1, 2), ferrograd.ones(3, 2)).shape
        ferrograd.Size([1, 3])
    """
    if bias is not None and input.dim() == 2 and weight.dim() == 2:
        return _fg.addmm(bias, input, weight.t())
    if input.dim() > 2 and weight.dim() == 2:
        # Leading dims folded into the rows: one product instead of a batch
        # of small ones (torch reports shape errors on the folded shapes too).
        rows = input.reshape(-1, input.shape[-1])
        flat = rows.mm(weight.t()) if bias is None else _fg.addmm(bias, rows, weight.t())
        return flat.reshape(*input.shape[:-1], weight.shape[0])
    out = input.matmul(weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """Applies ``y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]``.

    Args:
        input1 (Tensor): the first input, of shape ``(*, in1)``.
        input2 (Tensor): the second input, of shape ``(*, in2)``.
        weight (Tensor): the weight, of shape ``(out, in1, in2)``.
        bias (Tensor, optional): the bias, of shape ``(out,)``. Default:
            ``None``.

    Example:
        >>> F.bilinear(ferrograd.ones(4, 2), ferrograd.ones(4, 3), ferrograd.ones(5, 2, 3)).shape
        ferrograd.Size([4, 5])
    """
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, but got {weight.dim()} dimensions")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError("bilinear(): input feature sizes do not match the weight")
    out = _fg.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_with_noise_shape(input: Tensor, p: float, noise_shape: Sequence[int], inplace: bool) -> Tensor:
    if p == 1.0:
        out = input * _fg.zeros((), dtype=input.dtype)
        return _apply_inplace(input, out) if inplace else out
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
        training (bool): apply dropout; when ``False`` the input is returned
            unchanged. Default: ``True``.
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        input (Tensor): the input tensor.
        p (float): the probability of a channel being zeroed. Default: ``0.5``.
        training (bool): apply dropout; when ``False`` the input is returned
            unchanged. Default: ``True``.
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        input (Tensor): the input tensor.
        p (float): the probability of a channel being zeroed. Default: ``0.5``.
        training (bool): apply dropout; when ``False`` the input is returned
            unchanged. Default: ``True``.
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

    Example:
        >>> F.dropout2d(ferrograd.ones(1, 2, 2, 2), p=0.5, training=False).sum()
        tensor(8.)
    """
    return _feature_dropout(input, p, training, inplace, 2, "dropout2d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Channel dropout for ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs.

    Args:
        input (Tensor): the input tensor.
        p (float): the probability of a channel being zeroed. Default: ``0.5``.
        training (bool): apply dropout; when ``False`` the input is returned
            unchanged. Default: ``True``.
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

    Example:
        >>> F.dropout3d(ferrograd.ones(1, 2, 1, 2, 2), p=0.5, training=False).sum()
        tensor(8.)
    """
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Looks up rows of ``weight`` at the integer indices ``input``.

    The row at ``padding_idx`` receives no gradient. With ``max_norm``, the
    looked-up rows of ``weight`` are renormalised in place first.

    Args:
        input (Tensor): integer indices, of any shape.
        weight (Tensor): the embedding matrix, of shape
            ``(num_embeddings, embedding_dim)``.
        padding_idx (int, optional): the row at this index gets no gradient.
            Default: ``None``.
        max_norm (float, optional): rows looked up with a larger norm are
            renormalised in place to this norm. Default: ``None``.
        norm_type (float): the ``p`` of the norm for ``max_norm``. Default:
            ``2.0``.
        scale_grad_by_freq (bool): divide each row's gradient by how often it
            occurs in the batch. Default: ``False``.
        sparse (bool): must be ``False`` (sparse gradients are not supported).
            Default: ``False``.

    Example:
        >>> w = ferrograd.arange(6.0).reshape(3, 2)
        >>> F.embedding(ferrograd.tensor([2, 0]), w)
        tensor([[4., 5.],
                [0., 1.]])
    """
    if sparse:
        raise RuntimeError("embedding: sparse gradients are not supported by ferrograd")
    if input.dtype not in (_fg.int64, _fg.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
            f"Long, Int; but got {input.dtype} instead (while checking arguments for embedding)"
        )
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    flat = input.reshape(-1).long()
    if flat.numel() > 0 and (int(flat.min()) < 0 or int(flat.max()) >= num):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        with _fg.no_grad():
            rows = _fg.tensor(sorted(set(flat.tolist())), dtype=_fg.int64)
            if rows.numel() > 0:
                selected = weight.index_select(0, rows)
                norms = _fg.linalg.vector_norm(selected, norm_type, dim=1, keepdim=True)
                scale = _fg.where(norms > max_norm, max_norm / (norms + 1e-7), _fg.ones_like(norms))
                weight.index_copy_(0, rows, selected * scale)
    out = weight.index_select(0, flat)
    if scale_grad_by_freq:
        # Same value, gradient divided by the index's count in this batch.
        counts = _fg.zeros(num, dtype=weight.dtype).index_add_(
            0, flat, _fg.ones(flat.shape, dtype=weight.dtype)
        )
        inv = (1.0 / counts.index_select(0, flat)).unsqueeze(1)
        out = out * inv + (out * (1.0 - inv)).detach()
    if padding_idx is not None:
        pad_mask = (flat == padding_idx).unsqueeze(1)
        out = _fg.where(pad_mask, out.detach(), out)
    return out.reshape(*input.shape, weight.shape[1])


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Returns an int64 tensor with a trailing dimension of size ``num_classes``
    holding 1 at each index of ``tensor``.

    Args:
        tensor (Tensor): class indices (int64).
        num_classes (int): the number of classes; ``-1`` uses the largest index
            plus one. Default: ``-1``.

    Example:
        >>> F.one_hot(ferrograd.tensor([0, 2]), 3)
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    if tensor.dtype != _fg.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _fg.zeros(*tensor.shape, num_classes, dtype=_fg.int64)
    if int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1
    elif int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = _fg.zeros(*tensor.shape, num_classes, dtype=_fg.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


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


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """Divides by the ``p``-norm along ``dim``, clamped below by ``eps``.

    Args:
        input (Tensor): the input tensor.
        p (float): the exponent of the norm. Default: ``2.0``.
        dim (int or tuple of ints): the dimension(s) of the vectors. Default:
            ``1``.
        eps (float): lower bound of the norm, to avoid dividing by zero.
            Default: ``1e-12``.
        out (Tensor, optional): the output tensor. Default: ``None``.

    Example:
        >>> F.normalize(ferrograd.tensor([[3.0, 4.0]]))
        tensor([[0.6000, 0.8000]])
    """
    norm = _fg.linalg.vector_norm(input, p, dim=dim, keepdim=True).clamp_min(eps)
    result = input / norm
    if out is not None:
        return out.copy_(result)
    return result


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcasting).

    Args:
        x1 (Tensor): the first input.
        x2 (Tensor): the second input (broadcast against ``x1``).
        dim (int): the dimension of the vectors. Default: ``1``.
        eps (float): lower bound of each norm, to avoid dividing by zero.
            Default: ``1e-08``.

    Example:
        >>> F.cosine_similarity(ferrograd.tensor([[1.0, 0.0]]), ferrograd.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    x1, x2 = _fg.broadcast_tensors(x1, x2)
    n1 = _fg.linalg.vector_norm(x1, 2, dim=dim, keepdim=True).clamp_min(eps)
    n2 = _fg.linalg.vector_norm(x2, 2, dim=dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``p``-norm of ``x1 - x2 + eps`` over the last dimension.

    Args:
        x1 (Tensor): the first input.
        x2 (Tensor): the second input (broadcast against ``x1``).
        p (float): the norm degree. Default: ``2.0``.
        eps (float): added to the difference, to avoid a zero norm. Default:
            ``1e-06``.
        keepdim (bool): keep the last dim with size 1. Default: ``False``.

    Example:
        >>> F.pairwise_distance(ferrograd.tensor([[0.0, 0.0]]), ferrograd.tensor([[3.0, 4.0]]), eps=0.0)
        tensor([5.])
    """
    dim = max(x1.dim(), x2.dim()) - 1
    diff = x1 - x2 + eps
    if dim < 0:
        return diff.abs()
    return _fg.linalg.vector_norm(diff, p, dim=dim, keepdim=keepdim)


# ---------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------


def _weighted(loss: Tensor, weight: Tensor | None) -> Tensor:
    return loss if weight is None else loss * weight


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error ``(x - y)^2``, optionally weighted, then reduced.

    Args:
        input (Tensor): the input tensor.
        target (Tensor): the target, shaped like ``input``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        weight (Tensor, optional): a weight multiplied with each element's loss
            (broadcast against it). Default: ``None``.

    Example:
        >>> F.mse_loss(ferrograd.tensor([1.0, 2.0]), ferrograd.tensor([0.0, 0.0]))
        tensor(2.5000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    return _reduce(_weighted((input - target).square(), weight), reduction)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error ``|x - y|``, optionally weighted, then reduced.

    Args:
        input (Tensor): the input tensor.
        target (Tensor): the target, shaped like ``input``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        weight (Tensor, optional): a weight multiplied with each element's loss
            (broadcast against it). Default: ``None``.

    Example:
        >>> F.l1_loss(ferrograd.tensor([1.0, -3.0]), ferrograd.tensor([0.0, 0.0]))
        tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    return _reduce(_weighted((input - target).abs(), weight), reduction)


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = x - y``).

    Args:
        input (Tensor): the input tensor.
        target (Tensor): the target, shaped like ``input``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        beta (float): where the loss turns from quadratic to linear. Default:
            ``1.0``.

    Example:
        >>> F.smooth_l1_loss(ferrograd.tensor([0.5, 3.0]), ferrograd.tensor([0.0, 0.0]), reduction="sum")
        tensor(2.6250)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    loss = _fg.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``.

    Args:
        input (Tensor): the input tensor.
        target (Tensor): the target, shaped like ``input``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        delta (float): where the loss turns from quadratic to linear. Default:
            ``1.0``.
        weight (Tensor, optional): a weight multiplied with each element's loss
            (broadcast against it). Default: ``None``.

    Example:
        >>> F.huber_loss(ferrograd.tensor([0.5, 3.0]), ferrograd.tensor([0.0, 0.0]), reduction="sum")
        tensor(2.6250)
    """
    _check_reduction(reduction)
    _warn_size_mismatch(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    loss = _fg.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(_weighted(loss, weight), reduction)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood: ``-weight[t] * input[n, t]`` for log-probabilities ``input``
    of shape ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)`` and class indices ``target``.

    ``'mean'`` divides by the sum of the weights of the non-ignored targets.

    Args:
        input (Tensor): log-probabilities, of shape ``(N, C)``, ``(C,)`` or
            ``(N, C, d1, ...)``.
        target (Tensor): class indices, of the shape of ``input`` without ``C``.
        weight (Tensor, optional): a manual rescaling weight per class (shape
            ``(C,)``). Default: ``None``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        ignore_index (int): target value that is ignored and does not count in
            the mean. Default: ``-100``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> logp = ferrograd.tensor([[-1.0, -2.0], [-3.0, -4.0]])
        >>> F.nll_loss(logp, ferrograd.tensor([1, 0]))
        tensor(2.5000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.dtype == _fg.uint8:
        target = target.long()
    return _core._nll_loss(input, target, weight, reduction, int(ignore_index))


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between logits ``input`` and ``target`` (class indices, or class
    probabilities of the same shape as ``input``), with optional label smoothing.

    Args:
        input (Tensor): the logits, of shape ``(N, C)``, ``(C,)`` or
            ``(N, C, d1, ...)``.
        target (Tensor): class indices (shape of ``input`` without ``C``) or
            class probabilities (shaped like ``input``).
        weight (Tensor, optional): a manual rescaling weight per class (shape
            ``(C,)``). Default: ``None``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        ignore_index (int): target value that is ignored and does not count in
            the mean. Default: ``-100``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        label_smoothing (float): in ``[0, 1]``: mix the target with the uniform
            distribution by this amount. Default: ``0.0``.

    Example:
        >>> F.cross_entropy(ferrograd.tensor([[0.0, 0.0]]), ferrograd.tensor([1]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.dim() == 1 else 1
    logp = input.log_softmax(class_dim)
    num_classes = input.shape[class_dim]
    wshape = [1] * input.dim()
    wshape[class_dim] = num_classes
    if target.is_floating_point():
        if ignore_index != -100:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(f"Expected target size {list(input.shape)}, got {list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1.0 - label_smoothing) + label_smoothing / num_classes
        per = logp * target
        if weight is not None:
            per = per * weight.reshape(wshape)
        losses = -per.sum(class_dim)
        if reduction == "mean":
            return losses.sum() / (input.numel() / num_classes if input.numel() else 0.0)
        return _reduce(losses, reduction)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    # Uniform part of the smoothed target: -sum_c w_c log p_c per element.
    per = logp if weight is None else logp * weight.reshape(wshape)
    keep = target != ignore_index
    smooth = (-per.sum(class_dim)).masked_fill(~keep, 0.0)
    if reduction == "none":
        smooth_red = smooth
    elif reduction == "sum":
        smooth_red = smooth.sum()
    elif weight is None:
        smooth_red = smooth.sum() / keep.sum()
    else:
        picked = target.masked_select(keep)
        smooth_red = smooth.sum() / weight.index_select(0, picked).sum()
    return (1.0 - label_smoothing) * nll + smooth_red * (label_smoothing / num_classes)


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``-w (y log x + (1 - y) log(1 - x))`` for probabilities ``x``; each log is
    clamped at -100, as torch does.

    Args:
        input (Tensor): probabilities in ``[0, 1]``.
        target (Tensor): targets in ``[0, 1]``, shaped like ``input``.
        weight (Tensor, optional): a weight per element (broadcast against
            ``input``). Default: ``None``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.binary_cross_entropy(ferrograd.tensor([0.5]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
            "is deprecated. Please ensure they have the same size."
        )
    if input.numel() > 0 and (bool((input < 0).any()) or bool((input > 1).any())):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = input.log().clamp_min(-100.0)
    log_1mx = (1.0 - input).log().clamp_min(-100.0)
    loss = -(target * log_x + (1.0 - target) * log_1mx)
    return _reduce(_weighted(loss, weight), reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)``, computed without overflow:
    ``(1 - y) x + (1 + (pw - 1) y) (log1p(exp(-|x|)) + max(-x, 0))``.

    Args:
        input (Tensor): the logits.
        target (Tensor): targets in ``[0, 1]``, shaped like ``input``.
        weight (Tensor, optional): a weight per element (broadcast against
            ``input``). Default: ``None``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        pos_weight (Tensor, optional): a weight of the positive examples per
            class (broadcast along the last dim). Default: ``None``.

    Example:
        >>> F.binary_cross_entropy_with_logits(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    softplus_neg = _log1p_exp(-input)
    if pos_weight is None:
        loss = (1.0 - target) * input + softplus_neg
    else:
        loss = (1.0 - target) * input + (1.0 + (pos_weight - 1.0) * target) * softplus_neg
    return _reduce(_weighted(loss, weight), reduction)


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Pointwise KL divergence ``y (log y - x)`` for log-probabilities ``x``
    (``target`` in log space too with ``log_target=True``); ``'batchmean'``
    divides the sum by the batch size.

    Args:
        input (Tensor): log-probabilities.
        target (Tensor): probabilities (log-probabilities with ``log_target``).
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): ``'none'``, ``'batchmean'`` (the mathematically right
            one), ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        log_target (bool): ``target`` holds log-probabilities. Default:
            ``False``.

    Example:
        >>> F.kl_div(ferrograd.tensor([-1.0]), ferrograd.tensor([0.0]), reduction="sum")
        tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            UserWarning,
            stacklevel=2,
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # xlogy: 0 * log 0 is 0; the log argument is patched so no inf reaches the graph.
        safe = _fg.where(target == 0, _fg.ones_like(target), target)
        loss = target * safe.log() - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() > 0 else total
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log likelihood: ``exp(x) - y x`` (``log_input``) or
    ``x - y log(x + eps)``, plus Stirling's term for ``y > 1`` when ``full``.

    Args:
        input (Tensor): the predicted rates (their logs when ``log_input``).
        target (Tensor): the observed counts.
        log_input (bool): ``input`` holds log-rates: loss ``exp(x) - y x``;
            otherwise ``x - y log(x + eps)``. Default: ``True``.
        full (bool): add the Stirling term ``y log y - y + 0.5 log(2 pi y)``.
            Default: ``False``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        eps (float): added inside the log when not ``log_input``. Default:
            ``1e-08``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.poisson_nll_loss(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        safe = _fg.where(target > 1, target, _fg.ones_like(target))
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return _reduce(loss, reduction)


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``.

    Args:
        input1 (Tensor): the first scores.
        input2 (Tensor): the second scores.
        target (Tensor): ``1`` where ``input1`` should rank higher, ``-1`` where
            ``input2`` should.
        margin (float): the margin. Default: ``0.0``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.margin_ranking_loss(ferrograd.tensor([1.0]), ferrograd.tensor([2.0]), ferrograd.tensor([1.0]))
        tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0.0), reduction)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``x`` where ``y == 1`` and ``max(0, margin - x)`` where ``y == -1``.

    Args:
        input (Tensor): the input tensor.
        target (Tensor): ``1`` or ``-1`` per element.
        margin (float): the margin. Default: ``1.0``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.hinge_embedding_loss(ferrograd.tensor([0.3, 0.2]), ferrograd.tensor([1.0, -1.0]))
        tensor(0.5500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    zeros = _fg.zeros_like(input)
    margin_part = _fg.where(target != 1, (margin - input).clamp_min(0.0), zeros)
    self_part = _fg.where(target != -1, input, zeros)
    return _reduce(margin_part + self_part, reduction)


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``log(1 + exp(-y x))``.

    Args:
        input (Tensor): the input tensor.
        target (Tensor): ``1`` or ``-1`` per element.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.soft_margin_loss(ferrograd.tensor([0.0]), ferrograd.tensor([1.0]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    z = -target * input
    loss = _log1p_exp(z)
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------


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
    mean = grouped.mean(2, keepdim=True)
    centered = grouped - mean
    var = centered.square().mean(2, keepdim=True)
    out = (centered * (var + eps).rsqrt()).reshape(input.shape)
    affine_shape = [1, c] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(affine_shape)
    if bias is not None:
        out = out + bias.reshape(affine_shape)
    return out


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
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = centered.square().mean(dims, keepdim=True)
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
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


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
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = centered.square().mean(dims, keepdim=True)
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
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


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


# ---------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------


def _batchify(input: Tensor, nd: int, name: str) -> tuple[Tensor, bool]:
    """Add the batch dimension to an unbatched input; say whether it was added."""
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    if input.dim() == nd + 2:
        return input, False
    raise RuntimeError(
        f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
        f"size: {list(input.shape)}"
    )


def _window_view(
    x: Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int], out: Sequence[int]
) -> Tensor:
    """The sliding windows of a contiguous ``(N, C, *S)`` tensor as a
    ``(N, C, *out, *kernel)`` view (im2col without a copy)."""
    x = x.contiguous()
    st = x.stride()
    nd = len(kernel)
    spatial = st[2:]
    shape = (x.shape[0], x.shape[1], *out, *kernel)
    strides = (
        st[0],
        st[1],
        *(spatial[i] * stride[i] for i in range(nd)),
        *(spatial[i] * dilation[i] for i in range(nd)),
    )
    return x.as_strided(shape, strides, x.storage_offset())


def _conv_padding(
    padding: Any, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int], nd: int
) -> list[tuple[int, int]]:
    """(left, right) zero padding per spatial dimension."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pairs = []
            for k, d in zip(kernel, dilation, strict=True):
                total = d * (k - 1)
                pairs.append((total // 2, total - total // 2))
            return pairs
        raise RuntimeError(f"Invalid padding string: {padding!r}")
    p = _tuple(padding, nd, "padding")
    if any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    return [(v, v) for v in p]


def _pad_spatial(x: Tensor, pairs: Sequence[tuple[int, int]], value: float = 0.0) -> Tensor:
    if all(a == 0 and b == 0 for a, b in pairs):
        return x
    flat: list[int] = []
    for left, right in reversed(pairs):
        flat += [left, right]
    return pad(x, flat, value=value)


def _convnd(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    nd: int,
    name: str,
) -> Tensor:
    """N-d cross-correlation: padded input -> window view -> one batched matmul."""
    x, unbatched = _batchify(input, nd, name)
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input {list(x.shape)}, "
            f"but got {weight.dim()}-dimensional weight of size {list(weight.shape)} instead"
        )
    kernel = tuple(weight.shape[2:])
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    c_out = weight.shape[0]
    if c_out % groups != 0:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{list(weight.shape)}] instead"
        )
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(x.shape)} "
            f"to have {weight.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
        )
    pairs = _conv_padding(padding, kernel, stride, dilation, nd)
    padded_sizes = [x.shape[2 + i] + pairs[i][0] + pairs[i][1] for i in range(nd)]
    effective = [dilation[i] * (kernel[i] - 1) + 1 for i in range(nd)]
    if any(padded_sizes[i] < effective[i] for i in range(nd)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded_sizes))}). "
            f"Kernel size: ({' x '.join(map(str, effective))}). "
            "Kernel size can't be greater than actual input size"
        )
    if nd in (1, 2) and x.is_floating_point() and x.numel() > 0:
        # The core's conv2d (im2col + one product per image); a 1-d
        # convolution is a 2-d one over images of height 1.
        if any(lo != hi for lo, hi in pairs):
            x = _pad_spatial(x, pairs)
            pairs = [(0, 0)] * nd
        if nd == 1:
            out = _core._conv2d(
                x.unsqueeze(2), weight.unsqueeze(2), bias,
                (1, stride[0]), (0, pairs[0][0]), (1, dilation[0]), groups,
            ).squeeze(2)  # fmt: skip
        else:
            out = _core._conv2d(
                x, weight, bias, tuple(stride), (pairs[0][0], pairs[1][0]), tuple(dilation), groups
            )
        return out.squeeze(0) if unbatched else out
    out_sizes = [(padded_sizes[i] - effective[i]) // stride[i] + 1 for i in range(nd)]
    xp = _pad_spatial(x, pairs)
    n, c_in = x.shape[0], x.shape[1]
    cg, og = c_in // groups, c_out // groups
    windows = _window_view(xp, kernel, stride, dilation, out_sizes)  # (N, C, *O, *K)
    windows = windows.reshape(n, groups, cg, *out_sizes, *kernel)
    # (N, G, *O, Cg, *K) so each output position's patch is one contiguous row.
    perm = [0, 1, *range(3, 3 + nd), 2, *range(3 + nd, 3 + 2 * nd)]
    length = math.prod(out_sizes)
    patch = cg * math.prod(kernel)
    cols = windows.permute(perm).reshape(n, groups, length, patch)
    w = weight.reshape(groups, og, patch).transpose(1, 2)  # (G, patch, Og)
    out = cols.matmul(w)  # (N, G, L, Og)
    out = out.permute(0, 1, 3, 2).reshape(n, c_out, *out_sizes)
    if bias is not None:
        out = out + bias.reshape(1, c_out, *([1] * nd))
    return out.squeeze(0) if unbatched else out


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """1-D cross-correlation over ``(N, C_in, L)``; ``weight`` is ``(C_out, C_in / groups, k)``.

    Args:
        input (Tensor): the input tensor.
        weight (Tensor): the filters, of shape
            ``(C_out, C_in / groups, *kernel)``.
        bias (Tensor, optional): added to every output channel, of shape
            ``(C_out,)``. Default: ``None``.
        stride (int or tuple of ints): the step of the filters. Default: ``1``.
        padding (int, tuple of ints or str): zeros added on both sides of each
            spatial dim, or ``'valid'`` (none) or ``'same'`` (output size =
            input size, stride 1). Default: ``0``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        groups (int): split the input channels into this many groups, each
            convolved with its own filters. Default: ``1``.

    Example:
        >>> F.conv1d(ferrograd.ones(1, 1, 5), ferrograd.ones(1, 1, 3))
        tensor([[[3., 3., 3.]]])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation over ``(N, C_in, H, W)``; ``weight`` is
    ``(C_out, C_in / groups, kH, kW)``; ``padding`` may be an int, a pair,
    ``'valid'`` or ``'same'``.

    Args:
        input (Tensor): the input tensor.
        weight (Tensor): the filters, of shape
            ``(C_out, C_in / groups, *kernel)``.
        bias (Tensor, optional): added to every output channel, of shape
            ``(C_out,)``. Default: ``None``.
        stride (int or tuple of ints): the step of the filters. Default: ``1``.
        padding (int, tuple of ints or str): zeros added on both sides of each
            spatial dim, or ``'valid'`` (none) or ``'same'`` (output size =
            input size, stride 1). Default: ``0``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        groups (int): split the input channels into this many groups, each
            convolved with its own filters. Default: ``1``.

    Example:
        >>> F.conv2d(ferrograd.ones(1, 1, 3, 3), ferrograd.ones(1, 1, 2, 2)).shape
        ferrograd.Size([1, 1, 2, 2])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    """3-D cross-correlation over ``(N, C_in, D, H, W)``.

    Args:
        input (Tensor): the input tensor.
        weight (Tensor): the filters, of shape
            ``(C_out, C_in / groups, *kernel)``.
        bias (Tensor, optional): added to every output channel, of shape
            ``(C_out,)``. Default: ``None``.
        stride (int or tuple of ints): the step of the filters. Default: ``1``.
        padding (int, tuple of ints or str): zeros added on both sides of each
            spatial dim, or ``'valid'`` (none) or ``'same'`` (output size =
            input size, stride 1). Default: ``0``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        groups (int): split the input channels into this many groups, each
            convolved with its own filters. Default: ``1``.

    Example:
        >>> F.conv3d(ferrograd.ones(1, 1, 3, 3, 3), ferrograd.ones(1, 1, 2, 2, 2)).shape
        ferrograd.Size([1, 1, 2, 2, 2])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transposend(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: int,
    dilation: Any,
    nd: int,
    name: str,
) -> Tensor:
    """Transposed convolution as a stride-1 convolution of the zero-stuffed input
    with the flipped, in/out-swapped kernel (the adjoint of :func:`_convnd`)."""
    x, unbatched = _batchify(input, nd, name)
    stride = _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    output_padding = _tuple(output_padding, nd, "output_padding")
    dilation = _tuple(dilation, nd, "dilation")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=True)):
        axes = ("height", "width") if nd == 2 else tuple(f"dim{i}" for i in range(nd))
        parts = [f"output_padding_{a}: {v}" for a, v in zip(axes, output_padding, strict=True)]
        parts += [f"stride_{a}: {v}" for a, v in zip(axes, stride, strict=True)]
        parts += [f"dilation_{a}: {v}" for a, v in zip(axes, dilation, strict=True)]
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got " + " ".join(parts)
        )
    c_in = x.shape[1]
    if weight.dim() != nd + 2 or weight.shape[0] != c_in:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(x.shape)} "
            f"to have {weight.shape[0]} channels, but got {c_in} channels instead"
        )
    if c_in % groups != 0:
        raise RuntimeError(f"in_channels ({c_in}) must be divisible by groups ({groups})")
    kernel = tuple(weight.shape[2:])
    og = weight.shape[1]
    n = x.shape[0]
    if any(s > 1 for s in stride):
        sizes = [(x.shape[2 + i] - 1) * stride[i] + 1 for i in range(nd)]
        stuffed = _fg.zeros(n, c_in, *sizes, dtype=x.dtype)
        index = (slice(None), slice(None), *(slice(None, None, s) for s in stride))
        stuffed[index] = x
        x = stuffed
    pairs = []
    for i in range(nd):
        edge = dilation[i] * (kernel[i] - 1) - padding[i]
        pairs.append((edge, edge + output_padding[i]))
    x = _pad_spatial(x, pairs)
    # (C_in, Og, *K) -> (G * Og, C_in / G, *K), flipped in every spatial dim.
    w = weight.reshape(groups, c_in // groups, og, *kernel).transpose(1, 2)
    w = w.reshape(groups * og, c_in // groups, *kernel).flip(list(range(2, 2 + nd)))
    out = _convnd(x, w, bias, 1, 0, dilation, groups, nd, name)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """1-D transposed convolution; ``weight`` is ``(C_in, C_out / groups, k)``.

    Args:
        input (Tensor): the input tensor.
        weight (Tensor): the filters, of shape
            ``(C_in, C_out / groups, *kernel)``.
        bias (Tensor, optional): added to every output channel, of shape
            ``(C_out,)``. Default: ``None``.
        stride (int or tuple of ints): the stride of the (forward) convolution
            this op transposes. Default: ``1``.
        padding (int or tuple of ints): ``dilation * (k - 1) - padding`` zeros
            are added on both sides of each dim. Default: ``0``.
        output_padding (int or tuple of ints): extra size added to one side of
            each output dim, to pick among the sizes a strided convolution maps
            to the same input size. Default: ``0``.
        groups (int): split the input channels into this many groups, each
            convolved with its own filters. Default: ``1``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.

    Example:
        >>> F.conv_transpose1d(ferrograd.ones(1, 1, 2), ferrograd.ones(1, 1, 2))
        tensor([[[1., 2., 1.]]])
    """
    return _conv_transposend(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d"
    )


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """2-D transposed convolution; output size is
    ``(H - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.

    Args:
        input (Tensor): the input tensor.
        weight (Tensor): the filters, of shape
            ``(C_in, C_out / groups, *kernel)``.
        bias (Tensor, optional): added to every output channel, of shape
            ``(C_out,)``. Default: ``None``.
        stride (int or tuple of ints): the stride of the (forward) convolution
            this op transposes. Default: ``1``.
        padding (int or tuple of ints): ``dilation * (k - 1) - padding`` zeros
            are added on both sides of each dim. Default: ``0``.
        output_padding (int or tuple of ints): extra size added to one side of
            each output dim, to pick among the sizes a strided convolution maps
            to the same input size. Default: ``0``.
        groups (int): split the input channels into this many groups, each
            convolved with its own filters. Default: ``1``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.

    Example:
        >>> F.conv_transpose2d(ferrograd.ones(1, 1, 2, 2), ferrograd.ones(1, 3, 2, 2), stride=2).shape
        ferrograd.Size([1, 3, 4, 4])
    """
    return _conv_transposend(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d"
    )


# ---------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------


def _pool_geometry(
    x: Tensor,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
) -> tuple[list[int], list[tuple[int, int]]]:
    """Output sizes and the (left, right) padding that makes every window fit."""
    nd = len(kernel)
    for i in range(nd):
        if padding[i] > (dilation[i] * (kernel[i] - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={padding[i]}, "
                f"kernel_size={kernel[i]} and dilation={dilation[i]}"
            )
    out, pairs = [], []
    for i in range(nd):
        size = x.shape[2 + i]
        span = size + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1
        o = (-(-span // stride[i]) if ceil_mode else span // stride[i]) + 1
        if ceil_mode and (o - 1) * stride[i] >= size + padding[i]:
            o -= 1  # the last window must start inside the input or left padding
        out.append(o)
        needed = (o - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
        extra = max(needed - (size + 2 * padding[i]), 0)
        pairs.append((padding[i], padding[i] + extra))
    if any(o <= 0 for o in out):
        given = "x".join(str(s) for s in x.shape[1:])
        calc = "x".join(str(s) for s in [x.shape[1], *out])
        raise RuntimeError(
            f"Given input size: ({given}). Calculated output size: ({calc}). Output size is too small"
        )
    return out, pairs


def _pool_args(
    kernel_size: Any, stride: Any, padding: Any, dilation: Any, nd: int
) -> tuple[tuple[int, ...], ...]:
    kernel = _tuple(kernel_size, nd, "kernel_size")
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        stride_t = kernel
    else:
        stride_t = _tuple(stride, nd, "stride")
    if any(s <= 0 for s in stride_t):
        raise RuntimeError("stride should be greater than zero")
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero")
    return kernel, stride_t, _tuple(padding, nd, "padding"), _tuple(dilation, nd, "dilation")


def _pool_input(input: Tensor, nd: int) -> tuple[Tensor, bool]:
    # Only the batch dimension may be empty, as in torch.
    if input.dim() not in (nd + 1, nd + 2) or 0 in tuple(input.shape[-(nd + 1) :]):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    return input, False


def _pool_windows(
    xp: Tensor, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int], out: Sequence[int]
) -> Tensor:
    """The windows of a padded ``(N, C, *S)`` tensor as ``(N, C, K, *out)``, K
    the window size, in row-major kernel order."""
    nd = len(kernel)
    n, c = xp.shape[0], xp.shape[1]
    if nd in (1, 2) and xp.is_floating_point() and xp.numel() > 0:
        # The core's im2col, whose backward (col2im) sums gradients back.
        lift = (lambda t: (1, *t)) if nd == 1 else tuple
        img = xp.unsqueeze(2) if nd == 1 else xp
        cols = _core._im2col(img, lift(kernel), lift(dilation), (0, 0), lift(stride))
        return cols.view(n, c, math.prod(kernel), *out)
    windows = _window_view(xp, kernel, stride, dilation, out)
    return windows.reshape(n, c, *out, math.prod(kernel)).movedim(-1, 2)


def _max_poolnd(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
    nd: int,
) -> Any:
    x, unbatched = _pool_input(input, nd)
    kernel, stride_t, padding_t, dilation_t = _pool_args(kernel_size, stride, padding, dilation, nd)
    out_sizes, pairs = _pool_geometry(x, kernel, stride_t, padding_t, dilation_t, ceil_mode)
    padded = any(lo or hi for lo, hi in pairs)
    xp = _pad_spatial(x, pairs, value=float("-inf")) if padded else x
    if nd in (1, 2) and x.is_floating_point() and x.numel() > 0:
        # The core finds each window's argmax; the values are gathered from
        # the input, so the gradient goes to that one element (as torch's).
        lift = (lambda t: (1, *t)) if nd == 1 else tuple
        img = xp.unsqueeze(2) if nd == 1 else xp
        idx = _core._max_pool2d_indices(img, lift(kernel), lift(dilation_t), (0, 0), lift(stride_t))
        n, c = x.shape[0], x.shape[1]
        flat_idx = idx.reshape(n, c, -1)
        values = xp.reshape(n, c, -1).gather(2, flat_idx).reshape(n, c, *out_sizes)
        if unbatched:
            values = values.squeeze(0)
        if not return_indices:
            return values
        if padded:
            wp = img.shape[-1]
            rows = idx.div(wp, rounding_mode="floor") - (pairs[0][0] if nd == 2 else 0)
            cols = idx.remainder(wp) - pairs[-1][0]
            idx = rows * x.shape[-1] + cols if nd == 2 else cols
        idx = idx.reshape(n, c, *out_sizes)
        return values, (idx.squeeze(0) if unbatched else idx)
    # max with a dim sends the gradient to one element per window, as torch's
    # max_pool backward does (amax would split it between ties).
    values, arg = _pool_windows(xp, kernel, stride_t, dilation_t, out_sizes).max(2)
    if unbatched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    # Window offset -> flat index into the unpadded input plane.
    flat = _fg.zeros(arg.shape, dtype=_fg.int64)
    rem = arg
    plane_stride = 1
    strides_in = []
    for i in reversed(range(nd)):
        strides_in.append(plane_stride)
        plane_stride *= x.shape[2 + i]
    strides_in.reverse()
    kernel_strides = [math.prod(kernel[i + 1 :]) for i in range(nd)]
    for i in range(nd):
        k_i = rem.div(kernel_strides[i], rounding_mode="floor")
        rem = rem - k_i * kernel_strides[i]
        shape = [1] * (2 + nd)
        shape[2 + i] = out_sizes[i]
        start = (_fg.arange(out_sizes[i]) * stride_t[i] - padding_t[i]).reshape(shape)
        flat = flat + (start + k_i * dilation_t[i]) * strides_in[i]
    if unbatched:
        flat = flat.squeeze(0)
    return values, flat


def max_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """1-D max pooling over ``(N, C, L)``.

    Args:
        input (Tensor): the input tensor.
        kernel_size (int or tuple of ints): the size of the window.
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.
        return_indices (bool): also return the index of each maximum, for
            :func:`max_unpool1d`. Default: ``False``.

    Example:
        >>> F.max_pool1d(ferrograd.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[3., 2.]]])
    """
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1)


def max_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """2-D max pooling over ``(N, C, H, W)``; ``stride`` defaults to ``kernel_size``.
    With ``return_indices`` also returns flat indices into each ``H * W`` plane.

    Args:
        input (Tensor): the input tensor.
        kernel_size (int or tuple of ints): the size of the window.
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.
        return_indices (bool): also return the flat index (within each spatial
            plane) of each maximum, for :func:`max_unpool2d`. Default:
            ``False``.

    Example:
        >>> F.max_pool2d(ferrograd.arange(16.0).reshape(1, 1, 4, 4), 2)
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
    """
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def _avg_poolnd(
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    nd: int,
) -> Tensor:
    x, unbatched = _pool_input(input, nd)
    kernel, stride_t, padding_t, dilation_t = _pool_args(kernel_size, stride, padding, 1, nd)
    out_sizes, pairs = _pool_geometry(x, kernel, stride_t, padding_t, dilation_t, ceil_mode)
    xp = _pad_spatial(x, pairs)
    sums = _pool_windows(xp, kernel, stride_t, dilation_t, out_sizes).sum(2)
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        out = sums / divisor_override
    else:
        # Count, per window, the cells that belong to the divisor: real input,
        # plus the symmetric padding when count_include_pad, never the extra
        # cells that ceil_mode appends on the right.
        ones = _fg.ones(1, 1, *x.shape[2:], dtype=x.dtype)
        counted = _pad_spatial(ones, [(p, p) for p in padding_t], value=1.0 if count_include_pad else 0.0)
        counted = _pad_spatial(counted, [(0, b - a) for a, b in pairs])
        divisor = _window_view(counted, kernel, stride_t, dilation_t, out_sizes)
        out = sums / divisor.sum(tuple(range(2 + nd, 2 + 2 * nd)))
    return out.squeeze(0) if unbatched else out


def avg_pool1d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """1-D average pooling over ``(N, C, L)``.

    Args:
        input (Tensor): the input tensor.
        kernel_size (int or tuple of ints): the size of the window.
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.
        count_include_pad (bool): count the zero padding in the divisor of each
            average. Default: ``True``.

    Example:
        >>> F.avg_pool1d(ferrograd.tensor([[[1.0, 3.0, 2.0, 0.0]]]), 2)
        tensor([[[2., 1.]]])
    """
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


def avg_pool2d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """2-D average pooling over ``(N, C, H, W)``.

    Args:
        input (Tensor): the input tensor.
        kernel_size (int or tuple of ints): the size of the window.
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.
        count_include_pad (bool): count the zero padding in the divisor of each
            average. Default: ``True``.
        divisor_override (int, optional): divide every window by this number
            instead of its size. Default: ``None``.

    Example:
        >>> F.avg_pool2d(ferrograd.ones(1, 1, 4, 4), 2, padding=1, count_include_pad=False).shape
        ferrograd.Size([1, 1, 3, 3])
    """
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


def _adaptive_sizes(output_size: Any, x: Tensor, nd: int) -> list[int]:
    if isinstance(output_size, int):
        output_size = (output_size,) * nd
    sizes = list(output_size)
    if len(sizes) == 1 and nd > 1:
        sizes = sizes * nd
    if len(sizes) != nd:
        raise ValueError(f"adaptive pool: output_size must have {nd} elements")
    return [x.shape[x.dim() - nd + i] if s is None else int(s) for i, s in enumerate(sizes)]


def _adaptive_avg_poolnd(input: Tensor, output_size: Any, nd: int) -> Tensor:
    x, unbatched = _pool_input(input, nd)
    sizes = _adaptive_sizes(output_size, x, nd)
    out = x
    for i in range(nd):
        d = 2 + i
        size = x.shape[d]
        # Averaging matrix (O, S): row o holds 1/len over window o.
        rows = []
        for start, end in _adaptive_bounds(size, sizes[i]):
            row = [0.0] * size
            for j in range(start, end):
                row[j] = 1.0 / (end - start)
            rows.append(row)
        matrix = _fg.tensor(rows, dtype=x.dtype)
        out = out.movedim(d, -1).matmul(matrix.t()).movedim(-1, d)
    return out.squeeze(0) if unbatched else out


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """1-D adaptive average pooling to ``output_size`` positions.

    Args:
        input (Tensor): the input tensor.
        output_size (int): the length of the output.

    Example:
        >>> F.adaptive_avg_pool1d(ferrograd.tensor([[[1.0, 2.0, 3.0, 4.0]]]), 2)
        tensor([[[1.5000, 3.5000]]])
    """
    return _adaptive_avg_poolnd(input, output_size, 1)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """2-D adaptive average pooling: window ``i`` spans ``[floor(i S / O), ceil((i + 1) S / O))``.

    Args:
        input (Tensor): the input tensor.
        output_size (int or tuple of ints): the spatial size of the output
            (``None`` in a tuple keeps that input size).

    Example:
        >>> F.adaptive_avg_pool2d(ferrograd.ones(1, 1, 5, 7), (2, 3)).shape
        ferrograd.Size([1, 1, 2, 3])
    """
    return _adaptive_avg_poolnd(input, output_size, 2)


def _adaptive_max_poolnd(input: Tensor, output_size: Any, return_indices: bool, nd: int) -> Any:
    x, unbatched = _pool_input(input, nd)
    sizes = _adaptive_sizes(output_size, x, nd)
    gathered = x
    source_indices = []
    lengths = []
    for i in range(nd):
        d = 2 + 2 * i  # each earlier dim has become (O, L)
        bounds = _adaptive_bounds(x.shape[2 + i], sizes[i])
        length = max(e - s for s, e in bounds)
        # Short windows repeat their last index, which cannot change the max.
        idx = [[min(s + j, e - 1) for j in range(length)] for s, e in bounds]
        idx_t = _fg.tensor(idx, dtype=_fg.int64)
        gathered = gathered.index_select(d, idx_t.reshape(-1)).unflatten(d, (sizes[i], length))
        source_indices.append(idx_t)
        lengths.append(length)
    n, c = x.shape[0], x.shape[1]
    perm = [0, 1, *(2 + 2 * i for i in range(nd)), *(3 + 2 * i for i in range(nd))]
    values, arg = gathered.permute(perm).reshape(n, c, *sizes, math.prod(lengths)).max(-1)
    if unbatched:
        values = values.squeeze(0)
    if not return_indices:
        return values
    flat = _fg.zeros(arg.shape, dtype=_fg.int64)
    rem = arg
    for i in range(nd):
        block = math.prod(lengths[i + 1 :])
        l_i = rem.div(block, rounding_mode="floor")
        rem = rem - l_i * block
        shape = [1] * (2 + nd)
        shape[2 + i] = sizes[i]
        offsets = _fg.arange(sizes[i]).reshape(shape) * lengths[i] + l_i
        src = source_indices[i].reshape(-1)[offsets.reshape(-1)].reshape(offsets.shape)
        flat = flat + src * math.prod(x.shape[3 + i :])
    if unbatched:
        flat = flat.squeeze(0)
    return values, flat


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """1-D adaptive max pooling over ``(N, C, L)`` or ``(C, L)``: the windows are
    chosen so the output has ``output_size`` positions, as in :func:`adaptive_avg_pool2d`.

    Args:
        input (Tensor): the input tensor.
        output_size (int): the length of the output.
        return_indices (bool): also return the index of each maximum. Default:
            ``False``.

    Example:
        >>> F.adaptive_max_pool1d(ferrograd.tensor([[[1.0, 5.0, 3.0, 4.0]]]), 2)
        tensor([[[5., 4.]]])
    """
    return _adaptive_max_poolnd(input, output_size, return_indices, 1)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """2-D adaptive max pooling, with the same windows as :func:`adaptive_avg_pool2d`.

    Args:
        input (Tensor): the input tensor.
        output_size (int or tuple of ints): the spatial size of the output
            (``None`` in a tuple keeps that input size).
        return_indices (bool): also return the flat index of each maximum.
            Default: ``False``.

    Example:
        >>> F.adaptive_max_pool2d(ferrograd.arange(16.0).reshape(1, 1, 4, 4), 1)
        tensor([[[[15.]]]])
    """
    return _adaptive_max_poolnd(input, output_size, return_indices, 2)


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    """Extracts sliding blocks: ``(N, C, H, W) -> (N, C * kH * kW, L)``.

    Args:
        input (Tensor): the input, of shape ``(N, C, H, W)``.
        kernel_size (int or tuple of ints): the size of the window.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        stride (int or tuple of ints): the step between blocks. Default: ``1``.

    Example:
        >>> F.unfold(ferrograd.ones(1, 2, 3, 3), 2).shape
        ferrograd.Size([1, 8, 4])
    """
    if input.dim() not in (3, 4):
        raise NotImplementedError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)"
        )
    x, unbatched = (input.unsqueeze(0), True) if input.dim() == 3 else (input, False)
    kernel = _tuple(kernel_size, 2, "kernel_size")
    dilation_t = _tuple(dilation, 2, "dilation")
    padding_t = _tuple(padding, 2, "padding")
    stride_t = _tuple(stride, 2, "stride")
    if x.is_floating_point() and min(padding_t) >= 0 and min(stride_t) > 0:
        cols = _core._im2col(x, kernel, dilation_t, padding_t, stride_t)
        return cols.squeeze(0) if unbatched else cols
    xp = _pad_spatial(x, [(p, p) for p in padding_t])
    out_sizes = [(xp.shape[2 + i] - dilation_t[i] * (kernel[i] - 1) - 1) // stride_t[i] + 1 for i in range(2)]
    if any(o <= 0 for o in out_sizes):
        raise RuntimeError(
            f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size={kernel}, "
            f"dilation={dilation_t}, padding={padding_t}, calculated shape of the array of sliding "
            f"blocks as ({out_sizes[0]}, {out_sizes[1]}), but its components must be at least one."
        )
    n, c = x.shape[0], x.shape[1]
    windows = _window_view(xp, kernel, stride_t, dilation_t, out_sizes)  # (N, C, OH, OW, kh, kw)
    cols = windows.permute(0, 1, 4, 5, 2, 3).reshape(
        n, c * kernel[0] * kernel[1], out_sizes[0] * out_sizes[1]
    )
    return cols.squeeze(0) if unbatched else cols


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """Sums sliding blocks back into a tensor: the adjoint of :func:`unfold`,
    ``(N, C * kH * kW, L) -> (N, C, H, W)``.

    Args:
        input (Tensor): the columns, of shape ``(N, C * prod(kernel_size), L)``.
        output_size (int or tuple of ints): the spatial size ``(H, W)`` of the
            output.
        kernel_size (int or tuple of ints): the size of the window.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        stride (int or tuple of ints): the step between blocks. Default: ``1``.

    Example:
        >>> F.fold(ferrograd.ones(1, 4, 4), (3, 3), 2)[0, 0]
        tensor([[1., 2., 1.],
                [2., 4., 2.],
                [1., 2., 1.]])
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
            f"dimensions for input, but got: {list(input.shape)}"
        )
    x, unbatched = (input.unsqueeze(0), True) if input.dim() == 2 else (input, False)
    size = _tuple(output_size, 2, "output_size")
    kernel = _tuple(kernel_size, 2, "kernel_size")
    dilation_t = _tuple(dilation, 2, "dilation")
    padding_t = _tuple(padding, 2, "padding")
    stride_t = _tuple(stride, 2, "stride")
    kk = kernel[0] * kernel[1]
    if x.shape[1] % kk != 0:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            f"but got input.size(1)={x.shape[1]} and kernel_size={kernel}"
        )
    padded = [size[i] + 2 * padding_t[i] for i in range(2)]
    blocks = [(padded[i] - dilation_t[i] * (kernel[i] - 1) - 1) // stride_t[i] + 1 for i in range(2)]
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={kernel}, dilation={dilation_t}, padding={padding_t}, "
            f"stride={stride_t}, expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={x.shape[2]}."
        )
    if x.is_floating_point() and min(padding_t) >= 0 and min(stride_t) > 0:
        img = _core._col2im(x, size, kernel, dilation_t, padding_t, stride_t)
        return img.squeeze(0) if unbatched else img
    n, c = x.shape[0], x.shape[1] // kk
    ki = _fg.arange(kernel[0]).reshape(-1, 1, 1, 1)
    kj = _fg.arange(kernel[1]).reshape(1, -1, 1, 1)
    oh = _fg.arange(blocks[0]).reshape(1, 1, -1, 1)
    ow = _fg.arange(blocks[1]).reshape(1, 1, 1, -1)
    rows = oh * stride_t[0] + ki * dilation_t[0]
    cols = ow * stride_t[1] + kj * dilation_t[1]
    target = (rows * padded[1] + cols).reshape(-1)  # (kh*kw*L,) in unfold's column order
    values = x.reshape(n, c, -1)
    out = _fg.zeros(n, c, padded[0] * padded[1], dtype=x.dtype).index_add(2, target, values)
    out = out.reshape(n, c, padded[0], padded[1])
    out = out[:, :, padding_t[0] : padding_t[0] + size[0], padding_t[1] : padding_t[1] + size[1]]
    return out.squeeze(0) if unbatched else out


# ---------------------------------------------------------------------------
# Resampling and attention
# ---------------------------------------------------------------------------


def _linear_matrix(size: int, out: int, align_corners: bool, scale: float | None, dtype: Any) -> Tensor:
    """(out, size) matrix of linear interpolation weights along one dimension."""
    rows = []
    for o in range(out):
        if align_corners:
            src = o * (size - 1) / (out - 1) if out > 1 else 0.0
        else:
            ratio = scale if scale is not None else size / out
            src = max((o + 0.5) * ratio - 0.5, 0.0)
        i0 = min(int(math.floor(src)), size - 1)
        i1 = min(i0 + 1, size - 1)
        lam = src - i0
        row = [0.0] * size
        row[i0] += 1.0 - lam
        row[i1] += lam
        rows.append(row)
    return _fg.tensor(rows, dtype=dtype)


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resizes the spatial dimensions of ``(N, C, *S)`` with ``mode`` one of
    ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``,
    ``'trilinear'`` or ``'area'``.

    Args:
        input (Tensor): the input, of shape ``(N, C, *spatial)`` with 1 to 3
            spatial dims.
        size (int or tuple of ints, optional): the output spatial size. Default:
            ``None``.
        scale_factor (float or tuple of floats, optional): the multiplier of the
            spatial size (give ``size`` or this). Default: ``None``.
        mode (str): ``'nearest'``, ``'nearest-exact'``, ``'linear'``,
            ``'bilinear'``, ``'trilinear'`` or ``'area'``. Default:
            ``'nearest'``.
        align_corners (bool, optional): for the linear modes: map the corner
            pixels' centres onto each other instead of the corners' edges.
            Default: ``None``.
        recompute_scale_factor (bool, optional): compute the scale from the
            output size rather than using ``scale_factor`` directly. Default:
            ``None``.
        antialias (bool): must be ``False`` (``True`` raises: not supported).
            Default: ``False``.

    Example:
        >>> F.interpolate(ferrograd.tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    nd = input.dim() - 2
    if nd < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D)")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    linear_modes = {"linear": 1, "bilinear": 2, "trilinear": 3}
    if mode in linear_modes and linear_modes[mode] != nd:
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {linear_modes[mode] + 2}D input"
        )
    if mode not in linear_modes and align_corners is not None:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear"
        )
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    in_sizes = list(input.shape[2:])
    scales: list[float | None]
    if size is not None:
        out_sizes = list(_tuple(size, nd, "size"))
        scales = [None] * nd
    else:
        factors = [float(scale_factor)] * nd if isinstance(scale_factor, (int, float)) else list(scale_factor)
        if len(factors) != nd:
            raise ValueError("Input and scale_factor must have the same number of spatial dimensions")
        out_sizes = [int(math.floor(s * f)) for s, f in zip(in_sizes, factors, strict=True)]
        scales = [None] * nd if recompute_scale_factor else [1.0 / f for f in factors]
    if mode == "area":
        return _adaptive_avg_poolnd(input, out_sizes, nd)
    out = input
    for i in range(nd):
        d = 2 + i
        s, o = in_sizes[i], out_sizes[i]
        ratio = scales[i] if scales[i] is not None else s / o
        if mode in ("nearest", "nearest-exact"):
            offset = 0.5 if mode == "nearest-exact" else 0.0
            idx = [min(int(math.floor((j + offset) * ratio)), s - 1) for j in range(o)]
            out = out.index_select(d, _fg.tensor(idx, dtype=_fg.int64))
        elif mode in linear_modes:
            matrix = _linear_matrix(s, o, bool(align_corners), scales[i], input.dtype)
            out = out.movedim(d, -1).matmul(matrix.t()).movedim(-1, d)
        else:
            raise NotImplementedError(f"interpolate: mode {mode!r} is not supported")
    return out


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(Q K^T * scale + mask) V`` over ``(..., L, E)`` queries and
    ``(..., S, E)`` keys; a boolean ``attn_mask`` marks the positions allowed to attend.

    Args:
        query (Tensor): of shape ``(*, L, E)``.
        key (Tensor): of shape ``(*, S, E)``.
        value (Tensor): of shape ``(*, S, Ev)``.
        attn_mask (Tensor, optional): a boolean mask (``True`` = attend) or an
            additive float mask, broadcast to ``(*, L, S)``. Default: ``None``.
        dropout_p (float): dropout probability on the attention weights.
            Default: ``0.0``.
        is_causal (bool): mask out keys after each query position. Default:
            ``False``.
        scale (float, optional): the scale of the scores. Default: ``None``
            (``1 / sqrt(E)``).
        enable_gqa (bool): allow fewer key/value heads than query heads
            (grouped-query attention). Default: ``False``.

    Example:
        >>> q = k = v = ferrograd.ones(1, 2, 4)
        >>> F.scaled_dot_product_attention(q, k, v).shape
        ferrograd.Size([1, 2, 4])
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
        )
    length, source = query.shape[-2], key.shape[-2]
    scale_factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        heads = query.shape[-3]
        if heads % key.shape[-3] != 0:
            raise RuntimeError("number of query heads must be a multiple of the number of key/value heads")
        key = key.repeat_interleave(heads // key.shape[-3], dim=-3)
        value = value.repeat_interleave(heads // value.shape[-3], dim=-3)
    scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    if is_causal:
        allowed = _fg.ones(length, source, dtype=_fg.bool).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == _fg.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = scores.softmax(-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights.matmul(value)


# ---------------------------------------------------------------------------
# Further activations, dropouts, losses and layers
# ---------------------------------------------------------------------------


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
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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


_SELU_DROPOUT_ALPHA = 1.7580993408473766  # -SELU_SCALE * SELU_ALPHA, the negative saturation


def _alpha_dropout_impl(input: Tensor, p: float, noise_shape: Sequence[int], inplace: bool) -> Tensor:
    if p == 1.0:
        out = input * _fg.zeros((), dtype=input.dtype)
        return _apply_inplace(input, out) if inplace else out
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
        input (Tensor): the input tensor.
        p (float): the probability of an element being zeroed. Default: ``0.5``.
        training (bool): apply dropout; when ``False`` the input is returned
            unchanged. Default: ``False``.
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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
        input (Tensor): the input tensor.
        p (float): the probability of an element being zeroed. Default: ``0.5``.
        training (bool): apply dropout; when ``False`` the input is returned
            unchanged. Default: ``False``.
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.

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


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearranges ``(*, C r^2, H, W)`` into ``(*, C, H r, W r)``.

    Args:
        input (Tensor): the input tensor.
        upscale_factor (int): the factor ``r``:
            ``(*, C r^2, H, W) -> (*, C, H r, W r)``.

    Example:
        >>> F.pixel_shuffle(ferrograd.arange(4.0).reshape(1, 4, 1, 1), 2)
        tensor([[[[0., 1.],
                  [2., 3.]]]])
    """
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    r = upscale_factor
    c, h, w = input.shape[-3:]
    if c % (r * r) != 0:
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
            f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    lead = tuple(input.shape[:-3])
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Inverse of :func:`pixel_shuffle`: ``(*, C, H r, W r)`` into ``(*, C r^2, H, W)``.

    Args:
        input (Tensor): the input tensor.
        downscale_factor (int): the factor ``r``:
            ``(*, C, H r, W r) -> (*, C r^2, H, W)``.

    Example:
        >>> F.pixel_unshuffle(ferrograd.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
        tensor([0., 1., 2., 3.])
    """
    r = downscale_factor
    c, h, w = input.shape[-3:]
    if h % r != 0 or w % r != 0:
        raise RuntimeError(
            "pixel_unshuffle expects height and width to be divisible by downscale_factor, "
            f"but got {h} and {w}"
        )
    lead = tuple(input.shape[:-3])
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleaves the channels of ``groups`` groups: ``(N, g, C/g, *) -> (N, C/g, g, *)``.

    Args:
        input (Tensor): the input tensor.
        groups (int): the number of groups the channels are split into.

    Example:
        >>> F.channel_shuffle(ferrograd.arange(4.0).reshape(1, 4, 1, 1), 2).flatten()
        tensor([0., 2., 1., 3.])
    """
    n, c = input.shape[0], input.shape[1]
    if c % groups != 0:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    rest = tuple(input.shape[2:])
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(input.shape)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` where ``y == 1`` and ``max(0, cos(x1, x2) - margin)`` where ``y == -1``.

    Args:
        input1 (Tensor): the first inputs, ``(N, D)`` or ``(D,)``.
        input2 (Tensor): the second inputs, shaped like ``input1``.
        target (Tensor): ``1`` (similar) or ``-1`` (dissimilar) per pair.
        margin (float): the margin for dissimilar pairs, in ``[-1, 1]``.
            Default: ``0.0``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.cosine_embedding_loss(ferrograd.tensor([[1.0, 0.0]]), ferrograd.tensor([[0.0, 1.0]]),
        ...                         ferrograd.tensor([1.0]))
        tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    dim = input1.dim() - 1
    eps = 1e-12
    dot = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = dot / (mag1 * mag2).sqrt()
    zeros = _fg.zeros_like(cos)
    loss = _fg.where(target == 1, 1.0 - cos, zeros) + _fg.where(
        target == -1, (cos - margin).clamp_min(0.0), zeros
    )
    return _reduce(loss, reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm pairwise distance.

    Args:
        anchor (Tensor): the anchors, ``(N, D)`` or ``(D,)``.
        positive (Tensor): the positive examples.
        negative (Tensor): the negative examples.
        margin (float): the margin. Default: ``1.0``.
        p (float): the norm degree of the distance. Default: ``2``.
        eps (float): added to the differences, to avoid a zero norm. Default:
            ``1e-06``.
        swap (bool): use the positive-negative distance when it is smaller than
            the anchor-negative one. Default: ``False``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> a = ferrograd.tensor([[0.0, 0.0]])
        >>> F.triplet_margin_loss(a, a, ferrograd.tensor([[3.0, 4.0]]), margin=6.0, eps=0.0)
        tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _fg.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Any = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """:func:`triplet_margin_loss` with a custom ``distance_function`` (default pairwise L2).

    Args:
        anchor (Tensor): the anchors.
        positive (Tensor): the positive examples.
        negative (Tensor): the negative examples.

    Keyword args:
        distance_function (callable, optional): ``f(x1, x2)`` giving the
            distances. Default: :func:`pairwise_distance`.
        margin (float): the margin. Default: ``1.0``.
        swap (bool): use the positive-negative distance when it is smaller than
            the anchor-negative one. Default: ``False``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> a, p, n = ferrograd.tensor([[0.0]]), ferrograd.tensor([[2.0]]), ferrograd.tensor([[1.0]])
        >>> F.triplet_margin_with_distance_loss(a, p, n)  # max(2 - 1 + 1, 0)
        tensor(2.)
    """
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(
            f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
        )
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _fg.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log likelihood ``0.5 (log var + (x - y)^2 / var)`` (plus
    ``0.5 log 2 pi`` when ``full``); ``var`` is clamped below at ``eps`` for the value
    only, as torch does.

    Args:
        input (Tensor): the predicted means.
        target (Tensor): the samples.
        var (Tensor or float): the predicted variances (broadcast against
            ``input``).
        full (bool): add the constant ``0.5 log(2 pi)``. Default: ``False``.
        eps (float): lower clamp of ``var``. Default: ``1e-06``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.gaussian_nll_loss(ferrograd.tensor([1.0]), ferrograd.tensor([3.0]), ferrograd.tensor([2.0]))
        tensor(1.3466)
    """
    _check_reduction(reduction)
    if not isinstance(var, Tensor):
        var = _fg.full(tuple(input.shape), float(var), dtype=input.dtype)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # torch clamps a clone under no_grad: the value is clamped, the gradient is
    # the identity; adding a detached correction reproduces both.
    var = var + (var.clamp_min(eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target).square() / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Per-class logistic loss averaged over classes: ``-mean_c(y log s(x) + (1 - y) log s(-x))``.

    Args:
        input (Tensor): the logits, of shape ``(N, C)``.
        target (Tensor): ``0`` or ``1`` per class, shaped like ``input``.
        weight (Tensor, optional): a weight per class. Default: ``None``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.multilabel_soft_margin_loss(ferrograd.tensor([[0.0, 0.0]]), ferrograd.tensor([[1.0, 0.0]]))
        tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge: ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``.

    Args:
        input (Tensor): the scores, of shape ``(N, C)`` or ``(C,)``.
        target (Tensor): the class indices.
        p (int): ``1`` or ``2``: the power of each hinge term. Default: ``1``.
        margin (float): the margin. Default: ``1.0``.
        weight (Tensor, optional): a manual rescaling weight per class (shape
            ``(C,)``). Default: ``None``.
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.

    Example:
        >>> F.multi_margin_loss(ferrograd.tensor([[0.1, 0.2, 0.4, 0.8]]), ferrograd.tensor([3]))
        tensor(0.3250)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    y = target.reshape(-1)
    c = x.shape[1]
    picked = x.gather(1, y.unsqueeze(1))
    hinge = (margin - picked + x).clamp_min(0.0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight.index_select(0, y).unsqueeze(1)
    own = _fg.zeros(x.shape, dtype=_fg.bool).scatter_(1, y.unsqueeze(1), True)
    loss = hinge.masked_fill(own, 0.0).sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)


def _lp_poolnd(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool, nd: int
) -> Tensor:
    kernel = _tuple(kernel_size, nd, "kernel_size")
    pool = avg_pool1d if nd == 1 else avg_pool2d
    out = pool(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(kernel)).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling ``(sum x^p)^(1/p)`` over 1-D windows.

    Args:
        input (Tensor): the input tensor.
        norm_type (float): the ``p`` of the power-average: ``(sum x^p)^(1/p)``.
        kernel_size (int): the window size.
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.

    Example:
        >>> F.lp_pool1d(ferrograd.tensor([[[3.0, 4.0, 0.0, 1.0]]]), 2, 2)
        tensor([[[5., 1.]]])
    """
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    """Power-average pooling ``(sum x^p)^(1/p)`` over 2-D windows.

    Args:
        input (Tensor): the input tensor.
        norm_type (float): the ``p`` of the power-average: ``(sum x^p)^(1/p)``.
        kernel_size (int or tuple of ints): the size of the window.
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.

    Example:
        >>> F.lp_pool2d(ferrograd.full((1, 1, 2, 2), 2.0), 2, 2)
        tensor([[[[4.]]]])
    """
    return _lp_poolnd(input, norm_type, kernel_size, stride, ceil_mode, 2)


def _max_unpoolnd(
    input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any, output_size: Any, nd: int
) -> Tensor:
    kernel, stride_t, padding_t, _ = _pool_args(kernel_size, stride, padding, 1, nd)
    spatial = tuple(input.shape[input.dim() - nd :])
    default = [(spatial[i] - 1) * stride_t[i] - 2 * padding_t[i] + kernel[i] for i in range(nd)]
    if output_size is None:
        sizes = default
    else:
        sizes = [int(s) for s in output_size][-nd:]
    lead = tuple(input.shape[: input.dim() - nd])
    flat_in = input.reshape(*lead, -1)
    flat_idx = indices.reshape(*lead, -1)
    plane = math.prod(sizes)
    if flat_idx.numel() > 0 and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= plane):
        raise RuntimeError(
            f"Found an invalid max index: {int(flat_idx.max())} "
            f"(output volumes are of size {'x'.join(map(str, sizes))}"
        )
    out = _fg.zeros(*lead, plane, dtype=input.dtype).scatter(-1, flat_idx, flat_in)
    return out.reshape(*lead, *sizes)


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """Partial inverse of :func:`max_pool1d`: places values at ``indices``, zeros elsewhere.

    Args:
        input (Tensor): the input tensor.
        indices (Tensor): the indices returned by the max pooling.
        kernel_size (int or tuple of ints): the window size of the max pooling.
        stride (int or tuple of ints, optional): its stride. Default:
            ``kernel_size``.
        padding (int or tuple of ints): its padding. Default: ``0``.
        output_size (tuple of ints, optional): the exact output size, when the
            pooling's input size is ambiguous. Default: computed from the other
            arguments.

    Example:
        >>> v, i = F.max_pool1d(ferrograd.tensor([[[1.0, 3.0, 4.0, 2.0]]]), 2, return_indices=True)
        >>> F.max_unpool1d(v, i, 2)
        tensor([[[0., 3., 4., 0.]]])
    """
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    output_size: Any = None,
) -> Tensor:
    """Partial inverse of :func:`max_pool2d`: puts each value of ``input`` at the position
    ``indices`` recorded for it and fills the rest of the output with zeros.

    Args:
        input (Tensor): the input tensor.
        indices (Tensor): the indices returned by the max pooling.
        kernel_size (int or tuple of ints): the window size of the max pooling.
        stride (int or tuple of ints, optional): its stride. Default:
            ``kernel_size``.
        padding (int or tuple of ints): its padding. Default: ``0``.
        output_size (tuple of ints, optional): the exact output size, when the
            pooling's input size is ambiguous. Default: computed from the other
            arguments.

    Example:
        >>> v, i = F.max_pool2d(ferrograd.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
        >>> F.max_unpool2d(v, i, 2)[0, 0, 1]
        tensor([0., 5., 0., 7.])
    """
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 2)


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    output_padding: Any = 0,
    groups: int = 1,
    dilation: Any = 1,
) -> Tensor:
    """3-D transposed convolution over ``(N, C_in, D, H, W)``: the gradient of
    :func:`conv3d` with respect to its input; ``weight`` is ``(C_in, C_out / groups, kD, kH, kW)``.

    Args:
        input (Tensor): the input tensor.
        weight (Tensor): the filters, of shape
            ``(C_in, C_out / groups, *kernel)``.
        bias (Tensor, optional): added to every output channel, of shape
            ``(C_out,)``. Default: ``None``.
        stride (int or tuple of ints): the stride of the (forward) convolution
            this op transposes. Default: ``1``.
        padding (int or tuple of ints): ``dilation * (k - 1) - padding`` zeros
            are added on both sides of each dim. Default: ``0``.
        output_padding (int or tuple of ints): extra size added to one side of
            each output dim, to pick among the sizes a strided convolution maps
            to the same input size. Default: ``0``.
        groups (int): split the input channels into this many groups, each
            convolved with its own filters. Default: ``1``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.

    Example:
        >>> F.conv_transpose3d(ferrograd.ones(1, 1, 2, 2, 2), ferrograd.ones(1, 1, 2, 2, 2)).shape
        ferrograd.Size([1, 1, 3, 3, 3])
    """
    return _conv_transposend(
        input, weight, bias, stride, padding, output_padding, groups, dilation, 3, "conv_transpose3d"
    )


def max_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """3-D max pooling over ``(N, C, D, H, W)``.

    Args:
        input (Tensor): the input tensor.
        kernel_size (int or tuple of ints): the size of the window.
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.
        return_indices (bool): also return the flat index of each maximum.
            Default: ``False``.

    Example:
        >>> F.max_pool3d(ferrograd.arange(8.0).reshape(1, 1, 2, 2, 2), 2)
        tensor([[[[[7.]]]]])
    """
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def avg_pool3d(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """3-D average pooling over ``(N, C, D, H, W)``.

    Args:
        input (Tensor): the input tensor.
        kernel_size (int or tuple of ints): the size of the window.
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.
        count_include_pad (bool): count the zero padding in the divisor of each
            average. Default: ``True``.
        divisor_override (int, optional): divide every window by this number
            instead of its size. Default: ``None``.

    Example:
        >>> F.avg_pool3d(ferrograd.ones(1, 1, 4, 4, 4), 2).shape
        ferrograd.Size([1, 1, 2, 2, 2])
    """
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """3-D adaptive average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``: the
    windows are chosen so the output has ``output_size`` positions per dim, as in
    :func:`adaptive_avg_pool2d`.

    Args:
        input (Tensor): the input tensor.
        output_size (int or tuple of ints): the spatial size of the output
            (``None`` in a tuple keeps that input size).

    Example:
        >>> F.adaptive_avg_pool3d(ferrograd.ones(1, 1, 4, 4, 4), 2).shape
        ferrograd.Size([1, 1, 2, 2, 2])
    """
    return _adaptive_avg_poolnd(input, output_size, 3)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """3-D adaptive max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``, with the
    windows of :func:`adaptive_avg_pool3d`.

    Args:
        input (Tensor): the input tensor.
        output_size (int or tuple of ints): the spatial size of the output
            (``None`` in a tuple keeps that input size).
        return_indices (bool): also return the flat index of each maximum.
            Default: ``False``.

    Example:
        >>> F.adaptive_max_pool3d(ferrograd.arange(8.0).reshape(1, 1, 2, 2, 2), 1)
        tensor([[[[[7.]]]]])
    """
    return _adaptive_max_poolnd(input, output_size, return_indices, 3)


from ferrograd._routed import route_module as _route_module  # noqa: E402

_route_module(globals(), __name__, "nn.functional.")
del _route_module
