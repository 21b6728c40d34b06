"""``Embedding``: a lookup table of trainable vectors."""

from __future__ import annotations

from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import _factory
from .module import Module

__all__ = ["Embedding"]


class Embedding(Module):
    r"""A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by
    integer index. ``weight`` starts as ``N(0, 1)``; the row at ``padding_idx`` starts
    at zero and never receives a gradient.

    Args:
        num_embeddings (int): the number of rows (the vocabulary size).
        embedding_dim (int): the size of each row.
        padding_idx (int, optional): a row that starts at zero and gets no gradient.
        max_norm (float, optional): rows looked up are renormalised in place to at most this norm.
        norm_type (float): the p of the ``max_norm`` norm. Default: 2.0.
        scale_grad_by_freq (bool): scale gradients by the inverse frequency of each index in
            the batch. Default: False.
        sparse (bool): must be False (sparse gradients are not supported). Default: False.
        device, dtype: of the ``weight`` parameter.

    Shape:
        Input: an integer tensor ``(*)`` of indices; output ``(*, embedding_dim)``.

    Example:
        >>> emb = nn.Embedding(10, 3, padding_idx=0)
        >>> emb(ferrograd.tensor([[0, 2], [4, 0]])).shape
        ferrograd.Size([2, 2, 3])
        >>> emb.weight[0]
        tensor([0., 0., 0.], grad_fn=<SelectBackward0>)
    """

    __constants__ = [
        "num_embeddings",
        "embedding_dim",
        "padding_idx",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "sparse",
    ]

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(
                _fg.empty((num_embeddings, embedding_dim), **_factory(device, dtype)),
                requires_grad=not _freeze,
            )
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` from ``N(0, 1)`` and zeroes the ``padding_idx`` row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with _fg.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor) -> Tensor:
        """The rows of ``weight`` at the indices in ``input``."""
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        r"""An ``Embedding`` whose weight is ``embeddings`` (shared, not copied);
        frozen (``requires_grad=False``) unless ``freeze=False``.

        Example:
            >>> emb = nn.Embedding.from_pretrained(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]))
            >>> emb(ferrograd.tensor([1]))
            tensor([[3., 4.]])
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )
