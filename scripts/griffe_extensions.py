"""griffe extensions for the API reference (mkdocs.yml loads them through
mkdocstrings' ``extensions`` option).

``TorchStyleDocstrings`` reads ferrograd's torch-style docstrings as Markdown.

The docstrings follow torch's conventions, which come from reStructuredText:
``Example::`` before an indented ``>>>`` block, and roles such as
``:class:`Adam``` or ``:meth:`~Optimizer.state_dict```. mkdocstrings parses
docstrings in Google style and renders their text as Markdown, where those
would show literally. This extension rewrites them before parsing:

- ``Example::``, ``Example:`` and ``Examples::`` become a Google
  ``Examples:`` section, whose ``>>>`` lines are rendered as highlighted
  Python (Google style reads a singular ``Example:`` as an admonition);
- any other paragraph ending in ``::`` ends in ``:`` (the indented block
  after it is already a Markdown code block);
- ``:role:`target``` becomes ```target```, and ``~a.b.c`` shows as ``c``;
- the opening paragraph is joined into one line, which the summary tables
  show (Markdown renders the paragraph the same).

``NoSpecialMembers`` leaves out the special members of classes
(``__dict__``, ``__weakref__``, ``__enter__``...): the reference is read at
run time, where every class has them, and they are not API worth a heading.
``__init__`` and ``__new__`` stay, since class signatures are read from them,
without the docstrings they inherit from ``object``.

``NoValueTypeDocstrings`` drops the docstring an attribute gets from the
type of its value when it is inspected (``call_super_init = False`` would
show ``bool``'s docstring).

``NoModuleDocstrings`` drops the docstrings of the modules it is given
(``fnmatch`` patterns): a reference page that renders a module in several
blocks, or writes its own introduction, would otherwise repeat it.
"""

from __future__ import annotations

import inspect
import re
from fnmatch import fnmatchcase
from typing import Any

import griffe

_ROLE = re.compile(
    r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|ref|term):`(~?)([^`<]+?)(?:\s*<[^>]*>)?`"
)
# the title, and the blank lines after it (Google sections start on the next line)
_EXAMPLE = re.compile(r"^([ \t]*)Examples?::?[ \t]*\n(?:[ \t]*\n)*", re.M)
_LITERAL = re.compile(r"(\S)::[ \t]*$", re.M)
_PLAIN_LINE_END = re.compile(r"^\w[\w ]*:$")  # a Google section title ("Args:")


def _role(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


def _one_line_summary(text: str) -> str:
    """``text`` with its opening paragraph on one line: the summary tables
    show a docstring's first line, and torch-style summaries wrap."""
    lines = text.split("\n")
    end = 0
    while end < len(lines) and lines[end].strip() and not _PLAIN_LINE_END.search(lines[end]):
        if lines[end].startswith((" ", ">>>", "-", "*", "|", "`" * 3)):
            return text
        end += 1
    if end < 2:
        return text
    return "\n".join([" ".join(lines[:end]), *lines[end:]])


def markdown_docstring(text: str) -> str:
    """The docstring ``text`` with its reStructuredText idioms made Markdown."""
    text = _ROLE.sub(_role, text)
    text = _EXAMPLE.sub(r"\1Examples:\n", text)
    text = _LITERAL.sub(r"\1:", text)
    return _one_line_summary(text)


class TorchStyleDocstrings(griffe.Extension):
    """Rewrites every loaded object's docstring with ``markdown_docstring``."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)


class NoSpecialMembers(griffe.Extension):
    """Removes ``__dunder__`` members from classes, except the constructors."""

    def on_class_members(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        for name in list(cls.members):
            if name in ("__init__", "__new__"):
                member = cls.members[name]
                if member.is_alias:
                    continue
                if member.docstring is not None and member.docstring.value == getattr(object, name).__doc__:
                    member.docstring = None  # object's "Initialize self. See help(type(self))..."
            elif name.startswith("__") and name.endswith("__"):
                del cls.members[name]


class NoModuleDocstrings(griffe.Extension):
    """Removes the docstrings of the modules matching ``modules``."""

    def __init__(self, modules: list[str]) -> None:
        super().__init__()
        self.modules = modules

    def on_module_members(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        if any(fnmatchcase(mod.path, pattern) for pattern in self.modules):
            mod.docstring = None


class NoValueTypeDocstrings(griffe.Extension):
    """Removes attribute docstrings that are their value's type's docstring."""

    def on_attribute_instance(self, *, node: Any, attr: griffe.Attribute, **kwargs: Any) -> None:
        value = getattr(node, "obj", None)
        if attr.docstring is not None and value is not None:
            type_doc = inspect.getdoc(type(value))
            if type_doc is not None and attr.docstring.value in (type_doc, markdown_docstring(type_doc)):
                attr.docstring = None
