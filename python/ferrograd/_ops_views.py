"""Module-level forms of the view operations (``ferrograd.reshape(t, ...)``)."""

from ._core import Tensor, broadcast_shapes, broadcast_tensors, split

__all__ = [
    "adjoint",
    "as_strided",
    "broadcast_shapes",
    "broadcast_tensors",
    "broadcast_to",
    "chunk",
    "diagonal",
    "flatten",
    "movedim",
    "moveaxis",
    "narrow",
    "permute",
    "reshape",
    "select",
    "split",
    "squeeze",
    "swapaxes",
    "swapdims",
    "t",
    "transpose",
    "unbind",
    "unflatten",
    "unsqueeze",
]

adjoint = Tensor.adjoint
as_strided = Tensor.as_strided
broadcast_to = Tensor.broadcast_to
chunk = Tensor.chunk
diagonal = Tensor.diagonal
flatten = Tensor.flatten
movedim = Tensor.movedim
moveaxis = Tensor.moveaxis
narrow = Tensor.narrow
permute = Tensor.permute
reshape = Tensor.reshape
select = Tensor.select
squeeze = Tensor.squeeze
swapaxes = Tensor.swapaxes
swapdims = Tensor.swapdims
t = Tensor.t
transpose = Tensor.transpose
unbind = Tensor.unbind
unflatten = Tensor.unflatten
unsqueeze = Tensor.unsqueeze

# Module-level docs of the functions above that are Tensor methods (applied
# when ``ferrograd`` routes them; the methods keep their own docs).
DOCS: dict[str, str] = {
    "reshape": """reshape(input, shape) -> Tensor

    Returns a tensor with the elements of ``input`` in the given shape.

    The result is a view of ``input`` when its strides allow it (always for
    a contiguous input), else a copy; do not rely on either. One dimension
    may be ``-1``, inferred from the number of elements.

    Args:
        input (Tensor): the tensor to reshape.
        shape (tuple of ints): the new shape (as a tuple, or as separate ints
            in the method form).

    Example:
        >>> ferrograd.reshape(ferrograd.arange(6), (3, -1))
        tensor([[0, 1],
                [2, 3],
                [4, 5]])
    """,
    "flatten": """flatten(input, start_dim=0, end_dim=-1) -> Tensor

    Merges the dimensions ``start_dim`` to ``end_dim`` of ``input`` into
    one. A view when the strides allow it, else a copy (as
    :func:`ferrograd.reshape`); a 0-dim input gives a 1-element 1-D tensor.

    Args:
        input (Tensor): the input tensor.
        start_dim (int): the first dimension to merge. Default: 0.
        end_dim (int): the last dimension to merge. Default: -1.

    Example:
        >>> t = ferrograd.zeros(2, 3, 4)
        >>> ferrograd.flatten(t).shape
        ferrograd.Size([24])
        >>> ferrograd.flatten(t, start_dim=1).shape
        ferrograd.Size([2, 12])
    """,
    "unflatten": """unflatten(input, dim, sizes) -> Tensor

    Splits dimension ``dim`` of ``input`` into several with the given sizes
    (the inverse of :func:`ferrograd.flatten`); one size may be ``-1``.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to split.
        sizes (tuple of ints): the new sizes; their product must equal the
            size of ``dim``.

    Example:
        >>> ferrograd.unflatten(ferrograd.zeros(2, 6), 1, (2, 3)).shape
        ferrograd.Size([2, 2, 3])
    """,
    "squeeze": """squeeze(input, dim=None) -> Tensor

    Returns a view of ``input`` without its dimensions of size 1: all of
    them, or only those in ``dim`` (a listed dimension whose size is not 1
    is left as it is).

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): the dimension(s) to remove.
            Default: None (every dimension of size 1).

    Example:
        >>> t = ferrograd.zeros(1, 2, 1)
        >>> ferrograd.squeeze(t).shape
        ferrograd.Size([2])
        >>> ferrograd.squeeze(t, 0).shape
        ferrograd.Size([2, 1])
    """,
    "unsqueeze": """unsqueeze(input, dim) -> Tensor

    Returns a view of ``input`` with a new dimension of size 1 inserted at
    position ``dim`` (``-1`` appends it at the end).

    Args:
        input (Tensor): the input tensor.
        dim (int): where the new dimension goes, from ``-input.dim() - 1`` to
            ``input.dim()``.

    Example:
        >>> x = ferrograd.tensor([1, 2])
        >>> ferrograd.unsqueeze(x, 0)
        tensor([[1, 2]])
        >>> ferrograd.unsqueeze(x, 1)
        tensor([[1],
                [2]])
    """,
    "permute": """permute(input, dims) -> Tensor

    Returns a view of ``input`` with its dimensions reordered: dimension
    ``i`` of the result is dimension ``dims[i]`` of the input.

    Args:
        input (Tensor): the input tensor.
        dims (tuple of ints): a permutation of ``0 .. input.dim() - 1``.

    Example:
        >>> ferrograd.permute(ferrograd.zeros(2, 3, 4), (2, 0, 1)).shape
        ferrograd.Size([4, 2, 3])
    """,
    "transpose": """transpose(input, dim0, dim1) -> Tensor

    Returns a view of ``input`` with dimensions ``dim0`` and ``dim1``
    swapped. The view shares memory with the input and is usually not
    contiguous.

    Args:
        input (Tensor): the input tensor.
        dim0 (int): the first dimension.
        dim1 (int): the second dimension.

    Example:
        >>> x = ferrograd.arange(6).reshape(2, 3)
        >>> ferrograd.transpose(x, 0, 1)
        tensor([[0, 3],
                [1, 4],
                [2, 5]])
    """,
    "swapaxes": """swapaxes(input, axis0, axis1) -> Tensor

    Alias for :func:`ferrograd.transpose`.
    """,
    "swapdims": """swapdims(input, dim0, dim1) -> Tensor

    Alias for :func:`ferrograd.transpose`.
    """,
    "t": """t(input) -> Tensor

    Transposes a tensor of at most two dimensions: a 2-D input gives the
    view ``transpose(input, 0, 1)``, 0-D and 1-D inputs are returned as they
    are (as views).

    Args:
        input (Tensor): a tensor with at most 2 dimensions.

    Example:
        >>> ferrograd.t(ferrograd.arange(6).reshape(2, 3))
        tensor([[0, 3],
                [1, 4],
                [2, 5]])
    """,
    "adjoint": """adjoint(input) -> Tensor

    Returns the conjugate transpose of the last two dimensions of ``input``
    as a view (for real tensors, the transpose).

    Args:
        input (Tensor): a tensor with at least 2 dimensions.

    Example:
        >>> ferrograd.adjoint(ferrograd.tensor([[1 + 1j, 2], [3, 4]]))
        tensor([[1.-1.j, 3.-0.j],
                [2.-0.j, 4.-0.j]])
    """,
    "movedim": """movedim(input, source, destination) -> Tensor

    Returns a view of ``input`` with dimension(s) ``source`` moved to
    position(s) ``destination``; the other dimensions keep their order.

    Args:
        input (Tensor): the input tensor.
        source (int or tuple of ints): the dimension(s) to move.
        destination (int or tuple of ints): where they go.

    Example:
        >>> ferrograd.movedim(ferrograd.zeros(2, 3, 4), 0, -1).shape
        ferrograd.Size([3, 4, 2])
    """,
    "moveaxis": """moveaxis(input, source, destination) -> Tensor

    Alias for :func:`ferrograd.movedim`.
    """,
    "narrow": """narrow(input, dim, start, length) -> Tensor

    Returns a view of ``input`` restricted to ``length`` elements of
    dimension ``dim`` from ``start`` (``input.narrow(0, 2, 3)`` is
    ``input[2:5]``).

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to narrow.
        start (int): the first index kept (negative counts from the end).
        length (int): how many indices are kept.

    Example:
        >>> ferrograd.narrow(ferrograd.arange(10), 0, 2, 3)
        tensor([2, 3, 4])
    """,
    "select": """select(input, dim, index) -> Tensor

    Returns the view of ``input`` at position ``index`` of dimension
    ``dim``, which is removed (``select(x, 1, 0)`` is ``x[:, 0]``).

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to index.
        index (int): the position (negative counts from the end).

    Example:
        >>> ferrograd.select(ferrograd.arange(6).reshape(2, 3), 1, 0)
        tensor([0, 3])
    """,
    "chunk": """chunk(input, chunks, dim=0) -> tuple of Tensors

    Splits ``input`` along ``dim`` into ``chunks`` views of equal size
    (``ceil(size / chunks)``), the last one smaller when the size does not
    divide evenly; fewer than ``chunks`` pieces may come back.

    Args:
        input (Tensor): the tensor to split.
        chunks (int): the number of pieces wanted.
        dim (int): the dimension to split along. Default: 0.

    Example:
        >>> ferrograd.chunk(ferrograd.arange(5), 2)
        (tensor([0, 1, 2]), tensor([3, 4]))
    """,
    "unbind": """unbind(input, dim=0) -> tuple of Tensors

    Removes dimension ``dim`` and returns the slices along it, as views.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to remove. Default: 0.

    Example:
        >>> ferrograd.unbind(ferrograd.arange(6).reshape(2, 3), dim=1)
        (tensor([0, 3]), tensor([1, 4]), tensor([2, 5]))
    """,
    "diagonal": """diagonal(input, offset=0, dim1=0, dim2=1) -> Tensor

    Returns a view of a diagonal of ``input`` taken over dimensions
    ``dim1`` and ``dim2``, which are removed and replaced by a last
    dimension holding the diagonal.

    Args:
        input (Tensor): a tensor with at least 2 dimensions.
        offset (int): which diagonal: 0 the main one, positive above it,
            negative below. Default: 0.
        dim1 (int): the first dimension of the matrices. Default: 0.
        dim2 (int): the second dimension of the matrices. Default: 1.

    Example:
        >>> m = ferrograd.arange(9).reshape(3, 3)
        >>> ferrograd.diagonal(m)
        tensor([0, 4, 8])
        >>> ferrograd.diagonal(m, offset=1)
        tensor([1, 5])
    """,
    "broadcast_to": """broadcast_to(input, size) -> Tensor

    Returns a view of ``input`` expanded to shape ``size`` by the
    broadcasting rules (the same as :meth:`Tensor.expand`): dimensions of
    size 1 are repeated with stride 0, and ``-1`` keeps a size.

    Args:
        input (Tensor): the input tensor.
        size (tuple of ints): the target shape.

    Example:
        >>> ferrograd.broadcast_to(ferrograd.tensor([1, 2, 3]), (2, 3))
        tensor([[1, 2, 3],
                [1, 2, 3]])
    """,
    "as_strided": """as_strided(input, size, stride, storage_offset=None) -> Tensor

    Returns a view of the storage of ``input`` with the given shape, strides
    (in elements) and offset, whatever the input's own layout.

    Elements may overlap or be skipped; writing to a view whose elements
    overlap gives unspecified results. Prefer the other view functions when
    one fits.

    Args:
        input (Tensor): the tensor whose storage is viewed.
        size (tuple of ints): the shape of the view.
        stride (tuple of ints): the stride of each dimension.
        storage_offset (int, optional): the position in the storage of the
            first element. Default: that of ``input``.

    Example:
        >>> ferrograd.as_strided(ferrograd.arange(6), (2, 2), (1, 2))
        tensor([[0, 2],
                [1, 3]])
    """,
}
