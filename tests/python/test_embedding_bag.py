"""nn.functional.embedding_bag and nn.EmbeddingBag: values against a NumPy loop
over the bags written here (every mode, 2-D input, 1-D input with offsets and
include_last_offset, per_sample_weights, padding_idx, empty bags), gradients
against float64 central differences, the module's parameters, repr and
from_pretrained, and the errors for bad arguments."""

import warnings

import ferrograd as torch
import numpy as np
import pytest
from ferrograd import nn
from ferrograd.nn import functional as F
from gradcheck_util import check_grad

RNG = np.random.default_rng(7)


def bags_reference(inp, weight, offsets=None, mode="mean", psw=None, include_last_offset=False,
                   padding_idx=None):
    """Loops over the bags: the sum, mean or max of the bag's rows, padding left out,
    zeros for an empty bag."""
    inp = np.asarray(inp)
    if inp.ndim == 2:
        n = inp.shape[1]
        bounds = [(b * n, (b + 1) * n) for b in range(inp.shape[0])]
        inp = inp.reshape(-1)
        psw = None if psw is None else np.asarray(psw).reshape(-1)
    else:
        offs = list(offsets)
        if include_last_offset:
            bounds = list(zip(offs[:-1], offs[1:], strict=True))
        else:
            bounds = list(zip(offs, offs[1:] + [len(inp)], strict=False))  # no bags if no offsets
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    out = np.zeros((len(bounds), weight.shape[1]))
    for b, (start, end) in enumerate(bounds):
        picked = [p for p in range(start, end) if inp[p] != padding_idx]
        if not picked:
            continue
        rows = np.stack([weight[inp[p]] * (1.0 if psw is None else psw[p]) for p in picked])
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


INPUT = np.array([1, 2, 0, 5, 5, 3, 2, 6, 6, 1])
OFFSET_CASES = [
    ([0, 3, 3, 7], False),  # an empty bag in the middle
    ([0, 3, 3, 7, 10], True),
    ([0, 2, 8], True),  # positions after the last offset belong to no bag
    ([0, 0, 10], False),  # empty first and last bags
    ([], False),  # no bags
    ([0], True),
]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize(("offsets", "include_last_offset"), OFFSET_CASES)
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_one_d_input_with_offsets_matches_the_loop(mode, offsets, include_last_offset, padding_idx):
    weight = RNG.standard_normal((7, 3))
    got = F.embedding_bag(
        torch.tensor(INPUT), torch.tensor(weight), torch.tensor(offsets, dtype=torch.int64), mode=mode,
        include_last_offset=include_last_offset, padding_idx=padding_idx,
    )
    want = bags_reference(INPUT, weight, offsets, mode, None, include_last_offset, padding_idx)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 0])
def test_two_d_input_is_fixed_size_bags(mode, padding_idx):
    weight = RNG.standard_normal((5, 4))
    inp = np.array([[1, 1, 3], [0, 2, 2], [0, 0, 0]])  # the last bag is all padding with padding_idx=0
    got = F.embedding_bag(torch.tensor(inp), torch.tensor(weight), mode=mode, padding_idx=padding_idx)
    want = bags_reference(inp, weight, mode=mode, padding_idx=padding_idx)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    if padding_idx is not None:
        assert np.all(got.numpy()[2] == 0)


@pytest.mark.parametrize("two_d", [False, True])
def test_per_sample_weights_multiply_each_row_before_the_sum(two_d):
    weight = RNG.standard_normal((7, 3))
    psw = RNG.standard_normal(INPUT.shape)
    if two_d:
        inp, p, offsets = INPUT.reshape(2, 5), psw.reshape(2, 5), None
    else:
        inp, p, offsets = INPUT, psw, [0, 4, 4]
    got = F.embedding_bag(
        torch.tensor(inp), torch.tensor(weight), None if offsets is None else torch.tensor(offsets),
        mode="sum", per_sample_weights=torch.tensor(p), padding_idx=5,
    )
    want = bags_reference(inp, weight, offsets, "sum", p, padding_idx=5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_int32_indices_and_offsets_give_the_int64_result():
    weight = torch.tensor(RNG.standard_normal((7, 3)))
    want = F.embedding_bag(torch.tensor(INPUT), weight, torch.tensor([0, 4]), mode="max")
    got = F.embedding_bag(
        torch.tensor(INPUT, dtype=torch.int32), weight, torch.tensor([0, 4], dtype=torch.int32), mode="max"
    )
    assert torch.equal(got, want)


def test_float32_weight_gives_float32():
    out = F.embedding_bag(torch.tensor([[0, 1]]), torch.ones(3, 2), mode="sum")
    assert out.dtype == torch.float32
    assert out.tolist() == [[2.0, 2.0]]


# ---------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_weight_gradient_matches_finite_differences(mode, padding_idx):
    # Distinct values, so the max of each column of a bag is away from ties.
    weight = RNG.permutation(21).reshape(7, 3) / 7.0
    offsets = torch.tensor([0, 3, 3, 7])

    def fn(w):
        return F.embedding_bag(torch.tensor(INPUT), w, offsets, mode=mode, padding_idx=padding_idx)

    check_grad(fn, [weight], forward=False, second_order=False)


def test_per_sample_weights_gradient_matches_finite_differences():
    weight = RNG.standard_normal((7, 3))
    psw = RNG.standard_normal(INPUT.shape)

    def fn(w, p):
        return F.embedding_bag(
            torch.tensor(INPUT), w, torch.tensor([0, 3, 3, 7]), mode="sum", per_sample_weights=p,
            padding_idx=6,
        )

    check_grad(fn, [weight, psw], forward=False)


def test_padding_rows_and_weights_get_no_gradient():
    weight = torch.tensor(RNG.standard_normal((7, 3)), requires_grad=True)
    psw = torch.tensor(RNG.standard_normal(INPUT.shape), requires_grad=True)
    F.embedding_bag(
        torch.tensor(INPUT), weight, torch.tensor([0, 5]), mode="sum", per_sample_weights=psw, padding_idx=5
    ).sum().backward()
    assert np.all(weight.grad.numpy()[5] == 0)
    assert np.all(psw.grad.numpy()[INPUT == 5] == 0)
    assert np.all(psw.grad.numpy()[INPUT != 5] != 0)


def test_max_gradient_goes_to_the_first_maximum_of_each_column():
    weight = torch.tensor([[1.0, 2.0], [1.0, 3.0], [0.0, 0.0]], requires_grad=True)
    F.embedding_bag(torch.tensor([0, 1, 1, 0]), weight, torch.tensor([0]), mode="max").sum().backward()
    assert weight.grad.tolist() == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]


def test_mean_gradient_divides_by_the_count_without_padding():
    weight = torch.zeros(4, 2, requires_grad=True)
    F.embedding_bag(torch.tensor([[1, 3, 0, 3]]), weight, padding_idx=0).sum().backward()
    want = [[0, 0], [1 / 3, 1 / 3], [0, 0], [2 / 3, 2 / 3]]
    np.testing.assert_allclose(weight.grad.numpy(), want, rtol=1e-6)


def test_scale_grad_by_freq_divides_by_the_count_in_the_input():
    weight = torch.zeros(4, 2, requires_grad=True)
    grad_out = torch.tensor([[1.0, 1.0], [10.0, 10.0]])
    F.embedding_bag(torch.tensor([1, 1, 2, 1]), weight, torch.tensor([0, 2]), mode="sum",
                    scale_grad_by_freq=True).backward(grad_out)
    # index 1: (1 + 1 + 10) / 3; index 2: 10 / 1
    np.testing.assert_allclose(weight.grad.numpy(), [[0, 0], [4, 4], [10, 10], [0, 0]])


def test_empty_result_still_reaches_weight():
    weight = torch.ones(3, 2, requires_grad=True)
    out = F.embedding_bag(torch.tensor([], dtype=torch.int64), weight, torch.tensor([0, 0]), mode="max")
    assert out.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    out.sum().backward()
    assert weight.grad.tolist() == [[0.0, 0.0]] * 3


def test_max_norm_renormalises_the_looked_up_rows_in_place():
    weight = torch.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    out = F.embedding_bag(torch.tensor([0, 1]), weight, torch.tensor([0]), max_norm=1.0, mode="sum")
    np.testing.assert_allclose(weight.numpy()[0], [0.6, 0.8], rtol=1e-5)
    np.testing.assert_allclose(weight.numpy()[2], [6.0, 8.0])  # not looked up
    np.testing.assert_allclose(out.numpy(), [[0.9, 1.2]], rtol=1e-5)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

W = torch.zeros(10, 3)
I1 = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: F.embedding_bag(I1, W, torch.tensor([1, 4])), RuntimeError, r"offsets\[0\] has to be 0"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0, 9])), RuntimeError,
         r"offsets\[-1\] can not be greater than input's length 8"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0, 5, 3])), RuntimeError, "non-decreasing"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([], dtype=torch.int64), include_last_offset=True),
         RuntimeError, "number of offset should be at least 1"),
        (lambda: F.embedding_bag(torch.tensor([1, 10]), W, torch.tensor([0])), RuntimeError,
         r"Index 1 of input takes value 10 which is not in the valid range \[0, 10\)"),
        (lambda: F.embedding_bag(torch.tensor([-1]), W, torch.tensor([0])), RuntimeError, "valid range"),
        (lambda: F.embedding_bag(torch.tensor([1.0]), W, torch.tensor([0])), RuntimeError,
         "Long, Int; but got torch.FloatTensor"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0.0])), RuntimeError, "Long, Int"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0, 4]), per_sample_weights=torch.ones(8)),
         NotImplementedError, "only supported for mode='sum'"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0]), mode="sum", per_sample_weights=torch.ones(7)),
         ValueError, "must have the same shape as the input"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0]), mode="sum",
                                 per_sample_weights=torch.ones(8, dtype=torch.float64)),
         RuntimeError, "to have the same type as tensor"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0]), mode="min"), ValueError,
         "one of sum, mean or max"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0]), mode="max", scale_grad_by_freq=True), ValueError,
         "scaling the gradient by the frequency"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0]), mode="max", sparse=True), ValueError,
         "max mode does not support sparse weights"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0]), sparse=True), RuntimeError, "sparse gradients"),
        (lambda: F.embedding_bag(I1.view(2, 4), W, torch.tensor([0, 4])), ValueError,
         "if input is 2D, then offsets has to be None"),
        (lambda: F.embedding_bag(I1, W), ValueError, "offsets has to be a 1D Tensor but got None"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([[0]])), ValueError, "offsets has to be a 1D Tensor"),
        (lambda: F.embedding_bag(I1.view(2, 2, 2), W), ValueError, "input has to be 1D or 2D Tensor"),
        (lambda: F.embedding_bag(I1, W[0], torch.tensor([0])), ValueError, "weight has to be a 2D Tensor"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0]), padding_idx=10), RuntimeError,
         "padding_idx must be within the number of embeddings, -10 through 9, but got 10"),
        (lambda: F.embedding_bag(I1, W, torch.tensor([0]), padding_idx=-11), RuntimeError, "but got -11"),
        (lambda: F.embedding_bag(torch.zeros(3, 0, dtype=torch.int64), W), RuntimeError,
         "step must be nonzero"),
    ],
)
def test_bad_arguments_raise_torchs_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_swapped_weight_and_input_warn_and_still_work():
    weight = torch.tensor(RNG.standard_normal((10, 3)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = F.embedding_bag(weight, I1.view(2, 4))
    assert any("Argument order of nn.functional.embedding_bag was changed" in str(w.message) for w in caught)
    assert torch.equal(got, F.embedding_bag(I1.view(2, 4), weight))


# ---------------------------------------------------------------------------
# nn.EmbeddingBag
# ---------------------------------------------------------------------------


def test_module_parameters_init_and_forward():
    torch.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-1)
    assert bag.padding_idx == 9
    assert list(bag.state_dict()) == ["weight"]
    assert tuple(bag.weight.shape) == (10, 3) and bag.weight.requires_grad
    assert np.all(bag.weight.detach().numpy()[9] == 0)
    assert np.all(bag.weight.detach().numpy()[:9] != 0)
    torch.manual_seed(0)
    drawn = nn.init.normal_(torch.empty(10, 3))
    np.testing.assert_array_equal(bag.weight.detach().numpy()[:9], drawn.numpy()[:9])
    psw = torch.tensor(RNG.standard_normal(8), dtype=torch.float32)
    got = bag(I1, torch.tensor([0, 3]), per_sample_weights=psw)
    want = bags_reference(I1.numpy(), bag.weight.detach().numpy(), [0, 3], "sum", psw.numpy(), padding_idx=9)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-5, atol=1e-6)


def test_module_include_last_offset_and_default_mean():
    w = RNG.standard_normal((10, 3))
    bag = nn.EmbeddingBag(10, 3, include_last_offset=True, _weight=torch.tensor(w))
    got = bag(I1, torch.tensor([0, 2, 6]))
    np.testing.assert_allclose(got.detach().numpy(), bags_reference(I1.numpy(), w, [0, 2, 6], "mean",
                                                                    include_last_offset=True))


def test_module_repr_in_torchs_format():
    assert repr(nn.EmbeddingBag(10, 3)) == "EmbeddingBag(10, 3, mode='mean')"
    assert repr(nn.EmbeddingBag(10, 3, max_norm=1.0, mode="max", padding_idx=-1)) == (
        "EmbeddingBag(10, 3, max_norm=1.0, mode='max', padding_idx=9)"
    )
    assert repr(nn.EmbeddingBag(10, 3, norm_type=3.0, scale_grad_by_freq=True, mode="sum")) == (
        "EmbeddingBag(10, 3, norm_type=3.0, scale_grad_by_freq=True, mode='sum')"
    )


def test_module_constructor_errors():
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(10, 3, padding_idx=10)
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(10, 3, padding_idx=-11)
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        nn.EmbeddingBag(10, 3, _weight=torch.zeros(3, 3))
    with pytest.raises(AssertionError, match="expected to be 2-dimensional"):
        nn.EmbeddingBag.from_pretrained(torch.zeros(3))


def test_from_pretrained_shares_the_tensor_and_freezes_by_default():
    table = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    bag = nn.EmbeddingBag.from_pretrained(table, mode="max", padding_idx=2)
    assert not bag.weight.requires_grad
    assert bag.mode == "max" and bag.padding_idx == 2
    assert bag(torch.tensor([[0, 1, 2]])).tolist() == [[3.0, 4.0]]
    table[0, 0] = 9.0
    assert float(bag.weight[0, 0]) == 9.0
    trainable = nn.EmbeddingBag.from_pretrained(table, freeze=False, mode="sum")
    trainable(torch.tensor([[0, 0]])).sum().backward()
    assert trainable.weight.grad.tolist() == [[2.0, 2.0], [0.0, 0.0], [0.0, 0.0]]


def test_module_sparse_behaves_as_embedding_sparse():
    with pytest.raises(RuntimeError, match="sparse"):
        nn.Embedding(10, 3, sparse=True)(torch.tensor([1]))
    with pytest.raises(RuntimeError, match="sparse"):
        nn.EmbeddingBag(10, 3, sparse=True)(torch.tensor([[1]]))
