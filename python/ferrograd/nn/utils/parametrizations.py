"""``ferrograd.nn.utils.parametrizations``: ``orthogonal``, ``weight_norm``
and ``spectral_norm`` written as parametrizations
(:mod:`ferrograd.nn.utils.parametrize`)."""

from __future__ import annotations

from enum import Enum, auto
from typing import Any, TypeVar

import ferrograd
import ferrograd.nn.functional as F
from ferrograd._core import Tensor

from ..modules.module import Module, _add_hook
from . import parametrize
from .spectral_norm import _check_power_iterations, _default_dim, _random_unit, _weight_as_matrix
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

_M = TypeVar("_M", bound=Module)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(Q: Tensor) -> bool:
    """Whether the columns of ``Q`` (..., n, k) are orthonormal, to within
    ``10 * n`` units of roundoff."""
    n, k = Q.shape[-2], Q.shape[-1]
    eye = ferrograd.eye(k, dtype=Q.dtype)
    return ferrograd.allclose(Q.mH @ Q, eye, atol=10.0 * n * ferrograd.finfo(Q.dtype).eps)


def _orthonormalize(A: Tensor) -> Tensor:
    """The Q of ``A = QR`` with ``R``'s diagonal made non-negative: the
    orthonormal matrix closest in that sense to ``A``'s columns."""
    Q, R = ferrograd.linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_vectors(Q: Tensor) -> Tensor:
    """The inverse of the ``householder`` map on real ``Q`` (..., n, k),
    n >= k, with orthonormal columns: a Householder QR of ``Q`` in
    LAPACK's convention (``geqrf``), the reflection vectors below the
    diagonal and the signs of ``R``'s diagonal (which is +-1) on it.

    Where a column needs no reflection (LAPACK's ``tau = 0``) the map's
    ``tau = 2 / ||v||^2`` still reflects, flipping that column: its sign on
    the diagonal is flipped to match.
    """
    R = Q.clone()
    k = R.shape[-1]
    for i in range(k):
        x = R[..., i:, i]
        alpha = x[..., 0]
        tail_sq = x[..., 1:].square().sum(-1)
        reflect = tail_sq > 0
        # x goes to beta e_1, beta = -sign(alpha) ||x|| (sign(0) = +1).
        sign_alpha = ferrograd.where(alpha >= 0, 1.0, -1.0).to(R.dtype)
        beta = ferrograd.where(reflect, -sign_alpha * (alpha.square() + tail_sq).sqrt(), alpha)
        scale = ferrograd.where(reflect, 1.0 / (alpha - beta), ferrograd.zeros_like(alpha))
        v = ferrograd.cat([ferrograd.ones_like(alpha).unsqueeze(-1), x[..., 1:] * scale.unsqueeze(-1)], -1)
        tau = ferrograd.where(reflect, (beta - alpha) / beta, ferrograd.zeros_like(alpha))
        # The remaining columns: block -= tau v (v^T block).
        block = R[..., i:, i + 1 :]
        R[..., i:, i + 1 :] = block - tau[..., None, None] * v.unsqueeze(-1) * (v.unsqueeze(-2) @ block)
        R[..., i + 1 :, i] = v[..., 1:]
        R[..., i, i] = ferrograd.where(reflect, beta.sgn(), -beta.sgn())
    return R


class _Orthogonal(Module):
    """``orthogonal``'s parametrization: maps an unconstrained matrix to
    one with orthonormal columns (or rows, when it is wide)."""

    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # Now n >= k: the result has k orthonormal columns of length n.
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # The lower triangle of an n x n matrix (zero-padded) defines the
            # skew-Hermitian A = L - L^H; exp(A) and the Cayley transform of
            # A are orthogonal.
            X = X.tril()
            if n != k:
                pad = ferrograd.zeros(*X.shape[:-1], n - k, dtype=X.dtype)
                X = ferrograd.cat([X, pad], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = ferrograd.linalg.matrix_exp(A)
            else:
                eye = ferrograd.eye(n, dtype=A.dtype)
                Q = ferrograd.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            # Householder reflections with vectors below the diagonal (unit
            # diagonal implied), tau = 2 / ||v||^2, signs from the diagonal.
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = ferrograd.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {Q.shape}."
            )
        with ferrograd.no_grad():
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transposed = n < k
            if transposed:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != _OrthMaps.householder:
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                A = _householder_vectors(Q)
                return A.mT if transposed else A
            # With trivialization the new value becomes the base (completed
            # to a square orthogonal matrix) and the stored tensor the point
            # that every map sends to the identity.
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _orthonormalize(Q)
            else:
                extra = ferrograd.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype)
                Q = _orthonormalize(ferrograd.cat([Q, extra], dim=-1))
            self.base = Q
            neg_eye = ferrograd.zeros_like(Q_init)
            neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_eye


def orthogonal(
    module: _M, name: str = "weight", orthogonal_map: str | None = None, *, use_trivialization: bool = True
) -> _M:
    r"""Constrains the matrix (or batch of matrices) ``module.<name>`` to
    have orthonormal columns, or orthonormal rows when it is wide.

    A square real matrix becomes orthogonal and a complex one unitary.
    The stored tensor ``module.parametrizations.<name>.original`` is
    unconstrained and ``module.<name>`` is computed from it by
    ``orthogonal_map``:

    - ``"matrix_exp"``: the matrix exponential of a skew-Hermitian matrix
      built from its lower triangle;
    - ``"cayley"``: the Cayley transform ``(I - A/2)^{-1} (I + A/2)`` of
      the same skew-Hermitian ``A``;
    - ``"householder"``: a product of Householder reflections (real
      tensors only).

    With ``use_trivialization=True`` (default) the result is multiplied by
    a buffer ``base`` (``parametrizations.<name>.base``): assigning
    ``module.<name> = Q`` stores an orthonormalized ``Q`` there and resets
    ``original`` so that the maps start from ``Q``; registration does this
    with the current weight. Without it, assignment is possible with
    ``"householder"`` only.

    Args:
        module (nn.Module): the module.
        name (str): the tensor to constrain (at least 2-D).
            Default: ``"weight"``.
        orthogonal_map (str, optional): ``"matrix_exp"``, ``"cayley"`` or
            ``"householder"``. Default: ``None`` (``"matrix_exp"`` for
            square or complex matrices, ``"householder"`` otherwise).

    Keyword args:
        use_trivialization (bool): parametrize around the buffer ``base``.
            Default: ``True``.

    Returns:
        ``module``.

    Raises:
        ValueError: ``module`` has no tensor ``name``, it has fewer than 2
            dims, or ``orthogonal_map`` is unknown.

    Example:
        >>> m = nn.utils.parametrizations.orthogonal(nn.Linear(5, 3))
        >>> Q = m.weight
        >>> ferrograd.allclose(Q @ Q.T, ferrograd.eye(3), atol=1e-5)
        True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = _OrthMaps.__members__.get(orthogonal_map) if isinstance(orthogonal_map, str) else None
    if orth_enum is None:
        raise ValueError(
            f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: {orthogonal_map}'
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """``weight_norm``'s parametrization: ``(g, v) -> g * v / ||v||``."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: _M, name: str = "weight", dim: int | None = 0) -> _M:
    r"""Splits ``module.<name>`` into a magnitude and a direction:
    ``weight = g * v / ||v||``.

    ``g`` is stored as ``module.parametrizations.<name>.original0`` and
    ``v`` as ``original1``. The norm is taken over every dim but ``dim``
    (``g`` has size 1 in those dims); ``dim=None`` takes it over the whole
    tensor (``g`` is a scalar). A state dict saved with the hook-based
    :func:`ferrograd.nn.utils.weight_norm` (keys ``<name>_g`` and
    ``<name>_v``) loads into the parametrized module.

    Args:
        module (nn.Module): the module.
        name (str): the tensor to normalize. Default: ``"weight"``.
        dim (int, optional): the dim the norm is not taken over.
            Default: ``0``.

    Returns:
        ``module``.

    Example:
        >>> m = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
        >>> g, v = m.parametrizations.weight.original0, m.parametrizations.weight.original1
        >>> g.shape, v.shape
        (ferrograd.Size([2, 1]), ferrograd.Size([2, 3]))
        >>> ferrograd.allclose(m.weight, g * v / v.norm(dim=1, keepdim=True))
        True
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_keys(state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    # Run by load_state_dict on this module's part of the state dict.
    _add_hook(module._load_state_dict_pre_hooks, load_old_keys, prepend=False)
    return module


class _SpectralNorm(Module):
    """``spectral_norm``'s parametrization: the weight divided by its
    largest singular value, estimated by power iteration on the buffers
    ``_u`` and ``_v``."""

    _u: Tensor
    _v: Tensor

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})"
            )
        _check_power_iterations(n_power_iterations)
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = _weight_as_matrix(weight, self.dim)
            h, w = weight_mat.shape
            self.register_buffer("_u", _random_unit(h, weight_mat, eps))
            self.register_buffer("_v", _random_unit(w, weight_mat, eps))
            # Start from good estimates of the singular vectors.
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # u <- W v / |W v|, v <- W^H u / |W^H u|, in place in the buffers.
        with ferrograd.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(ferrograd.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ferrograd.mv(weight_mat.mH, self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = _weight_as_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # The buffers change in place on later calls: the graph keeps copies.
        u, v = self._u.clone(), self._v.clone()
        sigma = ferrograd.vdot(u, ferrograd.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(
    module: _M, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12, dim: int | None = None
) -> _M:
    r"""Divides ``module.<name>`` by its spectral norm: its largest
    singular value, the tensor seen as a matrix with dim ``dim`` as rows.

    The norm ``sigma = u^H W v`` is estimated by power iteration on the
    buffers ``module.parametrizations.<name>[0]._u`` and ``._v``: 15 steps
    at registration, then ``n_power_iterations`` on each access in
    training mode (none in eval mode). A 1-D tensor is divided by its
    2-norm instead.

    Args:
        module (nn.Module): the module.
        name (str): the tensor to normalize. Default: ``"weight"``.
        n_power_iterations (int): power iterations per access in training
            mode. Default: ``1``.
        eps (float): added to norms when normalizing. Default: ``1e-12``.
        dim (int, optional): the output-channel dim. Default: ``None``
            (``1`` for transposed convolutions, ``0`` otherwise).

    Returns:
        ``module``.

    Raises:
        ValueError: ``module`` has no tensor ``name``, or
            ``n_power_iterations`` is not positive.
        IndexError: ``dim`` is out of range.

    Example:
        >>> m = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3))
        >>> sorted(m.state_dict())
        ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v',
         'parametrizations.weight.original']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
