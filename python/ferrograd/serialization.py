"""``ferrograd.save`` and ``ferrograd.load``: checkpoints of tensors and of
the Python containers that hold them (state dicts, optimizer states).

The file is a zip archive (stored, not compressed) with:

* ``archive/version``: the format version (``1``) as text;
* ``archive/byteorder``: ``little``, the byte order of every record;
* ``archive/storages``: one line per storage, ``<key> <dtype> <numel>
  <users>``;
* ``archive/data/<key>``: the raw bytes of storage ``<key>``;
* ``archive/data.pkl``: a pickle of the object in which every tensor is a
  persistent id ``("tensor", key, offset, shape, strides, requires_grad,
  subclass)``.

Tensors that live in one storage are written against one record, so views
saved together still share memory after loading. Only the part of a storage
that the saved tensors can reach is written. The layout is in docs/data.md.

``load(..., weights_only=True)`` (the default) unpickles with an allowlist of
globals, so a file cannot run code; ``weights_only=False`` is full pickle.
"""

from __future__ import annotations

import _compat_pickle
import contextlib
import io
import os
import pickle
import sys
import zipfile
from collections.abc import Iterator
from typing import IO, Any

from . import _core

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]

FORMAT_VERSION = 1
DEFAULT_PROTOCOL = 2
_ROOT = "archive"
# Data records start on this boundary inside the file, so a reader may map
# them straight from disk.
_ALIGNMENT = 64
# The zip "extra field" header id of the padding that gives that alignment.
_PAD_HEADER_ID = 0x4746

_DTYPES: dict[str, Any] = {
    str(d).split(".")[-1]: d
    for d in (
        _core.bool,
        _core.uint8,
        _core.int8,
        _core.int16,
        _core.int32,
        _core.int64,
        _core.float16,
        _core.bfloat16,
        _core.float32,
        _core.float64,
        _core.complex64,
        _core.complex128,
    )
}

FileLike = str | os.PathLike[str] | IO[bytes]


def _dtype_name(dtype: Any) -> str:
    return str(dtype).split(".")[-1]


# ---------------------------------------------------------------- layout math


def _extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int]:
    """The element range ``[lo, hi)`` (relative to the storage offset) that a
    layout can touch; ``(0, 0)`` for an empty tensor."""
    if any(n == 0 for n in shape):
        return 0, 0
    lo = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s > 0)
    return lo, hi + 1


def _is_dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """True when the layout visits every element of ``[0, numel)`` exactly
    once (a contiguous tensor up to a permutation of its dimensions), the one
    kind of layout ``_core._rebuild_tensor`` builds directly."""
    expected = 1
    for n, s in sorted(((n, s) for n, s in zip(shape, strides, strict=True) if n != 1), key=lambda p: p[1]):
        if s != expected:
            return False
        expected *= n
    return True


# ----------------------------------------------------------------------- save


class _StorageRecord:
    """One storage of the archive: the tensors written against it and the
    element range of the original storage they reach."""

    def __init__(self, key: str, dtype: Any, source: Any) -> None:
        self.key = key
        self.dtype = dtype
        self.source = source  # any tensor of the storage, to read it through
        self.lo: int | None = None
        self.hi = 0
        self.users: set[int] = set()

    def add(self, serial: int, lo: int, hi: int) -> None:
        self.users.add(serial)
        if hi > lo:
            self.lo = lo if self.lo is None else min(self.lo, lo)
            self.hi = max(self.hi, hi)

    @property
    def start(self) -> int:
        return self.lo or 0

    @property
    def numel(self) -> int:
        return 0 if self.lo is None else self.hi - self.lo

    def data(self) -> bytes:
        if self.numel == 0:
            return b""
        span = self.source.detach().as_strided((self.numel,), (1,), self.start)
        # A contiguous 1-D tensor pickles as exactly its elements' bytes.
        raw = span.__reduce__()[1][0]
        if sys.byteorder != "little":
            raw = _byteswap(raw, self.dtype)
        return raw


def _byteswap(raw: bytes, dtype: Any) -> bytes:
    """Flips every element of ``raw`` between big- and little-endian."""
    size = dtype.itemsize
    if dtype.is_complex:
        size //= 2  # the real and imaginary parts are swapped separately
    if size == 1:
        return raw
    out = bytearray(raw)
    for i in range(0, len(out), size):
        out[i : i + size] = out[i : i + size][::-1]
    return bytes(out)


class _Layout:
    """The storages and tensors met while pickling one object."""

    def __init__(self) -> None:
        self.records: dict[Any, _StorageRecord] = {}
        self.serials: dict[int, int] = {}
        self.keep_alive: list[Any] = []

    def serial(self, t: Any) -> int:
        # Keyed by id(): the object is kept alive until the save ends, so the
        # id cannot be reused by another tensor in between.
        if id(t) not in self.serials:
            self.serials[id(t)] = len(self.serials)
            self.keep_alive.append(t)
        return self.serials[id(t)]

    def record_for(self, t: Any) -> _StorageRecord:
        if t.numel() == 0:
            # Empty tensors own no memory worth sharing (their pointers may
            # coincide), so each gets a record of its own.
            key: Any = ("empty", self.serial(t))
        else:
            base_address = t.data_ptr() - t.storage_offset() * t.element_size()
            key = (base_address, _dtype_name(t.dtype))
        rec = self.records.get(key)
        if rec is None:
            rec = _StorageRecord(str(len(self.records)), t.dtype, t)
            self.records[key] = rec
        return rec


class _TensorPickler(pickle.Pickler):
    """Pickles the structure; tensors become persistent ids naming a storage
    record. Saving pickles twice: the first pass (``final=False``) only
    collects the storages and the range each one needs, the second writes
    offsets relative to the start of that range."""

    def __init__(self, file: IO[bytes], protocol: int, layout: _Layout, final: bool) -> None:
        super().__init__(file, protocol)
        self.layout = layout
        self.final = final

    def persistent_id(self, obj: Any) -> Any:
        if not isinstance(obj, _core.Tensor):
            return None
        shape = tuple(obj.shape)
        strides = tuple(obj.stride())
        offset = obj.storage_offset()
        serial = self.layout.serial(obj)
        rec = self.layout.record_for(obj)
        if not self.final:
            lo, hi = _extent(shape, strides)
            rec.add(serial, offset + lo, offset + hi)
            return serial
        cls = type(obj)
        subclass = None if cls is _core.Tensor else (cls.__module__, cls.__qualname__)
        rel = 0 if rec.numel == 0 else offset - rec.start
        return ("tensor", rec.key, rel, shape, strides, bool(obj.requires_grad), subclass, serial)


def _write_aligned(zf: zipfile.ZipFile, name: str, data: bytes, position: int) -> None:
    """Writes ``data`` as a stored member whose bytes begin on an
    ``_ALIGNMENT`` boundary, by padding the local header's extra field."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    header = 30 + len(name.encode())
    pad = (-(position + header + 4)) % _ALIGNMENT
    info.extra = _PAD_HEADER_ID.to_bytes(2, "little") + pad.to_bytes(2, "little") + b"\0" * pad
    zf.writestr(info, data)


def _write_member(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    zf.writestr(info, data)


def save(
    obj: object,
    f: FileLike,
    pickle_module: Any = pickle,
    pickle_protocol: int = DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Saves ``obj`` (tensors and the containers, numbers and strings around
    them) to ``f``, a path or a writable binary file object.

    Tensors keep their dtype, shape, strides and ``requires_grad``; tensors
    that share a storage share it again after :func:`load`. The file is a zip
    archive laid out as torch's (a pickle of the structure plus one member per
    storage), described in docs/data.md.

    Args:
        obj (object): what to save: a tensor, a ``state_dict``, nested
            containers of tensors...
        f (str, os.PathLike or file object): the path, or a binary file
            object open for writing.
        pickle_module (module): the module whose pickler writes the
            structure. Default: ``pickle``.
        pickle_protocol (int): the pickle protocol. Default: ``2``.

    Example:
        >>> import io
        >>> buf = io.BytesIO()
        >>> ferrograd.save({"w": ferrograd.ones(2)}, buf)
        >>> _ = buf.seek(0)
        >>> ferrograd.load(buf)
        {'w': tensor([1., 1.])}
    """
    if not _use_new_zipfile_serialization:
        raise RuntimeError("ferrograd.save writes only the zip format (_use_new_zipfile_serialization=True)")
    layout = _Layout()
    _TensorPickler(io.BytesIO(), pickle_protocol, layout, final=False).dump(obj)
    final = io.BytesIO()
    _TensorPickler(final, pickle_protocol, layout, final=True).dump(obj)
    records = layout.records

    storages = "".join(
        f"{r.key} {_dtype_name(r.dtype)} {r.numel} {len(r.users)}\n" for r in records.values()
    ).encode()

    with contextlib.ExitStack() as stack:
        fh: IO[bytes]
        if isinstance(f, str | os.PathLike):
            fh = stack.enter_context(open(f, "wb"))  # noqa: SIM115
        else:
            fh = f
        zf = stack.enter_context(zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True))
        _write_member(zf, f"{_ROOT}/version", f"{FORMAT_VERSION}\n".encode())
        if not _disable_byteorder_record:
            _write_member(zf, f"{_ROOT}/byteorder", b"little")
        _write_member(zf, f"{_ROOT}/storages", storages)
        _write_member(zf, f"{_ROOT}/data.pkl", final.getvalue())
        for rec in records.values():
            position = zf.fp.tell() if zf.fp is not None and zf.fp.seekable() else 0
            _write_aligned(zf, f"{_ROOT}/data/{rec.key}", rec.data(), position)


# ----------------------------------------------------------------------- load

_safe_globals: dict[str, Any] = {}


def _global_name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allows the given classes and functions in ``load(...,
    weights_only=True)``, for the rest of the process.

    Args:
        safe_globals (list): the objects to allow, or ``(object, name)``
            pairs naming them as the file does.

    Example:
        >>> import fractions, io
        >>> buf = io.BytesIO()
        >>> ferrograd.save({"ratio": fractions.Fraction(1, 3)}, buf)
        >>> add_safe_globals([fractions.Fraction])
        >>> _ = buf.seek(0)
        >>> ferrograd.load(buf)
        {'ratio': Fraction(1, 3)}
        >>> clear_safe_globals()
    """
    for g in safe_globals:
        if isinstance(g, tuple):
            obj, name = g
            _safe_globals[name] = obj
        else:
            _safe_globals[_global_name(g)] = g


def get_safe_globals() -> list[Any]:
    """Returns the globals added with :func:`add_safe_globals`.

    Returns:
        list: the allowed objects.
    """
    return list(_safe_globals.values())


def clear_safe_globals() -> None:
    """Forgets every global added with :func:`add_safe_globals`."""
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(globals_: list[Any]) -> Iterator[None]:
    """Context manager that allows ``globals_`` in weights-only loads inside
    its block only.

    Args:
        globals_ (list): the objects to allow, as for :func:`add_safe_globals`.

    Example:
        >>> import fractions, io
        >>> buf = io.BytesIO()
        >>> ferrograd.save(fractions.Fraction(1, 3), buf)
        >>> _ = buf.seek(0)
        >>> with safe_globals([fractions.Fraction]):
        ...     print(ferrograd.load(buf))
        1/3
    """
    saved = dict(_safe_globals)
    add_safe_globals(globals_)
    try:
        yield
    finally:
        _safe_globals.clear()
        _safe_globals.update(saved)


def _default_allowed() -> dict[str, Any]:
    """The globals a weights-only load resolves: containers, the ferrograd
    types a checkpoint holds, and nothing that can run code."""
    import builtins
    import codecs
    import collections

    import ferrograd

    allowed: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        # protocol 2 writes ``bytes`` as a call to ``_codecs.encode``.
        "_codecs.encode": codecs.encode,
        "ferrograd._dtype_from_name": ferrograd._dtype_from_name,
        "ferrograd.device": _core.device,
        "ferrograd._size.Size": ferrograd.Size,
        "ferrograd._core._rebuild_tensor": _core._rebuild_tensor,
    }
    for name in ("set", "frozenset", "complex", "slice", "range", "bytearray", "list", "dict", "tuple"):
        allowed[f"builtins.{name}"] = getattr(builtins, name)
    for name in ("int", "float", "str", "bytes", "bool"):
        allowed[f"builtins.{name}"] = getattr(builtins, name)
    param = getattr(getattr(ferrograd, "nn", None), "Parameter", None)
    if param is not None:
        allowed[_global_name(param)] = param
        # ``pickle.dump`` of a Parameter goes through this rebuild function;
        # the class it receives is itself resolved through this allowlist.
        rebuild = getattr(sys.modules.get(param.__module__), "_rebuild_parameter", None)
        if rebuild is not None:
            allowed[_global_name(rebuild)] = rebuild
    return allowed


_WEIGHTS_ONLY_MSG = (
    "Weights only load failed. Re-running `ferrograd.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the file "
    "from a trusted source.\n\n"
)


def _unsupported_global(module: str, name: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        f"{_WEIGHTS_ONLY_MSG}Unsupported global: GLOBAL {module}.{name} was not an allowed global by "
        f"default. Please use `ferrograd.serialization.add_safe_globals([{module}.{name}])` or the "
        f"`ferrograd.serialization.safe_globals([{module}.{name}])` context manager to allowlist this "
        "global if you trust this class/function."
    )


class _StorageTable:
    """The storages of one archive, read lazily and cached so that every
    tensor naming a record shares the one tensor built from it."""

    def __init__(self, zf: zipfile.ZipFile | None, map_location: Any) -> None:
        self.zf = zf
        self.map_location = map_location
        self.meta: dict[str, tuple[Any, int, int]] = {}
        self.cache: dict[str, Any] = {}
        self.swap = False
        if zf is None:
            return
        names = set(zf.namelist())
        if f"{_ROOT}/byteorder" in names:
            self.swap = zf.read(f"{_ROOT}/byteorder").decode().strip() != sys.byteorder
        for line in zf.read(f"{_ROOT}/storages").decode().splitlines():
            key, dtype_name, numel, users = line.split()
            if dtype_name not in _DTYPES:
                raise RuntimeError(f"ferrograd.load: unknown dtype {dtype_name!r} in storage {key}")
            self.meta[key] = (_DTYPES[dtype_name], int(numel), int(users))

    def raw(self, key: str) -> bytes:
        assert self.zf is not None
        dtype, numel, _ = self.meta[key]
        data = self.zf.read(f"{_ROOT}/data/{key}")
        if len(data) != numel * dtype.itemsize:
            raise RuntimeError(
                f"ferrograd.load: storage {key} holds {len(data)} bytes, expected {numel * dtype.itemsize}"
            )
        return _byteswap(data, dtype) if self.swap else data

    def storage(self, key: str) -> Any:
        if key not in self.cache:
            dtype, numel, _ = self.meta[key]
            base = _core._rebuild_tensor(self.raw(key), _dtype_name(dtype), (numel,), (1,), False)
            self.cache[key] = _apply_map_location(base, self.map_location)
        return self.cache[key]

    def tensor(self, key: str, offset: int, shape: Any, strides: Any, requires_grad: bool) -> Any:
        if key not in self.meta:
            raise pickle.UnpicklingError(f"ferrograd.load: tensor refers to a missing storage {key!r}")
        dtype, numel, users = self.meta[key]
        lo, hi = _extent(shape, strides)
        if offset + lo < 0 or (hi > lo and offset + hi > numel):
            raise pickle.UnpicklingError(
                f"ferrograd.load: tensor of shape {list(shape)} and strides {list(strides)} at offset "
                f"{offset} does not fit storage {key} of {numel} elements"
            )
        if users == 1 and offset == 0 and hi - lo == numel and _is_dense(shape, strides):
            # The storage's only tensor, laid out densely: build it directly
            # so it is a plain tensor rather than a view of a hidden storage.
            t = _core._rebuild_tensor(self.raw(key), _dtype_name(dtype), shape, strides, False)
            t = _apply_map_location(t, self.map_location)
        elif numel == 0:
            t = _core.empty(tuple(shape), dtype=dtype)
        else:
            t = self.storage(key).as_strided(tuple(shape), tuple(strides), offset)
        if requires_grad:
            t.requires_grad_(True)
        return t


def _check_cpu(location: Any) -> None:
    dev = _core.device(location) if not isinstance(location, _core.device) else location
    if dev.type != "cpu":
        raise RuntimeError(
            f"Attempting to deserialize object on device {dev}, but ferrograd only has the cpu device. "
            "Use map_location='cpu' (the default) to load it."
        )


def _apply_map_location(t: Any, map_location: Any) -> Any:
    """Storages are always written from the cpu; ``map_location`` may keep
    them there, rename the location, or transform them (a callable)."""
    if map_location is None:
        return t
    if callable(map_location) and not isinstance(map_location, str | _core.device):
        out = map_location(t, "cpu")
        return t if out is None else out
    if isinstance(map_location, dict):
        target = map_location.get("cpu", "cpu")
        _check_cpu(target)
        return t
    _check_cpu(map_location)
    return t


def _resolve_map_location(map_location: Any) -> Any:
    # Reject a non-cpu target before reading anything.
    if isinstance(map_location, str | _core.device):
        _check_cpu(map_location)
    return map_location


def _make_unpickler(
    file: IO[bytes],
    table: _StorageTable,
    weights_only: bool,
    pickle_module: Any,
    pickle_load_args: dict[str, Any],
) -> pickle.Unpickler:
    base = pickle.Unpickler if weights_only else pickle_module.Unpickler
    allowed = _default_allowed() if weights_only else None
    loaded: dict[int, Any] = {}

    class _Unpickler(base):  # type: ignore[misc, valid-type]
        def find_class(self, module: str, name: str) -> Any:
            if allowed is None:
                return super().find_class(module, name)
            # Protocol 2 streams name Python 2 modules (``__builtin__``);
            # map them as pickle's own find_class does.
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
            qual = f"{module}.{name}"
            if qual in allowed:
                return allowed[qual]
            if qual in _safe_globals:
                return _safe_globals[qual]
            raise _unsupported_global(module, name)

        def persistent_load(self, pid: Any) -> Any:
            if not _valid_tensor_id(pid):
                raise pickle.UnpicklingError(f"ferrograd.load: unsupported persistent id {pid!r}")
            _, key, offset, shape, strides, requires_grad, subclass, serial = pid
            # One saved tensor object, met several times, loads as one object.
            if serial in loaded:
                return loaded[serial]
            t = table.tensor(key, offset, shape, strides, bool(requires_grad))
            if subclass is not None:
                cls = self.find_class(*subclass)
                t = _rebuild_subclass(cls, t, bool(requires_grad))
            loaded[serial] = t
            return t

    return _Unpickler(file, **pickle_load_args)


def _valid_tensor_id(pid: Any) -> bool:
    """The persistent ids ``save`` writes, checked field by field before any
    of them is used."""
    if not (isinstance(pid, tuple) and len(pid) == 8 and pid[0] == "tensor"):
        return False
    _, key, offset, shape, strides, requires_grad, subclass, serial = pid
    if not (isinstance(shape, tuple) and isinstance(strides, tuple)):
        return False
    ints = (offset, serial, *shape, *strides)
    return (
        isinstance(key, str)
        and bool(ints)
        and all(type(v) is int for v in ints)
        and len(shape) == len(strides)
        and all(n >= 0 for n in shape)
        and isinstance(requires_grad, bool)
        and (subclass is None or (isinstance(subclass, tuple) and all(isinstance(p, str) for p in subclass)))
    )


def _rebuild_subclass(cls: Any, t: Any, requires_grad: bool) -> Any:
    if not (isinstance(cls, type) and issubclass(cls, _core.Tensor)):
        raise pickle.UnpicklingError(f"ferrograd.load: {_global_name(cls)} is not a Tensor subclass")
    if cls.__name__ == "Parameter":
        return cls(t.detach(), requires_grad=requires_grad)
    # A fresh handle on the same storage, retyped in place: the subclass
    # instance keeps sharing memory with the other tensors of its storage
    # (a subclass constructor would copy).
    out = t.detach()
    try:
        out.__class__ = cls
    except TypeError:
        out = cls(out)
    if requires_grad and not out.requires_grad:
        out.requires_grad_(True)
    return out


def load(
    f: FileLike,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Loads an object saved with :func:`save` from ``f``, a path or a
    readable binary file object.

    By default (``weights_only``) only tensors, containers, numbers,
    strings, dtypes, devices, sizes and allow-listed globals (see
    :func:`add_safe_globals`) are accepted; anything else raises
    ``pickle.UnpicklingError`` without running code. A plain pickle stream
    (``pickle.dump`` of tensors) is also accepted.

    Args:
        f (str, os.PathLike or file object): the path, or a binary file
            object open for reading.
        map_location (str, device, dict or callable, optional): ``None``,
            ``'cpu'``, ``ferrograd.device('cpu')``, a dict of location renames,
            or a callable ``(storage, location)`` returning the storage to use;
            any other device raises. Default: ``None``.
        pickle_module (module, optional): the module whose ``Unpickler`` reads
            the structure (only with ``weights_only=False``). Default: ``None``.

    Keyword args:
        weights_only (bool, optional): restrict what may be loaded, as above.
            Default: ``None`` (``True``).
        mmap (bool, optional): accepted for compatibility; the data is always
            read into memory. Default: ``None``.
        **pickle_load_args: passed to the unpickler (e.g. ``encoding``).

    Example:
        >>> import io
        >>> buf = io.BytesIO()
        >>> ferrograd.save([ferrograd.arange(3)], buf)
        >>> _ = buf.seek(0)
        >>> ferrograd.load(buf, map_location="cpu")
        [tensor([0, 1, 2])]
    """
    if weights_only is None:
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError(
            "Can not safely load weights when explicit pickle_module is specified; "
            "pass weights_only=False to use it."
        )
    pickle_module = pickle if pickle_module is None else pickle_module
    pickle_load_args.setdefault("encoding", "utf-8")
    map_location = _resolve_map_location(map_location)

    with contextlib.ExitStack() as stack:
        fh: IO[bytes]
        if isinstance(f, str | os.PathLike):
            fh = stack.enter_context(open(f, "rb"))  # noqa: SIM115
        else:
            fh = f
            if not (hasattr(fh, "seekable") and fh.seekable()):
                # zipfile needs to seek to the central directory at the end.
                fh = io.BytesIO(fh.read())
        start = fh.tell()
        if not zipfile.is_zipfile(fh):
            fh.seek(start)
            return _make_unpickler(
                fh, _StorageTable(None, map_location), weights_only, pickle_module, pickle_load_args
            ).load()
        fh.seek(start)
        zf = stack.enter_context(zipfile.ZipFile(fh, "r"))
        names = zf.namelist()
        if f"{_ROOT}/storages" not in names or f"{_ROOT}/data.pkl" not in names:
            raise RuntimeError(
                "ferrograd.load: the archive is not a ferrograd checkpoint (no archive/storages or "
                "archive/data.pkl record); files written by torch.save are not supported"
            )
        version = int(zf.read(f"{_ROOT}/version").decode().strip())
        if version > FORMAT_VERSION:
            raise RuntimeError(
                f"ferrograd.load: the file has format version {version}, newer than this ferrograd's "
                f"{FORMAT_VERSION}"
            )
        table = _StorageTable(zf, map_location)
        with zf.open(f"{_ROOT}/data.pkl") as pkl:
            data = io.BytesIO(pkl.read())
        return _make_unpickler(data, table, weights_only, pickle_module, pickle_load_args).load()
