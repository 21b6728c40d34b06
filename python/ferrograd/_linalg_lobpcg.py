"""``lobpcg``: the ``k`` largest (or smallest) eigenpairs of a symmetric
(generalized) eigenproblem ``A x = λ B x`` by the locally optimal block
preconditioned conjugate gradient method (Knyazev, "Toward the optimal
preconditioned eigensolver", SIAM J. Sci. Comput. 23(2), 2001).

Each step builds the search space ``[X, W, P]`` from the current Ritz
vectors ``X``, the preconditioned residuals ``W = iK (A X - B X E)`` and
the previous step's direction ``P``, makes it ``B``-orthonormal and keeps
the best ``n`` Ritz pairs of ``A`` on it (Rayleigh-Ritz). ``method="ortho"``
orthonormalizes with the eigendecomposition of the Gram matrix, dropping
directions that have become dependent (Duersch, Shao, Yang and Gu, "A
robust and efficient implementation of LOBPCG", SIAM J. Sci. Comput. 40(5),
2018); ``method="basic"`` uses its Cholesky factor, as in Knyazev's
original, and raises ``LinAlgError`` when the space has become singular.

The iteration runs without recording a graph. The derivative with respect
to a dense ``A`` (``B`` not given) is that of the exact eigenpairs the
iteration converged to: the backward computes ``A``'s full
eigendecomposition and applies the symmetric eigenvector formula to the
selected pairs, in differentiable operations (so it has a second order)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ._core import Tensor, arange, cat, float32, randn, stack, tensor
from .autograd.grad_mode import no_grad

__all__ = ["lobpcg"]


def _eps_tiny(dtype: Any) -> tuple[float, float]:
    """Machine epsilon and the smallest normal number of a real dtype."""
    return (2.0**-23, 2.0**-126) if dtype == float32 else (2.0**-52, 2.0**-1022)


class _State:
    """What a ``tracker`` sees at each step, named as in torch: the integer,
    float, bool and tensor parameters and variables and the iterates."""

    def __init__(self, A: Tensor, B: Tensor | None, iK: Tensor | None, iparams: dict, fparams: dict,
                 bparams: dict, tracker: Callable[[Any], None] | None) -> None:  # fmt: skip
        self.A, self.B, self.iK, self.tracker = A, B, iK, tracker
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.ivars: dict[str, int] = {"istep": 0, "converged_count": 0}
        self.fvars: dict[str, float] = {}
        self.bvars: dict[str, bool] = {"force_stop": False}
        self.tvars: dict[str, Tensor] = {}
        self.E: Tensor | None = None
        self.X: Tensor | None = None
        self.S: Tensor | None = None
        self.R: Tensor | None = None


def _sym(T: Tensor) -> Tensor:
    return (T + T.mT) * 0.5


def _orthonormalize(U: Tensor, times_b: Callable[[Tensor], Tensor], against: Tensor | None,
                    method: str, drop: float, passes: int) -> Tensor:  # fmt: skip
    """``U``'s columns made ``B``-orthonormal and ``B``-orthogonal to the
    (``B``-orthonormal) columns of ``against``; ``"ortho"`` drops the
    directions whose Gram eigenvalue falls below ``drop`` of the largest
    (so the result may have fewer columns), ``"basic"`` keeps them all."""
    from .linalg import LinAlgError, cholesky, eigh, solve_triangular

    for _ in range(passes):
        if U.shape[-1] == 0:
            return U
        if against is not None:
            U = U - against @ (against.mT @ times_b(U))
        G = _sym(U.mT @ times_b(U))
        if method == "basic":
            try:
                L = cholesky(G)
            except LinAlgError as e:
                raise LinAlgError(f"lobpcg(method='basic'): the search space is singular ({e})") from None
            U = solve_triangular(L, U.mT, upper=False).mT
            continue
        d = G.diagonal().clamp_min(_eps_tiny(G.dtype)[1]).rsqrt()
        w, V = eigh(G * d[:, None] * d[None, :])
        keep = (w > drop * w[-1].clamp_min(0.0)).nonzero().flatten()
        U = (U * d) @ (V[:, keep] * w[keep].rsqrt())
    return U


def _rayleigh_ritz(S: Tensor, AS: Tensor, n: int, largest: bool) -> tuple[Tensor, Tensor, float]:
    """The best ``n`` Ritz values and coefficient columns of ``A`` on the
    ``B``-orthonormal basis ``S`` (``AS = A S``), and the largest Ritz value
    magnitude (an estimate of ``‖A‖`` from below)."""
    from .linalg import eigh

    w, C = eigh(_sym(S.mT @ AS))
    if largest:
        w, C = w.flip(0), C.flip(1)
    return w[:n], C[:, :n], float(w.abs().max())


def _one(state: _State, X: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """LOBPCG for the one ``m x m`` problem of ``state`` from the initial
    block ``X``."""
    A, B, iK = state.A, state.B, state.iK
    method, largest = state.iparams["method"], state.bparams["largest"]
    niter, tol = state.iparams["niter"], state.fparams["tol"]
    drop, passes = state.fparams["ortho_tol_drop"], state.iparams["ortho_i_max"]

    def times_b(U: Tensor) -> Tensor:
        return U if B is None else B @ U

    n = X.shape[-1]
    x_norm = float(X.norm())
    a_norm = float((A @ X).norm()) / x_norm
    b_norm = 1.0 if B is None else float((B @ X).norm()) / x_norm
    X = _orthonormalize(X, times_b, None, method, drop, passes)
    if X.shape[-1] < n:
        raise ValueError(f"lobpcg: the initial X has rank {X.shape[-1]}, below its {n} columns")
    E, C, _ = _rayleigh_ritz(X, A @ X, n, largest)
    X = X @ C
    P: Tensor | None = None
    step = 0
    while niter < 0 or step < niter:
        R = A @ X - times_b(X) * E
        rerr = R.norm(dim=0) / (X.norm(dim=0) * (a_norm + E.abs() * b_norm))
        converged = int((rerr[:k] < tol).sum())
        state.E, state.X, state.R, state.tvars["rerr"] = E, X, R, rerr
        state.ivars["converged_count"] = converged
        if state.tracker is not None:
            state.tracker(state)
        if converged >= k or state.bvars["force_stop"]:
            break
        # Converged columns leave the search space (soft locking).
        active = (rerr >= tol).nonzero().flatten()
        W = R[:, active] if iK is None else iK @ R[:, active]
        W = _orthonormalize(W, times_b, X, method, drop, passes)
        if P is not None:
            P = _orthonormalize(P[:, active], times_b, cat([X, W], dim=1), method, drop, passes)
        S = cat([X, W] if P is None or P.shape[-1] == 0 else [X, W, P], dim=1)
        state.S = S
        E, C, a_seen = _rayleigh_ritz(S, A @ S, n, largest)
        a_norm = max(a_norm, a_seen / b_norm)
        X = S @ C
        P = S[:, n:] @ C[n:]
        step += 1
        state.ivars["istep"] = step
    return E[:k], X[:, :k].contiguous()


def _spectrum(A: Tensor, X: Tensor, largest: bool) -> tuple[Tensor, Tensor, Tensor]:
    """For the ``k`` eigenvectors ``X`` of a symmetric ``A`` (the largest or
    smallest pairs): ``A``'s eigenvectors ``V`` (``A = V diag(w) V^T``), its
    selected columns with ``X``'s signs, and ``F[j, i] = 1 / (w_i - w_j)``
    for selected pair ``i`` and every other pair ``j`` (0 on ``i`` itself)."""
    from .linalg import eigh

    m, k = X.shape[-2], X.shape[-1]
    w, V = eigh(A)
    idx = list(range(m - 1, m - 1 - k, -1)) if largest else list(range(k))
    Vk = V[..., idx]
    sign = (Vk * X.detach()).sum(-2).sign()
    Vk = Vk * (sign + (sign == 0).to(sign.dtype)).unsqueeze(-2)
    own = (arange(m).unsqueeze(-1) == tensor(idx).unsqueeze(-2)).to(w.dtype)
    F = (1.0 - own) / (w[..., idx].unsqueeze(-2) - w.unsqueeze(-1) + own)
    return V, Vk, F


def _eigenpair_grad(A: Tensor, X: Tensor, gE: Tensor, gX: Tensor, largest: bool) -> Tensor:
    """``∂L/∂A`` (symmetric) for the ``k`` eigenpairs ``(E, X)``: the
    symmetric part of ``V (F ∘ V^T gX) X^T + X diag(gE) X^T``."""
    V, Vk, F = _spectrum(A, X, largest)
    G = V @ (F * (V.mT @ gX)) @ Vk.mT + (Vk * gE.unsqueeze(-2)) @ Vk.mT
    return _sym(G)


def _eigenpair_tangent(A: Tensor, X: Tensor, dA: Tensor, largest: bool) -> tuple[Tensor, Tensor]:
    """The tangents of the ``k`` eigenpairs for a tangent ``dA`` (taken
    symmetric): ``dE_i = x_i^T dA x_i`` and ``dX = V (F ∘ V^T dA X)``."""
    V, Vk, F = _spectrum(A, X, largest)
    dAX = _sym(dA) @ Vk
    return (Vk * dAX).sum(-2), V @ (F * (V.mT @ dAX))


class _Lobpcg:
    """The autograd Function (built on first use, to keep imports light)."""

    cls: Any = None

    @classmethod
    def get(cls) -> Any:
        if cls.cls is None:
            from .autograd import Function

            class LOBPCGAutogradFunction(Function):
                @staticmethod
                def forward(A: Tensor, B: Tensor | None, solve: Callable[..., tuple], largest: bool) -> tuple:
                    return solve(A, B)

                @staticmethod
                def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
                    A, B, _, largest = inputs
                    ctx.save_for_backward(A, output[1])
                    ctx.save_for_forward(A, output[1])
                    ctx.has_b, ctx.largest = B is not None, largest

                @staticmethod
                def backward(ctx: Any, gE: Tensor, gX: Tensor) -> tuple:
                    if ctx.has_b:
                        raise RuntimeError("lobpcg: the derivative is only available when B is None")
                    A, X = ctx.saved_tensors
                    return _eigenpair_grad(A, X, gE, gX, ctx.largest), None, None, None

                @staticmethod
                def jvp(ctx: Any, dA: Tensor | None, dB: Tensor | None, *_: Any) -> tuple:
                    if ctx.has_b or dA is None:
                        raise RuntimeError("lobpcg: the derivative is only available when B is None")
                    A, X = ctx.saved_tensors
                    return _eigenpair_tangent(A, X, dA, ctx.largest)

                @staticmethod
                def vmap(info: Any, in_dims: tuple, A: Tensor, B: Tensor | None, solve: Callable[..., tuple],
                         largest: bool) -> tuple:  # fmt: skip
                    # The batch is one more leading batch dim of the problem.
                    def lead(t: Tensor | None, d: int | None) -> Tensor | None:
                        if t is None or d is not None:
                            return t if t is None else t.movedim(d, 0)
                        return t.expand(info.batch_size, *t.shape)

                    out = LOBPCGAutogradFunction.apply(
                        lead(A, in_dims[0]), lead(B, in_dims[1]), solve, largest
                    )
                    return out, (0, 0)

            cls.cls = LOBPCGAutogradFunction
        return cls.cls


def _matrix(t: Tensor, i: int) -> Tensor:
    """The ``i``-th matrix of the batch ``t``."""
    return t.reshape(-1, *t.shape[-2:])[i]


def _check(A: Any, B: Any, X: Any, iK: Any, k: Any, n: Any, method: Any) -> None:
    for name, t in (("A", A), ("B", B), ("X", X), ("iK", iK)):
        if (t is not None or name == "A") and not isinstance(t, Tensor):
            raise TypeError(f"lobpcg(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"lobpcg: A must be a batch of square matrices, got shape {tuple(A.shape)}")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"lobpcg: A must be real floating point (float32 or float64), got {A.dtype}")
    m = A.shape[-1]
    for name, t in (("B", B), ("iK", iK)):
        if t is not None and (t.shape[-2:] != A.shape[-2:] or t.dtype != A.dtype):
            raise RuntimeError(
                f"lobpcg: {name} must match A (shape {tuple(A.shape)}, {A.dtype}), "
                f"got shape {tuple(t.shape)}, {t.dtype}"
            )
    if X is not None and (X.ndim < 2 or X.shape[-2] != m or X.dtype != A.dtype):
        raise RuntimeError(
            f"lobpcg: X must be (*, {m}, n) of {A.dtype}, got shape {tuple(X.shape)}, {X.dtype}"
        )
    for name, v in (("k", k), ("n", n)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ValueError(f"lobpcg: {name} must be a positive integer, got {v!r}")
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")


def lobpcg(
    A: Tensor,
    k: int | None = None,
    B: Tensor | None = None,
    X: Tensor | None = None,
    n: int | None = None,
    iK: Tensor | None = None,
    niter: int | None = None,
    tol: float | None = None,
    largest: bool | None = None,
    method: str | None = None,
    tracker: Callable[[Any], None] | None = None,
    ortho_iparams: dict[str, int] | None = None,
    ortho_fparams: dict[str, float] | None = None,
    ortho_bparams: dict[str, bool] | None = None,
) -> tuple[Tensor, Tensor]:
    """lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, ...)

    Full signature: also ``method=None, tracker=None, ortho_iparams=None,
    ortho_fparams=None, ortho_bparams=None``; returns ``(Tensor, Tensor)``.

    The ``k`` largest (or smallest) eigenvalues and eigenvectors of the
    symmetric generalized eigenproblem ``A x = λ B x`` (``B`` symmetric
    positive definite, the identity when not given), by LOBPCG.

    Args:
        A (Tensor): ``(*, m, m)`` symmetric, float32 or float64.
        k (int, optional): eigenpairs wanted; default ``X``'s columns, or 1.
        B (Tensor, optional): ``(*, m, m)`` symmetric positive definite.
        X (Tensor, optional): ``(*, m, n)`` initial block, ``k <= n``; random
            (``randn``) when not given.
        n (int, optional): columns of the random initial block (default
            ``k``); ignored when ``X`` is given. ``m`` must be at least
            ``3 n``.
        iK (Tensor, optional): ``(*, m, m)`` preconditioner applied to the
            residuals.
        niter (int, optional): step limit (default 1000; ``-1``: none).
        tol (float, optional): relative residual at which a pair has
            converged (default ``sqrt(eps)`` of the dtype).
        largest (bool, optional): the largest (default) or the smallest.
        method (str, optional): ``"ortho"`` (default) or ``"basic"``.
        tracker (callable, optional): called with the iteration state at
            each step (``ivars["istep"]``, ``ivars["converged_count"]``,
            ``tvars["rerr"]``, ``E``, ``X``, ``R``, ``S``); setting
            ``bvars["force_stop"] = True`` stops the iteration.
        ortho_iparams (dict, optional): integer settings:
            ``ortho_i_max``, the orthonormalization passes (default 2).
        ortho_fparams (dict, optional): float settings: ``ortho_tol_drop``,
            the relative Gram eigenvalue below which a direction is dropped
            (default ``eps ** 0.75``).
        ortho_bparams (dict, optional): bool settings (accepted for torch's
            signature; none is read).

    Returns:
        ``(E, X)``: ``E`` ``(*, k)`` (descending for the largest, ascending
        for the smallest) and ``X`` ``(*, m, k)`` with ``X^T B X = I``.

    Raises:
        ValueError: ``m < 3 n``, ``k > n``, or a bad ``method``.
        RuntimeError: complex or mismatched inputs; in backward, when ``B``
            was given.

    Example:
        >>> import ferrograd
        >>> A = ferrograd.diag(ferrograd.arange(1.0, 31.0, dtype=ferrograd.float64))
        >>> E, X = ferrograd.lobpcg(A, k=2)
        >>> E
        tensor([30.0000, 29.0000], dtype=ferrograd.float64)
    """
    _check(A, B, X, iK, k, n, method)
    m = A.shape[-1]
    n = X.shape[-1] if X is not None else (n if n is not None else (k if k is not None else 1))
    k = k if k is not None else (X.shape[-1] if X is not None else 1)
    if k > n:
        raise ValueError(f"lobpcg: k (={k}) must not exceed the number of columns of X, n (={n})")
    if m < 3 * n:
        raise ValueError(
            f"lobpcg: LOBPCG is not applicable when the number of A rows (={m}) is smaller than "
            f"3 x the number of requested eigenpairs (={n})"
        )
    eps = _eps_tiny(A.dtype)[0]
    iparams = {"niter": 1000 if niter is None else niter, "method": method or "ortho", "ortho_i_max": 2}
    fparams = {"tol": eps**0.5 if tol is None else float(tol), "ortho_tol_drop": eps**0.75}
    bparams = {"largest": True if largest is None else bool(largest)}
    iparams.update(ortho_iparams or {})
    fparams.update(ortho_fparams or {})
    bparams.update(ortho_bparams or {})
    if X is None:
        X = randn(*A.shape[:-2], m, n, dtype=A.dtype)

    def solve(a: Tensor, b: Tensor | None) -> tuple[Tensor, Tensor]:
        """The iteration for every matrix of the (broadcast) batch."""
        from . import broadcast_shapes

        with no_grad():
            given = [t for t in (a, b, iK, X) if t is not None]
            batch = tuple(broadcast_shapes(*(t.shape[:-2] for t in given)))
            a, x = a.detach().broadcast_to((*batch, m, m)), X.detach().broadcast_to((*batch, m, n))
            b = None if b is None else b.detach().broadcast_to(a.shape)
            ik = None if iK is None else iK.detach().broadcast_to(a.shape)
            results = []
            for i in range(a.reshape(-1, m, m).shape[0]):
                pick = partial(_matrix, i=i)
                state = _State(pick(a), None if b is None else pick(b), None if ik is None else pick(ik),
                               iparams, fparams, bparams, tracker)  # fmt: skip
                results.append(_one(state, pick(x), k))
            return (
                stack([e for e, _ in results]).reshape(*batch, k),
                stack([v for _, v in results]).reshape(*batch, m, k),
            )

    # Through the autograd Function always, so that vmap and the derivative
    # transforms find its rules; it records a node only when needed.
    return _Lobpcg.get().apply(A, B, solve, bparams["largest"])
