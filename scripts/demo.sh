#!/usr/bin/env bash
# Builds the release wheel, installs it with the demo's extras (scikit-learn
# for the digits data, tqdm, matplotlib) into a fresh virtual environment and
# runs the demo (`python -m ferrograd`: trains a small CNN on the digits).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=${PYTHON:-python3}
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "maturin>=1.7,<2" "numpy>=1.24"
"$work/venv/bin/maturin" build --release -q -o "$work/dist"
"$work/venv/bin/python" -m pip install -q "$(ls "$work"/dist/ferrograd-*.whl)[demo]"
cd "$work" && "$work/venv/bin/python" -m ferrograd
