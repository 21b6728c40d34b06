"""The ``>>>`` examples in the public docstrings run and print what they show.

Every public function, class and method of the modules below is collected;
each docstring's examples run as a doctest (whitespace-normalised, ``...``
allowed) in the namespace of the module it was found in, with
``ferrograd``, ``nn``, ``F`` (``nn.functional``), ``optim`` and ``numpy as
np`` in scope and the random
seed set to 0. A docstring without examples yields no test.
"""

from __future__ import annotations

import doctest
import enum
import importlib
import inspect

import ferrograd
import numpy as np
import pytest

MODULES = [
    "ferrograd", "ferrograd.linalg", "ferrograd.special", "ferrograd.fft", "ferrograd.nn",
    "ferrograd.nn.functional", "ferrograd.nn.init",
    "ferrograd.autograd", "ferrograd.autograd.functional", "ferrograd.autograd.forward_ad",
    "ferrograd.autograd.graph", "ferrograd.autograd.gradcheck", "ferrograd.autograd.profiler",
    "ferrograd.func", "ferrograd.optim", "ferrograd.optim.lr_scheduler", "ferrograd.optim.swa_utils",
    "ferrograd.utils.data", "ferrograd.utils.checkpoint",
    "ferrograd.profiler", "ferrograd.distributed",
    "ferrograd.autograd.function", "ferrograd.autograd.profiler_util", "ferrograd.serialization",
    "ferrograd.utils.dlpack", "ferrograd.functorch", "ferrograd.testing", "ferrograd.utils.benchmark",
    "ferrograd.utils.safetensors", "ferrograd.nn.utils.parametrize", "ferrograd.nn.utils.parametrizations",
    "ferrograd.nn.utils.prune", "ferrograd.nn.utils.weight_norm", "ferrograd.nn.utils.spectral_norm",
    "ferrograd.distributions", "ferrograd.distributions.constraints", "ferrograd.distributions.transforms",
    "ferrograd.distributions.utils", "ferrograd.distributions.constraint_registry", "ferrograd.amp",
    "ferrograd.amp.autocast_mode", "ferrograd.amp.grad_scaler", "ferrograd.cpu",
]  # fmt: skip


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj):
            continue
        yield f"{module.__name__}.{name}", obj
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") or attr == "__init__":
                    yield f"{module.__name__}.{name}.{attr}", member


def _collect():
    seen: dict[str, tuple[str, str]] = {}
    texts: set[str] = set()
    for modname in MODULES:
        module = importlib.import_module(modname)
        for qual, obj in _public(module):
            doc = getattr(obj, "__doc__", None)
            if not isinstance(doc, str) or ">>>" not in doc or doc in texts:
                continue
            texts.add(doc)
            seen[qual] = (modname, doc)
    return sorted(seen.items())


EXAMPLES = _collect()
# The names examples may use without importing them.
NAMES = {
    "ferrograd": ferrograd, "np": np, "nn": ferrograd.nn, "F": ferrograd.nn.functional,
    "optim": ferrograd.optim,
}  # fmt: skip
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


@pytest.mark.parametrize(("qualname", "where"), EXAMPLES, ids=[q for q, _ in EXAMPLES])
def test_docstring_example(qualname, where):
    modname, doc = where
    ferrograd.manual_seed(0)
    globs = {**vars(importlib.import_module(modname)), **NAMES}
    test = doctest.DocTestParser().get_doctest(inspect.cleandoc(doc), globs, qualname, None, 0)
    failures: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)


def _named_params(obj, self_is: str | None) -> list[str]:
    """The argument names a docstring must document (``self`` as ``self_is``, or left out)."""
    try:
        params = inspect.signature(obj).parameters.values()
    except ValueError:  # not introspectable (a Rust function): its docstring's signature line says
        return []
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    names = [self_is if p.name == "self" else p.name for p in params if p.kind not in variadic]
    return [n for n in names if n is not None and not n.startswith("_")]


def _doc_gaps(obj, self_is: str | None = None) -> tuple[bool, list[str]]:
    """Whether ``obj`` has a docstring, and the arguments its Args (or
    Keyword args) section does not name; aliases and in-place forms, which
    name the function documented instead, need no Args."""
    doc = inspect.getdoc(obj) or ""
    if not doc.strip():
        return False, []
    if "Alias for " in doc or "In-place version of " in doc:
        return True, []
    starts = [doc.find(h) for h in ("Args:", "Keyword args:") if h in doc]
    sections = doc[min(starts):] if starts else ""
    missing = [p for p in _named_params(obj, self_is) if f"{p} (" not in sections and f"{p}:" not in sections]
    return True, missing


def test_docstring_examples_are_collected():
    # The collection must see the documented API (guards against the
    # collector silently finding nothing).
    names = {q for q, _ in EXAMPLES}
    assert len(names) >= 1
    # Every public function of ``ferrograd`` has a docstring whose Args (or
    # Keyword args) section names each of its arguments, unless it is an
    # alias or in-place form naming the function documented instead.
    undocumented, no_args = [], []
    for name in dir(ferrograd):
        obj = getattr(ferrograd, name)
        if name.startswith("_") or not callable(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
            continue
        # A Tensor method routed as a module function shows ``self``: its
        # first argument, documented as ``input``.
        documented, missing = _doc_gaps(obj, self_is="input")
        if not documented:
            undocumented.append(name)
        elif missing:
            no_args.append(f"{name}: {missing}")
    assert not undocumented, f"ferrograd functions without a docstring: {undocumented}"
    assert not no_args, f"ferrograd functions whose Args sections miss arguments: {no_args}"


def _has_doc(obj) -> bool:
    return bool((getattr(obj, "__doc__", None) or "").strip())


def test_every_public_tensor_method_and_property_has_a_docstring():
    tensor = ferrograd.Tensor
    missing = [n for n in dir(tensor) if not n.startswith("_") and not _has_doc(getattr(tensor, n))]
    assert not missing, f"Tensor methods/properties without a docstring: {missing}"
    assert "Example:" in ferrograd.Tensor.__doc__


CLASS_MODULES = [
    "ferrograd.nn", "ferrograd.nn.parallel", "ferrograd.optim", "ferrograd.optim.lr_scheduler",
    "ferrograd.optim.swa_utils", "ferrograd.utils.data",
]  # fmt: skip


def test_every_public_class_of_nn_optim_and_data_has_docstrings_on_it_and_its_methods():
    undocumented = []
    for modname in CLASS_MODULES:
        module = importlib.import_module(modname)
        for name, cls in _public(module):
            if not inspect.isclass(cls) or name.count(".") != modname.count(".") + 1:
                continue
            if not _has_doc(cls):
                undocumented.append(name)
            for attr, member in vars(cls).items():
                if attr.startswith("_"):
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if (inspect.isfunction(member) or isinstance(member, property)) and not _has_doc(member):
                    undocumented.append(f"{name}.{attr}")
    assert not undocumented, f"public classes or methods without a docstring: {undocumented}"


FUNCTION_MODULES = [
    "ferrograd.autograd", "ferrograd.autograd.function", "ferrograd.autograd.functional",
    "ferrograd.autograd.forward_ad", "ferrograd.autograd.graph", "ferrograd.autograd.gradcheck",
    "ferrograd.autograd.anomaly_mode", "ferrograd.autograd.grad_mode", "ferrograd.autograd.profiler",
    "ferrograd.autograd.profiler_util", "ferrograd.profiler", "ferrograd.linalg", "ferrograd.fft",
    "ferrograd.nn.functional", "ferrograd.nn.init", "ferrograd.func", "ferrograd.serialization",
    "ferrograd.special",
]  # fmt: skip


def test_every_public_function_and_class_of_autograd_linalg_functional_and_func_documents_its_args():
    # Each has a docstring; when it takes arguments, the docstring has an
    # Args (or Keyword args) section naming every one of them, unless it
    # is an alias or in-place form naming the function documented instead.
    # Exceptions, enums and metaclasses document no arguments.
    undocumented, no_args = [], []
    for modname in FUNCTION_MODULES:
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name)
            if not callable(obj) or not (getattr(obj, "__module__", None) or "").startswith("ferrograd"):
                continue
            if inspect.isclass(obj) and issubclass(obj, (BaseException, enum.Enum, type)):
                continue
            documented, missing = _doc_gaps(obj)
            if not documented:
                undocumented.append(f"{modname}.{name}")
            elif missing:
                no_args.append(f"{modname}.{name}: {missing}")
    assert not undocumented, f"functions or classes without a docstring: {undocumented}"
    assert not no_args, f"arguments missing from the Args sections: {no_args}"


def test_module_functions_that_are_tensor_methods_have_their_own_docs():
    from ferrograd._routed import route_module

    # ``ferrograd.sum`` is ``Tensor.sum`` routed, with the module's doc; the
    # method keeps its own.
    assert ferrograd.sum.__doc__.startswith("sum(input, dim=None")
    assert ferrograd.Tensor.sum.__doc__ != ferrograd.sum.__doc__
    assert "Alias for :func:`ferrograd.abs`." in ferrograd.absolute.__doc__
    # A doc for a function that is not routed would be lost: refused.
    with pytest.raises(RuntimeError, match="does not route"):
        route_module({"arange": ferrograd.arange}, "m", "", docs={"arange": "doc"})
