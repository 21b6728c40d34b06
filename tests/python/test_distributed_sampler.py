"""ferrograd.utils.data.DistributedSampler.

Oracles: shares and lengths worked out by hand for small cases, properties
that follow from the documented rule (every replica's share interleaved back
together is the padded or trimmed index list; the shares cover the dataset
and are disjoint when nothing is padded), and the shuffled order rebuilt
from ``ferrograd.Generator`` / ``ferrograd.randperm`` seeded with
``seed + epoch``. The ``ferrograd.distributed`` defaults are checked with
stand-in modules, so these tests never start a process group.
"""

from __future__ import annotations

import math
import sys
import types

import ferrograd as torch
import ferrograd.utils.data as data
import pytest
from ferrograd.utils.data import DataLoader, DistributedSampler, Sampler, TensorDataset


def _shares(n, num_replicas, **kwargs):
    """The list of indices of every rank, for a dataset of length ``n``."""
    return [
        list(DistributedSampler(range(n), num_replicas=num_replicas, rank=r, **kwargs))
        for r in range(num_replicas)
    ]


def _interleave(shares):
    """Undo the ``rank::num_replicas`` split: position ``j * R + r`` of the
    global list is entry ``j`` of rank ``r``'s share."""
    return [share[j] for j in range(len(shares[0])) for share in shares]


def _permutation(n, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return torch.randperm(n, generator=g).tolist()


GRID = [(n, r) for n in (0, 1, 2, 3, 5, 7, 10, 12, 13, 31) for r in (1, 2, 3, 4, 5, 8, 16)]


# ----------------------------------------------------------------- lengths


@pytest.mark.parametrize(
    "n, replicas, drop_last, num_samples",
    [
        (10, 3, False, 4),  # 10 -> padded to 12
        (10, 3, True, 3),  # 10 -> cut to 9
        (9, 3, False, 3),
        (9, 3, True, 3),  # divisible: nothing to drop
        (2, 5, False, 1),  # 2 -> padded to 5
        (2, 5, True, 0),  # fewer than one per replica: all dropped
        (1, 4, True, 0),
        (0, 4, False, 0),
        (0, 4, True, 0),
        (7, 1, False, 7),
        (7, 1, True, 7),
        (17, 4, True, 4),
        (17, 4, False, 5),
    ],
)
def test_num_samples_and_total_size(n, replicas, drop_last, num_samples):
    for rank in range(replicas):
        s = DistributedSampler(range(n), num_replicas=replicas, rank=rank, drop_last=drop_last)
        assert s.num_samples == num_samples
        assert s.total_size == num_samples * replicas
        assert len(s) == num_samples
        assert len(list(s)) == num_samples


def test_len_matches_iteration_over_a_grid():
    for n, replicas in GRID:
        for drop_last in (False, True):
            for shuffle in (False, True):
                for rank in range(replicas):
                    s = DistributedSampler(
                        range(n), num_replicas=replicas, rank=rank, shuffle=shuffle, drop_last=drop_last
                    )
                    expected = n // replicas if drop_last else -(-n // replicas)
                    assert len(s) == expected
                    assert len(list(s)) == expected


# --------------------------------------------------------- unshuffled shares


def test_unshuffled_shares_padding_repeats_the_first_indices():
    # 0..9 padded with 0, 1 to twelve entries, dealt out round-robin.
    assert _shares(10, 3, shuffle=False) == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]


def test_unshuffled_shares_drop_last_cuts_the_tail():
    assert _shares(10, 3, shuffle=False, drop_last=True) == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert _shares(11, 4, shuffle=False, drop_last=True) == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_padding_longer_than_the_dataset_repeats_it_several_times():
    # 2 indices for 5 replicas: 0 1 | 0 1 0
    assert _shares(2, 5, shuffle=False) == [[0], [1], [0], [1], [0]]
    # 3 indices for 8 replicas: 0 1 2 | 0 1 2 0 1
    assert _shares(3, 8, shuffle=False) == [[0], [1], [2], [0], [1], [2], [0], [1]]
    # 1 index for 4 replicas: every replica gets it
    assert _shares(1, 4, shuffle=False) == [[0], [0], [0], [0]]
    # 3 indices for 7 replicas need 4 extra entries (more than 3): 0 1 2 | 0 1 2 0
    assert _interleave(_shares(3, 7, shuffle=False)) == [0, 1, 2, 0, 1, 2, 0]


def test_unshuffled_shares_drop_last_with_fewer_items_than_replicas():
    assert _shares(3, 4, shuffle=False, drop_last=True) == [[], [], [], []]


def test_empty_dataset_gives_empty_shares():
    for drop_last in (False, True):
        for shuffle in (False, True):
            assert _shares(0, 3, shuffle=shuffle, drop_last=drop_last) == [[], [], []]


def test_single_replica_unshuffled_is_sequential():
    assert list(DistributedSampler(range(6), num_replicas=1, rank=0, shuffle=False)) == list(range(6))


# ----------------------------------------------------------- shuffled shares


def _padded_reference(n, replicas, seed, epoch, shuffle, drop_last):
    """The rule written out: the (permuted) index list, cut to a multiple of
    ``replicas`` or padded by cycling through it from the start."""
    base = _permutation(n, seed + epoch) if shuffle else list(range(n))
    if drop_last:
        total = (n // replicas) * replicas
        return base[:total]
    total = math.ceil(n / replicas) * replicas
    return [base[i % n] for i in range(total)] if n else []


def test_interleaved_shares_are_the_padded_or_trimmed_list():
    for n, replicas in GRID:
        for drop_last in (False, True):
            for shuffle in (False, True):
                for seed, epoch in ((0, 0), (3, 2), (2**33 + 1, 5)):
                    shares = []
                    for rank in range(replicas):
                        s = DistributedSampler(
                            range(n),
                            num_replicas=replicas,
                            rank=rank,
                            shuffle=shuffle,
                            seed=seed,
                            drop_last=drop_last,
                        )
                        s.set_epoch(epoch)
                        shares.append(list(s))
                    want = _padded_reference(n, replicas, seed, epoch, shuffle, drop_last)
                    assert _interleave(shares) == want, (n, replicas, drop_last, shuffle, seed, epoch)


@pytest.mark.parametrize("n, replicas", [(12, 3), (12, 4), (10, 3), (13, 5), (7, 2), (2, 5)])
def test_shares_cover_the_dataset_and_are_disjoint_without_padding(n, replicas):
    shares = _shares(n, replicas, seed=7)
    assert all(len(s) == len(shares[0]) for s in shares)
    flat = [i for s in shares for i in s]
    assert set(flat) == set(range(n))
    pad = len(flat) - n
    assert pad == (-n) % replicas
    if pad == 0:
        assert sorted(flat) == list(range(n))
    else:
        # n distinct indices, each padded entry repeats one of them
        assert len(set(flat)) == n


@pytest.mark.parametrize("n, replicas", [(12, 3), (10, 3), (13, 5), (7, 2)])
def test_drop_last_shares_are_disjoint_and_equal_sized(n, replicas):
    shares = _shares(n, replicas, seed=1, drop_last=True)
    flat = [i for s in shares for i in s]
    assert len(flat) == len(set(flat)) == (n // replicas) * replicas
    assert set(flat) <= set(range(n))
    assert all(len(s) == n // replicas for s in shares)


def test_shuffled_order_is_randperm_seeded_with_seed_plus_epoch():
    s = DistributedSampler(range(20), num_replicas=1, rank=0, seed=11)
    assert list(s) == _permutation(20, 11)
    s.set_epoch(4)
    assert s.epoch == 4
    assert list(s) == _permutation(20, 15)


def test_same_seed_and_epoch_gives_the_same_order():
    a = DistributedSampler(range(50), num_replicas=4, rank=2, seed=5)
    b = DistributedSampler(range(50), num_replicas=4, rank=2, seed=5)
    a.set_epoch(3)
    b.set_epoch(3)
    first = list(a)
    assert list(a) == first  # iterating again without set_epoch repeats the order
    assert list(b) == first
    # only seed + epoch matters
    c = DistributedSampler(range(50), num_replicas=4, rank=2, seed=3)
    c.set_epoch(5)
    assert list(c) == first


def test_different_epochs_and_seeds_give_different_orders():
    s = DistributedSampler(range(40), num_replicas=1, rank=0)
    orders = []
    for epoch in range(6):
        s.set_epoch(epoch)
        orders.append(tuple(s))
    assert len(set(orders)) == len(orders)
    assert all(sorted(o) == list(range(40)) for o in orders)
    other_seed = DistributedSampler(range(40), num_replicas=1, rank=0, seed=1)
    assert tuple(other_seed) != orders[0]


def test_shuffled_order_ignores_the_global_generator():
    torch.manual_seed(0)
    a = list(DistributedSampler(range(30), num_replicas=2, rank=0))
    torch.manual_seed(123)
    b = list(DistributedSampler(range(30), num_replicas=2, rank=0))
    assert a == b


def test_iteration_leaves_the_global_stream_alone():
    torch.manual_seed(9)
    want = torch.rand(4).tolist()
    torch.manual_seed(9)
    list(DistributedSampler(range(30), num_replicas=2, rank=1))
    assert torch.rand(4).tolist() == want


def test_shuffle_false_ignores_seed_and_epoch():
    s = DistributedSampler(range(9), num_replicas=3, rank=1, shuffle=False, seed=42)
    s.set_epoch(7)
    assert list(s) == [1, 4, 7]


# -------------------------------------------------------- arguments, errors


@pytest.mark.parametrize("rank, replicas", [(3, 3), (-1, 3), (5, 1), (2, 2), (0, 0)])
def test_invalid_rank_raises_value_error(rank, replicas):
    msg = f"Invalid rank {rank}, rank should be in the interval [0, {replicas - 1}]"
    with pytest.raises(ValueError) as info:
        DistributedSampler(range(5), num_replicas=replicas, rank=rank)
    assert str(info.value) == msg


def test_attributes_and_defaults():
    s = DistributedSampler(range(10), num_replicas=3, rank=2)
    assert (s.num_replicas, s.rank, s.epoch, s.shuffle, s.seed, s.drop_last) == (3, 2, 0, True, 0, False)
    assert isinstance(s, Sampler)
    assert "DistributedSampler" in data.__all__


def _fake_dist(monkeypatch, module):
    """Make ``from ferrograd import distributed`` give ``module`` (None: the
    import fails)."""
    monkeypatch.setitem(sys.modules, "ferrograd.distributed", module)
    if module is None:
        monkeypatch.delattr(torch, "distributed", raising=False)
    else:
        monkeypatch.setattr(torch, "distributed", module, raising=False)


def _dist_module(available, initialized, world=4, rank=2):
    m = types.ModuleType("ferrograd.distributed")
    m.is_available = lambda: available
    m.is_initialized = lambda: initialized

    def ask(value):
        if not initialized:
            raise ValueError("Default process group has not been initialized")
        return value

    m.get_world_size = lambda: ask(world)
    m.get_rank = lambda: ask(rank)
    return m


@pytest.mark.parametrize("kwargs", [{}, {"num_replicas": 4}, {"rank": 0}])
@pytest.mark.parametrize("module", [None, _dist_module(False, False), types.ModuleType("x")])
def test_defaults_without_the_distributed_package_raise_runtime_error(monkeypatch, module, kwargs):
    _fake_dist(monkeypatch, module)
    with pytest.raises(RuntimeError) as info:
        DistributedSampler(range(10), **kwargs)
    assert str(info.value) == "Requires distributed package to be available"


@pytest.mark.parametrize("kwargs", [{}, {"num_replicas": 4}, {"rank": 0}])
def test_defaults_without_a_process_group_raise_value_error(kwargs):
    # The real package, with no process group initialised (as in torch).
    pytest.importorskip("mpi4py")
    import ferrograd.distributed as dist

    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(ValueError, match="has not been initialized"):
        DistributedSampler(range(10), **kwargs)


def test_defaults_come_from_the_process_group(monkeypatch):
    _fake_dist(monkeypatch, _dist_module(True, True, world=4, rank=2))
    s = DistributedSampler(range(10), shuffle=False)
    assert (s.num_replicas, s.rank) == (4, 2)
    assert list(s) == [2, 6, 0]  # 0..9 padded with 0, 1 to 12
    assert DistributedSampler(range(10), rank=1).num_replicas == 4
    assert DistributedSampler(range(10), num_replicas=8).rank == 2


def test_explicit_arguments_never_import_the_distributed_package(monkeypatch):
    _fake_dist(monkeypatch, None)
    assert list(DistributedSampler(range(4), num_replicas=2, rank=0, shuffle=False)) == [0, 2]


# ------------------------------------------------------------- DataLoader


def test_dataloader_reads_the_share_of_its_rank():
    ds = TensorDataset(torch.arange(10))
    sampler = DistributedSampler(ds, num_replicas=3, rank=1, shuffle=False)
    loader = DataLoader(ds, batch_size=2, sampler=sampler)
    assert len(loader) == 2
    assert [b[0].tolist() for b in loader] == [[1, 4], [7, 0]]


def test_dataloader_epochs_follow_set_epoch():
    ds = TensorDataset(torch.arange(16))
    sampler = DistributedSampler(ds, num_replicas=2, rank=0, seed=3)
    loader = DataLoader(ds, batch_size=4, sampler=sampler)
    seen = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        got = [i for b in loader for i in b[0].tolist()]
        assert got == _permutation(16, 3 + epoch)[0::2]
        seen.append(got)
    assert seen[0] != seen[1]
