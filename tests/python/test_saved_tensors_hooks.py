"""Saved-tensor hooks: autograd.graph.saved_tensors_hooks, save_on_cpu and
disable_saved_tensors_hooks.

Oracles: gradients computed without hooks (bitwise for exact hooks, within
float16 precision for a compressing hook), closed-form derivatives, and the
number of pack/unpack calls implied by what each node saves (MulBackward0
saves both operands, ExpBackward0 its result, SinBackward0 its input).
"""

from __future__ import annotations

import threading

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks


class Counting:
    """Identity hooks that count their calls and remember the threads."""

    def __init__(self) -> None:
        self.packed = 0
        self.unpacked = 0
        self.threads: set[int] = set()

    def pack(self, t):
        self.packed += 1
        return t

    def unpack(self, t):
        self.unpacked += 1
        self.threads.add(threading.get_ident())
        return t


def leaf(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


def test_pack_once_per_saved_tensor_and_unpack_once_per_use():
    x = leaf([0.5, -1.0, 2.0])
    c = Counting()
    with saved_tensors_hooks(c.pack, c.unpack):
        y = x * x  # saves self and other
        z = y.exp()  # saves its result
    assert (c.packed, c.unpacked) == (3, 0)
    z.sum().backward(retain_graph=True)
    assert c.unpacked == 3
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy() * np.exp(x.detach().numpy() ** 2))
    _ = y.grad_fn._saved_self  # reading a saved value unpacks it again
    assert c.unpacked == 4


def test_outside_the_context_nothing_is_packed():
    x = leaf([1.0, 2.0])
    c = Counting()
    with saved_tensors_hooks(c.pack, c.unpack):
        pass
    (x.sin()).sum().backward()
    assert (c.packed, c.unpacked) == (0, 0)


def test_numpy_offloading_gives_the_same_gradients_bitwise():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 5))
    xs = rng.standard_normal((4, 8))

    def loss_and_grad(hooks):
        W = torch.tensor(w, requires_grad=True)
        x = torch.tensor(xs)
        if hooks:
            with saved_tensors_hooks(lambda t: t.detach().numpy().copy(), torch.from_numpy):
                loss = (x @ W).tanh().pow(2).sum()
        else:
            loss = (x @ W).tanh().pow(2).sum()
        loss.backward()
        return W.grad.numpy()

    np.testing.assert_array_equal(loss_and_grad(True), loss_and_grad(False))


def test_float16_compression_hook_gradients_within_its_precision():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (6, 7)).astype(np.float32)

    def pack(t):
        return (t.dtype, t.detach().numpy().astype(np.float16).tobytes(), tuple(t.shape))

    def unpack(p):
        dtype, raw, shape = p
        arr = np.frombuffer(raw, dtype=np.float16).reshape(shape).astype(np.float32)
        return torch.from_numpy(arr).to(dtype)

    x = torch.tensor(a, requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        loss = (x.sin() * x).sum()
    loss.backward()
    exact = np.cos(a) * a + np.sin(a)
    np.testing.assert_allclose(x.grad.numpy(), exact, atol=3e-3)
    # The float16 round trip really happened: not equal to the exact value.
    assert not np.array_equal(x.grad.numpy(), exact.astype(np.float32))


def test_innermost_hooks_apply():
    x = leaf([0.3, 0.7])
    outer, inner = Counting(), Counting()
    with saved_tensors_hooks(outer.pack, outer.unpack):
        with saved_tensors_hooks(inner.pack, inner.unpack):
            y = x.sin()
        z = x.cos()
    (y + z).sum().backward()
    assert (inner.packed, inner.unpacked) == (1, 1)
    assert (outer.packed, outer.unpacked) == (1, 1)
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.3, 0.7]) - np.sin([0.3, 0.7]))


def test_custom_function_saved_tensors_go_through_hooks():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x * x
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 3 * y / x

    x = leaf([1.5, -2.0])
    c = Counting()
    with saved_tensors_hooks(c.pack, c.unpack):
        y = Cube.apply(x)
    assert c.packed == 2
    y.sum().backward()
    assert c.unpacked == 2
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.detach().numpy() ** 2)


def test_create_graph_backward_saves_through_the_callers_hooks():
    x = leaf([0.4, 1.1])
    y = (x * x * x).sum()
    c = Counting()
    with saved_tensors_hooks(c.pack, c.unpack):
        (g,) = torch.autograd.grad(y, x, create_graph=True)
    assert c.packed > 0  # the gradient's own graph saved tensors
    assert c.unpacked == 0
    (h,) = torch.autograd.grad(g.sum(), x)
    assert c.unpacked > 0
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy())


def test_hooked_saved_tensors_are_not_version_checked():
    # torch does not check versions of tensors kept by hooks: the pack hook
    # decided what to keep (here a copy of the value at save time).
    x = leaf([0.2, 0.9])
    b = x.clone()
    with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = b.sin()
    b.add_(1.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.2, 0.9]))


def test_unpack_returning_a_non_tensor_is_a_type_error():
    x = leaf([1.0])
    with saved_tensors_hooks(lambda t: t, lambda p: 3):
        y = x.sin()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
        y.sum().backward()


def test_pack_hook_modifying_its_input_raises():
    a = leaf([1.0, 2.0]).clone()
    with saved_tensors_hooks(lambda t: t.mul_(2), lambda p: p):
        with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
            a.sin()


def test_hook_exception_keeps_its_type():
    x = leaf([1.0])

    def bad_unpack(p):
        raise KeyError("offload store lost it")

    with saved_tensors_hooks(lambda t: t, bad_unpack):
        y = x.exp()
    with pytest.raises(KeyError, match="offload store lost it"):
        y.sum().backward()


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("hooks are not allowed here"):
        with pytest.raises(RuntimeError, match="hooks are not allowed here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    # Allowed again after the context.
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks please"):
            with disable_saved_tensors_hooks("no hooks please"):
                pass


def test_save_on_cpu_keeps_values():
    x = leaf([0.1, 0.5, 0.9])
    for pin in (False, True):
        x.grad = None
        with save_on_cpu(pin_memory=pin):
            y = (x.exp() * x).sum()
        y.backward()
        xv = x.detach().numpy()
        np.testing.assert_allclose(x.grad.numpy(), np.exp(xv) * (xv + 1))


def test_unpack_hooks_run_on_the_calling_thread_of_a_parallel_backward():
    # Wide enough for the engine's pool: many independent large branches.
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.standard_normal((256, 256)), requires_grad=True)
    c = Counting()
    with saved_tensors_hooks(c.pack, c.unpack):
        loss = sum((x * float(k)).sin().sum() for k in range(1, 9))
    loss.backward()
    assert c.unpacked == 8
    assert c.threads == {threading.get_ident()}
    xv = x.detach().numpy()
    want = sum(k * np.cos(k * xv) for k in range(1, 9))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10, atol=1e-10)


@pytest.mark.timeout(120)
def test_threads_with_hooks_on_some_threads_only():
    n_threads, n_calls = 8, 500
    counts = [Counting() for _ in range(n_threads)]
    errors: list[BaseException] = []
    xv = np.linspace(-1, 1, 5)

    def work(k: int) -> None:
        try:
            c = counts[k]
            for _ in range(n_calls):
                x = torch.tensor(xv, requires_grad=True)
                if k % 2 == 0:
                    with saved_tensors_hooks(c.pack, c.unpack):
                        y = (x.sin() * x).sum()
                else:
                    y = (x.sin() * x).sum()
                y.backward()
                np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) * xv + np.sin(xv))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    for k, c in enumerate(counts):
        # sin saves x; mul saves sin(x) and x.
        want = 3 * n_calls if k % 2 == 0 else 0
        assert (c.packed, c.unpacked) == (want, want), k


# allow_mutation_on_saved_tensors


def test_mutating_a_saved_tensor_inside_the_context_keeps_the_saved_value():
    av = np.array([0.5, 1.0, -2.0])
    a = leaf(av)
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        out = (b * b).sum()  # saves b twice
        b.sin_()  # b is copied first
        np.testing.assert_allclose(b.detach().numpy(), np.sin(av))
        out.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * av)


def test_mutation_through_a_view_of_a_saved_tensor():
    av = np.array([[0.5, 1.0], [-2.0, 3.0]])
    a = leaf(av)
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        out = b.exp().sum() + (b * 3).sum()  # exp saves its result, mul by 3 nothing
        b[0].mul_(10)
        out.backward()
    np.testing.assert_allclose(a.grad.numpy(), np.exp(av) + 3)


def test_only_modified_saved_tensors_are_copied():
    a = leaf([0.5, 1.0])
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        c = a.clone()
        y = (b * c).sum()
        node = y.grad_fn.next_functions[0][0]  # MulBackward0
        assert node._saved_self.data_ptr() == b.data_ptr()
        assert node._saved_other.data_ptr() == c.data_ptr()
        c.add_(1.0)
        assert node._saved_self.data_ptr() == b.data_ptr()  # not modified: not copied
        assert node._saved_other.data_ptr() != c.data_ptr()  # copied before the write
        np.testing.assert_array_equal(node._saved_other.detach().numpy(), [0.5, 1.0])
        y.backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 2.0])


def test_backward_outside_the_mutation_context_raises():
    a = leaf([0.5, 1.0])
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        out = (b * b).sum()
        b.mul_(2)
    with pytest.raises(AssertionError, match="outside of the 'allow_mutation_on_saved_tensors' context"):
        out.backward()


def test_without_the_context_mutating_a_saved_tensor_still_raises():
    a = leaf([0.5, 1.0])
    b = a.clone()
    out = (b * b).sum()
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_raw_saved_tensor_register_hooks_packs_now_and_unpacks_in_backward():
    x = leaf([0.5, -1.0, 2.0])
    y = x.pow(3)
    calls = []

    def pack(t):
        calls.append("pack")
        return t.detach().numpy().copy()

    def unpack(a):
        calls.append("unpack")
        return torch.from_numpy(a)

    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(pack, unpack)
    assert calls == ["pack"]
    np.testing.assert_array_equal(raw.unpack().detach().numpy(), [0.5, -1.0, 2.0])
    assert calls == ["pack", "unpack"]
    y.sum().backward()
    assert calls == ["pack", "unpack", "unpack"]
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([0.5, -1.0, 2.0]) ** 2)


def test_raw_saved_tensor_hooks_once_and_not_after_free():
    x = leaf([1.0, 2.0])
    y = x.exp()
    raw = y.grad_fn._raw_saved_result
    np.testing.assert_allclose(raw.data.numpy(), np.exp([1.0, 2.0]))
    raw.register_hooks(lambda t: t.clone(), lambda t: t)
    with pytest.raises(RuntimeError, match="hooks have already been set"):
        raw.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(TypeError, match="register_hooks"):
        (x * x).grad_fn._raw_saved_other.register_hooks(1, 2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="after it has been freed"):
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        z = x.sin()
    with pytest.raises(RuntimeError, match="hooks have already been set"):
        z.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
