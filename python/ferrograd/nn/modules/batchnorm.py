"""Batch normalisation: ``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d``, and the
running-statistics base shared with the instance norms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ferrograd as _fg
from ferrograd._core import Tensor

from .. import functional as F
from .. import init
from .._docs import fill_docs as _fill_docs
from .linear import _factory, _new_parameters
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


def _affine_parameters(module: Module, kw: dict[str, Any], shape: Any, affine: bool, bias: bool) -> None:
    """A norm's ``weight`` and ``bias`` of ``shape``, uninitialised: both None
    without ``affine``, the bias None without ``bias``."""
    _new_parameters(module, kw, weight=shape if affine else None, bias=shape if affine and bias else None)


def _reset_affine(affine: bool, weight: Tensor | None, bias: Tensor | None) -> None:
    """With ``affine``, ``weight`` to ones and ``bias`` (when there is one) to zeros."""
    if affine:
        init.ones_(weight)
        if bias is not None:
            init.zeros_(bias)


class _NormBase(Module):
    """Parameters (``weight``, ``bias``) and buffers (``running_mean``,
    ``running_var``, ``num_batches_tracked``) of the batch and instance norms."""

    # Version 2 added num_batches_tracked; older checkpoints load with it set to 0.
    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None, dtype: Any = None,
                 *, bias: bool = True) -> None:
        super().__init__()
        kw = _factory(device, dtype)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, kw, num_features, affine, bias)
        if track_running_stats:
            self.register_buffer("running_mean", _fg.zeros(num_features, **kw))
            self.register_buffer("running_var", _fg.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", _fg.tensor(0, dtype=_fg.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with _fg.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self.affine, self.weight, self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        """The settings shown in this module's repr."""
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict and isinstance(state_dict, dict):
                state_dict[key] = (
                    self.num_batches_tracked
                    if self.num_batches_tracked is not None
                    else _fg.tensor(0, dtype=_fg.long)
                )
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative (equal-weight) average over all batches so far.
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        # In eval mode, a module without running statistics normalises with batch statistics.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    r"""Batch normalisation over ``(N, C)`` or ``(N, C, L)``.

    In training each channel is normalised with the batch mean and biased
    variance, and the running statistics move by ``momentum`` towards the batch
    mean and unbiased variance (``momentum=None`` keeps a cumulative average);
    in evaluation the running statistics are used.

    {running_stats_args:True}

    Example:
        >>> m = nn.BatchNorm1d(100)
        >>> m(ferrograd.randn(20, 100)).shape
        ferrograd.Size([20, 100])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch normalisation over ``(N, C, H, W)``, per channel ``C``.

    {running_stats_args:True}

    Example:
        >>> m = nn.BatchNorm2d(3, affine=False)
        >>> m(ferrograd.randn(4, 3, 5, 5)).shape
        ferrograd.Size([4, 3, 5, 5])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    r"""Batch normalisation over ``(N, C, D, H, W)``, per channel ``C``.

    {running_stats_args:True}

    Example:
        >>> nn.BatchNorm3d(2)(ferrograd.randn(3, 2, 2, 2, 2)).shape
        ferrograd.Size([3, 2, 2, 2, 2])
    """

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


_fill_docs(globals())
