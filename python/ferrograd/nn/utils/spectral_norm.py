"""Spectral normalization as a forward pre-hook (``nn.utils.spectral_norm``;
torch recommends :func:`ferrograd.nn.utils.parametrizations.spectral_norm`
for new code), and the pieces shared with the parametrization: the weight
seen as a matrix and the default dim."""

from __future__ import annotations

from typing import Any, TypeVar

import ferrograd
import ferrograd.nn.functional as F
from ferrograd._core import Tensor

from ..modules.module import Module
from ..parameter import Parameter
from ._pre_hooks import hook_key, pop_hook

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]

_M = TypeVar("_M", bound=Module)


def _weight_as_matrix(weight: Tensor, dim: int) -> Tensor:
    """``weight`` with dim ``dim`` moved first and the others flattened:
    the matrix whose largest singular value is the spectral norm."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.shape[0], -1)


def _default_dim(module: Module) -> int:
    """The output-channel dim: 1 for transposed convolutions (whose weight
    is ``(in, out, ...)``), 0 otherwise."""
    from ..modules.conv import _ConvTransposeNd

    return 1 if isinstance(module, _ConvTransposeNd) else 0


def _check_power_iterations(n_power_iterations: int) -> None:
    if n_power_iterations <= 0:
        raise ValueError(
            f"Expected n_power_iterations to be positive, but got n_power_iterations={n_power_iterations}"
        )


def _random_unit(n: int, like: Tensor, eps: float) -> Tensor:
    """A random unit vector of length ``n`` with ``like``'s dtype."""
    return F.normalize(ferrograd.empty(n, dtype=like.dtype).normal_(0, 1), dim=0, eps=eps)


class SpectralNorm:
    r"""The forward pre-hook of :func:`spectral_norm`: before each call it
    sets ``module.<name>`` to ``<name>_orig / sigma``, ``sigma`` being
    estimated by power iteration on the buffers ``<name>_u`` and
    ``<name>_v`` (updated only in training mode).

    Args:
        name (str): the normalized parameter. Default: ``"weight"``.
        n_power_iterations (int): power iterations per training call.
            Default: ``1``.
        dim (int): the output-channel dim. Default: ``0``.
        eps (float): added to norms when normalizing. Default: ``1e-12``.
    """

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        _check_power_iterations(n_power_iterations)
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        r"""``weight`` as a matrix: dim ``dim`` first, the others flattened.

        Args:
            weight (Tensor): the weight.
        """
        return _weight_as_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        r"""``<name>_orig / sigma`` with ``sigma = u^T W v``; first runs
        ``n_power_iterations`` steps updating ``u`` and ``v`` in place when
        ``do_power_iteration``.

        Args:
            module (nn.Module): the module holding the weight and buffers.
            do_power_iteration (bool): update ``u`` and ``v`` first.
        """
        weight: Tensor = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with ferrograd.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(ferrograd.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ferrograd.mv(weight_mat, v), dim=0, eps=self.eps))
            # The buffers change in place on the next call: the graph keeps
            # copies.
            u, v = u.clone(), v.clone()
        sigma = ferrograd.dot(u, ferrograd.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        r"""Turns ``module.<name>`` back into a parameter holding the current
        normalized weight (without a power iteration) and drops
        ``<name>_orig``, ``<name>_u`` and ``<name>_v``.

        Args:
            module (nn.Module): the module.
        """
        with ferrograd.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        r"""Moves parameter ``name`` to ``<name>_orig``, adds random unit
        buffers ``<name>_u`` and ``<name>_v`` and registers the hook;
        returns it.

        Args:
            module (nn.Module): the module.
            name (str): the parameter.
            n_power_iterations (int): power iterations per training call.
            dim (int): the output-channel dim.
            eps (float): added to norms when normalizing.
        """
        if hook_key(module, SpectralNorm, name) is not None:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with ferrograd.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u, v = _random_unit(h, weight, fn.eps), _random_unit(w, weight, fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        # Until the first call, module.<name> is the unnormalized value.
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(
    module: _M, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim: int | None = None
) -> _M:
    r"""Divides parameter ``name`` of ``module`` by its spectral norm (its
    largest singular value, the weight seen as a matrix with dim ``dim``
    as rows), estimated by power iteration.

    The parameter moves to ``<name>_orig``; the buffers ``<name>_u`` and
    ``<name>_v`` hold the current estimates of the singular vectors. Before
    each call a forward pre-hook sets ``module.<name> = <name>_orig /
    sigma``, running ``n_power_iterations`` steps first in training mode
    only (in eval mode ``u`` and ``v`` stay as they are).

    Args:
        module (nn.Module): the module.
        name (str): the parameter. Default: ``"weight"``.
        n_power_iterations (int): power iterations per training call.
            Default: ``1``.
        eps (float): added to norms when normalizing. Default: ``1e-12``.
        dim (int, optional): the output-channel dim. Default: ``None``
            (``1`` for transposed convolutions, ``0`` otherwise).

    Returns:
        ``module``.

    Example:
        >>> m = nn.utils.spectral_norm(nn.Linear(4, 3))
        >>> sorted(m.state_dict())
        ['bias', 'weight_orig', 'weight_u', 'weight_v']
        >>> m.weight_u.shape, m.weight_v.shape
        (ferrograd.Size([3]), ferrograd.Size([4]))
    """
    if dim is None:
        dim = _default_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: _M, name: str = "weight") -> _M:
    r"""Undoes :func:`spectral_norm` (``ValueError`` where there is none):
    ``module.<name>`` becomes a parameter again, holding the current
    normalized weight, and ``module`` is returned.

    Args:
        module (nn.Module): the module.
        name (str): the normalized parameter. Default: ``"weight"``.

    Example:
        >>> m = nn.utils.remove_spectral_norm(nn.utils.spectral_norm(nn.Linear(2, 2)))
        >>> sorted(m.state_dict())
        ['bias', 'weight']
    """
    pop_hook(module, SpectralNorm, name, f"spectral_norm of '{name}' not found in {module}").remove(module)
    return module
