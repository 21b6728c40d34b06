"""``ferrograd.nn.utils.rnn``: batches of sequences of different lengths,
padded to one length or packed step by step.

A batch of ``B`` sequences is *packed* when its sequences are sorted by
decreasing length and their elements laid out time step by time step:
the first elements of all ``B`` sequences, then the second elements of the
sequences that have one, and so on. ``batch_sizes[t]`` counts the sequences
that are longer than ``t``, so step ``t`` of the packed ``data`` is the
block of ``batch_sizes[t]`` rows after the first ``sum(batch_sizes[:t])``,
and those rows belong to the ``batch_sizes[t]`` longest sequences, longest
first. The recurrent layers (:class:`ferrograd.nn.RNN`, ``LSTM``, ``GRU``)
run such a batch without computing on the padding.

Packing and unpacking are compositions of slicing, ``cat`` and ``stack``,
so gradients flow through them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import ferrograd
from ferrograd._core import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    r"""A batch of sequences packed step by step: a named tuple ``(data,
    batch_sizes, sorted_indices, unsorted_indices)``.

    Made by :func:`pack_padded_sequence` and :func:`pack_sequence` rather
    than by hand. ``batch_sizes[t]`` is the number of sequences longer than
    ``t`` (not the sequence lengths): the sequences ``abc`` and ``x`` pack
    into ``data = axbc`` with ``batch_sizes = [2, 1, 1]``.

    Attributes:
        data (Tensor): the packed elements, ``(sum(batch_sizes), *)``.
        batch_sizes (Tensor): int64, the number of sequences at each step.
        sorted_indices (Tensor, optional): the batch position of each packed
            sequence (``None`` when the batch was already sorted).
        unsorted_indices (Tensor, optional): the inverse of
            ``sorted_indices``: where each original sequence was packed.

    Args:
        data (Tensor or tuple): ``data``, or the pair ``(data, batch_sizes)``.
        batch_sizes (Tensor, optional): the number of sequences at each step.
        sorted_indices (Tensor, optional): see above. Default: ``None``.
        unsorted_indices (Tensor, optional): see above; computed from
            ``sorted_indices`` when not given. Default: ``None``.

    Example:
        >>> from ferrograd.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([ferrograd.tensor([1, 2, 3]), ferrograd.tensor([4])])
        >>> p.data, p.batch_sizes
        (tensor([1, 4, 2, 3]), tensor([2, 1, 1]))
    """

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            # the form PackedSequence((data, batch_sizes), sorted_indices=...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Converts ``data`` as :meth:`ferrograd.Tensor.to` does (the index
        tensors are kept); returns ``self`` when ``data`` does not change.

        Args:
            args: the positional arguments of :meth:`ferrograd.Tensor.to`.
            kwargs: its keyword arguments.
        """
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self) -> PackedSequence:
        """The sequence on the CPU (``self``: ferrograd tensors always are)."""
        return self.to("cpu")

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Raises ``RuntimeError``, as :meth:`ferrograd.Tensor.to` does for ``'cuda'``.

        Args:
            args: ignored.
            kwargs: ignored.
        """
        return self.to("cuda")

    def double(self) -> PackedSequence:
        """``data`` as float64."""
        return self.to(dtype=ferrograd.float64)

    def float(self) -> PackedSequence:
        """``data`` as float32."""
        return self.to(dtype=ferrograd.float32)

    def half(self) -> PackedSequence:
        """``data`` as float16."""
        return self.to(dtype=ferrograd.float16)

    def long(self) -> PackedSequence:
        """``data`` as int64."""
        return self.to(dtype=ferrograd.int64)

    def int(self) -> PackedSequence:
        """``data`` as int32."""
        return self.to(dtype=ferrograd.int32)

    def short(self) -> PackedSequence:
        """``data`` as int16."""
        return self.to(dtype=ferrograd.int16)

    def char(self) -> PackedSequence:
        """``data`` as int8."""
        return self.to(dtype=ferrograd.int8)

    def byte(self) -> PackedSequence:
        """``data`` as uint8."""
        return self.to(dtype=ferrograd.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a GPU (never, in ferrograd)."""
        return bool(self.data.is_cuda)

    def is_pinned(self) -> bool:
        """Whether ``data`` is in pinned memory (never, in ferrograd)."""
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of ``0..n-1`` (``None`` for ``None``).

    Args:
        permutation (Tensor, optional): a 1-D integer tensor.

    Example:
        >>> from ferrograd.nn.utils.rnn import invert_permutation
        >>> invert_permutation(ferrograd.tensor([2, 0, 1]))
        tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    inverse = ferrograd.empty_like(permutation)
    inverse.scatter_(0, permutation, ferrograd.arange(permutation.numel(), dtype=permutation.dtype))
    return inverse


def _lengths_list(lengths: Tensor | Iterable[Any]) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(n) for n in lengths.reshape(-1).tolist()]
    return [int(n) for n in lengths]


def _batch_sizes_of(lengths: list[int]) -> list[int]:
    """The number of sequences longer than ``t``, for each step ``t`` of the
    longest; ``lengths`` must be sorted, longest first."""
    return [sum(1 for n in lengths if n > t) for t in range(lengths[0])]


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    r"""Packs a padded batch of sequences of different lengths.

    ``input`` is ``(T, B, *)``, or ``(B, T, *)`` with ``batch_first``; the
    ``b``-th sequence is its first ``lengths[b]`` steps, the rest padding
    (left out). With ``enforce_sorted`` the lengths must already decrease;
    otherwise the batch is sorted by decreasing length (stably) and the
    order is recorded in ``sorted_indices``, so that the recurrent layers
    and :func:`pad_packed_sequence` give results in the original order.
    :func:`pad_packed_sequence` is the inverse.

    Args:
        input (Tensor): the padded batch, at least 2-D.
        lengths (Tensor or list of int): the length of each sequence.
        batch_first (bool): whether ``input`` is ``(B, T, *)``. Default: ``False``.
        enforce_sorted (bool): require ``lengths`` sorted in decreasing order
            instead of sorting. Default: ``True``.

    Example:
        >>> from ferrograd.nn.utils.rnn import pack_padded_sequence
        >>> seq = ferrograd.tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]])
        >>> p = pack_padded_sequence(seq, [2, 1, 3], batch_first=True, enforce_sorted=False)
        >>> p.data, p.batch_sizes, p.sorted_indices
        (tensor([4, 1, 3, 5, 2, 6]), tensor([3, 2, 1]), tensor([2, 0, 1]))
    """
    sizes = _lengths_list(lengths)
    if input.dim() < 2:
        raise IndexError(
            f"pack_padded_sequence: expected an input of at least 2 dims (T, B, *), got {input.dim()}"
        )
    batch_dim = 0 if batch_first else 1
    batch = int(input.shape[batch_dim])
    if len(sizes) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(sizes)} (batch_size={batch})"
        )
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in zip(sizes, sizes[1:], strict=False)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                "sidestep this requirement if you do not need ONNX exportability."
            )
    else:
        # stable: equal lengths keep their batch order
        as_tensor = ferrograd.tensor(sizes, dtype=ferrograd.int64)
        ordered, sorted_indices = ferrograd.sort(as_tensor, descending=True, stable=True)
        sizes = [int(n) for n in ordered.tolist()]
        input = input.index_select(batch_dim, sorted_indices)
    if sizes[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    steps = int(input.shape[1 - batch_dim])
    if sizes[0] > steps:
        raise RuntimeError(
            f"pack_padded_sequence: a length of {sizes[0]} exceeds the {steps} steps of the padded input"
        )
    if batch_first:
        input = input.transpose(0, 1)
    batch_sizes = _batch_sizes_of(sizes)
    data = ferrograd.cat([input[t, :b] for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, ferrograd.tensor(batch_sizes, dtype=ferrograd.int64), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Pads a packed batch back to ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), in the batch's original order; the inverse of
    :func:`pack_padded_sequence`.

    Args:
        sequence (PackedSequence): the packed batch.
        batch_first (bool): return ``(B, T, *)``. Default: ``False``.
        padding_value (float): the value of the padded positions. Default: ``0.0``.
        total_length (int, optional): pad to this many steps instead of the
            longest sequence's length (``ValueError`` if shorter). Default: ``None``.

    Returns:
        ``(padded, lengths)``, ``lengths`` an int64 tensor of the sequence lengths.

    Example:
        >>> from ferrograd.nn.utils.rnn import pack_sequence, pad_packed_sequence
        >>> p = pack_sequence([ferrograd.tensor([1, 2]), ferrograd.tensor([3, 4, 5])], enforce_sorted=False)
        >>> pad_packed_sequence(p, batch_first=True)
        (tensor([[1, 2, 0],
                [3, 4, 5]]), tensor([2, 3]))
    """
    data, batch_sizes_t, _, unsorted_indices = sequence
    batch_sizes = _lengths_list(batch_sizes_t)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, "
                f"but got total_length={total_length} and max sequence length being {steps}"
            )
        steps = total_length
    batch = batch_sizes[0]
    trailing = tuple(data.shape[1:])

    def filler(*shape: int) -> Tensor:
        return ferrograd.full((*shape, *trailing), padding_value, dtype=data.dtype)

    rows = []
    for block, b in zip(data.split(batch_sizes, 0), batch_sizes, strict=True):
        rows.append(block if b == batch else ferrograd.cat([block, filler(batch - b)], 0))
    padded = ferrograd.stack(rows, 0)
    if steps > len(batch_sizes):
        padded = ferrograd.cat([padded, filler(steps - len(batch_sizes), batch)], 0)
    counts = [sum(1 for n in batch_sizes if n > b) for b in range(batch)]
    lengths = ferrograd.tensor(counts, dtype=ferrograd.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted_indices)
        lengths = lengths[unsorted_indices]
    return padded, lengths


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    r"""Stacks sequences ``(L_i, *)`` of different lengths into one
    ``(T, B, *)`` tensor (``(B, T, *)`` with ``batch_first``), ``T`` the
    longest length, filling the missing steps with ``padding_value``.

    Args:
        sequences (list of Tensor): the sequences; their trailing dims and
            dtypes must agree.
        batch_first (bool): return ``(B, T, *)``. Default: ``False``.
        padding_value (float): the value of the padded positions. Default: ``0.0``.
        padding_side (str): ``'right'`` pads after each sequence, ``'left'``
            before it. Default: ``'right'``.

    Example:
        >>> from ferrograd.nn.utils.rnn import pad_sequence
        >>> pad_sequence([ferrograd.tensor([1, 2, 3]), ferrograd.tensor([4])], batch_first=True)
        tensor([[1, 2, 3],
                [4, 0, 0]])
        >>> pad_sequence([ferrograd.tensor([1, 2, 3]), ferrograd.tensor([4])], True, -1, "left")
        tensor([[ 1,  2,  3],
                [-1, -1,  4]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            f"pad_sequence: Expected iterable for input sequences, but got arg of type: {type(sequences)}"
        )
    seqs = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    longest = max(int(s.shape[0]) for s in seqs)
    trailing = tuple(seqs[0].shape[1:])
    padded = []
    for s in seqs:
        missing = longest - int(s.shape[0])
        if missing == 0:
            padded.append(s)
            continue
        fill = ferrograd.full((missing, *trailing), padding_value, dtype=s.dtype)
        padded.append(ferrograd.cat([s, fill] if padding_side == "right" else [fill, s], 0))
    return ferrograd.stack(padded, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor | list[int], batch_first: bool = False
) -> list[Tensor]:
    r"""Splits a padded batch into its sequences: the inverse of :func:`pad_sequence`
    (right padding).

    Args:
        padded_sequences (Tensor): ``(T, B, *)``, or ``(B, T, *)`` with ``batch_first``.
        lengths (Tensor or list of int): the length of each sequence.
        batch_first (bool): whether the input is ``(B, T, *)``. Default: ``False``.

    Returns:
        a list of ``B`` tensors, the ``b``-th of shape ``(lengths[b], *)``.

    Example:
        >>> from ferrograd.nn.utils.rnn import pad_sequence, unpad_sequence
        >>> padded = pad_sequence([ferrograd.tensor([1, 2, 3]), ferrograd.tensor([4])])
        >>> unpad_sequence(padded, ferrograd.tensor([3, 1]))
        [tensor([1, 2, 3]), tensor([4])]
    """
    sizes = _lengths_list(lengths)
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences.unbind(0), sizes, strict=True)]


def pack_sequence(sequences: Iterable[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    r"""Packs a list of sequences ``(L_i, *)``: :func:`pad_sequence` followed
    by :func:`pack_padded_sequence`.

    Args:
        sequences (list of Tensor): the sequences, longest first unless
            ``enforce_sorted`` is ``False``.
        enforce_sorted (bool): require the sequences sorted by decreasing
            length instead of sorting them. Default: ``True``.

    Example:
        >>> from ferrograd.nn.utils.rnn import pack_sequence
        >>> pack_sequence([ferrograd.tensor([1, 2, 3]), ferrograd.tensor([4, 5]), ferrograd.tensor([6])])
        PackedSequence(data=tensor([1, 4, 6, 2, 5, 3]), batch_sizes=tensor([3, 2, 1]), sorted_indices=None,
                       unsorted_indices=None)
    """
    seqs = list(sequences)
    lengths = [int(s.shape[0]) for s in seqs]
    return pack_padded_sequence(pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    r"""Splits a packed batch into its sequences, in the original order; the
    inverse of :func:`pack_sequence`.

    Args:
        packed_sequences (PackedSequence): the packed batch.

    Example:
        >>> from ferrograd.nn.utils.rnn import pack_sequence, unpack_sequence
        >>> p = pack_sequence([ferrograd.tensor([1]), ferrograd.tensor([2, 3])], enforce_sorted=False)
        >>> unpack_sequence(p)
        [tensor([1]), tensor([2, 3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
