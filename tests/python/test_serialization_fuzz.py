"""Randomized tests of ``ferrograd.load`` on damaged and hostile files.

Each case is one file drawn from a generator seeded by ``(seed, index)``:

* pickle cases: a random object of the kinds a checkpoint holds, written as
  a random sequence of the opcodes that protocols 0-5 use for it (several
  encodings of each value, memo puts and gets, frames, marks, globals by
  GLOBAL or STACK_GLOBAL, REDUCE/NEWOBJ/INST/OBJ calls, no-op noise). The
  writer is the oracle: it knows the object it wrote, and CPython's own
  unpickler must agree with it;
* mutated pickle cases: the same streams truncated, with bytes flipped,
  inserted, deleted or repeated;
* hostile pickle cases: such a stream with one construct among its values
  that must be refused (a materialized range, bytes(n), a huge memo index,
  a deep or exponentially shared tuple key, one list copied many times, a
  global that runs code, a codec other than latin1, a nested slice, ...);
* random opcode cases: random sequences of the allowed opcodes with
  well-formed arguments (most are malformed programs, some load);
* archive cases: a small checkpoint (views sharing storage, parameters,
  containers) truncated, with bytes flipped, and with members added,
  removed, renamed or rewritten.

Every case must raise ``pickle.UnpicklingError`` or ``RuntimeError`` (an
exception, never a crash) or load, and hostile cases must raise; what loads
must equal the oracle when the damage cannot go unnoticed (an unmutated
pickle; an archive changed anywhere its CRC-32s and directory cover), and
must equal what pickle's own pure-Python unpickler (with the same
allowlist) reads from a mutated or random stream. The Python memory a case
allocates (tracemalloc's peak) stays under a bound proportional to the
file's size, and no case raises the process's peak resident memory by more
than a fixed amount.

CI runs a few hundred cases. By hand, for many more:

    python tests/python/test_serialization_fuzz.py --count 20000 [--seed 1]

which prints what it met and exits non-zero on a failure; ``--case N``
reruns one case.
"""

from __future__ import annotations

import _compat_pickle
import argparse
import builtins
import codecs
import collections
import faulthandler
import io
import math
import pickle
import random
import resource
import struct
import sys
import time
import tracemalloc
import warnings
import zipfile

import ferrograd as torch
import pytest

# A case may allocate (tracemalloc peak) at most this much Python memory.
MEMORY_BASE = 4 << 20
MEMORY_PER_BYTE = 256
# One case may raise the process's peak resident memory by at most this
# (it sees what tracemalloc does not: tensor storage, allocated in Rust).
RSS_CASE_LIMIT = 64 << 20
# By hand, a case running longer than this stops the run with a traceback.
CASE_TIMEOUT_S = 120
CI_CASES = 300

# ------------------------------------------------------------ pickle writer

# The module of each global the writer names, in protocols >= 3 and < 3
# (Python 2 names, which unpicklers map back).
_BUILTIN_NAMES = ("set", "frozenset", "complex", "slice", "range", "bytes", "bytearray", "tuple", "list")
_GLOBALS = {name: ("builtins", "__builtin__") for name in _BUILTIN_NAMES}
_GLOBALS.update(OrderedDict=("collections",) * 2, Counter=("collections",) * 2, encode=("_codecs",) * 2)
# What the reference unpicklers (CPython's, with this allowlist) resolve.
_ALLOWED_FOR_REFERENCE: dict[tuple[str, str], object] = {
    ("builtins", n): getattr(builtins, n) for n in (*_BUILTIN_NAMES, "dict", "int", "str")
}
_ALLOWED_FOR_REFERENCE[("collections", "OrderedDict")] = collections.OrderedDict
_ALLOWED_FOR_REFERENCE[("collections", "Counter")] = collections.Counter
_ALLOWED_FOR_REFERENCE[("_codecs", "encode")] = codecs.encode
_INTS = (0, 1, 255, 256, 65535, -1, -(2**31), 2**31 - 1, 2**31, 2**63, -(2**70))
_FLOATS = (0.0, -0.0, 1.5, -2.25e300, 5e-324, math.inf, -math.inf)


class _Writer:
    """Writes random objects as random opcode sequences of one protocol and
    returns each object it wrote."""

    def __init__(self, rng: random.Random, proto: int) -> None:
        self.rng = rng
        self.proto = proto
        self.out = bytearray()
        self.memo_size = 0
        self.finished: list[tuple[int, object]] = []  # memo entries safe to GET

    # memo ------------------------------------------------------------
    def put(self, always: bool = False) -> int | None:
        if not always and self.rng.random() < 0.4:
            return None
        index = self.memo_size
        self.memo_size += 1
        if self.proto >= 4:
            self.out += b"\x94"
        elif self.proto == 0:
            self.out += b"p%d\n" % index
        elif index < 256 and self.rng.random() < 0.8:
            self.out += b"q" + bytes([index])
        else:
            self.out += b"r" + struct.pack("<I", index)
        return index

    def get(self, index: int) -> None:
        if self.proto == 0:
            self.out += b"g%d\n" % index
        elif index < 256 and self.rng.random() < 0.8:
            self.out += b"h" + bytes([index])
        else:
            self.out += b"j" + struct.pack("<I", index)

    def finish(self, index: int | None, value: object) -> object:
        if index is not None:
            self.finished.append((index, value))
        return value

    # scalars ---------------------------------------------------------
    def none(self) -> None:
        self.out += b"N"

    def boolean(self, v: bool) -> bool:
        self.out += (b"\x88" if v else b"\x89") if self.proto >= 2 else (b"I01\n" if v else b"I00\n")
        return v

    def integer(self, v: int) -> int:
        r = self.rng.random()
        if self.proto >= 1 and 0 <= v < 256 and r < 0.5:
            self.out += b"K" + bytes([v])
        elif self.proto >= 1 and 0 <= v < 65536 and r < 0.7:
            self.out += b"M" + struct.pack("<H", v)
        elif self.proto >= 1 and -(2**31) <= v < 2**31 and r < 0.85:
            self.out += b"J" + struct.pack("<i", v)
        elif self.proto >= 2:
            raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True) if v else b""
            self.out += (
                b"\x8a" + bytes([len(raw)])
                if len(raw) < 256 and r < 0.95
                else b"\x8b" + struct.pack("<i", len(raw))
            ) + raw
        elif abs(v) < 2**31 and r < 0.9:
            self.out += b"I%d\n" % v
        else:
            self.out += b"L%dL\n" % v
        return v

    def floating(self, v: float) -> float:
        if self.proto >= 1 and self.rng.random() < 0.8:
            self.out += b"G" + struct.pack(">d", v)
        else:
            self.out += b"F" + repr(v).encode() + b"\n"
        return v

    def text(self, v: str) -> str:
        raw = v.encode("utf-8", "surrogatepass")
        r = self.rng.random()
        if self.proto == 0 or (r < 0.1 and "\\" not in v):
            escaped = v.replace("\\", "\\u005c").replace("\0", "\\u0000").replace("\n", "\\u000a")
            escaped = escaped.replace("\r", "\\u000d").replace("\x1a", "\\u001a")
            self.out += b"V" + escaped.encode("raw-unicode-escape") + b"\n"
        elif self.proto >= 4 and len(raw) < 256 and r < 0.6:
            self.out += b"\x8c" + bytes([len(raw)]) + raw
        elif self.proto >= 4 and r < 0.7:
            self.out += b"\x8d" + struct.pack("<Q", len(raw)) + raw
        else:
            self.out += b"X" + struct.pack("<I", len(raw)) + raw
        return v

    def py2_string(self, v: str) -> str:
        # A Python 2 str record, decoded with load's default encoding (utf-8).
        raw = v.encode("utf-8")
        if self.proto == 0:
            self.out += b"S'" + codecs.escape_encode(raw)[0] + b"'\n"
        elif len(raw) < 256 and self.rng.random() < 0.5:
            self.out += b"U" + bytes([len(raw)]) + raw
        else:
            self.out += b"T" + struct.pack("<i", len(raw)) + raw
        return v

    def global_(self, name: str) -> None:
        new, old = _GLOBALS[name]
        module = new if self.proto >= 3 else old
        if name == "range" and self.proto < 3:
            name = "xrange"
        if self.proto >= 4 and self.rng.random() < 0.7:
            self.text(module)
            self.put()
            self.text(name)
            self.put()
            self.out += b"\x93"
        else:
            self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"
        self.put()

    def tuple_of(self, items: list, emit) -> tuple:
        if not items and self.rng.random() < 0.7:
            self.out += b")"
        elif self.proto >= 2 and 1 <= len(items) <= 3 and self.rng.random() < 0.7:
            for item in items:
                emit(item)
            self.out += bytes([0x84 + len(items)])
        else:
            self.out += b"("
            for item in items:
                emit(item)
            self.out += b"t"
        return tuple(items)

    def call(self, name: str, args: list, emit, result: object) -> object:
        """``name(*args)`` by REDUCE (or NEWOBJ for classes, INST/OBJ in
        protocols 0-1)."""
        r = self.rng.random()
        if self.proto < 2 and name == "complex" and r < 0.3:
            self.out += b"("
            for a in args:
                emit(a)
            new, old = _GLOBALS[name]
            self.out += b"i" + old.encode() + b"\n" + name.encode() + b"\n"
            return result
        if self.proto < 2 and name == "complex" and r < 0.5:
            self.out += b"("
            self.global_(name)
            for a in args:
                emit(a)
            self.out += b"o"
            return result
        self.global_(name)
        self.tuple_of(args, emit)
        self.put()
        if self.proto >= 2 and name in ("tuple", "frozenset", "complex") and r < 0.4:
            if self.proto >= 4 and self.rng.random() < 0.5:
                self.out += b"}\x92"  # NEWOBJ_EX with no keyword arguments
            else:
                self.out += b"\x81"
        else:
            self.out += b"R"
        return result

    def literal(self, v: object) -> object:
        """Writes a value already chosen (arguments of calls)."""
        if v is None:
            self.none()
        elif isinstance(v, bool):
            self.boolean(v)
        elif isinstance(v, int):
            self.integer(v)
        elif isinstance(v, float):
            self.floating(v)
        elif isinstance(v, str):
            self.text(v)
        elif isinstance(v, list):
            self.out += b"(" if self.proto == 0 else b"]" + b"("
            for item in v:
                self.literal(item)
            self.out += b"l" if self.proto == 0 else b"e"
        elif isinstance(v, dict):
            self.out += b"(d(" if self.proto == 0 else b"}("
            for k, item in v.items():
                self.literal(k)
                self.literal(item)
            self.out += b"u"
        elif isinstance(v, tuple):
            self.tuple_of(list(v), self.literal)
        else:
            raise AssertionError(type(v))
        return v

    # random values -----------------------------------------------------
    def random_str(self) -> str:
        alphabet = "abcxyz_019 'é€\n\\\x00😀"
        return "".join(self.rng.choice(alphabet) for _ in range(self.rng.choice([0, 1, 3, 8, 40, 300])))

    def random_int(self) -> int:
        return self.rng.choice([*_INTS, self.rng.randint(-999, 999)])

    def random_float(self) -> float:
        return self.rng.choice([*_FLOATS, self.rng.random()])

    def key(self, depth: int) -> object:
        """A random hashable value, written."""
        r = self.rng.random()
        if depth > 2 or r < 0.4:
            return self.text(self.random_str()[:12])
        if r < 0.6:
            return self.integer(self.random_int())
        if r < 0.7:
            return self.floating(self.rng.choice([0.0, 1.5, -3.0]))
        if r < 0.9:
            items = [self.rng.choice([1, "a", 2.5]) for _ in range(self.rng.randint(0, 3))]
            return self.tuple_of(items, self.literal)
        if self.proto >= 4:
            self.out += b"("
            items = [self.text(s) for s in ("p", "q")[: self.rng.randint(0, 2)]]
            self.out += b"\x91"
            return frozenset(items)
        return self.call("frozenset", [["p"]], self.literal, frozenset(["p"]))

    def value(self, depth: int = 0) -> object:
        """A random value, written; sometimes one already written (GET)."""
        rng = self.rng
        if self.finished and rng.random() < 0.12:
            index, v = rng.choice(self.finished)
            self.get(index)
            return v
        if rng.random() < 0.05:  # noise that leaves the stack as it was
            self.out += rng.choice([b"N0", b"(1", b"N200", b"(N1"])
        scalar = depth >= 4 or rng.random() < 0.45
        kind = rng.randrange(9) if scalar else rng.randrange(9, 18)
        if kind == 0:
            self.none()
            return None
        if kind == 1:
            return self.boolean(rng.random() < 0.5)
        if kind == 2:
            return self.integer(self.random_int())
        if kind == 3:
            return self.floating(self.random_float())
        if kind == 4:
            v = self.text(self.random_str())
            return self.finish(self.put(), v)
        if kind == 5:
            return self.bytes_value()
        if kind == 6:
            v = self.random_float(), self.random_float()
            out = self.call("complex", list(v), self.literal, complex(*v))
            return self.finish(self.put(), out)
        if kind == 7:
            args = [rng.randint(-5, 5) for _ in range(rng.randint(1, 2))] + [rng.choice([1, 2, -3])][
                : rng.randint(0, 1)
            ]
            which = rng.choice(["slice", "range"])
            return self.call(which, args, self.literal, (slice if which == "slice" else range)(*args))
        if kind == 8:
            v = "".join(rng.choice("abc é") for _ in range(rng.randint(0, 6)))
            return self.py2_string(v)
        return self.container(kind - 9, depth)

    def bytes_value(self) -> object:
        rng = self.rng
        data = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 5, 70, 300])))
        r = rng.random()
        if r < 0.15:
            out: object = bytearray(data)
            if self.proto >= 5 and rng.random() < 0.5:
                self.out += b"\x96" + struct.pack("<Q", len(data)) + data
            else:
                self.call("bytearray", [data], self.bytes_literal, out)
        elif self.proto >= 3 and r < 0.7:
            out = self.bytes_literal(data)
        elif not data and r < 0.75:
            out = self.call("bytes", [], self.literal, b"")
        else:
            out = self.call("encode", [data.decode("latin1"), "latin1"], self.literal, data)
        return self.finish(self.put(), out)

    def bytes_literal(self, data: bytes) -> bytes:
        if self.proto < 3:
            return self.call("encode", [data.decode("latin1"), "latin1"], self.literal, data)
        if len(data) < 256 and self.rng.random() < 0.5:
            self.out += b"C" + bytes([len(data)]) + data
        elif self.proto >= 4 and self.rng.random() < 0.3:
            self.out += b"\x8e" + struct.pack("<Q", len(data)) + data
        else:
            self.out += b"B" + struct.pack("<I", len(data)) + data
        return data

    def container(self, kind: int, depth: int) -> object:
        rng = self.rng
        n = rng.choice([0, 1, 2, 3, 5, 12])
        if kind in (0, 1):  # list
            out: list = []
            if self.proto == 0 or rng.random() < 0.3:
                self.out += b"("
                for _ in range(n):
                    out.append(self.value(depth + 1))
                self.out += b"l"
                return self.finish(self.put(), out)
            self.out += b"]"
            index = self.put()
            batch = rng.random() < 0.6
            if batch and n:
                self.out += b"("
            for _ in range(n):
                out.append(self.value(depth + 1))
                if not batch:
                    self.out += b"a"
            if batch and n:
                self.out += b"e"
            return self.finish(index, out)
        if kind in (2, 3):  # tuple
            items = []
            use_mark = n > 3 or rng.random() < 0.4 or self.proto < 2
            if use_mark:
                self.out += b"("
            for _ in range(n):
                items.append(self.value(depth + 1))
            if use_mark:
                self.out += b"t"
            elif n == 0:
                self.out += b")"
            else:
                self.out += bytes([0x84 + n])
            out_t = tuple(items)
            return self.finish(self.put(), out_t)
        if kind in (4, 5):  # dict
            d: dict = {}
            if rng.random() < 0.3:
                self.out += b"("
                for _ in range(n):
                    k = self.key(depth)
                    d[k] = self.value(depth + 1)
                self.out += b"d"
                return self.finish(self.put(), d)
            self.out += b"(d" if self.proto == 0 else b"}"
            index = self.put()
            batch = self.proto >= 1 and rng.random() < 0.6
            if batch and n:
                self.out += b"("
            for _ in range(n):
                k = self.key(depth)
                d[k] = self.value(depth + 1)
                if not batch:
                    self.out += b"s"
            if batch and n:
                self.out += b"u"
            return self.finish(index, d)
        if kind == 6:  # set
            if self.proto >= 4 and rng.random() < 0.6:
                s: set = set()
                self.out += b"\x8f"
                index = self.put()
                if n:
                    self.out += b"("
                    for _ in range(n):
                        s.add(self.key(depth))
                    self.out += b"\x90"
                return self.finish(index, s)
            self.global_("set")
            self.out += b"(" + (b"(" if self.proto == 0 else b"](")
            items = [self.key(depth) for _ in range(n)]
            self.out += b"l" if self.proto == 0 else b"e"
            self.out += b"tR"
            return self.finish(self.put(), set(items))
        if kind == 7:  # frozenset
            if self.proto >= 4 and rng.random() < 0.6:
                self.out += b"("
                items = [self.key(depth) for _ in range(n)]
                self.out += b"\x91"
                return self.finish(self.put(), frozenset(items))
            self.global_("frozenset")
            self.out += b"(" + (b"(" if self.proto == 0 else b"](")
            items = [self.key(depth) for _ in range(n)]
            self.out += (b"l" if self.proto == 0 else b"e") + b"t"
            self.out += b"\x81" if self.proto >= 2 and rng.random() < 0.3 else b"R"
            return self.finish(self.put(), frozenset(items))
        # OrderedDict (REDUCE then SETITEMS) or Counter (of a dict of ints)
        if rng.random() < 0.7:
            self.global_("OrderedDict")
            self.out += b"(tR" if self.proto == 0 else b")R"
            index = self.put()
            od: collections.OrderedDict = collections.OrderedDict()
            for _ in range(n):
                k = self.key(depth)
                od[k] = self.value(depth + 1)
                self.out += b"s"
            return self.finish(index, od)
        counts = {self.random_str()[:5]: self.rng.randint(-3, 3) for _ in range(n)}
        out_c = self.call("Counter", [counts], self.literal, collections.Counter(counts))
        return self.finish(self.put(), out_c)


def random_pickle(rng: random.Random) -> tuple[bytes, object]:
    """A random stream of a random protocol and the object it holds."""
    proto = rng.choice([0, 1, 2, 3, 4, 5])
    w = _Writer(rng, proto)
    obj = w.value()
    body = bytes(w.out) + b"."
    head = b"" if proto == 0 or (proto == 1 and rng.random() < 0.5) else b"\x80" + bytes([proto])
    if proto >= 4 and rng.random() < 0.5:
        head += b"\x95" + struct.pack("<Q", len(body))
    return head + body, obj


def _call_on_range(w: _Writer, name: str, n: int) -> None:
    """Writes ``name(range(n))`` (``name`` a key of ``_GLOBALS``)."""
    w.global_(name)
    w.out += b"("
    w.global_("range")
    w.tuple_of([n], w.literal)
    w.out += b"RtR"


def _hostile_fragment(w: _Writer, rng: random.Random) -> str:
    """Writes one construct a weights-only load must refuse (it would
    allocate without bound, crash the interpreter, run code or break the
    format) where a value goes; returns its name."""
    p = w.proto
    which = rng.randrange(16)
    if which == 0:
        _call_on_range(w, "list", 10**7)
        return "list(range(10**7))"
    if which == 1:
        w.global_(rng.choice(["bytes", "bytearray"]))
        w.tuple_of([rng.choice([10**9, 2**31 - 1, 5])], w.literal)
        w.out += b"R"
        return "bytes(n)"
    if which == 2:
        w.out += b"](" + b"N" * 3000 + b"e"
        index = w.put(always=True)
        assert index is not None
        for _ in range(400):
            w.global_(rng.choice(["tuple", "list", "set"]))
            w.out += b"("
            w.get(index)
            w.out += b"tR0"
        w.out += b"N"
        return "repeated copies of one list"
    if which == 3:
        w.out += b"N" + (b"r\xff\xff\xff\x7f" if p else b"p2147483647\n")
        return "huge memo index"
    if which == 4:
        w.out += b"(d" + (b")" + b"\x85" * 300 if p >= 2 else b"(" * 300 + b"t" * 300) + b"Ns"
        return "deeply nested tuple as a dict key"
    if which == 5 and p >= 2:
        w.out += b"}" + b")" + b"2\x86" * 70 + b"Ns"
        return "tuple of 2**70 shared parts as a dict key"
    if which == 6:
        module, name = rng.choice(
            [("os", "system"), ("posix", "system"), ("builtins", "eval"), ("builtins", "getattr")]
        )
        w.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"
        return f"global {module}.{name}"
    if which == 7:
        w.global_("encode")
        w.tuple_of(["x" * 50, rng.choice(["utf-32", "unicode_escape", "rot13"])], w.literal)
        w.out += b"R"
        return "_codecs.encode with another codec"
    if which == 8:
        w.global_("slice")
        w.out += b"("
        w.global_("slice")
        w.out += b"(NtRtR"
        return "slice of a slice"
    if which == 9:
        w.out += rng.choice([b"\x82\x01", b"\x97"]) if p >= 2 else b"\x82\x01"
        return "extension code or out-of-band buffer"
    if which == 10:
        w.out += rng.choice([b"\x8e", b"\x8d", b"\x95"]) + struct.pack("<Q", 2**62)
        return "length past the end"
    if which == 11:
        w.out += (b"}" if p else b"(d") + b"(Vx\nNdb"
        return "BUILD on a dict"
    if which == 12:
        w.out += (b")" if p else b"(t") + b"Na"
        return "APPEND to a tuple"
    if which == 13:
        w.global_("encode")
        w.out += b")\x81" if p >= 2 else b")R"
        return "NEWOBJ of a function"
    if which == 14:
        _call_on_range(w, "Counter", 10**8)
        return "Counter(range)"
    w.out += b"Pforged\n" if p == 0 else b"\x8c\x06forged" + b"Q"
    return "persistent id in a plain pickle"


def hostile_pickle(rng: random.Random) -> tuple[bytes, str]:
    """A random stream with one hostile construct among its values."""
    proto = rng.choice([0, 1, 2, 3, 4, 5])
    w = _Writer(rng, proto)
    w.out += b"(l" if proto == 0 else b"]("
    w.value(2)
    what = _hostile_fragment(w, rng)
    w.value(2)
    w.out += b"e" if proto else b"a"
    head = b"\x80" + bytes([proto]) if proto >= 2 else b""
    return head + bytes(w.out) + b".", what


_RANDOM_GLOBALS = [
    b"builtins\nlist", b"__builtin__\nset", b"collections\nOrderedDict", b"_codecs\nencode",
    b"builtins\nrange", b"builtins\nbytes", b"builtins\neval", b"os\nsystem", b"builtins\nslice",
    b"builtins\nint", b"builtins\ncomplex", b"builtins\ndict", b"builtins\nstr", b"builtins\nfrozenset",
    b"builtins\ntuple",
]  # fmt: skip
_BARE_OPCODES = b"N\x88\x89)]}\x8f(012tldaesu\x90\x91\x85\x86\x87R\x81\x92b\x93\x94Q"


def _random_opcode(rng: random.Random) -> bytes:
    r = rng.randrange(12)
    if r < 4:
        return bytes([rng.choice(_BARE_OPCODES)])
    if r == 4:
        return rng.choice(
            [b"K" + bytes([rng.randrange(256)]), b"J" + struct.pack("<i", rng.randint(-5, 2**20))]
        )
    if r == 5:
        text = rng.choice(["", "a", "latin1", "utf-32", "builtins", "list", "é😀"]).encode()
        return rng.choice([b"X" + struct.pack("<I", len(text)), b"\x8c" + bytes([len(text)])]) + text
    if r == 6:
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 9)))
        return rng.choice([b"C" + bytes([len(data)]), b"\x96" + struct.pack("<Q", len(data))]) + data
    if r == 7:
        return b"c" + rng.choice(_RANDOM_GLOBALS) + b"\n"
    if r == 8:
        index = rng.choice([0, 1, 2, 3, 255, 2**31 - 1])
        return rng.choice(
            [b"q" + bytes([index % 256]), b"h" + bytes([index % 256]), b"r" + struct.pack("<I", index)]
        )
    if r == 9:
        return rng.choice([b"I5\n", b"I01\n", b"L7L\n", b"F1.5\n", b"Vab\n", b"S'x'\n", b"p1\n", b"g0\n"])
    if r == 10:
        return b"G" + struct.pack(">d", rng.choice([0.0, 1.5, math.nan]))
    return b"\x8a\x02" + struct.pack("<h", rng.randint(-9999, 9999))


def random_opcodes(rng: random.Random) -> bytes:
    """A random sequence of opcodes (most malformed, some loadable)."""
    proto = rng.choice([0, 1, 2, 3, 4, 5])
    head = b"\x80" + bytes([proto]) if proto >= 2 else b""
    return head + b"".join(_random_opcode(rng) for _ in range(rng.randint(1, 40))) + b"."


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """Truncates, flips, inserts, deletes or repeats a few bytes."""
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4])):
        if not out:
            break
        i = rng.randrange(len(out))
        op = rng.randrange(5)
        if op == 0:
            del out[rng.randrange(len(out) + 1) :]
        elif op == 1:
            out[i] ^= rng.choice([1, 0x80, 0xFF, rng.randrange(1, 256)])
        elif op == 2:
            out[i:i] = bytes([rng.choice(b"()0124NRtuls\x85\x86\x87\x8f\x90\x91\x93\x94qhrjQbcK")])
        elif op == 3:
            del out[i]
        else:
            j = min(len(out), i + rng.randint(1, 8))
            out[i:i] = out[i:j]
    return bytes(out)


# ------------------------------------------------------------ checkpoints


def random_checkpoint(rng: random.Random) -> object:
    """A small checkpoint: views of one storage, a parameter, an int tensor,
    an empty tensor, and random containers around them."""
    base = torch.arange(float(rng.randint(2, 12)))
    obj = {
        "w": base,
        "w_view": base[1:],
        "p": torch.nn.Parameter(torch.ones(rng.randint(1, 4))),
        "i": torch.arange(rng.randint(0, 5), dtype=torch.int16),
        "empty": torch.zeros(0, 2),
        "meta": collections.OrderedDict([("step", rng.randint(0, 9)), ("betas", (0.9, 0.999))]),
    }
    if rng.random() < 0.5:
        obj["t"] = torch.arange(6.0).reshape(2, 3).t()
    return obj


def _rezip(members: list[tuple[str, bytes, int]]) -> bytes:
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are one of the damages
        with zipfile.ZipFile(out, "w") as zf:
            for name, data, method in members:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                zf.writestr(info, data, compress_type=method)
    return out.getvalue()


def damage_archive(rng: random.Random, data: bytes) -> tuple[bytes, str, bool]:
    """A damaged copy of an archive, what was done, and whether the damage
    may go unnoticed and change the result (a member rewritten with a valid
    CRC-32)."""
    op = rng.randrange(7)
    if op == 0:
        return data[: rng.randrange(len(data))], "truncated", False
    if op == 1:
        return mutate_bytes(rng, data) if rng.random() < 0.3 else _flip(rng, data), "bytes flipped", False
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = [(i.filename, zf.read(i.filename), zipfile.ZIP_STORED) for i in zf.infolist()]
    names = [m[0] for m in members]
    if op == 2:
        name = rng.choice([*names, "archive/extra", "archive/data/99", "other/file", "archive/data/0/x"])
        blob = bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
        method = rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
        members.insert(rng.randint(0, len(members)), (name, blob, method))
        return _rezip(members), f"member {name} added", False
    if op == 3:
        del members[rng.randrange(len(members))]
        return _rezip(members), "member removed", False
    if op == 4:
        i = rng.randrange(len(members))
        new = rng.choice([*names, "archive/data/7", "archive/Version", "archive/data.pk"])
        members[i] = (new, members[i][1], members[i][2])
        return _rezip(members), f"member renamed to {new}", False
    if op == 5:
        i = rng.randrange(len(members))
        members[i] = (members[i][0], members[i][1], zipfile.ZIP_DEFLATED)
        return _rezip(members), "member compressed", False
    # A member rewritten, its CRC-32 recomputed: only the checks behind the
    # CRC can notice, and a rewritten value may load as a different one.
    i = rng.randrange(len(members))
    name, blob, method = members[i]
    members[i] = (name, mutate_bytes(rng, blob) if blob else b"\0", method)
    return _rezip(members), f"member {name} rewritten", True


def _flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3])):
        out[rng.randrange(len(out))] ^= rng.randrange(1, 256)
    return bytes(out)


# --------------------------------------------------------------- checking


def same(a: object, b: object) -> bool:
    """Structural equality that also compares types, float bits (NaN equal
    to NaN, -0.0 unlike 0.0), tensors (class, dtype, shape, strides,
    requires_grad, values) and the sharing of mutable objects; iterative, so
    deep, shared or cyclic structures cost time linear in their distinct
    parts."""
    forward: dict[int, int] = {}
    backward: dict[int, int] = {}
    visited: set[tuple[int, int]] = set()
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, list | dict | set | bytearray | torch.Tensor):
            # A mutable object is one object on each side: met again, it
            # must be met with the same partner.
            if forward.setdefault(id(x), id(y)) != id(y) or backward.setdefault(id(y), id(x)) != id(x):
                return False
        if isinstance(x, list | tuple | dict | set | frozenset):
            # A pair of containers is compared once (cycles, shared parts).
            if (id(x), id(y)) in visited:
                continue
            visited.add((id(x), id(y)))
        if isinstance(x, float):
            if struct.pack("<d", x) != struct.pack("<d", y) and not (x != x and y != y):
                return False
        elif isinstance(x, complex):
            todo.append((x.real, y.real))
            todo.append((x.imag, y.imag))
        elif isinstance(x, torch.Tensor):
            layout = (x.dtype, tuple(x.shape), x.stride(), x.requires_grad, x.detach().tolist())
            if layout != (y.dtype, tuple(y.shape), y.stride(), y.requires_grad, y.detach().tolist()):
                return False
        elif isinstance(x, list | tuple):
            if len(x) != len(y):
                return False
            todo.extend(zip(x, y, strict=True))
        elif isinstance(x, dict):
            if list(x) != list(y):
                return False
            ykeys = {k: k for k in y}
            for k in x:
                todo.append((k, ykeys[k]))
                todo.append((x[k], y[k]))
        elif isinstance(x, set | frozenset):
            if x != y:
                return False
            ykeys = {k: k for k in y}
            todo.extend((k, ykeys[k]) for k in x)
        elif x != y:
            return False
    return True


def _reference_global(module: str, name: str) -> object:
    # The writer uses Python 2 names only in protocols 0-2, so mapping them
    # back whatever the protocol is what pickle does for its streams.
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    if (module, name) not in _ALLOWED_FOR_REFERENCE:
        raise pickle.UnpicklingError(f"{module}.{name}")
    return _ALLOWED_FOR_REFERENCE[(module, name)]


class _ReferenceUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """pickle's pure-Python unpickler (its memo is a dict) with the globals
    of the generator allowed."""

    def find_class(self, module: str, name: str) -> object:
        return _reference_global(module, name)


class _CReferenceUnpickler(pickle.Unpickler):
    """CPython's C unpickler with the same globals allowed."""

    def find_class(self, module: str, name: str) -> object:
        return _reference_global(module, name)


def _reference(data: bytes, c: bool = False) -> object:
    cls = _CReferenceUnpickler if c else _ReferenceUnpickler
    return cls(io.BytesIO(data), encoding="utf-8").load()


def _load(data: bytes) -> tuple[str, object]:
    """Loads with ferrograd.load: ("ok", result) or ("error", exception)."""
    try:
        return "ok", torch.load(io.BytesIO(data))
    except (pickle.UnpicklingError, RuntimeError) as exc:
        return "error", exc


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_case(seed: int, index: int) -> dict:
    """Builds and loads case ``index`` of ``seed``; returns what happened
    (raises AssertionError on a failure)."""
    rng = random.Random(f"{seed}-{index}")
    kind = rng.choice(
        ["pickle"] * 3 + ["mutated pickle"] * 3 + ["hostile pickle", "random opcodes"] + ["archive"] * 2
    )
    may_differ = False
    if kind == "hostile pickle":
        data, what = hostile_pickle(rng)
        expected = None
    elif kind == "random opcodes":
        data, what, expected = random_opcodes(rng), "random", None
    elif kind == "archive":
        original = random_checkpoint(rng)
        buf = io.BytesIO()
        torch.save(original, buf, pickle_protocol=rng.choice([2, 3, 4, 5]))
        data, what, may_differ = damage_archive(rng, buf.getvalue())
        expected: object = original
    else:
        data, expected = random_pickle(rng)
        what = "written"
        if kind == "pickle":
            assert same(_reference(data, c=True), expected), f"the writer and CPython disagree on {data!r}"
        else:
            data = mutate_bytes(rng, data)
            what = "mutated"
    rss = _peak_rss()
    tracemalloc.start()
    start = time.perf_counter()
    try:
        outcome, value = _load(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - start
    limit = MEMORY_BASE + MEMORY_PER_BYTE * len(data)
    assert peak <= limit, f"case {index} ({kind}, {what}) allocated {peak} bytes, limit {limit}"
    rss_growth = _peak_rss() - rss
    assert rss_growth <= RSS_CASE_LIMIT, f"case {index} ({kind}, {what}) raised the peak RSS by {rss_growth}"
    report = {
        "kind": kind,
        "what": what,
        "outcome": outcome,
        "seconds": elapsed,
        "peak": peak,
        "size": len(data),
    }
    if outcome == "error":
        report["error"] = f"{type(value).__name__}: {str(value).splitlines()[-1][:90]}"
        assert kind != "pickle", f"case {index}: an unmutated stream failed to load: {value!r} ({data!r})"
        return report
    assert kind != "hostile pickle", f"case {index}: a stream with {what} loaded"
    if kind in ("mutated pickle", "random opcodes"):
        try:
            ref = _reference(data)
        except Exception as exc:  # the pure-Python reference refused what ferrograd loaded
            report["reference"] = f"{type(exc).__name__}: {str(exc)[:80]}"
            return report
        assert same(value, ref), f"case {index}: ferrograd and pickle read the mutated stream differently"
    elif not may_differ:
        assert same(value, expected), f"case {index} ({kind}, {what}): loaded a different object"
    else:
        report["changed"] = not same(value, expected)
    return report


# ------------------------------------------------------------------- tests


@pytest.mark.parametrize("block", range(6))
def test_random_files_fail_cleanly_or_load_what_was_written(block):
    per_block = CI_CASES // 6
    outcomes = collections.Counter()
    for index in range(block * per_block, (block + 1) * per_block):
        outcomes[run_case(0, index)["outcome"]] += 1
    assert outcomes["ok"] and outcomes["error"]  # both sides of the property were exercised


def test_writer_covers_every_protocol_and_the_call_opcodes():
    # The generator is only useful if it reaches the opcodes it claims to.
    seen: set[int] = set()
    protos: set[int] = set()
    for index in range(400):
        data, _ = random_pickle(random.Random(f"cover-{index}"))
        protos.add(data[1] if data[0] == 0x80 else 0)
        seen.update(data)
    assert protos == {0, 1, 2, 3, 4, 5}
    for (
        opcode
    ) in b"RcN(tldsua}]eKMJGXBCphqgj\x81\x85\x86\x87\x88\x89\x8a\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96":
        assert opcode in seen, f"opcode {bytes([opcode])!r} never written"


# ------------------------------------------------------------------ by hand


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--case", type=int, default=None, help="run this one case and print it")
    args = parser.parse_args()
    indices = [args.case] if args.case is not None else range(args.count)
    rss = _peak_rss()
    outcomes: collections.Counter = collections.Counter()
    errors: collections.Counter = collections.Counter()
    notes: collections.Counter = collections.Counter()
    failures = []
    slowest = (0.0, -1)
    worst_ratio = (0.0, -1)
    largest = (0, -1)
    start = time.perf_counter()
    for index in indices:
        # A case that hangs prints where it is and which case it is.
        faulthandler.dump_traceback_later(CASE_TIMEOUT_S, exit=True)
        try:
            r = run_case(args.seed, index)
        except AssertionError as exc:
            failures.append((index, str(exc)[:300]))
            continue
        finally:
            faulthandler.cancel_dump_traceback_later()
        outcomes[(r["kind"], r["outcome"])] += 1
        if "error" in r:
            errors[r["error"][:70]] += 1
        if "reference" in r:
            notes["pickle's reference refused a stream ferrograd loaded: " + r["reference"][:60]] += 1
        if r.get("changed"):
            notes[f"rewritten member loaded as a different object ({r['what']})"] += 1
        slowest = max(slowest, (r["seconds"], index))
        worst_ratio = max(worst_ratio, (r["peak"] / (MEMORY_BASE + MEMORY_PER_BYTE * r["size"]), index))
        largest = max(largest, (r["peak"], index))
        if args.case is not None:
            print(r)
    grown = _peak_rss() - rss
    print(f"{len(indices)} cases, seed {args.seed}, {time.perf_counter() - start:.1f} s")
    for (kind, outcome), n in sorted(outcomes.items()):
        print(f"  {kind:15s} {outcome:6s} {n}")
    print(f"slowest case: {slowest[0] * 1e3:.1f} ms (case {slowest[1]})")
    print(f"largest tracemalloc peak: {largest[0] / 1e6:.2f} MB (case {largest[1]})")
    print(f"largest peak as a fraction of its case's limit: {worst_ratio[0]:.3f} (case {worst_ratio[1]})")
    print(f"peak resident memory grew by {grown >> 20} MiB over the run (tracemalloc's bookkeeping included)")
    print("most common errors:")
    for text, n in errors.most_common(25):
        print(f"  {n:6d}  {text}")
    for text, n in notes.most_common():
        print(f"  note {n:6d}  {text}")
    for index, text in failures[:20]:
        print(f"FAILURE case {index}: {text}")
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
