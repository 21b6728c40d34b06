"""Gradients while vmap runs: ``autograd.grad`` and the gradients of the
``ferrograd.func`` transforms when an argument is a batched tensor.

A graph is built at the vmap levels that were running when it was
recorded (its *graph levels*): its physical tensors carry one batch dim
per graph level in front, and the rows never mix, so one backward pass
over the physical tensors gives every row's gradient. A gradient can be
asked for inside more levels than that: ``vjp_fn = vjp(f, x)[1]`` records
``f`` outside a vmap and ``vmap(vjp_fn)(cotangents)`` then needs one
vector-Jacobian product per cotangent row. Those *extra levels* (levels
the cotangents are batched at and the graph is not) become the rows of
one batched backward (the engine's ``is_grads_batched``): the cotangents'
extra batch dims are flattened into one leading dim, and each result's
rows are put back at their levels. Summing the cotangents over the extra
levels instead (what a plain backward through an ``expand`` would do) is
the wrong answer this module exists to avoid.

Every input must be batched at exactly the graph levels: an input made
outside a vmap that its outputs are batched at has one physical gradient
for all the rows (the rows' contributions summed), not one per row, so
that case raises, as torch does.
"""

from __future__ import annotations

import math
from typing import Any

from . import _core
from ._batched import BatchedTensor, full_levels, logical_shape, physical, wrap

Tensor = _core.Tensor


def _levels_of(x: Any) -> tuple[int, ...]:
    return x._lv if type(x) is BatchedTensor else ()


def batched_grad(outputs: list[Any], inputs: list[Any], grad_outputs: list[Any] | None, *,
                 retain_graph: bool | None, create_graph: bool, is_grads_batched: bool,
                 materialize: bool, skip_constant: bool) -> list[Any]:
    """``autograd.grad(outputs, inputs, grad_outputs)`` for arguments that
    may be batched tensors of the running vmap levels; returns one gradient
    per input (``None`` for an unused input unless ``materialize``), batched
    at the graph's and the cotangents' levels.

    ``skip_constant`` drops outputs that do not require grad (the func
    transforms' convention) instead of letting the engine reject them.
    """
    levels, sizes = full_levels()
    gos: list[Any] = list(grad_outputs) if grad_outputs is not None else [None] * len(outputs)
    graph_set = {lv for t in (*outputs, *inputs) for lv in _levels_of(t)}
    cot_set = {lv for g in gos for lv in _levels_of(g)}
    stale = (graph_set | cot_set) - set(levels)
    if stale:
        raise RuntimeError(
            "vmap: autograd.grad got a tensor batched at a vmap level that is no longer running (it "
            "escaped from the function being vmapped); return it from that function instead"
        )
    graph = tuple(lv for lv in levels if lv in graph_set)
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and _levels_of(x) != graph:
            raise RuntimeError(
                f"vmap: autograd.grad with respect to input {i}, which is batched at vmap levels "
                f"{list(_levels_of(x))} while the graph is batched at {list(graph)}: each row would "
                "get the sum of every row's gradient. Differentiate inside the vmapped function with "
                "ferrograd.func.grad or ferrograd.func.vjp instead"
            )
    # Levels of the cotangents that the graph lacks: one backward row each.
    extra = tuple(lv for lv in levels if lv in cot_set and lv not in graph_set)
    merged = tuple(lv for lv in levels if lv in graph_set or lv in cot_set)
    row_sizes = [sizes[lv] for lv in extra]
    u = 1 if is_grads_batched else 0
    rows_batched = bool(extra) or is_grads_batched

    # The user's own rows (``is_grads_batched``) lead each cotangent's
    # logical shape.
    user_rows = next((logical_shape(g)[0] for g in gos if g is not None), 0) if u else 0
    outs, seeds = [], []
    for i, (o, g) in enumerate(zip(outputs, gos, strict=True)):
        p = physical(o, graph, sizes)
        if skip_constant and not p.requires_grad:
            continue
        outs.append(p)
        if g is None:
            if math.prod(logical_shape(o)) != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            seed = _core.ones_like(p)
            if rows_batched:
                seed = seed.expand(math.prod(row_sizes), *seed.shape)
            seeds.append(seed)
            continue
        shape = logical_shape(g)[u:]
        if tuple(shape) != tuple(logical_shape(o)):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {list(shape)} and output[{i}] has "
                f"a shape of {list(logical_shape(o))}."
            )
        q = physical(g, merged, sizes)  # [merged levels..., user rows?, logical...]
        first = [merged.index(lv) for lv in extra] + ([len(merged)] if u else [])
        rest = [merged.index(lv) for lv in graph] + list(range(len(merged) + u, q.dim()))
        if first != list(range(len(first))):
            q = q.permute(first + rest)
        if rows_batched:
            q = q.reshape(-1, *q.shape[len(first):])
        seeds.append(q)

    if not outs:
        res: list[Any] = [None] * len(inputs)
    else:
        ins = [physical(x, graph, sizes) for x in inputs]
        res = _core._grad(outs, ins, seeds, create_graph if retain_graph is None else retain_graph,
                          create_graph, True, rows_batched, False)

    row_shape = row_sizes + ([user_rows] if u else [])
    result = []
    for x, g in zip(inputs, res, strict=True):
        if g is None:
            if not materialize or not isinstance(x, Tensor):
                result.append(None)
                continue
            px = physical(x, graph, sizes)
            g = _core.zeros((*row_shape, *px.shape), dtype=px.dtype)
        elif rows_batched:
            g = g.reshape(*row_shape, *g.shape[1:])
        # g: [extra levels..., user rows?, graph levels..., logical...]; the
        # result puts every level in running order, then the user rows.
        at = {lv: j for j, lv in enumerate(extra)}
        at.update({lv: len(extra) + u + j for j, lv in enumerate(graph)})
        head = len(extra) + u + len(graph)
        perm = [at[lv] for lv in merged] + ([len(extra)] if u else []) + list(range(head, g.dim()))
        if perm != list(range(g.dim())):
            g = g.permute(perm)
        result.append(wrap(g, merged))
    return result
