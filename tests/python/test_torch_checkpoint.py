"""Checkpoints across ferrograd and torch: ``load`` reads the zip archives
``torch.save`` writes, and ``save`` writes that format.

The oracles are independent of ferrograd's reader and writer:

- archives built here from the format's description with ``zipfile`` and
  raw pickle opcodes (``_torch_archive``), as torch lays them out;
- ``data/torch_2_13_checkpoint.pt``, written by torch 2.13 (``torch.save``
  of the object ``_fixture_expected`` describes, with a Linear(3, 2) whose
  weight is ``arange(6).reshape(2, 3) / 4`` and bias ``[0.5, -0.5]``); torch
  is not needed to run these tests;
- for what ``save`` writes: the members read back with ``zipfile`` and the
  pickle replayed by an unpickler that records the torch calls it names.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile
from pathlib import Path

import ferrograd as torch
import numpy as np
import pytest

DATA = Path(__file__).parent / "data"

# ------------------------------------------------------------ a hand-made writer


def _unicode(s: str) -> bytes:
    raw = s.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def _int(n: int) -> bytes:
    return b"J" + struct.pack("<i", n)


def _ints(values) -> bytes:
    return b"(" + b"".join(_int(v) for v in values) + b"t"


def _global(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode()


def _tensor(storage_type: str, key: str, numel: int, offset: int, size, stride, requires_grad=False,
            location="cpu") -> bytes:
    """The opcodes of ``torch._utils._rebuild_tensor_v2(<storage>, offset,
    size, stride, requires_grad, OrderedDict())``."""
    pid = b"(" + _unicode("storage") + _global("torch", storage_type) + _unicode(key) + _unicode(location)
    pid += _int(numel) + b"tQ"
    hooks = _global("collections", "OrderedDict") + b")R"
    args = b"(" + pid + _int(offset) + _ints(size) + _ints(stride) + (b"\x88" if requires_grad else b"\x89")
    return _global("torch._utils", "_rebuild_tensor_v2") + args + hooks + b"tR"


def _dict(items: dict[str, bytes]) -> bytes:
    return b"\x80\x02}(" + b"".join(_unicode(k) + v for k, v in items.items()) + b"u."


def _torch_archive(pickled: bytes, storages: dict[str, bytes], root: str = "archive", byteorder=b"little",
                   version=b"3\n") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{root}/data.pkl", pickled)
        zf.writestr(f"{root}/.format_version", b"1")
        if byteorder is not None:
            zf.writestr(f"{root}/byteorder", byteorder)
        for key, data in storages.items():
            zf.writestr(f"{root}/data/{key}", data)
        zf.writestr(f"{root}/version", version)
    return buf.getvalue()


def _load(raw: bytes, **kwargs):
    return torch.load(io.BytesIO(raw), **kwargs)


# --------------------------------------------------------------------- reading


def test_hand_built_archive_loads_with_shared_storage_and_views():
    x = np.arange(12, dtype="<f4")
    pickled = _dict({
        "x": _tensor("FloatStorage", "0", 12, 0, (3, 4), (4, 1)),
        "col": _tensor("FloatStorage", "0", 12, 1, (3,), (4,)),
        "t": _tensor("FloatStorage", "0", 12, 0, (4, 3), (1, 4)),
        "i": _tensor("LongStorage", "1", 3, 0, (3,), (1,), requires_grad=False),
        "g": _tensor("DoubleStorage", "2", 2, 0, (2,), (1,), requires_grad=True),
    })
    raw = _torch_archive(pickled, {"0": x.tobytes(), "1": np.array([4, 5, 6], "<i8").tobytes(),
                                   "2": np.array([0.5, 1.5], "<f8").tobytes()}, root="weights")
    out = _load(raw)
    np.testing.assert_array_equal(out["x"].numpy(), x.reshape(3, 4))
    np.testing.assert_array_equal(out["col"].numpy(), x.reshape(3, 4)[:, 1])
    np.testing.assert_array_equal(out["t"].numpy(), x.reshape(3, 4).T)
    assert out["t"].stride() == (1, 4) and out["col"].stride() == (4,)
    assert out["i"].dtype == torch.int64 and out["i"].tolist() == [4, 5, 6]
    assert out["g"].dtype == torch.float64 and out["g"].requires_grad and out["g"].is_leaf
    # One storage: a write through one tensor shows in the others.
    out["x"].add_(100)
    assert out["col"].tolist() == [101.0, 105.0, 109.0]
    assert out["t"][1, 2].item() == 109.0


@pytest.mark.parametrize(
    "storage, dtype, values",
    [
        ("FloatStorage", "float32", np.array([1.5, -2.0], "<f4")),
        ("DoubleStorage", "float64", np.array([1.5, -2.0], "<f8")),
        ("HalfStorage", "float16", np.array([1.5, -2.0], "<f2")),
        ("LongStorage", "int64", np.array([3, -4], "<i8")),
        ("IntStorage", "int32", np.array([3, -4], "<i4")),
        ("ShortStorage", "int16", np.array([3, -4], "<i2")),
        ("CharStorage", "int8", np.array([3, -4], "i1")),
        ("ByteStorage", "uint8", np.array([3, 250], "u1")),
        ("BoolStorage", "bool", np.array([True, False])),
        ("ComplexFloatStorage", "complex64", np.array([1 + 2j, -3j], "<c8")),
        ("ComplexDoubleStorage", "complex128", np.array([1 + 2j, -3j], "<c16")),
    ],
)
def test_every_storage_type_loads_as_its_dtype(storage, dtype, values):
    raw = _torch_archive(_dict({"a": _tensor(storage, "0", 2, 0, (2,), (1,))}), {"0": values.tobytes()})
    out = _load(raw)["a"]
    assert out.dtype == getattr(torch, dtype)
    np.testing.assert_array_equal(out.numpy(), values)


def test_bfloat16_storage_loads_from_its_bit_patterns():
    # bfloat16 is the top half of a float32: 1.5 = 0x3FC0, -2.0 = 0xC000.
    raw = _torch_archive(_dict({"a": _tensor("BFloat16Storage", "0", 2, 0, (2,), (1,))}),
                         {"0": struct.pack("<HH", 0x3FC0, 0xC000)})
    out = _load(raw)["a"]
    assert out.dtype == torch.bfloat16 and out.float().tolist() == [1.5, -2.0]


def test_big_endian_archive_is_byte_swapped():
    raw = _torch_archive(_dict({"a": _tensor("IntStorage", "0", 2, 0, (2,), (1,))}),
                         {"0": np.array([1, -2], ">i4").tobytes()}, byteorder=b"big")
    assert _load(raw)["a"].tolist() == [1, -2]


def _fixture_expected():
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    return base


def test_checkpoint_written_by_torch_2_13_loads():
    out = torch.load(DATA / "torch_2_13_checkpoint.pt")
    base = _fixture_expected()
    np.testing.assert_array_equal(out["base"].numpy(), base)
    np.testing.assert_array_equal(out["col"].numpy(), base[:, 1])
    np.testing.assert_array_equal(out["t"].numpy(), base.T)
    out["base"].mul_(2)
    np.testing.assert_array_equal(out["col"].numpy(), 2 * base[:, 1])
    for name, t in out["dtypes"].items():
        assert t.dtype == getattr(torch, name)
        assert t.tolist() == ([False, True, True] if name == "bool" else [0, 1, 2])
    assert type(out["param"]) is torch.nn.Parameter and out["param"].tolist() == [1.0, 2.0]
    assert out["grad_leaf"].requires_grad and out["grad_leaf"].tolist() == [3.0]
    assert out["empty"].shape == (0, 2) and out["scalar"].item() == 7 and out["scalar"].dim() == 0
    meta = out["meta"]
    assert (meta["epoch"], meta["lr"], meta["name"]) == (3, 0.1, "run")
    assert meta["shape"] == torch.Size([2, 3]) and meta["dtype"] is torch.float16
    assert meta["device"] == torch.device("cpu")
    sd = out["state_dict"]
    assert isinstance(sd, collections.OrderedDict) and list(sd) == ["weight", "bias"]
    assert sd._metadata == {"": {"version": 1}}
    layer = torch.nn.Linear(3, 2)
    layer.load_state_dict(sd)
    x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    want = x @ (np.arange(6, dtype=np.float32).reshape(2, 3) / 4).T + np.array([0.5, -0.5], np.float32)
    np.testing.assert_allclose(layer(torch.tensor(x)).detach().numpy(), want, rtol=1e-6)


def test_weights_only_refuses_other_globals_without_running_them():
    evil = b"\x80\x02" + _global("os", "system") + b"(" + _unicode("echo hacked") + b"tR."
    raw = _torch_archive(evil, {})
    with pytest.raises(pickle.UnpicklingError, match="os.system"):
        _load(raw)


def test_storage_size_mismatch_and_missing_member_are_named():
    good = np.arange(4, dtype="<f4").tobytes()
    pickled = _dict({"a": _tensor("FloatStorage", "0", 5, 0, (4,), (1,))})
    with pytest.raises(RuntimeError, match="storage size mismatch.*5 .*20 bytes.*16 bytes"):
        _load(_torch_archive(pickled, {"0": good}))
    with pytest.raises(pickle.UnpicklingError, match="no member archive/data/0"):
        _load(_torch_archive(pickled, {}))
    past_end = _dict({"a": _tensor("FloatStorage", "0", 4, 2, (4,), (1,))})
    with pytest.raises(pickle.UnpicklingError, match="does not fit storage 0 of 4 elements"):
        _load(_torch_archive(past_end, {"0": good}))


def test_other_device_needs_map_location():
    pickled = _dict({"a": _tensor("FloatStorage", "0", 2, 0, (2,), (1,), location="cuda:0")})
    raw = _torch_archive(pickled, {"0": np.array([1.0, 2.0], "<f4").tobytes()})
    with pytest.raises(RuntimeError, match="map_location='cpu'"):
        _load(raw)
    assert _load(raw, map_location="cpu")["a"].tolist() == [1.0, 2.0]
    seen = []
    out = _load(raw, map_location=lambda t, loc: seen.append(loc) or t * 2)
    assert out["a"].tolist() == [2.0, 4.0] and seen == ["cpu"]


def test_legacy_torch_format_is_named():
    legacy = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(1001, protocol=2)
    with pytest.raises(RuntimeError, match="legacy serialization format"):
        _load(legacy)


def test_newer_format_version_is_refused():
    raw = _torch_archive(_dict({}), {}, version=b"99\n")
    with pytest.raises(RuntimeError, match="format version 99"):
        _load(raw)


# --------------------------------------------------------------------- writing


class _Recorder(pickle.Unpickler):
    """Replays a pickle, recording the torch calls and storages it names."""

    def __init__(self, data: bytes, storages: dict[str, bytes]):
        super().__init__(io.BytesIO(data))
        self.storages = storages
        self.globals: set[str] = set()

    def find_class(self, module, name):
        self.globals.add(f"{module}.{name}")
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return lambda st, off, size, stride, rg, hooks: ("tensor", st, off, size, stride, rg)
        if (module, name) == ("torch._utils", "_rebuild_parameter"):
            return lambda data, rg, hooks: ("parameter", data, rg)
        if module == "torch" and name in ("Size", "device"):
            return lambda *a: (name, *a)
        if module == "torch":
            return name  # a storage type or a dtype
        raise AssertionError(f"unexpected global {module}.{name}")

    def persistent_load(self, pid):
        kind, storage, key, location, numel = pid
        assert kind == "storage" and location == "cpu"
        return (storage, key, numel)


def _written(obj, path=None):
    if path is None:
        buf = io.BytesIO()
        torch.save(obj, buf)
        raw = buf.getvalue()
    else:
        torch.save(obj, path)
        raw = Path(path).read_bytes()
    zf = zipfile.ZipFile(io.BytesIO(raw))
    return raw, zf


def test_save_writes_torchs_layout(tmp_path):
    x = torch.arange(6.0).reshape(2, 3)
    obj = {"x": x, "col": x[:, 1], "i": torch.tensor([1, 2], dtype=torch.int16)}
    _, zf = _written(obj, tmp_path / "m.pt")
    names = zf.namelist()
    assert names[0] == "m/data.pkl" and {"m/version", "m/byteorder", "m/data/0", "m/data/1"} <= set(names)
    assert zf.read("m/version") == b"3\n" and zf.read("m/byteorder") == b"little"
    assert zf.read("m/data/0") == np.arange(6, dtype="<f4").tobytes()
    assert zf.read("m/data/1") == np.array([1, 2], "<i2").tobytes()
    rec = _Recorder(zf.read("m/data.pkl"), {})
    out = rec.load()
    assert out["x"] == ("tensor", ("FloatStorage", "0", 6), 0, (2, 3), (3, 1), False)
    assert out["col"] == ("tensor", ("FloatStorage", "0", 6), 1, (2,), (3,), False)
    assert out["i"] == ("tensor", ("ShortStorage", "1", 2), 0, (2,), (1,), False)
    assert rec.globals == {"torch._utils._rebuild_tensor_v2", "torch.FloatStorage", "torch.ShortStorage",
                           "collections.OrderedDict"}


def test_save_writes_only_the_reachable_part_and_relative_offsets():
    big = torch.arange(100.0)
    raw, zf = _written([big[10:14]])
    assert zf.read("archive/data/0") == np.arange(10, 14, dtype="<f4").tobytes()
    out = _Recorder(zf.read("archive/data.pkl"), {}).load()
    assert out == [("tensor", ("FloatStorage", "0", 4), 0, (4,), (1,), False)]


def test_save_names_parameters_dtypes_sizes_and_devices_as_torch_does():
    obj = {"p": torch.nn.Parameter(torch.ones(2)), "dt": torch.bfloat16, "sz": torch.Size([2, 5]),
           "dev": torch.device("cpu"), "g": torch.ones(1, requires_grad=True)}
    _, zf = _written(obj)
    rec = _Recorder(zf.read("archive/data.pkl"), {})
    out = rec.load()
    assert out["p"] == ("parameter", ("tensor", ("FloatStorage", "0", 2), 0, (2,), (1,), False), True)
    assert out["dt"] == "bfloat16" and out["sz"] == ("Size", (2, 5)) and out["dev"] == ("device", "cpu")
    assert out["g"][-1] is True
    assert {"torch._utils._rebuild_parameter", "torch.bfloat16", "torch.Size", "torch.device"} <= rec.globals


def test_round_trip_keeps_values_dtypes_sharing_and_types():
    x = torch.arange(12.0).reshape(3, 4)
    model = torch.nn.Linear(4, 2)
    obj = {
        "x": x, "t": x.t(), "row": x[1], "model": model.state_dict(),
        "p": torch.nn.Parameter(torch.tensor([1.0, -1.0])),
        "all": [torch.arange(3).to(d) for d in (torch.float16, torch.bfloat16, torch.int8, torch.uint8,
                                                torch.bool, torch.complex128, torch.int32)],
        "empty": torch.zeros(0, 3), "scalar": torch.tensor(2.5),
    }
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    back = torch.load(buf)
    np.testing.assert_array_equal(back["t"].numpy(), np.arange(12.0).reshape(3, 4).T)
    back["x"][1, 0] = -5.0
    assert back["row"][0].item() == -5.0 and back["t"][0, 1].item() == -5.0
    assert type(back["p"]) is torch.nn.Parameter and back["p"].requires_grad
    for a, b in zip(obj["all"], back["all"], strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    assert back["empty"].shape == (0, 3) and back["scalar"].item() == 2.5
    fresh = torch.nn.Linear(4, 2)
    fresh.load_state_dict(back["model"])
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(fresh.state_dict()[name].numpy(), value.numpy())


def test_own_format_stays_readable():
    buf = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, buf, _format="ferrograd")
    assert "archive/storages" in zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    buf.seek(0)
    assert torch.load(buf)["w"].tolist() == [0.0, 1.0, 2.0]
