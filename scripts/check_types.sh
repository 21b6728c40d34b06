#!/usr/bin/env bash
# Type checks of the installed package (its py.typed marker and _core.pyi):
# the stub is what scripts/gen_stubs.py writes from the built module,
# mypy's stubtest finds it consistent with the module, and mypy --strict
# passes on the examples and on the guides' Python examples (each written
# to a module of its own by scripts/doc_snippets.py).
#
# Usage: PYTHON=/path/to/venv/bin/python bash scripts/check_types.sh
# The interpreter (default python3) must have ferrograd and mypy installed;
# the checks run outside the source tree, against that installation.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$work"
"$python" -c "import ferrograd; print('checking', ferrograd.__file__)"

echo "== the stub is up to date"
"$python" "$root/scripts/gen_stubs.py" --check

echo "== stubtest"
"$python" -m mypy.stubtest ferrograd._core --allowlist "$root/python/stubtest-allowlist.txt"

echo "== mypy --strict: examples and the guides' examples"
"$python" "$root/scripts/doc_snippets.py" "$work/guides"
"$python" -m mypy --strict --config-file "$root/pyproject.toml" --cache-dir "$work/.mypy_cache" \
    "$root"/examples/*.py "$work/guides"
