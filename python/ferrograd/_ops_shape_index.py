"""Module-level forms of the shape and indexing operations (``ferrograd.cat``...)."""

from collections.abc import Sequence

from ._core import Tensor, cat, dstack, hstack, repeat_interleave, stack, vstack

__all__ = [
    "argwhere",
    "cat",
    "concat",
    "concatenate",
    "diag",
    "diag_embed",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "gather",
    "hstack",
    "index_add",
    "index_copy",
    "index_fill",
    "index_put",
    "index_select",
    "masked_fill",
    "masked_select",
    "nonzero",
    "repeat_interleave",
    "roll",
    "scatter",
    "scatter_add",
    "stack",
    "take",
    "tile",
    "tril",
    "triu",
    "vstack",
]

concat = cat
concatenate = cat

argwhere = Tensor.argwhere
diag = Tensor.diag
diag_embed = Tensor.diag_embed
fliplr = Tensor.fliplr
flipud = Tensor.flipud
gather = Tensor.gather
index_add = Tensor.index_add
index_copy = Tensor.index_copy
index_fill = Tensor.index_fill
index_put = Tensor.index_put
index_select = Tensor.index_select
masked_fill = Tensor.masked_fill
masked_select = Tensor.masked_select
nonzero = Tensor.nonzero
roll = Tensor.roll
scatter = Tensor.scatter
scatter_add = Tensor.scatter_add
take = Tensor.take
tril = Tensor.tril
triu = Tensor.triu


def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """Reverses the order of the elements of ``input`` along each dimension
    in ``dims``. Returns a copy (torch's ``flip`` copies too).

    Args:
        input (Tensor): the input tensor.
        dims (int or tuple of ints): the dimension(s) to reverse.

    Example:
        >>> m = ferrograd.arange(6).reshape(2, 3)
        >>> ferrograd.flip(m, (0, 1))
        tensor([[5, 4, 3],
                [2, 1, 0]])
    """
    return Tensor.flip(input, dims)


def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """Repeats ``input`` as tiles: ``dims[i]`` copies along dimension ``i``.

    When ``dims`` has fewer entries than ``input`` has dimensions, it is
    padded with leading ones; when it has more, ``input`` gets leading
    dimensions of size 1. Otherwise the same as :meth:`Tensor.repeat`.

    Args:
        input (Tensor): the tensor to tile.
        dims (tuple of ints): the number of copies along each dimension.

    Example:
        >>> ferrograd.tile(ferrograd.tensor([1, 2]), (2,))
        tensor([1, 2, 1, 2])
        >>> ferrograd.tile(ferrograd.tensor([1, 2]), (2, 2))
        tensor([[1, 2, 1, 2],
                [1, 2, 1, 2]])
    """
    return Tensor.tile(input, dims)


def _flip_doc(name: str, summary: str, result: str) -> str:
    """The docstring of ``fliplr`` or ``flipud``: ``summary``, then an example on a 2x3 tensor
    whose output is ``result``."""
    return f"""{name}(input) -> Tensor

    {summary}

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> ferrograd.{name}(ferrograd.arange(6).reshape(2, 3))
        {result}
    """


def _tri_doc(name: str, zeroed: str, kept: str, example: str) -> str:
    """The docstring of ``tril`` or ``triu``: the elements ``zeroed`` (above or below) the
    diagonal are set to zero, the diagonal is the ``kept`` one; ``example`` follows ``>>> ferrograd.``."""
    return f"""{name}(input, diagonal=0) -> Tensor

    Returns a copy of the matrices of ``input`` (its last two dimensions)
    with the elements {zeroed} the given diagonal set to zero.

    Args:
        input (Tensor): a tensor with at least 2 dimensions.
        diagonal (int): the diagonal kept {kept}: 0 the main one, positive
            above it, negative below. Default: 0.

    Example:
        >>> ferrograd.{example}
    """


# Module-level docs of the functions above that are Tensor methods or aliases
# (applied when ``ferrograd`` routes them; the methods keep their own docs).
DOCS: dict[str, str] = {
    "concat": """concat(tensors, dim=0) -> Tensor

    Alias for :func:`ferrograd.cat`.
    """,
    "concatenate": """concatenate(tensors, dim=0) -> Tensor

    Alias for :func:`ferrograd.cat`.
    """,
    "gather": """gather(input, dim, index, *, sparse_grad=False) -> Tensor

    Picks values of ``input`` along ``dim`` at the positions in ``index``.

    For a 2-D input and ``dim=1``, ``out[i][j] = input[i][index[i][j]]``. The
    result has the shape of ``index``, which must have as many dimensions
    as ``input`` and be no larger in the other dimensions. Differentiable
    with respect to ``input`` (the gradient is scattered back and added).

    Args:
        input (Tensor): the source tensor.
        dim (int): the dimension to index along.
        index (LongTensor): the positions to pick.

    Keyword args:
        sparse_grad (bool): accepted for compatibility; the gradient is
            always dense. Default: False.

    Example:
        >>> t = ferrograd.tensor([[1, 2], [3, 4]])
        >>> ferrograd.gather(t, 1, ferrograd.tensor([[0, 0], [1, 0]]))
        tensor([[1, 1],
                [4, 3]])
    """,
    "scatter": """scatter(input, dim, index, src=None, *, value=None) -> Tensor

    Returns a copy of ``input`` with values written at the positions
    ``index`` along ``dim`` (the out-of-place form of
    :meth:`Tensor.scatter_`).

    For a 2-D input and ``dim=1``, ``out[i][index[i][j]] = src[i][j]``. Give
    either a tensor ``src`` (as large as ``index`` at least) or a number
    ``value``. When several positions of ``index`` coincide, which value is
    kept is not specified; use :func:`ferrograd.scatter_add` to sum them.

    Args:
        input (Tensor): the tensor to copy and write into.
        dim (int): the dimension to index along.
        index (LongTensor): where to write.
        src (Tensor or Number, optional): the values to write.

    Keyword args:
        value (Number, optional): a single value to write everywhere
            ``index`` points (instead of ``src``).

    Example:
        >>> idx = ferrograd.tensor([[2], [0]])
        >>> ferrograd.scatter(ferrograd.zeros(2, 3), 1, idx, ferrograd.tensor([[5.0], [7.0]]))
        tensor([[0., 0., 5.],
                [7., 0., 0.]])
        >>> ferrograd.scatter(ferrograd.zeros(2, 3), 1, idx, value=1.0)
        tensor([[0., 0., 1.],
                [1., 0., 0.]])
    """,
    "scatter_add": """scatter_add(input, dim, index, src) -> Tensor

    Returns a copy of ``input`` with the values of ``src`` added at the
    positions ``index`` along ``dim``; values sent to the same position are
    all added. For a 1-D input, ``out[index[j]] += src[j]``.

    Args:
        input (Tensor): the tensor to copy and add into.
        dim (int): the dimension to index along.
        index (LongTensor): where each value of ``src`` goes.
        src (Tensor): the values to add.

    Example:
        >>> index = ferrograd.tensor([0, 0, 2])
        >>> ferrograd.scatter_add(ferrograd.zeros(3), 0, index, ferrograd.tensor([1.0, 2.0, 3.0]))
        tensor([3., 0., 3.])
    """,
    "index_select": """index_select(input, dim, index) -> Tensor

    Returns the slices of ``input`` at the positions ``index`` along ``dim``
    (a new tensor, not a view), in the order given; positions may repeat.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to index.
        index (LongTensor): a 1-D (or 0-D) tensor of positions.

    Example:
        >>> m = ferrograd.arange(6).reshape(2, 3)
        >>> ferrograd.index_select(m, 1, ferrograd.tensor([2, 0]))
        tensor([[2, 0],
                [5, 3]])
    """,
    "index_add": """index_add(input, dim, index, source, *, alpha=1) -> Tensor

    Returns a copy of ``input`` where ``alpha * source[i]`` is added to the
    slice at position ``index[i]`` along ``dim``; repeated positions
    accumulate.

    Args:
        input (Tensor): the tensor to copy and add into.
        dim (int): the dimension to index.
        index (LongTensor): a 1-D tensor of positions, one per slice of
            ``source`` along ``dim``.
        source (Tensor): the slices to add.

    Keyword args:
        alpha (Number): the multiplier of ``source``. Default: 1.

    Example:
        >>> ferrograd.index_add(ferrograd.zeros(3, 2), 0, ferrograd.tensor([0, 2, 0]), ferrograd.ones(3, 2))
        tensor([[2., 2.],
                [0., 0.],
                [1., 1.]])
    """,
    "index_copy": """index_copy(input, dim, index, source) -> Tensor

    Returns a copy of ``input`` where the slice at position ``index[i]``
    along ``dim`` is replaced by slice ``i`` of ``source``.

    Args:
        input (Tensor): the tensor to copy and write into.
        dim (int): the dimension to index.
        index (LongTensor): a 1-D tensor of positions (without repeats).
        source (Tensor): the slices to write.

    Example:
        >>> index = ferrograd.tensor([2, 0])
        >>> ferrograd.index_copy(ferrograd.zeros(3), 0, index, ferrograd.tensor([5.0, 6.0]))
        tensor([6., 0., 5.])
    """,
    "index_fill": """index_fill(input, dim, index, value) -> Tensor

    Returns a copy of ``input`` where the slices at the positions ``index``
    along ``dim`` are filled with ``value``.

    Args:
        input (Tensor): the tensor to copy and fill.
        dim (int): the dimension to index.
        index (LongTensor): a 1-D tensor of positions.
        value (Number or Tensor): the fill value (a 0-dim tensor for a
            tensor).

    Example:
        >>> ferrograd.index_fill(ferrograd.arange(6).reshape(2, 3), 1, ferrograd.tensor([0, 2]), -1)
        tensor([[-1,  1, -1],
                [-1,  4, -1]])
    """,
    "index_put": """index_put(input, indices, values, accumulate=False) -> Tensor

    Returns a copy of ``input`` with ``values`` written at the positions
    ``indices``, as ``out[indices] = values`` would (advanced indexing with a
    tuple of index tensors, broadcast together).

    With ``accumulate=True`` the values are added instead, and repeated
    positions add up; without it, which of several values sent to the same
    position is kept is not specified.

    Args:
        input (Tensor): the tensor to copy and write into.
        indices (tuple of Tensors): one index tensor (long or bool) per
            indexed dimension, from the first.
        values (Tensor): the values, broadcast to the indexed shape.
        accumulate (bool): whether to add rather than write. Default: False.

    Example:
        >>> idx = (ferrograd.tensor([0, 0, 2]),)
        >>> ferrograd.index_put(ferrograd.zeros(3), idx, ferrograd.tensor([1.0, 2.0, 3.0]), accumulate=True)
        tensor([3., 0., 3.])
    """,
    "masked_fill": """masked_fill(input, mask, value) -> Tensor

    Returns a copy of ``input`` with ``value`` wherever the boolean ``mask``
    is True. ``mask`` is broadcast to the shape of ``input``.

    Args:
        input (Tensor): the input tensor.
        mask (BoolTensor): where to fill.
        value (Number or Tensor): the fill value (a 0-dim tensor for a
            tensor).

    Example:
        >>> m = ferrograd.arange(6).reshape(2, 3)
        >>> ferrograd.masked_fill(m, m > 2, 0)
        tensor([[0, 1, 2],
                [0, 0, 0]])
    """,
    "masked_select": """masked_select(input, mask) -> Tensor

    Returns a new 1-D tensor of the elements of ``input`` where the boolean
    ``mask`` is True, in row-major order. ``input`` and ``mask`` are
    broadcast together.

    Args:
        input (Tensor): the input tensor.
        mask (BoolTensor): which elements to keep.

    Example:
        >>> m = ferrograd.arange(6).reshape(2, 3)
        >>> ferrograd.masked_select(m, m % 2 == 0)
        tensor([0, 2, 4])
    """,
    "take": """take(input, index) -> Tensor

    Returns the elements of ``input`` at the positions ``index`` of its
    flattened (row-major) form; the result has the shape of ``index``.

    Args:
        input (Tensor): the input tensor.
        index (LongTensor): positions into the flattened input (negative
            counts from the end).

    Example:
        >>> ferrograd.take(ferrograd.arange(6).reshape(2, 3), ferrograd.tensor([0, 5]))
        tensor([0, 5])
    """,
    "nonzero": """nonzero(input, *, as_tuple=False) -> LongTensor or tuple of LongTensors

    Returns the indices of the non-zero elements of ``input``.

    By default a 2-D tensor with one row per non-zero element and one column
    per dimension of ``input``, in row-major order. With ``as_tuple=True``,
    a tuple of one 1-D tensor per dimension (usable as an index:
    ``x[nonzero(x, as_tuple=True)]``).

    Args:
        input (Tensor): the input tensor.

    Keyword args:
        as_tuple (bool): whether to return a tuple of 1-D tensors. Default:
            False.

    Example:
        >>> x = ferrograd.tensor([[1, 0], [0, 3]])
        >>> ferrograd.nonzero(x)
        tensor([[0, 0],
                [1, 1]])
        >>> ferrograd.nonzero(x, as_tuple=True)
        (tensor([0, 1]), tensor([0, 1]))
    """,
    "argwhere": """argwhere(input) -> LongTensor

    Returns the indices of the non-zero elements of ``input``, one row per
    element (the same as :func:`ferrograd.nonzero` without ``as_tuple``).

    Args:
        input (Tensor): the input tensor.

    Example:
        >>> ferrograd.argwhere(ferrograd.tensor([0, 2, 0, 5]))
        tensor([[1],
                [3]])
    """,
    "roll": """roll(input, shifts, dims=None) -> Tensor

    Shifts the elements of ``input`` circularly: elements pushed past the
    end come back at the start. Returns a new tensor.

    Args:
        input (Tensor): the input tensor.
        shifts (int or tuple of ints): how far to shift (negative shifts
            go the other way); one per dimension in ``dims``.
        dims (int or tuple of ints, optional): the dimensions to shift.
            Default: None (the flattened tensor is shifted, then reshaped).

    Example:
        >>> ferrograd.roll(ferrograd.arange(5), 2)
        tensor([3, 4, 0, 1, 2])
        >>> ferrograd.roll(ferrograd.arange(6).reshape(2, 3), 1, dims=1)
        tensor([[2, 0, 1],
                [5, 3, 4]])
    """,
    "fliplr": _flip_doc(
        "fliplr",
        """Reverses the order of the columns (dimension 1) of ``input``, which
    must have at least 2 dimensions. Returns a copy.""",
        """tensor([[2, 1, 0],
                [5, 4, 3]])""",
    ),
    "flipud": _flip_doc(
        "flipud",
        """Reverses the order of the rows (dimension 0) of ``input``, which must
    have at least 1 dimension. Returns a copy.""",
        """tensor([[3, 4, 5],
                [0, 1, 2]])""",
    ),
    "tril": _tri_doc("tril", "above", "last", example="""tril(ferrograd.ones(3, 3))
        tensor([[1., 0., 0.],
                [1., 1., 0.],
                [1., 1., 1.]])"""),
    "triu": _tri_doc("triu", "below", "first", example="""triu(ferrograd.ones(3, 3), diagonal=1)
        tensor([[0., 1., 1.],
                [0., 0., 1.],
                [0., 0., 0.]])"""),
    "diag": """diag(input, diagonal=0) -> Tensor

    Builds a diagonal matrix from a vector, or takes a diagonal of a
    matrix.

    A 1-D ``input`` gives the square matrix with ``input`` on the given
    diagonal and zeros elsewhere; a 2-D ``input`` gives a copy of that
    diagonal as a 1-D tensor.

    Args:
        input (Tensor): a 1-D or 2-D tensor.
        diagonal (int): which diagonal: 0 the main one, positive above it,
            negative below. Default: 0.

    Example:
        >>> ferrograd.diag(ferrograd.tensor([1, 2]))
        tensor([[1, 0],
                [0, 2]])
        >>> ferrograd.diag(ferrograd.tensor([[1, 2], [3, 4]]))
        tensor([1, 4])
    """,
    "diag_embed": """diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor

    Puts the last dimension of ``input`` on a diagonal of new matrices: the
    result has one more dimension, and its matrices over ``dim1`` and
    ``dim2`` hold the values on the diagonal ``offset``, zeros elsewhere.

    Args:
        input (Tensor): the diagonals, along the last dimension.
        offset (int): which diagonal to fill. Default: 0.
        dim1 (int): the first dimension of the matrices. Default: -2.
        dim2 (int): the second dimension of the matrices. Default: -1.

    Example:
        >>> ferrograd.diag_embed(ferrograd.tensor([[1, 2], [3, 4]])).shape
        ferrograd.Size([2, 2, 2])
        >>> ferrograd.diag_embed(ferrograd.tensor([1, 2]))
        tensor([[1, 0],
                [0, 2]])
    """,
}
