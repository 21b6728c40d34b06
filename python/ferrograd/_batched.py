"""Batched tensors and vmap levels: the data model under ``vmap``.

A batched tensor stands for a tensor of its *logical* shape inside the
function being vmapped; it holds one *physical* tensor whose leading
dimensions are the batch dimensions of the vmap levels it is batched at
(in level order, outer first) followed by the logical dimensions. Every
operation on it runs once on the physical tensor, by a batching rule
(``_rules``) that moves the logical arguments (dims, shapes, indices) past
the batch dimensions, so the Rust kernels see one larger tensor and the
samples never mix.

A batched tensor reports itself as a ``Tensor`` (``isinstance`` and
``__class__``) but is not one to the Rust bindings: handing one to a
binding that has no batching rule raises ``TypeError`` instead of
computing on the physical shape. Module functions (``ferrograd.*``,
``nn.functional.*``, ``linalg.*``) route themselves to the rules while
any vmap runs (``_routed``), so no call outside vmap pays for it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from . import _core
from .utils._pytree import sequence_of

Tensor = _core.Tensor
# Taken before any vmap routes the Tensor class's methods.
_index = Tensor.__getitem__


class _VmapLevel:
    """One running vmap: its level number, batch size and randomness mode."""

    __slots__ = ("id", "size", "randomness")

    def __init__(self, lid: int, size: int, randomness: str) -> None:
        self.id = lid
        self.size = size
        self.randomness = randomness


_local = threading.local()
_ids = itertools.count(1)


def _vstack() -> list[_VmapLevel]:
    stack = getattr(_local, "vstack", None)
    if stack is None:
        stack = _local.vstack = []
    return stack


def active_levels() -> list[_VmapLevel]:
    """The vmap levels running on this thread, outermost first."""
    return _vstack()


class BatchedTensor:
    """A tensor inside ``vmap``: a physical tensor with batch dimensions in
    front (one per level in ``_lv``) and the logical ones after them."""

    __slots__ = ("_p", "_lv", "__weakref__", "__dict__")

    def __init__(self, physical: Tensor, levels: tuple[int, ...]) -> None:
        self._p = physical
        self._lv = levels

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105  (isinstance(x, Tensor) holds)
        return Tensor

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._lv[-1]}, bdim=0, value=\n    {self._p!r}\n)"

    __str__ = __repr__


def is_batched(x: Any) -> bool:
    return type(x) is BatchedTensor


def wrap(p: Any, levels: tuple[int, ...]) -> Any:
    """``p`` as a batched tensor at ``levels`` (``p`` itself when none)."""
    if not levels or not isinstance(p, Tensor):
        return p
    return BatchedTensor(p, levels)


def map_tensors(out: Any, f: Callable[[Tensor], Any]) -> Any:
    """``out`` (a tensor, or tuples/lists of them and other values) with
    ``f`` applied to each tensor, containers rebuilt as they were."""
    if isinstance(out, Tensor):
        return f(out)
    if isinstance(out, tuple):
        return sequence_of(type(out), [map_tensors(x, f) for x in out])
    if isinstance(out, list):
        return [map_tensors(x, f) for x in out]
    return out


def wrap_result(r: Any, levels: tuple[int, ...]) -> Any:
    """Wraps the tensors of an op's result (a tensor, or a tuple of them)."""
    if type(r) is Tensor:
        return BatchedTensor(r, levels) if levels else r
    return map_tensors(r, lambda t: wrap(t, levels))


def zeros_like(t: Any) -> Any:
    """Zeros shaped and batched like ``t`` (batched or not)."""
    if type(t) is BatchedTensor:
        return BatchedTensor(_core.zeros_like(t._p), t._lv)
    return _core.zeros_like(t)


def logical_dim(x: Any) -> int:
    if type(x) is BatchedTensor:
        return x._p.dim() - len(x._lv)
    return x.dim()


def logical_shape(x: Any) -> tuple[int, ...]:
    if type(x) is BatchedTensor:
        return tuple(x._p.shape[len(x._lv):])
    return tuple(x.shape)


def _walk(args: Any, kwargs: Any) -> Any:
    """The batched tensors among the arguments (top level and one level of
    lists/tuples)."""
    for a in itertools.chain(args, kwargs.values()):
        if type(a) is BatchedTensor:
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if type(b) is BatchedTensor:
                    yield b


def any_batched(args: Any, kwargs: Any) -> bool:
    for a in args:
        t = type(a)
        if t is BatchedTensor:
            return True
        if (t is list or t is tuple) and any(type(b) is BatchedTensor for b in a):
            return True
    if kwargs:
        return any_batched(tuple(kwargs.values()), None)
    return False


def collect(args: Any, kwargs: Any) -> tuple[tuple[int, ...], dict[int, int]]:
    """The union of the arguments' levels (sorted) and each level's size."""
    sizes: dict[int, int] = {}
    first: tuple[int, ...] | None = None
    same = True
    for b in _walk(args, kwargs):
        if first is None:
            first = b._lv
        elif b._lv != first:
            same = False
        for i, lv in enumerate(b._lv):
            sizes[lv] = b._p.shape[i]
    if same and first is not None:
        return first, sizes
    return tuple(sorted(sizes)), sizes


def physical(x: Any, levels: tuple[int, ...], sizes: dict[int, int] | None = None,
             rank: int | None = None) -> Any:
    """``x`` as a physical tensor with one leading dim per level in
    ``levels``: a level ``x`` is not batched at gets a dim of size 1 (or
    of its size, expanded, when ``sizes`` is given), and with ``rank`` the
    logical dims are padded with leading 1s to that many (broadcasting
    alignment). Non-tensors pass through."""
    if type(x) is BatchedTensor:
        p, have = x._p, x._lv
    elif isinstance(x, Tensor):
        if sizes is None and rank is None:
            return x
        p, have = x, ()
    else:
        return x
    lr = p.dim() - len(have)
    pad = 0 if rank is None else max(rank - lr, 0)
    if have == levels and not pad:
        return p
    if not have and not pad and sizes is not None:
        # Unbatched: one expand puts every level in front.
        return p.expand(*[sizes[lv] for lv in levels], *p.shape)
    idx: list[Any] = []
    j = 0
    for lv in levels:
        if j < len(have) and have[j] == lv:
            idx.append(slice(None))
            j += 1
        else:
            idx.append(None)
    idx.extend([None] * pad)
    q = _index(p, tuple(idx))
    if sizes is None:
        return q
    return q.expand(*[sizes[lv] for lv in levels], *([-1] * (q.dim() - len(levels))))


def full_levels() -> tuple[tuple[int, ...], dict[int, int]]:
    """Every running level and its size (the same objects until the
    running levels change; callers do not mutate them)."""
    st = _vstack()
    if not st:
        return (), {}
    cached = getattr(_local, "full", None)
    if cached is not None and cached[0] is st[-1] and cached[1] == len(st):
        return cached[2], cached[3]
    levels, sizes = tuple(lv.id for lv in st), {lv.id: lv.size for lv in st}
    _local.full = (st[-1], len(st), levels, sizes)
    return levels, sizes


def to_full(x: Any) -> Any:
    """``x`` batched at every running level (expanded where it is not)."""
    levels, sizes = full_levels()
    if not levels or not isinstance(x, Tensor):
        return x
    if type(x) is BatchedTensor and x._lv == levels:
        return x
    return BatchedTensor(physical(x, levels, sizes), levels)


def full_physical(x: Any) -> Any:
    """The physical tensor of ``x`` batched at every running level."""
    levels, sizes = full_levels()
    if not levels or not isinstance(x, Tensor):
        return x
    return physical(x, levels, sizes)


def rewrap_full(p: Any) -> Any:
    """A physical tensor with every running level in front, as batched."""
    levels, _ = full_levels()
    return wrap(p, levels)


# Fallback bookkeeping -------------------------------------------------------

_fallbacks: dict[str, int] = {}
_fallback_warn = [False]


def note_fallback(name: str) -> None:
    _fallbacks[name] = _fallbacks.get(name, 0) + 1
    if _fallback_warn[0]:
        import warnings

        warnings.warn(
            f"There is a performance drop because we have not yet implemented the batching rule for "
            f"{name}. ferrograd runs it once per batch row.", stacklevel=4
        )


def vmap_fallbacks() -> dict[str, int]:
    """Returns how many times each operation ran under ``vmap`` by the per-row
    fallback (one call per batch row) instead of a batching rule, since the
    last :func:`reset_vmap_fallbacks`.

    Use it to find the ops that make a ``vmap`` slow.

    Returns:
        dict: operation name to count.

    Example:
        >>> from ferrograd.func import reset_vmap_fallbacks, vmap, vmap_fallbacks
        >>> reset_vmap_fallbacks()
        >>> _ = vmap(lambda t: t.sin().sum())(ferrograd.ones(4, 3))
        >>> vmap_fallbacks()  # sin and sum have batching rules
        {}
    """
    return dict(_fallbacks)


def reset_vmap_fallbacks() -> None:
    """Clears the counts that :func:`vmap_fallbacks` returns.
    """
    _fallbacks.clear()


def set_vmap_fallback_warning_enabled(enabled: bool) -> None:
    """Turns on or off a ``UserWarning`` each time an operation runs by the
    per-row fallback under ``vmap`` (off by default).

    Args:
        enabled (bool): whether to warn.
    """
    _fallback_warn[0] = bool(enabled)


def per_row(name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
            inplace: bool = False) -> Any:
    """Runs ``fn`` once per batch row on plain slices and stacks the
    results: correct for any operation whose rows are independent."""
    note_fallback(name)
    levels, sizes = collect(args, kwargs)
    if inplace:
        self = args[0]
        if type(self) is not BatchedTensor or self._lv != levels:
            raise_inplace(self, levels, sizes)

    def flat(x: Any) -> Any:
        if type(x) is BatchedTensor:
            return _Rows(physical(x, levels, sizes))
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields") and any(
                type(b) is BatchedTensor for b in x):
            return _RowSeq([flat(b) for b in x], list if isinstance(x, list) else tuple)
        return x

    def row(x: Any, idx: tuple[int, ...]) -> Any:
        if type(x) is _Rows:
            return x.p[idx]
        if type(x) is _RowSeq:
            return x.kind(row(b, idx) for b in x.items)
        return x

    fargs = [flat(a) for a in args]
    fkw = {k: flat(v) for k, v in kwargs.items()}
    outs = [fn(*[row(a, idx) for a in fargs], **{k: row(v, idx) for k, v in fkw.items()})
            for idx in itertools.product(*(range(sizes[lv]) for lv in levels))]
    if inplace:
        return args[0]
    return _stack_rows(outs, [sizes[lv] for lv in levels], levels, name)


class _Rows:
    __slots__ = ("p",)

    def __init__(self, p: Tensor) -> None:
        self.p = p


class _RowSeq:
    __slots__ = ("items", "kind")

    def __init__(self, items: list[Any], kind: type) -> None:
        self.items = items
        self.kind = kind


def _stack_rows(outs: list[Any], bshape: list[int], levels: tuple[int, ...], name: str) -> Any:
    first = outs[0]
    if isinstance(first, Tensor):
        s = _core.stack(outs)
        return wrap(s.reshape(*bshape, *s.shape[1:]), levels)
    if isinstance(first, (tuple, list)):
        parts = [_stack_rows([o[i] for o in outs], bshape, levels, name) for i in range(len(first))]
        return sequence_of(type(first), parts)
    if first is None or all(o == first for o in outs[1:]):
        return first
    raise RuntimeError(
        f"vmap: {name} returned a non-tensor value that differs between batch rows; "
        "vmap cannot batch it."
    )


def raise_inplace(self: Any, levels: tuple[int, ...], sizes: dict[int, int]) -> None:
    shape = list(logical_shape(self))
    full = [sizes[lv] for lv in levels] + shape
    raise RuntimeError(f"output with shape {shape} doesn't match the broadcast shape {full}")


def check_random(name: str) -> str:
    """The randomness mode random op ``name`` runs under ('' outside vmap);
    raises torch's error in 'error' mode."""
    st = _vstack()
    if not st:
        return ""
    modes = {lv.randomness for lv in st}
    if "error" in modes:
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use the "
            "'same' or 'different' randomness flags on vmap or perform the randomness operation "
            "out of vmap"
        )
    return "different" if "different" in modes else "same"


def random_levels() -> tuple[tuple[int, ...], dict[int, int]]:
    """The running levels whose randomness is 'different' and their sizes."""
    st = _vstack()
    return (tuple(lv.id for lv in st if lv.randomness == "different"),
            {lv.id: lv.size for lv in st if lv.randomness == "different"})
