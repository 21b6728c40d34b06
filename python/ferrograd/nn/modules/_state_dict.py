"""Loading a state dict into a :class:`~ferrograd.nn.Module`: the walk
over the module tree with the errors it collects, and the copy of each
tensor into a module's parameters and buffers."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import ferrograd
from ferrograd._core import Tensor

from ..parameter import Parameter

if TYPE_CHECKING:
    from .module import Module

#: Counts changes to any module's attributes, parameters, buffers or
#: submodules (``train()``/``eval()`` included), as a module's state:
#: ``ferrograd.compile`` recomputes its guards on modules only when it moved.
STRUCTURE_EPOCH = [0]


def _load_state_dict(
    root: Module, state_dict: Mapping[str, Any], strict: bool, assign: bool
) -> tuple[list[str], list[str]]:
    """``root.load_state_dict(state_dict, strict, assign)``: loads into
    ``root`` and its descendants and returns the missing and unexpected
    keys; raises ``RuntimeError`` with every error found (and, when
    ``strict``, the missing and unexpected keys)."""
    missing_keys: list[str] = []
    unexpected_keys: list[str] = []
    error_msgs: list[str] = []
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = OrderedDict(state_dict)

    def load(module: Module, local_state_dict: dict, prefix: str = "") -> None:
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        # Hooks registered in the module's ``_load_state_dict_pre_hooks``
        # (torch's internal form: no module argument) may rename keys.
        for hook in module._load_state_dict_pre_hooks.values():
            hook(local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs)
        module._load_from_state_dict(
            local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
        )
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_state = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                load(child, child_state, child_prefix)

    load(root, state_dict)

    if strict:
        if unexpected_keys:
            error_msgs.insert(
                0,
                "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)
                ),
            )
        if missing_keys:
            error_msgs.insert(
                0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing_keys))
            )
    if error_msgs:
        raise RuntimeError(
            "Error(s) in loading state_dict for {}:\n\t{}".format(
                root.__class__.__name__, "\n\t".join(error_msgs)
            )
        )
    return missing_keys, unexpected_keys


def _copy_local_state(
    module: Module,
    state_dict: Mapping[str, Any],
    prefix: str,
    local_state: dict[str, Tensor],
    assign: bool,
    strict: bool,
    missing_keys: list[str],
    error_msgs: list[str],
) -> None:
    """Copies ``state_dict[prefix + name]`` into each tensor of
    ``local_state`` (``assign``: makes it the module's), for
    ``Module._load_from_state_dict``; a missing key (when ``strict``) or a
    value that does not fit is recorded, not raised."""
    for name, param in local_state.items():
        key = prefix + name
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            continue
        input_param = state_dict[key]
        if not isinstance(input_param, Tensor):
            error_msgs.append(
                f'While copying the parameter named "{key}", expected torch.Tensor or '
                f"Tensor-like object from checkpoint but received {type(input_param)}"
            )
            continue
        # A one-element 1-D checkpoint value loads into a 0-dim tensor.
        if param.dim() == 0 and input_param.dim() == 1 and input_param.shape[0] == 1:
            input_param = input_param[0]
        if input_param.shape != param.shape:
            error_msgs.append(
                f"size mismatch for {key}: copying a param with shape {input_param.shape} "
                f"from checkpoint, the shape in current model is {param.shape}."
            )
            continue
        try:
            with ferrograd.no_grad():
                if assign:
                    if isinstance(param, Parameter):
                        if not isinstance(input_param, Parameter):
                            input_param = Parameter(input_param, requires_grad=param.requires_grad)
                        else:
                            input_param.requires_grad_(param.requires_grad)
                    setattr(module, name, input_param)
                else:
                    param.copy_(input_param)
        except Exception as ex:
            error_msgs.append(
                f'While copying the parameter named "{key}", '
                f"whose dimensions in the model are {param.size()} and "
                f"whose dimensions in the checkpoint are {input_param.size()}, "
                f"an exception occurred : {ex.args}."
            )
