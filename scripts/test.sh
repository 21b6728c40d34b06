#!/usr/bin/env bash
# Builds and tests ferrograd from scratch: lint, the core crate's cargo tests,
# then the release wheel installed into a fresh virtual environment and
# tested there with pytest (the installed wheel, not the source tree) and
# mypy's stubtest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=${PYTHON:-python3}

echo "== tools venv and test venv"
"$python" -m venv "$work/venv"
venv_py="$work/venv/bin/python"
"$venv_py" -m pip install -q --upgrade pip
"$venv_py" -m pip install -q "maturin>=1.7,<2" "numpy>=1.24" "pytest>=8" "hypothesis>=6" \
    "pytest-timeout>=2" "ruff>=0.6" "mypy>=1.10" "mpi4py>=4" "mpich>=4"

echo "== lint"
cargo fmt --all --check
"$work/venv/bin/ruff" check python tests benches examples
cargo clippy --workspace --all-targets -q -- -D warnings

echo "== cargo test (core crate, no Python)"
cargo test -p ferrograd -q

echo "== build wheel"
"$work/venv/bin/maturin" build --release -q -o "$work/dist"
"$venv_py" -m pip install -q "$work"/dist/ferrograd-*.whl

echo "== pytest against the installed wheel"
cd "$work"
"$venv_py" -c "import ferrograd, sys; assert 'site-packages' in ferrograd.__file__, ferrograd.__file__; print('testing', ferrograd.__file__)"
"$venv_py" -m pytest -q -p no:cacheprovider --rootdir "$root/tests/python" "$root/tests/python"

echo "== stubtest (type stubs match the module)"
"$venv_py" -m mypy.stubtest ferrograd._core --allowlist "$root/python/stubtest-allowlist.txt"
