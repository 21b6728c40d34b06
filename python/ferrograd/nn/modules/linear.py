"""Affine layers: ``Identity``, ``Linear``, ``Bilinear`` and ``LazyLinear``."""

from __future__ import annotations

import math
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]


def _factory(device: Any, dtype: Any) -> dict[str, Any]:
    """Keyword arguments for ``ferrograd.empty``; device is checked there (CPU only)."""
    kwargs: dict[str, Any] = {}
    if device is not None:
        kwargs["device"] = device
    if dtype is not None:
        kwargs["dtype"] = dtype
    return kwargs


def _new_parameters(module: Module, kw: dict[str, Any], **shapes: Any) -> None:
    """Gives ``module`` an uninitialised parameter of each shape in ``shapes``,
    in order, by name; a shape of None registers that parameter as None."""
    for name, shape in shapes.items():
        if shape is None:
            module.register_parameter(name, None)
        else:
            setattr(module, name, Parameter(_fg.empty(shape, **kw)))


class Identity(Module):
    r"""Returns its input unchanged; any constructor arguments are ignored.

    Example:
        >>> nn.Identity(54, unused="x")(ferrograd.ones(2)).shape
        ferrograd.Size([2])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        """Returns ``input`` unchanged."""
        return input


class Linear(Module):
    r"""Applies ``y = x A^T + b``.

    ``weight`` has shape ``(out_features, in_features)`` and ``bias`` shape
    ``(out_features,)``; both start as ``U(-1/sqrt(in_features), 1/sqrt(in_features))``.

    Args:
        in_features (int): the size of each input's last dim.
        out_features (int): the size of each output's last dim.
        bias (bool): learn an additive bias. Default: True.
        device, dtype: of the parameters.

    Shape:
        Input ``(*, in_features)``; output ``(*, out_features)``.

    Example:
        >>> m = nn.Linear(20, 30)
        >>> m(ferrograd.randn(128, 20)).shape
        ferrograd.Size([128, 30])
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.in_features = in_features
        self.out_features = out_features
        _new_parameters(self, kw, weight=(out_features, in_features), bias=out_features if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` and ``bias`` from ``U(-k, k)`` with ``k = 1/sqrt(in_features)``."""
        # kaiming_uniform_ with a = sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.linear` with this module's settings."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """The ``out_proj`` of :class:`MultiheadAttention` (a plain ``Linear``; the
    name is kept so printed models read as torch's)."""


class Bilinear(Module):
    r"""Applies ``y_k = x1^T A_k x2 + b_k``.

    ``weight`` has shape ``(out_features, in1_features, in2_features)``;
    weight and bias start as ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``.

    Args:
        in1_features (int): the last dim of the first input.
        in2_features (int): the last dim of the second input.
        out_features (int): the last dim of the output.
        bias (bool): learn an additive bias. Default: True.
        device, dtype: of the parameters.

    Shape:
        Inputs ``(*, in1_features)`` and ``(*, in2_features)``; output ``(*, out_features)``.

    Example:
        >>> m = nn.Bilinear(20, 30, 40)
        >>> m(ferrograd.randn(128, 20), ferrograd.randn(128, 30)).shape
        ferrograd.Size([128, 40])
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        _new_parameters(self, kw, weight=shape, bias=out_features if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` and ``bias`` from ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.bilinear` with this module's settings."""
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class LazyLinear(Linear):
    r"""A :class:`Linear` whose ``in_features`` is read from the first input.

    Until the first call ``weight`` and ``bias`` are empty placeholders; the
    first forward sizes them, initialises them as ``Linear`` does and turns
    the module into a plain ``Linear``.

    Args:
        out_features (int): the size of each output's last dim.
        bias (bool): learn an additive bias. Default: True.
        device, dtype: of the parameters.

    Example:
        >>> m = nn.LazyLinear(3)
        >>> m(ferrograd.ones(2, 5)).shape
        ferrograd.Size([2, 3])
        >>> m.weight.shape
        ferrograd.Size([3, 5])
    """

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        # Build a 0-input Linear without drawing random numbers, then mark it lazy.
        Module.__init__(self)
        self._factory_kwargs = _factory(device, dtype)
        self.in_features = 0
        self.out_features = out_features
        _new_parameters(self, self._factory_kwargs, weight=(out_features, 0),
                        bias=out_features if bias else None)

    def reset_parameters(self) -> None:
        """Initialises the parameters as :class:`Linear` does, once ``in_features`` is known."""
        if self.in_features != 0:
            super().reset_parameters()

    def forward(self, input: Tensor) -> Tensor:
        """Creates the parameters on the first call (from ``input.shape[-1]``), then applies them."""
        if type(self) is LazyLinear:
            self.in_features = input.shape[-1]
            with _fg.no_grad():
                self.weight = Parameter(
                    _fg.empty((self.out_features, self.in_features), **self._factory_kwargs)
                )
                if self.bias is not None:
                    self.bias = Parameter(_fg.empty(self.out_features, **self._factory_kwargs))
            self.reset_parameters()
            self.__class__ = Linear
        return F.linear(input, self.weight, self.bias)
