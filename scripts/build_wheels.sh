#!/usr/bin/env bash
# Builds ferrograd's release artefacts and checks them:
#   - the source distribution (maturin sdist), checked for its contents;
#   - one abi3 wheel per platform, manylinux2014 (glibc 2.17), linked by
#     zig (the `ziglang` package from PyPI, so no container is needed):
#     x86_64, built from the unpacked sdist alone (which proves the sdist
#     builds from scratch), and aarch64, cross-compiled the same way;
#   - every wheel: its tag, `auditwheel show` (manylinux_2_17 policy, no
#     external libraries), the newest glibc symbol it uses, and its contents
#     (py.typed, the stub, the license files);
#   - the aarch64 wheel run under qemu-user by scripts/smoke_aarch64.sh.
#
# Usage: bash scripts/build_wheels.sh [--host-only] [OUTDIR]
#   --host-only   skip the aarch64 wheel (the x86_64 wheel and the sdist only)
#   OUTDIR        where the artefacts go (default: dist/)
# Environment: PYTHON, the interpreter whose environment gets the build tools
# (maturin, ziglang, auditwheel) if they are missing (default: python3).
set -euo pipefail
cd "$(dirname "$0")/.."

host_only=0
if [[ "${1:-}" == "--host-only" ]]; then
    host_only=1
    shift
fi
out=$(realpath -m "${1:-dist}")
python=${PYTHON:-python3}
mkdir -p "$out"

"$python" -c "import maturin, ziglang, auditwheel" 2>/dev/null ||
    "$python" -m pip install -q "maturin>=1.7,<2" "ziglang>=0.13" "auditwheel>=6"
bindir=$(dirname "$("$python" -c 'import sys; print(sys.executable)')")
maturin="$bindir/maturin"
auditwheel="$bindir/auditwheel"

targets=(x86_64-unknown-linux-gnu)
if [[ $host_only == 0 ]]; then
    targets+=(aarch64-unknown-linux-gnu)
fi
for target in "${targets[@]}"; do
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)

echo "== sdist"
rm -f "$out"/ferrograd-"$version".tar.gz "$out"/ferrograd-"$version"-*.whl
"$maturin" sdist -o "$out" >/dev/null
sdist="$out/ferrograd-$version.tar.gz"
listing=$(tar tzf "$sdist")
for f in pyproject.toml Cargo.toml Cargo.lock LICENSE-MIT LICENSE-APACHE README.md src/lib.rs \
    python/Cargo.toml python/src/lib.rs python/ferrograd/__init__.py python/ferrograd/_core.pyi \
    python/ferrograd/py.typed; do
    grep -qx "ferrograd-$version/$f" <<<"$listing" || {
        echo "sdist lacks $f" >&2
        exit 1
    }
done
if grep -q '\.so$' <<<"$listing"; then
    echo "sdist carries a compiled module:" >&2
    grep '\.so$' <<<"$listing" >&2
    exit 1
fi
echo "sdist: $(basename "$sdist") ($(du -h "$sdist" | cut -f1), $(wc -l <<<"$listing") files)"

# A wheel per target, each built from the unpacked sdist (not from this
# tree) in a fresh target directory: cargo would otherwise take objects
# compiled from this tree as up to date (same crate, older sources' mtimes)
# and the sdist would not really be built. FERROGRAD_WHEEL_TARGET_DIR names
# a directory to keep between runs instead (faster, for local iteration).
tar xzf "$sdist" -C "$work"
for target in "${targets[@]}"; do
    echo "== wheel for $target (manylinux2014, zig)"
    (cd "$work/ferrograd-$version" &&
        PATH="$bindir:$PATH" CARGO_TARGET_DIR="${FERROGRAD_WHEEL_TARGET_DIR:-$work/target}" \
            "$maturin" build --release --zig --compatibility manylinux2014 --target "$target" \
            -o "$work/wheels-$target" -q)
    cp "$work/wheels-$target"/*.whl "$out"/
done

echo "== checks"
for target in "${targets[@]}"; do
    arch=${target%%-*}
    wheel=$(ls "$out"/ferrograd-"$version"-cp311-abi3-*"$arch".whl)
    name=$(basename "$wheel")
    expected="ferrograd-$version-cp311-abi3-manylinux2014_${arch}.manylinux_2_17_${arch}.whl"
    if [[ "$name" != "$expected" ]]; then
        echo "wheel is named $name, expected $expected" >&2
        exit 1
    fi
    report=$("$auditwheel" show "$wheel")
    grep -q "\"manylinux_2_17_${arch}\"" <<<"$report" || {
        echo "auditwheel does not place $name in manylinux_2_17:" >&2
        echo "$report" >&2
        exit 1
    }
    if grep -q "external shared libraries are required" <<<"$report"; then
        echo "$name needs libraries outside the manylinux policy:" >&2
        echo "$report" >&2
        exit 1
    fi
    unzip -q -o "$wheel" -d "$work/unpacked-$arch"
    so=$(ls "$work/unpacked-$arch"/ferrograd/_core.abi3.so)
    newest=$(readelf --dyn-syms -W "$so" | grep -o 'GLIBC_[0-9.]*' | sort -V -u | tail -n 1)
    echo "$name: $(du -h "$wheel" | cut -f1), newest glibc symbol $newest"
    for f in ferrograd/py.typed ferrograd/_core.pyi "ferrograd-$version.dist-info/licenses/LICENSE-MIT" \
        "ferrograd-$version.dist-info/licenses/LICENSE-APACHE"; do
        [[ -f "$work/unpacked-$arch/$f" ]] || {
            echo "$name lacks $f" >&2
            exit 1
        }
    done
    if grep -q "target-cpu=native" "$work/ferrograd-$version"/.cargo/config.toml 2>/dev/null; then
        echo "the build asks for target-cpu=native" >&2
        exit 1
    fi
done
if [[ $host_only == 0 ]]; then
    echo "== the aarch64 wheel run under qemu-user"
    bash scripts/smoke_aarch64.sh "$out"/ferrograd-"$version"-cp311-abi3-*aarch64.whl
fi
echo "artefacts in $out:"
ls -l "$out"
