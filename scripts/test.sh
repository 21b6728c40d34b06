#!/usr/bin/env bash
# Builds and tests ferrograd from scratch: lint; the core crate's cargo tests
# (unit, integration and doc tests), its rustdoc and `cargo publish
# --dry-run`; the sdist and the x86_64 manylinux2014 wheel built from it
# (scripts/build_wheels.sh: tags, auditwheel, contents), installed into a
# fresh virtual environment and tested there with pytest (the installed
# wheel, not the source tree); the type checks (stubtest, mypy --strict on
# the examples and the docs' snippets); and the docs site (mkdocs --strict).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=${PYTHON:-python3}
# A clean build gains nothing from incremental state; it only costs disk.
export CARGO_INCREMENTAL=0
stage() { echo "== $1 (at ${SECONDS}s)"; }

stage "tools venv and test venv"
"$python" -m venv "$work/venv"
venv_py="$work/venv/bin/python"
"$venv_py" -m pip install -q --upgrade pip
"$venv_py" -m pip install -q "maturin>=1.7,<2" "numpy>=1.24" "pytest>=8" "hypothesis>=6" \
    "pytest-timeout>=2" "ruff>=0.6" "mypy>=1.18" "mpi4py>=4" "mpich>=4" "ziglang>=0.13" "auditwheel>=6"

stage "lint"
cargo fmt --all --check
"$work/venv/bin/ruff" check python tests benches examples
cargo clippy --workspace --all-targets -q -- -D warnings

stage "cargo test (core crate, no Python: unit, integration and doc tests)"
cargo test -p ferrograd -q

stage "rustdoc, the Rust examples, the crate as crates.io would package it"
RUSTDOCFLAGS="-D warnings" cargo doc -p ferrograd --no-deps -q
for example in tensor_basics reverse_mode higher_order forward_mode custom_op threads train_mlp; do
    cargo run -q -p ferrograd --example "$example" >/dev/null
done
cargo publish --dry-run -p ferrograd --allow-dirty

stage "sdist and the x86_64 manylinux2014 wheel built from it"
PYTHON="$venv_py" bash scripts/build_wheels.sh --host-only "$work/dist"
"$venv_py" -m pip install -q "$work"/dist/ferrograd-*-manylinux2014_x86_64.*.whl

stage "pytest against the installed wheel"
cd "$work"
"$venv_py" -c "import ferrograd, sys; assert 'site-packages' in ferrograd.__file__, ferrograd.__file__; print('testing', ferrograd.__file__)"
"$venv_py" -m pytest -q -p no:cacheprovider --rootdir "$root/tests/python" "$root/tests/python"

stage "docs site (mkdocs --strict, API reference read from the installed wheel)"
PYTHON="$venv_py" bash "$root/scripts/build_docs.sh" "$work/site"

stage "type checks (stub up to date, stubtest, mypy --strict on examples and guides)"
PYTHON="$venv_py" bash "$root/scripts/check_types.sh"
