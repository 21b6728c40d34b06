"""``vmap``: the function transform, the batched tensor's methods, and the
routing of module functions to the batching rules while a vmap runs."""

from __future__ import annotations

import functools
import math
import threading
import types
from collections.abc import Callable
from typing import Any, TypeVar

from .. import _batched as B
from .. import _core
from .._batched import BatchedTensor, logical_dim, logical_shape, wrap
from .._ops_pointwise import _BINARY, _UNARY
from .._routed import BY_IMPLEMENTATION, set_dispatcher
from ..autograd import _function_vmap
from ..utils._pytree import tree_flatten, tree_unflatten
from . import _rules as R

__all__ = ["vmap"]

Tensor = _core.Tensor

# ---------------------------------------------------------------------------
# The rule tables
# ---------------------------------------------------------------------------

_POINTWISE = set(_UNARY) | set(_BINARY) | {
    "add", "sub", "subtract", "mul", "div", "divide", "true_divide", "pow", "clamp", "clip",
    "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv", "where", "masked_fill", "type_as", "to",
    "float", "double", "half", "bfloat16", "bool", "int", "long", "byte", "char", "short", "cfloat",
    "cdouble", "contiguous", "clone", "detach", "conj", "resolve_conj", "resolve_neg", "isclose",
    "round", "cpu", "type", "tril", "triu", "det", "inverse", "rsub", "polar", "complex",
    "view_as_real", "view_as_complex", "result_type", "xlogy", "hypot", "nan_to_num", "logit",
    "copysign", "heaviside", "float_power", "ldexp", "logaddexp", "fmax", "fmin",
}
# Pointwise ops whose tensor operands do not combine by type promotion.
_NO_PROMOTION = {"type_as", "to", "masked_fill", "type", "complex", "polar", "view_as_complex"}
_REDUCE_ALL = {"sum", "mean", "prod", "std", "var", "amax", "amin", "aminmax", "all", "any", "argmax",
               "argmin", "count_nonzero", "nansum", "nanmean", "norm", "std_mean", "var_mean",
               "repeat_interleave", "vector_norm"}
_DIM_OPS = {"softmax", "log_softmax", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "gather",
            "scatter", "scatter_add", "scatter_reduce", "narrow", "select", "unbind", "split", "chunk",
            "unflatten", "topk", "sort", "argsort", "kthvalue", "mode", "transpose", "swapaxes",
            "swapdims", "movedim", "moveaxis", "diagonal", "renorm", "diff", "logsumexp",
            "matrix_norm", "roll"}
_VECTOR_INDEX = {"index_select", "index_add", "index_copy", "index_fill"}
_EXTRA_RANK = {"unsqueeze", "diag_embed"}
_DATA_DEPENDENT = {"item": "item", "tolist": "item", "__bool__": "flow", "__float__": "item",
                   "__int__": "item", "__index__": "item", "__complex__": "item", "numpy": "item",
                   "__array__": "item", "equal": "flow", "allclose": "flow", "data_ptr": "item",
                   "nonzero": "dynamic", "argwhere": "dynamic", "masked_select": "dynamic",
                   "unique": "dynamic"}
_RANDOM_METHODS = {"uniform_": True, "normal_": True, "bernoulli_": True, "exponential_": True,
                   "random_": True, "bernoulli": False, "multinomial": False}
_RANDOM_FUNCS = {"rand", "randn", "randint", "normal", "randperm", "bernoulli", "multinomial", "poisson",
                 "binomial", "_standard_gamma_sample", "_sample_dirichlet"}
_RANDOM_LIKE = {"rand_like", "randn_like", "randint_like"}
_LIKE = {"zeros_like", "ones_like", "empty_like", "full_like"}
_FOLD = {"conv1d": 1, "conv2d": 2, "conv3d": 3, "conv_transpose1d": 1, "conv_transpose2d": 2,
         "conv_transpose3d": 3, "max_pool1d": 1, "max_pool2d": 2, "max_pool3d": 3, "avg_pool1d": 1,
         "avg_pool2d": 2, "avg_pool3d": 3, "adaptive_avg_pool1d": 1, "adaptive_avg_pool2d": 2,
         "adaptive_avg_pool3d": 3, "adaptive_max_pool1d": 1, "adaptive_max_pool2d": 2,
         "adaptive_max_pool3d": 3, "lp_pool1d": 1, "lp_pool2d": 2, "pixel_shuffle": 2,
         "pixel_unshuffle": 2, "unfold": 2, "fold": 1, "interpolate": -1,
         "local_response_norm": -1, "group_norm": -1, "instance_norm": -1}
_TRAILING = {"layer_norm", "rms_norm", "embedding", "one_hot"}
_DROPOUT = {"dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d",
            "rrelu"}


def _method(name: str) -> Any:
    return getattr(Tensor, name, None)


def _max_min(name: str) -> R.Rule:
    whole = R.dim_op("a" + name, getattr(Tensor, "a" + name), reduce_all=True)
    by_dim = R.dim_op(name, getattr(Tensor, name))
    pair = R.pointwise(getattr(Tensor, "maximum" if name == "max" else "minimum"))

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        rest = list(args[1:]) + list(kwargs.values())
        if rest and isinstance(rest[0], Tensor) and "dim" not in kwargs:
            return pair((args[0], rest[0]), {})
        if not rest:
            return whole((args[0],), {})
        return by_dim(args, kwargs)

    return rule


def _median(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if len(args) == 1 and not kwargs:
        x = args[0]
        flat = x.reshape(-1) if logical_dim(x) else x.reshape(1)
        return R.dim_op("median", Tensor.median)((flat, 0), {}).values
    return R.dim_op("median", Tensor.median)(args, kwargs)


def _diag(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x = args[0]
    offset = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
    if logical_dim(x) == 1:
        return x.diag_embed(offset)
    if logical_dim(x) == 2:
        return x.diagonal(offset)
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{logical_dim(x)}D")


def _trace(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x = args[0]
    if logical_dim(x) != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(logical_dim(x)))
    return x.diagonal(0, -2, -1).sum(-1)


def _take(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, index = args[0], args[1] if len(args) > 1 else kwargs["index"]
    if type(index) is BatchedTensor:
        return B.per_row("take", Tensor.take, args, kwargs)
    return x.reshape(-1)[index]


def _roll(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x = args[0]
    shifts = args[1] if len(args) > 1 else kwargs["shifts"]
    dims = args[2] if len(args) > 2 else kwargs.get("dims")
    if dims is None:
        return x.reshape(-1).roll(shifts, 0).reshape(logical_shape(x))
    return R.dim_op("roll", Tensor.roll)((x, shifts, dims), {})


def _iter(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x = args[0]
    if logical_dim(x) == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(x.unbind(0))


def _len(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    shape = logical_shape(args[0])
    if not shape:
        raise TypeError("len() of a 0-d tensor")
    return shape[0]


def _backward(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    raise RuntimeError(
        "backward() called inside a vmap on a batched tensor. This is not supported, please use "
        "ferrograd.func.grad or ferrograd.func.vjp instead or call backward() outside of vmap."
    )


def _register_hook(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    self, hook = args[0], args[1] if len(args) > 1 else kwargs["hook"]
    lv = self._lv

    def physical_hook(g: Tensor) -> Any:
        r = hook(wrap(g, lv))
        return r._p if type(r) is BatchedTensor else r

    return self._p.register_hook(physical_hook)


def _type_as(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    other = args[1] if len(args) > 1 else kwargs["other"]
    return args[0].to(other.dtype)


def _to(pointwise: R.Rule) -> R.Rule:
    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len(args) > 1 and isinstance(args[1], Tensor):
            # x.to(other, non_blocking=False, copy=False): other's dtype.
            return args[0].to(args[1].dtype, *args[2:], **kwargs)
        return pointwise(args, kwargs)

    return rule


def _forward(name: str) -> R.Rule:
    """Methods answered by the physical tensor itself (no shapes involved)."""

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self = args[0]
        r = getattr(self._p, name)(*args[1:], **kwargs)
        return self if r is self._p else r

    return rule


def _resize(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``resize_``/``resize_as_`` of a batched tensor: every row resized as a
    copy of itself would be, stacked into the tensor's new value."""
    self, rest = args[0], list(args[1:])
    if rest and isinstance(rest[0], Tensor):  # resize_as_(template)
        rest = list(logical_shape(rest[0]))
    if type(self) is not BatchedTensor:
        return self.resize_(*rest, **kwargs)
    nb = len(self._lv)
    rows = self._p.reshape(-1, *self._p.shape[nb:])
    s = _core.stack([r.clone().resize_(*rest, **kwargs) for r in rows])
    self._p = s.reshape(*self._p.shape[:nb], *s.shape[1:])
    return self


def _set(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``set_`` of a batched tensor: it reads the source's memory (each row
    its own row of a batched source, or all of them a plain one)."""
    self, rest = args[0], args[1:]
    source = rest[0] if rest else kwargs.get("source")
    if len(rest) > 1 or set(kwargs) - {"source"}:
        raise RuntimeError("vmap: set_ with a storage offset, size or stride is not supported on batched "
                           "tensors (each row's storage position is not a batched value)")
    levels, sizes = B.collect(args, kwargs)
    if type(self) is not BatchedTensor or self._lv != levels:
        B.raise_inplace(self, levels, sizes)
    bshape = [sizes[lv] for lv in levels]
    if source is None:
        self._p = _core.zeros(*bshape, 0, dtype=self._p.dtype)
    elif type(source) is BatchedTensor:
        self._p = B.physical(source, levels, sizes)
    else:
        self._p = source.expand(*bshape, *source.shape)
    return self


def _build_method_rules() -> dict[str, R.Rule]:
    rules: dict[str, R.Rule] = {}
    for name in _POINTWISE:
        fn = _method(name)
        if fn is None:
            continue
        rules[name] = R.pointwise(fn, promotes=name not in _NO_PROMOTION)
        ip = _method(name + "_")
        if ip is not None:
            rules[name + "_"] = R.pointwise_inplace(ip)
    for name in ("copy_", "fill_", "zero_", "masked_fill_", "clamp_", "clip_", "lerp_"):
        fn = _method(name)
        if fn is not None:
            rules[name] = R.pointwise_inplace(fn)
    for name in _REDUCE_ALL:
        fn = _method(name)
        if fn is not None:
            rules[name] = R.dim_op(name, fn, reduce_all=True,
                                   vector_index=name == "repeat_interleave")
    for name in _DIM_OPS:
        fn = _method(name)
        if fn is not None:
            rules[name] = R.dim_op(name, fn)
        ip = _method(name + "_")
        if ip is not None:
            rules[name + "_"] = R.dim_op(name + "_", ip, inplace=True)
    for name in _VECTOR_INDEX:
        fn = _method(name)
        if fn is not None:
            rules[name] = R.dim_op(name, fn, vector_index=True)
        ip = _method(name + "_")
        if ip is not None:
            rules[name + "_"] = R.dim_op(name + "_", ip, vector_index=True, inplace=True)
    for name in _EXTRA_RANK:
        fn = _method(name)
        if fn is not None:
            rules[name] = R.dim_op(name, fn, extra_rank=1)
    for name in ("view", "reshape", "expand", "repeat", "tile", "broadcast_to"):
        rules[name] = R._shape_rule(name)
    for name in ("view_as", "reshape_as", "expand_as"):
        rules[name] = R._as_rule(name)
    rules.update({
        "permute": R._permute, "flip": R._flip, "fliplr": R._flip_lr, "flipud": R._flip_ud,
        "t": R._t, "squeeze": R._squeeze, "flatten": R._flatten,
        "ravel": lambda a, k: a[0].reshape(-1), "matmul": R._matmul,
        "mm": R._check_ranks("mm", (2, 2)), "bmm": R._check_ranks("bmm", (3, 3)),
        "mv": R._check_ranks("mv", (2, 1)), "dot": R._check_ranks("dot", (1, 1)), "outer": R._outer,
        "ger": R._outer, "addmm": R._addmm, "max": _max_min("max"), "min": _max_min("min"),
        "diag": _diag, "trace": _trace, "take": _take, "roll": _roll,
        "__getitem__": R._getitem, "__setitem__": R._setitem, "__iter__": _iter, "__len__": _len,
        "backward": _backward, "register_hook": _register_hook,
        "size": R._meta(R._size), "stride": R._meta(R._stride),
        "dim": R._meta(logical_dim), "ndimension": R._meta(logical_dim),
        "numel": R._meta(lambda x: math.prod(logical_shape(x))),
        "nelement": R._meta(lambda x: math.prod(logical_shape(x))),
        "adjoint": lambda a, k: R._transpose_last(a, k, conj=True),
        "resize_": _resize, "resize_as_": _resize, "set_": _set,
    })
    if _method("median") is not None:
        rules["median"] = _median
    # Casts to another tensor's dtype: the result has self's shape (and
    # batching), whatever the other tensor's.
    rules["type_as"] = _type_as
    rules["to"] = _to(rules["to"])
    for name in ("is_complex", "is_floating_point", "is_signed", "element_size", "is_contiguous",
                 "is_conj", "is_neg", "is_inference", "retain_grad", "requires_grad_", "is_cpu",
                 "is_cuda", "get_device", "storage_offset"):
        if _method(name) is not None:
            rules[name] = _forward(name)
    for name, what in _DATA_DEPENDENT.items():
        rules[name] = R._data_dependent(what)
    for name, inplace in _RANDOM_METHODS.items():
        fn = _method(name)
        if fn is not None:
            rules[name] = R._random_method(fn, name, inplace)
    # Operators.
    for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "matmul"):
        fwd = _method(f"__{op}__")
        if fwd is None:
            continue
        rules[f"__{op}__"] = R._matmul if op == "matmul" else R.pointwise(fwd)
        ref = _method(f"__r{op}__")
        if ref is not None:
            if op == "matmul":
                rules["__rmatmul__"] = lambda a, k: R._matmul((a[1], a[0]), {})
            else:
                rules[f"__r{op}__"] = R.reflected(fwd, ref)
        ip = _method(f"__i{op}__")
        if ip is not None:
            rules[f"__i{op}__"] = R.pointwise_inplace(ip)
    for op in ("eq", "ne", "lt", "le", "gt", "ge", "neg", "abs", "invert", "pos"):
        fn = _method(f"__{op}__")
        if fn is not None:
            rules[f"__{op}__"] = R.pointwise(fn)
    return rules


_PROPERTIES = {
    "shape": lambda x: R._size(x),
    "ndim": logical_dim,
    "dtype": lambda x: x._p.dtype,
    "device": lambda x: x._p.device,
    "layout": lambda x: x._p.layout,
    "is_leaf": lambda x: x._p.is_leaf,
    "grad_fn": lambda x: x._p.grad_fn,
    "grad": lambda x: wrap(x._p.grad, x._lv) if x._p.grad is not None else None,
    "data": lambda x: wrap(x._p.data, x._lv),
    "T": lambda x: R._T((x,), {}),
    "mT": lambda x: R._transpose_last((x,), {}),
    "mH": lambda x: R._transpose_last((x,), {}, conj=True),
    "H": lambda x: R._transpose_last((x,), {}, conj=True),
    "real": lambda x: wrap(x._p.real, x._lv),
    "imag": lambda x: wrap(x._p.imag, x._lv),
    "is_cuda": lambda x: False,
    "is_cpu": lambda x: True,
    "_version": lambda x: x._p._version,
    "output_nr": lambda x: x._p.output_nr,
    "itemsize": lambda x: x._p.itemsize,
    "nbytes": lambda x: math.prod(logical_shape(x)) * x._p.itemsize,
    "retains_grad": lambda x: x._p.retains_grad,
}


# The Tensor methods as the bindings define them, taken before any vmap
# swaps some of them for dispatchers.
_RAW_METHODS: dict[str, Any] = {}


def _batched_method(name: str, args: tuple[Any, ...]) -> Any:
    """Method ``name`` of an unbatched tensor called with batched arguments
    (``w.atan2(x)`` inside vmap): the binding, unable to convert them, calls
    this instead."""
    rule = R.METHOD_RULES.get(name)
    if rule is not None:
        return rule(args, {})
    return B.per_row(name, _RAW_METHODS[name], args, {}, name.endswith("_") and not name.endswith("__"))


def _install_methods() -> None:
    rules = _build_method_rules()
    R.METHOD_RULES.update(rules)

    def make(name: str, rule: R.Rule | None, fn: Any) -> Callable[..., Any]:
        inplace = name.endswith("_") and not name.endswith("__")
        if rule is None:
            def method(self: Any, *args: Any, **kwargs: Any) -> Any:
                return B.per_row(name, fn, (self, *args), kwargs, inplace)
        else:
            def method(self: Any, *args: Any, **kwargs: Any) -> Any:
                return rule((self, *args), kwargs)
        method.__name__ = method.__qualname__ = name
        return method

    skip = {"__class__", "__new__", "__init__", "__dict__", "__doc__", "__module__", "__getattribute__",
            "__setattr__", "__delattr__", "__repr__", "__str__", "__hash__", "__init_subclass__",
            "__subclasshook__", "__reduce__", "__reduce_ex__", "__getstate__", "__sizeof__", "__dir__",
            "__format__", "__weakref__", "__array_priority__", "__array_interface__", "__deepcopy__"}
    for name in dir(Tensor):
        if name in skip or name in _PROPERTIES:
            continue
        attr = inspect_attr(name)
        if attr is None:
            continue
        _RAW_METHODS[name] = attr
        setattr(BatchedTensor, name, make(name, rules.get(name), attr))
    for name, rule in rules.items():
        if not hasattr(BatchedTensor, name) or getattr(BatchedTensor, name) is getattr(object, name, None):
            setattr(BatchedTensor, name, make(name, rule, None))
    for name, get in _PROPERTIES.items():
        setattr(BatchedTensor, name, property(get))

    def set_requires_grad(self: Any, value: bool) -> None:
        self._p.requires_grad = value

    BatchedTensor.requires_grad = property(lambda x: x._p.requires_grad, set_requires_grad)
    BatchedTensor.__hash__ = object.__hash__  # type: ignore[assignment]

    def no_copy(self: Any, *a: Any) -> Any:
        raise RuntimeError("vmap: a batched tensor cannot be copied or pickled inside vmap")

    BatchedTensor.__deepcopy__ = no_copy  # type: ignore[attr-defined]
    BatchedTensor.__reduce_ex__ = no_copy  # type: ignore[assignment]
    _core._set_batched_dispatch(BatchedTensor, _batched_method)


def inspect_attr(name: str) -> Any:
    """The callable Tensor attribute ``name`` (None for data attributes)."""
    try:
        attr = getattr(Tensor, name)
    except AttributeError:
        return None
    if isinstance(attr, (types.BuiltinFunctionType, types.MethodDescriptorType, types.FunctionType,
                         types.WrapperDescriptorType, types.MethodWrapperType)) or callable(attr):
        if isinstance(attr, property) or type(attr).__name__ == "getset_descriptor":
            return None
        return attr
    return None


# ---------------------------------------------------------------------------
# Module functions
# ---------------------------------------------------------------------------

def _module_rule(prefix: str, name: str, fn: Any) -> tuple[R.Rule | None, bool]:
    """The rule for module function ``prefix + name`` and whether it is a
    random op (routed even without batched arguments)."""
    if prefix == "nn.functional.":
        if name == "linear":
            return R._linear, False
        if name in _FOLD:
            return R.fold_batch(fn, prefix + name, _FOLD[name]), False
        if name in _TRAILING:
            return R._trailing(fn, prefix + name), False
        if name == "pad":
            return _pad(fn), False
        if name == "nll_loss":
            return R._nll_loss(fn), False
        if name in _DROPOUT:
            return R._dropout(fn, name), False
        return None, False
    if name in _RANDOM_FUNCS:
        call = R.random_factory(fn, name)
        return call, True
    if name in _RANDOM_LIKE:
        return R._random_like(fn, name), True
    if name in _LIKE:
        return R._like(fn), False
    if name == "where":
        return _where(fn), False
    if name in ("cat", "concat", "concatenate"):
        return R._cat(_core.cat, stack=False), False
    if name == "stack":
        return R._cat(_core.stack, stack=True), False
    if name == "einsum":
        return R._einsum, False
    if name == "broadcast_tensors":
        return _broadcast_tensors, False
    if name in ("numel",):
        return R._meta(lambda x: math.prod(logical_shape(x))), False
    if name == "is_tensor":
        return R._meta(lambda x: True), False
    if name in ("std_mean", "var_mean", "vector_norm"):
        return R.dim_op(name, fn, reduce_all=True), False
    if name in ("matrix_norm",):
        return R.dim_op(name, fn), False
    if name in ("inv", "det") and prefix == "linalg.":
        return R.pointwise(fn), False
    rule = R.METHOD_RULES.get(name)
    if rule is not None and name not in _RANDOM_METHODS:
        def method_rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if not args and "input" in kwargs:
                kwargs = dict(kwargs)
                args = (kwargs.pop("input"),)
            return rule(args, kwargs)

        return method_rule, False
    return None, False


def _where(fn: Any) -> R.Rule:
    pw = R.pointwise(fn)

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if len(args) + len(kwargs) == 1:
            return R._data_dependent("dynamic")(args, kwargs)
        return pw(args, kwargs)

    return rule


def _pad(fn: Any) -> R.Rule:
    trailing = R._trailing(fn, "nn.functional.pad")

    def rule(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        mode = args[2] if len(args) > 2 else kwargs.get("mode", "constant")
        if mode == "constant":
            return trailing(args, kwargs)
        pad = args[1] if len(args) > 1 else kwargs["pad"]
        return R.fold_batch(fn, "nn.functional.pad", len(pad) // 2)(args, kwargs)

    return rule


def _broadcast_tensors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    shapes = [logical_shape(t) for t in args]
    out = _core.broadcast_shapes(*shapes)
    return tuple(t.expand(*out) for t in args)


# Methods of unbatched tensors that take tensor arguments and are not
# binary methods (whose bindings hand batched arguments to
# ``_batched_method`` themselves): ``w.mm(x)``, ``table[idx]``,
# ``w.index_add(0, i, x)``. Swapping them costs about 0.2 us each when a
# vmap starts after a restore; operators need no entry (a binding returns
# NotImplemented and Python calls the batched operand's reflected
# operator).
_TENSOR_ARG_METHODS = [
    "__getitem__", "__setitem__", "add", "sub", "div", "pow", "matmul", "mm", "bmm", "mv", "dot",
    "outer", "addmm", "where", "masked_fill", "maximum", "minimum", "clamp", "lerp", "addcmul",
    "expand_as", "view_as", "reshape_as", "type_as", "gather", "index_select", "copy_", "add_", "sub_",
    "div_", "masked_fill_", "divide", "subtract", "clamp_min", "clamp_max", "clip", "isclose",
    "addcdiv", "scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill", "take",
    "put", "index_put", "allclose", "equal", "to", "backward", "set_", "resize_as_",
]


class _Routing:
    """The running-vmap count, and the methods of unbatched tensors that
    take tensor arguments (``_TENSOR_ARG_METHODS``), swapped for
    dispatchers while any vmap runs. (Module functions route themselves:
    see ``_routed``.)"""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.table: dict[str, tuple[Any, Any]] | None = None
        self.installed = False

    @staticmethod
    def build() -> dict[str, tuple[Any, Any]]:
        table = {}
        for name in _TENSOR_ARG_METHODS:
            fn = _method(name)
            if fn is not None:
                table[name] = (fn, _dispatcher(name, fn, R.METHOD_RULES.get(name), False))
        return table

    def enter(self) -> None:
        with self.lock:
            if self.table is None:
                self.table = self.build()
            if not self.installed:
                for name, (_, disp) in self.table.items():
                    setattr(Tensor, name, disp)
                self.installed = True
            self.active += 1
            _core._vmap_active(1)

    def exit(self) -> None:
        # The method dispatchers stay installed when the last vmap ends: the
        # next vmap (often the next call of the same vmapped function) finds
        # them in place, and the first of them called outside vmap restores
        # the originals (``restore``).
        with self.lock:
            self.active -= 1
            _core._vmap_active(-1)

    def __enter__(self) -> _Routing:
        self.enter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.exit()

    def restore(self) -> None:
        """Puts the original methods back if no vmap runs."""
        with self.lock:
            if self.active == 0 and self.installed:
                assert self.table is not None
                for name, (fn, _) in self.table.items():
                    setattr(Tensor, name, fn)
                self.installed = False


_routing = _Routing()

_PREFIXES = ("nn.functional.", "linalg.")


def dispatcher(qual: str, fn: Any) -> Callable[..., Any]:
    """The vmap dispatcher of module function ``qual`` (``'cat'``,
    ``'nn.functional.relu'``, ``'linalg.det'``) implemented by ``fn``."""
    prefix = next((p for p in _PREFIXES if qual.startswith(p)), "")
    rule, random = _module_rule(prefix, qual[len(prefix):], fn)
    return _dispatcher(qual, fn, rule, random)


def _dispatcher(qual: str, fn: Any, rule: R.Rule | None, random: bool) -> Callable[..., Any]:
    python = isinstance(fn, types.FunctionType)

    @functools.wraps(fn)
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        if not B.any_batched(args, kwargs):
            if _routing.active == 0:
                _routing.restore()
            elif random and B.active_levels():
                assert rule is not None
                return rule(args, kwargs)
            return fn(*args, **kwargs)
        out = kwargs.pop("out", None) if "out" in kwargs else None
        if rule is not None:
            result = rule(args, kwargs)
        elif python:
            try:
                result = fn(*args, **kwargs)
            except TypeError:
                result = B.per_row(qual, fn, args, kwargs, qual.endswith("_"))
        else:
            result = B.per_row(qual, fn, args, kwargs, qual.endswith("_"))
        if out is not None:
            out.copy_(result)
            return out
        return result

    return dispatch


# The lower layers reach this module through slots they own (they import
# nothing from func): routed module functions make their dispatchers with
# ``dispatcher``, and an autograd.Function's generated vmap rule enters
# ``_routing`` around the user's methods. Installed at import, before any
# vmap can run.
set_dispatcher(dispatcher)
_function_vmap.set_routing(_routing)


# ---------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------


def _name(func: Any) -> str:
    return getattr(func, "__name__", None) or repr(func)


def _prefix_leaves(prefix: Any, spec: Any) -> list[Any] | None:
    """``prefix`` (an int/None, or a structure matching the top of the
    pytree whose spec is ``spec``) as one value per leaf; None if the
    structures differ."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * spec.num_leaves
    kids = spec.children_specs
    if isinstance(prefix, (tuple, list)) and type(prefix) is spec.type and len(prefix) == len(kids):
        out: list[Any] = []
        for p, s in zip(prefix, kids, strict=True):
            sub = _prefix_leaves(p, s)
            if sub is None:
                return None
            out.extend(sub)
        return out
    if isinstance(prefix, dict) and isinstance(spec.type, type) and issubclass(spec.type, dict) \
            and set(prefix) == set(spec.context):
        out = []
        for k, s in zip(spec.context, kids, strict=True):
            sub = _prefix_leaves(prefix[k], s)
            if sub is None:
                return None
            out.extend(sub)
        return out
    return None


_R = TypeVar("_R")


def vmap(func: Callable[..., _R], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., _R]:
    """Vectorizing map: returns a function that runs ``func`` on every slice
    of its inputs along ``in_dims`` at once and stacks the results along
    ``out_dims``.

    ``func`` is written for one example; ``vmap(func)`` handles a batch
    without a Python loop. Inside, every ferrograd op sees batched tensors
    and runs its batching rule (one batched kernel call); an op without a
    rule runs once per row (see :func:`vmap_fallbacks`). ``vmap`` composes
    with itself and with the other transforms (``vmap(grad(f))`` gives
    per-sample gradients). In-place writes into an unbatched tensor from a
    batched one raise.

    Args:
        func (callable): a function of tensors (or nested tuples, lists and
            dicts of them).
        in_dims (int, None or tuple): the mapped dim of each input: an int
            for all, or a tuple with one entry per positional input (an int,
            ``None`` for an unmapped input, or a nested structure matching the
            input). Default: ``0``.
        out_dims (int, None or tuple): where the mapped dim goes in each
            output (an int, or a structure matching the outputs; ``None`` for
            an unbatched output). Default: ``0``.
        randomness (str): ``"error"`` (random ops raise), ``"different"``
            (each row draws its own numbers) or ``"same"`` (every row draws the
            same numbers). Default: ``"error"``.

    Keyword args:
        chunk_size (int, optional): map at most this many rows at a time.
            Default: ``None`` (all).

    Returns:
        callable: the batched function.

    Example:
        >>> batched_dot = vmap(lambda a, b: a.dot(b))
        >>> batched_dot(ferrograd.arange(6.0).reshape(2, 3), ferrograd.ones(2, 3))
        tensor([ 3., 12.])
        >>> vmap(lambda a, b: a * b, in_dims=(0, None))(ferrograd.arange(4.0).reshape(2, 2),
        ...                                             ferrograd.tensor([10.0, 100.0]))
        tensor([[  0., 100.],
                [ 20., 300.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    # A module function's implementation reached another way
    # (``vmap(ferrograd.Tensor.sum)``) runs as the module function.
    target = BY_IMPLEMENTATION.get(id(func), func)

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return _vmap_call(target, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _vmap_call(func: Callable[..., Any], in_dims: Any, out_dims: Any, randomness: str,
               chunk_size: int | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
            "to vmap over a function with no inputs. The latter is unsupported."
        )
    if all(isinstance(a, Tensor) for a in args) and (
            type(in_dims) is int or (len(in_dims) == len(args)
                                     and all(d is None or type(d) is int for d in in_dims))):
        # Tensors only: the leaves are the arguments (spec None: no pytree).
        flat, spec = list(args), None
        dims = [in_dims] * len(args) if type(in_dims) is int else list(in_dims)
    else:
        flat, spec = tree_flatten(args)
        dims = _prefix_leaves(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args), spec)
    if dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
            f"structure {spec}."
        )
    sizes = []
    for leaf, d in zip(flat, dims, strict=True):
        if d is None:
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                f"input is of type {type(leaf)}. We cannot vmap over non-Tensor arguments, please use "
                "None as the respective in_dim"
            )
        n = leaf.dim()
        if not -n <= d < n:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                f"that input is a Tensor of dimensionality {n} so expected in_dim to satisfy "
                f"-{n} <= in_dim < {n}."
            )
        sizes.append(leaf.size(d))
    if not sizes:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got all in_dims=None, so there is no "
            "input to map over. At least one input must have a mapped dimension."
        )
    if len(set(sizes)) != 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
            f"{sizes} for the mapped dimension"
        )
    batch = sizes[0]
    if chunk_size is None or chunk_size >= batch:
        return _run(func, name, flat, dims, spec, kwargs, batch, randomness, out_dims)
    import ferrograd as fg

    parts = []
    for start in range(0, batch, chunk_size):
        size = min(chunk_size, batch - start)
        leaves = [leaf if d is None else leaf.narrow(d, start, size)
                  for leaf, d in zip(flat, dims, strict=True)]
        parts.append(_run(func, name, leaves, dims, spec, kwargs, size, randomness, out_dims))
    outs0, out_spec = tree_flatten(parts[0])
    ods = _out_dims(out_dims, parts[0], name, out_spec)
    columns = [tree_flatten(p)[0] for p in parts]
    joined = []
    for i, od in enumerate(ods):
        if od is None:
            joined.append(outs0[i])
        else:
            joined.append(fg.cat([c[i] for c in columns], od))
    return tree_unflatten(joined, out_spec)


def _out_dims(out_dims: Any, out: Any, name: str, spec: Any = None) -> list[Any]:
    if spec is None:
        spec = tree_flatten(out)[1]
    ods = _prefix_leaves(out_dims, spec) if isinstance(out_dims, (int, type(None), tuple, list)) else None
    if ods is None and isinstance(out_dims, tuple) and len(out_dims) == 1 and not isinstance(out, tuple):
        ods = _prefix_leaves(out_dims[0], spec)
    if ods is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
            f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs has "
            f"structure {spec}."
        )
    return ods


def _run(func: Callable[..., Any], name: str, flat: list[Any], dims: list[Any], spec: Any,
         kwargs: dict[str, Any], batch: int, randomness: str, out_dims: Any) -> Any:
    level = B._VmapLevel(next(B._ids), batch, randomness)
    stack = B._vstack()
    stack.append(level)
    try:
        with _routing:
            leaves = [leaf if d is None else _add_level(leaf, d, level.id)
                      for leaf, d in zip(flat, dims, strict=True)]
            out = func(*(leaves if spec is None else tree_unflatten(leaves, spec)), **kwargs)
    finally:
        stack.pop()
    if type(out_dims) is int and isinstance(out, Tensor):
        # One tensor out, one int dim: no pytree.
        return _remove_level(out, level, out_dims)
    outs, out_spec = tree_flatten(out)
    ods = _out_dims(out_dims, out, name, out_spec)
    result = []
    for o, od in zip(outs, ods, strict=True):
        if od is None:
            if type(o) is BatchedTensor and level.id in o._lv:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            result.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. Did you mean "
                "to set out_dims= to None for output?"
            )
        result.append(_remove_level(o, level, od))
    return tree_unflatten(result, out_spec)


def _add_level(leaf: Any, d: int, lid: int) -> BatchedTensor:
    if type(leaf) is BatchedTensor:
        nb = len(leaf._lv)
        n = leaf._p.dim() - nb
        return BatchedTensor(leaf._p.movedim(nb + d % n, nb), leaf._lv + (lid,))
    return BatchedTensor(leaf.movedim(d, 0), (lid,))


def _remove_level(o: Any, level: B._VmapLevel, od: int) -> Any:
    if type(o) is BatchedTensor:
        p, lv = o._p, o._lv
    else:
        p, lv = o, ()
    if lv and lv[-1] == level.id:
        nb = len(lv)
        lr = p.dim() - nb
        pos = R._shift(od, lr + 1, 0)
        return wrap(p.movedim(nb - 1, nb - 1 + pos), lv[:-1])
    nb = len(lv)
    lr = p.dim() - nb
    pos = R._shift(od, lr + 1, 0)
    q = p.unsqueeze(nb + pos)
    shape = list(q.shape)
    shape[nb + pos] = level.size
    return wrap(q.expand(*shape), lv)


_install_methods()
