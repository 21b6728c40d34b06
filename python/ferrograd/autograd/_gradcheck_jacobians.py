"""The Jacobians gradcheck compares, and what its checks share.

The numerical side moves the inputs in place and takes float64 central
differences; the analytical side runs vector-Jacobian products with
``autograd.grad``. Also here: :class:`GradcheckError`, the small tensor
helpers and the failure messages. See ``gradcheck.py`` for the layout of
the Jacobians and the handling of complex numbers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Sequence
from typing import Any

from .. import _core
from .grad_mode import no_grad

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

    # Raised, documented and pickled as ferrograd.autograd.gradcheck.GradcheckError.
    __module__ = "ferrograd.autograd.gradcheck"


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


def _diff_output_positions(func_out: Any) -> list[int]:
    """Where the outputs that require grad are among the outputs of ``func``."""
    return _diff_input_positions(_as_tuple(func_out))


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
