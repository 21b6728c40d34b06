"""The composable transforms of ``ferrograd.func``: grad, grad_and_value,
vjp, jvp, linearize, jacrev, jacfwd and hessian.

Levels: every transform differentiates with respect to tensors it makes
itself ("lifted" arguments): a view of the argument that requires grad.
The lifted tensor is new, so a tensor the function captured by closure is
never mistaken for it, and, being a view, it keeps the argument's own
graph and forward-mode tangent: an enclosing transform (or ordinary
autograd outside) still differentiates through the result. A transform
records a graph for its own derivative only when something outside it can
see that graph (the function's graph reaches a tensor that requires grad
other than the lifted ones, or a forward-mode level is open); otherwise
its results are plain tensors, as torch.func's are.

Forward mode: ``jvp`` and ``jacfwd`` open a dual level (``jacfwd`` a
batched one whose tangents are the standard basis of the inputs, so one
call of the function gives every column). Only one dual level can be open
at a time; a forward transform nested inside another one computes the
same numbers by reverse mode instead (the double-backward trick for
``jvp``, a batched backward for ``jacfwd``), which an open level can
differentiate in turn (forward-over-reverse). Every nesting order is
therefore supported.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable
from typing import Any

from .. import _batched, _core
from .._batched import BatchedTensor
from .._batched_grad import batched_grad
from ..autograd import forward_ad
from ..autograd.functional import _grad as _functional_grad
from ..autograd.functional import _jacobian_blocks, _standard_basis
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..utils._pytree import TreeSpec, tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]

Tensor = _core.Tensor
_view_as = Tensor.view_as  # taken before any vmap routes Tensor methods


# ---------------------------------------------------------------------------
# Arguments, lifting and levels
# ---------------------------------------------------------------------------


def _check_argnums(argnums: Any, num_args: int) -> tuple[int, ...]:
    """``argnums`` as a tuple of non-negative positions (torch's errors)."""
    items = argnums if isinstance(argnums, tuple) else (argnums,)
    if isinstance(argnums, tuple) and not argnums:
        raise RuntimeError("argnums must be non-empty")
    if not all(isinstance(a, int) and not isinstance(a, bool) for a in items):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in items:
        if not -num_args <= a < num_args:
            raise RuntimeError(f"Got argnum={a}, but only {num_args} positional inputs")
        out.append(a % num_args)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums must be unique, got {argnums}")
    return tuple(out)


class _Level:
    """One running transform: grad mode outside it, and the fresh leaves
    made by it and by the transforms that ran inside it (which nothing
    outside differentiates with respect to), kept alive so their ids stay
    theirs."""

    __slots__ = ("outer_grad", "leaves")

    def __init__(self, outer_grad: bool) -> None:
        self.outer_grad = outer_grad
        self.leaves: dict[int, Tensor] = {}


_local = threading.local()


def _stack() -> list[_Level]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


@contextlib.contextmanager
def _level() -> Any:
    """Runs a transform's body: a new level, with grad mode on."""
    stack = _stack()
    level = _Level(is_grad_enabled())
    stack.append(level)
    try:
        with enable_grad():
            yield level
    finally:
        stack.pop()
        if stack:
            stack[-1].leaves.update(level.leaves)


def _lift(t: Any) -> Tensor:
    """A new tensor, equal to ``t``, that the running level differentiates
    with respect to; it keeps ``t``'s graph and tangent (see the module
    doc)."""
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    if _batched.active_levels():
        # Inside vmap: differentiate the physical tensor, batched at every
        # running level (an unbatched argument is expanded, so each row
        # gets its own gradient).
        full = _batched.to_full(t)
        return BatchedTensor(_lift_plain(full._p), full._lv)
    return _lift_plain(t)


def _lift_plain(t: Tensor) -> Tensor:
    if t.requires_grad:
        return _view_as(t, t)
    leaf = _view_as(t, t).requires_grad_()
    _stack()[-1].leaves[id(leaf)] = leaf
    return leaf


def _physical(t: Any) -> Any:
    return t._p if type(t) is BatchedTensor else t


def _leaves_at(args: tuple[Any, ...], nums: Any) -> list[Any]:
    """The leaves of the pytrees at positions ``nums``, in order."""
    return [x for a in nums for x in tree_flatten(args[a])[0]]


def _call_with(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], nums: Any,
               make: Callable[[Any], Tensor], has_aux: bool, aux_api: str) -> tuple[Any, Any, list[Tensor]]:
    """Calls ``func`` with every leaf of the pytrees at positions ``nums``
    replaced by ``make(leaf)`` (in flattening order), and splits off
    ``aux``: returns ``(out, aux, made)``."""
    new_args = list(args)
    made: list[Tensor] = []
    for a in nums:
        leaves, spec = tree_flatten(args[a])
        new = [make(x) for x in leaves]
        made.extend(new)
        new_args[a] = tree_unflatten(new, spec)
    out = func(*new_args, **kwargs)
    aux = None
    if has_aux:
        out, aux = _split_aux(out, aux_api)
    return out, aux, made


def _unpack_outputs(outs: list[Tensor], aux: Any,
                    zeros: Callable[[Tensor], Tensor]) -> tuple[list[Tensor], list[Tensor], Any]:
    """In an open dual level: the primals and tangents of ``outs`` (a
    missing tangent is ``zeros(output)``) and ``aux`` with its tensors'
    primals."""
    primals, tangents = [], []
    for o in outs:
        primal, tangent = forward_ad.unpack_dual(o)
        primals.append(primal)
        tangents.append(zeros(o) if tangent is None else tangent)
    aux = tree_map(lambda x: forward_ad.unpack_dual(x).primal if isinstance(x, Tensor) else x, aux)
    return primals, tangents, aux


def _diff_spec(args: tuple[Any, ...], argnums: Any) -> TreeSpec:
    """The spec of the differentiated arguments as returned to the user: the
    one pytree for an int ``argnums``, a tuple of pytrees otherwise."""
    if isinstance(argnums, tuple):
        return tree_flatten(tuple(args[a % len(args)] for a in argnums))[1]
    return tree_flatten(args[argnums % len(args)])[1]


def _outer_sees(outputs: list[Any]) -> bool:
    """Whether the running level's derivative must be recorded as a graph:
    grad mode was on outside it and the outputs' graph reaches a tensor
    that requires grad and is not a fresh leaf of this level or of one that
    ran inside it (an argument that required grad, a captured parameter, an
    enclosing level's input), or a dual level is open (its tangents flow
    through the derivative)."""
    if _core._current_dual_level() >= 0:
        return True
    return _reaches_outside(outputs)


def _reaches_outside(outputs: list[Any]) -> bool:
    level = _stack()[-1]
    if not level.outer_grad:
        return False
    own = level.leaves
    ts = [o for o in map(_physical, outputs) if isinstance(o, Tensor) and o.requires_grad]
    return any(id(leaf) not in own for leaf in _core._reached_leaves(ts))


def _release(t: Any, keep: bool) -> Any:
    """A result handed out of this level: as is when an outer level sees
    the graph, else detached."""
    if keep or not isinstance(t, Tensor):
        return t
    return t.detach()


def _release_tree(tree: Any, keep: bool) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_release(t, keep) for t in leaves], spec)


def _grads(outputs: list[Tensor], inputs: list[Tensor], grad_outputs: list[Tensor] | None,
           create_graph: bool, is_grads_batched: bool = False) -> list[Tensor]:
    """``autograd.functional``'s ``autograd.grad`` (outputs that need no
    grad skipped, unused inputs allowed), keeping the graph for later
    calls, with zeros for inputs the outputs do not reach (batched zeros
    in a batched call)."""
    if _batched.active_levels() or _batched.any_batched((outputs, inputs), {}):
        return _batched_grads(outputs, inputs, grad_outputs, create_graph, is_grads_batched)
    res = _functional_grad(tuple(outputs), tuple(inputs),
                           None if grad_outputs is None else tuple(grad_outputs),
                           create_graph=create_graph, retain_graph=True,
                           is_grads_batched=is_grads_batched)
    rows = grad_outputs[0].shape[0] if is_grads_batched and grad_outputs else 1
    return [g if g is not None
            else _core.zeros((rows, *x.shape), dtype=x.dtype) if is_grads_batched
            else _core.zeros_like(x)
            for g, x in zip(res, inputs, strict=True)]


def _batched_grads(outputs: list[Tensor], inputs: list[Tensor], grad_outputs: list[Tensor] | None,
                   create_graph: bool, is_grads_batched: bool) -> list[Tensor]:
    """``_grads`` inside vmap: one backward pass over the physical tensors
    gives every row's gradient, with the cotangents' rows at levels the
    graph was not recorded at (``vmap(vjp_fn)``) as the rows of one batched
    backward (see ``_batched_grad``)."""
    return batched_grad(outputs, inputs, grad_outputs, retain_graph=True, create_graph=create_graph,
                        is_grads_batched=is_grads_batched, materialize=True, skip_constant=True)


def _tensor_outputs(out: Any, api: str) -> tuple[list[Tensor], TreeSpec]:
    leaves, spec = tree_flatten(out)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(leaf)}"
            )
    return leaves, spec


def _split_aux(out: Any, api: str) -> tuple[Any, Any]:
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return out


# ---------------------------------------------------------------------------
# grad, grad_and_value, vjp
# ---------------------------------------------------------------------------


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """Returns a function that computes both the gradient and the value of
    ``func``, in one forward and one backward pass.

    Like :func:`grad`, but the returned function gives ``(gradient,
    value)`` (``(gradient, (value, aux))`` with ``has_aux``).

    Args:
        func (callable): a function returning a one-element Tensor (and an
            auxiliary object with ``has_aux``).
        argnums (int or tuple of ints): the positions of the arguments to
            differentiate with respect to. Default: ``0``.
        has_aux (bool): ``func`` returns ``(output, aux)``; ``aux`` is passed
            through undifferentiated. Default: ``False``.

    Returns:
        callable: ``f(*args, **kwargs) -> (gradient, value)``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> grad_and_value(lambda t: (t ** 2).sum())(x)
        (tensor([2., 4., 6.]), tensor(14.))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        api = "grad_and_value(f)(*args)"
        nums = _check_argnums(argnums, len(args))
        with _level():
            out, aux, lifted = _call_with(func, args, kwargs, nums, _lift, has_aux, api)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(
                    f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
                )
            keep = _outer_sees([out])
            grads = _grads([out], lifted, None, create_graph=keep)
        grads = [_release(g, keep) for g in grads]
        result = tree_unflatten(grads, _diff_spec(args, argnums))
        value = _release(out, keep)
        if has_aux:
            return result, (value, _release_tree(aux, keep))
        return result, value

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """Returns a function that computes the gradient of ``func`` with respect
    to the arguments at ``argnums``.

    ``func`` must return a one-element tensor. The gradient is shaped (and
    nested) like the differentiated arguments: a pytree for an int
    ``argnums``, a tuple of them for a tuple. Transforms compose, so
    ``grad(grad(f))`` is the second derivative, and ``vmap(grad(f))`` gives
    per-sample gradients. Tensors that ``func`` captures from outside are
    constants for this transform.

    Args:
        func (callable): a function of tensors (or of nested tuples, lists
            and dicts of tensors) returning a one-element Tensor.
        argnums (int or tuple of ints): the positions of the arguments to
            differentiate with respect to. Default: ``0``.
        has_aux (bool): ``func`` returns ``(output, aux)``; the result is
            then ``(gradient, aux)``. Default: ``False``.

    Returns:
        callable: ``f(*args, **kwargs) -> gradient``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> grad(lambda t: (t ** 2).sum())(x)
        tensor([2., 4., 6.])
        >>> grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, ferrograd.tensor([4.0, 5.0, 6.0]))
        (tensor([4., 5., 6.]), tensor([1., 2., 3.]))
        >>> grad(grad(lambda t: t.sin()))(ferrograd.tensor(0.5))  # -sin(0.5)
        tensor(-0.4794)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = inner(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Computes ``func(*primals)`` and returns a function that computes
    vector-Jacobian products at ``primals``.

    ``vjp_fn(cotangents)`` (cotangents shaped like ``func``'s output) gives
    the vector-Jacobian product with respect to every primal, a tuple shaped
    like ``primals``; it may be called many times (the graph is kept).

    Args:
        func (callable): a function of tensors (or pytrees of tensors).
        *primals: the arguments to evaluate ``func`` at.

    Keyword args:
        has_aux (bool): ``func`` returns ``(output, aux)``; ``aux`` is then
            returned as a third item. Default: ``False``.

    Returns:
        tuple: ``(output, vjp_fn)``, or ``(output, vjp_fn, aux)``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> out, vjp_fn = vjp(lambda t: t ** 2, x)
        >>> out
        tensor([1., 4., 9.])
        >>> vjp_fn(ferrograd.ones(3))
        (tensor([2., 4., 6.]),)
    """
    api = "vjp(f, *primals)"
    primal_spec = tree_flatten(primals)[1]
    with _level():
        out, aux, lifted = _call_with(func, primals, {}, range(len(primals)), _lift, has_aux, api)
        outs, out_spec = _tensor_outputs(out, api)
        keep = _outer_sees(outs)

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True,
               create_graph: bool | None = None) -> tuple[Any, ...]:
        cots, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {cot_spec}, primal output: {out_spec}"
            )
        for i, (c, o) in enumerate(zip(cots, outs, strict=True)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"vjp_fn: expected cotangents to be tensors, got {type(c)}")
            if c.shape != o.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                    f"output[{i}] has a shape of {o.shape}."
                )
        cg = keep or bool(create_graph)
        with enable_grad():
            grads = _grads(outs, lifted, cots, create_graph=cg)
        return tree_unflatten([_release(g, cg) for g in grads], primal_spec)

    value = _release_tree(out, keep)
    if has_aux:
        return value, vjp_fn, _release_tree(aux, keep)
    return value, vjp_fn


# ---------------------------------------------------------------------------
# jvp and linearize
# ---------------------------------------------------------------------------


def _check_jvp_args(primals: Any, tangents: Any, api: str) -> tuple[list[Tensor], list[Tensor], TreeSpec]:
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For example, "
            "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
            f"{p_spec} and tangents with structure {t_spec}"
        )
    for i, (p, t) in enumerate(zip(p_leaves, t_leaves, strict=True)):
        for what, x in (("primals", p), ("tangents", t)):
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{api}: Expected {what} to be a tuple of Tensors, got {type(x)}")
        if p.shape != t.shape:
            raise RuntimeError(
                f"{api}: tangent:{i} with shape {t.shape} in flattened pytree doesn't match the "
                f"shape {p.shape} of the corresponding primal."
            )
    return p_leaves, t_leaves, p_spec


def _double_backward_jvp(func: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool,
                         api: str) -> tuple[Any, list[Tensor], TreeSpec, Any, Any]:
    """Runs ``func`` once on the lifted ``primals`` and returns ``(out,
    out_leaves, out_spec, aux, product)`` where ``product(tangents,
    create_graph)`` is ``J v`` by the double-backward trick: ``u -> J^T u``
    is linear, so its vector-Jacobian product with ``v`` is ``J v``."""
    out, aux, lifted = _call_with(func, primals, {}, range(len(primals)), _lift, has_aux, api)
    outs, out_spec = _tensor_outputs(out, api)
    # The value of u never reaches the result; zeros keep inf/nan out.
    us = [_batched.zeros_like(o).requires_grad_() for o in outs]
    g = _grads(outs, lifted, us, create_graph=True)

    def product(tangents: list[Tensor], create_graph: bool) -> list[Tensor]:
        return _grads(g, us, tangents, create_graph=create_graph)

    return out, outs, out_spec, aux, product


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """Computes ``func(*primals)`` and the Jacobian-vector product ``J v`` of
    ``func`` at ``primals`` for tangents ``v``.

    Runs forward-mode AD in a dual level (one pass), or the double-backward
    trick when a dual level is already open.

    Args:
        func (callable): a function of tensors (or pytrees of tensors).
        primals (tuple): the arguments to evaluate ``func`` at.
        tangents (tuple): one tangent per primal, of the same structure and
            shapes.

    Keyword args:
        strict (bool): accepted for compatibility. Default: ``False``.
        has_aux (bool): ``func`` returns ``(output, aux)``; ``aux`` is then
            returned as a third item. Default: ``False``.

    Returns:
        tuple: ``(output, jvp_out)``, or ``(output, jvp_out, aux)``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> jvp(lambda t: t ** 2, (x,), (ferrograd.ones(3),))
        (tensor([1., 4., 9.]), tensor([2., 4., 6.]))
    """
    api = "jvp(f, primals, tangents)"
    if strict:
        raise RuntimeError(f"{api}: strict=True is not supported.")
    _, t_leaves, _ = _check_jvp_args(primals, tangents, api)
    if _core._current_dual_level() >= 0:
        with _level():
            out, outs, out_spec, aux, product = _double_backward_jvp(func, primals, has_aux, api)
            keep = _outer_sees(outs)
            res = product(t_leaves, keep)
        return _jvp_result(out, res, out_spec, aux, keep, has_aux)
    with _level():
        with forward_ad.dual_level():
            tangent_it = iter(t_leaves)
            out, aux, _ = _call_with(func, primals, {}, range(len(primals)),
                                     lambda p: forward_ad.make_dual(p, next(tangent_it)), has_aux, api)
            outs, out_spec = _tensor_outputs(out, api)
            primal_outs, tangent_outs, aux = _unpack_outputs(outs, aux, _batched.zeros_like)
        keep = _reaches_outside(primal_outs + tangent_outs)
    return _jvp_result(tree_unflatten(primal_outs, out_spec), tangent_outs, out_spec, aux, keep, has_aux)


def _jvp_result(out: Any, res: list[Tensor], out_spec: TreeSpec, aux: Any, keep: bool,
                has_aux: bool) -> tuple[Any, ...]:
    value = _release_tree(out, keep)
    result = tree_unflatten([_release(r, keep) for r in res], out_spec)
    if has_aux:
        return value, result, _release_tree(aux, keep)
    return value, result


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """Computes ``func(*primals)`` and returns a function that computes
    Jacobian-vector products at ``primals``.

    ``func`` runs once; each call of ``jvp_fn(*tangents)`` (tangents shaped
    like ``primals``) is one backward pass through the recorded gradient, so
    it pays off when many tangents are pushed through the same point.

    Args:
        func (callable): a function of tensors.
        *primals: the arguments to evaluate ``func`` at.

    Returns:
        tuple: ``(output, jvp_fn)``.

    Example:
        >>> x = ferrograd.tensor([1.0, 2.0, 3.0])
        >>> out, jvp_fn = linearize(lambda t: t ** 2, x)
        >>> jvp_fn(ferrograd.ones(3))
        tensor([2., 4., 6.])
    """
    api = "linearize"
    leaves, spec = tree_flatten(primals)
    with _level():
        out, outs, out_spec, _, product = _double_backward_jvp(func, primals, False, api)
        keep = _outer_sees(outs)

    def jvp_fn(*tangents: Any) -> Any:
        t_leaves, t_spec = tree_flatten(tangents)
        if t_spec != spec:
            raise RuntimeError(
                f"{api}: Expected the tangents to have the same python structure as the primals, "
                f"got tangents with structure {t_spec} and primals with structure {spec}"
            )
        for i, (t, p) in enumerate(zip(t_leaves, leaves, strict=True)):
            if not isinstance(t, Tensor) or t.shape != p.shape:
                shape = t.shape if isinstance(t, Tensor) else type(t)
                raise RuntimeError(
                    f"tangent:{i} with shape {shape} in flattened pytree doesn't match the shape "
                    f"{p.shape} of the corresponding primal."
                )
        with enable_grad():
            res = product(t_leaves, keep)
        return tree_unflatten([_release(r, keep) for r in res], out_spec)

    return _release_tree(out, keep), jvp_fn


# ---------------------------------------------------------------------------
# jacrev, jacfwd, hessian
# ---------------------------------------------------------------------------


def _chunks(total: int, chunk_size: int | None) -> list[range]:
    step = total if chunk_size is None else chunk_size
    return [range(s, min(s + step, total)) for s in range(0, total, max(step, 1))] or [range(0, 0)]


def _jac_tree(jac: list[list[Tensor]], out_spec: TreeSpec, args: tuple[Any, ...], argnums: Any,
              keep: bool) -> Any:
    """The Jacobian nested as torch.func nests it: the output's structure,
    and at each output leaf the structure of the differentiated
    arguments."""
    in_spec = _diff_spec(args, argnums)
    per_out = [tree_unflatten([_release(b, keep) for b in row], in_spec) for row in jac]
    return tree_unflatten(per_out, out_spec)


def _reverse_jacobian(outs: list[Tensor], lifted: list[Tensor], chunk_size: int | None,
                      keep: bool) -> list[list[Tensor]]:
    total = sum(o.numel() for o in outs)
    parts: list[list[Tensor]] = []
    for rows in _chunks(total, chunk_size):
        basis = _standard_basis(outs, total, rows)
        parts.append(_grads(outs, lifted, basis, create_graph=keep, is_grads_batched=True))
    by_input = [parts[0][j] if len(parts) == 1 else _core.cat([p[j] for p in parts])
                for j in range(len(lifted))]
    return _jacobian_blocks(by_input, outs, lifted, out_major=True)


def _check_chunk_size(chunk_size: int | None, api: str) -> None:
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"{api}: `chunk_size` should be greater than 0.")


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """Returns a function that computes the Jacobian of ``func`` with respect
    to the arguments at ``argnums`` by reverse mode.

    Every row comes from one batched backward pass (``chunk_size`` rows per
    pass if given). ``J[out][arg]`` has shape ``out.shape + arg.shape``,
    nested like the outputs and then like the arguments. Prefer it to
    :func:`jacfwd` when there are fewer outputs than inputs.

    Args:
        func (callable): a function of tensors (or pytrees of tensors).
        argnums (int or tuple of ints): the positions of the arguments to
            differentiate with respect to. Default: ``0``.

    Keyword args:
        has_aux (bool): ``func`` returns ``(output, aux)``; the result is then
            ``(jacobian, aux)``. Default: ``False``.
        chunk_size (int, optional): the most rows per backward pass.
            Default: ``None`` (all at once).

    Returns:
        callable: ``f(*args, **kwargs) -> jacobian``.

    Example:
        >>> jacrev(lambda t: t ** 2)(ferrograd.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    _check_chunk_size(chunk_size, "jacrev")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        api = "vjp(f, *primals)"
        nums = _check_argnums(argnums, len(args))
        with _level():
            out, aux, lifted = _call_with(func, args, kwargs, nums, _lift, has_aux, "jacrev(f, ...)(*args)")
            outs, out_spec = _tensor_outputs(out, api)
            keep = _outer_sees(outs)
            jac = _reverse_jacobian(outs, lifted, chunk_size, keep)
        result = _jac_tree(jac, out_spec, args, argnums, keep)
        if has_aux:
            return result, _release_tree(aux, keep)
        return result

    return wrapper


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """Returns a function that computes the Jacobian of ``func`` with respect
    to the arguments at ``argnums`` by forward mode.

    One call of ``func`` in a batched dual level whose tangents are the
    standard basis of the arguments' elements gives every column. Inside
    another forward transform (one dual level at a time) it is computed by
    reverse mode, with the same values. Prefer it to :func:`jacrev` when
    there are more outputs than inputs.

    Args:
        func (callable): a function of tensors (or pytrees of tensors).
        argnums (int or tuple of ints): the positions of the arguments to
            differentiate with respect to. Default: ``0``.
        has_aux (bool): ``func`` returns ``(output, aux)``; the result is then
            ``(jacobian, aux)``. Default: ``False``.

    Keyword args:
        randomness (str): as in :func:`vmap`. Default: ``"error"``.

    Returns:
        callable: ``f(*args, **kwargs) -> jacobian``.

    Example:
        >>> jacfwd(lambda t: t ** 2)(ferrograd.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        api = "jvp(f, primals, tangents)"
        nums = _check_argnums(argnums, len(args))
        if _core._current_dual_level() >= 0 or _batched.active_levels():
            return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        leaves = _leaves_at(args, nums)
        for x in leaves:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        total = sum(x.numel() for x in leaves)
        basis = iter(_standard_basis(leaves, total))
        with _level():
            _core._enter_dual_level(total)
            try:
                out, aux, _ = _call_with(func, args, kwargs, nums,
                                         lambda x: forward_ad.make_dual(x, next(basis)), has_aux,
                                         "jacfwd(f, ...)(*args)")
                outs, out_spec = _tensor_outputs(out, api)
                primals, tangents, aux = _unpack_outputs(
                    outs, aux, lambda o: _core.zeros((total, *o.shape), dtype=o.dtype))
            finally:
                _core._exit_dual_level()
            keep = _reaches_outside(tangents)
        jac = _jacobian_blocks(tangents, primals, leaves, out_major=False)
        result = _jac_tree(jac, out_spec, args, argnums, keep)
        if has_aux:
            return result, _release_tree(aux, keep)
        return result

    return wrapper


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """Returns a function that computes the Hessian of a scalar ``func`` with
    respect to the arguments at ``argnums``.

    It is ``jacfwd(jacrev(func, argnums), argnums)``
    (forward-over-reverse).

    Args:
        func (callable): a function returning a one-element Tensor.
        argnums (int or tuple of ints): the positions of the arguments to
            differentiate with respect to. Default: ``0``.

    Returns:
        callable: ``f(*args, **kwargs) -> hessian``.

    Example:
        >>> hessian(lambda t: (t ** 3).sum())(ferrograd.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
