"""Jacobians, Hessians and their products (torch.autograd.functional's API).

``vjp``, ``jvp``, ``vhp`` and ``hvp`` return ``(func(inputs), product)``;
``jacobian`` and ``hessian`` return the full matrices, nested as torch nests
them: one level of tuple per argument (outputs, then inputs) that was given
as a tuple.

Everything runs on reverse mode:

- ``jacobian`` builds the standard basis of the (concatenated, flattened)
  outputs and asks the Rust engine for all rows at once with a single
  ``autograd.grad(..., is_grads_batched=True)`` call, whether or not
  ``vectorize`` is set. ``hessian`` is the jacobian of the gradient.
- ``jvp`` and ``hvp`` use the double-backward trick: the backward pass is
  linear in its incoming gradient ``u``, so differentiating ``J^T u`` with
  respect to ``u`` in the direction ``v`` gives ``J v``.

``strategy="forward-mode"`` (which torch allows only with
``vectorize=True``) evaluates ``func`` once in a batched dual level whose
tangents are the standard basis of the inputs: one forward pass gives every
column. ``hessian(..., outer_jacobian_strategy="forward-mode")`` is then
forward-over-reverse: the forward-mode Jacobian of the reverse-mode
gradient.

As in torch, the inputs are detached (or, with ``create_graph=True``,
shallow-copied) before ``func`` sees them, so gradients never leak into
tensors ``func`` captured by closure, and results are detached unless
``create_graph=True``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .. import _batched, _core
from .. import autograd as _autograd  # the package (its grad is defined after this module loads)
from ..utils import _docs
from . import forward_ad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

Tensor = _core.Tensor
_STRATEGIES = ("forward-mode", "reverse-mode")
_F = TypeVar("_F", bound=Callable[..., Any])


# Docstring text that the functions below share: a docstring line ``{name}`` stands for piece
# ``name`` (see ``ferrograd.utils._docs``).
_DOC_PIECES = {
    "tensor_func_args": """\
func (callable): takes tensors and returns a Tensor or a tuple of
    Tensors.
inputs (Tensor or tuple of Tensors): the point to differentiate at.""",
    "scalar_func_args": """\
func (callable): takes tensors and returns a one-element Tensor.
inputs (Tensor or tuple of Tensors): the point to differentiate at.""",
    "v_like_inputs_arg": """\
v (Tensor or tuple of Tensors, optional): shaped like ``inputs``;
    may be omitted when there is a single one-element input.
    Default: ``None``.""",
    "create_graph_strict_args": """\
create_graph (bool): make the results differentiable (they are
    detached otherwise). Default: ``False``.
strict (bool): raise when an output does not depend on an input
    (instead of returning zeros for that part). Default: ``False``.""",
}
_with_doc_pieces = _docs.with_doc_pieces(_DOC_PIECES)


def _scalar_product_doc(name: str) -> Callable[[_F], _F]:
    """Fills the docstring of ``vhp`` or ``hvp`` (``name``), whose Args, Returns and Example
    sections (``{scalar_product_sections}``) differ only by that name."""
    sections = f"""\
Args:
    {{scalar_func_args}}
    {{v_like_inputs_arg}}
    {{create_graph_strict_args}}

Returns:
    tuple: ``(func(inputs), {name})``.

Example:
    >>> x = ferrograd.tensor([1.0, 2.0])
    >>> {name}(lambda t: (t ** 3).sum(), x, ferrograd.ones(2))
    (tensor(9.), tensor([ 6., 12.]))"""
    return _docs.with_doc_pieces({**_DOC_PIECES, "scalar_product_sections": sections})


# ---------------------------------------------------------------------------
# Argument handling
# ---------------------------------------------------------------------------


def _as_tuple(value: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Any, ...]]:
    """``(was_a_tuple, value as a tuple)``; every element must be a Tensor.

    Only a real ``tuple`` counts as a tuple (a list is one bad element), as in
    torch."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, item in enumerate(items):
        if isinstance(item, Tensor):
            continue
        where = f"value at index {i}" if was_tuple else f"given {arg_name}"
        raise TypeError(
            f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
            f"Tensors but the {where} has type {type(item)}."
        )
    return was_tuple, items


def _unpack(result: Any, was_tuple: bool | tuple[bool, bool]) -> Any:
    """Undoes the tupling of ``_as_tuple``: for a pair of flags the first is
    the outer level (outputs), the second the inner one (inputs)."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _prepare(tensors: tuple[Tensor, ...], create_graph: bool, need_graph: bool) -> tuple[Tensor, ...]:
    """Fresh tensor objects for ``func`` to see.

    With ``create_graph`` a tensor that requires grad is shallow-copied with a
    differentiable view, so the caller's graph continues through it; anything
    else becomes a new leaf that requires grad exactly when ``need_graph``.
    A new object is always made, so a tensor ``func`` captured by closure is
    never mistaken for the argument it was passed."""
    prepared = []
    for t in tensors:
        if create_graph and t.requires_grad:
            prepared.append(t.view_as(t))
        else:
            prepared.append(t.detach().requires_grad_(need_graph))
    return tuple(prepared)


def _finish(results: Any, create_graph: bool) -> Any:
    """Detaches (possibly nested) results unless the caller asked for a graph."""
    if create_graph:
        return results
    if isinstance(results, Tensor):
        return results.detach()
    return tuple(_finish(r, create_graph) for r in results)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], other_was_tuple: bool) -> None:
    """``v`` must match ``other`` (the outputs for vjp, the inputs otherwise)
    in length and in every shape."""
    if len(v) != len(other):
        if other_was_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (v_i, ref) in enumerate(zip(v, other, strict=True)):
        if v_i.size() != ref.size():
            entry = f"Entry {i} in " if other_was_tuple else ""
            raise RuntimeError(
                f"{entry}v has invalid size: should be {ref.size()} but got {v_i.size()}."
            )


def _prepare_v(v: Any, fn_name: str, other: tuple[Tensor, ...], other_was_tuple: bool,
               create_graph: bool, none_message: str) -> tuple[Tensor, ...] | None:
    if v is None:
        if len(other) != 1 or other[0].nelement() != 1:
            raise RuntimeError(none_message)
        return None
    _, v_t = _as_tuple(v, "v", fn_name)
    v_t = _prepare(v_t, create_graph, need_graph=False)
    _validate_v(v_t, other, other_was_tuple)
    return v_t


# Strict mode: what each kind of tensor being independent of the inputs means.
_REQUIRES_GRAD_MESSAGES = {
    "outputs": (
        "Output {i} of the user-provided function does not require gradients. The outputs "
        "must be computed in a differentiable manner from the input when running in strict mode."
    ),
    "grad_inputs": (
        "The gradient with respect to input {i} is independent of the inputs of the "
        "user-provided function. This is not allowed in strict mode."
    ),
    "jacobian": (
        "While computing the hessian, found that the jacobian of the user-provided function "
        "with respect to input {i} is independent of the input. This is not allowed in strict "
        "mode. You should ensure that your function is twice differentiable and that the "
        "jacobian depends on the inputs (this would be violated by a linear function for "
        "example)."
    ),
    "hessian": (
        "The hessian of the user-provided function with respect to input {i} is independent "
        "of the input. This is not allowed in strict mode. You should ensure that your "
        "function is thrice differentiable and that the hessian depends on the inputs."
    ),
}


def _check_requires_grad(tensors: tuple[Any, ...], kind: str, strict: bool) -> None:
    """In strict mode, every tensor must exist and be part of a graph."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode."
            )
        if not t.requires_grad:
            raise RuntimeError(_REQUIRES_GRAD_MESSAGES[kind].format(i=i))


def _grad(outputs: tuple[Any, ...], inputs: tuple[Tensor, ...], grad_outputs: Any = None,
          create_graph: bool = False, retain_graph: bool | None = None,
          is_grads_batched: bool = False) -> tuple[Tensor | None, ...]:
    """``autograd.grad`` that skips outputs which are None or need no grad
    (returning None for every input when nothing is left) and never
    complains about unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return _autograd.grad(
        tuple(o for o, _ in kept),
        inputs,
        tuple(g for _, g in kept),
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
        is_grads_batched=is_grads_batched,
    )


# Strict mode: what a missing gradient means at each stage.
_MISSING_GRAD_MESSAGES = {
    "back": (
        "The output of the user-provided function is independent of input {i}. "
        "This is not allowed in strict mode."
    ),
    "back_trick": (
        "The gradient with respect to the input is independent of entry {i} in the "
        "grad_outputs when using the double backward trick to compute forward mode "
        "gradients. This is not allowed in strict mode."
    ),
    "double_back": (
        "The jacobian of the user-provided function is independent of input {i}. "
        "This is not allowed in strict mode."
    ),
    "double_back_trick": (
        "The hessian of the user-provided function is independent of entry {i} in the "
        "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
        "double backward trick to replace forward mode AD."
    ),
}


def _zeros_for_missing(grads: tuple[Tensor | None, ...], refs: tuple[Tensor, ...], strict: bool,
                       create_graph: bool, stage: str) -> tuple[Tensor, ...]:
    """Replaces each missing gradient by zeros shaped like its reference
    (the mathematical value), or raises in strict mode."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING_GRAD_MESSAGES[stage].format(i=i))
            g = _core.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        filled.append(g)
    return tuple(filled)


# ---------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------


def _product(outs: tuple[Any, ...], ys: tuple[Any, ...], xs: tuple[Tensor, ...], v_t: Any,
             refs: tuple[Tensor, ...], strict: bool, create_graph: bool, stage: str,
             was_tuple: tuple[bool, bool]) -> tuple[Any, Any]:
    """The last step of vjp, jvp, vhp and hvp: the product, as the gradient of ``ys`` with
    respect to ``xs`` for the incoming gradient ``v_t`` (zeros shaped like ``refs`` where it is
    missing, see :func:`_zeros_for_missing` for ``stage``), and then ``(func(inputs),
    product)``, each unpacked as ``was_tuple`` says."""
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(ys, xs, v_t, create_graph=create_graph)
        result = _zeros_for_missing(grads, refs, strict, create_graph, stage)
    return (_unpack(_finish(outs, create_graph), was_tuple[0]),
            _unpack(_finish(result, create_graph), was_tuple[1]))


@_with_doc_pieces
def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """Computes ``func(inputs)`` and the vector-Jacobian product ``v^T J``
    of ``func`` at ``inputs``.

    One backward pass; the product is shaped like the inputs.

    Args:
        {tensor_func_args}
        v (Tensor or tuple of Tensors, optional): shaped like ``func``'s
            outputs; may be omitted when ``func`` returns a single
            one-element tensor. Default: ``None``.
        {create_graph_strict_args}

    Returns:
        tuple: ``(func(inputs), vjp)``, each nested like ``func``'s outputs
            and ``inputs`` respectively.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> vjp(lambda t: t ** 2, x, ferrograd.ones(2))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        inputs_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _prepare(ins, create_graph, need_graph=True)
        outputs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outs, "outputs", strict)
        v_t = _prepare_v(
            v, "vjp", outs, outputs_tuple, create_graph,
            "The vector v can only be None if the user-provided function returns a single "
            "Tensor with a single element.",
        )
    return _product(outs, outs, ins, v_t, ins, strict, create_graph, "back", (outputs_tuple, inputs_tuple))


@_with_doc_pieces
def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """Computes ``func(inputs)`` and the Jacobian-vector product ``J v`` of
    ``func`` at ``inputs``.

    The product is shaped like the outputs. It is computed with two
    backward passes: ``g(u) = J^T u`` is linear in ``u``, and its
    vector-Jacobian product with ``v`` is ``J v``
    (:func:`ferrograd.func.jvp` uses forward mode instead).

    Args:
        {tensor_func_args}
        {v_like_inputs_arg}
        {create_graph_strict_args}

    Returns:
        tuple: ``(func(inputs), jvp)``, both nested like ``func``'s outputs.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> jvp(lambda t: t ** 2, x, ferrograd.tensor([1.0, 0.0]))
        (tensor([1., 4.]), tensor([2., 0.]))
    """
    with enable_grad():
        inputs_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _prepare(ins, create_graph, need_graph=True)
        v_t = _prepare_v(
            v, "jvp", ins, inputs_tuple, create_graph,
            "The vector v can only be None if the input to the user-provided function is a "
            "single Tensor with a single element.",
        )
        outputs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outs, "outputs", strict)
        # The value of u never reaches the result (g is linear in u); zeros
        # keep inf/nan out of the double-backward graph.
        u = tuple(_batched.zeros_like(o).requires_grad_() for o in outs)
        g = _grad(outs, ins, u, create_graph=True)
        _check_requires_grad(g, "grad_inputs", strict)
    return _product(outs, g, u, v_t, outs, strict, create_graph, "back_trick", (outputs_tuple, outputs_tuple))


def _scalar_function_gradient(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool,
                              strict: bool, fn_name: str) -> tuple[Any, ...]:
    """The shared first half of vhp and hvp: checks, ``func(inputs)`` (which
    must be one single-element tensor) and its gradient, with a graph."""
    inputs_tuple, ins = _as_tuple(inputs, "inputs", fn_name)
    ins = _prepare(ins, create_graph, need_graph=True)
    v_t = _prepare_v(
        v, fn_name, ins, inputs_tuple, create_graph,
        "The vector v can only be None if the input to the user-provided function is a "
        "single Tensor with a single element.",
    )
    outputs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outs, "outputs", strict)
    if outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single element"
        )
    jac = _grad(outs, ins, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, ins, v_t, outs, jac


@_scalar_product_doc("vhp")
def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """Computes ``func(inputs)`` and the vector-Hessian product ``v^T H``
    of a scalar function at ``inputs``.

    One backward pass through the gradient; the product is shaped like the
    inputs.

    {scalar_product_sections}
    """
    with enable_grad():
        inputs_tuple, ins, v_t, outs, jac = _scalar_function_gradient(
            func, inputs, v, create_graph, strict, "vhp"
        )
    return _product(outs, jac, ins, v_t, ins, strict, create_graph, "double_back", (False, inputs_tuple))


@_scalar_product_doc("hvp")
def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """Computes ``func(inputs)`` and the Hessian-vector product ``H v`` of
    a scalar function at ``inputs``.

    The product is shaped like the inputs; it is computed by the
    double-backward trick (:func:`vhp` is cheaper and gives the same result
    when the Hessian is symmetric, as it is for twice continuously
    differentiable functions).

    {scalar_product_sections}
    """
    with enable_grad():
        inputs_tuple, ins, v_t, outs, jac = _scalar_function_gradient(
            func, inputs, v, create_graph, strict, "hvp"
        )
        u = tuple(_batched.zeros_like(t).requires_grad_() for t in ins)
        h_u = _grad(jac, ins, u, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    return _product(outs, h_u, u, v_t, ins, strict, create_graph, "double_back_trick", (False, inputs_tuple))


# ---------------------------------------------------------------------------
# Jacobian and Hessian
# ---------------------------------------------------------------------------


def _forward_mode_jacobian(func: Callable[..., Any], inputs: tuple[Tensor, ...]) -> Any:
    """The Jacobian of ``func`` at ``inputs`` by forward mode: ONE call of
    ``func`` in a batched dual level whose tangents are the standard basis
    of all input elements, so output ``i``'s tangent row ``r`` is column
    ``r`` of the Jacobian. Returns ``(outputs_tuple, J)`` with ``J`` nested
    outputs-then-inputs."""
    if any(_batched.is_batched(t) for t in inputs):
        raise RuntimeError(
            "jacobian(strategy='forward-mode') cannot take inputs batched by vmap; use "
            "ferrograd.func.jacfwd inside vmap instead"
        )
    numels = [t.nelement() for t in inputs]
    total = sum(numels)
    basis = _standard_basis(inputs, total)
    _core._enter_dual_level(total)
    try:
        duals = tuple(
            forward_ad.make_dual(t.detach(), b) for t, b in zip(inputs, basis, strict=True)
        )
        outputs_tuple, outs = _as_tuple(
            func(*duals), "outputs of the user-provided function", "jacobian"
        )
        tangents = []
        for out in outs:
            tangent = forward_ad.unpack_dual(out).tangent
            if tangent is None:
                tangent = _core.zeros((total, *out.shape), dtype=out.dtype)
            tangents.append(tangent)
    finally:
        _core._exit_dual_level()
    jac = _jacobian_blocks(tangents, outs, inputs, out_major=False)
    return outputs_tuple, tuple(tuple(b.detach() for b in row) for row in jac)


def _standard_basis(outputs: Any, total: int, rows: range | None = None) -> list[Tensor]:
    """Rows ``rows`` (all by default) of the ``total x total`` identity,
    split by columns among ``outputs`` and shaped ``(len(rows),
    *output.shape)`` in each one's dtype: row ``r`` is the grad_output
    that selects output element ``r`` of the outputs concatenated."""
    eye = _core.eye(total)
    if rows is not None:
        eye = eye[rows.start:rows.stop]
    count = total if rows is None else len(rows)
    basis, start = [], 0
    for out in outputs:
        n = out.nelement()
        block = eye[:, start:start + n].to(out.dtype)
        basis.append(block.reshape((count, *out.shape)))
        start += n
    return basis


def _jacobian_blocks(stacked: Any, outputs: Any, inputs: Any, out_major: bool) -> list[list[Tensor]]:
    """``J[i][j]`` of shape ``outputs[i].shape + inputs[j].shape`` from
    stacked rows: with ``out_major`` (reverse mode) ``stacked[j]`` holds,
    for input ``j``, one row per element of the outputs concatenated;
    otherwise (forward mode) ``stacked[i]`` holds, for output ``i``, one
    row per element of the inputs concatenated."""
    jac: list[list[Any]] = [[None] * len(inputs) for _ in outputs]
    if out_major:
        for j, (x, g) in enumerate(zip(inputs, stacked, strict=True)):
            start = 0
            for i, o in enumerate(outputs):
                n = o.nelement()
                jac[i][j] = g[start:start + n].reshape((*o.shape, *x.shape))
                start += n
    else:
        for i, (o, t) in enumerate(zip(outputs, stacked, strict=True)):
            start = 0
            for j, x in enumerate(inputs):
                n = x.nelement()
                block = t[start:start + n].reshape((n, o.nelement())).t()
                jac[i][j] = block.reshape((*o.shape, *x.shape))
                start += n
    return jac


def _check_strict_jacobian(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...],
                           create_graph: bool) -> None:
    """Strict mode's per-pair checks: every output must reach every input
    (and, with create_graph, through a differentiable backward). One cheap
    backward per output with zero grad_outputs finds which inputs it reaches;
    the Jacobian itself is still computed in one batched call."""
    for i, out in enumerate(outputs):
        if out.nelement() == 0:
            continue
        grads = _grad((out,), inputs, (_core.zeros_like(out),), create_graph=create_graph,
                      retain_graph=True)
        for j, g in enumerate(grads):
            if g is None:
                raise RuntimeError(
                    f"Output {i} of the user-provided function is independent of input {j}. "
                    "This is not allowed in strict mode."
                )
            if create_graph and not g.requires_grad:
                # torch names the output's index here, and so do we.
                raise RuntimeError(
                    f"The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode when create_graph=True."
                )


def _batched_jacobian(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...],
                      create_graph: bool) -> tuple[tuple[Tensor, ...], ...]:
    """``J[i][j]`` of shape ``outputs[i].shape + inputs[j].shape``, from ONE
    ``autograd.grad`` call whose batch of grad_outputs is the standard basis
    of all output elements; inputs no output reaches get zeros."""
    numels = [o.nelement() for o in outputs]
    total = sum(numels)
    differentiable = [k for k, o in enumerate(outputs) if o.requires_grad]
    grads: tuple[Tensor | None, ...] = (None,) * len(inputs)
    if total > 0 and differentiable:
        basis = _standard_basis(outputs, total)
        grads = _grad(
            tuple(outputs[k] for k in differentiable),
            inputs,
            tuple(basis[k] for k in differentiable),
            create_graph=create_graph,
            retain_graph=True,
            is_grads_batched=True,
        )
    stacked = [_core.zeros((total, *inp.shape), dtype=inp.dtype) if g is None else g
               for inp, g in zip(inputs, grads, strict=True)]
    return tuple(tuple(row) for row in _jacobian_blocks(stacked, outputs, inputs, out_major=True))


@_with_doc_pieces
def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``.

    A Tensor for one input and one output; a tuple over whichever of the
    two was a tuple; a tuple (outputs) of tuples (inputs) when both were,
    with ``J[i][j].shape == outputs[i].shape + inputs[j].shape``.

    All rows come from one batched backward pass in the Rust engine, for
    ``vectorize=False`` as well as ``vectorize=True`` (the flag only
    changes which ``strict`` checks torch allows).

    Args:
        {tensor_func_args}
        {create_graph_strict_args}
        vectorize (bool): accepted for compatibility (the computation is
            always batched); ``strict`` cannot be combined with it.
            Default: ``False``.
        strategy (str): ``"reverse-mode"`` (one batched backward pass) or
            ``"forward-mode"`` (one batched forward pass with dual tensors,
            cheaper when there are more outputs than inputs; needs
            ``vectorize=True``). Default: ``"reverse-mode"``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> jacobian(lambda t: t ** 2, x)
        tensor([[2., 0.],
                [0., 4.]])
        >>> jacobian(lambda a, b: a * b, (x, ferrograd.tensor([3.0, 4.0])))
        (tensor([[3., 0.],
                [0., 4.]]), tensor([[1., 0.],
                [0., 2.]]))
    """
    if strategy not in _STRATEGIES:
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.'
            )
        inputs_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is "
                "only implemented for `vectorize=True`."
            )
        outputs_tuple, jac = _forward_mode_jacobian(func, ins)
        return _unpack(jac, (outputs_tuple, inputs_tuple))

    with enable_grad():
        inputs_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _prepare(ins, create_graph, need_graph=True)
        outputs_tuple, outs = _as_tuple(
            func(*ins), "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outs, "outputs", strict)
        if strict:
            if vectorize:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`."
                )
            _check_strict_jacobian(outs, ins, create_graph)
        jac = _batched_jacobian(outs, ins, create_graph)
    return _unpack(_finish(jac, create_graph), (outputs_tuple, inputs_tuple))


@_with_doc_pieces
def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar ``func`` at ``inputs``: a Tensor of shape
    ``input.shape + input.shape`` for one input, else a tuple of tuples with
    ``H[i][j].shape == inputs[i].shape + inputs[j].shape``.

    Built as torch builds it: the jacobian (outer) of the gradient (inner,
    always reverse mode, with a graph).

    Args:
        {scalar_func_args}
        {create_graph_strict_args}
        vectorize (bool): as in :func:`jacobian`. Default: ``False``.
        outer_jacobian_strategy (str): the strategy of the outer Jacobian:
            ``"reverse-mode"`` or ``"forward-mode"`` (forward-over-reverse,
            needs ``vectorize=True``). Default: ``"reverse-mode"``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0])
        >>> hessian(lambda t: (t ** 3).sum(), x)
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    inputs_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*args: Tensor) -> Tensor:
        out = func(*args)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        return out.squeeze()

    def gradient(*args: Tensor) -> tuple[Tensor, ...]:
        if outer_jacobian_strategy == "forward-mode":
            args = tuple(a.requires_grad_(True) for a in args)
        g = jacobian(scalar_func, args, create_graph=True)
        _check_requires_grad(g, "jacobian", strict)
        return g

    res = jacobian(gradient, ins, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(res, (inputs_tuple, inputs_tuple))
