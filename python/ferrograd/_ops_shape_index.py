"""Module-level forms of the shape and indexing operations (``ferrograd.cat``...)."""

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


def flip(input, dims):
    """``flip(input, dims)``: a copy with the elements of ``dims`` reversed."""
    return Tensor.flip(input, dims)


def tile(input, dims):
    """``tile(input, dims)``: ``repeat`` with ``dims`` padded by leading ones."""
    return Tensor.tile(input, dims)
