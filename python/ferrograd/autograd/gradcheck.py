"""Numerical checks of autograd gradients (torch.autograd.gradcheck's API).

``gradcheck(func, inputs)`` compares the gradients autograd computes for
``func`` with float64 central finite differences, in reverse mode and
(with ``check_forward_ad=True``) in forward mode; ``gradgradcheck`` does
the same for the gradients of the gradients (reverse-over-reverse, and
forward-over-reverse with ``check_fwd_over_rev=True``). Both raise
:class:`GradcheckError` (a ``RuntimeError``) on failure, or return ``False`` when
``raise_exception=False``, and return ``True`` on success.

The Jacobians printed in failure messages use torch's layout: one row per
element of the input (in row-major order), one column per element of the
output, so entry ``(r, c)`` is ``d output[c] / d input[r]``.

Complex inputs and outputs are handled as in torch. Reverse mode checks the
imaginary and then the real part of the complex outputs as real functions;
for a complex input ``z = x + 1j y`` the numerical entry is ``ds/dx + 1j
ds/dy``, the gradient autograd gives ``z`` for a real output ``s``. Forward
mode checks ``func`` as a function of the imaginary and then of the real
part of its complex inputs. A mismatch found that way starts with "While
considering the {imaginary|real} part of complex {outputs|inputs} only, ".

Everything here is built from public tensor operations, ``autograd.grad``
and ``forward_ad``; nothing is on a hot path.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Collection, Sequence
from typing import Any, ParamSpec, Protocol

from .. import _core
from . import forward_ad as fwAD
from .grad_mode import no_grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

Tensor = _core.Tensor

# Seeds of the private generators used for the random vectors of fast mode,
# the batched-gradient check and gradgradcheck's grad_outputs. Fixed, so a
# check gives the same verdict on every run and never touches the user's
# random state.
_FAST_MODE_SEED = 20210311
_BATCHED_GRAD_SEED = 20210312
_GRAD_OUTPUTS_SEED = 20210313
_FORWARD_AD_SEED = 20210314


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` and :func:`gradgradcheck` when a check
    fails (with ``raise_exception=True``); a ``RuntimeError`` whose message
    shows the numerical and analytical Jacobians that differ."""


# ---------------------------------------------------------------------------
# Features that need parts of ferrograd that do not exist yet.


def _unsupported_masked(caller: str) -> RuntimeError:
    return RuntimeError(f"{caller}: masked=True needs sparse tensors, which ferrograd does not provide yet")


# ---------------------------------------------------------------------------
# Small helpers.


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float_tensor(x: Any) -> bool:
    return isinstance(x, Tensor) and (x.is_floating_point() or x.is_complex())


def _differentiable_outputs(out: Any) -> tuple[Tensor, ...]:
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor) and o.requires_grad)


def _diff_input_positions(inputs: tuple[Any, ...]) -> list[int]:
    return [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _element_index(shape: Sequence[int], flat: int) -> tuple[int, ...]:
    """The multi-index of the ``flat``-th element of a row-major ``shape``."""
    idx = []
    for size in reversed(list(shape)):
        idx.append(flat % size if size else 0)
        flat = flat // size if size else 0
    return tuple(reversed(idx))


def _fmt_index(idx: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(i) for i in idx) + ("," if len(idx) == 1 else "") + ")"


def _zeros(shape: Sequence[int], dtype: Any = None) -> Tensor:
    return _core.zeros(tuple(shape), dtype=_core.float64 if dtype is None else dtype)


def _wide_dtype(t: Tensor) -> Any:
    """The dtype Jacobians involving ``t`` are computed in: complex128 for a
    complex ``t``, float64 otherwise."""
    return _core.complex128 if t.is_complex() else _core.float64


def _widen(t: Tensor) -> Tensor:
    return t.to(_wide_dtype(t))


def _allclose(a: Tensor, n: Tensor, rtol: float, atol: float) -> bool:
    """torch.allclose(a, n, rtol, atol) in float64 (complex128 when either
    side is complex): ``|a - n| <= atol + rtol * |n|`` everywhere (NaN
    anywhere fails)."""
    dtype = _core.complex128 if a.is_complex() or n.is_complex() else _core.float64
    a = a.to(dtype)
    n = n.to(dtype)
    if a.numel() == 0:
        return True
    ok = (a - n).abs() <= n.abs() * rtol + atol
    return bool(ok.all().item())


def _max_abs(t: Tensor) -> float:
    if t.numel() == 0:
        return 0.0
    if t.is_complex():
        t = t.abs()
    values = t.detach().reshape(-1).tolist()
    return max(math.inf if math.isnan(v) else abs(v) for v in values)


def _real_dtype(dtype: Any) -> Any:
    """The dtype of each part of a complex dtype (others unchanged)."""
    if dtype == _core.complex64:
        return _core.float32
    if dtype == _core.complex128:
        return _core.float64
    return dtype


def _randn(shape: Sequence[int], generator: Any, dtype: Any) -> Tensor:
    """Standard normal samples of ``dtype``; a complex sample has independent
    real and imaginary parts of variance 1/2 each (as torch.randn)."""
    shape = tuple(shape)
    real = _real_dtype(dtype)
    if real == dtype:
        return _core.randn(shape, generator=generator, dtype=dtype)
    re = _core.randn(shape, generator=generator, dtype=real)
    im = _core.randn(shape, generator=generator, dtype=real)
    return _core.complex(re, im) * math.sqrt(0.5)


# ---------------------------------------------------------------------------
# Input and output checks.


def _check_inputs(inputs: tuple[Any, ...]) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, Tensor) and inp.requires_grad):
            continue
        if inp.dtype not in (_core.float64, _core.complex128):
            warnings.warn(
                f"Input #{idx} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double precision "
                "floating point or complex.",
                UserWarning,
                stacklevel=4,
            )
        # Perturbing one element of an input whose memory overlaps itself
        # moves several elements at once, so the finite differences are wrong.
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape, strict=True)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                "that are non-overlapping to be able to compute the numerical gradients correctly. "
                "You should call .contiguous on the input before passing it to gradcheck."
            )
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, "
            "but none of the them have requires_grad=True."
        )


# ---------------------------------------------------------------------------
# Numerical side: central differences, perturbing the inputs in place.


def _evaluate(func: Callable[..., Any], inputs: tuple[Any, ...]) -> list[Tensor | None]:
    """Runs ``func`` and returns a detached copy of each floating output
    (``None`` in place of the other outputs)."""
    outs = _as_tuple(func(*inputs))
    return [o.detach().clone() if _is_float_tensor(o) else None for o in outs]


def _central_difference(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    target: Tensor,
    delta: Tensor | float,
    where: tuple[int, ...] | None,
    eps_repr: Any,
) -> list[Tensor | None]:
    """``(f(x + delta) - f(x - delta)) / (2 |delta|)`` for each floating
    output of ``func``, flattened (float64, complex128 for a complex output);
    ``target`` is the input to perturb (the whole tensor when ``where`` is
    None, else the element at ``where``). ``delta`` is imaginary to move the
    imaginary part of a complex input."""
    # ``.data`` aliases the memory without the version counter, so saved
    # tensors of graphs built before stay valid (as in torch).
    data = target.data
    entry = data if where is None else data[where]
    if isinstance(delta, Tensor):
        norm = float(delta.abs().norm().item()) if delta.numel() else 1.0
        delta = delta.reshape(tuple(entry.shape)).to(entry.dtype)
    else:
        norm = abs(delta)
    # Only the writes are outside autograd: ``func`` runs with grad mode as
    # the caller has it, so functions that register hooks or call
    # ``autograd.grad`` themselves (gradgradcheck's) work.
    with no_grad():
        orig = entry.clone()
        entry.copy_(orig - delta)
    try:
        before = _evaluate(func, inputs)
        with no_grad():
            entry.copy_(orig + delta)
        after = _evaluate(func, inputs)
    finally:
        with no_grad():
            entry.copy_(orig)
    if len(before) != len(after):
        raise GradcheckError(
            "Expected `func` to return the same number of outputs when inputs are perturbed, "
            f"but got {len(before)} and {len(after)}."
        )
    on_index = f"on index {_fmt_index(where)} " if where is not None else ""
    cols: list[Tensor | None] = []
    for a, b in zip(before, after, strict=True):
        if a is None or b is None:
            cols.append(None)
            continue
        if tuple(a.shape) != tuple(b.shape):
            raise GradcheckError(
                "Expected `func` to return outputs with the same shape when inputs are perturbed "
                f"{on_index}by {eps_repr}, but got: shapes {tuple(a.shape)} and {tuple(b.shape)}."
            )
        if a.dtype != b.dtype:
            raise GradcheckError(
                "Expected `func` to return outputs with the same dtype when inputs are perturbed "
                f"{on_index}by {eps_repr}, but got: dtypes {a.dtype} and {b.dtype}."
            )
        cols.append(((_widen(b) - _widen(a)) / (2 * norm)).reshape(-1))
    return cols


def _numerical_jacobians(
    func: Callable[..., Any], inputs: tuple[Any, ...], pos: int, eps: float
) -> list[Tensor | None]:
    """For the input at position ``pos``: one float64 Jacobian of shape
    ``(input.numel(), output.numel())`` per floating output of ``func``
    (``None`` for the other outputs); complex128 for a complex output.

    For a complex input (and real outputs: reverse mode splits complex
    outputs into their parts first) the entries are complex128,
    ``ds/dx + 1j * ds/dy`` for ``z = x + 1j * y``: the gradient autograd
    gives ``z`` for the real output ``s``."""
    target = inputs[pos]
    rows: list[list[Tensor | None]] = []
    for where in itertools.product(*(range(s) for s in target.shape)):
        row = _central_difference(func, inputs, target, eps, tuple(where), eps)
        if target.is_complex():
            d_imag = _central_difference(func, inputs, target, eps * 1j, tuple(where), eps * 1j)
            row = [_conj_wirtinger(dx, dy) for dx, dy in zip(row, d_imag, strict=True)]
        rows.append(row)
    if not rows:  # an input with no elements: the Jacobians have no rows
        outs = _as_tuple(func(*inputs))
        return [
            _zeros((0, o.numel()), _core.complex128 if target.is_complex() or o.is_complex() else None)
            if _is_float_tensor(o)
            else None
            for o in outs
        ]
    jacobians: list[Tensor | None] = []
    for k in range(len(rows[0])):
        col = rows[0][k]
        if col is None:
            jacobians.append(None)
        elif col.numel() == 0:
            jacobians.append(_zeros((len(rows), 0), col.dtype))
        else:
            jacobians.append(_core.stack([r[k] for r in rows]))  # type: ignore[misc]
    return jacobians


def _conj_wirtinger(dx: Tensor | None, dy: Tensor | None) -> Tensor | None:
    """``dx + 1j * dy`` from the derivatives of a real output along the real
    and the imaginary part of a complex input."""
    if dx is None or dy is None:
        return None
    if dx.is_complex() or dy.is_complex():
        raise AssertionError("Expected the derivatives along a complex input to be real-valued")
    return _core.complex(dx, dy)


# ---------------------------------------------------------------------------
# Analytical side: vector-Jacobian products with autograd.grad.


def _vjp(output: Tensor, diff_inputs: list[Tensor], grad_output: Tensor) -> tuple[Tensor | None, ...]:
    from . import grad as autograd_grad

    return autograd_grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)


def _stack_vjps(
    vjps: list[tuple[Tensor | None, ...]], diff_inputs: list[Tensor]
) -> tuple[list[Tensor], bool, bool]:
    """Puts ``vjps[c][k]`` (the gradient of input ``k`` for cotangent ``c``)
    into column ``c`` of a float64 (complex128 for a complex input)
    ``(input.numel(), len(vjps))`` matrix per input. Also reports whether
    every gradient had its input's dtype and shape."""
    types_ok = True
    sizes_ok = True
    jacobians = []
    for k, inp in enumerate(diff_inputs):
        dtype = _wide_dtype(inp)
        cols = []
        for grads in vjps:
            g = grads[k]
            if g is None:
                cols.append(_zeros((inp.numel(),), dtype))
                continue
            if tuple(g.shape) != tuple(inp.shape):
                sizes_ok = False
                cols.append(_zeros((inp.numel(),), dtype))
                continue
            if g.dtype != inp.dtype:
                types_ok = False
            cols.append(g.detach().to(dtype).reshape(-1))
        if cols:
            jacobians.append(_core.stack(cols, 1))
        else:
            jacobians.append(_zeros((inp.numel(), 0), dtype))
    return jacobians, types_ok, sizes_ok


def _check_analytical_attributes(
    diff_inputs: list[Tensor],
    output: Tensor,
    cotangents: list[Tensor],
    nondet_tol: float,
    check_grad_dtypes: bool,
) -> list[Tensor]:
    """Runs the vector-Jacobian products for ``cotangents`` twice (to catch
    a nondeterministic backward) and checks dtypes and shapes. Returns one
    float64 matrix per differentiable input, ``(input.numel(), #cotangents)``."""
    first = [_vjp(output, diff_inputs, v) for v in cotangents]
    second = [_vjp(output, diff_inputs, v) for v in cotangents]
    jac1, types_ok, sizes_ok = _stack_vjps(first, diff_inputs)
    jac2, _, _ = _stack_vjps(second, diff_inputs)
    reentrant = all(_max_abs(a - b) <= nondet_tol for a, b in zip(jac1, jac2, strict=True))
    if not types_ok and check_grad_dtypes:
        bad = [
            f"input {k}: gradient {g.dtype}, input {inp.dtype}"
            for grads in first
            for k, (g, inp) in enumerate(zip(grads, diff_inputs, strict=True))
            if g is not None and g.dtype != inp.dtype
        ]
        raise GradcheckError(f"Gradient has dtype mismatch ({bad[0]})")
    if not sizes_ok:
        bad = [
            f"input {k}: gradient {tuple(g.shape)}, input {tuple(inp.shape)}"
            for grads in first
            for k, (g, inp) in enumerate(zip(grads, diff_inputs, strict=True))
            if g is not None and tuple(g.shape) != tuple(inp.shape)
        ]
        raise GradcheckError(f"Analytical gradient has incorrect size ({bad[0]})")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.\n\n"
            "If the backward is expected to be nondeterministic (for example it adds values in "
            "an order that varies between runs), pass a larger `nondet_tol=` to gradcheck or "
            "gradgradcheck."
        )
    return jac1


def _one_hot_cotangents(output: Tensor) -> list[Tensor]:
    """One ``grad_output`` per element of ``output``: 1 there, 0 elsewhere."""
    out = []
    for j in range(output.numel()):
        g = _core.zeros(tuple(output.shape), dtype=output.dtype)
        g.view(-1)[j] = 1.0
        out.append(g)
    return out


def _analytical_jacobians(diff_inputs: list[Tensor], output: Tensor) -> list[Tensor]:
    """The analytical Jacobians of ``output``, without the attribute checks
    (used to print the full matrices after a fast-mode failure)."""
    vjps = [_vjp(output, diff_inputs, v) for v in _one_hot_cotangents(output)]
    return _stack_vjps(vjps, diff_inputs)[0]


# ---------------------------------------------------------------------------
# Failure messages.


def _largest_difference(
    a: Tensor,
    n: Tensor,
    rtol: float,
    atol: float,
    inp: Tensor,
    out: Tensor,
) -> str:
    """Where the analytical and numerical Jacobians differ most."""
    diffs = (a - n).abs().reshape(-1).tolist()
    if not diffs:
        return ""
    ncols = a.shape[1]
    best = max(range(len(diffs)), key=lambda f: math.inf if math.isnan(diffs[f]) else diffs[f])
    r, c = divmod(best, ncols)
    nv = n[r, c].item()
    av = a[r, c].item()
    allowed = atol + rtol * abs(nv)
    return (
        f"The largest difference is at Jacobian entry (row {r}, column {c}) "
        f"(input element {_fmt_index(_element_index(inp.shape, r))}, "
        f"output element {_fmt_index(_element_index(out.shape, c))}): "
        f"numerical {nv!r} vs analytical {av!r} "
        f"(difference {diffs[best]:.6g}, allowed atol + rtol * |numerical| = {allowed:.6g}).\n"
    )


def _mismatch_message(
    i: int, j: int, numerical: Any, analytical: Any, forward: bool = False, prefix: str = ""
) -> str:
    what = "Jacobian computed with forward mode mismatch" if forward else "Jacobian mismatch"
    return (
        f"{prefix}{what} for output {i} with respect to input {j},\n"
        f"numerical:{numerical}\nanalytical:{analytical}\n"
    )


# ``prefix(i, j)`` starts the message of a mismatch for output ``i`` and
# input ``j``; it names the part of a complex output (reverse mode) or of a
# complex input (forward mode) the failing check looked at.
_Prefix = Callable[[int, int], str]


def _no_prefix(i: int, j: int) -> str:
    return ""


def _part_prefix(part: str, element: str, complex_indices: Collection[int], by_input: bool) -> _Prefix:
    def prefix(i: int, j: int) -> str:
        if (j if by_input else i) not in complex_indices:
            return ""
        return f"While considering the {part} part of complex {element} only, "

    return prefix


def _positions_note(j: int, positions: list[int]) -> str:
    if positions[j] == j:
        return ""
    return f"(input {j} counts only the inputs that require grad: it is argument {positions[j]} of func.)\n"


# ---------------------------------------------------------------------------
# Slow mode: full Jacobians.


def _check_no_differentiable_outputs(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    positions: list[int],
    eps: float,
    directions: list[_Direction] | None = None,
) -> None:
    # Without differentiable outputs autograd has nothing to compare, so the
    # numerical derivatives must vanish.
    for k, pos in enumerate(positions):
        if directions is None:
            jacobians = _numerical_jacobians(func, inputs, pos, eps)
        else:
            jacobians = _directional_difference(func, inputs, pos, directions[k], eps)
        for jac in jacobians:
            if jac is not None and bool((jac != 0).any().item()):
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow_gradcheck(
    func: Callable[..., Any],
    func_out: Any,
    inputs: tuple[Any, ...],
    outputs: tuple[Tensor, ...],
    eps: float,
    rtol: float,
    atol: float,
    check_grad_dtypes: bool,
    nondet_tol: float,
    prefix: _Prefix = _no_prefix,
) -> None:
    positions = _diff_input_positions(inputs)
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, positions, eps)
        return
    out_tuple = _as_tuple(func_out)
    diff_out_positions = [k for k, o in enumerate(out_tuple) if isinstance(o, Tensor) and o.requires_grad]
    # numerical[j][i]: Jacobian of differentiable output i w.r.t. input j.
    numerical = []
    for pos in positions:
        per_output = _numerical_jacobians(func, inputs, pos, eps)
        numerical.append([per_output[k] for k in diff_out_positions])
    diff_inputs = [inputs[p] for p in positions]
    for i, o in enumerate(outputs):
        analytical = _check_analytical_attributes(
            diff_inputs, o, _one_hot_cotangents(o), nondet_tol, check_grad_dtypes
        )
        for j, a in enumerate(analytical):
            n = numerical[j][i]
            if n is None:  # a non-floating output cannot require grad; kept for safety
                continue
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(
                    _mismatch_message(i, j, n, a, prefix=prefix(i, j))
                    + _largest_difference(a, n, rtol, atol, diff_inputs[j], o)
                    + _positions_note(j, positions)
                )


# ---------------------------------------------------------------------------
# Fast mode: one random direction per input and per output.


def _unit_vector(numel: int, generator: Any) -> Tensor:
    vec = _core.rand((numel,), generator=generator, dtype=_core.float64)
    if numel:
        vec = vec / vec.norm()
    return vec


# The direction fast mode moves an input along: a random unit vector ``u``
# for a real input; for a complex input a pair ``(ur, ui)`` of them, ``ur``
# for its real part and ``ui`` for its imaginary part.
_Direction = Tensor | tuple[Tensor, Tensor]


def _unit_direction(inp: Tensor, generator: Any) -> _Direction:
    if inp.is_complex():
        return (_unit_vector(inp.numel(), generator), _unit_vector(inp.numel(), generator))
    return _unit_vector(inp.numel(), generator)


def _directional_difference(
    func: Callable[..., Any], inputs: tuple[Any, ...], pos: int, u: _Direction, eps: float
) -> list[Tensor | None]:
    """``J u`` by one central difference per floating output along ``u``; for
    a complex input, ``J_x ur + 1j * J_y ui`` with ``J_x``, ``J_y`` the
    derivatives along its real and its imaginary part (outputs are real)."""
    target = inputs[pos]
    if not isinstance(u, tuple):
        return _central_difference(func, inputs, target, u * eps, None, u * eps)
    ur, ui = u
    along_x = _central_difference(func, inputs, target, ur * eps, None, ur * eps)
    delta_y = ui * (eps * 1j)
    along_y = _central_difference(func, inputs, target, delta_y, None, delta_y)
    return [_conj_wirtinger(dx, dy) for dx, dy in zip(along_x, along_y, strict=True)]


def _reduce_along(vj: Tensor, u: _Direction) -> float | complex:
    """``(v^T J) u`` from the gradient ``v^T J`` of an input: for a complex
    input, ``Re(v^T J) . ur + 1j * Im(v^T J) . ui`` (the numerical side's
    ``v^T (J_x ur + 1j J_y ui)``)."""
    vj = vj.reshape(-1)
    if not isinstance(u, tuple):
        return float(vj.dot(u).item())
    ur, ui = u
    return complex(float(vj.real.dot(ur).item()), float(vj.imag.dot(ui).item()))


def _adjusted_atol(atol: float, u: _Direction, v: Tensor | None) -> float:
    # Slow mode allows |a - n| <= atol + rtol |n| per entry. Comparing
    # v^T A u with v^T N u instead, the per-entry allowance atol adds up to
    # atol * sum_ij v_i u_j = atol * sum(u) * sum(v) (u and v are >= 0).
    # A complex input moves along ur and ui, so sum(u) = sum(ur) + sum(ui).
    parts = u if isinstance(u, tuple) else (u,)
    sum_u = sum(float(p.sum().item()) for p in parts)
    sum_v = 1.0 if v is None else float(v.sum().item())
    return atol * sum_u * sum_v


def _fast_gradcheck(
    func: Callable[..., Any],
    func_out: Any,
    inputs: tuple[Any, ...],
    outputs: tuple[Tensor, ...],
    eps: float,
    rtol: float,
    atol: float,
    check_grad_dtypes: bool,
    nondet_tol: float,
    prefix: _Prefix = _no_prefix,
) -> None:
    positions = _diff_input_positions(inputs)
    diff_inputs = [inputs[p] for p in positions]
    gen = _core.Generator()
    gen.manual_seed(_FAST_MODE_SEED)
    all_u = [_unit_direction(t, gen) for t in diff_inputs]
    all_v = [_unit_vector(o.numel(), gen) for o in outputs]

    if not outputs:
        _check_no_differentiable_outputs(func, inputs, positions, eps, all_u)
        return

    out_tuple = _as_tuple(func_out)
    diff_out_positions = [k for k, o in enumerate(out_tuple) if isinstance(o, Tensor) and o.requires_grad]
    # numerical[j][i] = v_i^T (J_ij u_j), J u by a central difference along u.
    numerical: list[list[float | complex]] = []
    for pos, u in zip(positions, all_u, strict=True):
        ju = _directional_difference(func, inputs, pos, u, eps)
        row: list[float | complex] = []
        for i, k in enumerate(diff_out_positions):
            col = ju[k]
            row.append(0.0 if col is None else col.dot(all_v[i].to(col.dtype)).item())
        numerical.append(row)

    # analytical[i][j] = (v_i^T J_ij) u_j, v^T J by one vector-Jacobian product.
    analytical: list[list[float | complex]] = []
    for o, v in zip(outputs, all_v, strict=True):
        cot = v.reshape(tuple(o.shape)).to(o.dtype)
        vjs = _check_analytical_attributes(diff_inputs, o, [cot], nondet_tol, check_grad_dtypes)
        analytical.append([_reduce_along(vj, u) for vj, u in zip(vjs, all_u, strict=True)])

    for j, u in enumerate(all_u):
        for i, v in enumerate(all_v):
            n = numerical[j][i]
            a = analytical[i][j]
            tol = _adjusted_atol(atol, u, v)
            if abs(a - n) <= tol + rtol * abs(n):
                continue
            raise GradcheckError(
                _mismatch_message(i, j, n, a, prefix=prefix(i, j))
                + _positions_note(j, positions)
                + _slow_mode_report(func, inputs, positions, outputs, i, j, eps, rtol, atol)
            )


def _slow_mode_report(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    positions: list[int],
    outputs: tuple[Tensor, ...],
    i: int,
    j: int,
    eps: float,
    rtol: float,
    atol: float,
) -> str:
    """The full Jacobians of output ``i`` w.r.t. input ``j``, for a failure
    found in fast mode."""
    out_tuple_positions = [
        k for k, o in enumerate(_as_tuple(func(*inputs))) if isinstance(o, Tensor) and o.requires_grad
    ]
    diff_inputs = [inputs[p] for p in positions]
    n = _numerical_jacobians(func, inputs, positions[j], eps)[out_tuple_positions[i]]
    a = _analytical_jacobians(diff_inputs, outputs[i])[j]
    if n is None:
        return ""
    intro = (
        "\nThe numbers above are v^T J u for random unit vectors u (over the input) and v (over "
        "the output),\ncomputed in fast mode (numerically by a central difference along u, "
        "analytically by one\nvector-Jacobian product with v). The full Jacobians, recomputed "
        "in slow mode:\n\n"
    )
    return _full_jacobians_report(intro, n, a, rtol, atol, diff_inputs[j], outputs[i])


def _full_jacobians_report(
    intro: str, n: Tensor, a: Tensor, rtol: float, atol: float, inp: Tensor, out: Tensor
) -> str:
    """The slow-mode Jacobians that follow a fast-mode failure."""
    msg = (
        intro
        + f"numerical:{n}\nanalytical:{a}\n\n"
        + f"The max per-element difference (slow mode) is: {_max_abs(a - n)!r}.\n"
        + _largest_difference(a, n, rtol, atol, inp, out)
    )
    if _allclose(a, n, rtol, atol):
        msg += (
            "\nThe element-wise differences are within the tolerances: slow mode would have "
            "passed.\nFast mode adds the per-element tolerance atol over all entries weighted by "
            "the random vectors,\nwhich can be tighter for some Jacobians; rerun with fast_mode=False "
            "to confirm.\n"
        )
    return msg


# ---------------------------------------------------------------------------
# Forward mode: Jacobians from tangents (check_forward_ad).


def _float_output_positions(func_out: Any) -> list[int]:
    """Where the floating outputs are: forward mode compares all of them
    (an output without a tangent has a zero one)."""
    return [k for k, o in enumerate(_as_tuple(func_out)) if _is_float_tensor(o)]


def _output_tangents(
    func: Callable[..., Any],
    inputs: tuple[Any, ...],
    positions: list[int],
    float_positions: list[int],
    tangents: dict[int, Tensor],
) -> list[tuple[Tensor, Tensor | None]]:
    """Runs ``func`` inside the open dual level with ``make_dual(input,
    tangent)`` for the inputs in ``tangents`` and detached copies of the other
    inputs that require grad; returns each floating output with its tangent
    (``None`` when it has none)."""
    args = [x.detach() if k in positions else x for k, x in enumerate(inputs)]
    for pos, tangent in tangents.items():
        args[pos] = fwAD.make_dual(args[pos], tangent)
    outs = _as_tuple(func(*args))
    result = []
    for k in float_positions:
        if k >= len(outs) or not _is_float_tensor(outs[k]):
            got = type(outs[k]).__name__ if k < len(outs) else "missing"
            raise GradcheckError(
                "Expected `func` to return the same outputs when its inputs are dual tensors "
                f"(forward AD), but output {k} is now {got}."
            )
        result.append((outs[k], fwAD.unpack_dual(outs[k]).tangent))
    return result


def _flat_tangents(pairs: list[tuple[Tensor, Tensor | None]]) -> list[Tensor]:
    """The tangents as flat float64 (complex128 for a complex output)
    vectors (zeros for ``None``)."""
    return [
        _zeros((o.numel(),), _wide_dtype(o)) if t is None else _widen(t.detach()).reshape(-1)
        for o, t in pairs
    ]


def _one_hot(inp: Tensor, flat: int) -> Tensor:
    t = _core.zeros(tuple(inp.shape), dtype=inp.dtype)
    t.view(-1)[flat] = 1.0
    return t


def _forward_jacobians(
    func: Callable[..., Any],
    func_out: Any,
    inputs: tuple[Any, ...],
    positions: list[int],
    float_positions: list[int],
) -> list[list[Tensor]]:
    """``jac[j][i]``: the Jacobian of floating output ``i`` w.r.t. input
    ``j`` (``(input.numel(), output.numel())``, float64 or complex128 for a
    complex output), built row by row: row ``r`` is the output's tangent for
    the one-hot tangent ``e_r``."""
    out_tuple = _as_tuple(func_out)
    out_numels = [out_tuple[k].numel() for k in float_positions]
    out_dtypes = [_wide_dtype(out_tuple[k]) for k in float_positions]
    jacobians = []
    with fwAD.dual_level():
        for pos in positions:
            inp = inputs[pos]
            rows = [
                _flat_tangents(
                    _output_tangents(func, inputs, positions, float_positions, {pos: _one_hot(inp, r)})
                )
                for r in range(inp.numel())
            ]
            per_output = []
            for i, numel in enumerate(out_numels):
                if not rows or numel == 0:
                    per_output.append(_zeros((len(rows), numel), out_dtypes[i]))
                else:
                    per_output.append(_core.stack([row[i] for row in rows]))
            jacobians.append(per_output)
    return jacobians


def _slow_forward_gradcheck(
    func: Callable[..., Any],
    func_out: Any,
    inputs: tuple[Any, ...],
    eps: float,
    rtol: float,
    atol: float,
    prefix: _Prefix = _no_prefix,
) -> None:
    positions = _diff_input_positions(inputs)
    float_positions = _float_output_positions(func_out)
    out_tuple = _as_tuple(func_out)
    analytical = _forward_jacobians(func, func_out, inputs, positions, float_positions)
    for j, pos in enumerate(positions):
        numerical = _numerical_jacobians(func, inputs, pos, eps)
        for i, k in enumerate(float_positions):
            n = numerical[k]
            a = analytical[j][i]
            if n is None or _allclose(a, n, rtol, atol):
                continue
            raise GradcheckError(
                _mismatch_message(i, j, n, a, forward=True, prefix=prefix(i, j))
                + _largest_difference(a, n, rtol, atol, inputs[pos], out_tuple[k])
                + _positions_note(j, positions)
            )


def _fast_forward_gradcheck(
    func: Callable[..., Any],
    func_out: Any,
    inputs: tuple[Any, ...],
    eps: float,
    rtol: float,
    atol: float,
    prefix: _Prefix = _no_prefix,
) -> None:
    # One random unit tangent u per input: J u from one forward-mode pass
    # against J u from one central difference along u, entry by entry.
    positions = _diff_input_positions(inputs)
    float_positions = _float_output_positions(func_out)
    out_tuple = _as_tuple(func_out)
    gen = _core.Generator()
    gen.manual_seed(_FAST_MODE_SEED)
    all_u = [_unit_vector(inputs[p].numel(), gen) for p in positions]
    numerical = [
        _central_difference(func, inputs, inputs[pos], u * eps, None, u * eps)
        for pos, u in zip(positions, all_u, strict=True)
    ]
    with fwAD.dual_level():
        analytical = [
            _flat_tangents(
                _output_tangents(
                    func,
                    inputs,
                    positions,
                    float_positions,
                    {pos: u.reshape(tuple(inputs[pos].shape)).to(inputs[pos].dtype)},
                )
            )
            for pos, u in zip(positions, all_u, strict=True)
        ]
    for j, (pos, u) in enumerate(zip(positions, all_u, strict=True)):
        tol = _adjusted_atol(atol, u, None)
        for i, k in enumerate(float_positions):
            n = numerical[j][k]
            a = analytical[j][i]
            if n is None or _allclose(a, n, rtol, tol):
                continue
            full_n = _numerical_jacobians(func, inputs, pos, eps)[k]
            full_a = _forward_jacobians(func, func_out, inputs, positions, float_positions)[j][i]
            intro = (
                "\nThe vectors above are J u for a random unit vector u over the input, computed in "
                "fast mode\n(numerically by a central difference along u, analytically by one "
                "forward-mode pass with\ntangent u). The full Jacobians, recomputed in slow mode:\n\n"
            )
            raise GradcheckError(
                _mismatch_message(i, j, n, a, forward=True, prefix=prefix(i, j))
                + _positions_note(j, positions)
                + _full_jacobians_report(intro, full_n, full_a, rtol, atol, inputs[pos], out_tuple[k])  # type: ignore[arg-type]
            )


def _test_undefined_forward_mode(func: Callable[..., Any], inputs: tuple[Any, ...], func_out: Any) -> None:
    # An input without a tangent must count as one with a zero tangent.
    positions = _diff_input_positions(inputs)
    float_positions = _float_output_positions(func_out)
    gen = _core.Generator()
    gen.manual_seed(_FORWARD_AD_SEED)
    tangents = {p: _randn(inputs[p].shape, gen, inputs[p].dtype) for p in positions}
    with fwAD.dual_level():
        for j, pos in enumerate(positions):
            zero = dict(tangents)
            zero[pos] = _core.zeros(tuple(inputs[pos].shape), dtype=inputs[pos].dtype)
            absent = {p: t for p, t in tangents.items() if p != pos}
            with_zero = _flat_tangents(_output_tangents(func, inputs, positions, float_positions, zero))
            without = _flat_tangents(_output_tangents(func, inputs, positions, float_positions, absent))
            for i, (a, b) in enumerate(zip(with_zero, without, strict=True)):
                if _allclose(a, b, 1e-5, 1e-8):
                    continue
                raise GradcheckError(
                    f"Mismatch in tangent values for output {i} when input {j} has an undefined tangent: "
                    "forward AD must treat an input without a tangent as one with a zero tangent.\n"
                    f"With a zero tangent:\n{a}\nWithout a tangent:\n{b}\n"
                    "Pass check_undefined_grad=False to skip this check."
                )


_BATCHED_FORWARD_GRAD_HELP = (
    "gradcheck failed while testing batched forward-mode AD: the tangents computed in one batched "
    "dual level (tangents with a leading batch dim, one tangent per row) must be the stack of the "
    "tangents computed one row at a time. Pass check_batched_forward_grad=False to skip this check."
)

_FORWARD_BATCH = 3


def _test_batched_forward_grad(func: Callable[..., Any], inputs: tuple[Any, ...], func_out: Any) -> None:
    positions = _diff_input_positions(inputs)
    float_positions = _float_output_positions(func_out)
    gen = _core.Generator()
    gen.manual_seed(_FORWARD_AD_SEED + 1)
    for j, pos in enumerate(positions):
        inp = inputs[pos]
        batch = _randn((_FORWARD_BATCH, *inp.shape), gen, inp.dtype)
        with fwAD.dual_level():
            rows = [
                _output_tangents(func, inputs, positions, float_positions, {pos: batch[b]})
                for b in range(_FORWARD_BATCH)
            ]
            expected = [
                _core.stack(
                    [
                        t.detach() if t is not None else _core.zeros(tuple(o.shape), dtype=o.dtype)
                        for o, t in column
                    ]
                )
                for column in zip(*rows, strict=True)
            ]
        _core._enter_dual_level(batch=_FORWARD_BATCH)
        try:
            got = _output_tangents(func, inputs, positions, float_positions, {pos: batch})
            result = [
                t.detach() if t is not None else _core.zeros((_FORWARD_BATCH, *o.shape), dtype=o.dtype)
                for o, t in got
            ]
        except GradcheckError:
            raise
        except RuntimeError as ex:
            raise GradcheckError(
                "While computing batched gradients with forward-mode AD, got: "
                f"{ex}\n\n{_BATCHED_FORWARD_GRAD_HELP}"
            ) from ex
        finally:
            _core._exit_dual_level()
        for i, (res, exp) in enumerate(zip(result, expected, strict=True)):
            if tuple(res.shape) == tuple(exp.shape) and _allclose(res, exp, 1e-5, 1e-8):
                continue
            raise GradcheckError(
                f"For output {i} and input {j}:\n\n{_BATCHED_FORWARD_GRAD_HELP}\n\n"
                f"Got:\n{res}\n\nExpected:\n{exp}"
            )


# ---------------------------------------------------------------------------
# Extra checks run after the Jacobians agree.


_BATCHED_GRAD_HELP = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation: "
    "autograd.grad(..., is_grads_batched=True) with a stack of grad_outputs must give the stack "
    "of the gradients computed one grad_output at a time. Pass check_batched_grad=False to skip "
    "this check."
)


def _test_batched_grad(inputs: tuple[Any, ...], output: Tensor, output_idx: int) -> None:
    from . import grad as autograd_grad

    diff_inputs = [inputs[p] for p in _diff_input_positions(inputs)]

    def materialize(grads: Sequence[Tensor | None], batch: tuple[int, ...]) -> list[Tensor]:
        return [
            g if g is not None else _core.zeros(batch + tuple(inp.shape), dtype=inp.dtype)
            for g, inp in zip(grads, diff_inputs, strict=True)
        ]

    gen = _core.Generator()
    gen.manual_seed(_BATCHED_GRAD_SEED)
    grad_outputs = [_randn(output.shape, gen, output.dtype) for _ in range(2)]
    singles = [
        materialize(autograd_grad(output, diff_inputs, g, retain_graph=True, allow_unused=True), ())
        for g in grad_outputs
    ]
    expected = [_core.stack(list(shards)) for shards in zip(*singles, strict=True)]
    try:
        batched = autograd_grad(
            output,
            diff_inputs,
            _core.stack(grad_outputs),
            retain_graph=True,
            allow_unused=True,
            is_grads_batched=True,
        )
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{_BATCHED_GRAD_HELP}") from ex
    result = materialize(batched, (len(grad_outputs),))
    for input_idx, (res, exp) in enumerate(zip(result, expected, strict=True)):
        if tuple(res.shape) == tuple(exp.shape) and _allclose(res, exp, 1e-5, 1e-8):
            continue
        raise GradcheckError(
            f"For output {output_idx} and input {input_idx}:\n\n{_BATCHED_GRAD_HELP}\n\n"
            f"Got:\n{res}\n\nExpected:\n{exp}"
        )


def _test_backward_mul_by_grad_output(outputs: tuple[Tensor, ...], inputs: tuple[Any, ...]) -> None:
    # A backward that forgets to multiply by grad_output gives nonzero
    # gradients for zero grad_outputs.
    from . import grad as autograd_grad

    diff_inputs = [inputs[p] for p in _diff_input_positions(inputs)]
    grads = autograd_grad(
        list(outputs),
        diff_inputs,
        [_core.zeros_like(o) for o in outputs],
        allow_unused=True,
    )
    for gi, di in zip(grads, diff_inputs, strict=True):
        if gi is None:
            continue
        if not bool((gi == 0).all().item()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")


def _warn_undefined_grad_check() -> None:
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is enabled by "
        "default, but it may break existing callers of this function. If this is true for you, "
        'you can call this function with "check_undefined_grad=False" to disable the feature',
        UserWarning,
        stacklevel=5,
    )


_UNDEFINED_GRAD_HELP = (
    "A node's backward may receive an undefined (None) gradient for an output that did not "
    "take part in the backward pass, and must then act as if that gradient were zero."
)


def _test_undefined_grad(func: Callable[..., Any], inputs: tuple[Any, ...]) -> None:
    from . import grad as autograd_grad

    diff_inputs = [inputs[p] for p in _diff_input_positions(inputs)]

    def check(outs: list[Tensor]) -> None:
        try:
            grads = autograd_grad(outs, diff_inputs, [_core.zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            _warn_undefined_grad_check()
            raise GradcheckError(
                f"Expected backward function to handle undefined output grads. {_UNDEFINED_GRAD_HELP}"
            ) from e
        for gi in grads:
            if gi is not None and not bool((gi == 0).all().item()):
                _warn_undefined_grad_check()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    f"undefined or zero. {_UNDEFINED_GRAD_HELP}"
                )

    undefined = _core._undefined_grad
    # Every output's gradient undefined at once ...
    check([undefined(o) for o in _differentiable_outputs(func(*inputs))])
    # ... then, with several outputs, one at a time.
    n_outputs = len(_differentiable_outputs(func(*inputs)))
    if n_outputs > 1:
        for which in range(n_outputs):
            outs = _differentiable_outputs(func(*inputs))
            check([undefined(o) if k == which else o for k, o in enumerate(outs)])


# ---------------------------------------------------------------------------
# Complex inputs and outputs (as torch): reverse mode checks the real part
# and the imaginary part of the complex outputs as two real functions (the
# gradients autograd gives complex inputs are those of real outputs);
# forward mode checks ``func`` as a function of the real part and of the
# imaginary part of the complex inputs (tangents of real inputs are real).
# The imaginary part goes first in both.

_PARTS = (("imag", "imaginary"), ("real", "real"))


def _complex_input_positions(inputs: tuple[Any, ...]) -> list[int]:
    return [k for k, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad and x.is_complex()]


def _output_part(func: Callable[..., Any], attr: str) -> Callable[..., tuple[Any, ...]]:
    """``func`` with each complex output replaced by its ``.real`` or ``.imag``."""

    def part_func(*args: Any) -> tuple[Any, ...]:
        outs = _as_tuple(func(*args))
        return tuple(getattr(o, attr) if isinstance(o, Tensor) and o.is_complex() else o for o in outs)

    return part_func


def _input_part(
    func: Callable[..., Any], inputs: tuple[Any, ...], attr: str
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``func`` as a function of the ``.real`` (or ``.imag``) part of each
    complex input that requires grad, the other part held at its value in
    ``inputs``; and the inputs to call it with (those parts, as leaves that
    require grad, in place of the complex inputs)."""
    fixed = {k: inputs[k].detach() for k in _complex_input_positions(inputs)}

    def part_func(*args: Any) -> Any:
        new_args = list(args)
        for k, z in fixed.items():
            if attr == "real":
                new_args[k] = _core.complex(args[k], z.imag)
            else:
                new_args[k] = _core.complex(z.real, args[k])
        return func(*new_args)

    part_inputs = tuple(
        getattr(fixed[k], attr).clone().requires_grad_(True) if k in fixed else x
        for k, x in enumerate(inputs)
    )
    return part_func, part_inputs


def _backward_parts(
    func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...]
) -> list[tuple[Callable[..., Any], Any, _Prefix]]:
    """The functions reverse mode checks: ``func`` itself when no output is
    complex, else its imaginary and its real part."""
    if not any(isinstance(o, Tensor) and o.is_complex() for o in _as_tuple(func_out)):
        return [(func, func_out, _no_prefix)]
    complex_outputs = [i for i, o in enumerate(_differentiable_outputs(func_out)) if o.is_complex()]
    parts = []
    for attr, name in _PARTS:
        part_func = _output_part(func, attr)
        prefix = _part_prefix(name, "outputs", complex_outputs, by_input=False)
        parts.append((part_func, part_func(*inputs), prefix))
    return parts


def _forward_parts(
    func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...]
) -> list[tuple[Callable[..., Any], tuple[Any, ...], Any, _Prefix]]:
    """The functions forward mode checks, with their inputs: ``func`` itself
    when no input that requires grad is complex, else ``func`` of the
    imaginary and of the real parts of the complex inputs."""
    complex_positions = _complex_input_positions(inputs)
    if not complex_positions:
        return [(func, inputs, func_out, _no_prefix)]
    # Inputs are numbered among those that require grad in the messages.
    complex_inputs = [j for j, p in enumerate(_diff_input_positions(inputs)) if p in complex_positions]
    parts = []
    for attr, name in _PARTS:
        part_func, part_inputs = _input_part(func, inputs, attr)
        prefix = _part_prefix(name, "inputs", complex_inputs, by_input=True)
        parts.append((part_func, part_inputs, part_func(*part_inputs), prefix))
    return parts


# ---------------------------------------------------------------------------
# Public API.

_P = ParamSpec("_P")


class _GradcheckFunction(Protocol[_P]):
    """The type of ``gradcheck``: the function, plus the module-style name
    ``gradcheck.GradcheckError`` set at the end of this module."""

    GradcheckError: type[GradcheckError]

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> bool: ...


def _with_module_names(fn: Callable[_P, bool]) -> _GradcheckFunction[_P]:
    return fn  # type: ignore[return-value]  # GradcheckError is set below


@_with_module_names
def gradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    r"""Checks the gradients autograd computes for ``func`` against float64
    central finite differences, for every tensor in ``inputs`` that requires
    grad (only those are differentiated; other arguments are passed through).

    Entry by entry, the analytical Jacobian ``a`` must match the numerical
    one ``n``: ``|a - n| <= atol + rtol * |n|`` (``allclose``). The backward
    must also be deterministic (up to ``nondet_tol``), give zero gradients
    for zero ``grad_outputs`` and accept undefined output gradients.

    Complex inputs are moved along their real and their imaginary part;
    complex outputs are checked through their imaginary and their real part
    (use complex128 inputs, as float64 for real ones).

    Args:
        func (callable): takes the inputs and returns a Tensor or a tuple
            of Tensors.
        inputs (Tensor or tuple): a Tensor or a tuple of inputs. Use float64
            tensors: the default tolerances are meant for double precision.

    Keyword args:
        eps (float): the finite-difference step. Default: ``1e-6``.
        atol (float): absolute tolerance. Default: ``1e-5``.
        rtol (float): relative tolerance. Default: ``1e-3``.
        raise_exception (bool): raise :class:`GradcheckError` with the
            details on failure instead of returning ``False``.
            Default: ``True``.
        nondet_tol (float): how far two backward passes with the same
            inputs may differ (0.0: they must be equal). Default: ``0.0``.
        check_undefined_grad (bool): check that backward treats undefined
            output gradients as zeros. Default: ``True``.
        check_grad_dtypes (bool): check that gradients have their input's
            dtype. Default: ``False``.
        check_batched_grad (bool): check
            ``autograd.grad(..., is_grads_batched=True)`` against one call
            per grad_output. Default: ``False``.
        check_batched_forward_grad (bool): check the tangents of a batched
            dual level (a leading batch dim of tangents) against one
            unbatched level per row (needs ``check_forward_ad``).
            Default: ``False``.
        check_forward_ad (bool): also build the Jacobians in forward mode
            (one ``make_dual`` per input element with a one-hot tangent; in
            fast mode one pass with a random tangent ``u``, comparing
            ``J u``) and compare them with the numerical ones; and check
            that an input without a tangent acts as one with a zero tangent
            (with ``check_undefined_grad``). Default: ``False``.
        check_backward_ad (bool): check reverse-mode gradients.
            Default: ``True``.
        fast_mode (bool): compare ``v^T J u`` for random unit vectors ``u``,
            ``v`` instead of full Jacobians (one backward per output, one
            central difference per input); on failure the full Jacobians
            are recomputed for the message. Default: ``False``.
        masked (bool, optional): ``None`` or ``False`` only (sparse tensors
            do not exist). Default: ``None``.

    Returns:
        bool: ``True`` when every check passes (``False`` on failure when
            ``raise_exception=False``).

    Example:
        >>> x = ferrograd.tensor([0.5, 1.0, 2.0], dtype=ferrograd.float64, requires_grad=True)
        >>> ferrograd.autograd.gradcheck(ferrograd.sin, (x,))
        True
        >>> class BadSquare(ferrograd.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, t):
        ...         return t * t
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad  # wrong: should be 2 * t * grad
        >>> ferrograd.autograd.gradcheck(BadSquare.apply, (x,), raise_exception=False)
        False
    """
    if not (check_forward_ad or check_backward_ad or check_batched_grad or check_batched_forward_grad):
        raise AssertionError(
            "Expected at least one of check_forward_ad, check_backward_ad, check_batched_grad or "
            "check_batched_forward_grad to be True"
        )
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if masked:
        raise _unsupported_masked("gradcheck")
    try:
        return _gradcheck_helper(
            func,
            inputs,
            eps=eps,
            atol=atol,
            rtol=rtol,
            nondet_tol=nondet_tol,
            check_undefined_grad=check_undefined_grad,
            check_grad_dtypes=check_grad_dtypes,
            check_batched_grad=check_batched_grad,
            check_batched_forward_grad=check_batched_forward_grad,
            check_forward_ad=check_forward_ad,
            check_backward_ad=check_backward_ad,
            fast_mode=fast_mode,
        )
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float,
    atol: float,
    rtol: float,
    nondet_tol: float,
    check_undefined_grad: bool,
    check_grad_dtypes: bool,
    check_batched_grad: bool,
    check_batched_forward_grad: bool,
    check_forward_ad: bool,
    check_backward_ad: bool,
    fast_mode: bool,
) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    if check_backward_ad:
        check = _fast_gradcheck if fast_mode else _slow_gradcheck
        for part_func, part_out, prefix in _backward_parts(func, func_out, tupled_inputs):
            part_outputs = _differentiable_outputs(part_out)
            check(
                part_func,
                part_out,
                tupled_inputs,
                part_outputs,
                eps,
                rtol,
                atol,
                check_grad_dtypes,
                nondet_tol,
                prefix,
            )
    if check_forward_ad:
        forward_check = _fast_forward_gradcheck if fast_mode else _slow_forward_gradcheck
        parts = _forward_parts(func, func_out, tupled_inputs)
        for part_func, part_inputs, part_out, prefix in parts:
            if not _differentiable_outputs(part_out):
                if not check_backward_ad:
                    positions = _diff_input_positions(part_inputs)
                    _check_no_differentiable_outputs(part_func, part_inputs, positions, eps)
                continue
            forward_check(part_func, part_out, part_inputs, eps, rtol, atol, prefix)
        if check_undefined_grad:
            for part_func, part_inputs, part_out, _ in parts:
                if _differentiable_outputs(part_out):
                    _test_undefined_forward_mode(part_func, part_inputs, part_out)
        if check_batched_forward_grad:
            _test_batched_forward_grad(func, tupled_inputs, func_out)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled_inputs, o, i)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs)
        if check_undefined_grad:
            _test_undefined_grad(func, tupled_inputs)
    return True


def _random_grad_output(like: Tensor, generator: Any, noncontiguous: bool) -> Tensor:
    """Values uniform in [-1, 1), float64 unless ``like`` is floating or
    complex (a complex value has its real and imaginary parts uniform in
    [-1, 1)); with ``noncontiguous``, every other element of a wider tensor."""
    dtype = like.dtype if _is_float_tensor(like) else _core.float64
    shape = tuple(like.shape)
    if dtype.is_complex:
        real = _real_dtype(dtype)
        re = _core.rand(shape, generator=generator, dtype=real) * 2 - 1
        im = _core.rand(shape, generator=generator, dtype=real) * 2 - 1
        values = _core.complex(re, im)
    else:
        values = _core.rand(shape, generator=generator, dtype=dtype) * 2 - 1
    if noncontiguous and like.numel() > 1:
        wide = _core.zeros(shape[:-1] + (2 * shape[-1],), dtype=dtype)
        wide[..., ::2] = values
        values = wide[..., ::2]
    return values.requires_grad_(True)


def gradgradcheck(
    func: Callable[..., Tensor | Sequence[Tensor]],
    inputs: Tensor | Sequence[Any],
    grad_outputs: Tensor | Sequence[Tensor] | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    r"""Checks the gradients of the gradients of ``func``: runs
    :func:`gradcheck` on ``(inputs, grad_outputs) -> autograd.grad(func(inputs),
    inputs, grad_outputs, create_graph=True)``.

    ``grad_outputs`` default to random float64 tensors in ``[-1, 1)`` from a
    fixed seed (non-contiguous with ``gen_non_contig_grad_outputs=True``);
    they require grad, so the check covers both the inputs and the
    grad_outputs. ``check_rev_over_rev`` (default) differentiates that
    function in reverse mode, ``check_fwd_over_rev`` in forward mode (the
    backward pass then runs on dual tensors): :func:`gradcheck`'s
    ``check_backward_ad`` and ``check_forward_ad``. The other arguments are
    :func:`gradcheck`'s.

    Args:
        func (callable): takes the inputs and returns a Tensor or a tuple
            of Tensors.
        inputs (Tensor or tuple): a Tensor or a tuple of inputs (float64).
        grad_outputs (Tensor or tuple of Tensors, optional): the gradients
            with respect to ``func``'s outputs. Default: random, as above.

    Keyword args:
        eps (float): the finite-difference step. Default: ``1e-6``.
        atol (float): absolute tolerance. Default: ``1e-5``.
        rtol (float): relative tolerance. Default: ``1e-3``.
        raise_exception (bool): raise :class:`GradcheckError` on failure
            instead of returning ``False``. Default: ``True``.
        nondet_tol (float): as in :func:`gradcheck`. Default: ``0.0``.
        check_undefined_grad (bool): as in :func:`gradcheck`.
            Default: ``True``.
        check_grad_dtypes (bool): as in :func:`gradcheck`. Default: ``False``.
        check_batched_grad (bool): as in :func:`gradcheck`.
            Default: ``False``.
        fast_mode (bool): as in :func:`gradcheck`. Default: ``False``.
        masked (bool): must be ``False``. Default: ``False``.
        gen_non_contig_grad_outputs (bool): make the random
            ``grad_outputs`` non-contiguous. Default: ``False``.
        check_fwd_over_rev (bool): differentiate the gradient in forward
            mode. Default: ``False``.
        check_rev_over_rev (bool): differentiate the gradient in reverse
            mode. Default: ``True``.

    Returns:
        bool: ``True`` when every check passes.

    Example:
        >>> x = ferrograd.tensor([0.5, 1.0, 2.0], dtype=ferrograd.float64, requires_grad=True)
        >>> ferrograd.autograd.gradgradcheck(lambda t: (t * t).sin(), (x,))
        True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    if masked:
        raise _unsupported_masked("gradgradcheck")
    from . import grad as autograd_grad

    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        gen = _core.Generator()
        gen.manual_seed(_GRAD_OUTPUTS_SEED)
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_grad_output(o, gen, gen_non_contig_grad_outputs) for o in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)

    n_inputs = len(tupled_inputs)
    diff_positions = set(_diff_input_positions(tupled_inputs))

    def grads_of_func(*args: Any) -> tuple[Tensor, ...]:
        # The forward-mode check passes dual tensors that do not require
        # grad; the backward pass needs them to.
        input_args = tuple(
            x.requires_grad_(True) if k in diff_positions and not x.requires_grad else x
            for k, x in enumerate(args[:n_inputs])
        )
        outs = _differentiable_outputs(func(*input_args))
        diff_args = [x for k, x in enumerate(input_args) if k in diff_positions]
        grads = autograd_grad(
            list(outs), diff_args, list(args[n_inputs:]), create_graph=True, allow_unused=True
        )
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        grads_of_func,
        tupled_inputs + tupled_grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad,
        fast_mode=fast_mode,
        check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
    )


# The package binds the name ``gradcheck`` to the function, over this
# module's name (as torch's package does), so ``ferrograd.autograd.gradcheck``
# is the function. These attributes make the module-style spellings
# ``ferrograd.autograd.gradcheck.GradcheckError`` (and ``.gradcheck``,
# ``.gradgradcheck``) work on it too; ``from ferrograd.autograd.gradcheck
# import GradcheckError`` reaches the module itself.
gradcheck.GradcheckError = GradcheckError
gradcheck.gradcheck = gradcheck  # type: ignore[attr-defined]
gradcheck.gradgradcheck = gradgradcheck  # type: ignore[attr-defined]
