"""``ferrograd.save`` and ``ferrograd.load``: checkpoints of tensors and of
the Python containers that hold them (state dicts, optimizer states).

``save`` writes torch's zip format (``_torch_checkpoint``), and ``load``
reads it, so checkpoints move between torch and ferrograd both ways.
``load`` also reads ferrograd's earlier format, which this module writes
with ``save(..., _format="ferrograd")``: a zip archive (stored, not
compressed) with:

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

``load(..., weights_only=True)`` (the default) reads the pickle with
``_unpickler.BoundedUnpickler``: an allowlist of globals, so a file cannot run
code, and a budget, so it cannot make the loader allocate more than its size
allows; ``weights_only=False`` is full pickle. Before reading any member,
``load`` checks the archive's directory (members stored and inside the file,
records present, each storage's size equal to its member's), and a damaged
or modified file raises an error naming the problem.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import re
import struct
import sys
import zipfile
from collections.abc import Iterator
from typing import IO, Any

from . import _core, _unpickler
from ._weights_only import _default_allowed, _global_name, _rules

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

    def data(self) -> bytes | memoryview:
        if self.numel == 0:
            return b""
        return _element_bytes(self.source.detach().as_strided((self.numel,), (1,), self.start))


def _element_bytes(t: Any) -> bytes | memoryview:
    """The little-endian bytes of the elements of the contiguous tensor
    ``t``: its own memory, without a copy, where it can lend it (bfloat16
    and conjugate views cannot, and a big-endian machine swaps them)."""
    if sys.byteorder == "little":
        try:
            return memoryview(t).cast("B")
        except BufferError:
            pass
    # A contiguous tensor pickles as exactly its elements' bytes.
    raw = t.__reduce__()[1][0]
    return raw if sys.byteorder == "little" else _byteswap(raw, t.dtype)


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


def _write_aligned(zf: zipfile.ZipFile, name: str, data: bytes | memoryview, position: int) -> None:
    """Writes ``data`` as a stored member whose bytes begin on an
    ``_ALIGNMENT`` boundary, by padding the local header's extra field."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    header = 30 + len(name.encode())
    pad = (-(position + header + 4)) % _ALIGNMENT
    info.extra = _PAD_HEADER_ID.to_bytes(2, "little") + pad.to_bytes(2, "little") + b"\0" * pad
    zf.writestr(info, data)


def _open(stack: contextlib.ExitStack[Any], f: FileLike, mode: str) -> IO[bytes]:
    """``f`` as a binary file: a path is opened in ``mode`` (and closed by ``stack``), a file
    object is returned as it is."""
    if isinstance(f, str | os.PathLike):
        return stack.enter_context(open(f, mode))  # noqa: SIM115
    return f


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
    *,
    _format: str = "torch",
) -> None:
    """Saves ``obj`` (tensors and the containers, numbers and strings around
    them) to ``f``, a path or a writable binary file object.

    Tensors keep their dtype, shape, strides and ``requires_grad``; tensors
    that share a storage share it again after :func:`load`. The file is in
    torch's zip format (a pickle of the structure plus one member per
    storage), so ``torch.load`` reads it too; see docs/data.md.

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
    if _format not in ("torch", "ferrograd"):
        raise ValueError(f"ferrograd.save: _format must be 'torch' or 'ferrograd', not {_format!r}")
    layout = _Layout()
    final = io.BytesIO()
    if _format == "torch":
        from . import _torch_checkpoint

        if pickle_module is not pickle:
            raise ValueError("ferrograd.save: torch's format is written with the standard pickle module")
        _torch_checkpoint.TorchPickler(io.BytesIO(), pickle_protocol, layout, final=False).dump(obj)
        _torch_checkpoint.TorchPickler(final, pickle_protocol, layout, final=True).dump(obj)
        # torch names the archive's root after the file (``archive`` for a
        # file object).
        root = _ROOT
        if isinstance(f, str | os.PathLike):
            root = os.path.splitext(os.path.basename(os.fspath(f)))[0] or _ROOT
        with contextlib.ExitStack() as stack:
            fh = _open(stack, f, "wb")
            zf = stack.enter_context(zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True))
            _torch_checkpoint.write(
                zf, root, final.getvalue(), layout.records.values(), _write_aligned, _write_member
            )
        return
    _TensorPickler(io.BytesIO(), pickle_protocol, layout, final=False).dump(obj)
    _TensorPickler(final, pickle_protocol, layout, final=True).dump(obj)
    records = layout.records

    storages = "".join(
        f"{r.key} {_dtype_name(r.dtype)} {r.numel} {len(r.users)}\n" for r in records.values()
    ).encode()

    with contextlib.ExitStack() as stack:
        fh = _open(stack, f, "wb")
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


# ------------------------------------------------------------- the archive

# A file is read as an archive when it starts with a zip record (or zipfile
# finds an archive with data before it).
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_VERSION = f"{_ROOT}/version"
_BYTEORDER = f"{_ROOT}/byteorder"
_STORAGES = f"{_ROOT}/storages"
_PICKLE = f"{_ROOT}/data.pkl"
_STORAGE_LINE = re.compile(r"([0-9A-Za-z_.\-]{1,64}) ([a-z0-9]{1,16}) ([0-9]{1,20}) ([0-9]{1,20})")
# How torch's legacy (non-zip) files start: a protocol-2 pickle of the
# format's magic number.
_TORCH_LEGACY_MAGIC = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)
# Bytes of a local file header before its name (the zip format's fixed part).
_LOCAL_HEADER = 30


def _tampered(message: str) -> RuntimeError:
    return RuntimeError(f"ferrograd.load: {message}; the checkpoint is truncated, damaged or was modified")


class _Archive:
    """A checkpoint's zip archive, checked from its central directory before
    any member is read: every member stored (not compressed) and inside the
    file, no two overlapping, the records present, and each storage's
    declared size equal to the size of its member. So the memory a file can
    request for storages is at most its own size."""

    def __init__(self, fh: IO[bytes], start: int) -> None:
        end = self.size = fh.seek(0, os.SEEK_END)
        fh.seek(start)
        try:
            self.zf = zipfile.ZipFile(fh, "r")
        except Exception as exc:
            raise RuntimeError(
                "ferrograd.load: truncated or damaged archive: the file starts as a zip archive but its "
                f"central directory cannot be read ({_unpickler.describe(exc)}); was the file cut short?"
            ) from exc
        try:
            self._check_directory(min(end, getattr(self.zf, "start_dir", end)))
            # ``torch.save``'s archives: one ``<root>/data.pkl`` and no
            # storage table.
            pickles = [n for n in self.info if n.count("/") == 1 and n.endswith("/data.pkl")]
            self.torch_root: str | None = None
            if _STORAGES not in self.info and len(pickles) == 1:
                self.torch_root = pickles[0].split("/")[0]
            else:
                self._check_records()
        except BaseException:
            self.zf.close()
            raise

    mapped: Any = None
    """The file mapped copy-on-write (``load(..., mmap=True)``), or None."""

    def close(self) -> None:
        self.zf.close()

    def map(self, fh: IO[bytes]) -> None:
        """Maps the file privately, as torch's ``mmap=True`` does: storages
        become tensors over the mapped pages (read when first touched),
        and writes to them stay in this process, never in the file."""
        import mmap

        self.mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)

    def rebuild(self, name: str, dtype: Any, shape: Any, strides: Any, swap: bool) -> Any:
        """A tensor of ``shape`` and ``strides`` over the bytes of member
        ``name`` (whose size the caller checked against the layout): the
        mapped file's own memory when the archive is mapped and the member
        lies at an address aligned for ``dtype``, else a copy of the bytes
        (byte-swapped when ``swap``)."""
        if self.mapped is not None and not swap:
            start = self._data_start(name)
            if start % dtype.itemsize == 0:
                return _core._frombuffer_strided(
                    self.mapped, _dtype_name(dtype), start, tuple(shape), tuple(strides)
                )
        fp = self.zf.fp
        if not swap and fp is not None and hasattr(fp, "readinto") and fp.seekable():
            # Read straight into the new tensor's memory; the CRC-32 is
            # checked as zipfile would.
            start = self._data_start(name)
            fp.seek(start)
            t, crc = _core._read_tensor(fp, _dtype_name(dtype), tuple(shape), tuple(strides))
            if crc != self.info[name].CRC:
                raise _tampered(
                    f"checksum failure in member {name}: its bytes do not match the CRC-32 that the "
                    "archive records"
                )
            return t
        data = self.read(name)
        data = _byteswap(data, dtype) if swap else data
        return _core._rebuild_tensor(data, _dtype_name(dtype), shape, strides, False)

    def _data_start(self, name: str) -> int:
        """Where member ``name``'s bytes start in the file, from its local
        header (read from the mapped file, or the archive's file)."""
        info = self.info[name]
        if self.mapped is not None:
            head = self.mapped[info.header_offset : info.header_offset + _LOCAL_HEADER]
        else:
            assert self.zf.fp is not None
            self.zf.fp.seek(info.header_offset)
            head = self.zf.fp.read(_LOCAL_HEADER)
        if len(head) != _LOCAL_HEADER or head[:4] != b"PK\x03\x04":
            raise _tampered(f"member {name!r} has no local header where the archive's directory puts it")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        start = info.header_offset + _LOCAL_HEADER + name_len + extra_len
        if start + info.file_size > (self.size if self.mapped is None else len(self.mapped)):
            raise _tampered(f"member {name!r} runs past the end of the file")
        return start

    def _check_directory(self, end: int) -> None:
        infos = self.zf.infolist()
        self.info: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            if name in self.info:
                raise _tampered(f"the archive holds member {name!r} twice")
            if info.flag_bits & 0x1:
                raise _tampered(f"member {name!r} is encrypted")
            if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
                raise _tampered(
                    f"member {name!r} is compressed (zip method {info.compress_type}, {info.compress_size} "
                    f"bytes holding {info.file_size}); checkpoint members are stored uncompressed, so "
                    "their sizes are known before reading"
                )
            self.info[name] = info
        # Lower bounds of each member's extent in the file (its name takes at
        # least one byte per character).
        spans = sorted(
            (i.header_offset, i.header_offset + _LOCAL_HEADER + len(i.filename) + i.compress_size, i.filename)
            for i in infos
        )
        for (_, stop, name), (nxt, _, other) in zip(spans, spans[1:], strict=False):
            if stop > nxt:
                raise _tampered(f"members {name!r} and {other!r} overlap in the archive")
        if spans and spans[-1][1] > end:
            raise _tampered(f"member {spans[-1][2]!r} runs past the end of the archive's data")

    def _check_records(self) -> None:
        if _STORAGES not in self.info or _PICKLE not in self.info:
            raise RuntimeError(
                f"ferrograd.load: the archive is neither a ferrograd checkpoint (no {_STORAGES} or "
                f"{_PICKLE} record) nor one written by torch.save (one <name>/data.pkl record)"
            )
        if _VERSION not in self.info:
            raise _tampered(f"the archive has no member {_VERSION}")
        raw = self.read(_VERSION, limit=64)
        match = re.fullmatch(rb"([0-9]{1,9})\n?", raw)
        if match is None or int(match.group(1)) < 1:
            raise _tampered(
                f"bad version record in {_VERSION}: expected a format version number such as b'1\\n', "
                f"found {raw[:32]!r}"
            )
        version = int(match.group(1))
        if version > FORMAT_VERSION:
            raise RuntimeError(
                f"ferrograd.load: the file has format version {version}, newer than this ferrograd's "
                f"{FORMAT_VERSION}"
            )
        self.swap = False
        if _BYTEORDER in self.info:
            order = self.read(_BYTEORDER, limit=16)
            if order not in (b"little", b"big"):
                raise _tampered(f"bad byteorder record in {_BYTEORDER}: {order[:16]!r}")
            self.swap = order.decode() != sys.byteorder
        self.meta: dict[str, tuple[Any, int, int]] = {}
        records = self.read(_STORAGES)
        if records and not records.endswith(b"\n"):
            raise _tampered(f"bad storage record in {_STORAGES}: its last line is cut short")
        for lineno, line in enumerate(records.split(b"\n")[:-1], start=1):
            self._add_storage(lineno, line)

    def _add_storage(self, lineno: int, line: bytes) -> None:
        match = _STORAGE_LINE.fullmatch(line.decode("ascii", "replace"))
        key, dtype_name, numel_text, users_text = match.groups() if match else ("", "", "0", "0")
        if dtype_name not in _DTYPES or key in self.meta or int(users_text) < 1:
            raise _tampered(f"bad storage record on line {lineno} of {_STORAGES}: {line[:80]!r}")
        dtype, numel = _DTYPES[dtype_name], int(numel_text)
        member = f"{_ROOT}/data/{key}"
        if member not in self.info:
            raise _tampered(f"missing member {member} for storage {key} declared in {_STORAGES}")
        size = self.info[member].file_size
        if size != numel * dtype.itemsize:
            raise _tampered(
                f"storage size mismatch: {_STORAGES} declares storage {key} as {numel} {dtype_name} elements "
                f"({numel * dtype.itemsize} bytes) but member {member} holds {size} bytes"
            )
        self.meta[key] = (dtype, numel, int(users_text))

    def read(self, name: str, limit: int | None = None) -> bytes:
        """The bytes of a member whose size the directory checks vouched
        for; zipfile verifies its CRC-32."""
        if limit is not None and self.info[name].file_size > limit:
            raise _tampered(f"bad record {name}: {self.info[name].file_size} bytes, at most {limit} expected")
        try:
            return self.zf.read(name)
        except Exception as exc:
            if isinstance(exc, zipfile.BadZipFile) and "CRC" in str(exc):
                raise _tampered(
                    f"checksum failure in member {name}: its bytes do not match the CRC-32 that the "
                    "archive records"
                ) from exc
            raise _tampered(f"cannot read member {name} ({_unpickler.describe(exc)})") from exc


class _StorageTable:
    """The storages of one archive, read lazily and cached so that every
    tensor naming a record shares the one tensor built from it."""

    def __init__(self, archive: _Archive | None, map_location: Any) -> None:
        self.archive = archive
        self.map_location = map_location
        self.meta = archive.meta if archive is not None else {}
        self.cache: dict[str, Any] = {}
        # The distinct tensors met so far per storage: never more than the
        # record declares, so a record is never copied twice.
        self.users_seen: dict[str, int] = {}

    def rebuild(self, key: str, shape: Any, strides: Any) -> Any:
        """A tensor over storage ``key``'s record (its size was checked
        against the storage table when the archive was opened)."""
        assert self.archive is not None
        dtype = self.meta[key][0]
        t = self.archive.rebuild(f"{_ROOT}/data/{key}", dtype, shape, strides, self.archive.swap)
        return _apply_map_location(t, self.map_location)

    def storage(self, key: str) -> Any:
        if key not in self.cache:
            self.cache[key] = self.rebuild(key, (self.meta[key][1],), (1,))
        return self.cache[key]

    def tensor(self, key: str, offset: int, shape: Any, strides: Any, requires_grad: bool) -> Any:
        if key not in self.meta:
            raise pickle.UnpicklingError(f"ferrograd.load: tensor refers to a missing storage {key!r}")
        dtype, numel, users = self.meta[key]
        seen = self.users_seen[key] = self.users_seen.get(key, 0) + 1
        if seen > users:
            raise pickle.UnpicklingError(
                f"ferrograd.load: storage {key} is declared with {users} tensor(s) in {_STORAGES} but the "
                "pickle refers to it from more; the checkpoint was modified"
            )
        lo, hi = _extent(shape, strides)
        if offset + lo < 0 or (hi > lo and offset + hi > numel):
            raise pickle.UnpicklingError(
                f"ferrograd.load: tensor of shape {_unpickler.brief(list(shape))} and strides "
                f"{_unpickler.brief(list(strides))} at offset {offset} does not fit storage {key} of {numel} "
                "elements"
            )
        if users == 1 and offset == 0 and hi - lo == numel and _is_dense(shape, strides):
            # The storage's only tensor, laid out densely: build it directly
            # so it is a plain tensor rather than a view of a hidden storage.
            t = self.rebuild(key, shape, strides)
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


_UNPICKLER_ARGS = frozenset({"encoding", "errors", "fix_imports"})


def _unpickle(
    file: IO[bytes],
    table: _StorageTable,
    weights_only: bool,
    pickle_module: Any,
    pickle_load_args: dict[str, Any],
) -> Any:
    """Unpickles the structure: with the bounded unpickler and the allowlist
    when ``weights_only``, else with ``pickle_module``'s Unpickler."""
    loaded: dict[int, Any] = {}

    def persistent_load(pid: Any) -> Any:
        if not _valid_tensor_id(pid):
            raise pickle.UnpicklingError(f"ferrograd.load: unsupported persistent id {_unpickler.brief(pid)}")
        _, key, offset, shape, strides, requires_grad, subclass, serial = pid
        # One saved tensor object, met several times, loads as one object.
        if serial in loaded:
            return loaded[serial]
        t = table.tensor(key, offset, shape, strides, bool(requires_grad))
        if subclass is not None:
            t = _rebuild_subclass(find_class(*subclass), t, bool(requires_grad))
        loaded[serial] = t
        return t

    if weights_only:
        unexpected = sorted(set(pickle_load_args) - _UNPICKLER_ARGS)
        if unexpected:
            raise TypeError(
                f"ferrograd.load: unexpected keyword argument(s) {unexpected} for a weights-only load"
            )
        bounded = _unpickler.BoundedUnpickler(
            file,
            allowed={**_safe_globals, **_default_allowed()},
            rules=_rules(),
            persistent_load=persistent_load,
            **pickle_load_args,
        )
        find_class = bounded.find_class
        return bounded.load()

    class _Unpickler(pickle_module.Unpickler):  # type: ignore[misc, name-defined]
        def persistent_load(self, pid: Any) -> Any:
            return persistent_load(pid)

    unpickler = _Unpickler(file, **pickle_load_args)
    find_class = unpickler.find_class
    return unpickler.load()


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
        and (
            subclass is None
            or (
                isinstance(subclass, tuple)
                and len(subclass) == 2
                and all(isinstance(p, str) for p in subclass)
            )
        )
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
    """Loads an object saved with :func:`save` (or with ``torch.save``) from
    ``f``, a path or a readable binary file object.

    By default (``weights_only``) only tensors, containers, numbers,
    strings, dtypes, devices, sizes and allow-listed globals (see
    :func:`add_safe_globals`) are accepted; anything else raises
    ``pickle.UnpicklingError`` without running code, and what a file may
    make the loader allocate is bounded by the file's size (the limits are
    in docs/data.md). A plain pickle stream (``pickle.dump`` of tensors) is
    also accepted. A truncated, damaged or modified checkpoint raises
    ``RuntimeError`` or ``pickle.UnpicklingError`` naming the problem.

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
        mmap (bool, optional): map the file into memory instead of reading
            it: tensors lie over the file's pages (copy-on-write: writing to
            them never changes the file), which are read only when touched.
            ``f`` must be a path, and the file a zip checkpoint (torch's or
            ferrograd's). A storage whose bytes are not aligned for its dtype
            in the file is read into memory instead. Don't truncate or
            rewrite the file while such tensors live. Default: ``None``
            (False).
        **pickle_load_args: passed to the unpickler (``encoding``, ``errors``,
            ``fix_imports``; any keyword of ``pickle_module.Unpickler`` with
            ``weights_only=False``).

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

    if mmap and not isinstance(f, str | os.PathLike):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with contextlib.ExitStack() as stack:
        fh = _open(stack, f, "rb")
        if fh is f and not (hasattr(fh, "seekable") and fh.seekable()):
            # zipfile needs to seek to the central directory at the end.
            fh = io.BytesIO(fh.read())
        start = fh.tell()
        head = fh.read(4)
        fh.seek(start)
        if not head:
            raise pickle.UnpicklingError("ferrograd.load: the file is empty (truncated checkpoint?)")
        if head not in _ZIP_MAGICS and not zipfile.is_zipfile(fh):
            if mmap:
                raise RuntimeError(
                    f"mmap can only be used with zip checkpoints (torch.save's default format, or "
                    f"ferrograd.save's); {os.fspath(f)!r} is not one"  # type: ignore[arg-type]
                )
            fh.seek(start)
            if fh.read(len(_TORCH_LEGACY_MAGIC)) == _TORCH_LEGACY_MAGIC:
                raise RuntimeError(
                    "ferrograd.load: the file is in torch's legacy serialization format (written by "
                    "torch.save with _use_new_zipfile_serialization=False, or by torch before 1.6), which "
                    "ferrograd does not read; save it again with torch.save's default (zip) format"
                )
            fh.seek(start)
            return _unpickle(
                fh, _StorageTable(None, map_location), weights_only, pickle_module, pickle_load_args
            )
        fh.seek(start)
        archive = _Archive(fh, start)
        stack.callback(archive.close)
        if mmap:
            archive.map(fh)
        if archive.torch_root is not None:
            from . import _torch_checkpoint

            return _torch_checkpoint.load(
                archive,
                archive.torch_root,
                map_location,
                weights_only,
                _safe_globals,
                pickle_module,
                pickle_load_args,
                lambda t: _apply_map_location(t, map_location),
            )
        # Checked against the directory: at most the file's own size.
        data = io.BytesIO(archive.read(_PICKLE))
        table = _StorageTable(archive, map_location)
        return _unpickle(data, table, weights_only, pickle_module, pickle_load_args)
