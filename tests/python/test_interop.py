"""Tensor memory for other libraries: the buffer protocol and DLPack.

Oracles: NumPy's view of the same memory (values, and writes seen on both
sides), the struct module's format codes, and reference counts of the
producer's objects (the memory is released when the last view goes)."""

from __future__ import annotations

import gc
import sys

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.utils.dlpack import from_dlpack, to_dlpack

DTYPES = [
    (torch.bool, np.bool_, "?"),
    (torch.uint8, np.uint8, "B"),
    (torch.int8, np.int8, "b"),
    (torch.int16, np.int16, "h"),
    (torch.int32, np.int32, "i"),
    (torch.int64, np.int64, "q"),
    (torch.float16, np.float16, "e"),
    (torch.float32, np.float32, "f"),
    (torch.float64, np.float64, "d"),
    (torch.complex64, np.complex64, "Zf"),
    (torch.complex128, np.complex128, "Zd"),
]


def sample(np_dtype, shape=(3, 4)):
    g = np.random.default_rng(7)
    a = g.standard_normal(shape) * 4
    if np.issubdtype(np_dtype, np.complexfloating):
        a = a + 1j * g.standard_normal(shape)
    return a.astype(np_dtype)


# ---------------------------------------------------------------------------
# Buffer protocol
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dt,npdt,code", DTYPES, ids=[str(d[0]) for d in DTYPES])
def test_memoryview_describes_the_tensor(dt, npdt, code):
    a = sample(npdt)
    t = torch.tensor(a, dtype=dt)
    m = memoryview(t)
    assert m.format == code and m.itemsize == a.itemsize
    assert m.shape == (3, 4) and m.strides == (4 * a.itemsize, a.itemsize)
    assert not m.readonly and m.contiguous
    np.testing.assert_array_equal(np.frombuffer(m, dtype=npdt).reshape(3, 4), a)


def test_buffer_writes_reach_the_tensor_and_back():
    t = torch.zeros(2, 3, dtype=torch.float64)
    view = np.frombuffer(memoryview(t), dtype=np.float64).reshape(2, 3)
    view[1, 2] = 5.0
    assert t[1, 2].item() == 5.0
    t[0, 0] = -1.5
    assert view[0, 0] == -1.5
    # A contiguous slice with an offset exports from its own first element.
    row = t[1]
    np.testing.assert_array_equal(np.frombuffer(memoryview(row), dtype=np.float64), [0.0, 0.0, 5.0])


def test_buffer_keeps_the_memory_alive_after_the_tensor_goes():
    t = torch.arange(6, dtype=torch.int64)
    m = memoryview(t)
    del t
    gc.collect()
    assert m.tolist() == [0, 1, 2, 3, 4, 5]
    m.release()


def test_buffer_refusals():
    with pytest.raises(BufferError, match=r"contiguous tensor.*shape \[2, 3\] and strides \[1, 2\]"):
        memoryview(torch.zeros(3, 2).t())
    with pytest.raises(BufferError, match="bfloat16"):
        memoryview(torch.zeros(3, dtype=torch.bfloat16))
    with pytest.raises(BufferError, match="require gradient"):
        memoryview(torch.zeros(3, requires_grad=True))
    # NumPy then falls back to the strided array interface (or refuses as
    # torch does for tensors that require grad).
    np.testing.assert_array_equal(np.asarray(torch.arange(6.0).reshape(3, 2).t()),
                                  np.arange(6.0).reshape(3, 2).T)
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(torch.zeros(3, requires_grad=True))


def test_numpy_shares_memory_through_the_buffer():
    t = torch.arange(4, dtype=torch.float32)
    a = t.numpy()
    a[0] = 9.0
    assert t[0].item() == 9.0
    assert np.shares_memory(a, np.asarray(t))


# ---------------------------------------------------------------------------
# DLPack
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dt,npdt,code", DTYPES, ids=[str(d[0]) for d in DTYPES])
def test_numpy_reads_tensors_through_dlpack(dt, npdt, code):
    a = sample(npdt)
    t = torch.tensor(a, dtype=dt)
    b = np.from_dlpack(t)
    assert b.dtype == npdt
    np.testing.assert_array_equal(b, a)
    assert b.ctypes.data == t.data_ptr()


@pytest.mark.parametrize("dt,npdt,code", DTYPES, ids=[str(d[0]) for d in DTYPES])
def test_tensors_view_numpy_arrays_through_dlpack(dt, npdt, code):
    a = sample(npdt)
    t = torch.from_dlpack(a)
    assert t.dtype == dt and tuple(t.shape) == a.shape
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.data_ptr() == a.ctypes.data


def test_dlpack_shares_memory_both_ways():
    a = np.zeros((2, 3))
    t = torch.from_dlpack(a)
    t[1, 1] = 4.0
    assert a[1, 1] == 4.0
    a[0, 2] = -2.0
    assert t[0, 2].item() == -2.0
    u = torch.arange(5, dtype=torch.int32)
    b = np.from_dlpack(u)
    b[3] = 30
    assert u[3].item() == 30


def test_dlpack_strided_views_and_offsets():
    a = np.arange(24.0).reshape(4, 6)
    t = torch.from_dlpack(a[1:, ::2])
    np.testing.assert_array_equal(t.numpy(), a[1:, ::2])
    u = torch.arange(24.0).reshape(4, 6)[1:, 1::2].t()
    b = np.from_dlpack(u)
    np.testing.assert_array_equal(b, np.arange(24.0).reshape(4, 6)[1:, 1::2].T)
    assert b.ctypes.data == u.data_ptr()


def test_dlpack_releases_the_producer_when_the_view_goes():
    a = np.ones(1000)
    before = sys.getrefcount(a)
    t = torch.from_dlpack(a)
    assert sys.getrefcount(a) > before
    v = t[10:20]          # a view keeps the memory too
    del t
    gc.collect()
    assert sys.getrefcount(a) > before
    del v
    gc.collect()
    assert sys.getrefcount(a) == before


def test_capsules_legacy_and_versioned():
    t = torch.arange(6.0).reshape(2, 3)
    cap = to_dlpack(t)
    assert "dltensor" in repr(cap)
    u = from_dlpack(cap)
    assert u.data_ptr() == t.data_ptr()
    with pytest.raises(ValueError, match="already consumed"):
        from_dlpack(cap)
    v = torch.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    assert v.data_ptr() == t.data_ptr()
    c = torch.from_dlpack(t.__dlpack__(max_version=(1, 0), copy=True))
    assert c.data_ptr() != t.data_ptr()
    np.testing.assert_array_equal(c.numpy(), t.numpy())
    # An unconsumed capsule frees its export when it dies.
    del cap
    for _ in range(3):
        t.__dlpack__(max_version=(1, 0))
        t.__dlpack__()
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_refusals():
    with pytest.raises(RuntimeError, match="require gradient"):
        torch.zeros(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError, match="stream must be None"):
        torch.zeros(2).__dlpack__(stream=1)
    with pytest.raises(BufferError, match=r"device \(2, 0\)"):
        torch.zeros(2).__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError, match="__dlpack__"):
        torch.from_dlpack([1, 2])

    class OnGpu:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kwargs):
            raise AssertionError("not reached")

    with pytest.raises(RuntimeError, match="device type 2"):
        torch.from_dlpack(OnGpu())


def test_read_only_producers_are_copied():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = torch.from_dlpack(a)
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.data_ptr() != a.ctypes.data
