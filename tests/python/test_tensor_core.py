"""Tensor attributes, conversions, NumPy sharing, views, repr and pickling."""

from __future__ import annotations

import copy
import pickle

import ferrograd as fg
import numpy as np
import pytest
from conftest import assert_close, cases, to_np


def test_tensor_infers_dtype_like_torch():
    assert fg.tensor([1, 2]).dtype == fg.int64
    assert fg.tensor([1.0, 2]).dtype == fg.float32
    assert fg.tensor([True, False]).dtype == fg.bool
    assert fg.tensor([[1, 2], [3, 4]], dtype=fg.float64).dtype == fg.float64
    assert fg.tensor(3.5).dim() == 0
    assert fg.tensor([]).shape == (0,)


def test_ragged_nested_list_is_value_error():
    with pytest.raises(ValueError, match="length"):
        fg.tensor([[1, 2], [3]])


def test_string_data_is_type_error():
    with pytest.raises(TypeError):
        fg.tensor(["a"])


def test_default_dtype_round_trip():
    assert fg.get_default_dtype() == fg.float32
    fg.set_default_dtype(fg.float64)
    try:
        assert fg.tensor([1.5]).dtype == fg.float64
        assert fg.zeros(2).dtype == fg.float64
    finally:
        fg.set_default_dtype(fg.float32)
    with pytest.raises(TypeError):
        fg.set_default_dtype(fg.int64)


def test_attributes_match_numpy():
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    t = fg.tensor(a)
    assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4) and t.size(-1) == 4
    assert t.dim() == 3 and t.ndim == 3 and t.numel() == 24 and len(t) == 2
    assert t.stride() == tuple(s // 8 for s in a.strides)
    assert t.storage_offset() == 0 and t.is_contiguous()
    assert t.element_size() == 8
    assert str(t.device) == "cpu" and t.device == fg.device("cpu")
    assert repr(t.shape) == "ferrograd.Size([2, 3, 4])"


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = fg.from_numpy(a)
    a[0, 1] = 42
    assert t[0, 1].item() == 42 if hasattr(t, "__getitem__") else t.tolist()[0][1] == 42
    t.add_(1)
    assert a[1, 2] == 6
    back = t.numpy()
    back[1, 0] = -7
    assert a[1, 0] == -7
    assert np.shares_memory(back, a)


def test_from_numpy_keeps_strides_of_views():
    a = np.arange(20, dtype=np.int64).reshape(4, 5)[:, ::2].T
    t = fg.from_numpy(a)
    assert t.stride() == tuple(s // 8 for s in a.strides)
    assert t.tolist() == a.tolist()


def test_from_numpy_rejects_negative_strides_and_unsupported_dtypes():
    with pytest.raises(ValueError, match="negative"):
        fg.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(TypeError, match="numpy.(complex256|clongdouble)"):
        fg.from_numpy(np.zeros(3, dtype=np.clongdouble))
    with pytest.raises(TypeError):
        fg.from_numpy([1, 2])


def test_numpy_refuses_requires_grad():
    t = fg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        t.numpy()
    assert t.detach().numpy().tolist() == [1.0, 1.0, 1.0]


def test_array_protocol_and_tolist_item():
    t = fg.tensor([[1, 2], [3, 4]], dtype=fg.int32)
    arr = np.asarray(t)
    assert arr.dtype == np.int32 and arr.tolist() == [[1, 2], [3, 4]]
    assert np.array(t, dtype=np.float64).dtype == np.float64
    assert fg.tensor(2.5).item() == 2.5
    assert isinstance(fg.tensor(7).item(), int)
    assert float(fg.tensor([3.0])) == 3.0 and int(fg.tensor([3])) == 3
    assert bool(fg.tensor([1])) is True
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(fg.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="cannot be converted"):
        fg.tensor([1, 2]).item()


def test_casts():
    t = fg.tensor([1.7, -2.7, 0.0])
    assert t.long().tolist() == [1, -2, 0]
    assert t.int().dtype == fg.int32
    assert t.bool().tolist() == [True, True, False]
    assert t.double().dtype == fg.float64
    assert t.to(fg.float64).dtype == fg.float64
    assert t.to(fg.float32) is t
    assert t.type_as(fg.tensor([1])).dtype == fg.int64
    assert t.half().dtype == fg.float16 and t.half().tolist() == [1.7001953125, -2.69921875, 0.0]


def test_device_other_than_cpu_is_runtime_error():
    with pytest.raises(RuntimeError, match="cuda"):
        fg.zeros(2, device="cuda")
    assert fg.zeros(2, device="cpu").shape == (2,)


@pytest.mark.parametrize("dtype", [fg.float32, fg.float64])
def test_views_share_memory_and_version_counter(dtype):
    base = fg.zeros(3, 4, dtype=dtype)
    v = base.t()
    assert v._is_view() and v._base is not None
    assert base.data_ptr() == v.data_ptr()
    v0 = base._version
    v.add_(1)
    assert base._version == v0 + 1 and v._version == base._version
    assert to_np(base).sum() == 12
    sel = base.select(1, 2)
    sel.add_(5)
    assert to_np(base)[:, 2].tolist() == [6, 6, 6]


def test_view_arithmetic_matches_numpy(rng):
    a = rng.standard_normal((2, 3, 4))
    t = fg.tensor(a)
    assert_close(t.view(6, 4), a.reshape(6, 4))
    assert_close(t.view(-1), a.reshape(-1))
    assert_close(t.permute(2, 0, 1), a.transpose(2, 0, 1))
    assert_close(t.transpose(0, 2), a.swapaxes(0, 2))
    assert_close(t.narrow(1, 1, 2), a[:, 1:3])
    assert_close(t.select(2, -1), a[:, :, -1])
    assert_close(t.unsqueeze(1), a[:, None])
    assert_close(t.unsqueeze(1).squeeze(1), a)
    assert_close(t.diagonal(0, 1, 2), np.diagonal(a, 0, 1, 2))
    assert_close(t.diagonal(1, 1, 2), np.diagonal(a, 1, 1, 2))
    assert_close(t.diagonal(-1, 1, 2), np.diagonal(a, -1, 1, 2))
    assert_close(t.flatten(1), a.reshape(2, 12))
    assert_close(t.movedim(0, -1), np.moveaxis(a, 0, -1))
    assert_close(t.mT, np.swapaxes(a, -1, -2))
    assert_close(t.T, a.T)
    assert_close(t[0].expand(5, 3, 4) if hasattr(t, "__getitem__") else t.select(0, 0).expand(5, 3, 4),
                 np.broadcast_to(a[0], (5, 3, 4)))
    parts = t.split(2, dim=2)
    assert [p.shape[2] for p in parts] == [2, 2]
    assert_close(t.chunk(3, 1)[2], a[:, 2:3])
    assert len(t.unbind(1)) == 3


def test_reshape_of_transposed_copies_but_view_raises():
    t = fg.zeros(3, 4).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(12)
    r = t.reshape(12)
    assert r.is_contiguous() and r.shape == (12,)


def test_view_errors():
    t = fg.zeros(2, 3)
    with pytest.raises(RuntimeError, match=r"shape '\[4, 2\]' is invalid for input of size 6"):
        t.view(4, 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.transpose(0, 5)
    with pytest.raises(RuntimeError, match="expanded size"):
        t.expand(3, 3)
    with pytest.raises(IndexError):
        t.select(0, 2)
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.as_strided((3, 3), (3, 1))


def test_as_strided_matches_numpy():
    a = np.arange(12.0)
    t = fg.tensor(a)
    s = t.as_strided((3, 3), (2, 1), 1)
    ref = np.lib.stride_tricks.as_strided(a[1:], (3, 3), (16, 8))
    assert_close(s.float() if False else s, ref.astype(np.float32), check_dtype=False)


def test_layout_cases_hold_their_arrays(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    labels = []
    for label, t, ref in cases(a):
        assert_close(t, ref)
        labels.append(label)
        if label != "contiguous":
            assert not t.is_contiguous(), label
    assert labels == ["contiguous", "transposed", "sliced", "expanded"]


def test_repr_matches_torch_format():
    assert repr(fg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(fg.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
    assert repr(fg.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(fg.tensor([True, False])) == "tensor([ True, False])"
    assert repr(fg.tensor(2.5)) == "tensor(2.5000)"
    assert repr(fg.tensor([1.0, 2.0], dtype=fg.float64)) == "tensor([1., 2.], dtype=ferrograd.float64)"
    assert repr(fg.tensor([1, 2], dtype=fg.int32)) == "tensor([1, 2], dtype=ferrograd.int32)"
    assert repr(fg.ones(2, requires_grad=True)) == "tensor([1., 1.], requires_grad=True)"
    assert repr(fg.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(fg.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(fg.tensor([[1.0, -2.0], [3.0, 4.0]])) == "tensor([[ 1., -2.],\n        [ 3.,  4.]])"
    big = repr(fg.zeros(2000))
    assert "..." in big and big.startswith("tensor([0., 0., 0.,")


def test_repr_moves_a_suffix_that_passes_the_line_width_to_its_own_line():
    # Expected strings as torch 2.13 prints them (dtype names aside).
    assert repr(fg.arange(12.0).requires_grad_()) == (
        "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11.],\n"
        "       requires_grad=True)"
    )
    assert repr(fg.ones(12, requires_grad=True)) == (
        "tensor([1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1., 1.], requires_grad=True)"
    )
    # The line would be exactly 80 characters: torch still moves the suffix.
    assert repr(fg.full((12,), 1.0, requires_grad=True) * 2) == (
        "tensor([2., 2., 2., 2., 2., 2., 2., 2., 2., 2., 2., 2.],\n"
        "       grad_fn=<MulBackward0>)"
    )
    assert repr(fg.full((9,), 5.0, requires_grad=True) * 2) == (
        "tensor([10., 10., 10., 10., 10., 10., 10., 10., 10.], grad_fn=<MulBackward0>)"
    )
    assert repr((fg.arange(7.0) / 7).requires_grad_()) == (
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571],\n"
        "       requires_grad=True)"
    )
    assert repr((fg.arange(30.0).reshape(3, 10) / 7).requires_grad_() * 2) == (
        "tensor([[0.0000, 0.2857, 0.5714, 0.8571, 1.1429, 1.4286, 1.7143, 2.0000, 2.2857,\n"
        "         2.5714],\n"
        "        [2.8571, 3.1429, 3.4286, 3.7143, 4.0000, 4.2857, 4.5714, 4.8571, 5.1429,\n"
        "         5.4286],\n"
        "        [5.7143, 6.0000, 6.2857, 6.5714, 6.8571, 7.1429, 7.4286, 7.7143, 8.0000,\n"
        "         8.2857]], grad_fn=<MulBackward0>)"
    )
    assert repr(fg.ones(2, 5, requires_grad=True) * fg.arange(5.0)) == (
        "tensor([[0., 1., 2., 3., 4.],\n"
        "        [0., 1., 2., 3., 4.]], grad_fn=<MulBackward0>)"
    )


def test_repr_places_each_of_several_suffixes_by_the_line_width():
    assert repr(fg.arange(20, dtype=fg.int16)) == (
        "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
        "        18, 19], dtype=ferrograd.int16)"
    )
    assert repr(fg.arange(9, dtype=fg.int32) * 100000) == (
        "tensor([     0, 100000, 200000, 300000, 400000, 500000, 600000, 700000, 800000],\n"
        "       dtype=ferrograd.int32)"
    )
    # dtype fits after the data, grad_fn then does not.
    assert repr((fg.arange(4.0, dtype=fg.float64) / 3).requires_grad_() * 2) == (
        "tensor([0.0000, 0.6667, 1.3333, 2.0000], dtype=ferrograd.float64,\n"
        "       grad_fn=<MulBackward0>)"
    )
    # dtype starts a line and grad_fn follows it there.
    w = fg.arange(12.0, dtype=fg.float64)
    assert repr((w / 3).requires_grad_().sum(0, keepdim=True) * w) == (
        "tensor([  0.,  22.,  44.,  66.,  88., 110., 132., 154., 176., 198., 220., 242.],\n"
        "       dtype=ferrograd.float64, grad_fn=<MulBackward0>)"
    )
    assert repr((fg.arange(18.0, dtype=fg.float64).reshape(2, 9) / 3).requires_grad_() * 2) == (
        "tensor([[ 0.0000,  0.6667,  1.3333,  2.0000,  2.6667,  3.3333,  4.0000,  4.6667,\n"
        "          5.3333],\n"
        "        [ 6.0000,  6.6667,  7.3333,  8.0000,  8.6667,  9.3333, 10.0000, 10.6667,\n"
        "         11.3333]], dtype=ferrograd.float64, grad_fn=<MulBackward0>)"
    )


def test_repr_integer_valued_floats_spanning_three_orders_use_scientific_notation():
    assert repr(fg.tensor([1.0, 2000.0])) == "tensor([1.0000e+00, 2.0000e+03])"
    assert repr(fg.tensor([1.0, 1000.0])) == "tensor([   1., 1000.])"
    # Summarised: only the shown values count; the elision is written " ...".
    assert repr(fg.arange(1001.0)) == "tensor([   0.,    1.,    2.,  ...,  998.,  999., 1000.])"
    assert repr(fg.arange(2000.0).requires_grad_()) == (
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03], requires_grad=True)"
    )


@pytest.mark.parametrize("make", [
    lambda: fg.tensor([[1.5, 2.0], [3.0, 4.0]]),
    lambda: fg.tensor([[1, 2, 3], [4, 5, 6]], dtype=fg.int32).t(),
    lambda: fg.tensor([True, False]),
    lambda: fg.ones(3, dtype=fg.float64, requires_grad=True),
])
def test_pickle_and_deepcopy_round_trip(make):
    t = make()
    for c in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert c.tolist() == t.tolist()
        assert c.dtype == t.dtype and c.shape == t.shape and c.stride() == t.stride()
        assert c.requires_grad == t.requires_grad
        assert c.data_ptr() != t.data_ptr()


def test_hash_is_identity_and_iter_yields_rows():
    t = fg.tensor([[1, 2], [3, 4]])
    assert hash(t) == hash(t)
    assert {t: 1}[t] == 1
    assert [r.tolist() for r in t] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError):
        len(fg.tensor(1))


def test_requires_grad_only_for_floats():
    with pytest.raises(RuntimeError, match="floating point"):
        fg.tensor([1, 2]).requires_grad_()
    t = fg.zeros(2).requires_grad_()
    assert t.requires_grad and t.is_leaf and t.grad is None
    t.grad = fg.ones(2)
    assert t.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="different size"):
        t.grad = fg.ones(3)


def test_creation_functions():
    assert fg.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert fg.ones((2,), dtype=fg.int64).tolist() == [1, 1]
    assert fg.full((2, 2), 7).dtype == fg.int64
    assert fg.full((2,), 1.5).tolist() == [1.5, 1.5]
    assert fg.full((2,), True).dtype == fg.bool
    assert fg.empty(3, 4).shape == (3, 4)
    base = fg.ones(2, 3, dtype=fg.float64)
    assert fg.zeros_like(base).dtype == fg.float64
    assert fg.full_like(base, 3).tolist() == [[3.0] * 3] * 2
    assert fg.ones_like(base, dtype=fg.int32).dtype == fg.int32
    with pytest.raises(RuntimeError, match="negative dimension"):
        fg.zeros(-1)
    with pytest.raises(TypeError):
        fg.zeros(2.5)


def test_as_tensor_shares_numpy_memory():
    a = np.ones(3)
    t = fg.as_tensor(a)
    a[0] = 5
    assert t.tolist()[0] == 5
    t2 = fg.as_tensor([1, 2])
    assert t2.tolist() == [1, 2]


def test_num_threads_round_trip():
    n = fg.get_num_threads()
    fg.set_num_threads(1)
    assert fg.get_num_threads() == 1
    fg.set_num_threads(n)
    assert fg.get_num_threads() == n
    with pytest.raises(ValueError):
        fg.set_num_threads(0)


def test_promotion_helpers():
    assert fg.promote_types(fg.int32, fg.float32) == fg.float32
    assert fg.result_type(fg.tensor([1], dtype=fg.int32), 2.5) == fg.float32
    assert fg.result_type(fg.tensor([1], dtype=fg.int32), 2) == fg.int32
    assert fg.result_type(fg.tensor([1.0]), fg.tensor(1.0, dtype=fg.float64)) == fg.float32


def test_huge_sizes_raise_instead_of_crashing():
    with pytest.raises(RuntimeError, match="overflow"):
        fg.zeros(1 << 62)
    with pytest.raises(RuntimeError, match="allocate"):
        fg.ones(1 << 20).expand(1 << 20, 1 << 20) + 1
    with pytest.raises(RuntimeError, match="overflow"):
        fg.randint(0, 5, (1 << 62,))
    empty = fg.zeros((1 << 32, 1 << 32, 0))
    assert empty.numel() == 0 and empty.shape == (1 << 32, 1 << 32, 0)


def test_size_and_stride_of_zero_dim_tensor_raise_index_error():
    t = fg.tensor(1.0)
    with pytest.raises(IndexError, match="no dimensions"):
        t.size(0)
    with pytest.raises(IndexError, match="no dimensions"):
        t.stride(-1)
    assert t.size() == () and t.stride() == ()


@pytest.mark.parametrize("call", [
    lambda t: t.split(1),
    lambda t: t.chunk(2),
    lambda t: t.unflatten(0, (1, 1)),
    lambda t: t.size(0),
])
def test_dim_ops_on_zero_dim_tensor_raise_index_error(call):
    with pytest.raises(IndexError):
        call(fg.tensor(1.0))


def test_movedim_of_zero_dim_tensor_is_identity_and_negative_counts_raise():
    t = fg.tensor(2.0)
    assert t.movedim(0, 0).item() == 2.0
    with pytest.raises(RuntimeError, match="chunk"):
        fg.ones(3).chunk(-1)
    with pytest.raises(RuntimeError, match="length"):
        fg.ones(3).narrow(0, 0, -1)


def test_format_of_a_zero_dim_tensor_formats_its_number():
    assert f"{fg.tensor(0.125):.2f}" == "0.12"
    assert f"{fg.tensor(7):>3}" == "  7"
    assert format(fg.tensor([1.0, 2.0])) == str(fg.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        f"{fg.tensor([1.0]):.2f}"


def test_as_tensor_of_numpy_scalars_copies_their_values():
    # A NumPy scalar's array interface describes a temporary buffer.
    for i in range(200):
        v = np.float64(i + 0.5)
        assert fg.as_tensor(v).item() == i + 0.5
        assert fg.as_tensor(np.int32(i)).item() == i


def test_make_subclass_aliases_the_data_and_lives_with_its_tensor():
    import gc

    class Sub(fg.Tensor):
        pass

    data = fg.tensor([1.0, 2.0])
    s = fg.Tensor._make_subclass(Sub, data, True)
    assert type(s) is Sub and s.is_leaf and s.requires_grad and not data.requires_grad
    s.tag = "kept"
    with fg.no_grad():
        s.mul_(3)
    assert data.tolist() == [3.0, 6.0]  # same memory
    y = s * 2
    del s
    gc.collect()
    leaf = y.grad_fn.next_functions[0][0].variable
    assert type(leaf) is Sub and leaf.tag == "kept"
    with pytest.raises(TypeError, match="subclass of Tensor"):
        fg.Tensor._make_subclass(int, data)
