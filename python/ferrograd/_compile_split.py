"""Graph breaks: a compiled function cut into captured pieces around the
statement whose capture broke.

While a function is captured, a line tracer on its frame notes which of its
top-level statements was running when the capture broke (a ``print``, a
float read into Python, a call of a ``compiler.disable`` function). The
function's source is then cut there: the statements before that one become
one compiled piece, the statement itself runs eagerly on every call, and the
statements after it become another compiled piece (which may be cut again
when its own capture breaks). Local variables pass between the parts in a
dict, so each piece is an ordinary compiled function whose guards cover the
values it receives. A function whose source cannot be cut safely (no
source, a generator, ``global``/``nonlocal``, zero-argument ``super()``,
``locals()``, names Python would mangle) keeps running eagerly whole.
"""

from __future__ import annotations

import ast
import copy
import inspect
import sys
import textwrap
import types
from collections.abc import Callable
from typing import Any

from . import _core

_ENV = "_fg_env"
_OUT = "_fg_out"
_MAKE = "_fg_make"
# Flags of generator, coroutine and async generator code.
_SUSPENDS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
# Names whose meaning depends on the frame or the class they run in.
_FRAME_NAMES = frozenset({"super", "__class__", "locals", "vars", "exec", "eval", _ENV, _OUT, _MAKE})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def code_of(fn: Callable) -> Any:
    """The code object a call of ``fn`` runs, if it is a Python function."""
    return getattr(getattr(fn, "__func__", fn), "__code__", None)


class _Names(ast.NodeVisitor):
    """The names a run of statements binds in the function's own scope
    (``stored``) and the names it reads, in any nested scope (``read``)."""

    def __init__(self) -> None:
        self.stored: set[str] = set()
        self.read: set[str] = set()
        self.scopes = 0  # nested functions, lambdas and classes entered
        self.comps = 0  # comprehensions entered

    def bind(self, name: str | None, walrus: bool = False) -> None:
        if name is not None and self.scopes == 0 and (walrus or self.comps == 0):
            self.stored.add(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load | ast.Del):
            self.read.add(node.id)
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.bind(node.id)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.read.add(node.target.id)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bind(node.target.id, walrus=True)
        self.read.add(node.target.id)
        self.visit(node.value)

    def _scope(self, node: ast.AST, name: str | None = None) -> None:
        self.bind(name)
        self.scopes += 1
        self.generic_visit(node)
        self.scopes -= 1

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scope(node, node.name)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._scope(node, node.name)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scope(node, node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._scope(node)

    def _comprehension(self, node: ast.AST) -> None:
        self.comps += 1
        self.generic_visit(node)
        self.comps -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_alias(self, node: ast.alias) -> None:
        self.bind(node.asname or node.name.split(".")[0])

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self.bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.bind(node.rest)
        self.generic_visit(node)


def _names(stmts: list[ast.stmt]) -> _Names:
    v = _Names()
    for s in stmts:
        v.visit(s)
    return v


def _mangled(name: str | None) -> bool:
    return name is not None and name.startswith("__") and not name.endswith("__")


def _refusal(fdef: ast.FunctionDef) -> str | None:
    """Why the body of ``fdef`` cannot be cut into functions of its own."""
    for node in ast.walk(fdef):
        if isinstance(node, ast.Global | ast.Nonlocal):
            return "it declares global or nonlocal names"
        if isinstance(node, ast.Yield | ast.YieldFrom | ast.Await):
            return "it suspends (yield or await)"
        name = None
        if isinstance(node, ast.Name):
            if node.id in _FRAME_NAMES:
                return f"it uses {node.id}"
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            name = node.name
        elif isinstance(node, ast.arg):
            name = node.arg
        elif isinstance(node, ast.alias):
            name = node.asname or node.name
        if _mangled(name):
            return f"it uses the private name {name}, which Python mangles in a class"
    return None


class _Returns(ast.NodeTransformer):
    """``return v`` in the function's own scope becomes ``return (True, v)``."""

    def visit_Return(self, node: ast.Return) -> ast.Return:
        value = node.value if node.value is not None else ast.Constant(None)
        return ast.copy_location(ast.Return(ast.Tuple([ast.Constant(True), value], ast.Load())), node)

    def _keep(self, node: ast.AST) -> ast.AST:
        return node  # returns of nested functions stay theirs

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _keep


def _at_line(stmts: list[ast.stmt], line: int) -> list[ast.stmt]:
    for s in stmts:
        for node in ast.walk(s):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = line
    return stmts


def _inner_code(outer: ast.FunctionDef | ast.Module, filename: str, name: str) -> Any:
    code = compile(ast.fix_missing_locations(outer), filename, "exec")
    make = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return next(c for c in make.co_consts if isinstance(c, types.CodeType) and c.co_name == name)


def _enclosed(fn_text: str, freevars: tuple[str, ...]) -> ast.Module:
    """A module defining ``_fg_make``, which binds ``freevars`` and
    defines the function ``fn_text`` in its body (so the function's code
    refers to those names as free variables, as a closure's does)."""
    holders = "".join(f"    {v} = None\n" for v in freevars)
    return ast.parse(f"def {_MAKE}():\n{holders}{textwrap.indent(fn_text, '    ')}")


def _same_code(fdef: ast.FunctionDef, code: Any) -> bool:
    """Whether the source ``fdef`` compiles to the bytecode ``code`` runs
    (the file may have been edited since the function was loaded)."""
    bare = copy.deepcopy(fdef)
    bare.decorator_list = []
    try:
        module = _enclosed(f"def {fdef.name}():\n    pass\n", code.co_freevars)
        module.body[0].body[len(code.co_freevars)] = bare
        got = _inner_code(module, code.co_filename, fdef.name)
    except (SyntaxError, ValueError, TypeError, StopIteration):
        return False
    return (got.co_code, got.co_names, got.co_varnames, got.co_freevars) == (
        code.co_code, code.co_names, code.co_varnames, code.co_freevars)


class Body:
    """A function body that can be cut: its top-level statements, what its
    parts need to run (the names local to the function, its globals, its
    closure cells, the file it came from), how a call binds the locals,
    and which locals a piece of a larger body hands on (``outs``)."""

    def __init__(self, stmts: list[ast.stmt], shared: dict[str, Any], outs: tuple[str, ...] | None) -> None:
        self.stmts = stmts
        self.shared = shared
        self.outs = outs  # None: the function's own body, which returns its value

    @staticmethod
    def of(fn: Callable) -> Body | str:
        """The body of ``fn``, or why it cannot be cut."""
        f = getattr(fn, "__func__", fn)
        code = code_of(fn)
        if code is None or code.co_flags & _SUSPENDS:
            return "it is not a plain Python function"
        try:
            lines, first = inspect.getsourcelines(f)
            tree = ast.parse(textwrap.dedent("".join(lines)))
        except (OSError, TypeError, SyntaxError, IndentationError):
            return "its source is not available"
        fdef = tree.body[0] if tree.body else None
        if not isinstance(fdef, ast.FunctionDef) or fdef.name != code.co_name:
            return "its source is not a def statement"
        why = _refusal(fdef)
        if why is not None:
            return why
        ast.increment_lineno(tree, first - 1)
        if not _same_code(fdef, code):
            return "its source file changed since it was loaded"
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError):
            return "its signature is not available"
        a = fdef.args
        params = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        params += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
        names = _names(fdef.body)
        shared = {
            "locals": frozenset(params) | names.stored,
            "globals": f.__globals__,
            "cells": dict(zip(code.co_freevars, f.__closure__ or (), strict=True)),
            "filename": code.co_filename,
            "signature": signature,
            "self": (params[0], fn.__self__) if hasattr(fn, "__self__") and params else None,
            "name": code.co_name,
        }
        return Body(fdef.body, shared, None)

    def bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        """The locals a call starts with."""
        if self.outs is not None:
            return dict(args[0])  # a piece: the dict its caller passed
        bound = self.shared["signature"].bind(*args, **kwargs)
        bound.apply_defaults()
        env = dict(bound.arguments)
        if self.shared["self"] is not None:
            name, obj = self.shared["self"]
            env[name] = obj
        return env

    def finish(self, done: bool, value: Any) -> Any:
        """A call's result from how its last part ended."""
        if self.outs is not None:
            return done, value
        return value if done else None

    def index(self, line: int) -> int | None:
        """The top-level statement holding ``line``."""
        for i, s in enumerate(self.stmts):
            if s.lineno <= line <= (s.end_lineno or s.lineno):
                return i
        return None

    def part(self, stmts: list[ast.stmt], later: set[str], piece: int) -> tuple[Callable, tuple, tuple]:
        """A function running ``stmts`` over a dict of locals, with the
        locals it reads and the ones it hands on (those ``later`` reads)."""
        local = self.shared["locals"]
        names = _names(stmts)
        ins = tuple(sorted(names.read & local))
        outs = tuple(sorted(names.stored & later))
        first, last = stmts[0].lineno, stmts[-1].end_lineno or stmts[-1].lineno
        pro = "".join(f"if {k!r} in {_ENV}:\n    {k} = {_ENV}[{k!r}]\n" for k in ins)
        epi = f"{_OUT} = {{}}\n"
        epi += "".join(f"try:\n    {_OUT}[{k!r}] = {k}\nexcept NameError:\n    pass\n" for k in outs)
        epi += f"return (False, {_OUT})\n"
        body = _at_line(ast.parse(pro).body, first)
        body += [_Returns().visit(copy.deepcopy(s)) for s in stmts]
        body += _at_line(ast.parse(epi).body, last)
        name = f"{self.shared['name']}_part{piece}"
        # The closure's names are bound in an enclosing function, so the
        # part's code refers to them as free variables: it is then given
        # the original function's cells.
        cells = self.shared["cells"]
        module = _enclosed(f"def {name}({_ENV}):\n    pass\n", tuple(cells))
        _at_line([module.body[0]], first)
        module.body[0].body[len(cells)].body = body
        fcode = _inner_code(module, self.shared["filename"], name)
        closure = tuple(cells[v] for v in fcode.co_freevars)
        fn = types.FunctionType(fcode, self.shared["globals"], name, None, closure or None)
        return fn, ins, outs

    def piece(self, stmts: list[ast.stmt], outs: tuple[str, ...]) -> Body:
        return Body(stmts, self.shared, outs)


class Split:
    """A body cut at one statement: compiled pieces before and after it,
    the statement itself run eagerly; ``run`` passes the locals along."""

    def __init__(self, body: Body, at: int, compiled: Callable[[Callable, Body], Any],
                 eager: Callable[[Callable, tuple, dict], Any]) -> None:
        self.body = body
        self.eager = eager  # runs the eager statement (see _Compiled.eager)
        stmts = body.stmts
        groups = [(stmts[:at], True), ([stmts[at]], False), (stmts[at + 1:], True)]
        groups = [(g, c) for g, c in groups if g]
        self.parts: list[tuple[Any, tuple, tuple]] = []
        final = set(body.outs or ())
        for k, (group, is_compiled) in enumerate(groups):
            later = set(final)
            for g, _ in groups[k + 1:]:
                later |= _names(g).read
            fn, ins, outs = body.part(group, later, k)
            self.parts.append((compiled(fn, body.piece(group, outs)) if is_compiled else fn, ins, outs))

    def pieces(self) -> list[Any]:
        """The compiled pieces."""
        return [p for p, _, _ in self.parts if not isinstance(p, types.FunctionType)]

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        env = self.body.bind(args, kwargs)
        for fn, ins, outs in self.parts:
            local = {k: env[k] for k in ins if k in env}
            if isinstance(fn, types.FunctionType):
                done, value = self.eager(fn, (local,), {})
            else:
                done, value = fn(local)
            if done:
                return self.body.finish(True, value)
            for k in outs:
                if k in value:
                    env[k] = value[k]
                else:
                    env.pop(k, None)  # deleted, or never bound
        final = self.body.outs or ()
        return self.body.finish(False, {k: env[k] for k in final if k in env})


class Locator:
    """A line tracer on one code object's frame: the first line after which
    this thread's capture was found broken."""

    def __init__(self, code: Any) -> None:
        self.code = code
        self.last: int | None = None
        self.line: int | None = None
        self.entered = False

    def start(self) -> bool:
        if self.code is None or sys.gettrace() is not None:
            return False  # a debugger or coverage tool is tracing
        sys.settrace(self._call)
        return True

    @staticmethod
    def stop() -> None:
        sys.settrace(None)

    def _call(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code is self.code and not self.entered:
            self.entered = True
            return self._local
        return None

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        if self.line is None and self.last is not None and _core._capture_broken():
            self.line = self.last
        if event == "line":
            self.last = frame.f_lineno
        return self._local
