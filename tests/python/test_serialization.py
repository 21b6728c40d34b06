"""ferrograd.save / ferrograd.load: round trips, storage sharing, the file
layout and the weights-only refusal of arbitrary globals.

Oracles: NumPy (bit patterns of the saved and loaded values), the documented
archive layout read back with ``zipfile``, and properties (aliasing after a
write, identity of repeated objects).
"""

from __future__ import annotations

import collections
import fractions
import io
import os
import pickle
import zipfile
from pathlib import Path

import ferrograd as torch
import numpy as np
import pytest

# dtype -> numpy dtype of the same bits (bfloat16 has none: compared via float32)
NUMPY_OF = {
    torch.bool: np.bool_,
    torch.uint8: np.uint8,
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.float16: np.float16,
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.complex64: np.complex64,
    torch.complex128: np.complex128,
}


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **load_kwargs)


def _random_bits(np_dtype, shape, rng):
    """Arbitrary bit patterns of a dtype (NaN payloads, infinities, -0.0 and
    denormals included for floating types)."""
    itemsize = np.dtype(np_dtype).itemsize
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * itemsize, dtype=np.uint8)
    if np_dtype is np.bool_:
        return (raw % 2).astype(np.bool_).reshape(shape)
    return raw.view(np_dtype).reshape(shape)


def _bits(t):
    """The bytes of a tensor's values in logical order."""
    if t.dtype == torch.bfloat16:
        return t.float().numpy().tobytes()
    return np.ascontiguousarray(t.numpy()).tobytes()


@pytest.mark.parametrize("dtype", list(NUMPY_OF), ids=str)
def test_every_dtype_round_trips_bitwise(dtype):
    rng = np.random.default_rng(0)
    ref = _random_bits(NUMPY_OF[dtype], (3, 5), rng)
    t = torch.from_numpy(ref.copy())
    out = _roundtrip(t)
    assert out.dtype == dtype
    assert tuple(out.shape) == (3, 5)
    assert np.ascontiguousarray(out.numpy()).tobytes() == ref.tobytes()


def test_bfloat16_round_trips_bitwise():
    vals = torch.tensor([0.0, -0.0, 1.5, -3.25e10, float("inf"), float("nan"), 1e-40])
    t = vals.to(torch.bfloat16)
    out = _roundtrip(t)
    assert out.dtype == torch.bfloat16
    assert _bits(out) == _bits(t)


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.t(),
        lambda x: x[:, ::2],
        lambda x: x[1:, 1:3],
        lambda x: x[0],
        lambda x: x[:, 1:2].expand(3, 5),
        lambda x: x.permute(1, 0)[::2],
        lambda x: x.reshape(2, 3, 2).transpose(0, 2),
    ],
    ids=["t", "step", "slice", "row", "expand", "permute-step", "3d-transpose"],
)
def test_non_contiguous_tensors_keep_values_and_strides(make):
    x = torch.arange(12.0).reshape(3, 4)
    v = make(x)
    out = _roundtrip(v)
    np.testing.assert_array_equal(out.numpy(), v.numpy())
    assert out.stride() == v.stride()
    assert tuple(out.shape) == tuple(v.shape)


def test_views_saved_together_share_storage_after_load():
    x = torch.arange(12.0).reshape(3, 4)
    base, col, tail = _roundtrip([x, x.t(), x[1:]])
    assert col.data_ptr() - col.storage_offset() * 4 == base.data_ptr() - base.storage_offset() * 4
    base[1, 2] = -5.0
    assert col[2, 1].item() == -5.0
    assert tail[0, 2].item() == -5.0
    tail[1, 3] = 99.0
    assert base[2, 3].item() == 99.0


def test_views_of_one_storage_share_even_without_the_base():
    x = torch.arange(10.0)
    a, b = _roundtrip((x[2:6], x[4:9]))
    a[3] = 100.0  # x[5]
    assert b[1].item() == 100.0


def test_separate_tensors_do_not_share_after_load():
    a, b = _roundtrip([torch.zeros(3), torch.zeros(3)])
    a[0] = 1.0
    assert b[0].item() == 0.0


def test_same_tensor_twice_loads_as_one_object():
    w = torch.randn(2, 2)
    out = _roundtrip({"enc": w, "dec": w})
    assert out["enc"] is out["dec"]


def test_only_the_reachable_part_of_a_storage_is_written():
    big = torch.zeros(100_000)
    buf = io.BytesIO()
    torch.save(big[10:14], buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        assert zf.getinfo("archive/data/0").file_size == 4 * 4


def test_requires_grad_and_empty_tensors_round_trip():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    e = torch.zeros(0, 3)
    out_w, out_e = _roundtrip([w * 2, e])
    assert out_w.requires_grad and out_w.is_leaf
    assert out_w.tolist() == [2.0, 4.0]
    assert tuple(out_e.shape) == (0, 3) and out_e.dtype == torch.float32


def test_nested_containers_round_trip_with_their_types():
    obj = {
        "list": [1, 2.5, "s", None, True, 3 + 4j, b"raw"],
        "tuple": (1, (2, 3)),
        "od": collections.OrderedDict([("b", 1), ("a", torch.ones(2))]),
        "set": {1, 2},
        "nested": {"deep": [{"t": torch.arange(3)}]},
        "dtype": torch.float16,
        "size": torch.Size([2, 3]),
        "device": torch.device("cpu"),
    }
    out = _roundtrip(obj)
    assert out["list"] == obj["list"]
    assert out["tuple"] == (1, (2, 3)) and isinstance(out["tuple"][1], tuple)
    assert isinstance(out["od"], collections.OrderedDict) and list(out["od"]) == ["b", "a"]
    assert out["od"]["a"].tolist() == [1.0, 1.0]
    assert out["set"] == {1, 2}
    assert out["nested"]["deep"][0]["t"].tolist() == [0, 1, 2]
    assert out["dtype"] == torch.float16
    assert out["size"] == torch.Size([2, 3])
    assert out["device"] == torch.device("cpu")


def test_parameters_keep_their_class_and_requires_grad():
    p = torch.nn.Parameter(torch.randn(3))
    out = _roundtrip({"p": p})["p"]
    assert isinstance(out, torch.nn.Parameter)
    assert out.requires_grad
    np.testing.assert_array_equal(out.detach().numpy(), p.detach().numpy())


def test_module_state_dict_round_trips():
    m = torch.nn.Module()
    m.w = torch.nn.Parameter(torch.randn(2, 3))
    m.register_buffer("running", torch.arange(3.0))
    sd = m.state_dict()
    out = _roundtrip(sd)
    assert isinstance(out, collections.OrderedDict)
    assert list(out) == list(sd)
    for k in sd:
        np.testing.assert_array_equal(out[k].numpy(), sd[k].detach().numpy())


def test_optimizer_state_dict_round_trip_continues_identically():
    torch.manual_seed(0)
    p1 = torch.nn.Parameter(torch.randn(4))
    p2 = torch.nn.Parameter(p1.detach().clone())
    opt1 = torch.optim.Adam([p1], lr=0.1)
    opt2 = torch.optim.Adam([p2], lr=0.1)
    for opt, p in ((opt1, p1), (opt2, p2)):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    opt2.load_state_dict(_roundtrip(opt2.state_dict()))
    for opt, p in ((opt1, p1), (opt2, p2)):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
    np.testing.assert_array_equal(p1.detach().numpy(), p2.detach().numpy())


def test_paths_and_file_objects(tmp_path: Path):
    t = torch.arange(6).reshape(2, 3)
    path = tmp_path / "ckpt.pt"
    torch.save(t, path)
    assert torch.load(path).tolist() == t.tolist()
    torch.save({"t": t}, str(path))
    assert torch.load(str(path))["t"].tolist() == t.tolist()
    with open(path, "wb") as fh:
        torch.save([t], fh)
    with open(path, "rb") as fh:
        assert torch.load(fh)[0].tolist() == t.tolist()


def test_several_objects_in_one_stream_and_prefix_bytes():
    buf = io.BytesIO()
    buf.write(b"header")
    torch.save(torch.ones(2), buf)
    buf.seek(len(b"header"))
    assert torch.load(buf).tolist() == [1.0, 1.0]


def test_archive_layout_is_as_documented():
    x = torch.arange(6.0)
    buf = io.BytesIO()
    torch.save({"a": x, "b": x[2:], "c": torch.ones(2, dtype=torch.int16)}, buf)
    raw = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        names = set(zf.namelist())
        assert {"archive/version", "archive/byteorder", "archive/storages", "archive/data.pkl"} <= names
        assert zf.read("archive/version") == b"1\n"
        assert zf.read("archive/byteorder") == b"little"
        lines = [line.split() for line in zf.read("archive/storages").decode().splitlines()]
        assert lines == [["0", "float32", "6", "2"], ["1", "int16", "2", "1"]]
        assert zf.read("archive/data/0") == np.arange(6, dtype="<f4").tobytes()
        assert zf.read("archive/data/1") == np.ones(2, dtype="<i2").tobytes()
        for key in ("0", "1"):
            info = zf.getinfo(f"archive/data/{key}")
            start = info.header_offset + 30 + len(info.filename) + len(info.extra)
            assert start % 64 == 0
            assert raw[start : start + info.file_size] == zf.read(info.filename)


def test_plain_pickle_streams_load():
    buf = io.BytesIO()
    pickle.dump({"t": torch.arange(4.0).reshape(2, 2).t()}, buf)
    buf.seek(0)
    assert torch.load(buf)["t"].tolist() == [[0.0, 2.0], [1.0, 3.0]]


# ------------------------------------------------------------- map_location


@pytest.mark.parametrize("loc", ["cpu", torch.device("cpu"), {"cuda:0": "cpu"}])
def test_map_location_cpu_forms(loc):
    assert _roundtrip(torch.ones(2), map_location=loc).tolist() == [1.0, 1.0]


def test_map_location_callable_sees_each_storage():
    seen = []

    def hook(storage, location):
        seen.append(location)
        return storage

    out = _roundtrip([torch.ones(2), torch.zeros(3)], map_location=hook)
    assert [t.tolist() for t in out] == [[1.0, 1.0], [0.0, 0.0, 0.0]]
    assert seen == ["cpu", "cpu"]


def test_map_location_other_device_raises():
    buf = io.BytesIO()
    torch.save(torch.ones(1), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError):
        torch.load(buf, map_location={"cpu": "meta"})


# -------------------------------------------------------------- weights_only


class _RunsCommand:
    """Pickles as a call to os.system, as a malicious checkpoint would."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_weights_only_refuses_os_system_without_running_it(tmp_path: Path):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    torch.save({"w": torch.ones(2), "payload": _RunsCommand(marker)}, path)
    with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed") as info:
        torch.load(path)
    assert "Unsupported global: GLOBAL" in str(info.value)
    assert "system" in str(info.value)
    assert not marker.exists()


def test_weights_only_refuses_handcrafted_global_opcode(tmp_path: Path):
    marker = tmp_path / "ran"
    # A protocol-0 pickle written by hand: GLOBAL os.system, call with one string.
    payload = f"cos\nsystem\n(Vtouch {marker}\ntR.".encode()
    buf = io.BytesIO()
    torch.save({}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src:
        members = {n: src.read(n) for n in src.namelist()}
    members["archive/data.pkl"] = payload
    crafted = io.BytesIO()
    with zipfile.ZipFile(crafted, "w") as dst:
        for name, data in members.items():
            dst.writestr(name, data)
    crafted.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL os.system"):
        torch.load(crafted)
    assert not marker.exists()
    # the same raw pickle outside an archive is refused too
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torch.load(io.BytesIO(payload))
    assert not marker.exists()


def test_weights_only_refuses_a_forged_persistent_id():
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, 2)
    pickler.persistent_id = lambda obj: ("exec", "print(1)") if obj == "x" else None
    pickler.dump(["x"])
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="unsupported persistent id"):
        torch.load(buf)


def test_weights_only_false_loads_arbitrary_objects_and_safe_globals_allow_them():
    obj = {"frac": fractions.Fraction(1, 3)}
    with pytest.raises(pickle.UnpicklingError, match="fractions.Fraction"):
        _roundtrip(obj)
    assert _roundtrip(obj, weights_only=False) == obj
    with torch.serialization.safe_globals([fractions.Fraction]):
        assert _roundtrip(obj) == obj
    assert fractions.Fraction not in torch.serialization.get_safe_globals()


def test_explicit_pickle_module_needs_weights_only_false():
    buf = io.BytesIO()
    torch.save(1, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="pickle_module"):
        torch.load(buf, pickle_module=pickle, weights_only=True)
    buf.seek(0)
    assert torch.load(buf, pickle_module=pickle, weights_only=False) == 1
