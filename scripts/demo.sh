#!/usr/bin/env bash
# Builds the release wheel, installs it into a fresh virtual environment and
# runs the demo (`python -m ferrograd`).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=${PYTHON:-python3}
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "maturin>=1.7,<2" "numpy>=1.24"
"$work/venv/bin/maturin" build --release -q -o "$work/dist"
"$work/venv/bin/python" -m pip install -q "$work"/dist/ferrograd-*.whl
cd "$work" && "$work/venv/bin/python" -m ferrograd
