"""A bounded, allowlist-only unpickler for files that may be hostile.

:class:`BoundedUnpickler` interprets the pickle stream one opcode at a time
(protocols 0 to 5) instead of handing it to :mod:`pickle`. It is the one
unpickler behind every weights-only reader of ferrograd (its own zip
checkpoints, and later PyTorch's zip format); it owns:

* which globals a file may name: only those of the allowlist it is given;
* what a file may call: a callable of the allowlist that has a *rule* is
  called only with the arguments its rule accepts; the rules for builtins
  (``list``, ``dict``, ``bytes``, ``_codecs.encode``, ...) live here and
  accept only arguments whose cost is paid by bytes of the file (copies of
  containers the file already built, never an integer size or a ``range``);
  an allowed callable without a rule is one its caller trusts, and is
  called as pickle would call it;
* how much the file may build: every object the stream creates is charged
  (in bytes, by ``sys.getsizeof`` or an estimate made before the call that
  would allocate it) to a budget proportional to the length of the stream;
* hashing: a tuple or frozenset used as a dict key or set element is
  checked for size and nesting first, since CPython hashes nested tuples
  recursively (a deep one crashes the interpreter, a shared one takes time
  exponential in its depth).

It does not own the persistent ids (tensors and storages): the reader passes
a ``persistent_load`` callback, as with :class:`pickle.Unpickler`, and
checks what that callback reads against its own archive.

Note [Memo]: the memo is a dict keyed by the index the file names, so an
index costs one entry whatever its value (CPython's C unpickler grows an
array to twice the largest index). Indices at or past the length of the
stream are refused: a writer numbers its memo entries from 0, so no honest
stream of n bytes names an index >= n.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import collections
import functools
import pickle
import reprlib
import struct
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any

__all__ = [
    "BoundedUnpickler",
    "CallRule",
    "brief",
    "default_budget",
    "describe",
    "refuse",
    "unsupported_global",
]

# A rule checks the positional arguments of one call before it is made and
# returns the bytes the call may allocate (charged to the budget before the
# call runs); it raises pickle.UnpicklingError to refuse the call.
CallRule = Callable[[tuple[Any, ...]], int]

# Budget: a stream of n bytes may build BASE_BUDGET + BUDGET_PER_BYTE * n
# bytes of objects (see docs/data.md, "Limits of a weights-only load"). The
# densest stream pickle itself writes, a list of empty sets in protocol 4,
# builds about 140 bytes per byte; checkpoints build 10 to 40.
BASE_BUDGET = 1 << 20
BUDGET_PER_BYTE = 160
# A tuple or frozenset hashed as a dict key or set element may hold at most
# this many objects, counted with repetition, nested at most this deep.
MAX_KEY_NODES = 100_000
MAX_KEY_DEPTH = 100
HIGHEST_PROTOCOL = 5

# Estimated bytes of one slot, charged as containers grow.
_REF = 8  # a reference in a list or tuple
_DICT_ITEM = 104  # a dict entry with its share of the table (an OrderedDict node included)
_SET_ITEM = 40
_MEMO_ITEM = 56  # an int key and its entry
_HASH_NODE = 8  # hashing a key costs this per object it holds

# The encodings a rule lets a file name: the text encodings a writer uses,
# each producing at most 4 bytes or characters per input unit.
_ENCODINGS = frozenset(
    {
        "latin1",
        "latin-1",
        "iso-8859-1",
        "ascii",
        "utf-8",
        "utf8",
        "utf-16",
        "utf-16-le",
        "utf-16-be",
        "utf-32",
    }
)
_MATERIALIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray)
_SCALARS = (int, float, complex, str, bytes, bytearray, type(None))

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlevel = 3


def brief(obj: Any) -> str:
    """A short repr (reprlib caps breadth and depth, so a file cannot make an
    error message large or slow)."""
    return _short.repr(obj)


def default_budget(length: int) -> int:
    """The bytes of objects a stream of ``length`` bytes may build."""
    return BASE_BUDGET + BUDGET_PER_BYTE * length


_WEIGHTS_ONLY_MSG = (
    "Weights only load failed. Re-running `ferrograd.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the file "
    "from a trusted source.\n\n"
)


def unsupported_global(module: str, name: str) -> pickle.UnpicklingError:
    """The error for a global that is not allowed (torch's wording)."""
    return pickle.UnpicklingError(
        f"{_WEIGHTS_ONLY_MSG}Unsupported global: GLOBAL {module}.{name} was not an allowed global by "
        f"default. Please use `ferrograd.serialization.add_safe_globals([{module}.{name}])` or the "
        f"`ferrograd.serialization.safe_globals([{module}.{name}])` context manager to allowlist this "
        "global if you trust this class/function."
    )


def refuse(message: str) -> pickle.UnpicklingError:
    """The error for a call a weights-only load does not make."""
    return pickle.UnpicklingError(f"{_WEIGHTS_ONLY_MSG}{message}")


def _name_of(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or "?"
    return f"{module}.{getattr(obj, '__qualname__', None) or getattr(obj, '__name__', '?')}"


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, cut short."""
    if isinstance(exc, KeyError) and exc.args:
        return f"KeyError: {brief(exc.args[0])}"
    text = str(exc)
    return f"{type(exc).__name__}: {text[:300]}{'...' if len(text) > 300 else ''}"


# ------------------------------------------------------------ builtin rules


def _arity(args: tuple[Any, ...], name: str, lo: int, hi: int) -> None:
    if not lo <= len(args) <= hi:
        raise refuse(f"{name} takes {lo} to {hi} arguments in a weights-only load, got {len(args)}")


def _check_materialized(arg: Any, name: str) -> int:
    """A container argument must be one the file built: its length is then
    paid for by bytes of the file. Returns that length."""
    if not isinstance(arg, _MATERIALIZED):
        raise refuse(
            f"{name}() of a {type(arg).__name__} is not allowed in a weights-only load: containers are "
            "built only from lists, tuples, dicts, sets, strings or bytes that the file holds"
        )
    return len(arg)


def _check_encoding(encoding: Any, name: str) -> None:
    if not (isinstance(encoding, str) and encoding.lower() in _ENCODINGS):
        raise refuse(f"{name} with encoding {brief(encoding)} is not allowed in a weights-only load")


def _check_scalar(arg: Any, name: str) -> int:
    if not isinstance(arg, _SCALARS):
        raise refuse(f"{name}() of a {type(arg).__name__} is not allowed in a weights-only load")
    return len(arg) if isinstance(arg, str | bytes | bytearray) else 0


def _bytes_rule(name: str) -> CallRule:
    # bytes() / bytearray(): from bytes, from a list of ints, or from a str
    # with an encoding; never from an int (that allocates int bytes).
    def rule(args: tuple[Any, ...]) -> int:
        _arity(args, name, 0, 3)
        if not args:
            return 64
        first = args[0]
        if isinstance(first, int):
            raise refuse(
                f"{name}({first if first < 10**6 else 'n'}) is not allowed in a weights-only load: it would "
                "allocate in proportion to an integer rather than to bytes of the file"
            )
        if isinstance(first, str):
            if len(args) < 2:
                raise refuse(f"{name}() of a str needs an encoding")
            _check_encoding(args[1], name)
            return 64 + 4 * len(first)
        if len(args) != 1:
            raise refuse(f"{name}() takes an encoding only with a str")
        return 64 + _check_materialized(first, name)

    return rule


def _str_rule(args: tuple[Any, ...]) -> int:
    _arity(args, "str", 0, 3)
    if len(args) == 1:
        return 64 + 4 * _check_scalar(args[0], "str")
    if args:
        if not isinstance(args[0], bytes | bytearray):
            raise refuse("str() with an encoding takes bytes")
        _check_encoding(args[1], "str")
        return 64 + 4 * len(args[0])
    return 64


def _number_rule(name: str, most: int) -> CallRule:
    def rule(args: tuple[Any, ...]) -> int:
        _arity(args, name, 0, most)
        return 64 + sum(_check_scalar(a, name) for a in args)

    return rule


def _ints_rule(name: str, none_too: bool) -> CallRule:
    # slice() and range(): a range is three ints whatever its length (the
    # container rules refuse to materialize one); a slice holding a slice is
    # refused because CPython frees nested slices recursively, and crashes.
    def rule(args: tuple[Any, ...]) -> int:
        _arity(args, name, 1, 3)
        if not all(type(a) is int or (none_too and a is None) for a in args):
            raise refuse(f"{name}() takes only ints{' and None' * none_too} in a weights-only load")
        return 64

    return rule


def _encode_rule(args: tuple[Any, ...]) -> int:
    # How protocols 0-2 write bytes: _codecs.encode(text, 'latin1'), one byte
    # per character.
    if not (len(args) == 2 and isinstance(args[0], str) and args[1] in ("latin1", "latin-1")):
        raise refuse("_codecs.encode is allowed only as _codecs.encode(str, 'latin1') in a weights-only load")
    return 64 + len(args[0])


# ---------------------------------------------------------------- reading


_UNPACK_I = struct.Struct("<i").unpack_from
_UNPACK_UI = struct.Struct("<I").unpack_from
_UNPACK_UH = struct.Struct("<H").unpack_from
_UNPACK_Q = struct.Struct("<Q").unpack_from
_UNPACK_D = struct.Struct(">d").unpack_from


class BoundedUnpickler:
    """Loads one pickled object from ``file`` (a binary file object read from
    its current position, or a bytes-like object) without running code the
    allowlist does not name and without building more than ``budget`` bytes
    of objects.

    Args:
        file: the stream, or its bytes.
        allowed: ``"module.qualname" -> object``, the globals the stream may
            name.
        rules: ``object -> CallRule`` for allowed callables whose arguments
            must be checked (they override the builtin rules of this module).
            An allowed callable without a rule is called as pickle would.
        persistent_load: called with each persistent id; ``None`` refuses
            persistent ids.
        encoding, errors: how Python 2 ``str`` records are decoded
            (``encoding="bytes"`` keeps them as bytes).
        fix_imports: map Python 2 module names in protocols 0-2.
        budget: the bytes of objects the stream may build; by default
            :func:`default_budget` of its length.

    ``load()`` returns the object or raises ``pickle.UnpicklingError`` naming
    what was refused or malformed; errors of ``persistent_load`` reach the
    caller unchanged when they are ``UnpicklingError`` or ``RuntimeError``.
    When ``file`` is seekable it is left just past the pickle.
    """

    def __init__(
        self,
        file: IO[bytes] | bytes | bytearray | memoryview,
        *,
        allowed: Mapping[str, Any],
        rules: Mapping[Any, CallRule] | None = None,
        persistent_load: Callable[[Any], Any] | None = None,
        encoding: str = "ASCII",
        errors: str = "strict",
        fix_imports: bool = True,
        budget: int | None = None,
    ) -> None:
        self._file: IO[bytes] | None = None
        if isinstance(file, bytes | bytearray | memoryview):
            self._data = bytes(file)
        else:
            self._file = file
            self._start = file.tell() if file.seekable() else 0
            self._data = file.read()
        self._allowed = dict(allowed)
        builtin: dict[Any, CallRule] = {
            list: self._container_rule("list", _REF),
            tuple: self._container_rule("tuple", _REF),
            set: self._container_rule("set", _SET_ITEM, hashed=True),
            frozenset: self._container_rule("frozenset", _SET_ITEM, hashed=True),
            dict: self._container_rule("dict", _DICT_ITEM, mapping=True),
            collections.OrderedDict: self._container_rule("OrderedDict", _DICT_ITEM, mapping=True),
            collections.Counter: self._container_rule("Counter", _DICT_ITEM, hashed=True),
            bytes: _bytes_rule("bytes"),
            bytearray: _bytes_rule("bytearray"),
            str: _str_rule,
            int: _number_rule("int", 2),
            float: _number_rule("float", 1),
            bool: _number_rule("bool", 1),
            complex: _number_rule("complex", 2),
            slice: _ints_rule("slice", none_too=True),
            range: _ints_rule("range", none_too=False),
            codecs.encode: _encode_rule,
        }
        builtin.update(rules or {})
        # Keyed by id: an object a file puts where a callable goes is never
        # hashed (hashing a file's tuple may be the attack).
        self._rules = {id(obj): (obj, rule) for obj, rule in builtin.items()}
        self._allowed_ids = {id(obj): obj for obj in self._allowed.values()}
        self._persistent_load = persistent_load
        self._encoding = encoding
        self._errors = errors
        self._fix_imports = fix_imports
        self._budget = default_budget(len(self._data)) if budget is None else budget
        self._spent = 0
        self._pos = 0
        self._proto = 0
        self._stack: list[Any] = []
        self._metastack: list[list[Any]] = []
        self._memo: dict[int, Any] = {}
        # id -> (key, nodes, depth) of tuples and frozensets already measured.
        self._key_shapes: dict[int, tuple[Any, int, int]] = {}
        self._dispatch: list[Callable[[], bool | None] | None] = [None] * 256
        for code, method in _OPCODES.items():
            self._dispatch[code] = getattr(self, method)
        for code, (method, *params) in _PARAMETRIZED.items():
            self._dispatch[code] = functools.partial(getattr(self, method), *params)

    # ------------------------------------------------------------ the loop

    def load(self) -> Any:
        """Reads the pickle and returns the object it holds.

        Returns:
            object: the unpickled object.
        """
        data = self._data
        dispatch = self._dispatch
        pos = opcode = 0
        try:
            while True:
                pos = self._pos
                if pos >= len(data):
                    raise pickle.UnpicklingError("pickle data was truncated (no STOP opcode)")
                opcode = data[pos]
                self._pos = pos + 1
                handler = dispatch[opcode]
                if handler is None:
                    raise pickle.UnpicklingError(f"invalid load key, {chr(opcode)!r} at byte {pos}.")
                if handler():
                    break
        except (pickle.UnpicklingError, RuntimeError):
            raise
        except Exception as exc:
            raise pickle.UnpicklingError(
                f"malformed pickle (opcode {chr(opcode)!r} at byte {pos}): {describe(exc)}"
            ) from exc
        finally:
            self._stack = []
            self._metastack = []
            self._memo = {}
            self._key_shapes = {}
        if self._file is not None and self._file.seekable():
            self._file.seek(self._start + self._pos)
        return self._result

    def find_class(self, module: str, name: str) -> Any:
        """Resolves a global through the allowlist (after the Python 2 name
        mapping of protocols 0-2).

        Args:
            module (str): the module name the file gives.
            name (str): the qualified name within it.

        Returns:
            object: the allowed object.
        """
        if self._proto < 3 and self._fix_imports:
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            elif module in _compat_pickle.IMPORT_MAPPING:
                module = _compat_pickle.IMPORT_MAPPING[module]
        obj = self._allowed.get(f"{module}.{name}")
        if obj is None:
            raise unsupported_global(module, name)
        return obj

    # ----------------------------------------------------------- accounting

    def _charge(self, nbytes: int) -> None:
        self._spent += nbytes
        if self._spent > self._budget:
            raise pickle.UnpicklingError(
                f"ferrograd.load: the pickle builds more than {self._budget} bytes of objects, the limit "
                f"for a weights-only load of a {len(self._data)}-byte pickle "
                f"({BASE_BUDGET} + {BUDGET_PER_BYTE} per byte); the file is malformed or hostile"
            )

    def _new(self, obj: Any) -> None:
        """Pushes an object the stream just created, charging its size."""
        self._charge(sys.getsizeof(obj))
        self._stack.append(obj)

    def _check_key(self, key: Any) -> None:
        """Refuses a dict key or set element whose hash would recurse too
        deep or visit too many objects, and charges the hashing."""
        if not isinstance(key, tuple | frozenset):
            self._charge(_HASH_NODE)
            return
        shape = self._key_shapes.get(id(key))
        if shape is None or shape[0] is not key:
            shape = self._measure(key)
        _, nodes, depth = shape
        if nodes > MAX_KEY_NODES or depth > MAX_KEY_DEPTH:
            raise self._key_too_big(key)
        self._charge(_HASH_NODE * nodes)

    def _key_too_big(self, key: Any) -> pickle.UnpicklingError:
        return pickle.UnpicklingError(
            f"ferrograd.load: a {type(key).__name__} used as a dict key or set element is too large to "
            f"hash safely: a weights-only load hashes keys of at most {MAX_KEY_NODES} objects (counted "
            f"with repetition) nested at most {MAX_KEY_DEPTH} deep"
        )

    def _measure(self, key: Any) -> tuple[Any, int, int]:
        """Counts the objects a hash of ``key`` visits (a shared part once
        per use, as hashing does) and its nesting depth, without recursion,
        in time linear in the distinct tuples met, caching each result.
        Stops as soon as the walk goes deeper than MAX_KEY_DEPTH."""
        shapes = self._key_shapes

        def known(obj: Any) -> bool:
            cached = shapes.get(id(obj))
            return cached is not None and cached[0] is obj

        todo: list[tuple[Any, int, bool]] = [(key, 1, False)]
        while todo:
            node, level, children_done = todo.pop()
            if known(node):
                continue
            if not children_done:
                todo.append((node, level, True))
                for child in node:
                    if isinstance(child, tuple | frozenset) and not known(child):
                        if level >= MAX_KEY_DEPTH:
                            raise self._key_too_big(key)
                        todo.append((child, level + 1, False))
                continue
            nodes, depth = 1, 1
            for child in node:
                if isinstance(child, tuple | frozenset):
                    _, n, d = shapes[id(child)]
                    nodes += n
                    depth = max(depth, d + 1)
                else:
                    nodes += 1
            self._charge(_REF * 4)
            shapes[id(node)] = (node, min(nodes, MAX_KEY_NODES + 1), depth)
        return shapes[id(key)]

    # ------------------------------------------------------------- helpers

    def _read(self, n: int) -> bytes:
        pos = self._pos
        if n < 0 or pos + n > len(self._data):
            raise pickle.UnpicklingError(
                f"pickle data was truncated: an opcode at byte {pos - 1} needs {n} more bytes, "
                f"{len(self._data) - pos} remain"
            )
        self._pos = pos + n
        return self._data[pos : pos + n]

    def _readline(self) -> bytes:
        pos = self._pos
        end = self._data.find(b"\n", pos)
        if end < 0:
            raise pickle.UnpicklingError(f"pickle data was truncated: a line at byte {pos} has no end")
        self._pos = end + 1
        return self._data[pos:end]

    def _pop(self) -> Any:
        if not self._stack:
            raise pickle.UnpicklingError("unpickling stack underflow")
        return self._stack.pop()

    def _top(self) -> Any:
        if not self._stack:
            raise pickle.UnpicklingError("unpickling stack underflow")
        return self._stack[-1]

    def _pop_mark(self) -> list[Any]:
        if not self._metastack:
            raise pickle.UnpicklingError("could not find MARK")
        items = self._stack
        self._stack = self._metastack.pop()
        return items

    def _memo_index(self, index: int) -> int:
        if index < 0 or index >= max(len(self._data), 1):
            raise pickle.UnpicklingError(
                f"memo index {index} is out of range for a {len(self._data)}-byte pickle (see Note [Memo])"
            )
        return index

    def _put(self, index: int) -> None:
        index = self._memo_index(index)
        if index not in self._memo:
            self._charge(_MEMO_ITEM)
        self._memo[index] = self._top()

    def _get(self, index: int) -> None:
        try:
            value = self._memo[index]
        except KeyError:
            raise pickle.UnpicklingError(f"Memo value not found at index {index}") from None
        self._charge(_REF)
        self._stack.append(value)

    def _decode_string(self, raw: bytes) -> Any:
        # A Python 2 str: bytes, or text in the caller's encoding.
        if self._encoding == "bytes":
            return raw
        return raw.decode(self._encoding, self._errors)

    # -------------------------------------------------------------- calls

    def _container_rule(
        self, name: str, per_item: int, *, mapping: bool = False, hashed: bool = False
    ) -> CallRule:
        def rule(args: tuple[Any, ...]) -> int:
            _arity(args, name, 0, 1)
            if not args:
                return 256
            arg = args[0]
            n = _check_materialized(arg, name)
            if mapping and not isinstance(arg, dict):
                for pair in arg:
                    if not (isinstance(pair, tuple | list) and len(pair) == 2):
                        raise refuse(f"{name}() takes a dict or a list of pairs in a weights-only load")
                    self._check_key(pair[0])
            elif (mapping or hashed) and not isinstance(arg, str | bytes | bytearray):
                for key in arg:
                    self._check_key(key)
            return 256 + per_item * n

        return rule

    def _call(self, func: Any, args: Any, kwargs: Any = None, *, newobj: bool = False) -> Any:
        """Calls ``func(*args)`` (``func.__new__(func, *args)`` for NEWOBJ)
        after its rule has accepted the arguments."""
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError(
                f"the arguments of a call must be a tuple, not {type(args).__name__}"
            )
        if kwargs is not None and not (isinstance(kwargs, dict) and all(isinstance(k, str) for k in kwargs)):
            raise pickle.UnpicklingError("the keyword arguments of NEWOBJ_EX must be a dict of str keys")
        if newobj and not isinstance(func, type):
            raise pickle.UnpicklingError(f"NEWOBJ needs a class, not {type(func).__name__}")
        entry = self._rules.get(id(func))
        if entry is not None and entry[0] is func:
            if kwargs:
                raise refuse(f"{_name_of(func)} takes no keyword arguments in a weights-only load")
            self._charge(entry[1](args))
            trusted = False
        elif self._allowed_ids.get(id(func)) is not func:
            raise refuse(
                f"{type(func).__name__} object {brief(func)} is not callable in a weights-only load: "
                "only allowed globals are called"
            )
        else:
            self._charge(64 + _REF * (len(args) + len(kwargs or ())))
            trusted = True
        try:
            if newobj:
                result = func.__new__(func, *args, **(kwargs or {}))
            else:
                result = func(*args, **(kwargs or {}))
        except pickle.UnpicklingError:
            raise
        except Exception as exc:
            raise pickle.UnpicklingError(
                f"ferrograd.load: {_name_of(func)}(...) failed: {describe(exc)}"
            ) from exc
        if trusted:
            self._charge(sys.getsizeof(result))
        return result

    def _instantiate(self, cls: Any, args: list[Any]) -> None:
        # INST and OBJ (protocols 0 and 1), as pickle.py does them.
        if args or not isinstance(cls, type) or hasattr(cls, "__getinitargs__"):
            self._stack.append(self._call(cls, tuple(args)))
        else:
            self._stack.append(self._call(cls, (), newobj=True))

    # ------------------------------------------------------------- opcodes
    # Each returns True only for STOP.

    def _op_mark(self) -> None:
        self._charge(_REF * 8)
        self._metastack.append(self._stack)
        self._stack = []

    def _op_stop(self) -> bool:
        self._result = self._pop()
        return True

    def _op_pop(self) -> None:
        if self._stack:
            self._stack.pop()
        else:
            self._pop_mark()

    def _op_pop_mark(self) -> None:
        self._pop_mark()

    def _op_dup(self) -> None:
        self._charge(_REF)
        self._stack.append(self._top())

    def _op_proto(self) -> None:
        proto = self._read(1)[0]
        if proto > HIGHEST_PROTOCOL:
            raise pickle.UnpicklingError(f"unsupported pickle protocol: {proto}")
        self._proto = proto

    def _op_frame(self) -> None:
        # Frames only group opcodes for buffered reading; the whole stream is
        # in memory, so a frame is checked to fit and otherwise ignored.
        (size,) = _UNPACK_Q(self._read(8))
        if size > len(self._data) - self._pos:
            raise pickle.UnpicklingError(
                f"pickle data was truncated: a frame of {size} bytes at byte {self._pos - 9} runs past "
                "the end"
            )

    # scalars
    def _op_const(self, value: Any) -> None:
        self._charge(_REF)
        self._stack.append(value)

    def _op_fixed(self, unpack: Callable[[bytes], tuple[Any, ...]], size: int) -> None:
        # BININT, BININT1, BININT2, BINFLOAT: a number of fixed size.
        self._new(unpack(self._read(size))[0])

    def _op_sized(
        self, unpack: Callable[[bytes], tuple[Any, ...]], size: int, make: Callable[[bytes], Any]
    ) -> None:
        # BINBYTES, BINUNICODE, BYTEARRAY8, ...: a length, then that many
        # bytes (checked to be there before they are copied).
        self._new(make(self._read(unpack(self._read(size))[0])))

    def _op_tuple_n(self, n: int) -> None:
        # TUPLE1, TUPLE2, TUPLE3
        if len(self._stack) < n:
            raise pickle.UnpicklingError("unpickling stack underflow")
        items = tuple(self._stack[-n:])
        del self._stack[-n:]
        self._new(items)

    def _op_int(self) -> None:
        line = self._readline()
        if line == b"00":
            self._new(False)
        elif line == b"01":
            self._new(True)
        else:
            self._new(int(line, 0))

    def _op_long(self) -> None:
        line = self._readline()
        if line.endswith(b"L"):
            line = line[:-1]
        self._new(int(line, 0))

    def _op_long1(self) -> None:
        n = self._read(1)[0]
        self._new(int.from_bytes(self._read(n), "little", signed=True))

    def _op_long4(self) -> None:
        (n,) = _UNPACK_I(self._read(4))
        if n < 0:
            raise pickle.UnpicklingError("LONG pickle has negative byte count")
        self._new(int.from_bytes(self._read(n), "little", signed=True))

    def _op_float(self) -> None:
        self._new(float(self._readline()))

    # strings and bytes
    def _op_string(self) -> None:
        line = self._readline()
        if len(line) < 2 or line[0] != line[-1] or line[:1] not in (b"'", b'"'):
            raise pickle.UnpicklingError("the STRING opcode argument must be quoted")
        self._new(self._decode_string(codecs.escape_decode(line[1:-1])[0]))

    def _op_binstring(self) -> None:
        (n,) = _UNPACK_I(self._read(4))
        if n < 0:
            raise pickle.UnpicklingError("BINSTRING pickle has negative byte count")
        self._new(self._decode_string(self._read(n)))

    def _op_short_binstring(self) -> None:
        self._new(self._decode_string(self._read(self._read(1)[0])))

    def _op_unicode(self) -> None:
        self._new(self._readline().decode("raw-unicode-escape"))

    def _op_buffer(self) -> None:
        raise pickle.UnpicklingError("out-of-band buffers (NEXT_BUFFER, READONLY_BUFFER) are not supported")

    # containers
    def _op_empty_tuple(self) -> None:
        self._new(())

    def _op_tuple(self) -> None:
        self._new(tuple(self._pop_mark()))

    def _op_empty_list(self) -> None:
        self._new([])

    def _op_list(self) -> None:
        self._new(self._pop_mark())

    def _op_empty_dict(self) -> None:
        self._new({})

    def _op_dict(self) -> None:
        items = self._pop_mark()
        if len(items) % 2:
            raise pickle.UnpicklingError("odd number of items for DICT")
        self._charge(64 + _DICT_ITEM * (len(items) // 2))
        out = {}
        for i in range(0, len(items), 2):
            self._check_key(items[i])
            out[items[i]] = items[i + 1]
        self._stack.append(out)

    def _op_empty_set(self) -> None:
        self._new(set())

    def _op_frozenset(self) -> None:
        items = self._pop_mark()
        for item in items:
            self._check_key(item)
        self._new(frozenset(items))

    def _target(self, kinds: type | tuple[type, ...], opcode: str) -> Any:
        """The container an APPEND/SETITEM/ADDITEMS opcode adds to: one of
        ``kinds``, or an instance of a trusted allowed class."""
        target = self._top()
        if isinstance(target, kinds):
            return target
        if (
            self._allowed_ids.get(id(type(target))) is type(target)
            and self._rules.get(id(type(target))) is None
        ):
            return target
        raise pickle.UnpicklingError(f"{opcode} to a {type(target).__name__} is not allowed")

    def _op_append(self) -> None:
        value = self._pop()
        target = self._target(list, "APPEND")
        self._charge(_REF)
        target.append(value)

    def _op_appends(self) -> None:
        items = self._pop_mark()
        target = self._target(list, "APPENDS")
        self._charge(_REF * len(items))
        if isinstance(target, list):
            target.extend(items)
        else:
            for item in items:
                target.append(item)

    def _op_setitem(self) -> None:
        value = self._pop()
        key = self._pop()
        target = self._target(dict, "SETITEM")
        self._check_key(key)
        self._charge(_DICT_ITEM)
        target[key] = value

    def _op_setitems(self) -> None:
        items = self._pop_mark()
        if len(items) % 2:
            raise pickle.UnpicklingError("odd number of items for SETITEMS")
        target = self._target(dict, "SETITEMS")
        self._charge(_DICT_ITEM * (len(items) // 2))
        for i in range(0, len(items), 2):
            self._check_key(items[i])
            target[items[i]] = items[i + 1]

    def _op_additems(self) -> None:
        items = self._pop_mark()
        target = self._target(set, "ADDITEMS")
        self._charge(_SET_ITEM * len(items))
        for item in items:
            self._check_key(item)
            target.add(item)

    # memo
    def _op_get(self) -> None:
        self._get(int(self._readline()))

    def _op_binget(self) -> None:
        self._get(self._read(1)[0])

    def _op_long_binget(self) -> None:
        self._get(_UNPACK_UI(self._read(4))[0])

    def _op_put(self) -> None:
        self._put(int(self._readline()))

    def _op_binput(self) -> None:
        self._put(self._read(1)[0])

    def _op_long_binput(self) -> None:
        self._put(_UNPACK_UI(self._read(4))[0])

    def _op_memoize(self) -> None:
        self._put(len(self._memo))

    # globals, calls, state
    def _line_str(self) -> str:
        return self._readline().decode("utf-8")

    def _op_global(self) -> None:
        module = self._line_str()
        name = self._line_str()
        self._charge(_REF)
        self._stack.append(self.find_class(module, name))

    def _op_stack_global(self) -> None:
        name = self._pop()
        module = self._pop()
        if not (isinstance(module, str) and isinstance(name, str)):
            raise pickle.UnpicklingError("STACK_GLOBAL requires str")
        self._charge(_REF)
        self._stack.append(self.find_class(module, name))

    def _op_ext(self) -> None:
        raise pickle.UnpicklingError(
            "extension codes (EXT1, EXT2, EXT4) are not supported in a weights-only load"
        )

    def _op_reduce(self) -> None:
        args = self._pop()
        func = self._pop()
        self._stack.append(self._call(func, args))

    def _op_newobj(self) -> None:
        args = self._pop()
        cls = self._pop()
        self._stack.append(self._call(cls, args, newobj=True))

    def _op_newobj_ex(self) -> None:
        kwargs = self._pop()
        args = self._pop()
        cls = self._pop()
        self._stack.append(self._call(cls, args, kwargs, newobj=True))

    def _op_inst(self) -> None:
        module = self._line_str()
        name = self._line_str()
        cls = self.find_class(module, name)
        self._instantiate(cls, self._pop_mark())

    def _op_obj(self) -> None:
        args = self._pop_mark()
        if not args:
            raise pickle.UnpicklingError("OBJ needs a class after its MARK")
        cls = args.pop(0)
        self._instantiate(cls, args)

    def _op_build(self) -> None:
        state = self._pop()
        inst = self._top()
        cls = type(inst)
        if self._allowed_ids.get(id(cls)) is not cls:
            raise refuse(f"BUILD (setting the state) of a {_name_of(cls)} object is not allowed")
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None and self._rules.get(id(cls)) is None:
            # A class the caller trusts restores its own state.
            self._charge(64)
            try:
                setstate(state)
            except Exception as exc:
                raise pickle.UnpicklingError(
                    f"ferrograd.load: {_name_of(cls)}.__setstate__ failed: {describe(exc)}"
                ) from exc
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        for part in (state, slots):
            if part is None:
                continue
            if not (
                isinstance(part, dict) and all(isinstance(k, str) and not k.startswith("__") for k in part)
            ):
                raise pickle.UnpicklingError(
                    f"the state of a {_name_of(cls)} object must be a dict of attribute names"
                )
            self._charge(_DICT_ITEM * len(part))
        try:
            if state:
                inst.__dict__.update(state)
            for k, v in (slots or {}).items():
                setattr(inst, k, v)
        except Exception as exc:
            raise pickle.UnpicklingError(
                f"ferrograd.load: setting the state of a {_name_of(cls)} failed: {describe(exc)}"
            ) from exc

    def _op_persid(self) -> None:
        try:
            pid = self._readline().decode("ascii")
        except UnicodeDecodeError:
            raise pickle.UnpicklingError("persistent IDs in protocol 0 must be ASCII strings") from None
        self._persistent(pid)

    def _op_binpersid(self) -> None:
        self._persistent(self._pop())

    def _persistent(self, pid: Any) -> None:
        if self._persistent_load is None:
            raise pickle.UnpicklingError(
                "A load persistent id instruction was encountered, but no persistent_load function was "
                "specified."
            )
        try:
            obj = self._persistent_load(pid)
        except (pickle.UnpicklingError, RuntimeError):
            raise
        except Exception as exc:
            raise pickle.UnpicklingError(
                f"ferrograd.load: loading a persistent id failed: {describe(exc)}"
            ) from exc
        self._charge(_REF)
        self._stack.append(obj)


# opcode -> the method that runs it (and, below, the ones that share one).
_OPCODES: dict[int, str] = {
    ord(code): f"_op_{name}"
    for code, name in [
        ("(", "mark"), (".", "stop"), ("0", "pop"), ("1", "pop_mark"), ("2", "dup"), ("\x80", "proto"),
        ("\x95", "frame"), ("F", "float"), ("I", "int"), ("L", "long"), ("\x8a", "long1"), ("\x8b", "long4"),
        ("S", "string"), ("T", "binstring"), ("U", "short_binstring"), ("V", "unicode"),
        (")", "empty_tuple"), ("t", "tuple"), ("]", "empty_list"), ("l", "list"), ("a", "append"),
        ("e", "appends"), ("}", "empty_dict"), ("d", "dict"), ("s", "setitem"), ("u", "setitems"),
        ("\x8f", "empty_set"), ("\x90", "additems"), ("\x91", "frozenset"),
        ("g", "get"), ("h", "binget"), ("j", "long_binget"), ("p", "put"), ("q", "binput"),
        ("r", "long_binput"), ("\x94", "memoize"), ("c", "global"), ("\x93", "stack_global"),
        ("R", "reduce"), ("\x81", "newobj"), ("\x92", "newobj_ex"), ("i", "inst"), ("o", "obj"),
        ("b", "build"), ("P", "persid"), ("Q", "binpersid"),
        ("\x82", "ext"), ("\x83", "ext"), ("\x84", "ext"), ("\x97", "buffer"), ("\x98", "buffer"),
    ]
}  # fmt: skip


def _utf8(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


_U1 = struct.Struct("<B").unpack_from
_PARAMETRIZED: dict[int, tuple[Any, ...]] = {
    ord("N"): ("_op_const", None), 0x88: ("_op_const", True), 0x89: ("_op_const", False),
    ord("J"): ("_op_fixed", _UNPACK_I, 4), ord("K"): ("_op_fixed", _U1, 1),
    ord("M"): ("_op_fixed", _UNPACK_UH, 2), ord("G"): ("_op_fixed", _UNPACK_D, 8),
    ord("B"): ("_op_sized", _UNPACK_UI, 4, bytes), ord("C"): ("_op_sized", _U1, 1, bytes),
    0x8E: ("_op_sized", _UNPACK_Q, 8, bytes), 0x96: ("_op_sized", _UNPACK_Q, 8, bytearray),
    ord("X"): ("_op_sized", _UNPACK_UI, 4, _utf8), 0x8C: ("_op_sized", _U1, 1, _utf8),
    0x8D: ("_op_sized", _UNPACK_Q, 8, _utf8),
    0x85: ("_op_tuple_n", 1), 0x86: ("_op_tuple_n", 2), 0x87: ("_op_tuple_n", 3),
}  # fmt: skip
