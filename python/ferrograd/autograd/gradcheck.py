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

import warnings
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, Protocol

from .. import _core
from . import forward_ad as fwAD
from ._gradcheck_jacobians import (
    _BATCHED_GRAD_SEED,
    _FORWARD_AD_SEED,
    _GRAD_OUTPUTS_SEED,
    GradcheckError,
    Tensor,
    _allclose,
    _as_tuple,
    _diff_input_positions,
    _differentiable_outputs,
    _is_float_tensor,
    _no_prefix,
    _part_prefix,
    _Prefix,
    _randn,
    _real_dtype,
)
from ._gradcheck_modes import (
    _Case,
    _check_no_differentiable_outputs,
    _fast_forward_gradcheck,
    _fast_gradcheck,
    _flat_tangents,
    _float_output_positions,
    _output_tangents,
    _slow_forward_gradcheck,
    _slow_gradcheck,
)

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]

# ---------------------------------------------------------------------------
# Features that need parts of ferrograd that do not exist yet.


def _unsupported_masked(caller: str) -> RuntimeError:
    return RuntimeError(f"{caller}: masked=True needs sparse tensors, which ferrograd does not provide yet")


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
# Forward mode: the extra checks (check_undefined_grad, check_batched_forward_grad).


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


def _check_batched_result(res: Tensor, exp: Tensor, output_idx: int, input_idx: int, help_text: str) -> None:
    """A batched result must be the stack of the unbatched ones."""
    if tuple(res.shape) == tuple(exp.shape) and _allclose(res, exp, 1e-5, 1e-8):
        return
    raise GradcheckError(
        f"For output {output_idx} and input {input_idx}:\n\n{help_text}\n\nGot:\n{res}\n\nExpected:\n{exp}"
    )


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
            _check_batched_result(res, exp, i, j, _BATCHED_FORWARD_GRAD_HELP)


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
        _check_batched_result(res, exp, output_idx, input_idx, _BATCHED_GRAD_HELP)


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
                _Case(
                    part_func, part_out, tupled_inputs, part_outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, prefix,
                )
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
            forward_check(_Case(part_func, part_out, part_inputs, (), eps, rtol, atol, prefix=prefix))
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
