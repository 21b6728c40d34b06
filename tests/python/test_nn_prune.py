"""ferrograd.nn.utils.prune: masks against NumPy (argsort of |w|, channel
norms), the pruned layout (``weight_orig``, buffer ``weight_mask``, the
forward pre-hook, state dict keys), iterative pruning, ``remove`` and the
errors for bad amounts and dims."""

from __future__ import annotations

import math

import ferrograd as fg
import numpy as np
import pytest
from conftest import to_np
from ferrograd import nn
from ferrograd.nn.utils import prune


def _linear(n_in, n_out, seed=0, dtype=fg.float32):
    """A Linear layer whose weight entries have distinct absolute values."""
    rng = np.random.default_rng(seed)
    m = nn.Linear(n_in, n_out).to(dtype)
    values = rng.permutation(np.arange(1, n_in * n_out + 1)) * rng.choice([-1.0, 1.0], n_in * n_out) / 10
    with fg.no_grad():
        m.weight.copy_(fg.tensor(values.reshape(n_out, n_in), dtype=dtype))
    return m


def _np_l1_mask(scores, n_prune, keep=None):
    """Zeros at the ``n_prune`` smallest ``|scores|`` among the kept entries."""
    mask = np.ones(scores.size) if keep is None else keep.reshape(-1).astype(float).copy()
    candidates = np.flatnonzero(mask)
    order = candidates[np.argsort(np.abs(scores.reshape(-1)[candidates]), kind="stable")]
    mask[order[:n_prune]] = 0
    return mask.reshape(scores.shape)


@pytest.mark.parametrize("amount", [0, 3, 0.25, 0.5, 1.0, 12])
def test_l1_unstructured_mask_matches_numpy_argsort(amount):
    m = _linear(4, 3)
    w = to_np(m.weight)
    orig = m.weight
    prune.l1_unstructured(m, "weight", amount=amount)
    n_prune = amount if isinstance(amount, int) else round(amount * 12)
    np.testing.assert_array_equal(to_np(m.weight_mask), _np_l1_mask(w, n_prune))
    np.testing.assert_array_equal(to_np(m.weight), w * _np_l1_mask(w, n_prune))
    assert m.weight_orig is orig
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]
    assert not isinstance(m.weight, nn.Parameter)


def test_rounding_of_fractional_amounts_follows_python_round():
    # 0.125 * 12 = 1.5 rounds to 2 (to even), 0.375 * 12 = 4.5 to 4.
    for amount, expected in [(0.125, 2), (0.375, 4)]:
        m = prune.random_unstructured(_linear(4, 3), "weight", amount)
        assert int((m.weight_mask == 0).sum()) == expected == round(amount * 12)


def test_mask_dtype_follows_the_parameter():
    m = prune.l1_unstructured(_linear(3, 2, dtype=fg.float64), "weight", 2)
    assert m.weight_mask.dtype == fg.float64 and m.weight.dtype == fg.float64


def test_forward_pre_hook_recomputes_the_pruned_weight():
    m = _linear(4, 3)
    prune.l1_unstructured(m, "weight", amount=5)
    mask = to_np(m.weight_mask)
    with fg.no_grad():
        m.weight_orig.fill_(2.0)
    x = fg.ones(1, 4)
    y = m(x)
    np.testing.assert_allclose(to_np(m.weight), 2.0 * mask)
    np.testing.assert_allclose(to_np(y), (2.0 * mask).sum(1)[None] + to_np(m.bias), rtol=1e-6)


def test_gradient_of_orig_is_masked():
    m = _linear(4, 3, dtype=fg.float64)
    prune.l1_unstructured(m, "weight", amount=6)
    x = np.random.default_rng(1).standard_normal((5, 4))
    c = np.random.default_rng(2).standard_normal((5, 3))
    (m(fg.tensor(x)) * fg.tensor(c)).sum().backward()
    # d/dW sum(c * (x W^T)) = c^T x, times the mask for the stored tensor.
    np.testing.assert_allclose(to_np(m.weight_orig.grad), (c.T @ x) * to_np(m.weight_mask), rtol=1e-12)


def test_random_unstructured_prunes_exactly_amount_and_repeats_on_survivors():
    fg.manual_seed(0)
    m = nn.Linear(10, 8)
    prune.random_unstructured(m, "weight", amount=0.3)
    first = to_np(m.weight_mask)
    assert (first == 0).sum() == 24
    prune.random_unstructured(m, "weight", amount=0.5)
    second = to_np(m.weight_mask)
    # Half of the 56 survivors go; the entries pruned before stay pruned.
    assert (second == 0).sum() == 24 + 28
    assert np.all(second[first == 0] == 0)
    assert isinstance(next(iter(m._forward_pre_hooks.values())), prune.PruningContainer)
    assert len(m._forward_pre_hooks) == 1


def test_iterative_l1_prunes_the_smallest_survivors():
    m = _linear(5, 4)
    w = to_np(m.weight)
    prune.l1_unstructured(m, "weight", amount=4)
    prune.l1_unstructured(m, "weight", amount=0.5)  # half of the 16 survivors
    np.testing.assert_array_equal(to_np(m.weight_mask), _np_l1_mask(w, 12))
    container = next(iter(m._forward_pre_hooks.values()))
    assert [type(p).__name__ for p in container] == ["L1Unstructured", "L1Unstructured"]
    assert len(container) == 2 and container[0].amount == 4


def _np_channel_norms(w, n, dim):
    others = tuple(d for d in range(w.ndim) if d != dim % w.ndim)
    a = np.abs(w)
    if n == math.inf:
        return a.max(axis=others)
    if n == -math.inf:
        return a.min(axis=others)
    return (a**n).sum(axis=others) ** (1.0 / n)


@pytest.mark.parametrize("n", [1, 2, 3.5, math.inf, -math.inf])
@pytest.mark.parametrize(("dim", "amount"), [(0, 2), (1, 0.5), (-1, 1), (3, 0.34)])
def test_ln_structured_prunes_channels_of_smallest_norm(n, dim, amount):
    rng = np.random.default_rng(0)
    m = nn.Conv2d(3, 5, (2, 3))
    w = rng.standard_normal(tuple(m.weight.shape))
    with fg.no_grad():
        m.weight.copy_(fg.tensor(w, dtype=fg.float32))
    w = to_np(m.weight).astype(np.float64)
    prune.ln_structured(m, "weight", amount=amount, n=n, dim=dim)
    channels = w.shape[dim]
    n_prune = amount if isinstance(amount, int) else round(amount * channels)
    norms = _np_channel_norms(w, n, dim)
    pruned = np.argsort(norms, kind="stable")[:n_prune]
    expected = np.ones_like(w)
    np.moveaxis(expected, dim, 0)[pruned] = 0
    np.testing.assert_array_equal(to_np(m.weight_mask), expected)


def test_random_structured_prunes_whole_channels():
    fg.manual_seed(0)
    m = nn.Conv2d(3, 6, 2)
    prune.random_structured(m, "weight", amount=0.5, dim=0)
    mask = to_np(m.weight_mask)
    per_channel = mask.reshape(6, -1)
    assert sorted(per_channel.min(1) == per_channel.max(1)) == [True] * 6
    assert (per_channel[:, 0] == 0).sum() == 3
    # Again: only channels not yet pruned can go.
    prune.random_structured(m, "weight", amount=2, dim=0)
    second = to_np(m.weight_mask).reshape(6, -1)
    assert (second[:, 0] == 0).sum() == 5
    assert np.all(second[per_channel[:, 0] == 0] == 0)


def test_structured_after_unstructured_skips_channels_already_empty():
    m = _linear(3, 4)
    w = to_np(m.weight)
    row_mask = np.ones((4, 3))
    row_mask[1] = 0
    prune.custom_from_mask(m, "weight", fg.tensor(row_mask))
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0)
    norms = np.abs(w).sum(1)
    norms[1] = np.inf
    expected = row_mask.copy()
    expected[np.argmin(norms)] = 0
    np.testing.assert_array_equal(to_np(m.weight_mask), expected)


@pytest.mark.parametrize("amount", [5, 0.3])
def test_global_unstructured_ranks_all_parameters_together(amount):
    a, b = _linear(4, 3, seed=1), _linear(3, 2, seed=2)
    with fg.no_grad():
        b.weight.mul_(0.37)
    wa, wb, ba = to_np(a.weight), to_np(b.weight), to_np(a.bias)
    prune.global_unstructured(
        [(a, "weight"), (b, "weight"), (a, "bias")], pruning_method=prune.L1Unstructured, amount=amount
    )
    flat = np.concatenate([wa.ravel(), wb.ravel(), ba.ravel()])
    n_prune = amount if isinstance(amount, int) else round(amount * flat.size)
    mask = _np_l1_mask(flat, n_prune)
    np.testing.assert_array_equal(to_np(a.weight_mask), mask[:12].reshape(3, 4))
    np.testing.assert_array_equal(to_np(b.weight_mask), mask[12:18].reshape(2, 3))
    np.testing.assert_array_equal(to_np(a.bias_mask), mask[18:])
    assert type(next(iter(b._forward_pre_hooks.values()))).__name__ == "CustomFromMask"


def test_global_unstructured_uses_importance_scores_and_earlier_masks():
    a, b = _linear(4, 3, seed=1), _linear(3, 2, seed=2)
    prune.l1_unstructured(a, "weight", amount=3)
    first = to_np(a.weight_mask)
    scores_b = np.arange(6.0).reshape(2, 3) + 100
    prune.global_unstructured(
        [(a, "weight"), (b, "weight")],
        prune.L1Unstructured,
        importance_scores={(b, "weight"): fg.tensor(scores_b, dtype=fg.float32)},
        amount=7,
    )
    flat = np.concatenate([to_np(a.weight_orig).ravel() * first.ravel(), scores_b.ravel()])
    keep = np.concatenate([first.ravel(), np.ones(6)])
    mask = _np_l1_mask(flat, 7, keep)
    np.testing.assert_array_equal(to_np(a.weight_mask), mask[:12].reshape(3, 4))
    np.testing.assert_array_equal(to_np(b.weight_mask), np.ones((2, 3)))


def test_importance_scores_replace_the_values_when_ranking():
    m = _linear(4, 3)
    scores = np.arange(12.0).reshape(3, 4)[::-1].copy()
    prune.l1_unstructured(m, "weight", amount=5, importance_scores=fg.tensor(scores))
    np.testing.assert_array_equal(to_np(m.weight_mask), _np_l1_mask(scores, 5))
    m = _linear(4, 3)
    prune.ln_structured(m, "weight", amount=2, n=2, dim=1, importance_scores=fg.tensor(scores))
    expected = np.ones((3, 4))
    expected[:, np.argsort(np.linalg.norm(scores, axis=0))[:2]] = 0
    np.testing.assert_array_equal(to_np(m.weight_mask), expected)


def test_custom_from_mask_and_identity():
    m = _linear(3, 2)
    prune.custom_from_mask(m, "bias", fg.tensor([1, 0]))
    np.testing.assert_array_equal(to_np(m.bias_mask), [1.0, 0.0])
    assert m.bias_mask.dtype == m.bias_orig.dtype
    np.testing.assert_array_equal(to_np(m.bias), to_np(m.bias_orig) * [1.0, 0.0])
    prune.custom_from_mask(m, "bias", fg.tensor([0.0, 1.0]))
    np.testing.assert_array_equal(to_np(m.bias_mask), [0.0, 0.0])
    prune.identity(m, "weight")
    np.testing.assert_array_equal(to_np(m.weight_mask), np.ones((2, 3)))
    np.testing.assert_array_equal(to_np(m.weight), to_np(m.weight_orig))


def test_pruning_method_prune_applies_to_a_tensor():
    t = fg.tensor([3.0, -1.0, 0.5, 2.0])
    np.testing.assert_array_equal(to_np(prune.L1Unstructured(amount=2).prune(t)), [3.0, -0.0, 0.0, 2.0])
    x = fg.tensor([[3.0, -1.0], [0.5, 2.0], [0.1, 0.1]])
    out = prune.LnStructured(amount=1, n=1, dim=0).prune(x, default_mask=fg.ones(3, 2))
    np.testing.assert_array_equal(to_np(out), [[3.0, -1.0], [0.5, 2.0], [0.0, 0.0]])
    out = prune.L1Unstructured(amount=1).prune(t, importance_scores=fg.tensor([0.0, 1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(to_np(out), [0.0, -1.0, 0.5, 2.0])
    with pytest.raises(AssertionError, match="same shape"):
        prune.Identity().prune(t, importance_scores=fg.ones(3))


def test_remove_makes_the_pruning_permanent():
    m = _linear(4, 3)
    orig = m.weight
    prune.l1_unstructured(m, "weight", amount=4)
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)
    pruned = to_np(m.weight)
    assert prune.is_pruned(m)
    prune.remove(m, "weight")
    assert m.weight is orig and isinstance(m.weight, nn.Parameter)
    np.testing.assert_array_equal(to_np(m.weight), pruned)
    assert list(m.state_dict()) == ["bias", "weight"]
    assert len(m._forward_pre_hooks) == 0 and not prune.is_pruned(m)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(m, "weight")


def test_is_pruned_looks_at_submodules():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 2)))
    assert not prune.is_pruned(net)
    prune.identity(net[1][0], "bias")
    assert prune.is_pruned(net) and prune.is_pruned(net[1]) and not prune.is_pruned(net[0])


def test_state_dict_round_trip_of_pruned_modules():
    a = prune.l1_unstructured(_linear(4, 3, seed=1), "weight", amount=5)
    b = prune.identity(_linear(4, 3, seed=2), "weight")
    b.load_state_dict(a.state_dict())
    b(fg.ones(1, 4))
    np.testing.assert_array_equal(to_np(b.weight), to_np(a.weight))


@pytest.mark.parametrize(
    ("amount", "error", "message"),
    [
        (-1, ValueError, "should either be a float in the range"),
        (1.5, ValueError, "should either be a float in the range"),
        (-0.1, ValueError, "should either be a float in the range"),
        ("a", TypeError, "Invalid type for amount"),
        (None, TypeError, "Invalid type for amount"),
        (13, ValueError, "should be smaller than the number of parameters to prune=12"),
    ],
)
def test_bad_amounts_raise_and_leave_the_module_as_it_was(amount, error, message):
    m = _linear(4, 3)
    w = m.weight
    with pytest.raises(error, match=message):
        prune.l1_unstructured(m, "weight", amount)
    assert m.weight is w and sorted(m.state_dict()) == ["bias", "weight"]
    assert len(m._forward_pre_hooks) == 0
    # A failed second pruning keeps the first.
    prune.l1_unstructured(m, "weight", 2)
    mask = to_np(m.weight_mask)
    with pytest.raises(error, match=message.replace("=12", "=10")):
        prune.l1_unstructured(m, "weight", amount if amount != 13 else 11)
    np.testing.assert_array_equal(to_np(m.weight_mask), mask)
    assert type(next(iter(m._forward_pre_hooks.values()))).__name__ == "L1Unstructured"


def test_structured_errors():
    with pytest.raises(ValueError, match="multidimensional tensors"):
        prune.random_structured(nn.Linear(3, 2), "bias", amount=1, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2"):
        prune.ln_structured(nn.Linear(3, 2), "weight", amount=1, n=1, dim=2)
    with pytest.raises(IndexError):
        prune.ln_structured(nn.Linear(3, 2), "weight", amount=1, n=1, dim=-3)
    with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune=2"):
        prune.random_structured(nn.Linear(3, 2), "weight", amount=3, dim=0)


def test_global_unstructured_errors():
    with pytest.raises(TypeError, match="parameters is not an Iterable"):
        prune.global_unstructured(5, prune.L1Unstructured, amount=1)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        prune.global_unstructured([], prune.L1Unstructured, importance_scores=[], amount=1)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(nn.Linear(3, 2), "weight")], prune.LnStructured, amount=1, n=1, dim=0)


def test_importance_scores_of_the_wrong_shape_raise():
    m = nn.Linear(3, 2)
    with pytest.raises(AssertionError, match="importance_scores should have the same shape"):
        prune.l1_unstructured(m, "weight", 1, importance_scores=fg.ones(3))
    assert isinstance(m.weight, nn.Parameter)


def test_container_checks_its_methods():
    a = prune.L1Unstructured(0.5)
    a._tensor_name = "weight"
    b = prune.RandomUnstructured(0.5)
    b._tensor_name = "bias"
    container = prune.PruningContainer(a)
    with pytest.raises(ValueError, match="acting on the parameter named 'weight'"):
        container.add_pruning_method(b)
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        container.add_pruning_method("l1")
    assert len(container) == 1 and container[0] is a
    with pytest.raises(AssertionError, match="has to be pruned"):
        prune.Identity().apply_mask(nn.Linear(2, 2))


def test_user_defined_pruning_method():
    class EveryOther(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    m = nn.Linear(3, 2)
    EveryOther.apply(m, "weight")
    np.testing.assert_array_equal(to_np(m.weight_mask).ravel(), [0, 1, 0, 1, 0, 1])
    # Applied again, it sees only the 3 entries still kept.
    EveryOther.apply(m, "weight")
    np.testing.assert_array_equal(to_np(m.weight_mask).ravel(), [0, 0, 0, 1, 0, 0])
