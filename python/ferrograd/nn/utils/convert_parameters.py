"""``parameters_to_vector`` and ``vector_to_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

import ferrograd
from ferrograd._core import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    r"""Flattens ``parameters`` into one 1-D tensor (a copy, differentiable).

    Example::

        >>> nn.utils.parameters_to_vector([torch.ones(2, 2), torch.zeros(1)])
        tensor([1., 1., 1., 1., 0.])
    """
    return ferrograd.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    r"""Copies consecutive slices of the 1-D ``vec`` into ``parameters``
    (each keeps its shape and dtype).

    Example::

        >>> ps = [torch.zeros(2), torch.zeros(1)]
        >>> nn.utils.vector_to_parameters(torch.tensor([1.0, 2.0, 3.0]), ps)
        >>> ps[1]
        tensor([3.])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        # torch swaps in a view of ``vec``; ferrograd tensors keep their
        # storage, so the values are copied in.
        param.data.copy_(vec[pointer : pointer + n].view_as(param).data)
        pointer += n
