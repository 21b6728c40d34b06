"""Samplers: iterables of dataset indices (or of index batches) that decide
the order in which a ``DataLoader`` reads a map-style dataset.

The random samplers draw exactly what torch's draw, from the same generator
calls in the same order, so for one ``manual_seed`` the indices are torch's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

from ferrograd import _core

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

T_co = TypeVar("T_co", covariant=True)

# randint draws in chunks of this many so a huge ``num_samples`` never
# materialises at once; the chunk size is part of the stream, so it is torch's.
_REPLACEMENT_CHUNK = 32


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses define ``__iter__`` (and
    ``__len__`` when the length is known).

    Args:
        data_source: accepted for compatibility; unused by the base class.

    Example:
        >>> class Evens(Sampler):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self): return iter(range(0, self.n, 2))
        >>> list(Evens(5))
        [0, 2, 4]
    """

    def __init__(self, data_source: Any = None) -> None:
        # torch accepts and ignores ``data_source`` here.
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Yields ``0, 1, ..., len(data_source) - 1``.

    Args:
        data_source (Sized): the dataset whose indices to yield.

    Example:
        >>> list(SequentialSampler(range(3)))
        [0, 1, 2]
    """

    data_source: Sized

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator_from(parent: Any) -> Any:
    """A new generator seeded with one int64 drawn from ``parent`` (the
    global generator when None), as torch's RandomSampler does, so each epoch
    consumes one draw of the global stream rather than a whole permutation."""
    seed = int(_core.empty((), dtype=_core.int64).random_(generator=parent).item())
    g = _core.Generator()
    g.manual_seed(seed)
    return g


class RandomSampler(Sampler[int]):
    """Yields the indices of ``data_source`` in random order.

    Args:
        data_source (Sized): the dataset (only its length is used).
        replacement (bool): draw with replacement. Default: ``False``.
        num_samples (int, optional): how many indices to yield. Default:
            ``len(data_source)``. Without replacement, more than the length
            concatenates several permutations.
        generator (Generator, optional): the source of randomness. When None,
            each iteration seeds a fresh generator from one draw of the global
            generator.

    Example:
        >>> ferrograd.manual_seed(0)  # doctest: +SKIP
        >>> sorted(RandomSampler(range(5)))
        [0, 1, 2, 3, 4]
    """

    data_source: Sized
    replacement: bool

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        """The number of indices drawn per epoch (``len(data_source)`` unless given)."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        g = _fresh_generator_from(None) if self.generator is None else self.generator
        if self.replacement:
            for _ in range(self.num_samples // _REPLACEMENT_CHUNK):
                chunk = _core.randint(high=n, size=(_REPLACEMENT_CHUNK,), dtype=_core.int64, generator=g)
                yield from chunk.tolist()
            tail = _core.randint(
                high=n, size=(self.num_samples % _REPLACEMENT_CHUNK,), dtype=_core.int64, generator=g
            )
            yield from tail.tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _core.randperm(n, generator=g).tolist()
            yield from _core.randperm(n, generator=g).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """Yields the given indices in random order (without replacement).

    Args:
        indices (sequence of ints): the indices to shuffle.
        generator (Generator, optional): the source of randomness. Default: the global one.

    Example:
        >>> sorted(SubsetRandomSampler([7, 3, 9]))
        [3, 7, 9]
    """

    indices: Sequence[int]

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _core.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Yields ``num_samples`` indices in ``[0, len(weights))``, index ``i``
    drawn with probability proportional to ``weights[i]``.

    Args:
        weights (sequence): non-negative weights (need not sum to one).
        num_samples (int): how many indices to draw.
        replacement (bool): draw with replacement. Default: ``True``.
        generator (Generator, optional): the source of randomness.

    Example:
        >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
        [1, 1, 1]
    """

    weights: Any
    num_samples: int
    replacement: bool

    def __init__(
        self,
        weights: Sequence[float] | Any,
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = _core.as_tensor(weights, dtype=_core.float64)
        if len(w.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = self.weights.multinomial(self.num_samples, self.replacement, generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups the indices of another sampler into lists of ``batch_size``.

    Args:
        sampler (Sampler or Iterable): the indices to group.
        batch_size (int): the size of a batch.
        drop_last (bool): drop the last batch when it is short.

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=True))
        [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
