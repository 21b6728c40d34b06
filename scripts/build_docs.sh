#!/usr/bin/env bash
# Builds the documentation site (docs/ and the API reference generated from
# the installed package's docstrings) with mkdocs in strict mode: a broken
# link, a missing page or a docstring mkdocstrings cannot read fails.
#
# Usage: PYTHON=<python of an environment with ferrograd installed> \
#            bash scripts/build_docs.sh [OUT_DIR]      (default: site/)
#
# The API reference is read from the ferrograd that PYTHON imports (a wheel
# in site-packages or a `maturin develop` build), by inspecting it at run
# time: the compiled ferrograd._core carries its docstrings and signatures.
# The documentation tools are installed into that environment if missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/site}")
python=${PYTHON:-python3}
cd "$root"

if ! "$python" -c "import mkdocs, material, mkdocstrings, mkdocstrings_handlers.python" 2>/dev/null; then
    echo "== installing the documentation tools"
    "$python" -m pip install -q "mkdocs>=1.6,<2" "mkdocs-material>=9.5,<10" \
        "mkdocstrings>=1.0,<2" "mkdocstrings-python>=2.0,<3"
fi

"$python" -c "import ferrograd; print('documenting ferrograd', ferrograd.__version__, 'from', ferrograd.__file__)"
start=$SECONDS
NO_MKDOCS_2_WARNING=1 "$python" -m mkdocs build --strict -f mkdocs.yml -d "$out"
echo "docs site built in $((SECONDS - start)) s: $out/index.html"
