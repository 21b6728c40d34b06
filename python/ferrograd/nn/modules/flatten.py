"""``Flatten`` and ``Unflatten``, for use inside ``Sequential``."""

from __future__ import annotations

from typing import Any

from ferrograd._core import Tensor

from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    r"""Flattens dimensions ``start_dim`` to ``end_dim`` into one (by default all but the batch).

    Args:
        start_dim (int): the first dim to merge. Default: 1.
        end_dim (int): the last dim to merge. Default: -1.

    Example:
        >>> nn.Flatten()(ferrograd.ones(32, 1, 5, 5)).shape
        ferrograd.Size([32, 25])
    """

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        """``input.flatten(start_dim, end_dim)``."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Expands dimension ``dim`` into ``unflattened_size`` (which may hold one ``-1``).

    Args:
        dim (int): the dim to expand.
        unflattened_size (tuple of ints): the sizes it expands into.

    Example:
        >>> nn.Unflatten(1, (2, 5))(ferrograd.ones(3, 10)).shape
        ferrograd.Size([3, 2, 5])
    """

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}"
            )
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(
                    "unflattened_size must be tuple of ints, "
                    f"but found element of type {type(elem).__name__} at pos {idx}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        """``input.unflatten(dim, unflattened_size)``."""
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
