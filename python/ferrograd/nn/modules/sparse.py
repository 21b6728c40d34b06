"""``Embedding``: a lookup table of trainable vectors; ``EmbeddingBag``: the sums,
means or maxima of bags of them."""

from __future__ import annotations

from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._repr import changed_settings
from .linear import _factory
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


# What Embedding and EmbeddingBag share: the weight table, its initialisation, the
# ``max_norm`` settings in their reprs and the check of a pretrained table.


def _set_weight(
    module: Embedding | EmbeddingBag, _weight: Tensor | None, device: Any, dtype: Any, requires_grad: bool
) -> None:
    """Sets ``module.weight``: ``_weight`` itself, which must be ``(num_embeddings,
    embedding_dim)``, or when None a new table drawn by ``module.reset_parameters()``."""
    shape = (module.num_embeddings, module.embedding_dim)
    if _weight is None:
        module.weight = Parameter(_fg.empty(shape, **_factory(device, dtype)), requires_grad=requires_grad)
        module.reset_parameters()
    else:
        if list(_weight.shape) != list(shape):
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        module.weight = Parameter(_weight, requires_grad=requires_grad)


def _reset_weight(module: Embedding | EmbeddingBag) -> None:
    """Re-draws ``module.weight`` from ``N(0, 1)`` and zeroes the ``padding_idx`` row."""
    init.normal_(module.weight)
    _zero_padding_row(module)


def _zero_padding_row(module: Embedding | EmbeddingBag) -> None:
    if module.padding_idx is not None:
        with _fg.no_grad():
            module.weight[module.padding_idx].fill_(0)


def _norm_repr(module: Embedding | EmbeddingBag) -> str:
    """The ``max_norm``, ``norm_type`` and ``scale_grad_by_freq`` part of the repr: the
    settings that differ from the defaults."""
    return changed_settings(module, {"max_norm": None, "norm_type": 2, "scale_grad_by_freq": False})


def _pretrained_shape(embeddings: Tensor) -> tuple[int, int]:
    """``(rows, cols)`` of a pretrained table, which must be 2-D."""
    if embeddings.dim() != 2:
        raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
    rows, cols = embeddings.shape
    return rows, cols


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
        _set_weight(self, _weight, device, dtype, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` from ``N(0, 1)`` and zeroes the ``padding_idx`` row."""
        _reset_weight(self)

    def _fill_padding_idx_with_zero(self) -> None:
        _zero_padding_row(self)

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
        return s + _norm_repr(self) + (", sparse=True" if self.sparse is not False else "")

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
        rows, cols = _pretrained_shape(embeddings)
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


class EmbeddingBag(Module):
    r"""A table of ``num_embeddings`` vectors of size ``embedding_dim`` that returns,
    for each bag of indices, the sum, mean or maximum of the bag's vectors
    (:func:`ferrograd.nn.functional.embedding_bag`). ``weight`` starts as
    ``N(0, 1)``; the row at ``padding_idx`` starts at zero, is left out of
    every bag and never receives a gradient.

    Args:
        num_embeddings (int): the number of rows (the vocabulary size).
        embedding_dim (int): the size of each row.
        max_norm (float, optional): rows looked up are renormalised in place to at most this norm.
        norm_type (float): the p of the ``max_norm`` norm. Default: 2.0.
        scale_grad_by_freq (bool): scale gradients by the inverse frequency of each index in
            the batch (not with ``mode='max'``). Default: False.
        mode (str): ``'sum'``, ``'mean'`` or ``'max'``. Default: ``'mean'``.
        sparse (bool): must be False (sparse gradients are not supported). Default: False.
        include_last_offset (bool): ``offsets`` has one more entry than there are bags,
            the end of the last bag. Default: False.
        padding_idx (int, optional): an index left out of the bags; its row starts at zero.
        device, dtype: of the ``weight`` parameter.

    Shape:
        Input: ``(B, N)`` integer indices (``B`` bags of ``N``), or 1-D indices with 1-D
        ``offsets`` (the start of each bag); output ``(B, embedding_dim)``.

    Example:
        >>> bag = nn.EmbeddingBag.from_pretrained(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        >>> bag(ferrograd.tensor([0, 1, 2, 2]), ferrograd.tensor([0, 3]))
        tensor([[3., 4.],
                [5., 6.]])
        >>> nn.EmbeddingBag(10, 3, mode="sum", padding_idx=0)
        EmbeddingBag(10, 3, mode='sum', padding_idx=0)
    """

    __constants__ = [
        "num_embeddings",
        "embedding_dim",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "mode",
        "sparse",
        "include_last_offset",
        "padding_idx",
    ]

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        _set_weight(self, _weight, device, dtype, requires_grad=True)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """Re-draws ``weight`` from ``N(0, 1)`` and zeroes the ``padding_idx`` row."""
        _reset_weight(self)

    def _fill_padding_idx_with_zero(self) -> None:
        _zero_padding_row(self)

    def forward(
        self, input: Tensor, offsets: Tensor | None = None, per_sample_weights: Tensor | None = None
    ) -> Tensor:
        """One row per bag of ``input`` (split at ``offsets`` when 1-D), weighted by
        ``per_sample_weights`` (``mode='sum'`` only) when given."""
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        s += _norm_repr(self)
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        r"""An ``EmbeddingBag`` whose weight is ``embeddings`` (shared, not copied);
        frozen (``requires_grad=False``) unless ``freeze=False``. The other
        arguments are the constructor's.

        Example:
            >>> bag = nn.EmbeddingBag.from_pretrained(ferrograd.tensor([[1.0, 2.0], [3.0, 4.0]]), mode="max")
            >>> bag(ferrograd.tensor([[0, 1]])), bag.weight.requires_grad
            (tensor([[3., 4.]]), False)
        """
        rows, cols = _pretrained_shape(embeddings)
        bag = cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
