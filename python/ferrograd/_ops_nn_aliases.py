"""The ``torch.*`` forms of neural-network functions (``torch.conv2d``,
``torch.batch_norm``, ``torch.dropout``...), with torch's own signatures:
these are the ATen entry points ``torch.nn.functional`` calls, so their
argument orders differ from ``nn.functional``'s (``torch.embedding`` takes
the weight first, losses take ``reduction`` as an integer: 0 none, 1 mean,
2 sum). Each forwards to :mod:`ferrograd.nn.functional`, so values and
gradients are those of the functional forms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._core import Tensor
from ._ops_reduce_extra import _install

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout", "avg_pool1d",
    "batch_norm", "bilinear", "binary_cross_entropy_with_logits", "celu", "channel_shuffle",
    "constant_pad_nd", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "convolution", "cosine_embedding_loss", "cosine_similarity", "ctc_loss", "dropout",
    "embedding", "embedding_bag", "feature_alpha_dropout", "feature_dropout", "grid_sampler",
    "grid_sampler_2d", "grid_sampler_3d", "group_norm", "hardshrink", "hinge_embedding_loss",
    "instance_norm", "kl_div", "layer_norm", "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices",
    "max_pool2d", "max_pool3d", "native_channel_shuffle", "pairwise_distance", "pdist", "pixel_shuffle",
    "pixel_unshuffle", "poisson_nll_loss", "prelu", "rms_norm", "rrelu", "selu", "threshold",
    "triplet_margin_loss",
]  # fmt: skip

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _F() -> Any:
    from .nn import functional

    return functional


def _reduction(r: int | str) -> str:
    if isinstance(r, str):
        return r
    if r not in _REDUCTIONS:
        raise ValueError(f"{r} is not a valid value for reduction")
    return _REDUCTIONS[r]


# What the arguments that are not simply those of the functional form mean.
_ARG_NOTES = {
    "reduction": "``0`` none, ``1`` mean, ``2`` sum.",
    "cudnn_enabled": "accepted for compatibility (no effect on the CPU).",
    "cudnn_enable": "accepted for compatibility (no effect on the CPU).",
    "train": "whether to apply dropout (``training`` of the functional form).",
    "generator": "accepted for compatibility; the default generator is used.",
    "transposed": "a transposed convolution.",
    "interpolation_mode": "``0`` bilinear, ``1`` nearest, ``2`` bicubic.",
    "padding_mode": "``0`` zeros, ``1`` border, ``2`` reflection.",
}


def _doc(fn: Any, args: str, target: str, note: str = "") -> None:
    names = [a.split("=")[0].strip() for a in args.split(",") if a.strip() not in ("*", "")]
    lines = "\n".join(
        f"        {n}: {_ARG_NOTES.get(n, f'as in :func:`ferrograd.nn.functional.{target}`.')}" for n in names
    )
    fn.__doc__ = f"""{fn.__name__}({args}) -> Tensor

    The ATen form of :func:`ferrograd.nn.functional.{target}`{note}.

    Args:
{lines}
    """


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return _F().conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return _F().conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    return _F().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _F().conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _F().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    return _F().conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    return _F().conv_tbc(input, weight, bias, pad)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                output_padding: Sequence[int], groups: int) -> Tensor:
    dims = input.dim() - 2
    if dims not in (1, 2, 3):
        raise RuntimeError(
            f"Expected 3D, 4D or 5D input to convolution, but got input of size: {list(input.shape)}"
        )
    F = _F()
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[dims - 1]
        return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), groups,
                  tuple(dilation))
    fn = (F.conv1d, F.conv2d, F.conv3d)[dims - 1]
    return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    return _F().avg_pool1d(input, kernel_size, stride or None, padding, ceil_mode, count_include_pad)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False) -> Tensor:
    return _F().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    return _F().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode,
                           return_indices=True)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False) -> Tensor:
    return _F().max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False) -> Tensor:
    return _F().max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    return _F().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True) -> Tensor:
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-05, cudnn_enabled: bool = True) -> Tensor:
    return _F().group_norm(input, num_groups, weight, bias, eps)


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    return _F().rms_norm(input, normalized_shape, weight, eps)


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().dropout(input, p, train)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().dropout2d(input, p, train) if input.dim() >= 3 else _F().dropout1d(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().feature_alpha_dropout(input, p, train)


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    if padding_idx != -1 and isinstance(weight, Tensor) and weight.dim() >= 1:
        rows = weight.shape[0]
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"Padding_idx must be within num_embeddings, got {padding_idx} for {rows}")
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
                  mode: int = 0, sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx: int | None = None) -> Any:
    """The bags' reductions only (the first of torch's four results)."""
    name = {0: "sum", 1: "mean", 2: "max"}[mode]
    return _F().embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq, mode=name,
                              sparse=sparse, per_sample_weights=per_sample_weights,
                              include_last_offset=include_last_offset, padding_idx=padding_idx)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    return _F().bilinear(input1, input2, weight, bias)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _F().celu(input, alpha)


def selu(input: Tensor) -> Tensor:
    return _F().selu(input)


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3.0, training: bool = False,
          generator: Any = None) -> Tensor:
    return _F().rrelu(input, lower, upper, training)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return _F().threshold(input, threshold, value)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return _F().hardshrink(input, lambd)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    return _F().prelu(input, weight)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return _F().channel_shuffle(input, groups)


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return _F().channel_shuffle(input, groups)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    return _F()._affine_grid_generator(theta, size, bool(align_corners))


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    return _F()._grid_sample(input, grid, interpolation_mode, padding_mode, bool(align_corners))


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    return _F()._grid_sample(input, grid, interpolation_mode, padding_mode, bool(align_corners), rank=4)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    return _F()._grid_sample(input, grid, interpolation_mode, padding_mode, bool(align_corners), rank=5)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    return _F().pixel_unshuffle(input, downscale_factor)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    return _F().pad(input, tuple(pad), mode="constant", value=value)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-08) -> Tensor:
    return _F().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-06,
                      keepdim: bool = False) -> Tensor:
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    return _F().pdist(input, p)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
                         zero_infinity)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = 1) -> Tensor:
    return _F().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def kl_div(input: Tensor, target: Tensor, reduction: int = 1, *, log_target: bool = False) -> Tensor:
    return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 1) -> Tensor:
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 1) -> Tensor:
    return _F().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 1) -> Tensor:
    return _F().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-06, swap: bool = False, reduction: int = 1) -> Tensor:
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))


_TRANSPOSED = "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1"
_GRID_SAMPLER = "input, grid, interpolation_mode, padding_mode, align_corners"
_SIGNATURES = {
    "adaptive_avg_pool1d": ("input, output_size", "adaptive_avg_pool1d"),
    "adaptive_max_pool1d": ("input, output_size", "adaptive_max_pool1d", " with ``return_indices=True``"),
    "affine_grid_generator": ("theta, size, align_corners", "affine_grid", " without its argument warnings"),
    "alpha_dropout": ("input, p, train", "alpha_dropout"),
    "avg_pool1d": ("input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True",
                   "avg_pool1d"),
    "batch_norm": ("input, weight, bias, running_mean, running_var, training, momentum, eps, "
                   "cudnn_enabled=True", "batch_norm"),
    "bilinear": ("input1, input2, weight, bias=None", "bilinear"),
    "binary_cross_entropy_with_logits": ("input, target, weight=None, pos_weight=None, reduction=1",
                                         "binary_cross_entropy_with_logits"),
    "celu": ("input, alpha=1.0", "celu"),
    "channel_shuffle": ("input, groups", "channel_shuffle"),
    "constant_pad_nd": ("input, pad, value=0", "pad", " with ``mode='constant'``"),
    "conv1d": ("input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv1d"),
    "conv2d": ("input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv2d"),
    "conv3d": ("input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1", "conv3d"),
    "conv_tbc": ("input, weight, bias, pad=0", "conv_tbc"),
    "conv_transpose1d": (_TRANSPOSED, "conv_transpose1d"),
    "conv_transpose2d": (_TRANSPOSED, "conv_transpose2d"),
    "conv_transpose3d": (_TRANSPOSED, "conv_transpose3d"),
    "convolution": ("input, weight, bias, stride, padding, dilation, transposed, output_padding, groups",
                    "conv2d", " and its 1-D, 3-D and transposed forms, chosen by the input's rank and "
                    "``transposed``"),
    "cosine_embedding_loss": ("input1, input2, target, margin=0.0, reduction=1", "cosine_embedding_loss"),
    "cosine_similarity": ("x1, x2, dim=1, eps=1e-08", "cosine_similarity"),
    "ctc_loss": ("log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, "
                 "zero_infinity=False", "ctc_loss"),
    "dropout": ("input, p, train", "dropout"),
    "embedding": ("weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False", "embedding",
                  " (weight first; ``padding_idx=-1`` means none)"),
    "embedding_bag": ("weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, "
                      "per_sample_weights=None, include_last_offset=False, padding_idx=None", "embedding_bag",
                      " (``mode`` 0 sum, 1 mean, 2 max; the bags' results only)"),
    "feature_alpha_dropout": ("input, p, train", "feature_alpha_dropout"),
    "feature_dropout": ("input, p, train", "dropout2d", " (``dropout1d`` for inputs of fewer than 3 dims)"),
    "grid_sampler": (_GRID_SAMPLER, "grid_sample", " with the modes as integers"),
    "grid_sampler_2d": (_GRID_SAMPLER, "grid_sample", " for 4-D inputs, with the modes as integers"),
    "grid_sampler_3d": (_GRID_SAMPLER, "grid_sample", " for 5-D inputs, with the modes as integers"),
    "group_norm": ("input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True", "group_norm"),
    "hardshrink": ("input, lambd=0.5", "hardshrink"),
    "hinge_embedding_loss": ("input, target, margin=1.0, reduction=1", "hinge_embedding_loss"),
    "instance_norm": ("input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, "
                      "cudnn_enabled=True", "instance_norm"),
    "kl_div": ("input, target, reduction=1, *, log_target=False", "kl_div"),
    "layer_norm": ("input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True",
                   "layer_norm"),
    "margin_ranking_loss": ("input1, input2, target, margin=0.0, reduction=1", "margin_ranking_loss"),
    "max_pool1d": ("input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False", "max_pool1d"),
    "max_pool1d_with_indices": ("input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False",
                                "max_pool1d", " with ``return_indices=True``"),
    "max_pool2d": ("input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False", "max_pool2d"),
    "max_pool3d": ("input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False", "max_pool3d"),
    "native_channel_shuffle": ("input, groups", "channel_shuffle"),
    "pairwise_distance": ("x1, x2, p=2.0, eps=1e-06, keepdim=False", "pairwise_distance"),
    "pdist": ("input, p=2.0", "pdist"),
    "pixel_shuffle": ("input, upscale_factor", "pixel_shuffle"),
    "pixel_unshuffle": ("input, downscale_factor", "pixel_unshuffle"),
    "poisson_nll_loss": ("input, target, log_input, full, eps, reduction", "poisson_nll_loss"),
    "prelu": ("input, weight", "prelu"),
    "rms_norm": ("input, normalized_shape, weight=None, eps=None", "rms_norm"),
    "rrelu": ("input, lower=0.125, upper=0.3333333333333333, training=False, generator=None", "rrelu"),
    "selu": ("input", "selu"),
    "threshold": ("input, threshold, value", "threshold"),
    "triplet_margin_loss": ("anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, "
                            "reduction=1", "triplet_margin_loss"),
}  # fmt: skip
for _name, (_args, _target, *_note) in _SIGNATURES.items():
    _note_text = _note[0] if _note else ""
    if "reduction" in _args:
        _note_text += " (``reduction`` 0 none, 1 mean, 2 sum)"
    _doc(globals()[_name], _args, _target, _note_text)

# Tensor methods of the functional forms (``x.prelu(w)``, ``x.hardshrink()``).
for _name in ("prelu", "hardshrink"):
    _install(_name, globals()[_name])
