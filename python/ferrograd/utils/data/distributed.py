"""``DistributedSampler``: gives each of ``num_replicas`` processes its own
share of a map-style dataset, as ``torch.utils.data.distributed`` does.

Every replica builds the same index list (the same permutation, from a
generator seeded with ``seed + epoch``), pads or trims it to a multiple of
``num_replicas`` and keeps every ``num_replicas``-th entry starting at its
``rank``. For one seed and epoch the permutation is torch's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ferrograd import _core

from .sampler import Sampler

__all__ = ["DistributedSampler"]


_NO_DIST = "Requires distributed package to be available"


def _default_process_group() -> Any:
    """``ferrograd.distributed``, if it is available (torch's RuntimeError
    otherwise); its ``get_world_size``/``get_rank`` raise ``ValueError``
    when no process group has been initialised. Imported on first need, so
    that this package never depends on it."""
    try:
        from ... import distributed as dist
    except ImportError:
        raise RuntimeError(_NO_DIST) from None
    is_available = getattr(dist, "is_available", None)
    if is_available is None or not is_available():
        raise RuntimeError(_NO_DIST)
    return dist


class DistributedSampler(Sampler[int]):
    """Restricts loading to the ``rank``-th of ``num_replicas`` disjoint
    (up to padding) shares of a dataset of constant length.

    Args:
        dataset (Dataset): the dataset (only its length is used).
        num_replicas (int, optional): the number of processes sharing the
            dataset. Default: ``ferrograd.distributed.get_world_size()``.
        rank (int, optional): this process's share, in
            ``[0, num_replicas - 1]``. Default:
            ``ferrograd.distributed.get_rank()``.
        shuffle (bool): permute the indices (the same way on every replica).
            Default: ``True``.
        seed (int): the permutation's generator is seeded with
            ``seed + epoch``; it must be the same on every replica.
            Default: ``0``.
        drop_last (bool): when the length is not a multiple of
            ``num_replicas``, drop the tail so every replica gets
            ``len(dataset) // num_replicas`` indices. Otherwise (the default)
            the list is padded by repeating its first indices, and every
            replica gets ``ceil(len(dataset) / num_replicas)``.

    Call ``set_epoch(epoch)`` before each epoch's iteration: with the same
    epoch, iterating again yields the same order.

    Example:
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(
        self,
        dataset: Any,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = _default_process_group().get_world_size()
        if rank is None:
            rank = _default_process_group().get_rank()
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            # The largest multiple of num_replicas below n, per replica
            # (written as torch writes it, which also gives 0 when n < num_replicas).
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _all_indices(self) -> list[int]:
        """The full index list shared by every replica, before padding."""
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        g = _core.Generator()
        g.manual_seed(self.seed + self.epoch)
        return _core.randperm(n, generator=g).tolist()

    def __iter__(self) -> Iterator[int]:
        indices = self._all_indices()
        if self.drop_last:
            indices = indices[: self.total_size]
        else:
            # Pad with the first indices; when more are missing than there
            # are, repeat the whole list as often as needed, then cut. (If
            # the dataset grew since __init__, ``missing`` is negative and,
            # as in torch, the length check below fails.)
            missing = self.total_size - len(indices)
            if missing <= len(indices):
                indices = indices + indices[:missing]
            else:
                repeats = math.ceil(missing / len(indices))
                indices = indices + (indices * repeats)[:missing]
        if len(indices) != self.total_size:
            raise AssertionError(
                f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})"
            )
        mine = indices[self.rank : self.total_size : self.num_replicas]
        if len(mine) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(mine)}) does not match num_samples ({self.num_samples})"
            )
        return iter(mine)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch that, with ``seed``, seeds the next permutation, so
        each epoch is shuffled differently (and identically on every
        replica)."""
        self.epoch = epoch
