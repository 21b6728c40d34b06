"""The Python examples of the guides run, and every ``print(...)  # value``
line prints the value its comment states."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDES = [
    "autograd.md",
    "tensors.md",
    "custom-functions.md",
    "debugging.md",
    "forward-ad.md",
    "functional.md",
    "profiler.md",
    "nn-functional.md",
    "nn.md",
    "data.md",
    "optim.md",
    "func.md",
]


def blocks():
    for name in GUIDES:
        path = DOCS / name
        if not path.exists():
            continue
        for i, code in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S)):
            yield pytest.param(code, id=f"{name}-{i}")


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
