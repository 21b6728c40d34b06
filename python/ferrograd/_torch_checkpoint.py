"""Reading the checkpoints ``torch.save`` writes (its zip format).

The archive holds ``<root>/data.pkl`` (a pickle in which every storage is a
persistent id ``("storage", <torch.XStorage>, key, location, numel)`` and
every tensor a call of ``torch._utils._rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, hooks)``), one member ``<root>/data/<key>`` per
storage with its raw bytes, and the records ``<root>/version`` and
``<root>/byteorder``. ``<root>`` is the saved file's stem (``archive`` for a
file object).

The torch names the pickle uses resolve to ferrograd's own functions here,
so the file loads without torch: tensors that shared a storage in torch
share memory after loading (a view keeps its offset and strides),
Parameters come back as ``nn.Parameter``, dtypes, sizes and devices as
ferrograd's. A weights-only load (the default) goes through the same
bounded, allow-listed unpickler as ferrograd's own format.
"""

from __future__ import annotations

import collections
import pickle
import re
from typing import Any

from . import _core, _unpickler
from .serialization import _byteswap, _check_cpu, _dtype_name, _extent, _is_dense, _rebuild_subclass

# torch's typed storage classes, by the dtype of their elements.
_STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
}  # fmt: skip
# The dtypes a pickle may name as ``torch.<name>``.
_DTYPE_NAMES = (
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
    "complex64", "complex128", "float", "double", "half", "long", "int", "short", "cfloat", "cdouble",
)  # fmt: skip
# Newest format version of torch's zip archives that this reader knows.
_MAX_VERSION = 10
_PREFIX = "ferrograd.load"


class StorageType:
    """What a ``torch.XStorage`` global resolves to: the dtype of a
    storage's elements."""

    def __init__(self, name: str, dtype: Any) -> None:
        self.name = name
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class Storage:
    """One storage of the archive: read on first use, then shared by every
    tensor that names it (the first one laid densely over all of it is
    built directly, the others are strided views of it)."""

    def __init__(self, reader: Reader, key: str, dtype: Any, numel: int) -> None:
        self.reader = reader
        self.key = key
        self.dtype = dtype
        self.numel = numel
        self.base: Any = None
        # Read when the pickle first names the storage, so that a damaged
        # member is reported as such; dropped once the tensors hold it.
        # A mapped archive's storages are not read: tensors lie over the file.
        self.raw: bytes | None = None if reader.archive.mapped is not None else reader.raw(self)

    def tensor(self, offset: int, size: tuple[int, ...], stride: tuple[int, ...]) -> Any:
        if not (type(offset) is int and _ints(size) and _ints(stride) and len(size) == len(stride)):
            raise pickle.UnpicklingError(
                f"{_PREFIX}: a tensor's offset, size and stride must be ints (size and stride of one length)"
            )
        if any(n < 0 for n in size):
            raise pickle.UnpicklingError(f"{_PREFIX}: negative size {list(size)} in the checkpoint")
        lo, hi = _extent(size, stride)
        if offset + lo < 0 or (hi > lo and offset + hi > self.numel):
            raise pickle.UnpicklingError(
                f"{_PREFIX}: tensor of size {_unpickler.brief(list(size))} and stride "
                f"{_unpickler.brief(list(stride))} at offset {offset} does not fit storage {self.key} of "
                f"{self.numel} elements"
            )
        if self.numel == 0 or hi == lo:
            return _core.empty(tuple(size), dtype=self.dtype)
        if self.base is None:
            # The first tensor laid densely over the whole storage is built
            # directly (a plain tensor, as torch gives it); otherwise the
            # storage's elements are, and tensors are strided views of them.
            whole = offset == 0 and hi - lo == self.numel and _is_dense(size, stride)
            shape, strides = (size, stride) if whole else ((self.numel,), (1,))
            raw, self.raw = self.raw, None
            self.base = self.reader.place(self.reader.rebuild(self, raw, shape, strides))
            if whole:
                return self.base
        return self.base.as_strided(tuple(size), tuple(stride), offset)


def _ints(v: Any) -> bool:
    return isinstance(v, tuple | list) and all(type(n) is int for n in v)


# ------------------------------------------------------------- rebuilds


def _rebuild_tensor_v2(
    storage: Storage,
    offset: int,
    size: Any,
    stride: Any,
    requires_grad: bool,
    hooks: Any,
    metadata: Any = None,
) -> Any:
    t = storage.tensor(offset, tuple(size), tuple(stride))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage: Storage, offset: int, size: Any, stride: Any) -> Any:
    return storage.tensor(offset, tuple(size), tuple(stride))


def _parameter_class() -> Any:
    from .nn import Parameter

    return Parameter


def _rebuild_parameter(data: Any, requires_grad: bool, hooks: Any) -> Any:
    return _parameter_class()(data, requires_grad=requires_grad)


def _rebuild_parameter_with_state(data: Any, requires_grad: bool, hooks: Any, state: dict[str, Any]) -> Any:
    param = _rebuild_parameter(data, requires_grad, hooks)
    for name, value in state.items():
        setattr(param, name, value)
    return param


def _rebuild_from_type_v2(func: Any, new_type: Any, args: tuple[Any, ...], state: Any) -> Any:
    t = func(*args)
    if new_type is not _core.Tensor and type(t) is not new_type:
        t = _rebuild_subclass(new_type, t, t.requires_grad)
    if isinstance(state, dict):
        for name, value in state.items():
            setattr(t, name, value)
    return t


def _is_storage(v: Any) -> bool:
    return isinstance(v, Storage)


def _hooks_ok(v: Any) -> bool:
    return isinstance(v, dict) and not v


def _attr_dict(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(k, str) and not k.startswith("__") for k in v)


def _refuse(name: str, expected: str) -> pickle.UnpicklingError:
    return _unpickler.refuse(f"torch._utils.{name} takes {expected}")


def _tensor_v2_rule(args: tuple[Any, ...]) -> int:
    if not (
        6 <= len(args) <= 7
        and _is_storage(args[0])
        and type(args[1]) is int
        and _ints(args[2])
        and _ints(args[3])
        and isinstance(args[4], bool)
        and _hooks_ok(args[5])
    ):
        raise _refuse("_rebuild_tensor_v2", "(storage, offset, size, stride, requires_grad, no hooks)")
    return 256


def _tensor_rule(args: tuple[Any, ...]) -> int:
    if not (
        len(args) == 4 and _is_storage(args[0]) and type(args[1]) is int and _ints(args[2]) and _ints(args[3])
    ):
        raise _refuse("_rebuild_tensor", "(storage, offset, size, stride)")
    return 256


def _parameter_rule(args: tuple[Any, ...]) -> int:
    if not (
        len(args) == 3
        and isinstance(args[0], _core.Tensor)
        and isinstance(args[1], bool)
        and _hooks_ok(args[2])
    ):
        raise _refuse("_rebuild_parameter", "(tensor, requires_grad, no hooks)")
    return 256


def _parameter_state_rule(args: tuple[Any, ...]) -> int:
    if not (
        len(args) == 4
        and isinstance(args[0], _core.Tensor)
        and isinstance(args[1], bool)
        and _hooks_ok(args[2])
        and _attr_dict(args[3])
    ):
        raise _refuse("_rebuild_parameter_with_state", "(tensor, requires_grad, no hooks, attribute dict)")
    return 256 + 104 * len(args[3])


def _from_type_rule(args: tuple[Any, ...]) -> int:
    if not (
        len(args) == 4
        and args[0] in (_rebuild_tensor_v2, _rebuild_tensor)
        and isinstance(args[1], type)
        and issubclass(args[1], _core.Tensor)
        and isinstance(args[2], tuple)
        and (args[3] is None or _attr_dict(args[3]))
    ):
        raise _unpickler.refuse(
            "torch._tensor._rebuild_from_type_v2 takes (a tensor rebuild, a Tensor class, its arguments, "
            "attribute dict)"
        )
    return 256


def torch_globals() -> dict[str, Any]:
    """The torch names a checkpoint's pickle may use, resolved to
    ferrograd's objects."""
    import ferrograd

    names: dict[str, Any] = {
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.Size": ferrograd.Size,
        "torch.device": _core.device,
        "torch.Tensor": _core.Tensor,
        "torch.nn.parameter.Parameter": _parameter_class(),
    }
    for storage, kind in _storage_types().items():
        names[f"torch.{storage}"] = kind
    for dtype in _DTYPE_NAMES:
        names[f"torch.{dtype}"] = getattr(ferrograd, dtype)
    return names


_STORAGE_TYPE_CACHE: dict[str, StorageType] = {}


def _storage_types() -> dict[str, StorageType]:
    if not _STORAGE_TYPE_CACHE:
        import ferrograd

        for storage, dtype in _STORAGE_DTYPES.items():
            _STORAGE_TYPE_CACHE[storage] = StorageType(storage, getattr(ferrograd, dtype))
    return _STORAGE_TYPE_CACHE


def torch_rules() -> dict[Any, _unpickler.CallRule]:
    return {
        _rebuild_tensor_v2: _tensor_v2_rule,
        _rebuild_tensor: _tensor_rule,
        _rebuild_parameter: _parameter_rule,
        _rebuild_parameter_with_state: _parameter_state_rule,
        _rebuild_from_type_v2: _from_type_rule,
    }


# ------------------------------------------------------------- the reader

_VERSION_RECORD = re.compile(rb"([0-9]{1,9})\n?")


class Reader:
    """The storages of one torch archive (``archive`` is serialization's
    checked ``_Archive``; ``root`` the prefix of its members)."""

    def __init__(self, archive: Any, root: str, map_location: Any, place: Any, swap: bool) -> None:
        self.archive = archive
        self.root = root
        self.map_location = map_location
        self.place = place
        self.swap = swap
        self.storages: dict[str, Storage] = {}

    def raw(self, storage: Storage) -> bytes:
        data = self.archive.read(f"{self.root}/data/{storage.key}")
        return _byteswap(data, storage.dtype) if self.swap else data

    def rebuild(self, storage: Storage, raw: bytes | None, shape: Any, strides: Any) -> Any:
        """A tensor of ``shape`` and ``strides`` over ``storage``: from its
        bytes already read, or through the archive (a mapped file's own
        memory when it can be)."""
        if raw is not None:
            return _core._rebuild_tensor(raw, _dtype_name(storage.dtype), shape, strides, False)
        member = f"{self.root}/data/{storage.key}"
        return self.archive.rebuild(member, storage.dtype, shape, strides, self.swap)

    def persistent_load(self, pid: Any) -> Storage:
        if isinstance(pid, tuple) and pid[:1] == ("tensor",):
            raise RuntimeError(
                f"{_PREFIX}: the archive is not a ferrograd checkpoint: its pickle names ferrograd's tensor "
                f"records but it has no {self.root}/storages record; the checkpoint is truncated, damaged or "
                "was modified"
            )
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"{_PREFIX}: unsupported persistent id {_unpickler.brief(pid)}")
        _, kind, key, location, numel = pid
        if not isinstance(kind, StorageType):
            raise pickle.UnpicklingError(
                f"{_PREFIX}: storage {_unpickler.brief(key)} has type {_unpickler.brief(kind)}, not one of "
                f"torch's typed storages ({', '.join(_STORAGE_DTYPES)})"
            )
        if not (isinstance(key, str) and isinstance(location, str) and type(numel) is int and numel >= 0):
            raise pickle.UnpicklingError(f"{_PREFIX}: malformed storage id {_unpickler.brief(pid)}")
        if isinstance(self.map_location, dict):
            _check_cpu(self.map_location.get(location, location))
        elif not location.startswith("cpu") and self.map_location is None:
            raise RuntimeError(
                f"Attempting to deserialize object on device {location!r}, but ferrograd only has the cpu "
                "device. Use ferrograd.load with map_location='cpu' to map the storages to the CPU."
            )
        if key in self.storages:
            storage = self.storages[key]
            if storage.dtype != kind.dtype:
                raise pickle.UnpicklingError(
                    f"{_PREFIX}: storage {key} is named with two dtypes ({storage.dtype} and {kind.dtype})"
                )
            return storage
        member = f"{self.root}/data/{key}"
        if member not in self.archive.info:
            raise pickle.UnpicklingError(
                f"{_PREFIX}: the checkpoint has no member {member} for storage {key}"
            )
        size = self.archive.info[member].file_size
        if size != numel * kind.dtype.itemsize:
            raise RuntimeError(
                f"{_PREFIX}: storage size mismatch: the pickle declares storage {key} as {numel} "
                f"{kind.dtype} elements ({numel * kind.dtype.itemsize} bytes) but member {member} holds "
                f"{size} bytes; the checkpoint is truncated, damaged or was modified"
            )
        storage = self.storages[key] = Storage(self, key, kind.dtype, numel)
        return storage


def check_records(archive: Any, root: str) -> bool:
    """Checks a torch archive's version and byte order records; returns
    whether its storages must be byte-swapped."""
    import sys

    version = f"{root}/version"
    if version in archive.info:
        raw = archive.read(version, limit=64)
        match = _VERSION_RECORD.fullmatch(raw)
        if match is None:
            raise RuntimeError(f"{_PREFIX}: bad version record in {version}: {raw[:32]!r}")
        if int(match.group(1)) > _MAX_VERSION:
            raise RuntimeError(
                f"{_PREFIX}: the checkpoint has torch's format version {int(match.group(1))}, newer than the "
                f"versions this ferrograd reads (up to {_MAX_VERSION})"
            )
    order = f"{root}/byteorder"
    if order not in archive.info:
        return sys.byteorder != "little"
    value = archive.read(order, limit=16)
    if value not in (b"little", b"big"):
        raise RuntimeError(f"{_PREFIX}: bad byteorder record in {order}: {value[:16]!r}")
    return value.decode() != sys.byteorder


def load(
    archive: Any,
    root: str,
    map_location: Any,
    weights_only: bool,
    safe: dict[str, Any],
    pickle_module: Any,
    pickle_load_args: dict[str, Any],
    place: Any,
) -> Any:
    """Loads the object of a torch archive (see the module docs)."""
    swap = check_records(archive, root)
    reader = Reader(archive, root, map_location, place, swap)
    data = archive.read(f"{root}/data.pkl")
    names = torch_globals()
    if weights_only:
        from ._weights_only import _default_allowed, _rules

        bounded = _unpickler.BoundedUnpickler(
            data,
            allowed={**safe, **_default_allowed(), **names},
            rules={**_rules(), **torch_rules()},
            persistent_load=reader.persistent_load,
            **pickle_load_args,
        )
        return bounded.load()

    class _Unpickler(pickle_module.Unpickler):  # type: ignore[misc, name-defined]
        def find_class(self, module: str, name: str) -> Any:
            found = names.get(f"{module}.{name}")
            if found is not None:
                return found
            if module == "collections" and name == "OrderedDict":
                return collections.OrderedDict
            return super().find_class(module, name)

        def persistent_load(self, pid: Any) -> Any:
            return reader.persistent_load(pid)

    import io

    return _Unpickler(io.BytesIO(data), **pickle_load_args).load()


# ------------------------------------------------------------- the writer


class _TorchName:
    """A torch global the pickle names (``torch._utils._rebuild_tensor_v2``,
    ``torch.FloatStorage``...), written as a GLOBAL record without importing
    torch. Callable only so that pickle accepts it as a reduce function."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args: Any) -> Any:
        raise TypeError(f"{self.module}.{self.name} is a name written into checkpoints, not a function")


_NAMES: dict[tuple[str, str], _TorchName] = {}


def _name(module: str, name: str) -> _TorchName:
    key = (module, name)
    if key not in _NAMES:
        _NAMES[key] = _TorchName(module, name)
    return _NAMES[key]


_STORAGE_OF_DTYPE = {dtype: storage for storage, dtype in _STORAGE_DTYPES.items()}


class _StorageRef:
    """A tensor's storage record, pickled as torch's persistent id."""

    def __init__(self, record: Any) -> None:
        self.record = record


class TorchPickler(pickle._Pickler):  # type: ignore[name-defined, misc]
    """Pickles an object the way ``torch.save`` does: tensors as calls of
    ``torch._utils._rebuild_tensor_v2`` on a storage named by persistent id,
    Parameters through ``_rebuild_parameter``, dtypes, sizes and devices as
    torch's globals. Like serialization's own pickler it runs twice: the
    first pass (``final=False``) collects each storage's reachable range,
    the second writes offsets relative to the range's start."""

    def __init__(self, file: Any, protocol: int, layout: Any, final: bool) -> None:
        import ferrograd

        super().__init__(file, protocol)
        self.layout = layout
        self.final = final
        # Resolved once: reducer_override runs for every object pickled.
        self.size_type = ferrograd.Size
        self.parameter_type = _parameter_class()

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, _core.dtype):
            obj = _name("torch", _dtype_name(obj))
        if isinstance(obj, _TorchName):
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)

    def persistent_id(self, obj: Any) -> Any:
        if not isinstance(obj, _StorageRef):
            return None
        rec = obj.record
        kind = _STORAGE_OF_DTYPE.get(_dtype_name(rec.dtype))
        return ("storage", _name("torch", kind or "FloatStorage"), rec.key, "cpu", rec.numel)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, self.size_type):
            return _name("torch", "Size"), (tuple(obj),)
        if isinstance(obj, _core.device):
            return _name("torch", "device"), (str(obj),)
        if not isinstance(obj, _core.Tensor):
            return NotImplemented
        if isinstance(obj, self.parameter_type):
            data = obj.detach()
            return _name("torch._utils", "_rebuild_parameter"), (
                data,
                bool(obj.requires_grad),
                collections.OrderedDict(),
            )
        if _dtype_name(obj.dtype) not in _STORAGE_OF_DTYPE:
            raise pickle.PicklingError(f"ferrograd.save: torch has no storage type for dtype {obj.dtype}")
        shape, strides, offset = tuple(obj.shape), tuple(obj.stride()), obj.storage_offset()
        # The serial keeps the tensor alive until the save ends (record keys
        # are addresses).
        serial = self.layout.serial(obj)
        rec = self.layout.record_for(obj)
        if not self.final:
            lo, hi = _extent(shape, strides)
            rec.add(serial, offset + lo, offset + hi)
        rel = 0 if rec.numel == 0 else offset - rec.start
        args = (_StorageRef(rec), rel, shape, strides, bool(obj.requires_grad), collections.OrderedDict())
        if type(obj) is _core.Tensor:
            return _name("torch._utils", "_rebuild_tensor_v2"), args
        state = dict(getattr(obj, "__dict__", {}) or {})
        return (
            _name("torch._tensor", "_rebuild_from_type_v2"),
            (_name("torch._utils", "_rebuild_tensor_v2"), type(obj), args, state),
        )


def write(zf: Any, root: str, pickled: bytes, records: Any, write_aligned: Any, write_member: Any) -> None:
    """Writes the members of a torch archive, in the order torch writes
    them."""
    write_member(zf, f"{root}/data.pkl", pickled)
    write_member(zf, f"{root}/.format_version", b"1")
    write_member(zf, f"{root}/.storage_alignment", b"64")
    write_member(zf, f"{root}/byteorder", b"little")
    for rec in records:
        position = zf.fp.tell() if zf.fp is not None and zf.fp.seekable() else 0
        write_aligned(zf, f"{root}/data/{rec.key}", rec.data(), position)
    write_member(zf, f"{root}/version", b"3\n")
