"""Import layering of the vmap machinery: the modules below import each
other in one direction only.

The graph is read from the source with ``ast``: every import statement,
including those inside functions (a lazy import closes a circle as surely
as a top-level one; it only moves the failure to the first call).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "ferrograd"

# The modules that must form a layered (acyclic) graph among themselves.
LAYERED = frozenset({
    "ferrograd._routed", "ferrograd.func._vmap", "ferrograd.func._rules", "ferrograd.autograd.function",
    "ferrograd.autograd._function_vmap", "ferrograd._batched", "ferrograd._batched_grad",
})  # fmt: skip


def _modules() -> dict[str, tuple[Path | None, bool]]:
    """Module name -> (source file, is a package) for the package's Python
    modules, and (None, False) for its extension modules (their stubs)."""
    mods: dict[str, tuple[Path | None, bool]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        mods[".".join(parts)] = (path, is_package)
    for path in sorted(PACKAGE.rglob("*.pyi")):
        mods.setdefault(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts), (None, False))
    return mods


def _known(name: str, mods: dict[str, tuple[Path | None, bool]]) -> str | None:
    """The innermost module of the package that ``name`` (a dotted name)
    is or lies in, or None for names outside the package."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, dict[str, list[int]]]:
    """Importer -> imported module -> line numbers, over the modules of the
    package; ``from pkg import name`` counts as importing ``pkg.name``
    when that is a module, else ``pkg``."""
    mods = _modules()
    graph: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for mod, (path, is_package) in mods.items():
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_package else mod.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    if node.module:
                        base.append(node.module)
                    origin = ".".join(base)
                else:
                    origin = node.module or ""
                names = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in mods else origin
                         for alias in node.names]
            for name in names:
                target = _known(name, mods)
                if target is not None and target != mod:
                    graph[mod][target].append(node.lineno)
    return graph


def _short(mod: str) -> str:
    return mod.removeprefix("ferrograd.").replace(".", "/")


def _edge(graph: dict[str, dict[str, list[int]]], a: str, b: str) -> str:
    return f"{_short(a)} -> {_short(b)} (line {', '.join(map(str, sorted(set(graph[a][b]))))})"


def _cycles(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module
    (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_the_layered_modules():
    # Guards the tests below against passing on an empty graph.
    graph = import_graph()
    assert LAYERED <= set(_modules())
    assert "ferrograd._routed" in graph["ferrograd.func._vmap"]
    assert "ferrograd._batched" in graph["ferrograd.autograd.function"]


def test_no_pair_of_layered_modules_imports_both_ways():
    graph = import_graph()
    both = [f"{_edge(graph, a, b)} and {_edge(graph, b, a)}"
            for a in sorted(LAYERED) for b in sorted(LAYERED)
            if a < b and b in graph[a] and a in graph[b]]
    assert not both, "modules importing each other:\n" + "\n".join(both)


def test_no_cycle_among_layered_modules():
    graph = import_graph()
    edges = {a: set(graph[a]) & LAYERED for a in LAYERED}
    cycles = _cycles(set(LAYERED), edges)
    report = [
        ", ".join(map(_short, c)) + ":\n  " + "\n  ".join(
            _edge(graph, a, b) for a in c for b in sorted(edges[a] & set(c)))
        for c in cycles
    ]
    assert not cycles, "import cycles:\n" + "\n".join(report)


def test_autograd_does_not_import_func():
    # ferrograd.func builds on ferrograd.autograd (func._transforms imports
    # autograd.functional); an import back from autograd into func would
    # run func's __init__ (and so autograd's) from inside autograd.
    graph = import_graph()
    back = [_edge(graph, a, b) for a in sorted(graph) for b in sorted(graph[a])
            if (a + ".").startswith("ferrograd.autograd.") and (b + ".").startswith("ferrograd.func.")]
    assert not back, "autograd imports from func:\n" + "\n".join(back)


def test_func_vmap_fills_the_slots_of_the_lower_layers():
    # _routed and autograd._function_vmap reach func._vmap only through
    # what it installs in them when it is imported (with ferrograd).
    import ferrograd  # noqa: F401
    from ferrograd import _routed
    from ferrograd.autograd import _function_vmap
    from ferrograd.func import _vmap

    assert _routed._dispatcher is _vmap.dispatcher
    assert _function_vmap._routing is _vmap._routing
