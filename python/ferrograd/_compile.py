"""``ferrograd.compile``: capture a function's operations once, replay them in Rust.

The first call of a compiled function runs it eagerly while the calling
thread records every tensor operation into a program (``ferrograd::compile``
in the crate). Later calls whose *guards* hold run that program with the GIL
released instead of the Python function; the results are the eager ones, as
the same kernels run in the same order, and in grad mode every operation
records its usual autograd node. See docs/compile.md.
"""

from __future__ import annotations

import dis
import functools
import hashlib
import os
import random
import sys
import sysconfig
import threading
import time
import types
import weakref
from collections.abc import Callable
from typing import Any

from . import _compile_split as split
from . import _core
from ._batched import active_levels as _vmap_levels
from ._core import Tensor
from .nn.modules._hooks import _callees
from .nn.modules._state_dict import STRUCTURE_EPOCH
from .nn.modules.module import Module
from .utils._pytree import TreeSpec, tree_flatten, tree_unflatten

#: Programs kept per compiled function (torch's ``recompile_limit``);
#: calls whose guards match none of them, once this many are kept, run eagerly.
cache_size_limit = 8

_EAGER = object()  # cache entry of a call that cannot be captured
# Ends the leaves of a call of tensors only (where other calls end with
# their tree spec); a plain value, keyed without calling back into Python.
_NO_KWARGS = "(tensors only)"
_MISSING = object()
_compiled: weakref.WeakSet[_Compiled] = weakref.WeakSet()


class _ThreadState(threading.local):
    disabled = 0  # calls of compiler.disable functions running on this thread


_state = _ThreadState()


class Unsupported(RuntimeError):
    """Raised with ``fullgraph=True`` when the function cannot be captured
    whole (torch's ``torch._dynamo.exc.Unsupported``)."""


def _disabled() -> bool:
    return _state.disabled > 0


class _Entry:
    __slots__ = ("program", "out_leaves", "out_spec", "tensor_slots", "ops", "single")

    def __init__(self, program: Any, out_leaves: list[Any], out_spec: Any) -> None:
        self.program = program
        self.out_spec = out_spec
        # Positions of the program's results among the output leaves; the
        # other leaves are Python values, returned as they were captured.
        self.tensor_slots = [i for i, v in enumerate(out_leaves) if isinstance(v, Tensor)]
        self.out_leaves = [None if isinstance(v, Tensor) else v for v in out_leaves]
        self.ops = program.operations()
        # The result is the program's one tensor, as it is.
        self.single = self.tensor_slots == [0] and tree_unflatten([_MISSING], out_spec) is _MISSING


def _value_key(v: Any) -> Any:
    """The guard on a Python value: equality for plain values, identity for the rest."""
    keyer = _KEYERS.get(type(v))
    if keyer is None:
        keyer = _KEYERS[type(v)] = _keyer(type(v))
    return keyer(v)


def _keyer(t: type) -> Callable[[Any], Any]:
    """How ``_value_key`` keys values of type ``t``."""
    if t is type(None) or issubclass(t, (bool, int, float, str, complex)):
        return lambda v: (type(v), v)
    if issubclass(t, TreeSpec):
        return lambda v: ("S", v)
    if t in (tuple, list, set, frozenset, dict, types.FunctionType):
        return lambda v: _nested_key(v, _DEPTH, [_ITEMS])
    if issubclass(t, (tuple, list)):
        return lambda v: (type(v), tuple(_value_key(x) for x in v))
    if issubclass(t, dict):
        return lambda v: (type(v), tuple((_value_key(k), _value_key(x)) for k, x in v.items()))
    if issubclass(t, Module):
        return _module_key
    if _is_optimizer_type(t):
        return _optimizer_key
    if issubclass(t, Tensor):
        return lambda v: ("T", _core._tensor_id(v))
    np = sys.modules.get("numpy")
    if np is not None and issubclass(t, np.ndarray):
        return _array_key
    if np is not None and issubclass(t, np.generic):
        return lambda v: (type(v), v.item())
    if issubclass(t, types.MethodType):
        return lambda v: ("B", id(v.__func__), _nested_key(v.__self__, _DEPTH, [_ITEMS]))
    if issubclass(t, functools.partial):
        return lambda v: ("P", id(v), _nested_key((v.func, v.args, v.keywords), _DEPTH, [_ITEMS]))
    if _has_settings(t):
        return _object_key
    return lambda v: ("O", id(v))


def _array_key(v: Any) -> tuple:
    """A NumPy array by its contents (which change in place): the bytes, or
    a 128-bit digest of them past 4 KiB."""
    data = v.tobytes()
    if len(data) > 4096:
        data = hashlib.blake2b(data, digest_size=16).digest()
    return ("N", v.shape, v.dtype.str, data)


#: Levels of objects, lists and dicts an object's guard walks into, and
#: the values it keys at most; past either, values are keyed by identity.
_DEPTH = 6
_ITEMS = 1024


def _object_key(v: Any, depth: int = _DEPTH, budget: list[int] | None = None) -> tuple:
    """An object of a Python class: its identity, the plain values among its
    class's attributes (``Config.scale``), and its own attributes (in its
    ``__dict__`` and ``__slots__``), which may change in place: plain
    values by value, lists, tuples, dicts and objects by their contents
    (``cfg.model.scale``, ``cfg.scales[0]``) ``depth`` levels down, the
    rest as ``_value_key`` keys them."""
    budget = [_ITEMS] if budget is None else budget
    items = [(k, _nested_key(x, depth - 1, budget)) for k, x in _attributes(v)]
    return ("O", id(v), _class_settings(type(v)), tuple(items))


def _nested_key(x: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    t = type(x)
    if t in _PLAIN:
        return (t, x)
    if depth <= 0 or budget[0] < 0:
        return ("O", id(x)) if t is not Tensor else ("T", _core._tensor_id(x))
    if t in (list, tuple):
        return (t, tuple(_nested_key(e, depth - 1, budget) for e in x))
    if t in (set, frozenset):
        return (t, frozenset(_nested_key(e, depth - 1, budget) for e in x))
    if t is types.FunctionType:
        names = _user_reads(x)
        if names is None:
            return ("O", id(x))
        return ("F", id(x), tuple(_nested_key(r, depth - 1, budget) for r in _function_reads(x, names)))
    if t is dict:
        return (t, tuple((_nested_key(k, 0, budget), _nested_key(e, depth - 1, budget))
                         for k, e in x.items()))
    if t is functools.partial:
        return ("P", id(x), _nested_key((x.func, x.args, x.keywords), depth - 1, budget))
    if _has_settings(t):
        return _object_key(x, depth, budget)
    if isinstance(x, Module):
        # Not walked into here (an object may point back at the module
        # whose guards are being made); a module whose parameters a
        # program reads is guarded whole as a global or an argument.
        return ("M", id(x), x.training)
    return _value_key(x)


def _function_reads(f: Any, names: tuple[str, ...]) -> list[Any]:
    """What a call of the function ``f`` reads besides its arguments (as
    ``reads_of`` in Rust): its globals ``names`` (``_MISSING`` where
    absent), closure cells and default values."""
    g = f.__globals__
    out = [g.get(n, _MISSING) for n in names]
    for cell in f.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # not assigned yet
            out.append(_MISSING)
    out.extend(f.__defaults__ or ())
    out.extend((f.__kwdefaults__ or {}).values())
    return out


def _attributes(v: Any) -> list[tuple[str, Any]]:
    """The attributes of an object (in its ``__dict__`` and ``__slots__``)
    that compiled code may read: those whose names the code of a compiled
    function or of a function of the user's names (``_USER_NAMES``), or
    the code of the object's own class when it is the user's. An attribute
    no such code names (a trainer's history, a logger's handlers) is only
    read by code whose globals are its own machinery."""
    read = _class_reads(type(v))
    own = vars(v).items() if hasattr(v, "__dict__") else ()
    keep = [(k, x) for k, x in own if k in _USER_NAMES or k in read]
    for klass in type(v).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and (name in _USER_NAMES or name in read):
                x = getattr(v, name, _MISSING)
                if x is not _MISSING:
                    keep.append((name, x))
    return keep


def _class_settings(cls: type) -> tuple:
    """The plain values among the attributes of ``cls`` and its bases that
    compiled code may read (as ``_attributes``)."""
    read = _class_reads(cls)
    return tuple((k, type(x), x) for klass in cls.__mro__[:-1] for k, x in vars(klass).items()
                 if (k in _USER_NAMES or k in read) and not k.startswith("__") and _is_plain(x))


#: Every name the code of a compiled function, or of a function of the
#: user's it reached, loads as a global or an attribute (see _attributes).
_USER_NAMES: set[str] = set()


@functools.cache
def _class_reads(cls: type) -> frozenset[str]:
    """The names the methods of ``cls`` load, when it is a class of the
    user's (see ``_user_reads``); empty otherwise."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None) or ""
    if not path or _is_library(path):
        return frozenset()
    return frozenset(_names_read(cls))


@functools.cache
def _has_settings(t: type) -> bool:
    """Whether instances of ``t`` keep attributes (in a ``__dict__`` or
    ``__slots__``) that a guard reads: not classes, functions, methods,
    Python modules, tensors or modules, which are guarded their own way."""
    if issubclass(t, (type, types.ModuleType, Tensor, Module, _Compiled, types.FunctionType,
                      types.MethodType, types.BuiltinFunctionType)):
        return False
    names = dir(t)
    return "__dict__" in names or "__slots__" in names


_KEYERS: dict[type, Callable[[Any], Any]] = {}


def _module_key(m: Any, volatile: list[bool] | None = None) -> tuple:
    """Guards on a module: its submodules' train/eval flags, hooks and plain
    attributes their code reads (and the contents of lists, dicts and
    objects among those, setting ``volatile[0]``: they may change without
    an assignment to the module), and the identity of every parameter and
    buffer (so a replaced weight recaptures)."""
    volatile = [False] if volatile is None else volatile
    key: list[Any] = [id(m)]
    for sub in m.modules():
        key.append(sub.training)
        if _hooked(sub):
            key.append(("hooks", id(sub)))
        d = sub.__dict__
        for name in _names_read(type(sub)):
            v = d.get(name, d)
            if _is_plain(v):
                key.append((name, type(v), v))
            elif v is not d and name not in _module_registries():
                key.append((name, _value_key(v)))
                if _changes_in_place(v):
                    volatile[0] = True
    for _, t in m.named_parameters():
        key.append((_core._tensor_id(t), t.requires_grad))
    for _, t in m.named_buffers():
        key.append(_core._tensor_id(t))
    return tuple(key)


_optimizer_type: list[type] = []
_PLAIN = frozenset((bool, int, float, str, complex, type(None)))
_read_by_class: dict[type, tuple[str, ...]] = {}


@functools.cache
def _module_registries() -> frozenset[str]:
    """The attributes every module keeps for itself (``_parameters``,
    ``_modules``, the hook dicts): guarded as parameters, submodules and
    hooks, never by their contents."""
    return frozenset(vars(Module()))


def _changes_in_place(v: Any) -> bool:
    """A value whose key may change while it stays the same object: a list,
    dict, set, array or Python object (by contents), or a function of the
    user's (by what it reads)."""
    t = type(v)
    if t in (list, dict, set) or _has_settings(t):
        return True
    if t is types.FunctionType:
        return _user_reads(v) is not None
    np = sys.modules.get("numpy")
    return np is not None and isinstance(v, np.ndarray)


def _is_plain(v: Any) -> bool:
    """A number, string or None, or a tuple of them (what a module keeps as
    settings: ``p``, ``eps``, ``kernel_size``)."""
    return type(v) in _PLAIN or (type(v) is tuple and all(_is_plain(e) for e in v))


def _names_read(cls: type) -> tuple[str, ...]:
    """The names the code of ``cls``'s own methods (not ``Module``'s) loads
    as attributes or globals: an over-estimate of the attributes its
    ``forward`` may read, so that a change of one (``m.scale = 2.0``) makes
    a compiled call record again instead of replaying the old value."""
    names = _read_by_class.get(cls)
    if names is None:
        found: set[str] = set()
        for klass in cls.__mro__:
            if klass is Module or klass is object:
                continue
            for v in vars(klass).values():
                f = v.fget if isinstance(v, property) else getattr(v, "__func__", v)
                code = getattr(f, "__code__", None)
                if code is not None:
                    found.update(_code_names(code))
        names = _read_by_class[cls] = tuple(sorted(found))
    return names
# Results a replay may hand back as captured: values nobody can change.
# (Not functions: one made during the call closes over that call's values.)
_IMMUTABLE = (type, range, slice, bytes, type(_core.float32), type(_core.contiguous_format), _core.device)


def _made_objects(out_leaves: list[Any], known: list[Any]) -> list[str]:
    """Type names of results that are neither tensors nor values nobody can
    change, nor objects the call was given: objects made during the call,
    which a replay would not make again."""
    ids = {id(v) for v in known}
    return [type(v).__name__ for v in out_leaves
            if type(v) not in _PLAIN and not isinstance(v, (Tensor, *_IMMUTABLE)) and id(v) not in ids]


def _optimizer_class() -> type:
    if not _optimizer_type:
        from .optim.optimizer import Optimizer

        _optimizer_type.append(Optimizer)
    return _optimizer_type[0]


def _is_optimizer_type(t: type) -> bool:
    return issubclass(t, _optimizer_class())


def _is_optimizer(v: Any) -> bool:
    return _is_optimizer_type(type(v))


def _optimizer_key(opt: Any) -> tuple:
    """Guards on an optimizer: every group's hyper-parameters and
    parameters, and every parameter's state (a captured step replays the
    numbers it read from them)."""
    return _core._optimizer_key(opt, _value_key)


def _optimizer_tensors(opt: Any) -> list[Any]:
    ts = [p for g in opt.param_groups for p in g["params"]]
    ts.extend(v for st in opt.state.values() for v in st.values() if isinstance(v, Tensor))
    return ts


def _optimizer_hooked(opt: Any) -> bool:
    from .optim import optimizer as o

    return bool(opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks
                or o._global_optimizer_pre_hooks or o._global_optimizer_post_hooks)


def _hooked(m: Any) -> bool:
    return bool(m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks)


def _has_hooks(objs: list[Any]) -> bool:
    for o in objs:
        if isinstance(o, Module):
            if any(_hooked(sub) for sub in o.modules()):
                return True
        elif _is_optimizer(o) and _optimizer_hooked(o):
            return True
    return False


class _Refs:
    """What a call may read besides its arguments: for a bound method (or a
    callable object), its object; the globals its code names (in nested
    lambdas, comprehensions and inner functions too), its closure cells
    and its default values, read from ``func`` on every call; and the same
    for the functions of the user's among those (``_user_reads``). The
    names are found once; the values are read on every call (in Rust,
    ``_call_refs``)."""

    def __init__(self, fn: Callable) -> None:
        self.self_obj = getattr(fn, "__self__", None)
        f = getattr(fn, "__func__", fn)
        call = type(f).__call__ if callable(f) and not isinstance(f, types.FunctionType) else None
        if isinstance(call, types.FunctionType):
            # A callable object: its attributes and its __call__'s reads.
            self.self_obj, f = f, call
        self.func = f if isinstance(f, types.FunctionType) else None
        self.names = _code_names(f.__code__) if self.func is not None else ()
        _USER_NAMES.update(self.names)


#: The instructions that read a global or an attribute by name.
_LOADS = frozenset(("LOAD_GLOBAL", "LOAD_NAME", "LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"))


def _code_names(code: Any) -> tuple[str, ...]:
    """The names ``code`` and the code nested in it (lambdas,
    comprehensions, generators, inner functions) load as globals or
    attributes (not those it only stores: ``self.history = []`` in an
    ``__init__`` is no read)."""
    found: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        found.update(i.argval for i in dis.get_instructions(c) if i.opname in _LOADS)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return tuple(sorted(found))


_USER_READS: dict[Any, tuple[str, ...] | None] = {}


def _user_reads(f: Any) -> tuple[str, ...] | None:
    """The names a function of the user's reads (see ``_code_names``), or
    None for a function of ferrograd, the standard library or an installed
    package (guarded by identity alone: their globals are their own
    machinery). Found once per code object."""
    code = f.__code__
    names = _USER_READS.get(code, _MISSING)
    if names is _MISSING:
        names = _USER_READS[code] = None if _is_library(code.co_filename) else _code_names(code)
        if names is not None:
            _USER_NAMES.update(names)
    return names


def _is_library(path: str) -> bool:
    """Whether a source file belongs to ferrograd, the standard library or
    an installed package."""
    return path.startswith("<frozen") or os.path.abspath(path).startswith(_library_dirs())


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {os.path.dirname(os.path.abspath(__file__))}
    kinds = ("stdlib", "platstdlib", "purelib", "platlib")
    dirs.update(os.path.abspath(paths[k]) for k in kinds if k in paths)
    return tuple(d + os.sep for d in sorted(dirs))


def _guarded_tensors(objs: list[Any]) -> set[int]:
    """Identities of the tensors the guards on ``objs`` cover."""
    ids: set[int] = set()
    for o in objs:
        if isinstance(o, Tensor):
            ids.add(_core._tensor_id(o))
        elif isinstance(o, Module):
            ids.update(_core._tensor_id(t) for _, t in o.named_parameters())
            ids.update(_core._tensor_id(t) for _, t in o.named_buffers())
        elif _is_optimizer(o):
            ids.update(_core._tensor_id(t) for t in _optimizer_tensors(o))
    return ids


_CLOCKS = frozenset(map(id, (time.time, time.time_ns, time.perf_counter, time.perf_counter_ns,
                             time.monotonic, time.monotonic_ns, time.process_time, time.process_time_ns,
                             os.urandom)))


def _draws(fn: Any) -> bool:
    """Whether a builtin gives a new value per call that a replay would not
    give again: a clock, ``os.urandom``, or a method of Python's or
    NumPy's random generators (``random.random``, ``np.random.rand``,
    ``rng.normal``)."""
    if id(fn) in _CLOCKS:
        return True
    owner = getattr(fn, "__self__", None)
    if owner is None or isinstance(owner, types.ModuleType):
        return False
    return isinstance(owner, random.Random) or type(owner).__module__.startswith("numpy.random")


def _numpy_random_states(values: list[Any]) -> list[Any]:
    """The states of NumPy's global generator and of the NumPy generators
    among ``values`` (empty without NumPy)."""
    np = sys.modules.get("numpy")
    if np is None:
        return []
    gens = [np.random.mtrand._rand]
    gens += [v for v in values if isinstance(v, (np.random.Generator, np.random.RandomState))]
    return [_frozen(g.bit_generator.state if hasattr(g, "bit_generator") else g._bit_generator.state)
            for g in gens]


def _frozen(v: Any) -> Any:
    """A generator state's dicts and arrays as comparable tuples and bytes."""
    if isinstance(v, dict):
        return tuple((k, _frozen(x)) for k, x in v.items())
    return v.tobytes() if hasattr(v, "tobytes") else v


class _Watch:
    """The profile function of a capture: a ``print`` breaks the capture,
    and the first event after the capture broke looks at the frames running
    between the compiled function's and the one where it broke."""

    def __init__(self, top: Any) -> None:
        self.top = top  # the compiled function's code (None: not watched)
        self.seen = top is None
        # The outermost module below the compiled function whose
        # ``forward`` was running when the capture broke: its code.
        self.callee: Any = None

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            if arg is print:
                _core._capture_break("print inside the captured function")
            elif _draws(arg):
                name = getattr(arg, "__qualname__", getattr(arg, "__name__", "a function"))
                _core._capture_break(f"{name} inside the captured function gives a new value per call")
        if not self.seen and event != "call" and _core._capture_broken():
            self.seen = True
            while frame is not None and frame.f_code is not self.top:
                me = frame.f_locals.get("self") if frame.f_code.co_argcount else None
                if isinstance(me, Module) and getattr(type(me).forward, "__code__", None) is frame.f_code:
                    self.callee = frame.f_code
                frame = frame.f_back
            if frame is None:
                self.callee = None  # not below the compiled function


class _Compiled:
    """A compiled function: a cache of programs keyed by their guards."""

    def __init__(self, fn: Callable, fullgraph: bool, owner: Any = None, body: Any = None) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.owner = owner  # the module whose forward this is, if any
        # The source to cut at a graph break (a piece of a cut function
        # comes with its own), found when first needed; and the cuts made.
        self.body = body
        self.splits: dict[int, split.Split] = {}
        self.cache: dict[Any, Any] = {}
        self.reasons: list[str] = []
        self.lock = threading.Lock()
        self.mods_key: tuple | None = None
        self.volatile = False  # a module's guards read contents that change in place
        self.moved = 0  # captures not kept: the call changed its own guards
        self.refs = _Refs(fn)
        # What the last call that replayed a program read, to check the
        # next call against without building its key (see _compiled_call).
        self.memo = _core._CallMemo()
        # The forward code of modules whose own forward broke a capture of
        # this function; its eager parts run such modules compiled, each
        # instance with its own compiled forward (``callee_fns``).
        self.callees: dict[Any, Callable[[Any, tuple, dict], Any]] = {}
        self.callee_fns: dict[int, _Compiled] = {}
        _compiled.add(self)

    def reset(self) -> None:
        with self.lock:
            self.cache.clear()
            self.memo.clear()
            self.reasons.clear()
            self.splits.clear()
            self.callees.clear()
            self.callee_fns.clear()
            self.mods_key = None
            self.moved = 0

    def _refs(self) -> list[Any]:
        # The bound method's object, the values of the names in ``refs``
        # (plain values, tensors and modules: what a guard can check), and
        # the module whose forward this is.
        return _core._call_refs(self)

    def key(self, leaves: list[Any]) -> tuple:
        # The modes, the default dtype, then tensor leaves by shape, strides,
        # dtype, requires_grad and which leaves are the same tensor, tensors
        # the function names by identity, plain values by type and value,
        # optimizers by their groups and state; with the guards of the
        # modules among them (``_modules_key``).
        return _core._call_key(self, leaves)

    def _modules_key(self, mods: list[Any]) -> tuple:
        # Walking a module tree costs microseconds per call; its guards are
        # recomputed only when some module or tensor handle changed since.
        epoch = (STRUCTURE_EPOCH[0], _core._handle_epoch(), tuple(map(id, mods)))
        cached = self.mods_key
        if cached is not None and cached[0] == epoch:
            return cached[1]
        volatile = [False]
        key = tuple(_module_key(m, volatile) for m in mods)
        if volatile[0]:
            # Contents that change in place: keyed on every call, no memo.
            self.volatile = True
            self.mods_key = None
        else:
            self.mods_key = (epoch, key)
        return key

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and not _state.disabled:
            # Tensors only, and a kept program fits: one call into Rust.
            out = _core._compiled_call(self, args)
            if out is not _MISSING:
                return out
        if _disabled() or _core._capturing() or _vmap_levels():
            # Nested in another capture: its operations join that program.
            # Under vmap the arguments are batched views, run eagerly.
            return self.fn(*args, **kwargs)
        tensors: list[Any] | None = None
        if not kwargs and all(type(a) is Tensor for a in args):
            tensors = list(args)  # the common case: tensors only
            leaves = [*args, _NO_KWARGS]
        else:
            leaves, spec = tree_flatten((args, kwargs))
            leaves.append(spec)  # the call's structure is guarded too
        try:
            key = self.key(leaves)
            entry = self.cache.get(key, _MISSING)
        except TypeError:  # an unhashable guard value
            key, entry = None, _EAGER
        if type(entry) is split.Split:
            return entry(args, kwargs)
        if entry is not _MISSING and entry is not _EAGER:
            if tensors is None:
                tensors = [v for v in leaves if isinstance(v, Tensor)]
            for prog in entry:
                # None: a value it branched on (or a .grad it read) differs,
                # and nothing was changed; another program may fit.
                outs = prog.program.replay(tensors)
                if outs is not None:
                    return self._result(prog, outs)
        if self.splits:
            # A cut is the function's own code rearranged, right for every
            # input: the pieces keep their own guards (what only the eager
            # statements read is not guarded), and their own programs.
            return next(iter(self.splits.values()))(args, kwargs)
        if entry is _EAGER or self.count() >= cache_size_limit:
            return self.eager(self.fn, args, kwargs)
        return self._capture(key, leaves, args, kwargs)

    def eager(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """Runs ``fn`` (this function, or an eager part of it) eagerly,
        with the modules whose forward broke its capture compiled."""
        if not self.callees:
            return fn(*args, **kwargs)
        outer = _callees.table
        _callees.table = self.callees
        try:
            return fn(*args, **kwargs)
        finally:
            _callees.table = outer

    def _run_callee(self, module: Any, args: tuple, kwargs: dict) -> Any:
        c = self.callee_fns.get(id(module))
        if c is None or c.owner is not module:
            if len(self.callee_fns) >= 8 * cache_size_limit:
                return module.forward(*args, **kwargs)
            c = self.callee_fns[id(module)] = _Compiled(module.forward, False, owner=module)
        return c(*args, **kwargs)

    def _note_callee(self, code: Any) -> None:
        if code is not None and code is not split.code_of(self.fn):
            self.callees[code] = self._run_callee

    def count(self) -> int:
        """How many programs are kept."""
        return sum(len(e) if type(e) is list else 1 for e in self.cache.values() if e is not _EAGER)

    def programs(self) -> list[_Entry]:
        """The kept programs, in the order they were captured (with those
        of the pieces of a function cut at a graph break)."""
        out: list[_Entry] = []
        for e in self.cache.values():
            if type(e) is list:
                out.extend(e)
            elif type(e) is split.Split:
                out.extend(p for piece in e.pieces() for p in piece.programs())
        for c in list(self.callee_fns.values()):
            out.extend(c.programs())
        return out

    def break_reasons(self) -> list[str]:
        """Why captures broke, here and in the pieces of cut functions."""
        out = list(self.reasons)
        for s in self.splits.values():
            out.extend(r for piece in s.pieces() for r in piece.break_reasons())
        for c in list(self.callee_fns.values()):
            out.extend(c.break_reasons())
        return out

    @staticmethod
    def _result(entry: _Entry, outs: list[Any]) -> Any:
        if entry.single:
            return outs[0]
        res = list(entry.out_leaves)
        for slot, t in zip(entry.tensor_slots, outs, strict=False):
            res[slot] = t
        return tree_unflatten(res, entry.out_spec)

    def _capture(self, key: Any, leaves: list[Any], args: tuple, kwargs: dict) -> Any:
        self.memo.clear()  # the cache may change below
        refs = self._refs()
        refs.extend(v for v in leaves if isinstance(v, Module) or _is_optimizer(v))
        _core._capture_begin([v for v in leaves if isinstance(v, Tensor)])
        if _has_hooks(refs):
            _core._capture_break("a module has hooks")
        profiler = sys.getprofile()
        watch = _Watch(None if self.fullgraph else split.code_of(self.fn))
        sys.setprofile(watch)
        # Notes which statement was running when the capture broke.
        locator = split.Locator(None if self.fullgraph or self.body is False else split.code_of(self.fn))
        states = _numpy_random_states(refs + leaves)
        tracing = locator.start()
        try:
            result = self.fn(*args, **kwargs)
        except BaseException:
            _core._capture_abort()
            raise
        finally:
            if tracing:
                locator.stop()
            sys.setprofile(profiler)
        out_leaves, out_spec = tree_flatten(result)
        program, why = _core._capture_end([v for v in out_leaves if isinstance(v, Tensor)])
        if program is not None and _numpy_random_states(refs + leaves) != states:
            # NumPy generators have no call events to break at: the whole
            # function runs eagerly, so each call draws anew.
            program, why, locator.line = None, "it draws from a NumPy random generator", None
        if self._key_moved(key, leaves):
            # The call changed what the guards read (an optimizer's first
            # step makes its state): neither its program nor where it broke
            # is kept, so the next call, seeing the new state, is captured
            # again; a function whose every call does so ends up running
            # eagerly, or cut where it broke (from the second such call: the
            # pieces' guards may well not read what moves).
            self.moved += 1
            if self.moved < (2 if program is None else cache_size_limit):
                return result
            if program is not None:
                self.cache[key] = _EAGER
                self.reasons.append("every call changes what its guards read")
                return result
        made = _made_objects(out_leaves, leaves + refs) if program is not None else None
        if made:
            program, why = None, (
                f"it returns a Python object made during the call ({made[0]}), "
                "which a replay would not make again"
            )
        if program is not None:
            unguarded = set(program.constant_ids()) - _guarded_tensors(refs)
            if unguarded:
                program, why = None, (
                    f"it reads {len(unguarded)} tensor(s) reached other than through its arguments, "
                    "the globals and closure it names, or the compiled module's parameters and buffers"
                )
        if program is None:
            if self.fullgraph:
                raise Unsupported(f"ferrograd.compile(fullgraph=True): cannot capture {self._name()}: {why}")
            self.reasons.append(str(why))
            self._note_callee(watch.callee)
            self.cache[key] = self._split(locator.line)
        else:
            self.cache.setdefault(key, []).append(_Entry(program, out_leaves, out_spec))
        return result

    def _split(self, line: int | None) -> Any:
        """The function cut at the statement holding ``line`` (where its
        capture broke), or ``_EAGER`` when it cannot be cut there."""
        if line is None or self.body is False:
            return _EAGER
        if self.body is None:
            body = split.Body.of(self.fn)
            if isinstance(body, str):
                self.body = False
                return _EAGER
            self.body = body
        at = self.body.index(line)
        if at is None or len(self.body.stmts) < 2:
            return _EAGER
        if at not in self.splits:
            self.splits[at] = split.Split(
                self.body, at, lambda fn, body: _Compiled(fn, False, body=body), self.eager)
        return self.splits[at]

    def _key_moved(self, key: Any, leaves: list[Any]) -> bool:
        try:
            return self.key(leaves) != key
        except TypeError:
            return True

    def _name(self) -> str:
        return getattr(self.fn, "__qualname__", repr(self.fn))


def _wrap_function(fn: Callable, fullgraph: bool) -> Callable:
    compiled = _Compiled(fn, fullgraph)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return compiled(*args, **kwargs)

    wrapper._ferrograd_compiled = compiled  # type: ignore[attr-defined]
    wrapper._torchdynamo_orig_callable = fn  # type: ignore[attr-defined]
    return wrapper


class OptimizedModule(Module):
    """A compiled module (torch's ``OptimizedModule``): calls run the
    wrapped module's ``forward`` through a compiled program; parameters,
    ``state_dict`` (keys prefixed ``_orig_mod.``), ``train()``/``eval()``
    reach the original module, kept as ``_orig_mod``."""

    def __init__(self, mod: Module, fullgraph: bool) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", _Compiled(mod.forward, fullgraph, owner=mod))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._orig_mod, name)


def compile(
    model: Any = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: Any = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    disable: bool = False,
) -> Any:
    """Compiles a function or module: the first call captures its tensor
    operations, later calls with the same kind of inputs replay them in Rust.

    Args:
        model (Callable or Module): what to compile. Without it, returns a
            decorator.
        fullgraph (bool): raise :class:`ferrograd._dynamo.exc.Unsupported`
            when the function cannot be captured whole, instead of running
            it eagerly. Default: False.
        dynamic (bool, optional): accepted for torch compatibility; a new
            shape always records a new program (at most
            ``ferrograd._compile.cache_size_limit`` per function).
        backend (str or Callable): accepted for torch compatibility; there
            is one backend, replay in the ferrograd engine.
        mode (str, optional): accepted for torch compatibility.
        options (dict, optional): accepted for torch compatibility.
        disable (bool): return ``model`` unchanged. Default: False.

    Returns:
        the compiled function, or an ``OptimizedModule`` wrapping the module.

    Example:
        >>> f = ferrograd.compile(lambda x: (x * x).tanh().sum())
        >>> x = ferrograd.ones(3)
        >>> f(x) == (x * x).tanh().sum()
        tensor(True)
    """
    del dynamic, backend, mode, options
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph)
    if not callable(model):
        raise RuntimeError(f"compile: expected a callable or a Module, got {type(model).__name__}")
    return _wrap_function(model, fullgraph)


def reset() -> None:
    """Forgets every compiled function's programs (torch's ``torch.compiler.reset``)."""
    for c in list(_compiled):
        c.reset()


def disable(fn: Callable | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Runs ``fn`` eagerly, never captured; called from a function being
    captured, it makes that function run eagerly (a graph break)."""
    del recursive
    if fn is None:
        return functools.partial(disable, reason=reason)

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        _core._capture_break(f"compiler.disable: {reason or getattr(fn, '__qualname__', 'function')}")
        _state.disabled += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _state.disabled -= 1

    return eager


def is_compiling() -> bool:
    """Whether this thread is capturing a compiled function."""
    return _core._capturing()


class ExplainOutput:
    """What :func:`explain` found: programs captured, calls left eager and why."""

    def __init__(self, graph_count: int, break_reasons: list[str], ops_per_graph: list[list[str]]) -> None:
        self.graph_count = graph_count
        self.graph_break_count = len(break_reasons)
        self.break_reasons = break_reasons
        self.ops_per_graph = ops_per_graph
        self.op_count = sum(len(o) for o in ops_per_graph)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines.extend(f"  {r}" for r in self.break_reasons)
        return "\n".join(lines)


def explain(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``explain(fn)(*args)``: captures ``fn`` on these arguments and reports
    the program (its operations) or why it cannot be captured."""

    def run(*a: Any, **k: Any) -> ExplainOutput:
        c = _Compiled(fn, fullgraph=False)
        c(*a, **k)
        graphs = [e.ops for e in c.programs()]
        return ExplainOutput(len(graphs), c.break_reasons(), graphs)

    if args or kwargs:
        return run(*args, **kwargs)
    return run
