"""The safetensors format: tensors by name, with no code in the file.

The functions of ``safetensors.torch``: :func:`save_file`, :func:`load_file`,
:func:`save` (to bytes), :func:`load` (from bytes) and :func:`safe_open`,
reading and writing the same files as the ``safetensors`` package, without
it.

A file is an 8-byte little-endian header length ``n``, ``n`` bytes of JSON
(each tensor's ``dtype``, ``shape`` and ``data_offsets`` into the data
buffer, and an optional ``"__metadata__"`` map of strings), padded with
spaces to a multiple of 8, then the data buffer: every tensor's elements,
little-endian and row-major, one after another with no gaps. Tensors are
written in ``safetensors``' order (by dtype, 64-bit integers first, then by
name), so the bytes equal the ``safetensors`` package's.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from .. import _core
from ..serialization import _byteswap, _dtype_name, _element_bytes

__all__ = ["SafetensorError", "load", "load_file", "safe_open", "save", "save_file"]

# safetensors' dtype codes of ferrograd's dtypes.
_CODES = {
    "float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "int64": "I64",
    "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8", "bool": "BOOL", "complex64": "C64",
}  # fmt: skip
_DTYPES = {code: name for name, code in _CODES.items()}
# The order of safetensors' dtypes: a file lists its tensors by this order,
# last first, then by name.
_ORDER = ["BOOL", "U8", "I8", "I16", "F16", "BF16", "I32", "F32", "C64", "F64", "I64"]
# The largest header safetensors accepts.
_MAX_HEADER = 100_000_000


class SafetensorError(Exception):
    """A file or buffer that is not valid safetensors data."""


def _check_tensors(tensors: Mapping[str, Any]) -> None:
    if not isinstance(tensors, Mapping):
        raise ValueError(f"Expected a dict of [str, ferrograd.Tensor] but received {type(tensors)}")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise ValueError(f"Key `{name}` is invalid, expected a str name")
        if not isinstance(t, _core.Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected ferrograd.Tensor but received {type(t)}")
        if _dtype_name(t.dtype) not in _CODES:
            raise ValueError(f"Key `{name}`: safetensors has no dtype code for {t.dtype}")
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. It either "
                "means you are trying to save tensors which are reference of each other in which case it's "
                "recommended to save only the full tensors, and reslice at load time, or simply call "
                "`.contiguous()` on your tensor to pack it before saving."
            )
    # Tensors whose memory overlaps would load as separate copies.
    spans = sorted(
        (t.data_ptr(), t.data_ptr() + t.numel() * t.element_size(), name)
        for name, t in tensors.items()
        if t.numel() > 0
    )
    shared: list[set[str]] = []
    end, group = -1, set[str]()
    for start, stop, name in spans:
        if start < end:
            group.add(name)
        else:
            if len(group) > 1:
                shared.append(group)
            group = {name}
        end = max(end, stop)
    if len(group) > 1:
        shared.append(group)
    if shared:
        raise RuntimeError(
            "Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
            f"when loading them again: {shared}."
        )


def _serialize(tensors: Mapping[str, Any], metadata: Mapping[str, str] | None) -> list[bytes | memoryview]:
    """The file's pieces: the length and header, then each tensor's bytes."""
    _check_tensors(tensors)
    header: dict[str, Any] = {}
    if metadata is not None:
        for key, value in metadata.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError(f"metadata must map str to str, got {key!r}: {type(value).__name__}")
        header["__metadata__"] = dict(metadata)
    order = sorted(tensors, key=lambda n: (-_ORDER.index(_CODES[_dtype_name(tensors[n].dtype)]), n))
    chunks: list[bytes] = []
    offset = 0
    for name in order:
        t = tensors[name]
        raw = _element_bytes(t.detach()) if t.numel() else b""
        header[name] = {
            "dtype": _CODES[_dtype_name(t.dtype)],
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        offset += len(raw)
        chunks.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return [struct.pack("<Q", len(text)), text, *chunks]


def save(tensors: Mapping[str, Any], metadata: Mapping[str, str] | None = None) -> bytes:
    """The safetensors bytes of ``tensors``.

    Args:
        tensors (dict[str, Tensor]): contiguous tensors that share no memory.
        metadata (dict[str, str], optional): text stored in the header.

    Returns:
        bytes: the file's content.

    Example:
        >>> data = ferrograd.utils.safetensors.save({"w": ferrograd.arange(3.0)})
        >>> ferrograd.utils.safetensors.load(data)
        {'w': tensor([0., 1., 2.])}
    """
    return b"".join(_serialize(tensors, metadata))


def save_file(
    tensors: Mapping[str, Any], filename: str | os.PathLike[str], metadata: Mapping[str, str] | None = None
) -> None:
    """Writes ``tensors`` to the safetensors file ``filename``.

    Args:
        tensors (dict[str, Tensor]): contiguous tensors that share no memory.
        filename (str or os.PathLike): the file to write.
        metadata (dict[str, str], optional): text stored in the header.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
        >>> ferrograd.utils.safetensors.save_file({"b": ferrograd.zeros(2)}, path)
        >>> ferrograd.utils.safetensors.load_file(path)["b"]
        tensor([0., 0.])
    """
    pieces = _serialize(tensors, metadata)
    with open(filename, "wb") as fh:
        for piece in pieces:
            fh.write(piece)


class _Entry:
    __slots__ = ("dtype", "shape", "start", "stop")

    def __init__(self, dtype: str, shape: tuple[int, ...], start: int, stop: int) -> None:
        self.dtype, self.shape, self.start, self.stop = dtype, shape, start, stop


def _parse(head: bytes, size: int) -> tuple[dict[str, _Entry], dict[str, str] | None, int]:
    """The entries, metadata and data start of a buffer of ``size`` bytes
    beginning with ``head`` (at least its first 8 bytes and its header)."""
    if size < 8:
        raise SafetensorError("Error while deserializing: header too small")
    (n,) = struct.unpack("<Q", head[:8])
    if n > _MAX_HEADER:
        raise SafetensorError(f"Error while deserializing: header of {n} bytes is too large")
    if 8 + n > size:
        raise SafetensorError(
            f"Error while deserializing: header of {n} bytes runs past the {size}-byte buffer"
        )
    try:
        header = json.loads(head[8 : 8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SafetensorError(f"Error while deserializing header: invalid JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise SafetensorError("Error while deserializing header: the header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (
        isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())
    ):
        raise SafetensorError("Error while deserializing header: __metadata__ must map str to str")
    entries: dict[str, _Entry] = {}
    for name, info in header.items():
        ok = isinstance(info, dict) and set(info) == {"dtype", "shape", "data_offsets"}
        shape, offsets = (info.get("shape"), info.get("data_offsets")) if ok else (None, None)
        if not (
            ok
            and info["dtype"] in _DTYPES
            and isinstance(shape, list)
            and all(type(d) is int and d >= 0 for d in shape)
            and isinstance(offsets, list)
            and len(offsets) == 2
            and all(type(o) is int for o in offsets)
        ):
            raise SafetensorError(
                f"Error while deserializing header: bad entry for tensor {name!r}: {info!r:.200}"
            )
        numel = 1
        for d in shape:
            numel *= d
        itemsize = getattr(_core, _DTYPES[info["dtype"]]).itemsize
        start, stop = offsets
        if stop - start != numel * itemsize or start < 0:
            raise SafetensorError(
                f"Error while deserializing header: tensor {name!r} of shape {shape} and dtype "
                f"{info['dtype']} needs {numel * itemsize} bytes but its data_offsets {offsets} span "
                f"{stop - start}"
            )
        entries[name] = _Entry(_DTYPES[info["dtype"]], tuple(shape), start, stop)
    # The data buffer holds the tensors back to back, nothing else.
    data = 8 + n
    expected = 0
    for entry in sorted(entries.values(), key=lambda e: (e.start, e.stop)):
        if entry.start != expected:
            raise SafetensorError(
                "Error while deserializing header: the tensors' data offsets leave a gap or overlap"
            )
        expected = entry.stop
    if data + expected != size:
        raise SafetensorError(
            f"Error while deserializing header: the tensors take {expected} bytes of data but the buffer "
            f"holds {size - data}"
        )
    return entries, metadata, data


def _strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    step = 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _tensor(entry: _Entry, raw: bytes | memoryview) -> Any:
    dtype = getattr(_core, entry.dtype)
    if sys.byteorder != "little":
        raw = _byteswap(bytes(raw), dtype)
    return _core._rebuild_tensor(bytes(raw), entry.dtype, entry.shape, _strides(entry.shape), False)


def load(data: bytes) -> dict[str, Any]:
    """The tensors of safetensors bytes, by name.

    Args:
        data (bytes): the content of a safetensors file.

    Returns:
        dict[str, Tensor]: the tensors, sorted by name.

    Raises:
        SafetensorError: ``data`` is not valid safetensors data.

    Example:
        >>> t = ferrograd.tensor([[1, 2], [3, 4]], dtype=ferrograd.int16)
        >>> ferrograd.utils.safetensors.load(ferrograd.utils.safetensors.save({"t": t}))["t"]
        tensor([[1, 2],
                [3, 4]], dtype=ferrograd.int16)
    """
    view = memoryview(data)
    entries, _, start = _parse(bytes(view[: min(len(view), 8 + _MAX_HEADER + 8)]), len(view))
    return {name: _tensor(e, view[start + e.start : start + e.stop]) for name, e in sorted(entries.items())}


def load_file(filename: str | os.PathLike[str], device: Any = "cpu") -> dict[str, Any]:
    """The tensors of the safetensors file ``filename``, by name.

    Args:
        filename (str or os.PathLike): the file to read.
        device (str or device): where to load them; ferrograd has the cpu
            only. Default: ``"cpu"``.

    Returns:
        dict[str, Tensor]: the tensors, sorted by name.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> ferrograd.utils.safetensors.save_file({"w": ferrograd.ones(2, 2)}, path)
        >>> ferrograd.utils.safetensors.load_file(path)["w"].shape
        ferrograd.Size([2, 2])
    """
    with safe_open(filename, framework="pt", device=device) as f:
        return {name: f.get_tensor(name) for name in f.keys()}


def _map(fh: Any) -> Any:
    """The open file mapped copy-on-write (tensors over it can be written
    without touching the file), or None where it cannot be mapped."""
    import mmap

    try:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None


class safe_open:  # noqa: N801 (the name safetensors gives it)
    """A safetensors file opened for reading tensors one at a time (its
    header is read at once; the file is mapped into memory copy-on-write,
    and each tensor is a view of its mapped bytes, without a copy).

    Args:
        filename (str or os.PathLike): the file.
        framework (str): ``"pt"`` (or ``"torch"``, ``"numpy"``: the tensors
            are ferrograd tensors either way).
        device (str or device): ``"cpu"``. Default: ``"cpu"``.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
        >>> ferrograd.utils.safetensors.save_file({"a": ferrograd.ones(1)}, path, metadata={"step": "3"})
        >>> with ferrograd.utils.safetensors.safe_open(path, framework="pt") as f:
        ...     print(f.keys(), f.metadata())
        ['a'] {'step': '3'}
    """

    def __init__(self, filename: str | os.PathLike[str], framework: str = "pt", device: Any = "cpu") -> None:
        if framework not in ("pt", "torch", "numpy", "np"):
            raise SafetensorError(f"framework {framework!r} is not supported; use 'pt'")
        if str(device) != "cpu":
            raise RuntimeError(f"ferrograd has the cpu device only; cannot load onto {device!r}")
        self._fh = open(filename, "rb")  # noqa: SIM115 (closed by __exit__/close)
        try:
            size = os.fstat(self._fh.fileno()).st_size
            head = self._fh.read(8)
            if len(head) == 8:
                (n,) = struct.unpack("<Q", head)
                head += self._fh.read(min(n, _MAX_HEADER))
            self._entries, self._metadata, self._start = _parse(head, size)
            self._mapped = _map(self._fh) if self._entries else None
        except BaseException:
            self._fh.close()
            raise

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the file (tensors already taken keep their mapped pages)."""
        self._mapped = None
        self._fh.close()

    def keys(self) -> list[str]:
        """The tensors' names, sorted."""
        return sorted(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def metadata(self) -> dict[str, str] | None:
        """The header's ``__metadata__`` (``None`` when it has none)."""
        return None if self._metadata is None else dict(self._metadata)

    def get_tensor(self, name: str) -> Any:
        """The tensor ``name``: over the file's mapped pages when its bytes
        lie at an address aligned for its dtype on a little-endian machine
        (no copy; writes stay in this process), else read from the file."""
        entry = self._entries.get(name)
        if entry is None:
            raise SafetensorError(f"File does not contain tensor {name}")
        offset = self._start + entry.start
        if (
            self._mapped is not None
            and sys.byteorder == "little"
            and offset % getattr(_core, entry.dtype).itemsize == 0
        ):
            return _core._frombuffer_strided(
                self._mapped, entry.dtype, offset, entry.shape, _strides(entry.shape)
            )
        self._fh.seek(self._start + entry.start)
        raw = self._fh.read(entry.stop - entry.start)
        if len(raw) != entry.stop - entry.start:
            raise SafetensorError(f"File ended before the bytes of tensor {name}")
        return _tensor(entry, raw)
