"""``ferrograd.nn.functional``: the functional forms of the layers,
activations and losses.

Every function here is a composition of existing ferrograd tensor ops, so
reverse mode, double backward and forward mode all follow from the
derivative formulas of those ops; nothing in this module defines a gradient.
The convolution and pooling work happens in a few private functions
(``_window_view``, ``_convnd``, ``_conv_transposend``, ``_max_poolnd``,
``_avg_poolnd``) that take normalised arguments; a native kernel can replace
any of them without touching the public functions.
"""

from ferrograd._core import Tensor as Tensor

from ._activation import _SELU_ALPHA as _SELU_ALPHA
from ._activation import _SELU_SCALE as _SELU_SCALE
from ._activation import _log1p_exp as _log1p_exp
from ._activation import _softmax_dim as _softmax_dim
from ._activation import _threshold as _threshold
from ._activation import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_sigmoid,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from ._attention import multi_head_attention_forward, scaled_dot_product_attention
from ._conv import _batchify as _batchify
from ._conv import _conv_padding as _conv_padding
from ._conv import _conv_transposend as _conv_transposend
from ._conv import _convnd as _convnd
from ._conv import _window_view as _window_view
from ._conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_tbc,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from ._distance import (
    cosine_similarity,
    normalize,
    pairwise_distance,
    pdist,
)
from ._dropout import _SELU_DROPOUT_ALPHA as _SELU_DROPOUT_ALPHA
from ._dropout import _alpha_dropout_impl as _alpha_dropout_impl
from ._dropout import _channel_noise_dropout as _channel_noise_dropout
from ._dropout import _check_p as _check_p
from ._dropout import _dropout_with_noise_shape as _dropout_with_noise_shape
from ._dropout import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from ._fractional import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from ._linear import bilinear, linear
from ._loss import _weighted as _weighted
from ._loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._loss_extra import ctc_loss, linear_cross_entropy, multilabel_margin_loss
from ._normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    rms_norm,
)
from ._padding import _pad_index as _pad_index
from ._padding import _pad_spatial as _pad_spatial
from ._padding import pad
from ._pooling import _adaptive_avg_poolnd as _adaptive_avg_poolnd
from ._pooling import _adaptive_bounds as _adaptive_bounds
from ._pooling import _adaptive_max_poolnd as _adaptive_max_poolnd
from ._pooling import _adaptive_sizes as _adaptive_sizes
from ._pooling import _avg_poolnd as _avg_poolnd
from ._pooling import _lp_poolnd as _lp_poolnd
from ._pooling import _max_poolnd as _max_poolnd
from ._pooling import _max_unpoolnd as _max_unpoolnd
from ._pooling import _pool_args as _pool_args
from ._pooling import _pool_geometry as _pool_geometry
from ._pooling import _pool_input as _pool_input
from ._pooling import _pool_windows as _pool_windows
from ._pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ._sparse import embedding, embedding_bag, one_hot
from ._utils import _apply_inplace as _apply_inplace
from ._utils import _check_reduction as _check_reduction
from ._utils import _inplace_source as _inplace_source
from ._utils import _legacy_reduction as _legacy_reduction
from ._utils import _reduce as _reduce
from ._utils import _tuple as _tuple
from ._utils import _warn_size_mismatch as _warn_size_mismatch
from ._vision import _affine_grid_generator as _affine_grid_generator
from ._vision import _grid_sample as _grid_sample
from ._vision import _linear_matrix as _linear_matrix
from ._vision import (
    affine_grid,
    channel_shuffle,
    grid_sample,
    interpolate,
    native_channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
)

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "affine_grid",
    "alpha_dropout",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_tbc",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_embedding_loss",
    "cosine_similarity",
    "cross_entropy",
    "ctc_loss",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "elu",
    "elu_",
    "embedding",
    "embedding_bag",
    "feature_alpha_dropout",
    "fold",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
    "gaussian_nll_loss",
    "gelu",
    "grid_sample",
    "prelu",
    "glu",
    "group_norm",
    "gumbel_softmax",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "hinge_embedding_loss",
    "huber_loss",
    "instance_norm",
    "interpolate",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "leaky_relu_",
    "linear",
    "linear_cross_entropy",
    "local_response_norm",
    "log_sigmoid",
    "log_softmax",
    "logsigmoid",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "mish",
    "mse_loss",
    "multi_head_attention_forward",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "native_channel_shuffle",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "relu",
    "relu6",
    "relu_",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "scaled_dot_product_attention",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "soft_margin_loss",
    "softmax",
    "softmin",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "unfold",
]
