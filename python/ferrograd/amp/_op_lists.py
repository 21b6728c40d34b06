"""The ops that CPU autocast (``ferrograd.autocast("cpu", ...)``) recasts, by
the name each is reached under in ferrograd: a module function (``"mm"``), a
Tensor method (``"Tensor.mm"``), or a function of ``nn.functional``,
``linalg`` or ``fft`` (``"nn.functional.linear"``, ``"linalg.inv"``). The
lists are torch 2.13's CPU lists, checked name by name against torch.

- ``LOWER``: runs in the autocast dtype. float32, float16 and bfloat16
  tensor arguments are cast to it; float64 and non-floating ones are left
  alone (so a float64 argument next to a cast one makes the op fail, as in
  torch).
- ``FP32``: runs in float32. float16 and bfloat16 tensor arguments are cast
  up; float64 and non-floating ones are left alone. Outputs follow the op:
  complex64 for the complex-valued FFTs, ``polar``, ``view_as_complex``,
  ``linalg.eig`` and ``linalg.eigvals``, int64 for ``linalg.matrix_rank``.
- ``PROMOTE``: the floating tensor arguments are cast to the widest
  floating dtype among them.

An op called with ``out=`` (the top-level, ``linalg`` and ``fft`` entries
that take it) is not autocast: its result has ``out``'s dtype. ``prod`` and
``Tensor.prod`` called with ``dtype=`` give that dtype. In-place methods
(``Tensor.addmm_``, ``Tensor.index_copy_``) are never autocast.
Composite ops not listed here (``einsum``, ``tensordot``, ``inner``,
``linalg.multi_dot``, ``matrix_power``, ``cov``, ``linalg.pinv``, the
low-rank solvers) change dtype only through the listed ops they call.
Two argument-dependent cases no name can state: ``nn.functional.max_pool3d``
with ``return_indices=True`` keeps the input dtype, and ``nn.functional.pad``
runs in float32 in ``"replicate"`` mode, and in ``"reflect"`` mode when it
pads one or two dims (torch reaches its FP32 padding kernels there).
"""

LOWER = frozenset({
    "mm", "Tensor.mm", "bmm", "Tensor.bmm", "matmul", "Tensor.matmul", "Tensor.__matmul__",
    "Tensor.__rmatmul__", "linalg.matmul", "addmm", "Tensor.addmm", "baddbmm", "Tensor.baddbmm",
    "addbmm", "Tensor.addbmm", "linalg.vecdot",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
    "nn.functional.conv1d", "nn.functional.conv2d", "nn.functional.conv3d",
    "nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d", "nn.functional.conv_transpose3d",
    "nn.functional.conv_tbc",
    "prelu", "Tensor.prelu", "nn.functional.prelu", "nn.functional.linear",
    "nn.functional.scaled_dot_product_attention",
})  # fmt: skip

FP32 = frozenset({
    # reductions, distances, quantiles, complex construction, the STFT
    "prod", "Tensor.prod", "trace", "Tensor.trace", "cdist", "quantile", "Tensor.quantile",
    "nanquantile", "Tensor.nanquantile", "stft", "Tensor.stft", "polar", "view_as_complex",
    # linear algebra
    "cholesky", "Tensor.cholesky", "cholesky_inverse", "Tensor.cholesky_inverse", "cholesky_solve",
    "Tensor.cholesky_solve", "inverse", "Tensor.inverse", "pinverse", "Tensor.pinverse", "lu", "Tensor.lu",
    "lu_solve", "Tensor.lu_solve", "orgqr", "Tensor.orgqr", "qr", "Tensor.qr", "svd", "Tensor.svd",
    "triangular_solve", "Tensor.triangular_solve",
    "linalg.cholesky", "linalg.cholesky_ex", "linalg.cond", "linalg.eig", "linalg.eigh", "linalg.eigvals",
    "linalg.eigvalsh", "linalg.householder_product", "linalg.inv", "linalg.inv_ex", "linalg.lstsq",
    "linalg.matrix_rank", "linalg.qr", "linalg.solve", "linalg.svd", "linalg.svdvals", "linalg.tensorinv",
    "linalg.tensorsolve",
    # Fourier transforms
    "fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "fft.hfft", "fft.ihfft", "fft.fft2", "fft.ifft2",
    "fft.rfft2", "fft.irfft2", "fft.fftn", "fft.ifftn", "fft.rfftn", "fft.irfftn",
    # 3-D and fractional pooling, unpooling, grid sampling
    "max_pool3d", "nn.functional.max_pool3d", "nn.functional.avg_pool3d", "nn.functional.adaptive_avg_pool3d",
    "nn.functional.adaptive_max_pool3d", "nn.functional.adaptive_max_pool3d_with_indices",
    "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool2d_with_indices",
    "nn.functional.fractional_max_pool3d", "nn.functional.fractional_max_pool3d_with_indices",
    "nn.functional.max_unpool2d", "nn.functional.max_unpool3d",
    "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "nn.functional.grid_sample",
    # losses
    "binary_cross_entropy_with_logits", "cosine_embedding_loss", "ctc_loss", "hinge_embedding_loss",
    "kl_div", "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss",
    "nn.functional.binary_cross_entropy", "nn.functional.binary_cross_entropy_with_logits",
    "nn.functional.cosine_embedding_loss", "nn.functional.cross_entropy", "nn.functional.ctc_loss",
    "nn.functional.hinge_embedding_loss", "nn.functional.huber_loss", "nn.functional.kl_div",
    "nn.functional.l1_loss", "nn.functional.margin_ranking_loss", "nn.functional.mse_loss",
    "nn.functional.multi_margin_loss", "nn.functional.multilabel_margin_loss", "nn.functional.nll_loss",
    "nn.functional.poisson_nll_loss", "nn.functional.smooth_l1_loss", "nn.functional.soft_margin_loss",
    "nn.functional.triplet_margin_loss",
})  # fmt: skip

PROMOTE = frozenset({"cat", "concat", "concatenate", "stack", "index_copy", "Tensor.index_copy"})
