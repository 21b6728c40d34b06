"""Tensor.resize_, resize_as_ and set_: the tensor object itself changes shape
or memory, never past its storage. Values are checked against NumPy models of
the storage; sharing through data_ptr and writes seen on both sides."""

import random

import ferrograd as fg
import numpy as np
import pytest


def arr(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def test_resize_shrink_keeps_memory_and_object():
    t = fg.arange(6.0)
    ptr = t.data_ptr()
    r = t.resize_(2, 2)
    assert r is t
    assert t.shape == (2, 2) and t.stride() == (2, 1)
    assert t.data_ptr() == ptr
    np.testing.assert_array_equal(arr(t), np.arange(4.0).reshape(2, 2))
    t.resize_((3,))
    np.testing.assert_array_equal(arr(t), [0.0, 1.0, 2.0])


def test_resize_grow_keeps_old_values_then_zeros():
    t = fg.arange(6.0)
    t.resize_(3, 3)
    want = np.zeros(9)
    want[:6] = np.arange(6.0)
    np.testing.assert_array_equal(arr(t), want.reshape(3, 3))
    # The grown tensor computes like any other.
    np.testing.assert_array_equal(arr(t * 2 + 1), want.reshape(3, 3) * 2 + 1)


def test_resize_same_shape_changes_nothing():
    t = fg.arange(6.0).reshape(2, 3).t()
    before = (t.stride(), t.data_ptr())
    assert t.resize_(3, 2) is t
    assert (t.stride(), t.data_ptr()) == before


def test_resize_of_a_view_stays_a_view_inside_its_storage():
    e = fg.zeros(5)
    f = e[1:3]
    f.resize_(2, 2)
    assert f._base is e and f.storage_offset() == 1
    f.fill_(3.0)
    np.testing.assert_array_equal(arr(e), [0.0, 3.0, 3.0, 3.0, 3.0])


def test_growing_a_shared_storage_is_refused_and_changes_nothing():
    t = fg.arange(4.0)
    v = t[1:]
    with pytest.raises(RuntimeError, match=r"grow a storage of 16 bytes"):
        t.resize_(10)
    assert t.shape == (4,)
    del v
    t.resize_(10)  # the view is gone: the storage is the tensor's own
    assert t.shape == (10,)


def test_resize_memory_format():
    c = fg.zeros(2, 3, 4, 5)
    c.resize_(2, 3, 4, 5, memory_format=fg.channels_last)
    assert c.stride() == (60, 1, 15, 3)
    assert c.is_contiguous(memory_format=fg.channels_last)
    with pytest.raises(RuntimeError, match="rank 4"):
        fg.zeros(3).resize_(3, memory_format=fg.channels_last)
    with pytest.raises(TypeError, match="memory_format"):
        fg.zeros(3).resize_(3, memory_format="channels_last")


def test_resize_refuses_tensors_that_require_grad():
    for x in (fg.randn(3, requires_grad=True), fg.randn(3, requires_grad=True) * 2):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            x.resize_(2)
        with fg.no_grad(), pytest.raises(RuntimeError, match="require grad"):
            x.resize_(2)
        assert x.shape == (3,)
    # A detached alias shares the leaf's memory: shrinking it is allowed.
    assert fg.randn(3, requires_grad=True).detach().resize_(2).shape == (2,)


def test_resize_of_numpy_memory():
    n = np.arange(4, dtype=np.float32)
    t = fg.from_numpy(n)
    with pytest.raises(RuntimeError, match="not resizable"):
        t.resize_(10)
    t.resize_(2)
    t.fill_(9.0)
    np.testing.assert_array_equal(n, [9.0, 9.0, 2.0, 3.0])


def test_resize_overflow_and_negative_sizes():
    with pytest.raises(RuntimeError, match="overflow"):
        fg.zeros(2).resize_(2**62, 4)
    with pytest.raises(RuntimeError):
        fg.zeros(2).resize_(-1)


def test_resize_as_takes_the_template_shape_of_any_dtype():
    t = fg.arange(4.0)
    assert t.resize_as_(fg.zeros(2, 2, dtype=fg.int64)) is t
    assert t.dtype == fg.float32
    np.testing.assert_array_equal(arr(t), [[0.0, 1.0], [2.0, 3.0]])


def test_set_shares_the_source_memory():
    src = fg.arange(10.0)
    t = fg.zeros(3)
    v0 = t._version
    assert t.set_(src) is t
    assert t.shape == (10,) and t.data_ptr() == src.data_ptr()
    assert t._version == v0 + 1
    t[0] = 7.0
    assert src[0].item() == 7.0
    src[1] = 8.0
    assert t[1].item() == 8.0
    assert t._base is None


def test_set_with_a_layout_reads_the_storage_as_numpy_as_strided():
    base = np.arange(10.0)
    src = fg.tensor(base)
    for offset, size, stride in [(2, (2, 2), (1, 3)), (0, (5,), (2,)), (9, (1,), None), (3, (2, 3), None)]:
        t = fg.zeros(1, dtype=fg.float64)
        t.set_(src, offset, size, stride)
        st = stride if stride is not None else tuple(int(np.prod(size[i + 1 :])) for i in range(len(size)))
        want = np.lib.stride_tricks.as_strided(base[offset:], size, [s * 8 for s in st])
        np.testing.assert_array_equal(arr(t), want)
        assert t.stride() == st and t.storage_offset() == offset


def test_set_of_a_view_source_keeps_its_offset():
    src = fg.arange(6.0).reshape(2, 3)
    v = src[:, 1]
    t = fg.zeros(1)
    t.set_(v)
    assert t.stride() == v.stride() and t.storage_offset() == 1
    np.testing.assert_array_equal(arr(t), [1.0, 4.0])


def test_set_never_reads_past_the_storage():
    src = fg.arange(10.0)
    t = fg.zeros(3)
    with pytest.raises(RuntimeError, match="past the source's storage of 10"):
        t.set_(src, 8, (2, 2), (1, 3))
    with pytest.raises(RuntimeError, match="invalid storage offset"):
        t.set_(src, -1, (2,))
    with pytest.raises(RuntimeError, match="different lengths"):
        t.set_(src, 0, (2, 2), (1,))
    np.testing.assert_array_equal(arr(t), [0.0, 0.0, 0.0])


def test_set_checks_dtype_and_argument_types():
    with pytest.raises(RuntimeError, match="int64"):
        fg.zeros(3).set_(fg.arange(3))
    with pytest.raises(TypeError, match="must be Tensor"):
        fg.zeros(3).set_([1.0, 2.0])


def test_set_empty():
    t = fg.arange(4.0)
    t.set_()
    assert t.shape == (0,) and t.numel() == 0
    assert t.tolist() == []


def test_object_keeps_its_identity_and_attributes():
    t = fg.zeros(3)
    t.tag = "kept"
    t.set_(fg.arange(4.0))
    assert t.tag == "kept"
    assert t.view(2, 2)._base is t
    t.resize_(2)
    assert t.tag == "kept" and t.view(2)._base is t


def test_parameter_set_under_no_grad_keeps_grad_and_accumulates():
    p = fg.nn.Parameter(fg.tensor([1.0, 2.0, 3.0]))
    (p * p).sum().backward()
    g = p.grad
    np.testing.assert_array_equal(arr(g), [2.0, 4.0, 6.0])
    with pytest.raises(RuntimeError, match="leaf Variable"):
        p.set_(fg.ones(3))
    with fg.no_grad():
        p.set_(fg.tensor([5.0, 5.0, 5.0]))
    assert isinstance(p, fg.nn.Parameter) and p.requires_grad and p.is_leaf
    assert p.grad is g
    (p * p).sum().backward()
    np.testing.assert_array_equal(arr(p.grad), [12.0, 14.0, 16.0])


def test_optimizer_steps_the_new_memory():
    p = fg.nn.Parameter(fg.zeros(2))
    opt = fg.optim.SGD([p], lr=0.5)
    src = fg.tensor([1.0, 2.0])
    with fg.no_grad():
        p.set_(src)
    p.sum().backward()
    opt.step()
    np.testing.assert_array_equal(arr(src), [0.5, 1.5])


def test_set_and_autograd_sources():
    w = fg.randn(3, requires_grad=True)
    q = fg.zeros(3)
    with pytest.raises(RuntimeError, match="not differentiable"):
        q.set_(w)
    assert q.shape == (3,) and not q.requires_grad
    with fg.no_grad():
        q.set_(w)
    assert not q.requires_grad
    # A tensor given new memory differentiates like any leaf.
    x = fg.zeros(1, dtype=fg.float64)
    src = fg.tensor([1.0, -2.0, 3.0], dtype=fg.float64)
    x.set_(src)
    x.requires_grad_()
    (x * x).sum().backward()
    np.testing.assert_array_equal(arr(x.grad), 2 * arr(src))


def test_random_resize_programs_match_a_storage_model():
    rng = random.Random(7)
    for _ in range(200):
        model = np.arange(rng.randint(0, 12), dtype=np.float64)
        t = fg.tensor(model)
        for _ in range(6):
            shape = tuple(rng.randint(0, 4) for _ in range(rng.randint(0, 3)))
            n = int(np.prod(shape))
            t.resize_(shape)
            if n > model.size:
                model = np.concatenate([model, np.zeros(n - model.size)])
            assert t.shape == shape
            np.testing.assert_array_equal(arr(t).reshape(shape), model[:n].reshape(shape))
            if n and rng.random() < 0.5:
                k = rng.randrange(n)
                t.view(-1)[k] = float(100 + k)
                model[k] = 100 + k


def test_under_vmap_rows_resize_as_a_loop_does():
    from ferrograd.func import vmap

    x = fg.randn(3, 4, 4)
    y = fg.randn(5)
    cases = [
        (lambda a: a.clone().resize_(2), (x,)),
        (lambda a: a.clone().resize_(5, 5), (x,)),
        (lambda a: a.clone().resize_as_(y), (x,)),
        (lambda a: a.clone().set_(), (x,)),
        (lambda a: a.clone().set_(y), (x,)),
        (lambda a, b: a.clone().set_(b), (x, x * 2)),
    ]
    for fn, args in cases:
        want = fg.stack([fn(*(a[i] for a in args)) for i in range(3)])
        got = vmap(fn)(*args)
        assert got.shape == want.shape
        np.testing.assert_array_equal(arr(got), arr(want))
    with pytest.raises(RuntimeError, match="storage offset"):
        vmap(lambda a: a.clone().set_(y, 0, (2,)))(x)
    # A plain tensor cannot take a batched value in place (as for copy_).
    with pytest.raises(RuntimeError, match="broadcast shape"):
        vmap(lambda b: fg.zeros(1).set_(b))(x)
