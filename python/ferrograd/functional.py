"""``ferrograd.functional``: the module ``torch.functional``, which older
tutorials import (``import torch.functional as F``).

Its names are the very functions of the top-level ``ferrograd`` namespace
(``ferrograd.functional.einsum is ferrograd.einsum``), so they batch under
``vmap`` and differentiate like them. Only the names of
``torch.functional`` that ferrograd implements are here; ``__all__`` lists
them. Not to be confused with :mod:`ferrograd.nn.functional` (layers as
functions) or :mod:`ferrograd.autograd.functional` (Jacobians and
Hessians of functions).

Example:
    >>> import ferrograd.functional as F
    >>> F.einsum("ij,j->i", ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]), ferrograd.tensor([1.0, 1.0]))
    tensor([3., 7.])
    >>> F.broadcast_shapes((2, 1), (3,))
    ferrograd.Size([2, 3])
"""

from __future__ import annotations

from . import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    istft,
    lu,
    meshgrid,
    norm,
    pca_lowrank,
    split,
    stft,
    svd_lowrank,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_shapes",
    "broadcast_tensors",
    "cartesian_prod",
    "cdist",
    "chain_matmul",
    "einsum",
    "istft",
    "lu",
    "meshgrid",
    "norm",
    "pca_lowrank",
    "split",
    "stft",
    "svd_lowrank",
    "tensordot",
    "unique",
    "unique_consecutive",
    "unravel_index",
]
