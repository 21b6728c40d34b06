"""Writes python/ferrograd/_core.pyi from the built extension module.

The bindings carry their Python signatures (pyo3's ``__text_signature__``);
this script turns them into a stub file, adding type annotations from the
parameter-name table below and return types from the return table. CI runs
``mypy.stubtest`` against the installed module, so a stale stub fails the
build: rerun this script after changing the bindings.

Usage: python scripts/gen_stubs.py  (with the wheel or a develop build installed)
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import ferrograd._core as core

TENSOR_LIKE = "Tensor | float | int | bool"
PARAM_TYPES = {
    "input": "Tensor",
    "other": TENSOR_LIKE,
    "tensor": "Tensor",
    "tensors": "Any",
    "dtype": "_DTypeLike | None",
    "device": "_DeviceLike | None",
    "requires_grad": "bool",
    "keepdim": "bool",
    "alpha": "float | int | None",
    "value": TENSOR_LIKE,
    "data": "Any",
    "memo": "Any",
    "index": "Any",
    "indices": "Any",
    "mask": "Tensor",
    "src": TENSOR_LIKE,
    "equation": "str",
    "rounding_mode": "str | None",
    "seed": "int",
    "generator": "Any",
    "out": "Tensor | None",
}
RETURNS = {
    "__repr__": "str", "__len__": "int", "__bool__": "bool", "__float__": "float",
    "__int__": "int", "__index__": "int", "__hash__": "int", "__iter__": "Iterator[Tensor]",
    "__array__": "Any", "__array_interface__": "dict[str, Any]", "__reduce__": "Any",
    "__deepcopy__": "Tensor", "__setitem__": "None", "__iadd__": "Tensor", "__setattr__": "None",
    "__delattr__": "None", "__init__": "None", "__format__": "str",
    "dim": "int", "ndimension": "int", "numel": "int", "nelement": "int", "element_size": "int",
    "storage_offset": "int", "data_ptr": "int", "item": "float | int | bool", "tolist": "Any",
    "numpy": "Any", "size": "Any", "stride": "Any", "type": "Any", "equal": "bool",
    "allclose": "bool", "unbind": "tuple[Tensor, ...]", "split": "tuple[Tensor, ...]",
    "chunk": "tuple[Tensor, ...]", "nonzero": "Any", "max": "Any", "min": "Any",
    "get_default_dtype": "dtype", "promote_types": "dtype", "result_type": "dtype",
    "get_num_threads": "int", "set_num_threads": "None", "set_default_dtype": "None",
    "manual_seed": "Any", "initial_seed": "int", "seed": "int", "broadcast_tensors": "tuple[Tensor, ...]",
    "broadcast_shapes": "Any", "_empty_cache": "int", "_set_cache_limit": "None",
    "_vmap_active": "int", "_set_batched_dispatch": "None", "__dlpack__": "Any", "_to_dlpack": "Any",
    "__dlpack_device__": "tuple[int, int]",
    "_rebuild_tensor": "Tensor", "is_tensor": "bool", "is_floating_point": "bool",
    "is_complex": "bool", "is_signed": "bool", "is_contiguous": "bool", "_is_view": "bool",
    # autograd
    "backward": "None", "is_inference": "bool", "retain_grad": "None", "detach_": "Tensor",
    "register_hook": "RemovableHandle", "register_post_accumulate_grad_hook": "RemovableHandle",
    "register_prehook": "RemovableHandle", "remove": "None", "name": "str", "_sequence_nr": "int",
    "_current_graph_task_id": "int", "_parallel_waves": "int", "_row_by_row_nodes": "int",
    "_will_engine_execute_node": "bool",
    "_grad": "list[Tensor | None]", "_gradient_edge": "tuple[_Node, int]", "_run_backward": "None",
    "_set_grad_enabled": "None", "_set_inference_mode": "tuple[bool, bool]",
    "_restore_inference_mode": "None", "increment_version": "None", "is_grad_enabled": "bool",
    "is_inference_mode_enabled": "bool", "is_multithreading_enabled": "bool",
    "set_multithreading_enabled": "None", "is_anomaly_enabled": "bool",
    "is_anomaly_check_nan_enabled": "bool", "set_anomaly_enabled": "None",
    "_function_apply": "Any", "_delayed_error": "list[Tensor | None]", "_undefined_grad": "Tensor",
}
PROPERTY_TYPES = {
    "shape": "Any", "ndim": "int", "dtype": "dtype", "device": "device", "requires_grad": "bool",
    "grad": "Tensor | None", "grad_fn": "Any", "is_leaf": "bool", "_version": "int",
    "_base": "Tensor | None", "data": "Tensor", "T": "Tensor", "mT": "Tensor", "is_cpu": "bool",
    "is_cuda": "bool", "itemsize": "int", "nbytes": "int", "__array_interface__": "dict[str, Any]",
    "is_floating_point": "bool", "is_complex": "bool", "is_signed": "bool", "type": "str",
    "index": "int | None", "output_nr": "int", "retains_grad": "bool",
    "next_functions": "tuple[tuple[_Node | None, int], ...]", "metadata": "dict[Any, Any]",
    "variable": "Tensor", "id": "int", "materialize_grads": "bool",
    "needs_input_grad": "tuple[bool, ...] | None", "saved_tensors": "tuple[Any, ...]",
    "saved_variables": "tuple[Any, ...]",
}
SETTABLE = {
    "requires_grad", "grad", "to_save", "dirty_tensors", "non_differentiable", "saved_for_forward",
    "materialize_grads", "needs_input_grad",
}


def qualify(text: str) -> str:
    """Spells builtin types as ``builtins.X``: the module and Tensor define
    members named ``bool``, ``int`` and ``float`` that would shadow them."""
    return re.sub(r"(?<![\w.])(bool|int|float|str|type|object)(?!\w)", r"builtins.\1", text)


def params(fn, is_method: bool) -> str:
    try:
        sig = inspect.signature(fn)
    except (ValueError, TypeError):
        return "self, *args: Any, **kwargs: Any" if is_method else "*args: Any, **kwargs: Any"
    out = []
    seen_kwonly = False
    for i, p in enumerate(sig.parameters.values()):
        if i == 0 and is_method and p.name in ("self", "$self", "slf"):
            out.append("self")
            continue
        name = p.name.lstrip("$")
        if name in ("self", "slf") and i == 0:
            out.append("self")
            continue
        ann = qualify(PARAM_TYPES.get(name, "Any"))
        if p.kind == p.VAR_POSITIONAL:
            out.append(f"*{name}: Any")
            seen_kwonly = True
            continue
        if p.kind == p.VAR_KEYWORD:
            out.append(f"**{name}: Any")
            continue
        if p.kind == p.KEYWORD_ONLY and not seen_kwonly:
            out.append("*")
            seen_kwonly = True
        if p.kind == p.POSITIONAL_ONLY:
            pass
        default = " = ..." if p.default is not p.empty else ""
        out.append(f"{name}: {ann}{default}")
        if p.kind == p.POSITIONAL_ONLY and (
            i + 1 == len(sig.parameters)
            or list(sig.parameters.values())[i + 1].kind != p.POSITIONAL_ONLY
        ):
            out.append("/")
    if is_method and (not out or out[0] != "self"):
        out.insert(0, "self")
    return ", ".join(out)


def class_stub(cls, name: str) -> list[str]:
    bases = [b.__name__ for b in cls.__bases__ if getattr(b, "__module__", "") == core.__name__]
    lines = [f"class {name}({', '.join(bases)}):" if bases else f"class {name}:"]
    for attr in sorted(vars(cls)):
        if attr in ("__new__", "__doc__", "__module__", "__dict__", "__weakref__") and attr != "__new__":
            continue
        obj = vars(cls)[attr]
        if attr == "__new__":
            lines.append(f"    def __new__(cls, {params(cls, False)}) -> {name}: ...")
            continue
        if inspect.isdatadescriptor(obj) or type(obj).__name__ == "getset_descriptor":
            ty = qualify(PROPERTY_TYPES.get(attr, "Any"))
            lines.append("    @property")
            lines.append(f"    def {attr}(self) -> {ty}: ...")
            if attr in SETTABLE:
                lines.append(f"    @{attr}.setter")
                lines.append(f"    def {attr}(self, value: {ty}) -> None: ...")
            continue
        if callable(obj):
            if attr in ("__eq__", "__ne__"):
                ret = "Tensor" if name == "Tensor" else "builtins.bool"
                lines.append(
                    f"    def {attr}(self, other: builtins.object) -> {ret}:  # type: ignore[override]"
                )
                lines.append("        ...")
                continue
            ret = qualify(RETURNS.get(attr, "Tensor" if name == "Tensor" else "Any"))
            # In-place `**=` takes no modulo, unlike `__pow__` (as in torch).
            ignore = "  # type: ignore[misc]" if attr == "__ipow__" else ""
            lines.append(f"    def {attr}({params(obj, True)}) -> {ret}: ...{ignore}")
        elif isinstance(obj, (int, str)):
            lines.append(f"    {attr}: builtins.{type(obj).__name__}")
    return lines


def main() -> None:
    out = [
        '"""Type stubs of ferrograd._core (generated by scripts/gen_stubs.py)."""',
        "",
        "import builtins",
        "from collections.abc import Iterator",
        "from typing import Any",
        "",
        "_DTypeLike = dtype | builtins.type | builtins.str",
        "_DeviceLike = builtins.str | device",
        "",
    ]
    for name in sorted(dir(core)):
        obj = getattr(core, name)
        if name.startswith("__"):
            continue
        if isinstance(obj, type):
            out += class_stub(obj, name) + [""]
        elif isinstance(obj, core.dtype):
            out.append(f"{name}: dtype")
        elif callable(obj):
            ret = qualify(RETURNS.get(name, "Tensor"))
            out.append(f"def {name}({params(obj, False)}) -> {ret}: ...")
    target = Path(__file__).resolve().parent.parent / "python" / "ferrograd" / "_core.pyi"
    target.write_text("\n".join(out) + "\n")
    print(f"wrote {target.relative_to(Path.cwd()) if target.is_relative_to(Path.cwd()) else target}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
