#!/usr/bin/env bash
# Runs the aarch64 wheel on this x86_64 machine: Debian's arm64 CPython 3.11
# and its libraries are unpacked into a directory (no system change beyond
# enabling the arm64 architecture for apt downloads) and run under
# qemu-user, with the wheel's contents on the path. The program checks
# values against hand-derived results and the math module, so a wheel that
# imports but computes wrongly fails too.
#
# Usage: bash scripts/smoke_aarch64.sh WHEEL
# Needs root for apt-get (qemu-user-static and the arm64 package downloads).
set -euo pipefail
wheel=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! command -v qemu-aarch64-static >/dev/null; then
    apt-get install -y -q qemu-user-static >/dev/null
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
    apt-get update -q >/dev/null
fi
mkdir -p "$work/debs" "$work/root" "$work/site"
(cd "$work/debs" && apt-get download -q \
    python3.11-minimal:arm64 libpython3.11-minimal:arm64 libpython3.11-stdlib:arm64 libc6:arm64 \
    libgcc-s1:arm64 zlib1g:arm64 libffi8:arm64 libssl3:arm64 libexpat1:arm64 libbz2-1.0:arm64 \
    liblzma5:arm64 libsqlite3-0:arm64 libncursesw6:arm64 libtinfo6:arm64 libuuid1:arm64 \
    libcrypt1:arm64 libnsl2:arm64 libtirpc3:arm64 libdb5.3:arm64 >/dev/null 2>&1)
for deb in "$work"/debs/*.deb; do
    dpkg -x "$deb" "$work/root"
done
python3 -m zipfile -e "$wheel" "$work/site"

cat >"$work/smoke.py" <<'EOF'
import math
import platform
import threading

import ferrograd as torch

assert platform.machine() == "aarch64", platform.machine()
print("ferrograd", torch.__version__, "on", platform.machine(), "glibc", platform.libc_ver()[1])

# Reverse mode: d/dx sum(x^3) = 3x^2, d2/dx2 = 6x (create_graph).
x = torch.tensor([0.5, -1.25, 2.0], dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad((x**3).sum(), x, create_graph=True)
(h,) = torch.autograd.grad(g.sum(), x)
assert g.tolist() == [3 * v * v for v in (0.5, -1.25, 2.0)], g.tolist()
assert h.tolist() == [6 * v for v in (0.5, -1.25, 2.0)], h.tolist()

# Vectorised kernels against the math module, on enough elements to take
# the vector paths and the thread pool.
n = 100_003
t = torch.linspace(-3.0, 3.0, n, dtype=torch.float64)
vals = t.tolist()
for name, ref in (("exp", math.exp), ("tanh", math.tanh), ("sin", math.sin)):
    got = getattr(torch, name)(t).tolist()
    err = max(abs(a - ref(b)) / max(1.0, abs(ref(b))) for a, b in zip(got, vals))
    assert err < 1e-14, (name, err)
f = torch.linspace(-3.0, 3.0, n).exp().tolist()
err32 = max(abs(a - math.exp(b)) / math.exp(b) for a, b in zip(f, torch.linspace(-3.0, 3.0, n).tolist()))
assert err32 < 1e-6, err32

# Matrix product against a pure-Python one.
a = torch.arange(48, dtype=torch.float64).reshape(6, 8) / 7
b = torch.arange(40, dtype=torch.float64).reshape(8, 5) / 3
ref = [[sum(a[i, k].item() * b[k, j].item() for k in range(8)) for j in range(5)] for i in range(6)]
got = (a @ b).tolist()
assert all(abs(got[i][j] - ref[i][j]) < 1e-9 for i in range(6) for j in range(5))

# Backward from several threads at once, each with its own result.
results = {}


def work(k):
    w = torch.full((64, 64), float(k), requires_grad=True)
    (w * w).sum().backward()
    results[k] = w.grad.sum().item()


threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
for th in threads:
    th.start()
for th in threads:
    th.join()
assert results == {k: 2.0 * k * 64 * 64 for k in range(1, 5)}, results

# A small nn/optim loop: the loss falls.
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.05)
xs = torch.randn(64, 4)
ys = xs.sum(dim=1, keepdim=True)
losses = []
for _ in range(30):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(xs), ys)
    loss.backward()
    opt.step()
    losses.append(loss.item())
assert losses[-1] < 0.2 * losses[0], losses
print("aarch64 smoke test passed: grad/hessian, kernels, matmul, threads, training")
EOF

PYTHONPATH="$work/site" PYTHONHOME="$work/root/usr" \
    qemu-aarch64-static -L "$work/root" "$work/root/usr/bin/python3.11" "$work/smoke.py"
