"""``DataLoader``: iterates a dataset in (shuffled, batched, collated) form,
and the collate helpers ``default_collate`` / ``default_convert``.

Loading always happens in the calling process. ``num_workers > 0`` is
accepted (and validated as torch validates it) but runs the same loop as
``num_workers=0``: for map-style datasets the batches are exactly those
torch's workers would deliver in order; ``get_worker_info()`` is None and
``worker_init_fn`` is never called, as in torch's main process.
"""

from __future__ import annotations

import collections.abc
import copy
import math
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ferrograd import _core

from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = [
    "DataLoader",
    "WorkerInfo",
    "default_collate",
    "default_convert",
    "get_worker_info",
]

T_co = TypeVar("T_co", covariant=True)

_COLLATE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_string_or_object_dtype(arr: Any) -> bool:
    # numpy kinds S (bytes), a (bytes alias), U (str) and O (object) have no tensor dtype.
    return arr.dtype.kind in "SaUO"


def _is_numpy(x: Any) -> bool:
    # NumPy is optional: an object whose type comes from numpy means numpy
    # is imported already, so it is looked up, never imported, here.
    if type(x).__module__ != "numpy":
        return False
    np = sys.modules["numpy"]
    return isinstance(x, np.ndarray | np.generic)


def _numpy_to_tensor(x: Any) -> Any:
    # A numpy scalar goes through a 0-d array: ``as_tensor`` then owns a
    # buffer that outlives the call (the scalar's own buffer does not).
    return _core.as_tensor(sys.modules["numpy"].asarray(x))


def _rebuild_mapping(elem: Any, values: dict[Any, Any]) -> Any:
    """``values`` in the container type of ``elem`` when that is possible."""
    if isinstance(elem, collections.abc.MutableMapping):
        # copy keeps the subclass and its extra state (a defaultdict's factory).
        clone = copy.copy(elem)
        clone.update(values)
        return clone
    try:
        return type(elem)(values)
    except TypeError:
        return values


def _rebuild_sequence(elem: Any, values: list[Any]) -> Any:
    """``values`` in the sequence type of ``elem`` when that is possible."""
    if isinstance(elem, collections.abc.MutableSequence):
        clone = copy.copy(elem)
        for i, v in enumerate(values):
            clone[i] = v
        return clone
    try:
        return type(elem)(values)
    except TypeError:
        return values


def default_convert(data: Any) -> Any:
    """Converts numpy arrays (and numpy scalars) inside ``data`` to tensors,
    keeping the container structure; everything else is returned unchanged.
    This is the DataLoader's collate function when batching is off
    (``batch_size=None``).

    Args:
        data (Any): a sample: an array, a tensor, or a container of them.

    Returns:
        ``data`` with every NumPy array and scalar turned into a tensor.

    Example:
        >>> default_convert({"x": np.array([1, 2]), "name": "a"})
        {'x': tensor([1, 2]), 'name': 'a'}
    """
    if isinstance(data, _core.Tensor):
        return data
    if _is_numpy(data):
        if _is_string_or_object_dtype(data):
            return data
        return _numpy_to_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, str | bytes):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def default_collate(batch: Sequence[Any]) -> Any:
    """Merges a list of samples into a batch, recursively:

    * tensors are stacked along a new first dimension;
    * numpy arrays become tensors and are stacked; numpy scalars become a
      1-D tensor of their dtype;
    * Python ``float`` -> ``float64`` tensor, ``int`` -> ``int64`` tensor
      (``bool`` -> ``bool`` tensor);
    * ``str`` / ``bytes`` are kept as a list;
    * a dict gives a dict of collated values per key; a namedtuple gives the
      namedtuple of collated fields; other sequences are transposed, so a
      batch of ``(x, y)`` pairs gives ``[xs, ys]`` (a list, as torch).

    Args:
        batch (sequence): the samples of one batch, all of the same structure.

    Returns:
        the batch, with the samples' structure and a leading batch dimension.

    Example:
        >>> default_collate([(1, 0.5), (2, 1.5)])
        [tensor([1, 2]), tensor([0.5000, 1.5000], dtype=ferrograd.float64)]
    """
    elem = batch[0]
    if isinstance(elem, _core.Tensor):
        return _core.stack(list(batch), 0)
    if _is_numpy(elem):
        if _is_string_or_object_dtype(elem):
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        if elem.shape != ():
            return default_collate([_core.as_tensor(b) for b in batch])
        # numpy scalars (and 0-d arrays) of one batch make one 1-D tensor.
        return _numpy_to_tensor(batch)
    if isinstance(elem, float):
        return _core.tensor(list(batch), dtype=_core.float64)
    if isinstance(elem, int):
        return _core.tensor(list(batch))
    if isinstance(elem, str | bytes):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch, strict=True)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [list(s) for s in zip(*batch, strict=True)]
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        return _rebuild_sequence(elem, [default_collate(s) for s in transposed])
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


class WorkerInfo:
    """What a loader worker knows about itself (``id``, ``num_workers``,
    ``seed``, ``dataset``). Loading runs in the calling process, so
    :func:`get_worker_info` never returns one; the class exists for code that
    type-checks against it.

    Args:
        **kwargs: the attributes to set.
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"WorkerInfo({items})"


def get_worker_info() -> WorkerInfo | None:
    """The current loader worker's :class:`WorkerInfo`, or None in the main
    process; ferrograd loads in the main process, so this is always None.

    Returns:
        WorkerInfo or None: always ``None``.

    Example:
        >>> get_worker_info() is None
        True
    """
    return None


class _InfiniteConstantSampler(Sampler[None]):
    """The index stream of an iterable dataset: ``None`` forever (the
    dataset's own iterator decides when it ends)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


_LOCKED_ATTRS = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader(Generic[T_co]):
    """Iterates over ``dataset`` in batches.

    Args:
        dataset (Dataset): a map-style dataset (``__getitem__``/``__len__``)
            or an :class:`IterableDataset`.
        batch_size (int, optional): samples per batch; None turns batching
            off (each sample goes through ``default_convert``). Default: 1.
        shuffle (bool, optional): reshuffle every epoch (map-style only).
        sampler (Sampler or Iterable, optional): the index order; excludes
            ``shuffle``.
        batch_sampler (Sampler or Iterable, optional): yields whole index
            batches; excludes ``batch_size``, ``shuffle``, ``sampler`` and
            ``drop_last``.
        num_workers (int): accepted for compatibility; loading runs in the
            calling process whatever its value (see the module notes).
        collate_fn (Callable, optional): merges a list of samples into a
            batch. Default: :func:`default_collate` (or
            :func:`default_convert` when batching is off).
        pin_memory (bool): no accelerator exists, so True only warns.
        drop_last (bool): drop the last batch when it is short.
        timeout (float): must be non-negative; unused in-process.
        worker_init_fn (Callable, optional): kept; never called in-process.
        generator (Generator, optional): the source of the shuffle order and
            of the per-iterator base seed; the global generator when None.

    Example:
        >>> ds = TensorDataset(ferrograd.arange(5))
        >>> [b[0].tolist() for b in DataLoader(ds, batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    dataset: Any
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Any
    prefetch_factor: int | None
    __initialized = False

    def __init__(
        self,
        dataset: Dataset[T_co] | Iterable[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler[Any] | Iterable[Any] | None = None,
        batch_sampler: Sampler[Any] | Iterable[Any] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process loading "
                f"(num_workers > 0), but got num_workers={num_workers}"
            )

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                    "and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(self.dataset, generator=generator)
            else:
                sampler = SequentialSampler(self.dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called: int | None = None
        self.__initialized = True

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__initialized and attr in _LOCKED_ATTRS:
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return _SingleProcessDataLoaderIter(self)

    def __len__(self) -> int:
        if self._is_iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter:
    """One pass over a DataLoader, in the calling process."""

    def __init__(self, loader: DataLoader[Any]) -> None:
        self._loader = loader
        self._dataset = loader.dataset
        self._auto_collation = loader._auto_collation
        self._collate_fn = loader.collate_fn
        self._drop_last = loader.drop_last
        if loader.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        # The sampler's generator body (and so its seed draw) runs on the
        # first next(); the base seed below is drawn before it, as in torch,
        # so the global stream is consumed in torch's order.
        self._sampler_iter = iter(loader._index_sampler)
        self._base_seed = int(_core.empty((), dtype=_core.int64).random_(generator=loader.generator).item())
        self._dataset_iter = iter(self._dataset) if loader._is_iterable else None
        self._ended = False
        self._num_yielded = 0

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def _fetch(self, index: Any) -> Any:
        if self._dataset_iter is not None:
            return self._fetch_iterable(index)
        if self._auto_collation:
            getitems = getattr(self._dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self._dataset[i] for i in index]
        else:
            data = self._dataset[index]
        return self._collate_fn(data)

    def _fetch_iterable(self, index: Any) -> Any:
        if self._ended:
            raise StopIteration
        assert self._dataset_iter is not None
        if not self._auto_collation:
            return self._collate_fn(next(self._dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self._dataset_iter))
            except StopIteration:
                self._ended = True
                break
        if not data or (self._drop_last and len(data) < len(index)):
            raise StopIteration
        return self._collate_fn(data)

    def __next__(self) -> Any:
        index = next(self._sampler_iter)
        out = self._fetch(index)
        self._num_yielded += 1
        return out
