"""``ferrograd.utils.safetensors`` against the format, built and read here
with ``struct``, ``json`` and NumPy: an 8-byte little-endian header length,
a JSON header padded with spaces to a multiple of 8, then the tensors'
little-endian bytes back to back. The tensor order (by dtype, ``I64``,
``F64``, ``C64``, ``F32``, ``I32``, ``BF16``, ``F16``, ``I16``, ``I8``,
``U8``, ``BOOL``, then by name) is the one the ``safetensors`` package
writes, recorded from safetensors 0.8."""

from __future__ import annotations

import json
import struct

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.utils import safetensors as st


def _file(header: dict, data: bytes) -> bytes:
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def _split(raw: bytes) -> tuple[dict, bytes]:
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    return json.loads(raw[8 : 8 + n]), raw[8 + n :]


def test_hand_built_file_loads():
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    b = np.array([-1, 7], dtype="<i8")
    raw = _file(
        {
            "__metadata__": {"format": "pt"},
            "b": {"dtype": "I64", "shape": [2], "data_offsets": [0, 16]},
            "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [16, 40]},
            "e": {"dtype": "F64", "shape": [0, 4], "data_offsets": [40, 40]},
        },
        b.tobytes() + a.tobytes(),
    )
    out = st.load(raw)
    assert list(out) == ["a", "b", "e"]
    np.testing.assert_array_equal(out["a"].numpy(), a)
    assert out["b"].dtype == torch.int64 and out["b"].tolist() == [-1, 7]
    assert out["e"].shape == (0, 4) and out["e"].dtype == torch.float64


def test_save_writes_the_format_in_safetensors_order():
    x = torch.arange(12.0).reshape(3, 4)
    tensors = {
        "w": x,
        "row": x[1].clone(),
        "flag": torch.tensor([True, False]),
        "idx": torch.tensor([5, -6]),
        "h": torch.tensor([1.5, -2.0], dtype=torch.float16),
        "z": torch.tensor([1 + 2j], dtype=torch.complex64),
        "k": torch.tensor([3], dtype=torch.int16),
        "d": torch.tensor([0.25], dtype=torch.float64),
    }
    header, data = _split(st.save(tensors, metadata={"epoch": "3"}))
    assert header.pop("__metadata__") == {"epoch": "3"}
    assert list(header) == ["idx", "d", "z", "row", "w", "h", "k", "flag"]
    want = {
        "idx": np.array([5, -6], "<i8"),
        "d": np.array([0.25], "<f8"),
        "z": np.array([1 + 2j], "<c8"),
        "row": np.arange(4, 8, dtype="<f4"),
        "w": np.arange(12, dtype="<f4").reshape(3, 4),
        "h": np.array([1.5, -2.0], "<f2"),
        "k": np.array([3], "<i2"),
        "flag": np.array([True, False]),
    }
    offset = 0
    for name, entry in header.items():
        raw = want[name].tobytes()
        assert entry["shape"] == list(want[name].shape)
        assert entry["data_offsets"] == [offset, offset + len(raw)]
        assert data[offset : offset + len(raw)] == raw
        offset += len(raw)
    assert offset == len(data)
    codes = {n: e["dtype"] for n, e in header.items()}
    assert codes == {
        "idx": "I64",
        "d": "F64",
        "z": "C64",
        "row": "F32",
        "w": "F32",
        "h": "F16",
        "k": "I16",
        "flag": "BOOL",
    }


def test_bfloat16_bytes_are_its_bit_patterns():
    header, data = _split(st.save({"b": torch.tensor([1.5, -2.0], dtype=torch.bfloat16)}))
    assert header["b"]["dtype"] == "BF16" and data == struct.pack("<HH", 0x3FC0, 0xC000)
    assert st.load(_file(header, data))["b"].float().tolist() == [1.5, -2.0]


def test_file_round_trip_and_safe_open(tmp_path):
    path = tmp_path / "model.safetensors"
    tensors = {
        "a": torch.randn(3, 2),
        "b": torch.arange(5, dtype=torch.uint8),
        "c": torch.ones(2, dtype=torch.int8),
    }
    st.save_file(tensors, path, metadata={"note": "x"})
    back = st.load_file(path)
    for name, t in tensors.items():
        assert back[name].dtype == t.dtype
        np.testing.assert_array_equal(back[name].numpy(), t.numpy())
    with st.safe_open(path, framework="pt") as f:
        assert f.keys() == ["a", "b", "c"] and f.metadata() == {"note": "x"}
        np.testing.assert_array_equal(f.get_tensor("b").numpy(), np.arange(5, dtype=np.uint8))
        with pytest.raises(st.SafetensorError, match="does not contain tensor nope"):
            f.get_tensor("nope")


def test_save_refuses_what_safetensors_refuses():
    x = torch.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError, match="non contiguous tensor: `t`"):
        st.save({"t": x.t()})
    with pytest.raises(RuntimeError, match="share memory"):
        st.save({"x": x, "part": x[1]})
    with pytest.raises(ValueError, match="expected ferrograd.Tensor"):
        st.save({"n": 1})
    with pytest.raises(TypeError, match="metadata"):
        st.save({"x": x}, metadata={"a": 1})
    with pytest.raises(ValueError, match="no dtype code"):
        st.save({"c": torch.ones(1, dtype=torch.complex128)})


@pytest.mark.parametrize(
    "raw, match",
    [
        (b"\x01\x00", "header too small"),
        (struct.pack("<Q", 1 << 40), "too large"),
        (struct.pack("<Q", 64) + b"{}", "runs past"),
        (_file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8)), "needs 12 bytes"),
        (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, bytes(12)), "buffer holds 12"),
        (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8)), "gap or overlap"),
        (_file({"a": {"dtype": "Q8", "shape": [1], "data_offsets": [0, 1]}}, bytes(1)), "bad entry"),
        (struct.pack("<Q", 8) + b"not json", "invalid JSON"),
    ],
)
def test_malformed_data_raises_a_named_error(raw, match):
    with pytest.raises(st.SafetensorError, match=match):
        st.load(raw)


def test_files_load_over_mapped_pages_without_a_copy(tmp_path):
    """A tensor whose bytes are aligned for its dtype is a view of the file
    mapped copy-on-write: its address has its file offset's residue modulo
    the page size, and writing to it leaves the file unchanged. A tensor at
    an unaligned offset (a valid file the safetensors writer never makes)
    is read instead, with the same values."""
    import mmap

    i8 = np.array([1, -2, 3], dtype="<i1")
    f32 = np.arange(4, dtype="<f4") / 4
    f64 = np.array([2.5, -1.0], dtype="<f8")
    header = {
        "a": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]},
        "b": {"dtype": "I8", "shape": [3], "data_offsets": [16, 19]},
        "c": {"dtype": "F32", "shape": [2, 2], "data_offsets": [19, 35]},
    }
    raw = _file(header, f64.tobytes() + i8.tobytes() + f32.tobytes())
    path = tmp_path / "m.safetensors"
    path.write_bytes(raw)
    data_start = 8 + struct.unpack("<Q", raw[:8])[0]
    with st.safe_open(path, framework="pt") as f:
        a, b, c = (f.get_tensor(k) for k in "abc")
    np.testing.assert_array_equal(a.numpy(), f64)
    np.testing.assert_array_equal(b.numpy(), i8)
    np.testing.assert_array_equal(c.numpy(), f32.reshape(2, 2))
    assert a.data_ptr() % mmap.PAGESIZE == data_start % mmap.PAGESIZE
    assert b.data_ptr() % mmap.PAGESIZE == (data_start + 16) % mmap.PAGESIZE
    a.mul_(2)
    b.add_(1)
    c.add_(1)
    assert a.tolist() == [5.0, -2.0] and b.tolist() == [2, -1, 4]
    assert path.read_bytes() == raw
    loaded = st.load_file(path)
    np.testing.assert_array_equal(loaded["a"].numpy(), f64)
