"""How gradcheck compares the Jacobians: slow mode (full Jacobians), fast
mode (one random direction per input and per output) and forward mode
(Jacobians built from tangents, ``check_forward_ad``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .. import _core
from . import forward_ad as fwAD
from ._gradcheck_jacobians import (
    _FAST_MODE_SEED,
    GradcheckError,
    Tensor,
    _allclose,
    _analytical_jacobians,
    _as_tuple,
    _central_difference,
    _check_analytical_attributes,
    _conj_wirtinger,
    _diff_input_positions,
    _diff_output_positions,
    _is_float_tensor,
    _largest_difference,
    _max_abs,
    _mismatch_message,
    _no_prefix,
    _numerical_jacobians,
    _one_hot_cotangents,
    _positions_note,
    _Prefix,
    _wide_dtype,
    _widen,
    _zeros,
)


class _Case(NamedTuple):
    """What one gradcheck mode checks: ``func`` (whose result at ``inputs`` is ``func_out``,
    with the differentiable ``outputs`` that backward checks go through), the finite-difference
    step and tolerances, and the ``prefix`` of its error messages. Forward checks use neither
    ``outputs`` nor ``check_grad_dtypes`` and ``nondet_tol``."""

    func: Callable[..., Any]
    func_out: Any
    inputs: tuple[Any, ...]
    outputs: tuple[Tensor, ...]
    eps: float
    rtol: float
    atol: float
    check_grad_dtypes: bool = False
    nondet_tol: float = 0.0
    prefix: _Prefix = _no_prefix


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


def _slow_gradcheck(case: _Case) -> None:
    func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, prefix = case
    positions = _diff_input_positions(inputs)
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, positions, eps)
        return
    diff_out_positions = _diff_output_positions(func_out)
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


def _fast_gradcheck(case: _Case) -> None:
    func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, prefix = case
    positions = _diff_input_positions(inputs)
    diff_inputs = [inputs[p] for p in positions]
    gen = _core.Generator()
    gen.manual_seed(_FAST_MODE_SEED)
    all_u = [_unit_direction(t, gen) for t in diff_inputs]
    all_v = [_unit_vector(o.numel(), gen) for o in outputs]

    if not outputs:
        _check_no_differentiable_outputs(func, inputs, positions, eps, all_u)
        return

    diff_out_positions = _diff_output_positions(func_out)
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
    diff_out_positions = _diff_output_positions(func(*inputs))
    diff_inputs = [inputs[p] for p in positions]
    n = _numerical_jacobians(func, inputs, positions[j], eps)[diff_out_positions[i]]
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


def _slow_forward_gradcheck(case: _Case) -> None:
    func, func_out, inputs, _, eps, rtol, atol, _, _, prefix = case
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


def _fast_forward_gradcheck(case: _Case) -> None:
    func, func_out, inputs, _, eps, rtol, atol, _, _, prefix = case
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
