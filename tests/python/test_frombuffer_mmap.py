"""``ferrograd.frombuffer`` and ``ferrograd.load(..., mmap=True)``: tensors
over memory someone else owns (a Python buffer, a mapped file), without a
copy.

Oracles: the buffers' own bytes (``struct``/``array``), writes made on one
side seen on the other, the file's bytes before and after, and addresses:
a mapped file starts on a page boundary, so a tensor lying over the file
has the address of its bytes' file offset modulo the page size.
"""

from __future__ import annotations

import array
import gc
import mmap
import pickle
import struct
import zipfile

import ferrograd
import pytest
from test_torch_checkpoint import _dict, _tensor


def test_frombuffer_shares_memory_both_ways():
    a = array.array("d", [1.5, -2.0, 3.25, 4.0])
    t = ferrograd.frombuffer(a, dtype=ferrograd.float64)
    assert t.tolist() == a.tolist()
    a[1] = 10.0
    t[2] = -7.0
    assert t.tolist() == [1.5, 10.0, -7.0, 4.0] and a.tolist() == [1.5, 10.0, -7.0, 4.0]
    assert t.is_contiguous() and t.shape == (4,)


def test_frombuffer_count_offset_and_dtypes():
    raw = bytearray(struct.pack("<6i", *range(10, 16)))
    assert ferrograd.frombuffer(raw, dtype=ferrograd.int32, offset=8).tolist() == [12, 13, 14, 15]
    assert ferrograd.frombuffer(raw, dtype=ferrograd.int32, count=2, offset=4).tolist() == [11, 12]
    as_bytes = ferrograd.frombuffer(raw, dtype=ferrograd.uint8)
    assert as_bytes.tolist() == list(raw)
    flags = ferrograd.frombuffer(bytearray([0, 1, 1, 0]), dtype=ferrograd.bool)
    assert flags.tolist() == [False, True, True, False]
    raw2 = bytearray(struct.pack("<2f", 1.0, 2.0))
    t = ferrograd.frombuffer(raw2, dtype=ferrograd.float32, requires_grad=True)
    (t * t).sum().backward()
    assert t.grad.tolist() == [2.0, 4.0]


def test_frombuffer_keeps_the_buffer_exported_and_alive():
    raw = bytearray(16)
    t = ferrograd.frombuffer(raw, dtype=ferrograd.float32)
    with pytest.raises(BufferError):
        raw.extend(b"1234")  # resizing an exported bytearray is refused
    view = t[1:]
    del t
    gc.collect()
    raw[4:8] = struct.pack("<f", 2.5)
    assert view[0].item() == 2.5
    del view
    gc.collect()
    raw.extend(b"1234")  # released with the last tensor


def test_frombuffer_read_only_buffers_warn():
    with pytest.warns(UserWarning, match="buffer is not writable"):
        t = ferrograd.frombuffer(b"\x01\x02\x03\x04", dtype=ferrograd.uint8)
    assert t.tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        (b"", {}, r"both buffer length \(0\) and count \(-1\) must not be 0"),
        (bytearray(8), {"count": 0}, r"both buffer length \(8\) and count \(0\) must not be 0"),
        (bytearray(7), {}, r"buffer length \(7 bytes\) after offset \(0 bytes\) must be a multiple of"),
        (bytearray(8), {"offset": 8}, r"offset \(8 bytes\) must be non-negative and no greater than"),
        (bytearray(8), {"offset": -1}, r"offset \(-1 bytes\) must be non-negative"),
        (bytearray(8), {"count": 3}, r"requested buffer length \(3 \* 4 bytes\) after offset \(0 bytes\)"),
        (bytearray(9), {"offset": 1}, r"not a multiple of the element size"),
        ([1, 2], {}, r"object does not implement Python buffer protocol"),
        (bytearray([0, 2]), {"dtype": ferrograd.bool}, r"bool tensor's bytes must be 0 or 1"),
    ],
)
def test_frombuffer_errors(data, kwargs, message):
    kwargs = {"dtype": ferrograd.float32, **kwargs}
    with pytest.raises(ValueError, match=message):
        ferrograd.frombuffer(data, **kwargs)


def test_frombuffer_needs_a_dtype():
    with pytest.raises(TypeError):
        ferrograd.frombuffer(bytearray(8))  # type: ignore[call-arg]


# ------------------------------------------------------------------ mmap


def member_offsets(path):
    """The file offset of each zip member's bytes, from its local header."""
    out = {}
    with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
        for info in zf.infolist():
            fh.seek(info.header_offset)
            head = fh.read(30)
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            out[info.filename] = info.header_offset + 30 + name_len + extra_len
    return out


def lies_over_file(t, file_offset):
    return t.data_ptr() % mmap.PAGESIZE == file_offset % mmap.PAGESIZE


@pytest.mark.parametrize("fmt", ["torch", "ferrograd"])
def test_mmap_load_lies_over_the_file_and_never_writes_it(tmp_path, fmt):
    path = tmp_path / "ck.pt"
    state = {f"w{i}": ferrograd.randn(17 + i, 3, dtype=ferrograd.float64) for i in range(6)}
    state["ints"] = ferrograd.arange(11, dtype=ferrograd.int32)
    state["view"] = state["w0"][1:, 1]
    kwargs = {} if fmt == "torch" else {"_format": "ferrograd"}
    ferrograd.save(state, path, **kwargs)
    before = path.read_bytes()
    loaded = ferrograd.load(path, mmap=True)
    for k, v in state.items():
        assert ferrograd.equal(loaded[k], v), k
        assert loaded[k].stride() == v.stride()
    # Shared storages stay shared.
    shift = state["view"].data_ptr() - state["w0"].data_ptr()
    assert loaded["view"].data_ptr() - loaded["w0"].data_ptr() == shift
    offsets = member_offsets(path)
    data_members = sorted(off for name, off in offsets.items() if "/data/" in name)
    starts = sorted(loaded[k].data_ptr() for k in state if k != "view")
    assert len(data_members) == len(starts)
    for ptr, off in zip(starts, data_members, strict=True):
        assert ptr % mmap.PAGESIZE == off % mmap.PAGESIZE
    # Copy-on-write: writing to a loaded tensor leaves the file as it was.
    loaded["w1"].mul_(0)
    assert path.read_bytes() == before
    assert ferrograd.equal(ferrograd.load(path)["w1"], state["w1"])


def test_mmap_load_copies_members_not_aligned_for_their_dtype(tmp_path):
    # A torch-layout archive written with zipfile whose storage bytes lie at
    # an offset that is not a multiple of 4: they cannot be float32 in
    # place, so they are read.
    values = [1.0, 2.5, -3.0]
    pickled = _dict({"v": _tensor("FloatStorage", "0", 3, 0, (3,), (1,))})
    residues = set()
    for pad in range(4):
        # A member of ``pad`` bytes before the storage shifts its data.
        path = tmp_path / f"odd{pad}.pt"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
            zf.writestr("c/data.pkl", pickled)
            zf.writestr("c/byteorder", b"little")
            zf.writestr("c/.data/serialization_id", b"x" * pad)
            zf.writestr("c/data/0", struct.pack("<3f", *values))
            zf.writestr("c/version", b"3\n")
        start = member_offsets(path)["c/data/0"]
        t = ferrograd.load(path, mmap=True)["v"]
        assert t.tolist() == values
        # In place exactly when aligned (a copy is 16-byte aligned, so it
        # cannot have an unaligned file offset's address).
        assert lies_over_file(t, start) == (start % 4 == 0)
        residues.add(start % 4)
    assert residues == {0, 1, 2, 3}


def test_mmap_needs_a_path_and_a_zip_checkpoint(tmp_path):
    import io

    buf = io.BytesIO()
    ferrograd.save({"a": ferrograd.ones(2)}, buf)
    buf.seek(0)
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
        ferrograd.load(buf, mmap=True)
    plain = tmp_path / "plain.pkl"
    plain.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(RuntimeError, match="mmap can only be used with zip checkpoints"):
        ferrograd.load(plain, mmap=True, weights_only=False)
