"""``F.ctc_loss``/``nn.CTCLoss``, ``F.multilabel_margin_loss``/
``nn.MultiLabelMarginLoss`` and ``F.linear_cross_entropy``.

Oracles: a NumPy sum over every alignment (tiny cases) and a NumPy forward
recursion for CTC (``nn_reference``), the occupation-probability property of
the CTC gradient, NumPy formulas for the other losses, float64 central
differences (gradcheck, gradgradcheck, forward mode) and ``vmap`` against a
loop.
"""

from __future__ import annotations

import math

import ferrograd as fg
import ferrograd.nn.functional as F
import numpy as np
import pytest
from ferrograd.autograd import gradcheck, gradgradcheck
from ferrograd.func import vmap
from nn_reference import ctc_brute, ctc_dp, log_softmax, multilabel_margin

pytestmark = pytest.mark.timeout(120)

RNG = np.random.default_rng(0)


def log_probs(steps: int, batch: int, classes: int) -> np.ndarray:
    return log_softmax(RNG.standard_normal((steps, batch, classes)))


# ---------------------------------------------------------------------------
# CTC: values


@pytest.mark.parametrize(("steps", "classes", "target"), [
    (1, 2, [1]), (2, 2, [1]), (3, 2, [1, 1]), (3, 3, [1, 2]), (4, 3, [2, 2]), (4, 3, []), (3, 3, [2]),
    (5, 2, [1, 1]),
])  # fmt: skip
def test_ctc_reference_recursion_equals_the_sum_over_alignments(steps, classes, target):
    lp = log_probs(steps, 1, classes)[:, 0]
    assert ctc_dp(lp, target) == pytest.approx(ctc_brute(lp, target), rel=1e-12)


@pytest.mark.parametrize(("steps", "classes", "target"), [
    (1, 2, [1]), (2, 2, [1]), (3, 2, [1, 1]), (3, 3, [1, 2]), (4, 3, [2, 2]), (4, 3, []), (5, 2, [1, 1]),
])  # fmt: skip
def test_ctc_equals_the_sum_over_alignments(steps, classes, target):
    lp = log_probs(steps, 1, classes)[:, 0]
    got = F.ctc_loss(fg.tensor(lp), fg.tensor(target, dtype=fg.int64), (steps,), (len(target),),
                     reduction="none")
    assert got.dim() == 0
    assert float(got) == pytest.approx(ctc_brute(lp, target), rel=1e-10)


def batch_case(blank: int = 0):
    """Log-probabilities (T=8, N=4, C=5) and targets of lengths 3, 0, 5, 2
    with inputs of lengths 8, 3, 7, 2 (labels avoid ``blank``)."""
    lp = log_probs(8, 4, 5)
    in_lens, tg_lens = [8, 3, 7, 2], [3, 0, 5, 2]
    labels = [int(k) for k in RNG.choice([c for c in range(5) if c != blank], size=sum(tg_lens))]
    labels[5:7] = [labels[4], labels[4]]  # a repeat inside the third target
    return lp, in_lens, tg_lens, labels


def split(labels: list[int], lengths: list[int]) -> list[list[int]]:
    out, start = [], 0
    for n in lengths:
        out.append(labels[start : start + n])
        start += n
    return out


def padded(targets: list[list[int]], width: int, fill: int = 0) -> fg.Tensor:
    return fg.tensor([t + [fill] * (width - len(t)) for t in targets], dtype=fg.int64)


@pytest.mark.parametrize("blank", [0, 2, 4])
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_ctc_batch_equals_the_recursion_per_sequence(blank, layout):
    lp, in_lens, tg_lens, labels = batch_case(blank)
    targets = split(labels, tg_lens)
    tg = padded(targets, 6, fill=3) if layout == "padded" else fg.tensor(labels, dtype=fg.int64)
    got = F.ctc_loss(fg.tensor(lp), tg, fg.tensor(in_lens), fg.tensor(tg_lens), blank=blank, reduction="none")
    want = [ctc_dp(lp[: in_lens[n], n], targets[n], blank) for n in range(4)]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_ctc_reductions_divide_by_the_target_length_for_the_mean():
    lp, in_lens, tg_lens, labels = batch_case()
    tg = fg.tensor(labels, dtype=fg.int64)
    per = np.array([ctc_dp(lp[: in_lens[n], n], t) for n, t in enumerate(split(labels, tg_lens))])
    args = (fg.tensor(lp), tg, tuple(in_lens), list(tg_lens))
    assert float(F.ctc_loss(*args)) == pytest.approx(np.mean(per / np.maximum(tg_lens, 1)), rel=1e-10)
    assert float(F.ctc_loss(*args, reduction="sum")) == pytest.approx(per.sum(), rel=1e-10)
    assert float(fg.ctc_loss(*args, 0, 2)) == pytest.approx(per.sum(), rel=1e-10)  # torch.ctc_loss's ints
    assert float(fg.nn.CTCLoss(reduction="sum")(*args)) == pytest.approx(per.sum(), rel=1e-10)


def test_ctc_unbatched_and_float32():
    lp = log_probs(6, 1, 4)[:, 0]
    got = F.ctc_loss(fg.tensor(lp, dtype=fg.float32), fg.tensor([1, 3, 3]), fg.tensor(6), fg.tensor(3))
    assert got.dtype == fg.float32 and got.dim() == 0
    assert float(got) == pytest.approx(ctc_dp(lp, [1, 3, 3]) / 3, rel=1e-5)


def test_ctc_impossible_target_is_infinite_or_zero_with_zero_infinity():
    lp = log_probs(4, 2, 3)
    tg = fg.tensor([[1, 1, 2], [2, 1, 0]])
    x = fg.tensor(lp, requires_grad=True)
    loss = F.ctc_loss(x, tg, (3, 4), (3, 2), reduction="none")  # [1, 1, 2] needs 4 frames
    assert math.isinf(float(loss[0])) and float(loss[0]) > 0
    assert float(loss[1]) == pytest.approx(ctc_dp(lp[:, 1], [2, 1]), rel=1e-10)
    zeroed = F.ctc_loss(x, tg, (3, 4), (3, 2), reduction="sum", zero_infinity=True)
    assert float(zeroed) == pytest.approx(float(loss[1]), rel=1e-12)
    zeroed.backward()
    assert np.all(x.grad.numpy()[:, 0] == 0) and np.isfinite(x.grad.numpy()).all()
    assert np.abs(x.grad.numpy()[:, 1]).sum() > 0


def test_ctc_empty_input_and_target():
    lp = log_probs(3, 2, 3)
    got = F.ctc_loss(fg.tensor(lp), fg.tensor([[1], [1]]), (0, 0), (0, 1), reduction="none")
    assert float(got[0]) == 0.0 and math.isinf(float(got[1]))


# ---------------------------------------------------------------------------
# CTC: gradients


def test_ctc_gradient_is_minus_the_label_occupation():
    """d loss / d log_probs[t, n, k] is minus the posterior probability of
    emitting k at frame t: each frame's gradient sums to -1 within the input
    and is 0 after it."""
    lp, in_lens, tg_lens, labels = batch_case()
    x = fg.tensor(lp, requires_grad=True)
    F.ctc_loss(x, fg.tensor(labels), in_lens, tg_lens, reduction="sum").backward()
    g = x.grad.numpy()
    assert (g <= 1e-12).all()
    frame_sums = g.sum(-1)
    for n, length in enumerate(in_lens):
        np.testing.assert_allclose(frame_sums[:length, n], -1.0, rtol=1e-10)
        assert np.all(g[length:, n] == 0)


def test_ctc_gradcheck_and_gradgradcheck():
    x = fg.tensor(RNG.standard_normal((5, 2, 4)), requires_grad=True)
    tg = fg.tensor([[1, 2], [3, 3]])

    def through_log_softmax(a):
        return F.ctc_loss(a.log_softmax(2), tg, (5, 4), (2, 2), reduction="none")

    def raw(a):
        return F.ctc_loss(a, tg, (5, 4), (2, 2))

    assert gradcheck(through_log_softmax, (x,), check_forward_ad=True)
    assert gradgradcheck(through_log_softmax, (x,))
    assert gradcheck(raw, (x,), check_forward_ad=True)


def test_ctc_vmap_equals_a_loop():
    xs = fg.tensor(RNG.standard_normal((3, 5, 2, 4)))
    tg = fg.tensor([[1, 2], [3, 3]])

    def f(a):
        return F.ctc_loss(a.log_softmax(-1), tg, (5, 4), (2, 2), reduction="none")

    np.testing.assert_allclose(vmap(f)(xs).numpy(), np.stack([f(x).numpy() for x in xs]), rtol=1e-12)


# ---------------------------------------------------------------------------
# CTC: errors


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"blank": 4}, "blank must be in label range"),
    ({"input_lengths": (6, 6)}, "input_lengths to have value at most 5"),
    ({"input_lengths": (5,)}, "input_lengths must be of size batch_size"),
    ({"target_lengths": (2, 2, 1)}, "target_lengths must be of size batch_size"),
    ({"target_lengths": (3, 2)}, "size at least 3 at dimension 1"),
    ({"target_lengths": (-1, 2)}, "at least 0"),
    ({"input_lengths": fg.tensor([5.0, 4.0])}, "must be integral"),
    ({"targets": fg.tensor([1, 2, 3])}, "size 4 at dimension 0"),
    ({"targets": fg.tensor([[1, 7], [3, 3]])}, "target labels must be in"),
    ({"log_probs": fg.zeros(5, 2, 4, 1)}, "expected log_probs of 3 dimensions"),
])  # fmt: skip
def test_ctc_errors(kwargs, match):
    args = {"log_probs": fg.zeros(5, 2, 4), "targets": fg.tensor([[1, 2], [3, 3]]),
            "input_lengths": (5, 4), "target_lengths": (2, 2)}
    args.update(kwargs)
    with pytest.raises(RuntimeError, match=match):
        F.ctc_loss(**args)


def test_ctc_refuses_half_and_bad_reduction():
    with pytest.raises(NotImplementedError):
        F.ctc_loss(fg.zeros(2, 1, 3, dtype=fg.float16), fg.tensor([[1]]), (2,), (1,))
    with pytest.raises(ValueError):
        F.ctc_loss(fg.zeros(2, 1, 3), fg.tensor([[1]]), (2,), (1,), reduction="avg")


# ---------------------------------------------------------------------------
# multilabel_margin_loss


def test_multilabel_margin_equals_the_formula():
    x = RNG.standard_normal((5, 4))
    y = np.array([[3, 0, -1, 1], [2, 2, -1, -1], [-1, 0, 0, 0], [0, 1, 2, 3], [1, -1, 3, 3]])
    want = multilabel_margin(x, y)
    got = F.multilabel_margin_loss(fg.tensor(x), fg.tensor(y), reduction="none")
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    assert float(F.multilabel_margin_loss(fg.tensor(x), fg.tensor(y))) == pytest.approx(want.mean())
    assert float(fg.nn.MultiLabelMarginLoss(reduction="sum")(fg.tensor(x), fg.tensor(y))) == pytest.approx(
        want.sum())
    one = F.multilabel_margin_loss(fg.tensor(x[0]), fg.tensor(y[0]), reduction="none")
    assert one.dim() == 0 and float(one) == pytest.approx(want[0])


def test_multilabel_margin_gradients():
    # Scores spread apart so no hinge sits at its kink.
    x = fg.tensor(np.array([[0.1, 1.7, -2.9, 4.3, 0.55], [-1.3, 2.35, 0.8, -0.45, 3.1]]), requires_grad=True)
    y = fg.tensor([[3, 0, -1, 1, 1], [4, -1, 0, 0, 0]])
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, y, reduction="none"), (x,), check_forward_ad=True)


def test_multilabel_margin_errors():
    x = fg.zeros(2, 3)
    with pytest.raises(RuntimeError, match="Long"):
        F.multilabel_margin_loss(x, fg.zeros(2, 3))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(x, fg.zeros(2, 2, dtype=fg.int64))
    with pytest.raises(RuntimeError, match="out of range"):
        F.multilabel_margin_loss(x, fg.tensor([[3, -1, 0], [0, 1, 2]]))
    with pytest.raises(RuntimeError, match="non-empty vector or matrix"):
        F.multilabel_margin_loss(fg.zeros(1, 1, 3), fg.zeros(1, 1, 3, dtype=fg.int64))


# ---------------------------------------------------------------------------
# linear_cross_entropy


def cross_entropy_np(logits: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``-log_softmax(logits)[n, target[n], ...]`` over class dim 1."""
    lp = log_softmax(logits, axis=1)
    return -np.take_along_axis(lp, target[:, None], axis=1)[:, 0]


def test_linear_cross_entropy_is_cross_entropy_of_the_linear_map():
    x, w, b = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3)), RNG.standard_normal(5)
    t = np.array([0, 4, 2, 2])
    got = F.linear_cross_entropy(fg.tensor(x), fg.tensor(w), fg.tensor(t), linear_bias=fg.tensor(b),
                                 reduction="none")
    np.testing.assert_allclose(got.numpy(), cross_entropy_np(x @ w.T + b, t), rtol=1e-12)
    ignored = F.linear_cross_entropy(fg.tensor(x), fg.tensor(w), fg.tensor([0, 4, -100, 2]))
    assert float(ignored) == pytest.approx(cross_entropy_np(x @ w.T, t)[[0, 1, 3]].mean())


def test_linear_cross_entropy_with_a_k_dimensional_weight():
    x, w, b = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 2, 4)), RNG.standard_normal((5, 2))
    t = RNG.integers(0, 5, size=(3, 2))
    got = F.linear_cross_entropy(fg.tensor(x), fg.tensor(w), fg.tensor(t), linear_bias=fg.tensor(b),
                                 reduction="none")
    want = cross_entropy_np(np.einsum("ni,cki->nck", x, w) + b, t)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    xt, wt = fg.tensor(x, requires_grad=True), fg.tensor(w, requires_grad=True)
    assert gradcheck(lambda a, b_: F.linear_cross_entropy(a, b_, fg.tensor(t), label_smoothing=0.2), (xt, wt))


def test_linear_cross_entropy_errors():
    with pytest.raises(RuntimeError, match="in_features"):
        F.linear_cross_entropy(fg.zeros(2, 3), fg.zeros(4, 2), fg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="requires batched input"):
        F.linear_cross_entropy(fg.zeros(3), fg.zeros(4, 2, 3), fg.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="expected linear_bias shape"):
        F.linear_cross_entropy(fg.zeros(2, 3), fg.zeros(4, 2, 3), fg.zeros(2, 2, dtype=fg.int64),
                               linear_bias=fg.zeros(4))
