"""ferrograd.save / ferrograd.load: round trips, storage sharing, the file
layout, the weights-only refusal of arbitrary globals, the bounds on what a
hostile file can make a weights-only load build, and the errors damaged or
modified checkpoints raise (tests/python/test_serialization_fuzz.py runs the
randomized version).

Oracles: NumPy (bit patterns of the saved and loaded values), the documented
archive layout read back with ``zipfile``, ``pickle.loads`` for plain
streams, tracemalloc peaks for the bounds, and properties (aliasing after a
write, identity of repeated objects).
"""

from __future__ import annotations

import collections
import fractions
import io
import os
import pickle
import struct
import tracemalloc
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
    # ferrograd's own format (save(..., _format="ferrograd")), still read by load.
    x = torch.arange(6.0)
    buf = io.BytesIO()
    torch.save({"a": x, "b": x[2:], "c": torch.ones(2, dtype=torch.int16)}, buf, _format="ferrograd")
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


# ------------------------------------------------- bounded weights-only loads


class _Reduces:
    """Pickles as ``func(*args)``, as a hostile file would."""

    def __init__(self, func, *args) -> None:
        self.func = func
        self.args = args

    def __reduce__(self):
        return (self.func, self.args)


def _peak_bytes_of(fn):
    """(result or exception, tracemalloc peak) of ``fn()``."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as exc:  # returned for the caller to check
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("in_archive", [False, True], ids=["plain-pickle", "archive"])
def test_list_of_a_range_is_refused_without_building_it(in_archive):
    hostile = _Reduces(list, range(10**7))
    buf = io.BytesIO()
    if in_archive:
        torch.save({"w": torch.ones(2), "x": hostile}, buf)
    else:
        pickle.dump(hostile, buf, protocol=2)
    assert len(buf.getvalue()) < (1000 if in_archive else 70)
    out, peak = _peak_bytes_of(lambda: torch.load(io.BytesIO(buf.getvalue())))
    assert isinstance(out, pickle.UnpicklingError)
    assert "list() of a range is not allowed" in str(out)
    assert peak < 1 << 20  # building it takes 382 MB


@pytest.mark.parametrize("func", [bytes, bytearray], ids=["bytes", "bytearray"])
def test_bytes_of_an_int_is_refused(func):
    data = pickle.dumps(_Reduces(func, 2**31 - 1), protocol=2)
    out, peak = _peak_bytes_of(lambda: torch.load(io.BytesIO(data)))
    assert isinstance(out, pickle.UnpicklingError)
    assert f"{func.__name__}(n) is not allowed" in str(out)
    assert peak < 1 << 20


def test_huge_memo_index_is_refused_and_the_memo_is_a_dict():
    # LONG_BINPUT 0x7fffffff: CPython's C unpickler grows its memo array to
    # twice that index (about 32 GB of zeroed pointers).
    hostile = b"\x80\x02]r\xff\xff\xff\x7fh\x00."
    out, peak = _peak_bytes_of(lambda: torch.load(io.BytesIO(hostile)))
    assert isinstance(out, pickle.UnpicklingError)
    assert "memo index 2147483647 is out of range" in str(out)
    assert peak < 1 << 20
    # A sparse index inside the stream is stored as one dict entry.
    sparse = torch.load(io.BytesIO(b"\x80\x02Kxq\x09N0h\x09h\x09\x86."))
    assert sparse == (120, 120)


def test_repeated_copies_of_one_list_exceed_the_budget():
    # A 3000-element list copied by tuple() 400 times: each copy is paid by
    # a few bytes of the file, so the budget (not the file size) stops it.
    stream = b"\x80\x02](" + b"N" * 3000 + b"eq\x00" + b"c__builtin__\ntuple\nq\x01"
    stream += b"h\x01h\x00\x85R0" * 4000 + b"N."
    out, peak = _peak_bytes_of(lambda: torch.load(io.BytesIO(stream)))
    assert isinstance(out, pickle.UnpicklingError)
    assert "bytes of objects, the limit for a weights-only load" in str(out)
    assert peak < 4 << 20


def test_the_densest_stream_pickle_writes_still_loads():
    # A list of empty sets in protocol 4 builds about 140 bytes of objects
    # per byte, under the budget's 160.
    obj = [set() for _ in range(30_000)]
    assert torch.load(io.BytesIO(pickle.dumps(obj, protocol=4))) == obj


def test_deep_and_shared_tuple_keys_are_refused_before_hashing():
    # Hashing a tuple nested 100000 deep overflows the C stack; one that
    # shares its halves 80 times over takes 2**80 steps.
    deep = b"\x80\x02})" + b"\x85" * 100_000 + b"Ns."
    shared = b"\x80\x02})" + b"2\x86" * 80 + b"Ns."
    for stream in (deep, shared):
        with pytest.raises(pickle.UnpicklingError, match="too large to hash safely"):
            torch.load(io.BytesIO(stream))
    # Tuples nested a little, used as keys, are fine.
    key = ((1, "a"), (2.5, (None,)))
    assert torch.load(io.BytesIO(pickle.dumps({key: 1}, protocol=2))) == {key: 1}


def test_nested_slices_and_other_codecs_are_refused():
    nested = _Reduces(slice, slice(None))
    with pytest.raises(pickle.UnpicklingError, match="slice"):
        torch.load(io.BytesIO(pickle.dumps(nested, protocol=2)))
    import codecs

    wide = _Reduces(codecs.encode, "x" * 10, "utf-32")
    with pytest.raises(pickle.UnpicklingError, match="only as _codecs.encode"):
        torch.load(io.BytesIO(pickle.dumps(wide, protocol=2)))


@pytest.mark.parametrize("protocol", range(6))
def test_plain_pickles_of_every_protocol_load_as_pickle_loads_them(protocol):
    obj = {
        "t": torch.arange(6.0).reshape(2, 3).t(),
        "p": torch.nn.Parameter(torch.ones(2)),
        "scalars": [None, True, False, 0, -1, 2**70, 1.5, float("inf"), -0.0, 3 + 4j, "é😀\n\\", b"\x00\xff"],
        "containers": ((), (1,), [1, [2]], {1, 2}, frozenset({"a"}), bytearray(b"xy")),
        "od": collections.OrderedDict([("b", 1), ("a", 2)]),
        "counter": collections.Counter("abca"),
        "misc": (range(1, 9, 2), slice(1, None, -1), torch.float16, torch.device("cpu"), torch.Size([2, 3])),
        "keys": {(1, "a"): 1, frozenset({2}): 2, 2.5: 3},
    }
    obj["alias"] = obj["scalars"]  # shared objects stay shared
    data = pickle.dumps(obj, protocol=protocol)
    out = torch.load(io.BytesIO(data))
    ref = pickle.loads(data)
    assert out["alias"] is out["scalars"]
    assert isinstance(out["p"], torch.nn.Parameter) and out["p"].requires_grad
    assert out["t"].tolist() == ref["t"].tolist() and out["t"].stride() == ref["t"].stride()
    for k in ("scalars", "containers", "od", "counter", "misc", "keys"):
        assert out[k] == ref[k] and type(out[k]) is type(ref[k])


def test_plain_pickle_streams_leave_the_file_after_their_stop_opcode():
    buf = io.BytesIO()
    pickle.dump({"a": 1}, buf, protocol=2)
    pickle.dump([torch.ones(2)], buf, protocol=4)
    buf.write(b"tail")
    buf.seek(0)
    assert torch.load(buf) == {"a": 1}
    assert torch.load(buf)[0].tolist() == [1.0, 1.0]
    assert buf.read() == b"tail"


def test_bounded_unpickler_takes_an_allowlist_rules_and_a_persistent_load():
    from ferrograd._unpickler import BoundedUnpickler

    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, 4)
    pickler.persistent_id = lambda obj: f"id-{obj}" if isinstance(obj, str) and obj.startswith("$") else None
    pickler.dump({"w": "$w", "n": fractions.Fraction(1, 3), "c": complex(1, 2)})
    data = buf.getvalue()
    allowed = {"fractions.Fraction": fractions.Fraction, "builtins.complex": complex}
    out = BoundedUnpickler(data, allowed=allowed, persistent_load=str.upper).load()
    assert out == {"w": "ID-$W", "n": fractions.Fraction(1, 3), "c": 1 + 2j}

    # A rule refuses calls; a missing global names itself.
    def no_complex(args):
        raise pickle.UnpicklingError("no complex numbers here")

    with pytest.raises(pickle.UnpicklingError, match="no complex numbers"):
        BoundedUnpickler(data, allowed=allowed, rules={complex: no_complex}, persistent_load=str).load()
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL fractions.Fraction"):
        BoundedUnpickler(data, allowed={}, persistent_load=str).load()
    with pytest.raises(pickle.UnpicklingError, match="bytes of objects"):
        BoundedUnpickler(data, allowed=allowed, persistent_load=str, budget=100).load()


# ------------------------------------------------- damaged or modified files


def _archive(obj=None) -> bytes:
    """An archive in ferrograd's own format (the one these checks read;
    torch's format has its own tests in test_torch_checkpoint.py)."""
    buf = io.BytesIO()
    obj = {"w": torch.arange(6.0), "v": torch.ones(3, dtype=torch.int16)} if obj is None else obj
    torch.save(obj, buf, _format="ferrograd")
    return buf.getvalue()


def _rewrite(raw: bytes, changes: dict, compress: tuple = ()) -> bytes:
    """The archive with members replaced (``name: bytes``) or removed
    (``name: None``); members named in ``compress`` are deflated."""
    with zipfile.ZipFile(io.BytesIO(raw)) as src:
        members = {n: src.read(n) for n in src.namelist()}
    for name, data in changes.items():
        if data is None:
            members.pop(name)
        else:
            members[name] = data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name, data in members.items():
            method = zipfile.ZIP_DEFLATED if name in compress else zipfile.ZIP_STORED
            dst.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return out.getvalue()


def _load_bytes(raw: bytes):
    return torch.load(io.BytesIO(raw))


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, -1])
def test_truncated_checkpoint_says_so(keep):
    raw = _archive()
    cut = raw[: int(len(raw) * keep)] if keep > 0 else raw[:-1]
    with pytest.raises(RuntimeError, match="truncated or damaged archive"):
        _load_bytes(cut)
    with pytest.raises(pickle.UnpicklingError, match="empty"):
        _load_bytes(b"")


@pytest.mark.parametrize("record", [b"one\n", b"", b"-1\n", b"1\n" * 40])
def test_tampered_version_record_is_named(record):
    with pytest.raises(RuntimeError, match=r"bad (version )?record.*archive/version"):
        _load_bytes(_rewrite(_archive(), {"archive/version": record}))


def test_tampered_storage_and_byteorder_records_are_named():
    raw = _archive()
    for storages in (b"0 float32 six 1\n1 int16 3 1\n", b"0 float32 6 1\n0 int16 3 1\n", b"0 float32 6 1"):
        with pytest.raises(RuntimeError, match="bad storage record"):
            _load_bytes(_rewrite(raw, {"archive/storages": storages}))
    with pytest.raises(RuntimeError, match="bad byteorder record"):
        _load_bytes(_rewrite(raw, {"archive/byteorder": b"middle"}))


def test_missing_members_are_named():
    raw = _archive()
    with pytest.raises(RuntimeError, match="missing member archive/data/0"):
        _load_bytes(_rewrite(raw, {"archive/data/0": None}))
    with pytest.raises(RuntimeError, match="no member archive/version"):
        _load_bytes(_rewrite(raw, {"archive/version": None}))
    with pytest.raises(RuntimeError, match="not a ferrograd checkpoint"):
        _load_bytes(_rewrite(raw, {"archive/storages": None}))


def test_storage_size_mismatch_is_refused_before_reading():
    raw = _rewrite(_archive(), {"archive/storages": b"0 float32 1000000000000 1\n1 int16 3 1\n"})
    out, peak = _peak_bytes_of(lambda: _load_bytes(raw))
    assert isinstance(out, RuntimeError)
    assert "storage size mismatch" in str(out) and "4000000000000 bytes" in str(out)
    assert peak < 1 << 20


def test_compressed_bomb_member_is_refused_before_reading():
    n = 25_000_000  # 100 MB of zeros deflate to about 100 kB
    raw = _rewrite(
        _archive(),
        {"archive/storages": f"0 float32 {n} 1\n1 int16 3 1\n".encode(), "archive/data/0": bytes(4 * n)},
        compress=("archive/data/0",),
    )
    assert len(raw) < 200_000
    out, peak = _peak_bytes_of(lambda: _load_bytes(raw))
    assert isinstance(out, RuntimeError)
    assert "member 'archive/data/0' is compressed" in str(out)
    assert peak < 1 << 20


def _with_overlapping_entry(raw: bytes, name: str, alias: str) -> bytes:
    """Adds a central directory entry ``alias`` that points at the bytes of
    member ``name`` (how a zip of overlapping entries multiplies its size)."""
    eocd = raw.rindex(b"PK\x05\x06")
    count, size, offset = struct.unpack("<HII", raw[eocd + 10 : eocd + 20])
    directory = raw[offset : offset + size]
    at = 0
    while True:
        n, m, k = struct.unpack("<HHH", directory[at + 28 : at + 34])
        if directory[at + 46 : at + 46 + n] == name.encode():
            break
        at += 46 + n + m + k
    record = bytearray(directory[at : at + 46 + n + m + k])
    record[46 : 46 + n] = alias.encode()  # same length, so the lengths stay
    directory += bytes(record)
    tail = bytearray(raw[eocd:])
    struct.pack_into("<HHII", tail, 8, count + 1, count + 1, len(directory), offset)
    return raw[:offset] + directory + bytes(tail)


def test_overlapping_members_are_refused():
    # Refused from the directory, before any member is read.
    raw = _with_overlapping_entry(_archive(), "archive/data/0", "archive/data/9")
    with pytest.raises(RuntimeError, match="'archive/data/0' and 'archive/data/9' overlap"):
        _load_bytes(raw)


def test_checksum_failure_is_named():
    raw = bytearray(_archive())
    at = raw.index(np.arange(6, dtype="<f4").tobytes()) + 5
    raw[at] ^= 0x40
    with pytest.raises(RuntimeError, match="checksum failure in member archive/data/0"):
        _load_bytes(bytes(raw))


class _Serial:
    def __init__(self, serial: int) -> None:
        self.serial = serial


def test_a_record_named_by_more_tensors_than_it_declares_is_refused():
    # Two tensors naming a record of one user: without the check each would
    # copy the storage, so a short pickle could copy one large record many
    # times.
    raw = _archive({"w": torch.arange(4.0)})
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, 2)
    pickler.persistent_id = lambda obj: (
        ("tensor", "0", 0, (4,), (1,), False, None, obj.serial) if isinstance(obj, _Serial) else None
    )
    pickler.dump([_Serial(0), _Serial(1)])
    with pytest.raises(pickle.UnpicklingError, match="declared with 1 tensor"):
        _load_bytes(_rewrite(raw, {"archive/data.pkl": buf.getvalue()}))


def test_damaged_files_never_return_partial_results():
    # Each damage raises; none returns an object missing the damaged part.
    raw = _archive()
    for damaged in (
        raw[: len(raw) // 2],
        _rewrite(raw, {"archive/data/1": b"\x00\x00"}),
        _rewrite(raw, {"archive/data.pkl": _rewrite_pickle_tail(raw)}),
    ):
        with pytest.raises((RuntimeError, pickle.UnpicklingError)):
            _load_bytes(damaged)


def _rewrite_pickle_tail(raw: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        return zf.read("archive/data.pkl")[:-3]
