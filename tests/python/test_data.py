"""ferrograd.utils.data: datasets, samplers, collation and the DataLoader.

Oracles: the random streams are rebuilt from ferrograd's own generator
primitives following torch's documented draw order, plus a few orders
recorded from torch 2.13 for the same seeds; everything else is checked
against plain-Python reference computations and properties.
"""

from __future__ import annotations

import collections
import math
import warnings

import ferrograd as torch
import numpy as np
import pytest
from ferrograd.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)


def _index_batches(loader):
    return [b[0].tolist() for b in loader]


def _flat(batches):
    return [i for b in batches for i in b]


# ------------------------------------------------------------------ datasets


def test_tensor_dataset_returns_rows_of_every_tensor():
    x = torch.arange(12).reshape(4, 3)
    y = torch.tensor([10.0, 11.0, 12.0, 13.0])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    row, label = ds[2]
    assert row.tolist() == [6, 7, 8]
    assert label.item() == 12.0


def test_tensor_dataset_size_mismatch_raises_assertion_error():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(torch.zeros(3), torch.zeros(4))


def test_concat_dataset_indexes_across_parts_and_negative_indices():
    parts = [list(range(3)), list(range(10, 12)), list(range(20, 24))]
    ds = ConcatDataset(parts)
    flat = [v for p in parts for v in p]
    assert len(ds) == len(flat)
    assert [ds[i] for i in range(len(ds))] == flat
    assert [ds[-i] for i in range(1, len(ds) + 1)] == [flat[-i] for i in range(1, len(flat) + 1)]
    with pytest.raises(ValueError, match="absolute value of index"):
        ds[-len(flat) - 1]


def test_dataset_add_makes_concat_dataset():
    a = TensorDataset(torch.arange(3))
    b = TensorDataset(torch.arange(3, 5))
    ds = a + b
    assert isinstance(ds, ConcatDataset)
    assert [ds[i][0].item() for i in range(len(ds))] == [0, 1, 2, 3, 4]


def test_concat_dataset_rejects_empty_and_iterable_parts():
    with pytest.raises(AssertionError, match="empty iterable"):
        ConcatDataset([])

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(2))

    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Stream()])


def test_chain_and_stack_datasets():
    class Count(IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chained = Count(2) + Count(3)
    assert isinstance(chained, ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2]
    assert len(chained) == 5
    assert StackDataset(range(3), "abc")[1] == (1, "b")
    assert StackDataset(x=range(3), y="abc")[2] == {"x": 2, "y": "c"}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(range(3), "ab")


def test_subset_maps_indices_and_batched_fetch():
    base = list(range(100, 110))
    sub = Subset(base, [7, 2, 9])
    assert len(sub) == 3
    assert [sub[i] for i in range(3)] == [107, 102, 109]
    assert sub.__getitems__([2, 0]) == [109, 107]


def test_base_dataset_getitem_is_abstract():
    with pytest.raises(NotImplementedError):
        Dataset()[0]


# -------------------------------------------------------------- random_split


@pytest.mark.parametrize("n", [10, 11, 17])
def test_random_split_fractions_give_floored_sizes_plus_round_robin_remainder(n):
    fracs = [0.5, 0.3, 0.2]
    parts = random_split(range(n), fracs, generator=torch.Generator().manual_seed(1))
    expected = [math.floor(n * f) for f in fracs]
    for i in range(n - sum(expected)):
        expected[i % len(expected)] += 1
    assert [len(p) for p in parts] == expected
    items = [x for p in parts for x in p]
    assert sorted(items) == list(range(n))  # disjoint and covering


def test_random_split_order_is_randperm_of_the_generator():
    g = torch.Generator().manual_seed(3)
    parts = random_split(range(9), [4, 5], generator=g)
    perm = torch.randperm(9, generator=torch.Generator().manual_seed(3)).tolist()
    assert list(parts[0]) == perm[:4]
    assert list(parts[1]) == perm[4:]


def test_random_split_matches_torch_for_seed_42():
    # Recorded from torch 2.13: random_split(range(10), [0.5, 0.3, 0.2],
    # generator=torch.Generator().manual_seed(42)).
    parts = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(42))
    assert [list(p) for p in parts] == [[2, 6, 1, 8, 4], [5, 0, 9], [3, 7]]


def test_random_split_default_generator_follows_manual_seed():
    torch.manual_seed(5)
    a = [list(p) for p in random_split(range(8), [3, 5])]
    torch.manual_seed(5)
    b = [list(p) for p in random_split(range(8), [3, 5])]
    assert a == b


def test_random_split_errors_and_zero_length_warning():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(range(5), [2, 2])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(range(5), [0.5, 1.5, -1.0])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(2), [0.9, 0.1])


# ------------------------------------------------------------------ samplers


def test_sequential_sampler():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert len(SequentialSampler(range(5))) == 5


def test_random_sampler_without_replacement_is_a_permutation_per_epoch():
    s = RandomSampler(range(20))
    a, b = list(s), list(s)
    assert sorted(a) == list(range(20)) and sorted(b) == list(range(20))
    assert a != b  # reshuffled (probability 1/20! of a false failure)


def test_random_sampler_num_samples_concatenates_permutations():
    out = list(RandomSampler(range(4), num_samples=10, generator=torch.Generator().manual_seed(0)))
    assert len(out) == 10
    assert sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3]
    assert len(set(out[8:])) == 2


def test_random_sampler_with_replacement_draws_in_range_in_chunks_of_32():
    g = torch.Generator().manual_seed(9)
    out = list(RandomSampler(range(7), replacement=True, num_samples=70, generator=g))
    assert len(out) == 70 and all(0 <= i < 7 for i in out)
    # Reference: torch's draw pattern, 32 at a time then the remainder.
    ref_g = torch.Generator().manual_seed(9)
    ref = []
    for size in (32, 32, 6):
        ref += torch.randint(high=7, size=(size,), dtype=torch.int64, generator=ref_g).tolist()
    assert out == ref


def test_random_sampler_argument_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(range(3), num_samples=0)


def test_subset_random_sampler_permutes_the_given_indices():
    idx = [11, 4, 27, 8, 15]
    g = torch.Generator().manual_seed(2)
    out = list(SubsetRandomSampler(idx, generator=g))
    perm = torch.randperm(5, generator=torch.Generator().manual_seed(2)).tolist()
    assert out == [idx[i] for i in perm]
    assert len(SubsetRandomSampler(idx)) == 5


def test_weighted_random_sampler_frequencies_are_proportional_to_weights():
    weights = [1.0, 2.0, 0.0, 5.0]
    n = 40000
    s = WeightedRandomSampler(weights, n, generator=torch.Generator().manual_seed(0))
    counts = collections.Counter(s)
    total = sum(weights)
    assert counts[2] == 0
    for i, w in enumerate(weights):
        p = w / total
        # within 5 standard deviations of the binomial count
        assert abs(counts[i] - n * p) <= 5 * math.sqrt(n * p * (1 - p)) + 1


def test_weighted_random_sampler_without_replacement_gives_distinct_indices():
    out = list(WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 6, replacement=False))
    assert sorted(out) == list(range(6))


def test_weighted_random_sampler_argument_errors():
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        WeightedRandomSampler([1.0], True)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 2, replacement=0)
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 2)


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n,bs", [(10, 3), (9, 3), (2, 5), (0, 2)])
def test_batch_sampler_groups_in_order(n, bs, drop_last):
    batches = list(BatchSampler(SequentialSampler(range(n)), bs, drop_last))
    ref = [list(range(i, min(i + bs, n))) for i in range(0, n, bs)]
    if drop_last:
        ref = [b for b in ref if len(b) == bs]
    assert batches == ref
    assert len(BatchSampler(SequentialSampler(range(n)), bs, drop_last)) == len(ref)


def test_batch_sampler_argument_errors():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, 1)


# ------------------------------------------------------------------- collate


def test_default_collate_stacks_tensors():
    batch = [torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])]
    out = default_collate(batch)
    np.testing.assert_array_equal(out.numpy(), np.stack([b.numpy() for b in batch]))


def test_default_collate_numbers_use_torch_dtypes():
    assert default_collate([1, 2, 3]).dtype == torch.int64
    assert default_collate([1.5, 2.5]).dtype == torch.float64
    assert default_collate([True, False]).dtype == torch.bool
    assert default_collate([1.5, 2.5]).tolist() == [1.5, 2.5]


def test_default_collate_transposes_tuples_into_a_list():
    out = default_collate([(1, 0.5, "a"), (2, 1.5, "b")])
    assert isinstance(out, list) and len(out) == 3
    assert out[0].tolist() == [1, 2]
    assert out[1].tolist() == [0.5, 1.5]
    assert out[2] == ["a", "b"]


def test_default_collate_dicts_namedtuples_and_lists():
    Point = collections.namedtuple("Point", "x y")
    out = default_collate([{"p": Point(1, 2.0), "l": [1, 2]}, {"p": Point(3, 4.0), "l": [3, 4]}])
    assert isinstance(out["p"], Point)
    assert out["p"].x.tolist() == [1, 3] and out["p"].y.tolist() == [2.0, 4.0]
    assert [t.tolist() for t in out["l"]] == [[1, 3], [2, 4]]
    od = default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert isinstance(od, collections.OrderedDict) and od["a"].tolist() == [1, 2]


def test_default_collate_numpy_arrays_and_scalars():
    arrs = [np.arange(3, dtype=np.float32), np.arange(3, 6, dtype=np.float32)]
    out = default_collate(arrs)
    assert out.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(), np.stack(arrs))
    scalars = default_collate([np.int16(3), np.int16(-4)])
    assert scalars.dtype == torch.int16 and scalars.tolist() == [3, -4]
    f64 = default_collate([np.float64(0.25), np.float64(2.5)])
    assert f64.dtype == torch.float64 and f64.tolist() == [0.25, 2.5]


def test_default_collate_errors():
    with pytest.raises(TypeError, match="batch must contain tensors, numpy arrays, numbers"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="batch must contain"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [1]])


def test_default_convert_converts_numpy_and_keeps_everything_else():
    out = default_convert({"x": np.array([1, 2]), "s": "txt", "t": (np.float64(1.5), 3)})
    assert out["x"].tolist() == [1, 2] and out["x"].dtype == torch.int64
    assert out["s"] == "txt"
    assert isinstance(out["t"], list)
    assert out["t"][0].item() == 1.5 and out["t"][0].dtype == torch.float64
    assert out["t"][1] == 3
    t = torch.ones(2)
    assert default_convert(t) is t


# ---------------------------------------------------------------- DataLoader


def test_dataloader_batches_in_order_with_and_without_drop_last():
    ds = TensorDataset(torch.arange(10))
    assert _index_batches(DataLoader(ds, batch_size=4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _index_batches(DataLoader(ds, batch_size=4, drop_last=True)) == [[0, 1, 2, 3], [4, 5, 6, 7]]


@pytest.mark.parametrize("n,bs", [(10, 3), (12, 4), (5, 7)])
def test_dataloader_len(n, bs):
    ds = TensorDataset(torch.arange(n))
    assert len(DataLoader(ds, batch_size=bs)) == math.ceil(n / bs)
    assert len(DataLoader(ds, batch_size=bs, drop_last=True)) == n // bs
    assert len(DataLoader(ds, batch_size=bs)) == len(list(DataLoader(ds, batch_size=bs)))


def test_dataloader_shuffle_is_deterministic_under_manual_seed():
    ds = TensorDataset(torch.arange(50))
    torch.manual_seed(123)
    a = _index_batches(DataLoader(ds, batch_size=8, shuffle=True))
    torch.manual_seed(123)
    b = _index_batches(DataLoader(ds, batch_size=8, shuffle=True))
    torch.manual_seed(124)
    c = _index_batches(DataLoader(ds, batch_size=8, shuffle=True))
    assert a == b
    assert a != c
    assert sorted(_flat(a)) == list(range(50))
    assert [len(x) for x in a] == [8] * 6 + [2]


def test_dataloader_shuffle_follows_torchs_draw_order():
    # torch draws the iterator's base seed, then the sampler's seed, from the
    # global generator, and permutes with a fresh generator seeded by the latter.
    ds = TensorDataset(torch.arange(13))
    torch.manual_seed(7)
    got = _flat(_index_batches(DataLoader(ds, batch_size=5, shuffle=True)))
    torch.manual_seed(7)
    torch.empty((), dtype=torch.int64).random_()
    seed = int(torch.empty((), dtype=torch.int64).random_().item())
    expected = torch.randperm(13, generator=torch.Generator().manual_seed(seed)).tolist()
    assert got == expected


def test_dataloader_shuffle_matches_torch_for_seed_0():
    # Recorded from torch 2.13: manual_seed(0); two epochs of
    # DataLoader(TensorDataset(arange(10)), batch_size=3, shuffle=True).
    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(torch.arange(10)), batch_size=3, shuffle=True)
    assert _index_batches(loader) == [[6, 7, 1], [4, 2, 0], [9, 8, 3], [5]]
    assert _index_batches(loader) == [[2, 4, 7], [0, 8, 9], [5, 3, 6], [1]]


def test_dataloader_with_generator_does_not_touch_the_global_stream():
    ds = TensorDataset(torch.arange(20))
    torch.manual_seed(0)
    ref = torch.rand(3).tolist()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(11)
    a = _index_batches(DataLoader(ds, batch_size=6, shuffle=True, generator=g))
    assert torch.rand(3).tolist() == ref
    g.manual_seed(11)
    b = _index_batches(DataLoader(ds, batch_size=6, shuffle=True, generator=g))
    assert a == b


def test_dataloader_batch_size_none_converts_single_samples():
    class Arrays(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return np.full(2, i, dtype=np.int32)

    out = list(DataLoader(Arrays(), batch_size=None))
    assert [t.tolist() for t in out] == [[0, 0], [1, 1], [2, 2]]
    assert all(t.dtype == torch.int32 for t in out)


def test_dataloader_custom_sampler_batch_sampler_and_collate_fn():
    ds = list(range(100, 110))
    assert [b.tolist() for b in DataLoader(ds, batch_size=2, sampler=[9, 0, 5])] == [[109, 100], [105]]
    assert [b.tolist() for b in DataLoader(ds, batch_sampler=[[1, 2], [7]])] == [[101, 102], [107]]
    assert list(DataLoader(ds, batch_size=4, collate_fn=sum)) == [406, 422, 217]


def test_dataloader_uses_dataset_getitems_when_present():
    class Batched(Dataset):
        calls: list[list[int]] = []

        def __len__(self):
            return 5

        def __getitem__(self, i):
            raise AssertionError("per-item access not expected")

        def __getitems__(self, idx):
            self.calls.append(list(idx))
            return [i * 10 for i in idx]

    out = [b.tolist() for b in DataLoader(Batched(), batch_size=2)]
    assert out == [[0, 10], [20, 30], [40]]
    assert Batched.calls == [[0, 1], [2, 3], [4]]


def test_dataloader_iterable_dataset_batches_and_len():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    loader = DataLoader(Stream(), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(loader) == 3
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert len(DataLoader(Stream(), batch_size=3, drop_last=True)) == 2
    assert list(DataLoader(Stream(), batch_size=None)) == list(range(7))  # ints stay ints


def test_dataloader_iterable_dataset_rejects_shuffle_and_samplers():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(), sampler=[0])


def test_dataloader_option_errors():
    ds = list(range(4))
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(ds, timeout=-1)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    loader = DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader"):
        loader.batch_size = 3


def test_num_workers_runs_in_process_with_the_same_batches():
    ds = TensorDataset(torch.arange(11))
    torch.manual_seed(3)
    a = _index_batches(DataLoader(ds, batch_size=4, shuffle=True))
    torch.manual_seed(3)
    b = _index_batches(DataLoader(ds, batch_size=4, shuffle=True, num_workers=2))
    assert a == b
    assert get_worker_info() is None


def test_pin_memory_warns_without_accelerator():
    with pytest.warns(UserWarning, match="no accelerator is found"):
        list(DataLoader(list(range(2)), pin_memory=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(DataLoader(list(range(2))))
