"""Docstrings assembled from shared pieces, so that text several docstrings repeat (an
example, an argument's description) is written once.

A docstring line that holds nothing but ``{name}`` (after its indentation) stands for the
piece ``name``: the piece's lines, each indented as that line was. A piece may itself hold
such lines. A line ``{name:value}`` also passes ``value``: each ``<value>`` in the piece
becomes ``value`` (for pieces that differ only in a default or a name).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from typing import TypeVar

_T = TypeVar("_T")

_PIECE_LINE = re.compile(r"^( *)\{(\w+)(?::([^{}]*))?\}$", re.MULTILINE)


def fill_doc(doc: str, pieces: Mapping[str, str]) -> str:
    """``doc`` with each line ``{name}`` or ``{name:value}`` replaced by ``pieces[name]``
    (with ``value`` for ``<value>``, filled in turn), indented as that line."""

    def expand(match: re.Match[str]) -> str:
        indent, name, value = match.groups()
        text = pieces[name] if value is None else pieces[name].replace("<value>", value)
        return textwrap.indent(fill_doc(text, pieces), indent)

    return _PIECE_LINE.sub(expand, doc)


def with_doc_pieces(pieces: Mapping[str, str]) -> Callable[[_T], _T]:
    """Decorator of a class or function whose docstring has ``{name}`` lines: fills them from
    ``pieces`` (see :func:`fill_doc`)."""

    def fill(obj: _T) -> _T:
        if obj.__doc__:
            obj.__doc__ = fill_doc(obj.__doc__, pieces)
        return obj

    return fill
