"""Batching rules: how each operation runs on batched tensors.

A rule receives the operation's arguments as the caller gave them (batched
tensors among them) and runs the operation once on physical tensors:

- pointwise ops align the operands' logical ranks (a leading 1 per missing
  logical dim, a 1 per missing level) and let broadcasting do the rest;
- ops with dimension arguments (reductions, softmax, gather, transpose...)
  get every ``dim``-like argument moved past the batch dims, and reduce
  "all dims" as one flattened logical dim;
- shape ops (view, reshape, expand, permute...) prepend the batch sizes;
- the matmul family aligns ranks as matmul broadcasting needs and folds the
  batch into the rows when the other operand is unbatched;
- convolutions, pooling and the like fold the batch into their N dim.

Anything else runs per batch row (``_batched.per_row``), which is correct
for any operation whose rows are independent, and is counted.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable
from typing import Any

from .. import _batched as B
from .. import _core
from .._batched import BatchedTensor, collect, logical_dim, logical_shape, physical, wrap, wrap_result

Tensor = _core.Tensor
# The methods rules call on physical tensors, taken before any vmap routes
# the Tensor class's own (so they run without a dispatcher in between).
_matmul_plain = Tensor.matmul
_index = Tensor.__getitem__
Rule = Callable[[tuple[Any, ...], dict[str, Any]], Any]

METHOD_RULES: dict[str, Rule] = {}
MODULE_RULES: dict[str, Rule] = {}


def _sig(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _tensors_rank(args: Any, kwargs: Any) -> int:
    r = 0
    for a in itertools.chain(args, kwargs.values()):
        if isinstance(a, Tensor):
            r = max(r, logical_dim(a))
    return r


# ---------------------------------------------------------------------------
# Pointwise
# ---------------------------------------------------------------------------


def _logical_scalar_cast(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Two tensor operands, one a batched logical scalar and the other not a
    scalar: the scalar cast to the dtype the logical operation computes in.
    Type promotion ranks a 0-dim tensor below dimensioned ones, but the
    scalar's physical tensor has the batch dims, so it would otherwise take
    part as a dimensioned tensor (float64 scalar + float32 vector is
    float32)."""
    x, y = args
    lx, ly = logical_dim(x), logical_dim(y)
    if (lx == 0) == (ly == 0):
        return args
    scal, other = (x, y) if lx == 0 else (y, x)
    if type(scal) is not BatchedTensor:
        return args
    sp = scal._p
    op = other._p if type(other) is BatchedTensor else other
    dt = _core.result_type(_core.empty((), dtype=sp.dtype), op)
    if dt == sp.dtype:
        return args
    cast = BatchedTensor(sp.to(dt), scal._lv)
    return (cast, y) if lx == 0 else (x, cast)


def pointwise(fn: Callable[..., Any], promotes: bool = True) -> Rule:
    """Broadcasting elementwise ``fn``: operands aligned, one call.
    ``promotes``: the two operands' dtypes combine by type promotion."""

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not kwargs:
            # Common cases first: one batched operand (with numbers), or two
            # batched at the same levels with the same rank.
            a0 = args[0]
            if len(args) == 1 and type(a0) is BatchedTensor:
                return wrap_result(fn(a0._p), a0._lv)
            if len(args) == 2 and type(a0) is BatchedTensor:
                a1 = args[1]
                if not isinstance(a1, Tensor):
                    return wrap_result(fn(a0._p, a1), a0._lv)
                if type(a1) is BatchedTensor and a1._lv == a0._lv:
                    p0, p1 = a0._p, a1._p
                    d0, d1 = p0.dim(), p1.dim()
                    if d0 == d1:
                        return wrap_result(fn(p0, p1), a0._lv)
                    nb = len(a0._lv)
                    if min(d0, d1) > nb:
                        # Same levels, different ranks (no logical scalar,
                        # whose type promotion differs): the lower-ranked
                        # operand gets its missing logical dims (size 1)
                        # right after the batch dims.
                        for _ in range(d1 - d0):
                            p0 = p0.unsqueeze(nb)
                        for _ in range(d0 - d1):
                            p1 = p1.unsqueeze(nb)
                        return wrap_result(fn(p0, p1), a0._lv)
                if type(a1) is not BatchedTensor and 0 < a0._p.dim() - len(a0._lv) >= a1.dim():
                    # An unbatched operand of no higher rank lines up with
                    # the trailing (logical) dims as it is; a logical scalar
                    # is left to the general path, where type promotion sees
                    # both as dim-0.
                    return wrap_result(fn(a0._p, a1), a0._lv)
            if len(args) == 2 and type(args[1]) is BatchedTensor and type(a0) is not BatchedTensor:
                a1 = args[1]
                if isinstance(a0, Tensor) and 0 < a1._p.dim() - len(a1._lv) >= a0.dim():
                    return wrap_result(fn(a0, a1._p), a1._lv)
        if promotes and len(args) == 2 and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
            args = _logical_scalar_cast(args)
        levels, _ = collect(args, kwargs)
        rank = _tensors_rank(args, kwargs)
        pa = [physical(a, levels, None, rank) if type(a) is BatchedTensor else a for a in args]
        pk = {k: physical(v, levels, None, rank) if type(v) is BatchedTensor else v
              for k, v in kwargs.items()}
        return wrap_result(fn(*pa, **pk), levels)

    return rule


def pointwise_inplace(fn: Callable[..., Any]) -> Rule:
    """In-place elementwise ``fn`` on ``args[0]``, which must be batched at
    every level its operands are (torch's error otherwise)."""

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        levels, sizes = collect(args, kwargs)
        self = args[0]
        if type(self) is not BatchedTensor or self._lv != levels:
            B.raise_inplace(self, levels, sizes)
        rank = logical_dim(self)
        pa = [physical(a, levels, None, rank) if type(a) is BatchedTensor else a for a in args[1:]]
        pk = {k: physical(v, levels, None, rank) if type(v) is BatchedTensor else v
              for k, v in kwargs.items()}
        fn(self._p, *pa, **pk)
        return self

    return rule


def reflected(fwd: Callable[..., Any], ref: Callable[..., Any]) -> Rule:
    """``other <op> self`` for a reflected operator ``__rop__(self, other)``."""
    fwd_rule = pointwise(fwd)
    ref_rule = pointwise(ref)

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self, other = args
        if isinstance(other, Tensor):
            return fwd_rule((other, self), kwargs)
        return ref_rule(args, kwargs)

    return rule


# ---------------------------------------------------------------------------
# Dimension arguments
# ---------------------------------------------------------------------------

_DIM_NAMES = frozenset({"dim", "dim0", "dim1", "dim2", "start_dim", "end_dim", "dims", "source",
                        "destination", "axis0", "axis1", "axis"})


def _shift(d: Any, n: int, nb: int) -> Any:
    if isinstance(d, (tuple, list)):
        return type(d)(_shift(x, n, nb) for x in d)
    if d is None or d is Ellipsis:
        return d
    if isinstance(d, str):
        raise RuntimeError("vmap: named dimensions are not supported")
    m = max(n, 1)
    if not -m <= d < m:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got {d})")
    return d % m + nb


class _Binder:
    """Binds ``(self, *args, **kwargs)`` to a function's named parameters
    (defaults filled in, ``Ellipsis`` defaults left to the function), for
    signatures whose parameters after the first can all be passed by name."""

    __slots__ = ("names", "known", "required", "defaults")

    def __init__(self, sig: inspect.Signature) -> None:
        params = list(sig.parameters.values())[1:]
        kinds = inspect.Parameter
        self.names = [p.name for p in params if p.kind is kinds.POSITIONAL_OR_KEYWORD]
        self.known = {p.name for p in params}
        self.required = [p.name for p in params if p.default is p.empty]
        self.defaults = {p.name: p.default for p in params
                         if p.default is not p.empty and p.default is not Ellipsis}

    @staticmethod
    def of(fn: Any) -> _Binder | None:
        sig = _sig(fn)
        if sig is None or not sig.parameters:
            return None
        kinds = inspect.Parameter
        rest = list(sig.parameters.values())[1:]
        if any(p.kind in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD, kinds.POSITIONAL_ONLY) for p in rest):
            return None
        return _Binder(sig)

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
        if len(args) - 1 > len(self.names):
            return None
        out = dict(self.defaults)
        out.update(zip(self.names, args[1:], strict=False))
        for k, v in kwargs.items():
            if k not in self.known:
                return None
            out[k] = v
        for k in self.required:
            if k not in out:
                return None
        return out


def dim_op(name: str, fn: Callable[..., Any], *, reduce_all: bool = False, extra_rank: int = 0,
           vector_index: bool = False, inplace: bool = False) -> Rule:
    """An op whose ``dim``-like arguments index logical dims of ``args[0]``.

    ``reduce_all``: ``dim=None`` means every dim (run on the logical dims
    flattened into one). ``extra_rank``: the dims index a result of that
    many more dims (unsqueeze). ``vector_index``: a 1-D ``index`` argument
    that cannot be batched (index_select...); other tensors are expanded
    to every level."""
    binder = _Binder.of(fn)
    # The common call ``x.op(d)`` (one int dim, the first parameter) skips
    # the binding.
    first_is_dim = (binder is not None and bool(binder.names) and binder.names[0] in _DIM_NAMES
                    and not vector_index and not inplace)

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if first_is_dim and not kwargs and len(args) == 2 and type(args[1]) is int:
            self = args[0]
            if type(self) is BatchedTensor:
                nb = len(self._lv)
                lr = self._p.dim() - nb
                if lr or extra_rank:
                    return wrap_result(fn(self._p, _shift(args[1], lr + extra_rank, nb)), self._lv)
        arguments = None if binder is None else binder.bind(args, kwargs)
        if arguments is None:
            return B.per_row(name, fn, args, kwargs, inplace)
        self = args[0]
        if type(self) is BatchedTensor and not any(isinstance(v, Tensor) for v in arguments.values()):
            levels, sizes = self._lv, {}
        else:
            levels, sizes = collect(args, kwargs)
        nb = len(levels)
        if vector_index and type(arguments.get("index")) is BatchedTensor:
            if name == "index_select" and logical_dim(arguments["index"]) == 1:
                # x.index_select(d, i) is x with dim d moved first, indexed by i.
                x = args[0]
                d = _shift(arguments["dim"], logical_dim(x), 0)
                return x.movedim(d, 0)[arguments["index"]].movedim(0, d)
            return B.per_row(name, fn, args, kwargs, inplace)
        if inplace and (type(self) is not BatchedTensor or self._lv != levels):
            B.raise_inplace(self, levels, sizes)
        lr = logical_dim(self)
        n = lr + extra_rank
        scalar = lr == 0 and not extra_rank
        flat_all = False
        keepdim = False
        for k, v in arguments.items():
            if k in _DIM_NAMES and not isinstance(v, Tensor):  # index_add(source=...)
                if v is None and reduce_all:
                    flat_all = True
                    arguments[k] = nb
                else:
                    arguments[k] = _shift(v, n, nb)
            elif k == "keepdim":
                keepdim = bool(v)
            elif isinstance(v, Tensor) and not (vector_index and k == "index"):
                arguments[k] = physical(v, levels, sizes)
        p = self._p if type(self) is BatchedTensor and self._lv == levels else physical(self, levels, sizes)
        if flat_all:
            p = p.reshape(*p.shape[:nb], -1)
        elif scalar:
            p = p.unsqueeze(-1)
        out = fn(p, **arguments)
        if inplace:
            return self
        if flat_all and keepdim:
            out = B.map_tensors(out, lambda t: t.reshape(*t.shape[:nb], *([1] * lr)))
        elif scalar:
            out = B.map_tensors(out, lambda t: t.squeeze(-1) if t.dim() == nb + 1 else t)
        return wrap_result(out, levels)

    return rule


def _flip(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    self, *rest = args
    given = kwargs.get("dims")
    dims = _sizes_arg(tuple(rest)) if rest else [] if given is None else list(_sizes_arg((given,)))
    p, lv, nb = _self_phys(self)
    lr = p.dim() - nb
    return wrap(p.flip([_shift(d, lr, nb) for d in dims]), lv)


def _flip_lr(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if logical_dim(args[0]) < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip((args[0], 1), {})


def _flip_ud(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if logical_dim(args[0]) < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip((args[0], 0), {})


def _self_phys(x: Any) -> tuple[Tensor, tuple[int, ...], int]:
    if type(x) is BatchedTensor:
        return x._p, x._lv, len(x._lv)
    return x, (), 0


def _sizes_arg(sizes: tuple[Any, ...]) -> list[Any]:
    if len(sizes) == 1 and hasattr(sizes[0], "__iter__") and not isinstance(sizes[0], Tensor):
        return list(sizes[0])
    return list(sizes)


def _shape_rule(method: str) -> Rule:
    """view/reshape/expand/repeat/tile/broadcast_to: batch sizes prepended."""

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self, *rest = args
        given = kwargs.get("size", kwargs.get("shape", kwargs.get("dims", ())))
        shape = _sizes_arg(tuple(rest) if rest else tuple(given))
        p, lv, nb = _self_phys(self)
        bshape = list(p.shape[:nb])
        if method == "expand" or method == "broadcast_to":
            lr = p.dim() - nb
            if len(shape) > lr:
                p = _index(p, (slice(None),) * nb + (None,) * (len(shape) - lr))
            return wrap(p.expand(*bshape, *shape), lv)
        if method in ("repeat", "tile"):
            lr = p.dim() - nb
            reps = list(shape)
            if method == "tile" and len(reps) < lr:
                reps = [1] * (lr - len(reps)) + reps
            if len(reps) < lr:
                raise RuntimeError(
                    "Number of dimensions of repeat dims can not be smaller than number of dimensions "
                    "of tensor"
                )
            if len(reps) > lr:
                p = _index(p, (slice(None),) * nb + (None,) * (len(reps) - lr))
            return wrap(p.repeat(*([1] * nb), *reps), lv)
        return wrap(getattr(p, method)(*bshape, *shape), lv)

    return rule


def _as_rule(method: str) -> Rule:
    """view_as/reshape_as/expand_as: the other tensor's logical shape."""
    base = {"view_as": "view", "reshape_as": "reshape", "expand_as": "expand"}[method]
    inner = _shape_rule(base)

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self, other = args[0], args[1] if len(args) > 1 else kwargs["other"]
        if type(self) is not BatchedTensor:
            # Only `other` is batched: its shape is all that is used.
            return getattr(Tensor, base)(self, *logical_shape(other))
        return inner((self, logical_shape(other)), {})

    return rule


def _permute(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    self, *rest = args
    dims = _sizes_arg(tuple(rest) if rest else tuple(kwargs["dims"]))
    p, lv, nb = _self_phys(self)
    lr = p.dim() - nb
    if len(dims) != lr:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {lr} is not equal to "
            f"len(dims) = {len(dims)}"
        )
    return wrap(p.permute(*range(nb), *[_shift(d, lr, nb) for d in dims]), lv)


def _transpose_last(args: tuple[Any, ...], kwargs: dict[str, Any], conj: bool = False) -> Any:
    p, lv, nb = _self_phys(args[0])
    if p.dim() - nb < 2:
        return args[0]
    out = p.transpose(-2, -1)
    return wrap(out.conj() if conj else out, lv)


def _t(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    p, lv, nb = _self_phys(args[0])
    lr = p.dim() - nb
    if lr > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {lr}D")
    return _transpose_last(args, kwargs)


def _T(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    p, lv, nb = _self_phys(args[0])
    lr = p.dim() - nb
    return wrap(p.permute(*range(nb), *range(p.dim() - 1, nb - 1, -1)), lv) if lr > 1 else args[0]


def _squeeze(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    self = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    p, lv, nb = _self_phys(self)
    lr = p.dim() - nb
    if dim is None:
        dims = [nb + i for i in range(lr) if p.shape[nb + i] == 1]
        return wrap(p.squeeze(tuple(dims)) if dims else p.view_as(p), lv)
    if lr == 0:
        _shift(dim, 0, 0)
        return wrap(p.view_as(p), lv)
    return wrap(p.squeeze(_shift(dim, lr, nb)), lv)


_FLATTEN = _Binder(inspect.signature(Tensor.flatten))


def _flatten(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a = _FLATTEN.bind(args, kwargs)
    if a is None:
        return B.per_row("flatten", Tensor.flatten, args, kwargs)
    p, lv, nb = _self_phys(args[0])
    lr = p.dim() - nb
    if lr == 0:
        return wrap(p.reshape(*p.shape[:nb], 1), lv)
    end = a.get("end_dim", -1)
    return wrap(p.flatten(_shift(a["start_dim"], lr, nb), _shift(end, lr, nb)), lv)


def _meta(fn: Callable[[Any], Any]) -> Rule:
    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return fn(*args, **kwargs)

    return rule


def _size(self: Any, dim: int | None = None) -> Any:
    from .._size import Size

    shape = logical_shape(self)
    if dim is None:
        return Size(shape)
    return shape[_shift(dim, len(shape), 0)]


def _stride(self: Any, dim: int | None = None) -> Any:
    p, lv, nb = _self_phys(self)
    st = tuple(p.stride())[nb:]
    if dim is None:
        return st
    return st[_shift(dim, len(st), 0)]


def _data_dependent(what: str) -> Rule:
    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if what == "item":
            raise RuntimeError(
                "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                "operations. If error is occurring somewhere inside PyTorch internals, please file a "
                "bug report."
            )
        if what == "dynamic":
            raise RuntimeError(
                "vmap: We do not support batching operators that can output dynamic shape. Attempted "
                "to vmap over an operator whose output shape depends on the data. Please rewrite the "
                "function without it."
            )
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
            "flow. We don't support that yet, please file an issue at "
            "https://github.com/pytorch/pytorch/issues ."
        )

    return rule


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------


def _index_tuple(idx: Any) -> tuple[Any, ...]:
    return idx if type(idx) is tuple else (idx,)


def _basic_index(idx: tuple[Any, ...]) -> bool:
    """Whether prepending full slices keeps the batch dims in front: no
    batched index, and any advanced (tensor/list) indices are adjacent with
    no integer among them."""
    adv = []
    ints = False
    for i, x in enumerate(idx):
        if type(x) is BatchedTensor:
            return False
        if isinstance(x, (Tensor, list)) or (hasattr(x, "__array__") and not isinstance(x, (int, float))):
            adv.append(i)
        elif isinstance(x, int) and not isinstance(x, bool):
            ints = True
    if not adv:
        return True
    return not ints and adv == list(range(adv[0], adv[0] + len(adv)))


def _getitem(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    self, idx = args
    t = _index_tuple(idx)
    if type(self) is BatchedTensor and _basic_index(t):
        nb = len(self._lv)
        return wrap(_index(self._p, (slice(None),) * nb + t), self._lv)
    lead = _leading_tensor_indices(t)
    if lead:
        return _gather_rows(self, t, lead)
    k = 0
    while k < len(t) and isinstance(t[k], slice) and t[k] == slice(None):
        k += 1
    lead = _leading_tensor_indices(t[k:]) if k else 0
    if lead and k + lead <= logical_dim(self):
        # x[:, ..., i, j, ...]: bring the indexed dims first, index, and put
        # the index's dims back where torch puts them (one adjacent block).
        n = logical_dim(self)
        order = list(range(k, k + lead)) + list(range(k)) + list(range(k + lead, n))
        out = _gather_rows(self.permute(*order), t[k:k + lead] + (slice(None),) * k + t[k + lead:], lead)
        ri = max(logical_dim(x) for x in t[k:k + lead])
        m = logical_dim(out)
        back = list(range(ri, ri + k)) + list(range(ri)) + list(range(ri + k, m))
        return out.permute(*back)
    if any(type(x) is BatchedTensor and (x.dtype == _core.bool or x.dtype == _core.uint8) for x in t):
        # A mask per row selects a different number of elements per row.
        return _data_dependent("dynamic")(args, kwargs)
    return B.per_row("__getitem__", Tensor.__getitem__, (self, idx), {})


def _leading_tensor_indices(t: tuple[Any, ...]) -> int:
    """How many integer tensor indices open the index tuple ``t`` (and
    none follow later), or 0."""
    n = 0
    while n < len(t) and isinstance(t[n], Tensor) and not t[n].is_floating_point() \
            and t[n].dtype != _core.bool and not t[n].is_complex():
        n += 1
    if n == 0 or any(isinstance(x, (Tensor, list)) for x in t[n:]):
        return 0
    return n


def _gather_rows(self: Any, t: tuple[Any, ...], lead: int) -> Any:
    """``self[t]`` when ``t`` opens with (batched) integer tensor indices:
    one advanced-indexing call on the physical tensor, with an ``arange``
    per level picking each row's own slice."""
    levels, sizes = collect((self,) + t[:lead], {})
    nb = len(levels)
    p = physical(self, levels, sizes)
    idx = [physical(x, levels, sizes) if type(x) is BatchedTensor else x for x in t[:lead]]
    rank = max(x.dim() - (nb if type(y) is BatchedTensor else 0) for x, y in zip(idx, t[:lead], strict=True))
    rows = []
    for i, lv in enumerate(levels):
        shape = [1] * nb + [1] * rank
        shape[i] = sizes[lv]
        rows.append(_core.arange(sizes[lv]).reshape(shape))
    # Unbatched indices broadcast from the right against the row indices.
    return wrap(_index(p, tuple(rows) + tuple(idx) + t[lead:]), levels)


def _setitem(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    self, idx, value = args
    levels, sizes = collect((self, value) + _index_tuple(idx), {})
    if type(self) is not BatchedTensor or self._lv != levels:
        B.raise_inplace(self, levels, sizes)
    t = _index_tuple(idx)
    nb = len(levels)
    if _basic_index(t):
        target = _index(self._p, (slice(None),) * nb + t)
        if type(value) is BatchedTensor:
            value = physical(value, levels, None, target.dim() - nb)
        target_idx = (slice(None),) * nb + t
        self._p[target_idx] = value
        return None
    B.per_row("__setitem__", Tensor.__setitem__, (self, idx, value), {}, inplace=True)
    return None


# ---------------------------------------------------------------------------
# Matmul family
# ---------------------------------------------------------------------------


def _matmul(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a, b = args[0], args[1] if len(args) > 1 else kwargs["other"]
    if (type(a) is BatchedTensor and type(b) is BatchedTensor and a._lv == b._lv
            and a._p.dim() == b._p.dim() and a._p.dim() - len(a._lv) >= 2):
        # Same levels, same rank, matrices or more: a plain batched product.
        return BatchedTensor(_matmul_plain(a._p, b._p), a._lv)
    levels, _ = collect((a, b), {})
    nb = len(levels)
    ra, rb = logical_dim(a), logical_dim(b)
    if ra == 0 or rb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {ra}D and {rb}D"
        )
    if type(b) is not BatchedTensor and rb == 2:
        # Unbatched matrix on the right: the batch folds into the rows.
        return wrap(_matmul_plain(physical(a, levels), b), levels)
    pa = physical(a, levels, None, 0) if type(a) is BatchedTensor else a[(None,) * nb]
    pb = physical(b, levels, None, 0) if type(b) is BatchedTensor else b[(None,) * nb]
    if ra == 1:
        pa = pa.unsqueeze(-2)
    if rb == 1:
        pb = pb.unsqueeze(-1)
    r = max(pa.dim(), pb.dim()) - nb
    if pa.dim() - nb < r:
        pa = pa[(slice(None),) * nb + (None,) * (r - pa.dim() + nb)]
    if pb.dim() - nb < r:
        pb = pb[(slice(None),) * nb + (None,) * (r - pb.dim() + nb)]
    out = _matmul_plain(pa, pb)
    if ra == 1:
        out = out.squeeze(-2)
    if rb == 1:
        out = out.squeeze(-1)
    return wrap(out, levels)


def _check_ranks(name: str, want: tuple[int, int]) -> Rule:
    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        a, b = args[0], args[1] if len(args) > 1 else next(iter(kwargs.values()))
        ra, rb = logical_dim(a), logical_dim(b)
        if (ra, rb) != want:
            if name == "mm":
                raise RuntimeError("self must be a matrix" if ra != 2 else "mat2 must be a matrix")
            if name == "bmm":
                raise RuntimeError("batch1 must be a 3D tensor" if ra != 3 else "batch2 must be a 3D tensor")
            if name == "dot":
                raise RuntimeError(
                    f"1D tensors expected, but got {ra}D and {rb}D tensors"
                )
            raise RuntimeError(f"{name}: unexpected ranks {ra}D and {rb}D")
        return _matmul((a, b), {})

    return rule


def _outer(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a, b = args[0], args[1] if len(args) > 1 else next(iter(kwargs.values()))
    return a.unsqueeze(-1) * b.unsqueeze(-2)


_ADDMM = _Binder(inspect.signature(Tensor.addmm))


def _addmm(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a = _ADDMM.bind(args, kwargs)
    if a is None:
        return B.per_row("addmm", Tensor.addmm, args, kwargs)
    prod = _matmul((a["mat1"], a["mat2"]), {})
    beta = 1 if a.get("beta") is None else a["beta"]
    alpha = 1 if a.get("alpha") is None else a["alpha"]
    inp = args[0]
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return (inp * beta if beta != 1 else inp) + prod


def _linear(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if not kwargs and len(args) >= 2:
        x, w, bias = args[0], args[1], args[2] if len(args) > 2 else None
    else:
        names = ("input", "weight", "bias")
        a = dict(zip(names, args, strict=False))
        a.update(kwargs)
        x, w, bias = a["input"], a["weight"], a.get("bias")
    if logical_dim(w) == 2:
        wt = BatchedTensor(w._p.transpose(-2, -1), w._lv) if type(w) is BatchedTensor else w.t()
    else:
        wt = w
    out = _matmul((x, wt), {})
    return out if bias is None else out + bias


def _einsum(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    eq, *ops = args
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = list(ops[0])
    levels, _ = collect(tuple(ops), {})
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:
        letters = [c for c in lhs if c.isalpha()]
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        rhs = ("..." if "..." in lhs else "") + "".join(once)
    used = set(eq)
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    letter = dict(zip(levels, free, strict=False))
    new_terms = []
    phys = []
    for term, op in zip(terms, ops, strict=True):
        if type(op) is BatchedTensor:
            new_terms.append("".join(letter[lv] for lv in op._lv) + term)
            phys.append(op._p)
        else:
            new_terms.append(term)
            phys.append(op)
    new_eq = ",".join(new_terms) + "->" + "".join(letter[lv] for lv in levels) + rhs
    return wrap(_core.einsum(new_eq, *phys), levels)


# ---------------------------------------------------------------------------
# Joining, creation, random
# ---------------------------------------------------------------------------


def _cat(fn: Callable[..., Any], stack: bool) -> Rule:
    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        tensors = args[0] if args else kwargs["tensors"]
        dim = args[1] if len(args) > 1 else kwargs.get("dim", kwargs.get("axis", 0))
        levels, sizes = collect((tuple(tensors),), {})
        ranks = [logical_dim(t) for t in tensors]
        lr = ranks[0] if ranks else 0
        if not stack:
            lr = max(ranks)
            # torch.cat skips 1-D empty tensors.
            tensors = [t for t, r in zip(tensors, ranks, strict=True)
                       if not (r == 1 and logical_shape(t)[0] == 0)]
        phys = [physical(t, levels, sizes) for t in tensors]
        n = lr + 1 if stack else lr
        return wrap(fn(phys, _shift(dim, n, len(levels))), levels)

    return rule


def _like(fn: Callable[..., Any]) -> Rule:
    """zeros_like & co.: the physical tensor's like, batched."""

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self = args[0]
        return wrap(fn(self._p, *args[1:], **kwargs), self._lv)

    return rule


def _random_like(fn: Callable[..., Any], name: str) -> Rule:
    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        mode = B.check_random(name)
        self = args[0]
        if mode == "same":
            plain = fn(_core.empty(logical_shape(self), dtype=self.dtype), *args[1:], **kwargs)
            return plain
        levels, sizes = B.random_levels()
        levels = tuple(sorted(set(levels) | set(self._lv)))
        sizes.update({lv: self._p.shape[i] for i, lv in enumerate(self._lv)})
        return wrap(fn(physical(self, levels, sizes), *args[1:], **kwargs), levels)

    return rule


def random_factory(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """rand/randn/randint/normal/randperm... called while a vmap runs."""

    def call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        mode = B.check_random(name)
        if B.any_batched(args, kwargs):
            if mode == "same":
                return _same_rows(name, fn, args, kwargs)
            if name in ("multinomial", "randperm"):
                return _same_rows(name, fn, args, kwargs, reset=False)
            levels, sizes = B.random_levels()
            lv2, sz2 = collect(args, kwargs)
            levels = tuple(sorted(set(levels) | set(lv2)))
            sizes.update(sz2)
            rank = _tensors_rank(args, kwargs)
            pa = [physical(a, levels, sizes, rank) if isinstance(a, Tensor) else a for a in args]
            pk = {k: physical(v, levels, sizes, rank) if isinstance(v, Tensor) else v
                  for k, v in kwargs.items()}
            return wrap(fn(*pa, **pk), levels)
        if mode == "same" or mode == "":
            return fn(*args, **kwargs)
        levels, sizes = B.random_levels()
        if name == "randperm":
            return _same_rows(name, fn, args, kwargs, reset=False, shape=[sizes[lv] for lv in levels],
                              levels=levels)
        bshape = [sizes[lv] for lv in levels]
        a = list(args)
        k = dict(kwargs)
        if "size" in k:
            k["size"] = (*bshape, *_sizes_arg((k["size"],)))
        elif name in ("rand", "randn"):
            a = [*bshape, *_sizes_arg(tuple(a))]
        elif name == "randint":
            *lims, size = a
            a = [*lims, (*bshape, *_sizes_arg((size,)))]
        elif name == "normal":
            # normal(mean: float, std: float, size)
            if len(a) >= 3:
                a[2] = (*bshape, *_sizes_arg((a[2],)))
        return wrap(fn(*a, **k), levels)

    return call


def _same_rows(name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
               reset: bool = True, shape: list[int] | None = None, levels: tuple[int, ...] = ()) -> Any:
    """Runs a random op per row; with ``reset``, every row draws the same
    numbers (the generator restarts from one state for each row)."""
    from .. import get_rng_state, set_rng_state

    gen = kwargs.get("generator")
    get = gen.get_state if gen is not None else get_rng_state
    put = gen.set_state if gen is not None else set_rng_state
    start = get()
    end = [start]

    def once(*a: Any, **k: Any) -> Any:
        if reset:
            put(start)
        r = fn(*a, **k)
        end[0] = get()
        return r

    if shape is not None:
        outs = [once(*args, **kwargs) for _ in range(math.prod(shape))]
        s = _core.stack(outs)
        return wrap(s.reshape(*shape, *s.shape[1:]), levels)
    out = B.per_row(name, once, args, kwargs)
    put(end[0])
    return out


def _random_method(fn: Callable[..., Any], name: str, inplace: bool) -> Rule:
    """x.uniform_() & co. (in place) and x.bernoulli()/multinomial()."""

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        mode = B.check_random(name)
        self = args[0]
        if inplace:
            levels, sizes = collect(args, kwargs)
            if type(self) is not BatchedTensor or self._lv != levels:
                B.raise_inplace(self, levels, sizes)
            if mode == "same":
                tmp = fn(_core.empty(logical_shape(self), dtype=self.dtype), *args[1:], **kwargs)
                self._p.copy_(tmp)
                return self
            pa = [physical(a, levels, None, logical_dim(self)) if type(a) is BatchedTensor else a
                  for a in args[1:]]
            fn(self._p, *pa, **kwargs)
            return self
        return random_factory(fn, name)(args, kwargs)

    return rule


# ---------------------------------------------------------------------------
# nn.functional
# ---------------------------------------------------------------------------


def fold_batch(fn: Callable[..., Any], name: str, spatial: int) -> Rule:
    """Ops on ``(N, C, *spatial)`` inputs (conv, pooling, interpolate...):
    the batch dims fold into N when only the input is batched."""

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        x = args[0] if args else kwargs["input"]
        rest_batched = any(type(a) is BatchedTensor for a in args[1:]) or any(
            type(v) is BatchedTensor for k, v in kwargs.items() if k != "input")
        if type(x) is not BatchedTensor or rest_batched:
            return B.per_row(name, fn, args, kwargs)
        p, lv, nb = _self_phys(x)
        lr = p.dim() - nb
        bshape = list(p.shape[:nb])
        has_n = lr == spatial + 2
        if not has_n and lr != spatial + 1:
            return B.per_row(name, fn, args, kwargs)
        folded = p.reshape(-1, *p.shape[nb + (1 if has_n else 0):]) if has_n else p.reshape(-1, *p.shape[nb:])
        a = (folded,) + tuple(args[1:]) if args else ()
        k = dict(kwargs)
        if not args:
            k["input"] = folded
        out = fn(*a, **k)
        n = p.shape[nb] if has_n else None

        def unfold(t: Tensor) -> Tensor:
            if n is None:
                return t.reshape(*bshape, *t.shape[1:])
            return t.reshape(*bshape, n, *t.shape[1:])

        return wrap_result(B.map_tensors(out, unfold), lv)

    return rule


def _trailing(fn: Callable[..., Any], name: str, batched_ok: tuple[str, ...] = ()) -> Rule:
    """Ops on trailing dims (layer_norm, embedding, one_hot, pad...): the
    physical tensor runs as is when only ``args[0]`` is batched."""

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        x = args[0] if args else kwargs["input"]
        if type(x) is not BatchedTensor or any(type(a) is BatchedTensor for a in args[1:]) or any(
                type(v) is BatchedTensor for k, v in kwargs.items() if k != "input"):
            return B.per_row(name, fn, args, kwargs)
        if args:
            return wrap_result(fn(x._p, *args[1:], **kwargs), x._lv)
        k = dict(kwargs)
        k["input"] = x._p
        return wrap_result(fn(**k), x._lv)

    return rule


def _nll_loss(fn: Callable[..., Any]) -> Rule:
    binder = _Binder.of(fn)

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        a = None if binder is None else binder.bind(args, kwargs)
        if a is None:
            return B.per_row("nll_loss", fn, args, kwargs)
        a["input"] = args[0] if args else kwargs["input"]
        if type(a["weight"]) is BatchedTensor or a["size_average"] is not None or a["reduce"] is not None:
            return B.per_row("nll_loss", fn, args, kwargs)
        inp, tgt = a["input"], a["target"]
        levels, sizes = collect((inp, tgt), {})
        nb = len(levels)
        lr = logical_dim(inp)
        if lr not in (1, 2):
            return B.per_row("nll_loss", fn, args, kwargs)
        pi = physical(inp, levels, sizes)
        pt = physical(tgt, levels, sizes)
        bshape = list(pi.shape[:nb])
        c = pi.shape[-1]
        flat = fn(pi.reshape(-1, c), pt.reshape(-1), a["weight"], None, a["ignore_index"], None, "none")
        red = a["reduction"]
        per = flat.reshape(*bshape, *pt.shape[nb:])
        if red == "none":
            return wrap(per, levels)
        if lr == 1:
            if red == "sum":
                return wrap(per, levels)
            keep = (pt != a["ignore_index"]).to(per.dtype)
            w = keep if a["weight"] is None else a["weight"][pt.clamp(min=0)] * keep
            return wrap(per / w, levels)
        total = per.sum(-1)
        if red == "sum":
            return wrap(total, levels)
        keep = (pt != a["ignore_index"]).to(per.dtype)
        w = keep if a["weight"] is None else a["weight"][pt.clamp(min=0)] * keep
        return wrap(total / w.sum(-1), levels)

    return rule


def _dropout(fn: Callable[..., Any], name: str) -> Rule:
    binder = _Binder.of(fn)

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        a = None if binder is None else binder.bind(args, kwargs)
        if a is None:
            return B.per_row(name, fn, args, kwargs)
        x = args[0]
        if not a.get("training", True) or a.get("p", 0.5) == 0.0:
            return x
        mode = B.check_random(name)
        if mode == "same":
            return _same_rows(name, fn, args, kwargs)
        if name != "dropout" and name != "alpha_dropout":
            return B.per_row(name, fn, args, kwargs)
        levels, sizes = B.random_levels()
        if type(x) is BatchedTensor:
            levels = tuple(sorted(set(levels) | set(x._lv)))
            sizes.update({lv: x._p.shape[i] for i, lv in enumerate(x._lv)})
        a["inplace"] = False
        return wrap(fn(physical(x, levels, sizes), **a), levels)

    return rule
