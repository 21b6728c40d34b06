"""The Python examples of the guides run, and every ``print(...)  # value``
line prints the value its comment states."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

# scripts/doc_snippets.py finds the examples (scripts/check_types.sh
# type-checks the same ones).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from doc_snippets import snippets  # noqa: E402


def blocks():
    for name, code in snippets():
        yield pytest.param(code, id=name)


@pytest.mark.parametrize("code", list(blocks()))
def test_example_prints_what_its_comments_say(code):
    expected = {}
    for lineno, line in enumerate(code.splitlines(), start=1):
        m = re.match(r"\s*print\(.*\)\s+#\s*(.*)$", line)
        if m:
            expected[lineno] = m.group(1).strip()
    printed = {}

    def record(*args, **kwargs):
        line = sys._getframe(1).f_lineno
        printed[line] = " ".join(str(a) for a in args)

    # The autograd guide's examples run after its opening
    # `import ferrograd as torch`, as the guide says.
    import ferrograd

    env = {"print": record, "__name__": "example", "torch": ferrograd}
    exec(compile(code, "<example>", "exec"), env)
    for lineno, want in expected.items():
        got = printed.get(lineno)
        assert got is not None, f"line {lineno} printed nothing"
        assert " ".join(got.split()) == " ".join(want.split()), (
            f"line {lineno}: printed {got!r}, comment says {want!r}"
        )
