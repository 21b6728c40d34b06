"""Finite-difference checks of autograd gradients (test helper).

``check_grad(fn, arrays)`` builds float64 leaves from NumPy arrays in each
layout (contiguous, transposed, step-sliced), then compares

* first order: the vector-Jacobian product ``grad(fn(x), x, v)`` for a
  random cotangent ``v`` with central differences of ``<v, fn(x)>``;
* second order: the gradient of ``<u, vjp(x)>`` (via ``create_graph=True``)
  with central differences of ``<u, vjp(x)>``, where ``vjp`` is the first-
  order gradient (already checked).

and, in forward mode (``check_forward``, run by ``check_grad`` too),

* the tangent of ``fn(make_dual(x, t))`` for a random tangent ``t`` with
  central differences along ``t``, and with the reverse-mode identity
  ``<v, J t> == <J^T v, t>``;
* reverse-over-forward: the gradient of ``<w, tangent>`` with central
  differences of ``<w, tangent>`` (the tangent already checked).

The oracle is the finite difference alone; nothing is hard-coded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass
from typing import Any

import ferrograd as fg
import ferrograd.autograd.forward_ad as fwAD
import numpy as np

LAYOUTS = ("contiguous", "transposed", "sliced")


@dataclass(frozen=True)
class Settings:
    """The keywords of ``check_grad`` and ``check_forward``: the layouts
    to try, whether to check second order too, the finite-difference step,
    the tolerances (ten times larger at second order) and the seed of
    the random directions."""

    layouts: Sequence[str] = LAYOUTS
    second_order: bool = True
    eps: float = 1e-6
    atol: float = 1e-6
    rtol: float = 1e-5
    seed: int = 0


def make_leaf(a: np.ndarray, layout: str) -> fg.Tensor:
    """A float64 leaf holding ``a``'s values with the given memory layout."""
    a = np.asarray(a, dtype=np.float64)
    if layout == "contiguous" or a.ndim == 0:
        t = fg.tensor(a)
    elif layout == "transposed":
        if a.ndim < 2:
            t = fg.tensor(a)
        else:
            t = fg.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2).detach()
    elif layout == "sliced":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1] + 1,))
        big[..., 1::2] = a
        t = fg.tensor(big)[..., 1::2].detach()
    else:
        raise ValueError(layout)
    t.requires_grad_(True)
    return t


def _outputs(r: Any) -> list[fg.Tensor]:
    if isinstance(r, fg.Tensor):
        return [r]
    return [o for o in r if isinstance(o, fg.Tensor) and o.dtype == fg.float64]


def _dot(outs: list[fg.Tensor], vs: list[np.ndarray]) -> float:
    return float(sum((o.detach().numpy() * v).sum() for o, v in zip(outs, vs, strict=True)))


def _fd(f: Callable[[list[np.ndarray]], float], arrays: list[np.ndarray], eps: float) -> list[np.ndarray]:
    grads = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            g[idx] = (f(plus) - f(minus)) / (2 * eps)
        grads.append(g)
    return grads


def _assert_grads_close(
    got: Sequence[fg.Tensor | None], want: list[np.ndarray], atol: float, rtol: float, what: str
) -> None:
    """Compares gradients (``None`` meaning zeros) with expected arrays;
    ``what`` names input ``{i}`` in the failure message."""
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        gn = np.zeros_like(w) if g is None else g.detach().numpy()
        np.testing.assert_allclose(gn, w, atol=atol, rtol=rtol, err_msg=what.format(i=i))


def check_grad(
    fn: Callable[..., Any], arrays: Sequence[np.ndarray], *, forward: bool = True, **settings: Any
) -> None:
    """Checks first (and second) order gradients of ``fn`` at ``arrays``,
    in reverse mode and (unless ``forward=False``) in forward mode; the
    keywords are those of :class:`Settings`."""
    if forward:
        check_forward(fn, arrays, **settings)
    layouts, second_order, eps, atol, rtol, seed = astuple(Settings(**settings))
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    rng = np.random.default_rng(seed)
    for layout in layouts:
        leaves = [make_leaf(a, layout) for a in arrays]
        outs = _outputs(fn(*leaves))
        vs = [rng.standard_normal(o.shape) for o in outs]
        vts = [fg.tensor(v) for v in vs]

        def loss(xs: list[np.ndarray], layout: str = layout, vs: list[np.ndarray] = vs) -> float:
            with fg.no_grad():
                return _dot(_outputs(fn(*[make_leaf(x, layout) for x in xs])), vs)

        got = fg.autograd.grad(outs, leaves, vts, allow_unused=True, create_graph=second_order)
        want = _fd(loss, arrays, eps)
        _assert_grads_close(got, want, atol, rtol, f"first-order gradient of input {{i}} ({layout})")
        if not second_order:
            continue
        us = [rng.standard_normal(a.shape) for a in arrays]
        live = [(g, u) for g, u in zip(got, us, strict=True) if g is not None and g.requires_grad]
        if not live:
            continue  # the gradient does not depend on the inputs
        s = sum((g * fg.tensor(u)).sum() for g, u in live)
        got2 = fg.autograd.grad(s, leaves, allow_unused=True)

        def vjp_dot(
            xs: list[np.ndarray], layout: str = layout, vts: list[fg.Tensor] = vts, us: list[np.ndarray] = us
        ) -> float:
            ls = [make_leaf(x, layout) for x in xs]
            gs = fg.autograd.grad(_outputs(fn(*ls)), ls, vts, allow_unused=True)
            return float(
                sum((g.detach().numpy() * u).sum() for g, u in zip(gs, us, strict=True) if g is not None)
            )

        want2 = _fd(vjp_dot, arrays, eps)
        _assert_grads_close(
            got2, want2, 10 * atol, 10 * rtol, f"second-order gradient of input {{i}} ({layout})"
        )


def _tangents_of(fn: Callable[..., Any], leaves: list[fg.Tensor], ts: list[fg.Tensor]) -> list[fg.Tensor]:
    """Output tangents of ``fn`` at duals ``(leaves, ts)`` (zeros where an
    output has none)."""
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, t) for x, t in zip(leaves, ts, strict=True)]
        outs = _outputs(fn(*duals))
        tans = []
        for o in outs:
            tan = fwAD.unpack_dual(o).tangent
            tans.append(fg.zeros(o.shape, dtype=o.dtype) if tan is None else tan)
        return tans


def check_forward(fn: Callable[..., Any], arrays: Sequence[np.ndarray], **settings: Any) -> None:
    """Checks forward-mode tangents of ``fn`` at ``arrays`` (see the module
    docs); the keywords are those of :class:`Settings`."""
    layouts, second_order, eps, atol, rtol, seed = astuple(Settings(**settings))
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    rng = np.random.default_rng(seed + 1)
    for layout in layouts:
        ts_np = [rng.standard_normal(a.shape) for a in arrays]
        ts = [make_leaf(t, layout).detach() for t in ts_np]
        leaves = [make_leaf(a, layout) for a in arrays]
        tans = _tangents_of(fn, leaves, ts)

        def values(xs: list[np.ndarray], layout: str = layout) -> list[np.ndarray]:
            with fg.no_grad():
                return [o.numpy() for o in _outputs(fn(*[make_leaf(x, layout) for x in xs]))]

        plus = values([a + eps * t for a, t in zip(arrays, ts_np, strict=True)])
        minus = values([a - eps * t for a, t in zip(arrays, ts_np, strict=True)])
        assert len(tans) == len(plus), f"{len(tans)} tangents for {len(plus)} outputs ({layout})"
        for k, (tan, p, m) in enumerate(zip(tans, plus, minus, strict=True)):
            assert tuple(tan.shape) == p.shape, f"tangent {k} has shape {tuple(tan.shape)} ({layout})"
            np.testing.assert_allclose(
                tan.detach().numpy(), (p - m) / (2 * eps), atol=atol, rtol=rtol,
                err_msg=f"forward tangent of output {k} ({layout})",
            )
        # <v, J t> == <J^T v, t> with J^T v from reverse mode.
        outs = _outputs(fn(*leaves))
        vs = [rng.standard_normal(o.shape) for o in outs]
        if outs:
            vjps = fg.autograd.grad(outs, leaves, [fg.tensor(v) for v in vs], allow_unused=True)
            lhs = sum(float((tan.detach().numpy() * v).sum()) for tan, v in zip(tans, vs, strict=True))
            rhs = sum(
                float((g.numpy() * t).sum()) for g, t in zip(vjps, ts_np, strict=True) if g is not None
            )
            np.testing.assert_allclose(lhs, rhs, atol=atol * 10, rtol=rtol, err_msg=f"<v, Jt> ({layout})")
        if not second_order:
            continue
        ws = [rng.standard_normal(tuple(t.shape)) for t in tans]
        live = [(t, w) for t, w in zip(tans, ws, strict=True) if t.requires_grad]
        if not live:
            continue  # the tangent does not depend on the inputs

        def tan_dot(
            xs: list[np.ndarray], layout: str = layout, ts: list[fg.Tensor] = ts, ws: list[np.ndarray] = ws
        ) -> float:
            with fg.no_grad():
                got = _tangents_of(fn, [make_leaf(x, layout) for x in xs], ts)
            return float(sum((t.numpy() * w).sum() for t, w in zip(got, ws, strict=True)))

        s = sum((t * fg.tensor(w)).sum() for t, w in live)
        got2 = fg.autograd.grad(s, leaves, allow_unused=True)
        want2 = _fd(tan_dot, arrays, eps)
        _assert_grads_close(
            got2, want2, 10 * atol, 10 * rtol, f"reverse-over-forward gradient of input {{i}} ({layout})"
        )
