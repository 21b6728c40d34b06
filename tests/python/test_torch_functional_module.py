"""ferrograd.functional: torch.functional's names that ferrograd has, as
the very objects of the top-level namespace."""

from __future__ import annotations

import importlib

import ferrograd
import ferrograd.functional as F
import pytest

# torch 2.13's torch.functional.__all__, written out.
TORCH_FUNCTIONAL_ALL = [
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
    "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank",
    "split", "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index",
]  # fmt: skip


def test_all_is_the_intersection_with_ferrograd():
    expected = sorted(n for n in TORCH_FUNCTIONAL_ALL if hasattr(ferrograd, n))
    assert sorted(F.__all__) == expected
    assert set(F.__all__) >= {"einsum", "norm", "split", "broadcast_tensors", "broadcast_shapes"}
    # Nothing outside torch.functional's list is exported, and no stub stands in for a missing op.
    assert set(F.__all__) <= set(TORCH_FUNCTIONAL_ALL)
    for name in TORCH_FUNCTIONAL_ALL:
        if not hasattr(ferrograd, name):
            assert not hasattr(F, name), name


@pytest.mark.parametrize("name", sorted(F.__all__))
def test_names_are_ferrograds_objects(name):
    assert getattr(F, name) is getattr(ferrograd, name)


def test_module_is_an_attribute_distinct_from_the_other_functionals():
    assert ferrograd.functional is F
    assert importlib.import_module("ferrograd.functional") is F
    assert F is not ferrograd.nn.functional and F is not ferrograd.autograd.functional
    assert ferrograd.nn.functional.__name__ == "ferrograd.nn.functional"
    assert ferrograd.autograd.functional.__name__ == "ferrograd.autograd.functional"
    from ferrograd.functional import einsum, split

    assert einsum is ferrograd.einsum and split is ferrograd.split


def test_values_through_the_module():
    a = ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert ferrograd.equal(F.einsum("ij->j", a), ferrograd.tensor([4.0, 6.0]))
    assert F.norm(ferrograd.tensor([3.0, 4.0])).item() == pytest.approx(5.0)
    top, bottom = F.split(a, 1)
    assert ferrograd.equal(top, a[:1]) and ferrograd.equal(bottom, a[1:])
    x, y = F.broadcast_tensors(ferrograd.ones(2, 1), ferrograd.zeros(3))
    assert tuple(x.shape) == tuple(y.shape) == (2, 3)
    assert F.broadcast_shapes((4, 1), (1, 5)) == ferrograd.Size([4, 5])
