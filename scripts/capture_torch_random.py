"""Records torch's CPU random streams for tests/python/test_random_torch_streams.py.

Runs every case of tests/python/random_streams.py with torch (which this
script needs; the tests and CI never do) and writes the outputs, bit for
bit, with a digest of the generator state after each case, to
tests/python/data/torch_random_streams.json.

    python scripts/capture_torch_random.py [--missing]

With ``--missing`` only the cases the data file lacks are run and added;
the recorded ones (and the machine they came from) stay as they are.

The float64 normal, exponential and multinomial values go through the C
library's log, log1p, sin and cos, as torch computes them; record on a
glibc-based Linux like the one the tests run on.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import torch

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / "tests" / "python"))
from random_streams import CASES, encode, run_case, state_digest  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    path = root / "tests" / "python" / "data" / "torch_random_streams.json"
    if "--missing" in sys.argv[1:]:
        out = json.loads(path.read_text())
        added = [name for name in CASES if name not in out["cases"]]
        for name in added:
            outs, gen = run_case(torch, name)
            out["cases"][name] = {
                "outputs": [encode(t.numpy()) for t in outs],
                "state": state_digest(bytes(gen.get_state().tolist())),
            }
        path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
        print(f"added {len(added)} cases to {path.relative_to(root)}")
        return
    out = {
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "libc": " ".join(platform.libc_ver()),
        "cases": {},
    }
    for name in CASES:
        outs, gen = run_case(torch, name)
        out["cases"][name] = {
            "outputs": [encode(t.numpy()) for t in outs],
            "state": state_digest(bytes(gen.get_state().tolist())),
        }
    # A state saved mid-stream, with a cached normal value, and what torch
    # draws after restoring it.
    torch.manual_seed(2024)
    torch.rand(700)
    torch.randn(3, dtype=torch.float64)
    state = torch.get_rng_state()
    torch.manual_seed(0)
    torch.set_rng_state(state)
    after = [torch.randn(1, dtype=torch.float64), torch.randn(20), torch.rand(5)]
    out["restored_state"] = {
        "state": encode(state.numpy(), limit=len(state)),
        "outputs": [encode(t.numpy()) for t in after],
    }
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"wrote {len(CASES)} cases to {path.relative_to(root)} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
