"""One statement per op: each row of the core's unary derivative tables
(``_core._unary_rows()``) reaches every place a pointwise op lives (the
Tensor method and its in-place form, each alias, the module function with
its docs, vmap's pointwise routing, the type stub), and those places hold no
op that is not a row or written by hand on purpose.

The values are checked as properties: a method, its alias, its module
function and its in-place form are four routes to one kernel and must agree
bit for bit; the ops' values against NumPy are tested in test_pointwise.py.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import ferrograd
import numpy as np
import pytest
from ferrograd import _core, _ops_pointwise
from ferrograd._ops_pointwise_docs import _ALIASES, _UNARY_DOCS, DOCS
from ferrograd.func._vmap import _POINTWISE

ROOT = Path(__file__).resolve().parents[2]
ROWS = _core._unary_rows()
ROW_IDS = [row[1] for row in ROWS]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "scripts" / "gen_stubs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stub_tensor_methods() -> set[str]:
    stub = (Path(ferrograd.__file__).parent / "_core.pyi").read_text()
    body = stub.split("\nclass Tensor", 1)[1].split("\nclass ", 1)[0]
    return set(re.findall(r"^    def (\w+)\(", body, flags=re.M))


def test_rows_are_the_tables_unary_families() -> None:
    tables = {row[0] for row in ROWS}
    assert tables == {"FORMULAS_FLOAT", "FORMULAS_NUM"}
    names = [n for row in ROWS for n in (row[1], *row[3])]
    assert len(names) == len(set(names)), "a name is declared by two rows"
    for _, name, inplace, _, _, doc in ROWS:
        assert inplace == name + "_"
        assert doc.endswith(".") and "\n" not in doc, f"{name}: a row's doc is one sentence"


def test_generated_module_functions_are_current() -> None:
    source = (ROOT / "python" / "ferrograd" / "_ops_pointwise.py").read_text()
    assert _generator().with_unary_rows(source) == source, "rerun scripts/gen_stubs.py"


def test_generator_appends_a_missing_block_and_rewrites_a_stale_one() -> None:
    gen = _generator()
    bare = "x = 1\n"
    once = gen.with_unary_rows(bare)
    assert once.startswith(bare) and once.count(gen.BEGIN) == 1 and 'sqrt = _unary("sqrt")' in once
    stale = once.replace('sqrt = _unary("sqrt")\n', "")
    assert gen.with_unary_rows(stale) == once


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_row_reaches_every_place(row: tuple[str, str, str, list[str], bool, str]) -> None:
    _, name, inplace, aliases, by_hand, doc = row
    stub = _stub_tensor_methods()
    # A row written by hand in the binding has its module function (and its
    # docstring) written by hand too.
    assert by_hand or name in _UNARY_DOCS, f"{name} has no entry in _ops_pointwise_docs._UNARY_DOCS"
    for n in (name, *aliases):
        assert callable(getattr(ferrograd.Tensor, n, None)), f"Tensor.{n} is missing"
        assert callable(getattr(ferrograd.Tensor, n + "_", None)), f"Tensor.{n}_ is missing"
        assert {n, n + "_"} <= stub, f"the stub lacks Tensor.{n} or Tensor.{n}_"
        fn = getattr(ferrograd, n)
        if by_hand:
            assert fn.__doc__ and "Example" in fn.__doc__
        else:
            assert fn.__doc__ == DOCS[n]
        assert n in _POINTWISE, f"vmap does not route {n} as pointwise"
        if not by_hand:
            assert n in _ops_pointwise._UNARY and n in _ops_pointwise.__all__
    for alias in aliases:
        assert _ALIASES[alias] == name
        assert f":func:`ferrograd.{name}`" in DOCS[alias]
        assert getattr(ferrograd.Tensor, alias).__doc__ == f"Alias for :meth:`Tensor.{name}`."
    if not by_hand:
        assert getattr(ferrograd.Tensor, name).__doc__ == f"{doc}\n\nSee :func:`ferrograd.{name}`."
        assert getattr(ferrograd.Tensor, inplace).__doc__ == f"In-place version of :meth:`Tensor.{name}`."


def test_hand_written_lines_hold_no_row() -> None:
    gen = _generator()
    source = (ROOT / "python" / "ferrograd" / "_ops_pointwise.py").read_text()
    by_hand = source.split(gen.BEGIN, 1)[0]
    made_by_hand = set(re.findall(r'^(\w+) = _unary\("\w+"\)$', by_hand, flags=re.M))
    generated = {n for row in ROWS if not row[4] for n in (row[1], *row[3])}
    assert not made_by_hand & generated
    # Every documented unary function exists, and every factory-made one is documented.
    assert set(_UNARY_DOCS) <= set(_ops_pointwise._UNARY) | {"round"}
    assert set(_ops_pointwise._UNARY) <= set(DOCS)


def _sample(name: str) -> np.ndarray:
    rng = np.random.default_rng(sum(map(ord, name)))
    x = rng.uniform(-3.0, 3.0, size=(3, 4))
    if name in {"acosh", "arccosh"}:
        x = 1.0 + np.abs(x)
    elif name in {"asin", "acos", "atanh", "arcsin", "arccos", "arctanh"}:
        x = np.tanh(x)
    elif name in {"sqrt", "rsqrt", "log", "log1p", "log2", "log10"}:
        x = np.abs(x) + 0.1
    return x


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_every_route_of_a_row_computes_the_same(row: tuple[str, str, str, list[str], bool, str]) -> None:
    _, name, inplace, aliases, _, _ = row
    x = ferrograd.tensor(_sample(name), dtype=ferrograd.float64)
    want = getattr(x, name)().numpy()
    # Not a constant or a copy of the input: the row's op did something.
    assert want.shape == (3, 4)
    for n in (name, *aliases):
        np.testing.assert_array_equal(getattr(x, n)().numpy(), want)
        np.testing.assert_array_equal(getattr(ferrograd, n)(x).numpy(), want)
        y = x.clone()
        assert getattr(y, n + "_")() is y
        np.testing.assert_array_equal(y.numpy(), want)
        out = ferrograd.empty(3, 4, dtype=ferrograd.float64)
        getattr(ferrograd, n)(x, out=out)
        np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize("name", _ops_pointwise._BINARY)
def test_binary_function_reaches_every_place(name: str) -> None:
    # The binary pointwise functions are listed by hand; each still needs
    # its method pair, stub entries, docs and vmap routing.
    stub = _stub_tensor_methods()
    assert callable(getattr(ferrograd.Tensor, name, None)) and name in stub, f"Tensor.{name} is missing"
    # torch has no in-place maximum or minimum.
    if name not in {"maximum", "minimum"}:
        assert callable(getattr(ferrograd.Tensor, name + "_", None)), f"Tensor.{name}_ is missing"
        assert name + "_" in stub
    assert getattr(ferrograd, name).__doc__ == DOCS[name]
    assert name in _POINTWISE and name in _ops_pointwise.__all__
    a = ferrograd.tensor([[1.0, -2.0, 3.5], [0.5, 4.0, -1.0]])
    b = ferrograd.tensor([2.0, 3.0, -1.5])
    if name.startswith("bitwise") or name in {"gcd", "lcm"}:
        a, b = a.long(), b.long()
    want = getattr(a, name)(b)
    np.testing.assert_array_equal(getattr(ferrograd, name)(a, b).numpy(), want.numpy())
