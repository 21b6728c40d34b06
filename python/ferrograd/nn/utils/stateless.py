"""``ferrograd.nn.utils.stateless``: the pre-2.0 home of ``functional_call``
(deprecated in torch in favour of :func:`ferrograd.func.functional_call`,
which this one calls)."""

from __future__ import annotations

import warnings
from typing import Any

from ferrograd._core import Tensor

# torch's internal context manager, for code that swaps tensors in around
# several calls.
from ...func._functional_call import _reparametrize_module as _reparametrize_module
from ...func._functional_call import functional_call as _functional_call
from ..modules.module import Module

__all__ = ["functional_call"]


def functional_call(
    module: Module,
    parameters_and_buffers: dict[str, Tensor],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    r"""Deprecated (``FutureWarning``), as in torch: the same as
    :func:`ferrograd.func.functional_call`, which also takes a tuple of
    dicts; this function calls it.

    Args:
        module (nn.Module): the module to call.
        parameters_and_buffers (dict): maps dotted names to the tensors to
            use during the call.
        args (Any or tuple, optional): its positional arguments.
        kwargs (dict, optional): its keyword arguments.

    Keyword args:
        tie_weights (bool): tied names follow the given tensor.
        strict (bool): require exactly the module's names.

    Returns:
        what ``module`` returns.
    """
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
        "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
        "drop-in replacement.",
        FutureWarning,
        stacklevel=2,
    )
    return _functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
