"""The Python examples of the guides in docs/, one module each.

tests/python/test_docs_examples.py runs these examples; scripts/check_types.sh
writes them to a directory with this script and type-checks them there with
``mypy --strict``. An example runs after its guide's opening ``import
ferrograd as torch``, so each written module starts with that line.

Usage: python scripts/doc_snippets.py OUT_DIR
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
# The guides whose examples run as they stand (the others show fragments).
GUIDES = [
    "index.md",
    "autograd.md",
    "tensors.md",
    "custom-functions.md",
    "debugging.md",
    "forward-ad.md",
    "functional.md",
    "profiler.md",
    "nn-functional.md",
    "nn.md",
    "nn-utils.md",
    "data.md",
    "optim.md",
    "checkpoint.md",
    "func.md",
    "fft.md",
]


def snippets() -> Iterator[tuple[str, str]]:
    """Yields ``(name, code)`` for each ```` ```python ```` block of the
    guides, ``name`` being ``<guide>-<index>`` (``autograd.md-0``)."""
    for guide in GUIDES:
        path = DOCS / guide
        if not path.exists():
            continue
        for i, code in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S)):
            yield f"{guide}-{i}", code


def module_name(name: str) -> str:
    """A module name for an example (``autograd.md-0`` -> ``autograd_md_0``)."""
    return re.sub(r"\W", "_", name)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, code in snippets():
        source = f"import ferrograd as torch  # {name}\n{code}"
        (out / f"{module_name(name)}.py").write_text(source)


if __name__ == "__main__":
    main()
