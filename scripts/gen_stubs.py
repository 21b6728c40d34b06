"""Writes python/ferrograd/_core.pyi, and the module functions of the unary
table rows in python/ferrograd/_ops_pointwise.py, from the built extension
module.

The bindings carry their Python signatures (pyo3's ``__text_signature__``);
this script turns them into a stub file, adding type annotations from the
parameter-name table below and return types from the return table. CI runs
``mypy.stubtest`` against the installed module, so a stale stub fails the
build: rerun this script after changing the bindings.

The docstrings the bindings give their functions, methods and classes go
into the stub too, for documentation tools that read it.

The unary rows of the core's derivative tables (``_core._unary_rows()``)
each give ``ferrograd.<op>`` and one function per alias: the lines between
the BEGIN/END markers at the end of ``_ops_pointwise.py`` are rewritten
from the rows (``unary_rows_block``), so a row added in Rust becomes a
module function, a vmap-routed pointwise op and an ``__all__`` entry here.

Usage: python scripts/gen_stubs.py [--check]  (with the wheel or a develop
build installed). ``--check`` writes nothing and fails if the stub differs
from what it would write.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
import types
from pathlib import Path


def _load_core() -> types.ModuleType:
    """The extension module, loaded without running the package's
    ``__init__`` when the package is not imported yet: the package checks
    that every documented function exists, so it fails to import while the
    lines this script writes are stale."""
    if "ferrograd" not in sys.modules:
        spec = importlib.util.find_spec("ferrograd")
        if spec is None or spec.submodule_search_locations is None:
            sys.exit("ferrograd is not installed: build it first (maturin develop)")
        package = types.ModuleType("ferrograd")
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules["ferrograd"] = package
    return importlib.import_module("ferrograd._core")


core = _load_core()

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
    "_rebuild_tensor": "Tensor", "_unary_rows": "list[tuple[str, str, str, list[str], bool, str]]",
    "is_tensor": "bool", "is_floating_point": "bool",
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
# `X | Any` (typeshed's "Any trick") where the value is None only in cases
# the caller knows of: a grad read before any backward, the grad_fn of a leaf,
# the missing edge of an input that needs no grad. Callers use the X without
# a None check; X's own members are still checked.
PROPERTY_TYPES = {
    "shape": "Size", "ndim": "int", "dtype": "dtype", "device": "device", "requires_grad": "bool",
    "grad": "Tensor | Any", "grad_fn": "_Node | Any", "is_leaf": "bool", "_version": "int",
    "_base": "Tensor | None", "data": "Tensor", "T": "Tensor", "mT": "Tensor", "is_cpu": "bool",
    "is_cuda": "bool", "itemsize": "int", "nbytes": "int", "__array_interface__": "dict[str, Any]",
    "is_floating_point": "bool", "is_complex": "bool", "is_signed": "bool", "type": "str",
    "index": "int | None", "output_nr": "int", "retains_grad": "bool",
    "next_functions": "tuple[tuple[_Node | Any, int], ...]", "metadata": "dict[Any, Any]",
    "variable": "Tensor", "id": "int", "materialize_grads": "bool",
    "needs_input_grad": "tuple[bool, ...] | None", "saved_tensors": "tuple[Any, ...]",
    "saved_variables": "tuple[Any, ...]", "real": "Tensor", "imag": "Tensor", "H": "Tensor", "mH": "Tensor",
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
    if is_method and getattr(fn, "__name__", "") == "__reduce__":
        # Introspectable only from Python 3.13 on when the binding gives no
        # text signature; written out so that the stub is the same everywhere.
        return "self"
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
        if p.default is None and ann != "Any" and "None" not in ann:
            ann += " | None"
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


def docstring(doc: str | None, indent: str) -> list[str]:
    """``doc`` as the lines of a docstring at ``indent`` (none for no doc)."""
    if not doc or not doc.strip():
        return []
    text = inspect.cleandoc(doc).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    lines = [f"{indent}{line}" if line else "" for line in text.split("\n")]
    lines[0] = f'{indent}"""{lines[0].lstrip()}'
    if len(lines) == 1:
        return [lines[0] + '"""']
    return lines + [f'{indent}"""']


def define(head: str, doc: str | None, indent: str, comment: str = "") -> list[str]:
    """A ``def``/``class`` line ``head`` (ending in ``:``) with ``doc`` as
    its body, or ``...`` when there is no doc."""
    body = docstring(doc, indent + "    ")
    if not body:
        return [f"{indent}{head} ...{comment}"]
    return [f"{indent}{head}{comment}"] + body


def own_doc(obj) -> str | None:
    """The docstring the bindings give ``obj``; None for CPython's generic
    texts of slot wrappers (``Return self+value.``)."""
    if type(obj).__name__ in ("wrapper_descriptor", "method-wrapper"):
        return None
    return getattr(obj, "__doc__", None)


def decorators(cls) -> list[str]:
    """``@final`` for a class that cannot be subclassed at runtime;
    ``@disjoint_base`` (PEP 800) for one whose instances have a layout of
    their own, so that it cannot be a base together with another such class.
    stubtest checks both against the runtime class."""
    if not cls.__flags__ & (1 << 10):  # Py_TPFLAGS_BASETYPE
        return ["@final"]
    if issubclass(cls, BaseException):
        # An exception made by the C API adds only a __dict__ to its base's
        # layout, which stubtest does not count as a layout of its own.
        return []
    base = cls.__base__
    if cls.__basicsize__ != base.__basicsize__ or cls.__itemsize__ != base.__itemsize__:
        return ["@disjoint_base"]
    return []


def class_stub(cls, name: str) -> list[str]:
    bases = [
        b.__name__
        for b in cls.__bases__
        if getattr(b, "__module__", "") == core.__name__ or (b.__module__ == "builtins" and b is not object)
    ]
    head = f"class {name}({', '.join(bases)}):" if bases else f"class {name}:"
    lines = decorators(cls) + [head]
    lines += docstring(vars(cls).get("__doc__"), "    ")
    for attr in sorted(vars(cls)):
        if attr in ("__doc__", "__module__", "__dict__", "__weakref__", "__buffer__", "__release_buffer__"):
            continue
        obj = vars(cls)[attr]
        if attr in ("__new__", "__init__"):
            # The bindings give the class its signature; both take it.
            first, ret = ("cls", name) if attr == "__new__" else ("self", "None")
            lines.append(f"    def {attr}({first}, {params(cls, False)}) -> {ret}: ...")
            continue
        if inspect.isdatadescriptor(obj) or type(obj).__name__ == "getset_descriptor":
            ty = qualify(PROPERTY_TYPES.get(attr, "Any"))
            lines.append("    @property")
            lines += define(f"def {attr}(self) -> {ty}:", own_doc(obj), "    ")
            if attr in SETTABLE:
                lines.append(f"    @{attr}.setter")
                lines.append(f"    def {attr}(self, value: {ty}) -> None: ...")
            continue
        if isinstance(obj, staticmethod):
            ret = qualify(RETURNS.get(attr, "Tensor" if name == "Tensor" else "Any"))
            lines.append("    @staticmethod")
            fn = obj.__func__
            lines += define(f"def {attr}({params(fn, False)}) -> {ret}:", own_doc(fn), "    ")
            continue
        if callable(obj):
            if attr in ("__eq__", "__ne__"):
                # Tensor compares elementwise: its result is not object's bool.
                ret, ignore = ("builtins.bool", "")
                if name == "Tensor":
                    ret, ignore = "Tensor", "  # type: ignore[override]"
                lines.append(f"    def {attr}(self, other: builtins.object, /) -> {ret}: ...{ignore}")
                continue
            ret = qualify(RETURNS.get(attr, "Tensor" if name == "Tensor" else "Any"))
            # In-place `**=` takes no modulo, unlike `__pow__` (as in torch).
            ignore = "  # type: ignore[misc]" if attr == "__ipow__" else ""
            lines += define(f"def {attr}({params(obj, True)}) -> {ret}:", own_doc(obj), "    ", ignore)
        elif isinstance(obj, (int, str)):
            lines.append(f"    {attr}: builtins.{type(obj).__name__}")
    if name == "Tensor":
        # A tensor exports its memory (memoryview(t)): the buffer protocol,
        # which typing spells __buffer__ (a method from Python 3.12 on).
        lines.append("    def __buffer__(self, flags: builtins.int, /) -> memoryview: ...")
    return lines


PACKAGE = Path(__file__).resolve().parent.parent / "python" / "ferrograd"
BEGIN = "# BEGIN unary rows"
END = "# END unary rows"


def unary_rows_block() -> str:
    """The lines of ``_ops_pointwise.py`` between its BEGIN and END markers."""
    names = [n for _, name, _, aliases, by_hand, _ in core._unary_rows() if not by_hand
             for n in (name, *aliases)]
    lines = [
        BEGIN + ": written by scripts/gen_stubs.py from the rows of the core's unary",
        "# tables (_core._unary_rows()); edit the rows, not these lines.",
        *(f'{n} = _unary("{n}")' for n in names),
        "__all__ += [",
        *(f'    "{n}",' for n in names),
        "]",
        END,
    ]
    return "\n".join(lines) + "\n"


def with_unary_rows(source: str) -> str:
    """``source`` (the text of ``_ops_pointwise.py``) with its generated block
    rewritten; the block is appended if the markers are missing."""
    head, found, rest = source.partition(BEGIN)
    if not found:
        return source.rstrip("\n") + "\n\n" + unary_rows_block()
    _, found, tail = rest.partition(END + "\n")
    if not found:
        sys.exit(f"{BEGIN!r} without {END!r} in _ops_pointwise.py")
    return head + unary_rows_block() + tail


def main() -> None:
    out = [
        '"""Type stubs of ferrograd._core (generated by scripts/gen_stubs.py)."""',
        "",
        "import builtins",
        "from collections.abc import Iterator",
        "from typing import Any, final",
        "",
        "from typing_extensions import disjoint_base",
        "",
        "from ferrograd._size import Size",
        "",
        "_DTypeLike = dtype | builtins.type | builtins.str",
        "_DeviceLike = builtins.str | device",
        "",
    ]
    out += ["__all__ = ["] + [f'    "{name}",' for name in sorted(core.__all__)] + ["]"]
    out.append("__version__: builtins.str")
    out.append("")
    classes = {obj for obj in vars(core).values() if isinstance(obj, type)}
    for name in sorted(dir(core)):
        obj = getattr(core, name)
        if name.startswith("__"):
            continue
        if isinstance(obj, type):
            out += class_stub(obj, name) + [""]
        elif type(obj) in classes:
            # Instances: dtypes (float32...), the default generator.
            out.append(f"{name}: {type(obj).__name__}")
        elif callable(obj):
            ret = qualify(RETURNS.get(name, "Tensor"))
            out += define(f"def {name}({params(obj, False)}) -> {ret}:", own_doc(obj), "")
    ops = PACKAGE / "_ops_pointwise.py"
    for target, text in [(PACKAGE / "_core.pyi", "\n".join(out) + "\n"),
                         (ops, with_unary_rows(ops.read_text()))]:
        if "--check" in sys.argv[1:]:
            if target.read_text() != text:
                sys.exit(f"{target} is stale: rerun scripts/gen_stubs.py")
            continue
        target.write_text(text)
        shown = target.relative_to(Path.cwd()) if target.is_relative_to(Path.cwd()) else target
        print(f"wrote {shown}", file=sys.stderr)


if __name__ == "__main__":
    main()
