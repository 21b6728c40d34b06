"""Normalisation layers over features: ``LayerNorm``, ``GroupNorm``, ``RMSNorm``
and ``LocalResponseNorm``."""

from __future__ import annotations

from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .batchnorm import _affine_parameters, _reset_affine
from .linear import _factory
from .module import Module

__all__ = ["GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


def _shape_tuple(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(normalized_shape)


class LocalResponseNorm(Module):
    r"""Divides each channel by ``(k + alpha / size * sum of squares of the
    ``size`` neighbouring channels) ** beta``.

    Args:
        size (int): the number of neighbouring channels.
        alpha (float): the scale. Default: 1e-4.
        beta (float): the exponent. Default: 0.75.
        k (float): the additive constant. Default: 1.0.

    Shape:
        Input ``(N, C, *)``; output of the same shape.

    Example:
        >>> nn.LocalResponseNorm(2)(ferrograd.randn(32, 5, 24, 24)).shape
        ferrograd.Size([32, 5, 24, 24])
    """

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.local_response_norm` with this module's settings."""
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LayerNorm(Module):
    r"""Normalises over the trailing ``normalized_shape`` dimensions (mean 0,
    biased variance 1), then applies an elementwise ``weight`` and ``bias`` of
    that shape (initialised to ones and zeros).

    Args:
        normalized_shape (int or tuple of ints): the trailing dims to normalise over.
        eps (float): added to the variance. Default: 1e-5.
        elementwise_affine (bool): learn a ``weight`` (and ``bias``) of shape
            ``normalized_shape``. Default: True.
        bias (bool): learn the ``bias`` too. Default: True.
        device, dtype: of the parameters.

    Shape:
        Input ``(*, *normalized_shape)``; output of the same shape.

    Example:
        >>> m = nn.LayerNorm(4)
        >>> m(ferrograd.tensor([[1.0, 2.0, 3.0, 4.0]])).detach()
        tensor([[-1.3416, -0.4472,  0.4472,  1.3416]])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, kw, self.normalized_shape, elementwise_affine, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Sets ``weight`` to ones and ``bias`` to zeros (when present)."""
        _reset_affine(self.elementwise_affine, self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.layer_norm` with this module's settings."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


class GroupNorm(Module):
    r"""Splits the channels (dimension 1) into ``num_groups`` groups and normalises
    each group per sample, then applies a per-channel affine.

    Args:
        num_groups (int): the number of groups; must divide ``num_channels``.
        num_channels (int): the size of dim 1.
        eps (float): added to the variance. Default: 1e-5.
        affine (bool): learn a per-channel ``weight`` and ``bias``. Default: True.
        device, dtype: of the parameters.
        bias (bool): learn the ``bias`` too. Default: True.

    Shape:
        Input ``(N, C, *)``; output of the same shape.

    Example:
        >>> m = nn.GroupNorm(3, 6)
        >>> m(ferrograd.randn(20, 6, 10, 10)).shape
        ferrograd.Size([20, 6, 10, 10])
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        kw = _factory(device, dtype)
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, kw, num_channels, affine, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Sets ``weight`` to ones and ``bias`` to zeros (when present)."""
        _reset_affine(self.affine, self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.group_norm` with this module's settings."""
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class RMSNorm(Module):
    r"""Divides by the root mean square over ``normalized_shape`` and scales by
    ``weight``; ``eps=None`` uses the input dtype's machine epsilon.

    Args:
        normalized_shape (int or tuple of ints): the trailing dims to normalise over.
        eps (float, optional): added to the mean square. Default: the dtype's machine epsilon.
        elementwise_affine (bool): learn a ``weight`` of shape ``normalized_shape``. Default: True.
        device, dtype: of the parameters.

    Shape:
        Input ``(*, *normalized_shape)``; output of the same shape.

    Example:
        >>> m = nn.RMSNorm(2)
        >>> m(ferrograd.tensor([[3.0, 4.0]])).detach()
        tensor([[0.8485, 1.1314]])
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float | None = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_fg.empty(self.normalized_shape, **_factory(device, dtype)))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Sets ``weight`` to ones (when present)."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        """Applies :func:`ferrograd.nn.functional.rms_norm` with this module's settings."""
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
