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
