"""Kernels called from many Python threads at once.

Large kernels release the GIL, so these threads really run in parallel in
Rust. In-place writes take the storage's lock exclusively, so concurrent
``add_`` calls on one tensor serialise and every increment lands; two
threads updating two tensors from each other in opposite orders must not
deadlock (locks are taken in storage-address order).
"""

from __future__ import annotations

import threading

import ferrograd as fg
import numpy as np
import pytest

N = 1 << 17  # above the size at which bindings release the GIL


def _run(workers, times=1):
    """Calls each worker ``times`` times over in a thread of its own, all
    threads at once; raises the first error a worker raised."""
    errors = []

    def wrap(fn):
        def go():
            try:
                for _ in range(times):
                    fn()
            except BaseException as e:  # reported to the test thread
                errors.append(e)

        return go

    threads = [threading.Thread(target=wrap(w)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.timeout(60)
def test_concurrent_in_place_adds_on_one_tensor_all_land():
    acc = fg.zeros(N, dtype=fg.float64)
    one = fg.ones(N, dtype=fg.float64)

    def work():
        acc.add_(one)

    _run([work] * 8, times=50)
    np.testing.assert_array_equal(acc.numpy(), np.full(N, 400.0))
    assert acc._version == 400


@pytest.mark.timeout(60)
def test_crossed_in_place_updates_do_not_deadlock():
    a = fg.ones(N, dtype=fg.float64)
    b = fg.ones(N, dtype=fg.float64)

    def a_from_b():
        a.add_(b * 0)

    def b_from_a():
        b.add_(a * 0)

    def a_plus_b_into_a():
        a.mul_(1.0).add_(b, alpha=0)

    _run([a_from_b, b_from_a, a_plus_b_into_a, b_from_a], times=100)
    assert a.sum().item() == N and b.sum().item() == N


@pytest.mark.timeout(60)
def test_concurrent_out_of_place_ops_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    w = rng.standard_normal((512, 64)).astype(np.float32)
    tx, tw = fg.tensor(x), fg.tensor(w)
    expected = np.tanh(x @ w).sum(axis=1)
    results = [None] * 6

    def work(i):
        def go():
            results[i] = (tx @ tw).tanh().sum(dim=1)

        return go

    _run([work(i) for i in range(6)], times=10)
    for r in results:
        np.testing.assert_allclose(r.numpy(), expected, rtol=1e-4, atol=1e-3)
