"""mkdocs hooks of the documentation site (mkdocs.yml's ``hooks``).

The API reference groups the ~250 functions at the top of ``ferrograd`` by
the module that defines them, so that a page lists pointwise operations,
reductions and so on under their own headings without a hand-kept list that
would go stale. A ``::: ferrograd`` block of ``docs/api/*.md`` may say, in
place of a ``members`` list:

- ``members: __all__ of ferrograd._ops_pointwise ferrograd._ops_views``:
  the names in those modules' ``__all__``;
- ``members: the rest of ferrograd except Tensor``: the public names of
  that module that no other ``members`` list of the page names, less
  submodules and the names after ``except`` (documented on pages of their
  own).

The hook writes the lists out before mkdocstrings reads the page.

It also adjusts two things in the guides: an escaped pipe ``\\|`` inside
a code span of a table row becomes a plain ``|``, as GitHub shows it
(Python-Markdown's tables already leave pipes inside code spans alone, and
would show the backslash); and the generated docs/formulas.md, whose tables
are wide, gets the page width without the navigation column.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

_ALL_OF = re.compile(r"^(\s*)members: __all__ of ([\w. ]+)$", re.M)
_REST = re.compile(r"^(\s*)members: the rest of ([\w.]+)(?: except ([\w ]+))?$", re.M)
_LIST = re.compile(r"^\s*members: \[([^\]]*)\]$", re.M)
_TABLE_ROW = re.compile(r"^\|.*$", re.M)
_CODE_SPAN = re.compile(r"`[^`]*`")


def _flow_list(names: list[str]) -> str:
    return "[" + ", ".join(names) + "]"


def _all_of(match: re.Match[str]) -> str:
    indent, modules = match.groups()
    names: list[str] = []
    for module in modules.split():
        names += [n for n in importlib.import_module(module).__all__ if n not in names]
    return f"{indent}members: {_flow_list(sorted(names))}"


def _unescape_pipes_in_code(row: re.Match[str]) -> str:
    return _CODE_SPAN.sub(lambda code: code[0].replace("\\|", "|"), row[0])


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri == "formulas.md":
        page.meta.setdefault("hide", ["navigation"])
    markdown = _TABLE_ROW.sub(_unescape_pipes_in_code, markdown)
    if "members: __all__ of" not in markdown and "members: the rest of" not in markdown:
        return markdown
    markdown = _ALL_OF.sub(_all_of, markdown)
    listed = {n.strip() for names in _LIST.findall(markdown) for n in names.split(",")}

    def rest(match: re.Match[str]) -> str:
        indent, name, exclude = match.groups()
        skip = listed | set((exclude or "").split())
        module = importlib.import_module(name)
        names = [
            n
            for n, obj in vars(module).items()
            if not n.startswith("_") and n not in skip and not inspect.ismodule(obj) and n != "annotations"
        ]
        return f"{indent}members: {_flow_list(sorted(names))}"

    return _REST.sub(rest, markdown)
