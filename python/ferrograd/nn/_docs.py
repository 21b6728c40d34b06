"""Docstring sections that several functions and classes of :mod:`ferrograd.nn`
share, written once.

A docstring asks for a section with a line that holds only ``{name}`` (or
``{name:value}``); :func:`fill_docs` replaces that line by ``SECTIONS[name]``
as :func:`ferrograd.utils._docs.fill_doc` does, so the docstring reads, at
run time and in the API reference, as if it had been written out in full.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..utils import _docs

SECTIONS: dict[str, str] = {
    # --- nn.functional: convolutions -----------------------------------------------------------
    "conv_bias_arg": """
        bias (Tensor, optional): added to every output channel, of shape
            ``(C_out,)``. Default: ``None``.
    """,
    "conv_args": """
        input (Tensor): the input tensor.
        weight (Tensor): the filters, of shape
            ``(C_out, C_in / groups, *kernel)``.
        {conv_bias_arg}
        stride (int or tuple of ints): the step of the filters. Default: ``1``.
        padding (int, tuple of ints or str): zeros added on both sides of each
            spatial dim, or ``'valid'`` (none) or ``'same'`` (output size =
            input size, stride 1). Default: ``0``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        groups (int): split the input channels into this many groups, each
            convolved with its own filters. Default: ``1``.
    """,
    "conv_transpose_args": """
        input (Tensor): the input tensor.
        weight (Tensor): the filters, of shape
            ``(C_in, C_out / groups, *kernel)``.
        {conv_bias_arg}
        stride (int or tuple of ints): the stride of the (forward) convolution
            this op transposes. Default: ``1``.
        padding (int or tuple of ints): ``dilation * (k - 1) - padding`` zeros
            are added on both sides of each dim. Default: ``0``.
        output_padding (int or tuple of ints): extra size added to one side of
            each output dim, to pick among the sizes a strided convolution maps
            to the same input size. Default: ``0``.
        groups (int): split the input channels into this many groups, each
            convolved with its own filters. Default: ``1``.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
    """,
    # unfold and fold, after their own first arguments
    "block_args": """
        kernel_size (int or tuple of ints): the size of the window.
        dilation (int or tuple of ints): the spacing between the elements of a
            window. Default: ``1``.
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
        stride (int or tuple of ints): the step between blocks. Default: ``1``.
    """,
    # --- nn.functional: pooling ----------------------------------------------------------------
    "pool_stride_arg": """
        stride (int or tuple of ints, optional): the step between windows.
            Default: ``kernel_size``.
    """,
    "ceil_mode_arg": """
        ceil_mode (bool): round the output size up instead of down, so a partial
            last window counts. Default: ``False``.
    """,
    "pool_window_args": """
        input (Tensor): the input tensor.
        kernel_size (int or tuple of ints): the size of the window.
        {pool_stride_arg}
        padding (int or tuple of ints): implicit padding added on both sides of
            each spatial dim. Default: ``0``.
    """,
    # the max pooling functions, before their own return_indices
    "max_pool_args": """
        Args:
            {pool_window_args}
            dilation (int or tuple of ints): the spacing between the elements of a
                window. Default: ``1``.
            {ceil_mode_arg}
    """,
    # the average pooling functions, before the divisor_override of 2-D and 3-D
    "avg_pool_args": """
        Args:
            {pool_window_args}
            {ceil_mode_arg}
            count_include_pad (bool): count the zero padding in the divisor of each
                average. Default: ``True``.
    """,
    "avg_pool_divisor_args": """
        {avg_pool_args}
            divisor_override (int, optional): divide every window by this number
                instead of its size. Default: ``None``.
    """,
    "lp_pool_head_args": """
        input (Tensor): the input tensor.
        norm_type (float): the ``p`` of the power-average: ``(sum x^p)^(1/p)``.
    """,
    "adaptive_output_size_arg": """
        output_size (int or tuple of ints): the spatial size of the output
            (``None`` in a tuple keeps that input size).
    """,
    "adaptive_max_pool_args": """
        Args:
            input (Tensor): the input tensor.
            {adaptive_output_size_arg}
            return_indices (bool): also return the flat index of each maximum.
                Default: ``False``.
    """,
    "fractional_max_pool_args": """
        Args:
            input (Tensor): the input tensor.
            kernel_size (int or tuple of ints): the size of the window.
            output_size (int or tuple of ints, optional): the spatial size of the
                output. Default: ``None``.
            output_ratio (float or tuple of floats, optional): the output size as a
                fraction of the input's, rounded down (give this or
                ``output_size``). Default: ``None``.
    """,
    "fractional_samples_arg": """
        _random_samples (Tensor, optional): ``(N, C, 2)`` or ``(N, C, 3)``
            numbers in ``[0, 1)`` that place each plane's windows along each dim
            (listed as torch does: 2-D width then height, 3-D depth, height,
            width). Default: drawn with :func:`ferrograd.rand`.
    """,
    # the *_with_indices forms, after their other arguments
    "ignored_return_indices_arg": """
        return_indices (bool): ignored; the indices are always returned.
            Default: ``False``.
    """,
    "max_unpool_args": """
        Args:
            input (Tensor): the input tensor.
            indices (Tensor): the indices returned by the max pooling.
            kernel_size (int or tuple of ints): the window size of the max pooling.
            stride (int or tuple of ints, optional): its stride. Default:
                ``kernel_size``.
            padding (int or tuple of ints): its padding. Default: ``0``.
            output_size (tuple of ints, optional): the exact output size, when the
                pooling's input size is ambiguous. Default: computed from the other
                arguments.
    """,
    # --- nn.functional: activations and dropout -----------------------------------------------
    "inplace_arg": """
        inplace (bool): write the result into ``input`` and return it. Default:
            ``False``.
    """,
    # softmax, softmin and log_softmax, after their input
    "softmax_args": """
        dim (int, optional): the dimension the values are normalised along
            (required; ``None`` picks one as torch's legacy rule does, with a
            warning). Default: ``None``.
        dtype (dtype, optional): cast the input to this dtype first (avoids
            overflow for low-precision inputs). Default: ``None``.
    """,
    "dropout_training_arg": """
        training (bool): apply dropout; when ``False`` the input is returned
            unchanged. Default: ``True``.
    """,
    # dropout1d, dropout2d and dropout3d
    "channel_dropout_args": """
        input (Tensor): the input tensor.
        p (float): the probability of a channel being zeroed. Default: ``0.5``.
        {dropout_training_arg}
        {inplace_arg}
    """,
    # alpha_dropout and feature_alpha_dropout
    "alpha_dropout_args": """
        input (Tensor): the input tensor.
        p (float): the probability of an element being zeroed. Default: ``0.5``.
        training (bool): apply dropout; when ``False`` the input is returned
            unchanged. Default: ``False``.
        {inplace_arg}
    """,
    # --- nn.functional: losses -----------------------------------------------------------------
    "input_target_args": """
        input (Tensor): the input tensor.
        target (Tensor): the target, shaped like ``input``.
    """,
    "elementwise_weight_arg": """
        weight (Tensor, optional): a weight multiplied with each element's loss
            (broadcast against it). Default: ``None``.
    """,
    # mse_loss and l1_loss
    "pointwise_loss_args": """
        Args:
            {input_target_args}
            {legacy_reduction_args}
            {elementwise_weight_arg}
    """,
    "class_weight_arg": """
        weight (Tensor, optional): a manual rescaling weight per class (shape
            ``(C,)``). Default: ``None``.
    """,
    "reduction_arg": """
        reduction (str): how to reduce the per-element losses: ``'none'``,
            ``'mean'`` or ``'sum'``. Default: ``'mean'``.
    """,
    "size_average_arg": """
        size_average (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
    """,
    "reduce_arg": """
        reduce (bool, optional): deprecated; use ``reduction``. Default:
            ``None``.
    """,
    "legacy_reduction_args": """
        {size_average_arg}
        {reduce_arg}
        {reduction_arg}
    """,
    # nll_loss and cross_entropy, after their input and target
    "class_index_loss_args": """
        {class_weight_arg}
        {size_average_arg}
        ignore_index (int): target value that is ignored and does not count in
            the mean. Default: ``-100``.
        {reduce_arg}
        {reduction_arg}
    """,
    # the binary cross entropies, after their input
    "binary_target_args": """
        target (Tensor): targets in ``[0, 1]``, shaped like ``input``.
        weight (Tensor, optional): a weight per element (broadcast against
            ``input``). Default: ``None``.
        {legacy_reduction_args}
    """,
    "triplet_swap_arg": """
        swap (bool): use the positive-negative distance when it is smaller than
            the anchor-negative one. Default: ``False``.
    """,
    # --- nn.init -------------------------------------------------------------------------------
    "fill_tensor_arg": """
        tensor (Tensor): the tensor to fill in place (under ``no_grad``, so
            parameters may be passed).
    """,
    "generator_arg": """
        generator (Generator, optional): the random number generator to draw
            from. Default: ``None`` (the global one).
    """,
    "returns_tensor": """
        Returns:
            Tensor: ``tensor`` itself.
    """,
    "gain_generator_args": """
        gain (float): the scaling factor (see :func:`calculate_gain`). Default:
            ``1.0``.
        {generator_arg}
    """,
    "xavier_args": """
        Args:
            {fill_tensor_arg}
            {gain_generator_args}

        {returns_tensor}
    """,
    "kaiming_args": """
        Args:
            {fill_tensor_arg}
            {kaiming_random_args}

        {returns_tensor}
    """,
    "kaiming_random_args": """
        a (float): the negative slope of the rectifier that follows (for
            ``'leaky_relu'``). Default: ``0``.
        mode (str): ``'fan_in'`` keeps the variance of the forward activations,
            ``'fan_out'`` that of the backward gradients. Default: ``'fan_in'``.
        nonlinearity (str): the nonlinearity that follows, for
            :func:`calculate_gain`. Default: ``'leaky_relu'``.
        {generator_arg}
    """,
    # --- nn.modules: activations and losses ----------------------------------------------------
    "elementwise_shape": """
        Shape:
            Input ``(*)``, any shape; output of the same shape.
    """,
    "inplace_layer_arg": """
        inplace (bool): write the result into the input. Default: False.
    """,
    "inplace_layer_args": """
        Args:
            {inplace_layer_arg}

        {elementwise_shape}
    """,
    "softmax_layer_args": """
        Args:
            dim (int): the dim along which the outputs sum to 1.

        {elementwise_shape}
    """,
    "loss_reduction_arg": """
        reduction (str): ``'none'`` (one loss per element), ``'mean'`` or ``'sum'``.
            Default: ``'mean'``.
    """,
    "legacy_loss_reduction_args": """
        {loss_reduction_arg}
        size_average, reduce: deprecated forms of ``reduction``; leave them None.
    """,
    "short_legacy_loss_reduction_args": """
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``. Default: ``'mean'``.
        size_average, reduce: deprecated forms of ``reduction``; leave them None.
    """,
    # --- nn.modules: convolutions --------------------------------------------------------------
    "conv_layer_args": """
        in_channels (int): the channels of the input.
        out_channels (int): the channels of the output.
        kernel_size (int or tuple): the window size.
        stride (int or tuple): the window step. Default: 1.
        padding (int, tuple or str): implicit padding on both sides, or ``'valid'`` / ``'same'``. Default: 0.
        dilation (int or tuple): the spacing between kernel elements. Default: 1.
        groups (int): split the channels into this many independent groups. Default: 1.
        bias (bool): learn an additive bias. Default: True.
        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
            Default: ``'zeros'``.
        device, dtype: of the parameters.
    """,
    "conv_transpose_layer_args": """
        in_channels (int): the channels of the input.
        out_channels (int): the channels of the output.
        kernel_size (int or tuple): the window size.
        stride (int or tuple): the step of the windows. Default: 1.
        padding (int or tuple): trimmed from both sides of the output. Default: 0.
        output_padding (int or tuple): extra size added to one side of the output. Default: 0.
        groups (int): split the channels into this many independent groups. Default: 1.
        bias (bool): learn an additive bias. Default: True.
        dilation (int or tuple): the spacing between kernel elements. Default: 1.
        padding_mode (str): only ``'zeros'``. Default: ``'zeros'``.
        device, dtype: of the parameters.
    """,
    # --- nn.modules: pooling -------------------------------------------------------------------
    "max_pool_layer_args": """
        kernel_size (int or tuple): the window size.
        stride (int or tuple, optional): the window step. Default: ``kernel_size``.
        padding (int or tuple): implicit ``-inf`` padding on both sides. Default: 0.
        dilation (int or tuple): the spacing between window elements. Default: 1.
        return_indices (bool): also return the indices of the maxima. Default: False.
        ceil_mode (bool): round the output size up. Default: False.
    """,
    "max_unpool_layer_args": """
        kernel_size (int or tuple): the window size of the max pooling.
        stride (int or tuple, optional): its stride. Default: ``kernel_size``.
        padding (int or tuple): its padding. Default: 0.
    """,
    "lp_pool_layer_args": """
        norm_type (float): the ``p`` of the power-average.
        kernel_size (int or tuple): the window size.
        stride (int or tuple, optional): the window step. Default: ``kernel_size``.
        ceil_mode (bool): round the output size up. Default: False.
    """,
    "fractional_max_pool_layer_args": """
        kernel_size (int or tuple): the window size.
        output_size (int or tuple, optional): the spatial size of the output.
            Default: ``None``.
        output_ratio (float or tuple, optional): the output size as a fraction
            in ``(0, 1)`` of the input's (give this or ``output_size``).
            Default: ``None``.
        return_indices (bool): also return the indices of the maxima, for the
            max unpooling layers. Default: False.
        _random_samples (Tensor, optional): fixed samples placing the windows
            (a buffer), as in :func:`ferrograd.nn.functional.fractional_max_pool2d`.
            Default: ``None`` (drawn at each call).
    """,
    # --- nn.modules: padding and upsampling ----------------------------------------------------
    "pad1d_arg": """
        padding (int or tuple of 2 ints): the left and right amounts (one int for both).
    """,
    "pad2d_arg": """
        padding (int or tuple of 4 ints): ``(left, right, top, bottom)`` (one int for all).
    """,
    # the Args and Example of a 2-D padding layer; <value> is its name
    "pad2d_ones_args": """
        Args:
            {pad2d_arg}

        Example:
            >>> nn.<value>(1)(ferrograd.ones(1, 1, 2, 2)).shape
            ferrograd.Size([1, 1, 4, 4])
    """,
    # the Args and Example of a 2-D upsampling layer; <value> is its name
    "upsampling_2d_args": """
        Args:
            size (int or tuple of 2 ints, optional): the output size.
            scale_factor (float or tuple, optional): the scale (give it or ``size``).

        Example:
            >>> nn.<value>(scale_factor=2)(ferrograd.ones(1, 1, 2, 2)).shape
            ferrograd.Size([1, 1, 4, 4])
    """,
    # --- nn.modules: transformer ---------------------------------------------------------------
    # the encoder and decoder layers; <value> names the sequence dim (S or T)
    "transformer_layer_args": """
        Args:
            d_model (int): the model dim.
            nhead (int): the number of attention heads.
            dim_feedforward (int): the hidden size of the feed-forward block. Default: 2048.
            dropout (float): the dropout rate. Default: 0.1.
            activation (str or callable): of the feed-forward block. Default: ``relu``.
            layer_norm_eps (float): the norms' eps. Default: 1e-5.
            batch_first (bool): inputs are ``(N, <value>, E)`` instead of ``(<value>, N, E)``. Default: False.
            norm_first (bool): normalise before each block instead of after. Default: False.
            bias (bool): biases in the linear layers and norms. Default: True.
            device, dtype: of the parameters.
    """,
    # --- nn.modules: normalisation -------------------------------------------------------------
    # the batch and instance norms; <value> is the default of affine and track_running_stats
    "running_stats_args": """
        Args:
            num_features (int): the number of channels ``C``.
            eps (float): added to the variance. Default: 1e-5.
            momentum (float or None): the weight of the new batch in the running statistics; None uses a
                cumulative average. Default: 0.1.
            affine (bool): learn a per-channel ``weight`` and ``bias``. Default: <value>.
            track_running_stats (bool): keep running statistics for evaluation. Default: <value>.
            device, dtype: of the parameters and buffers.
            bias (bool): learn the ``bias`` too. Default: True.
    """,
}


_CLEAN = {name: inspect.cleandoc(text) for name, text in SECTIONS.items()}


def fill_doc(doc: str) -> str:
    """``doc`` with each placeholder line replaced by its section."""
    return _docs.fill_doc(doc, _CLEAN)


def fill_docs(namespace: dict[str, Any]) -> None:
    """Fills the docstrings of the functions and classes defined in the module
    whose globals are ``namespace``, and of the methods of those classes."""
    module = namespace["__name__"]
    for obj in list(namespace.values()):
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != module:
            continue
        methods = [m for m in vars(obj).values() if inspect.isfunction(m)] if inspect.isclass(obj) else []
        for member in (obj, *methods):
            if member.__doc__ and "{" in member.__doc__:
                member.__doc__ = fill_doc(member.__doc__)
