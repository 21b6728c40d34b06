"""Activation layers and :class:`MultiheadAttention`.

Each activation is a thin module over its ``ferrograd.nn.functional`` form;
``MultiheadAttention`` calls ``F.multi_head_attention_forward`` with its
parameters.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from .._docs import fill_docs as _fill_docs
from ..functional._attention import _canonical_mask as _canonical_mask
from ..functional._attention import _mha_is_batched
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear, _factory
from .module import Module

__all__ = [
    "CELU", "ELU", "GELU", "GLU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
    "LogSoftmax", "Mish", "MultiheadAttention", "PReLU", "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid",
    "Softmax", "Softmin", "Softplus", "Softsign", "Tanh", "Threshold",
]


def _inplace_repr(inplace: bool, settings: str = "") -> str:
    """``settings`` (an activation's repr), then ``inplace=True`` when ``inplace``."""
    if not inplace:
        return settings
    return f"{settings}, inplace=True" if settings else "inplace=True"


class _Applies(Module):
    """An activation module: ``forward`` applies ``_function`` to the input and
    the settings named in ``_args`` (in the function's argument order). The repr
    shows the settings named in ``_shown`` (``_args`` by default) as torch
    prints them, ``inplace=True`` last."""

    _function: Callable[..., Tensor]
    _args: tuple[str, ...] = ()
    _shown: tuple[str, ...] | None = None

    def forward(self, input: Tensor) -> Tensor:
        """Applies this module's function with its settings."""
        # Every call of an activation runs this: the common arities avoid
        # building an argument list.
        args = self._args
        if not args:
            return self._function(input)
        if len(args) == 1:
            return self._function(input, getattr(self, args[0]))
        return self._function(input, *[getattr(self, a) for a in args])

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        shown = self._args if self._shown is None else self._shown
        values = {a: getattr(self, a) for a in shown if a != "inplace"}
        settings = ", ".join(f"{a}={v!r}" if isinstance(v, str) else f"{a}={v}" for a, v in values.items())
        return _inplace_repr("inplace" in shown and self.inplace, settings)


class _AlongDim(Module):
    """Softmax, Softmin and LogSoftmax: ``_function`` along ``dim``."""

    __constants__ = ["dim"]
    _function: Callable[..., Tensor]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:
        """Applies this module's function along ``dim``."""
        return self._function(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"dim={self.dim}"


class Threshold(_Applies):
    r"""``y = x if x > threshold else value``.

    Args:
        threshold (float): the value to compare against.
        value (float): the replacement for elements not above ``threshold``.
        {inplace_layer_arg}

    {elementwise_shape}

    Example:
        >>> nn.Threshold(0.1, 20.0)(ferrograd.tensor([0.0, 0.5]))
        tensor([20.0000,  0.5000])
    """

    _function = staticmethod(F.threshold)
    _args = ("threshold", "value", "inplace")

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace


class ReLU(_Applies):
    r"""``max(0, x)`` elementwise.

    {inplace_layer_args}

    Example:
        >>> nn.ReLU()(ferrograd.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """

    _function = staticmethod(F.relu)
    _args = ("inplace",)

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardtanh(_Applies):
    r"""Clamps to ``[min_val, max_val]``.

    Args:
        min_val (float): the lower bound. Default: -1.0.
        max_val (float): the upper bound. Default: 1.0.
        {inplace_layer_arg}
        min_value, max_value: deprecated names of ``min_val`` and ``max_val``.

    {elementwise_shape}

    Example:
        >>> nn.Hardtanh(-2, 2)(ferrograd.tensor([-3.0, 1.0, 3.0]))
        tensor([-2.,  1.,  2.])
    """

    _function = staticmethod(F.hardtanh)
    _args = ("min_val", "max_val", "inplace")

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and rename to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and rename to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")


class ReLU6(Hardtanh):
    r"""``min(max(0, x), 6)``.

    {inplace_layer_args}

    Example:
        >>> nn.ReLU6()(ferrograd.tensor([-1.0, 7.0]))
        tensor([0., 6.])
    """

    _shown = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)


class Sigmoid(_Applies):
    r"""``1 / (1 + exp(-x))``.

    Example:
        >>> nn.Sigmoid()(ferrograd.tensor([0.0]))
        tensor([0.5000])
    """

    _function = staticmethod(F.sigmoid)
    _args = ()


class Hardsigmoid(_Applies):
    r"""``relu6(x + 3) / 6``.

    {inplace_layer_args}

    Example:
        >>> nn.Hardsigmoid()(ferrograd.tensor([0.0, 3.0]))
        tensor([0.5000, 1.0000])
    """

    _function = staticmethod(F.hardsigmoid)
    _args = ("inplace",)
    _shown = ()

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Tanh(_Applies):
    r"""Hyperbolic tangent.

    Example:
        >>> nn.Tanh()(ferrograd.tensor([0.0]))
        tensor([0.])
    """

    _function = staticmethod(F.tanh)
    _args = ()


class SiLU(_Applies):
    r"""``x * sigmoid(x)`` (swish).

    {inplace_layer_args}

    Example:
        >>> nn.SiLU()(ferrograd.tensor([0.0]))
        tensor([0.])
    """

    _function = staticmethod(F.silu)
    _args = ("inplace",)

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Mish(_Applies):
    r"""``x * tanh(softplus(x))``.

    {inplace_layer_args}

    Example:
        >>> nn.Mish()(ferrograd.tensor([0.0]))
        tensor([0.])
    """

    _function = staticmethod(F.mish)
    _args = ("inplace",)

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardswish(_Applies):
    r"""``x * relu6(x + 3) / 6``.

    {inplace_layer_args}

    Example:
        >>> nn.Hardswish()(ferrograd.tensor([3.0]))
        tensor([3.])
    """

    _function = staticmethod(F.hardswish)
    _args = ("inplace",)
    _shown = ()

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class ELU(_Applies):
    r"""``x if x > 0 else alpha * (exp(x) - 1)``.

    Args:
        alpha (float): the scale of the negative part. Default: 1.0.
        {inplace_layer_arg}

    {elementwise_shape}

    Example:
        >>> nn.ELU()(ferrograd.tensor([1.0]))
        tensor([1.])
    """

    _function = staticmethod(F.elu)
    _args = ("alpha", "inplace")

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace


class CELU(_Applies):
    r"""``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        alpha (float): the scale of the negative part. Default: 1.0.
        {inplace_layer_arg}

    {elementwise_shape}

    Example:
        >>> nn.CELU()(ferrograd.tensor([1.0]))
        tensor([1.])
    """

    _function = staticmethod(F.celu)
    _args = ("alpha", "inplace")

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace


class SELU(_Applies):
    r"""``scale * elu(x, alpha)`` with the self-normalising constants.

    {inplace_layer_args}

    Example:
        >>> nn.SELU()(ferrograd.tensor([0.0]))
        tensor([0.])
    """

    _function = staticmethod(F.selu)
    _args = ("inplace",)

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class GLU(_Applies):
    r"""Gated linear unit: splits ``dim`` in halves ``a, b`` and returns ``a * sigmoid(b)``.

    Args:
        dim (int): the dim to split in halves (its size must be even). Default: -1.

    Shape:
        Input ``(*, 2n, *)``; output ``(*, n, *)``, halved along ``dim``.

    Example:
        >>> nn.GLU()(ferrograd.randn(4, 2)).shape
        ferrograd.Size([4, 1])
    """

    _function = staticmethod(F.glu)
    _args = ("dim",)

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim


class GELU(_Applies):
    r"""Gaussian error linear unit, exact (``approximate='none'``) or the tanh form.

    Args:
        approximate (str): ``'none'`` (the erf form) or ``'tanh'``. Default: ``'none'``.

    {elementwise_shape}

    Example:
        >>> nn.GELU()(ferrograd.tensor([0.0]))
        tensor([0.])
    """

    _function = staticmethod(F.gelu)
    _args = ("approximate",)

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate


class LeakyReLU(_Applies):
    r"""``x if x >= 0 else negative_slope * x``.

    Args:
        negative_slope (float): the slope for negative inputs. Default: 0.01.
        {inplace_layer_arg}

    {elementwise_shape}

    Example:
        >>> nn.LeakyReLU(0.1)(ferrograd.tensor([-1.0, 2.0]))
        tensor([-0.1000,  2.0000])
    """

    _function = staticmethod(F.leaky_relu)
    _args = ("negative_slope", "inplace")

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace


class LogSigmoid(_Applies):
    r"""``log(sigmoid(x))``, computed stably.

    Example:
        >>> nn.LogSigmoid()(ferrograd.tensor([0.0]))
        tensor([-0.6931])
    """

    _function = staticmethod(F.logsigmoid)
    _args = ()


class Softplus(_Applies):
    r"""``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    Args:
        beta (float): the sharpness. Default: 1.0.
        threshold (float): above ``beta * x > threshold`` the output is ``x``. Default: 20.0.

    {elementwise_shape}

    Example:
        >>> nn.Softplus()(ferrograd.tensor([0.0]))
        tensor([0.6931])
    """

    _function = staticmethod(F.softplus)
    _args = ("beta", "threshold")

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold


class Softsign(_Applies):
    r"""``x / (1 + |x|)``.

    Example:
        >>> nn.Softsign()(ferrograd.tensor([1.0]))
        tensor([0.5000])
    """

    _function = staticmethod(F.softsign)
    _args = ()


class PReLU(Module):
    r"""``x if x > 0 else a * x`` with a learnt slope ``a``: one shared value, or one
    per channel (dimension 1 of the input) when ``num_parameters`` is the channel count.

    Args:
        num_parameters (int): 1 (a shared slope) or the number of channels. Default: 1.
        init (float): the initial slope. Default: 0.25.
        device, dtype: of the ``weight`` parameter.

    Shape:
        Input ``(N, C, *)`` or ``(C,)``-led; output of the same shape.

    Example:
        >>> m = nn.PReLU(3, init=0.5)
        >>> m(-ferrograd.ones(1, 3)).detach()
        tensor([[-0.5000, -0.5000, -0.5000]])
    """

    __constants__ = ["num_parameters"]

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_fg.empty(num_parameters, **_factory(device, dtype)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Sets every slope in ``weight`` back to ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        """``max(0, x) + a * min(0, x)`` with this module's slopes ``a`` (per channel or shared)."""
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"num_parameters={self.num_parameters}"


class Softmin(_AlongDim):
    r"""``softmax(-x)`` along ``dim``.

    {softmax_layer_args}

    Example:
        >>> nn.Softmin(dim=0)(ferrograd.tensor([0.0, 0.0]))
        tensor([0.5000, 0.5000])
    """

    _function = staticmethod(F.softmin)


class Softmax(_AlongDim):
    r"""``exp(x) / sum(exp(x))`` along ``dim``.

    {softmax_layer_args}

    Example:
        >>> nn.Softmax(dim=1)(ferrograd.zeros(1, 4))
        tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """

    _function = staticmethod(F.softmax)


class LogSoftmax(_AlongDim):
    r"""``log(softmax(x))`` along ``dim``, computed stably.

    Args:
        dim (int): the dim to normalise along.

    {elementwise_shape}

    Example:
        >>> nn.LogSoftmax(dim=0)(ferrograd.zeros(2))
        tensor([-0.6931, -0.6931])
    """

    _function = staticmethod(F.log_softmax)


class MultiheadAttention(Module):
    r"""Multi-head attention: ``concat(head_1, ..., head_h) W_o`` with
    ``head_i = softmax(Q_i K_i^T / sqrt(d) + mask) V_i``.

    Inputs are ``(L, N, E)`` (``(N, L, E)`` with ``batch_first=True``) or
    unbatched ``(L, E)``. Boolean masks mark positions that may *not* be
    attended (``True`` = ignore); float masks are added to the scores.
    Returns ``(attn_output, attn_weights)``; the weights are averaged over the
    heads unless ``average_attn_weights=False``, and ``None`` when
    ``need_weights=False``.

    Parameters follow torch's names: ``in_proj_weight`` ``(3E, E)`` (or
    ``q_proj_weight``/``k_proj_weight``/``v_proj_weight`` when ``kdim`` or
    ``vdim`` differ from ``embed_dim``), ``in_proj_bias`` ``(3E,)``, and
    ``out_proj`` (a ``Linear``); ``bias_k``/``bias_v`` with ``add_bias_kv``.

    Args:
        embed_dim (int): the model dim (of ``query`` and the output).
        num_heads (int): the number of heads; must divide ``embed_dim``.
        dropout (float): dropout on the attention weights while training. Default: 0.0.
        bias (bool): add biases to the projections. Default: True.
        add_bias_kv (bool): append a learnt bias to the keys and values. Default: False.
        add_zero_attn (bool): append a zero key/value to attend to. Default: False.
        kdim, vdim (int, optional): the dims of ``key`` and ``value``. Default: ``embed_dim``.
        batch_first (bool): inputs are ``(N, L, E)`` instead of ``(L, N, E)``. Default: False.
        device, dtype: of the parameters.

    Shape:
        query ``(L, N, E)`` (or ``(N, L, E)`` with ``batch_first``, or ``(L, E)``
        unbatched); key and value ``(S, N, kdim)`` and ``(S, N, vdim)``; output like
        ``query``; weights ``(N, L, S)`` averaged over heads.

    Example:
        >>> mha = nn.MultiheadAttention(8, 2, batch_first=True)
        >>> x = ferrograd.randn(3, 5, 8)
        >>> out, weights = mha(x, x, x)
        >>> out.shape, weights.shape
        (ferrograd.Size([3, 5, 8]), ferrograd.Size([3, 5, 5]))
    """

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        kw = _factory(device, dtype)
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        # Registration order fixes the state_dict order; the random draws happen
        # in out_proj's constructor and then in _reset_parameters, as torch's.
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_fg.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(_fg.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(_fg.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_fg.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_fg.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(
            embed_dim, embed_dim, bias=bias, device=device, dtype=dtype
        )
        if add_bias_kv:
            self.bias_k = Parameter(_fg.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(_fg.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | Any]:  # weights: None if need_weights=False (the Any trick)
        """Attends from ``query`` to ``key`` and ``value``; returns ``(output, weights)``.

        ``weights`` is None unless ``need_weights`` is True.
        """
        is_batched = _mha_is_batched(query, key, value, key_padding_mask, attn_mask, self.num_heads)
        if self.batch_first and is_batched:
            if query is key and key is value:
                # Self-attention stays recognisable to the packed projection.
                query = key = value = query.transpose(1, 0)
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight,
            self.out_proj.bias, training=self.training, key_padding_mask=key_padding_mask,
            need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights


_fill_docs(globals())
