"""The modules of ``ferrograd.utils.benchmark``, laid out as torch's
``torch.utils.benchmark.utils``: ``common`` (``TaskSpec``,
``Measurement``), ``timer`` (``Timer``) and ``compare`` (``Compare``)."""
