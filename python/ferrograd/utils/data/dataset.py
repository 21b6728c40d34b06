"""Datasets: the map-style ``Dataset`` and the stream-style ``IterableDataset``,
plus the wrappers that combine or slice them (``TensorDataset``,
``ConcatDataset``, ``ChainDataset``, ``StackDataset``, ``Subset``) and
``random_split``.

A map-style dataset answers ``dataset[i]`` and ``len(dataset)``; an iterable
dataset is consumed with ``iter(dataset)``. Nothing here touches tensors
beyond indexing them, so any Python object may be a sample.
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ferrograd import _core

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]

T_co = TypeVar("T_co", covariant=True)
T = TypeVar("T")


class Dataset(Generic[T_co]):
    """An abstract map-style dataset: subclasses define ``__getitem__`` (and
    usually ``__len__``, which the default samplers need).

    ``a + b`` concatenates two datasets into a :class:`ConcatDataset`.

    Example:
        >>> class Squares(Dataset):
        ...     def __len__(self):
        ...         return 4
        ...     def __getitem__(self, i):
        ...         return i * i
        >>> [x for x in Squares() + Squares()][:5]  # doctest: +SKIP
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """An abstract dataset that is a stream of samples: subclasses define
    ``__iter__``. ``a + b`` chains two of them into a :class:`ChainDataset`.

    Example:
        >>> class Count(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(3))
        >>> list(Count())
        [0, 1, 2]
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Any, ...]]):
    """Samples are the rows (first-dimension slices) of the given tensors.

    Args:
        *tensors: tensors with the same size in their first dimension.

    Example:
        >>> ds = TensorDataset(ferrograd.arange(3), ferrograd.tensor([1.0, 2.0, 3.0]))
        >>> ds[1]
        (tensor(1), tensor(2.))
    """

    tensors: tuple[Any, ...]

    def __init__(self, *tensors: Any) -> None:
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset[T_co]):
    """Zips datasets of equal length: sample ``i`` is the tuple (or dict, for
    keyword arguments) of each dataset's sample ``i``.

    Args:
        *args: datasets whose samples form a tuple.
        **kwargs: datasets whose samples form a dict, keyed by argument name.

    Example:
        >>> StackDataset(range(3), "abc")[1]
        (1, 'b')
        >>> StackDataset(x=range(3), y="abc")[2]
        {'x': 2, 'y': 'c'}
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or"
                    "``dict``- (via ``kwargs``) like input/output, but both types are given."
                )
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets: Any = args
        elif kwargs:
            lengths = [len(d) for d in kwargs.values()]
            self._length = lengths[0]
            if any(self._length != n for n in lengths):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The concatenation of several map-style datasets.

    Args:
        datasets (iterable): the datasets, in order.

    Example:
        >>> ds = ConcatDataset([range(3), range(10, 12)])
        >>> len(ds), ds[3], ds[-1]
        (5, 10, 11)
    """

    datasets: list[Any]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> list[int]:
        """The running totals of the datasets' lengths (``[len(d0), len(d0) + len(d1), ...]``)."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if which == 0 else self.cumulative_sizes[which - 1]
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset[T_co]):
    """Chains iterable datasets: iterating yields every sample of the first,
    then of the second, and so on.

    Args:
        datasets (iterable of IterableDatasets): the datasets, in order.

    Example:
        >>> class Count(IterableDataset):
        ...     def __init__(self, n): self.n = n
        ...     def __iter__(self): return iter(range(self.n))
        >>> list(ChainDataset([Count(2), Count(3)]))
        [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[T_co]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at the given ``indices``, in that order.

    Args:
        dataset (Dataset): the whole dataset.
        indices (sequence of ints): the positions to keep, in order.

    Example:
        >>> s = Subset(range(10, 20), [4, 0, 7])
        >>> len(s), s[0], s[2]
        (3, 14, 17)
    """

    dataset: Any
    indices: Sequence[int]

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    if TYPE_CHECKING:
        # Iteration (list(subset)) runs through __getitem__ until IndexError.
        def __iter__(self) -> Iterator[T_co]: ...

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        # Forward batched fetches when the wrapped dataset supports them, so a
        # Subset of a batched dataset keeps its fast path.
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Any,
    lengths: Sequence[int | float],
    generator: Any = _core.default_generator,
) -> list[Subset[Any]]:
    r"""Splits ``dataset`` at random into non-overlapping :class:`Subset`\ s.

    ``lengths`` holds either the sizes of the parts (summing to
    ``len(dataset)``) or fractions summing to 1; fractions are floored and
    the items left over are handed out one at a time, round-robin, from the
    first part. The order comes from ``randperm(len(dataset),
    generator=generator)``, so a given seed gives the same split as torch.

    Args:
        dataset (Dataset): the dataset to split (anything with ``len`` and
            indexing).
        lengths (sequence of ints or floats): the sizes of the parts, or
            fractions summing to 1.
        generator (Generator): the generator of the permutation.
            Default: ``ferrograd.default_generator``.

    Returns:
        list of Subset: one subset per entry of ``lengths``.

    Example:
        >>> a, b = random_split(range(10), [0.7, 0.3], generator=ferrograd.Generator().manual_seed(0))
        >>> len(a), len(b)
        (7, 3)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(sizes)
        for i in range(remainder):
            sizes[i % len(sizes)] += 1
        for i, n in enumerate(sizes):
            if n == 0:
                warnings.warn(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
        lengths = sizes
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _core.randperm(sum(lengths), generator=generator).tolist()
    parts = []
    for end, n in zip(itertools.accumulate(lengths), lengths, strict=True):
        parts.append(Subset(dataset, order[end - n : end]))
    return parts
