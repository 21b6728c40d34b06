"""Weight normalization as a forward pre-hook (``nn.utils.weight_norm``,
deprecated in torch in favour of
:func:`ferrograd.nn.utils.parametrizations.weight_norm`), and the norm it
divides by, shared with the parametrization."""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

import ferrograd
from ferrograd._core import Tensor

from ..modules.module import Module
from ..parameter import Parameter
from ._pre_hooks import hook_key, pop_hook

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]

_M = TypeVar("_M", bound=Module)


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dim but ``dim``, kept as size-1 dims
    (the shape ``g`` has); ``dim=-1`` means the norm of the whole tensor
    (a 0-dim result), as torch's ``norm_except_dim``."""
    if dim == -1:
        return ferrograd.linalg.vector_norm(v)
    keep = _check_dim(dim, v.dim())
    others = [d for d in range(v.dim()) if d != keep]
    if not others:
        return v.abs()
    return ferrograd.linalg.vector_norm(v, dim=others, keepdim=True)


def _check_dim(dim: int, ndim: int) -> int:
    """``dim`` made non-negative, or ``IndexError`` when it is not a dim of
    a tensor with ``ndim`` dims."""
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], "
            f"but got {dim})"
        )
    return dim % max(ndim, 1)


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``g * v / ||v||``, the norm taken over every dim but ``dim`` (over
    all of ``v`` when ``dim=-1``)."""
    return v * (g / _norm_except_dim(v, dim))


class WeightNorm:
    r"""The forward pre-hook of :func:`weight_norm`: before each call it
    recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``.

    Args:
        name (str): the name of the normalized parameter.
        dim (int): the dim the norm is not taken over; ``-1`` (what ``None``
            becomes) takes the norm of the whole tensor.
    """

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Tensor:
        r"""``g * v / ||v||`` from the module's ``<name>_g`` and ``<name>_v``.

        Args:
            module (nn.Module): the module holding the two parameters.
        """
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        r"""Replaces parameter ``name`` of ``module`` by ``<name>_g`` and
        ``<name>_v`` and registers the hook; returns it.

        Args:
            module (nn.Module): the module.
            name (str): the parameter to normalize.
            dim (int or None): as in :func:`weight_norm`.
        """
        if hook_key(module, WeightNorm, name) is not None:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, -1 if dim is None else dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        r"""Turns ``module.<name>`` back into one parameter holding the
        current normalized value and drops ``<name>_g`` and ``<name>_v``.

        Args:
            module (nn.Module): the module.
        """
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: _M, name: str = "weight", dim: int | None = 0) -> _M:
    r"""Splits parameter ``name`` of ``module`` into a magnitude
    ``<name>_g`` and a direction ``<name>_v``, with
    ``weight = g * v / ||v||``.

    The norm is taken over every dim but ``dim`` (``g`` has size 1 in
    those dims); ``dim=None`` takes it over the whole tensor (``g`` is a
    scalar). A forward pre-hook recomputes ``module.<name>`` before each
    call. Deprecated (``FutureWarning``), as in torch: prefer
    :func:`ferrograd.nn.utils.parametrizations.weight_norm`.

    Args:
        module (nn.Module): the module.
        name (str): the parameter to normalize. Default: ``"weight"``.
        dim (int, optional): the dim the norm is not taken over.
            Default: ``0`` (one norm per output row of a ``Linear``).

    Returns:
        ``module``.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = nn.utils.weight_norm(nn.Linear(3, 2))
        >>> m.weight_g.shape, m.weight_v.shape
        (ferrograd.Size([2, 1]), ferrograd.Size([2, 3]))
    """
    warnings.warn(
        "`torch.nn.utils.weight_norm` is deprecated in favor of "
        "`torch.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: _M, name: str = "weight") -> _M:
    r"""Undoes :func:`weight_norm`: ``module.<name>`` becomes a parameter
    again, holding the current ``g * v / ||v||``.

    Args:
        module (nn.Module): the module.
        name (str): the normalized parameter. Default: ``"weight"``.

    Returns:
        ``module``.

    Raises:
        ValueError: ``name`` has no weight norm.
    """
    pop_hook(module, WeightNorm, name, f"weight_norm of '{name}' not found in {module}").remove(module)
    return module
