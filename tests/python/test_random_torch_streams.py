"""ferrograd's CPU random numbers against torch's, bit for bit.

The reference outputs in data/torch_random_streams.json were recorded from
torch 2.13's CPU generator by scripts/capture_torch_random.py, running the
programs of random_streams.py; these tests run the same programs on
ferrograd and compare raw bytes (and the generator state after each
program), without torch.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import ferrograd as fg
import numpy as np
import pytest
from random_streams import CASES, encode, run_case, state_digest

DATA = json.loads((Path(__file__).parent / "data" / "torch_random_streams.json").read_text())


def _decode(rec) -> np.ndarray:
    raw = base64.b64decode(rec["b64"])
    return np.frombuffer(raw, dtype=rec["dtype"]).reshape(rec["shape"])


def _state_bytes(gen) -> bytes:
    return bytes(gen.get_state().tolist())


def test_every_program_has_reference_data():
    assert sorted(DATA["cases"]) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_and_final_state_match_torch(name):
    want = DATA["cases"][name]
    outs, gen = run_case(fg, name)
    assert len(outs) == len(want["outputs"])
    for i, (t, rec) in enumerate(zip(outs, want["outputs"], strict=True)):
        got = encode(np.asarray(t.numpy()))
        if got != rec and "b64" in rec and got["shape"] == rec["shape"]:
            # Show where the values part, for a readable failure.
            np.testing.assert_array_equal(np.asarray(t.numpy()), _decode(rec), err_msg=f"call {i}")
        assert got == rec, f"call {i} of {name}"
    assert state_digest(_state_bytes(gen)) == want["state"], f"generator state after {name}"


@pytest.mark.parametrize("threads", [1, 2])
def test_large_samples_match_torch_with_any_thread_count(threads):
    before = fg.get_num_threads()
    try:
        fg.set_num_threads(threads)
        for name in ("randn_float32_big", "randn_float64_big", "rand_float32_big", "randperm_100003"):
            outs, _ = run_case(fg, name)
            assert encode(np.asarray(outs[0].numpy())) == DATA["cases"][name]["outputs"][0]
    finally:
        fg.set_num_threads(before)


def test_a_state_saved_by_torch_restores_the_same_stream():
    rec = DATA["restored_state"]
    state = _decode(rec["state"])
    assert state.shape == (5056,)
    fg.manual_seed(0)
    fg.set_rng_state(fg.tensor(state.astype(np.int64)))
    # The state holds a cached float64 normal: the first randn(1) returns it.
    after = [fg.randn(1, dtype=fg.float64), fg.randn(20), fg.rand(5)]
    for t, want in zip(after, rec["outputs"], strict=True):
        assert encode(np.asarray(t.numpy())) == want
    # A private generator takes the same state.
    g = fg.Generator()
    g.set_state(fg.tensor(state.astype(np.int64)))
    assert encode(np.asarray(fg.randn(1, dtype=fg.float64, generator=g).numpy())) == rec["outputs"][0]
    # ... and gives back the same bytes.
    g.set_state(fg.tensor(state.astype(np.int64)))
    assert _state_bytes(g) == state.tobytes()


def test_get_state_round_trips_mid_stream_and_after_a_regeneration():
    g = fg.Generator().manual_seed(31)
    fg.randn(5, generator=g)  # a cached normal in the state
    fg.rand(1000, generator=g)  # past the first 624-word regeneration
    state = g.get_state()
    a = [fg.randn(3, generator=g).tolist(), fg.randint(0, 9, (700,), generator=g).tolist()]
    g.manual_seed(1)
    g.set_state(state)
    assert [fg.randn(3, generator=g).tolist(), fg.randint(0, 9, (700,), generator=g).tolist()] == a
    assert g.initial_seed() == 31


def _fresh_process_draw() -> tuple[int, list[float]]:
    code = "import ferrograd as fg; print(fg.initial_seed()); print(fg.rand(4).tolist())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seed, values = out.stdout.strip().splitlines()
    return int(seed), json.loads(values)


@pytest.mark.timeout(120)
def test_unseeded_processes_start_from_different_seeds():
    (s1, v1), (s2, v2) = _fresh_process_draw(), _fresh_process_draw()
    assert s1 != s2
    assert v1 != v2
    assert 0 <= s1 < 2**64 and 0 <= s2 < 2**64


def test_seed_reseeds_non_deterministically_and_reports_the_seed():
    g = fg.Generator()
    s1 = g.seed()
    a = fg.rand(4, generator=g).tolist()
    s2 = g.seed()
    assert s1 != s2 and g.initial_seed() == s2
    g.manual_seed(s1)
    assert fg.rand(4, generator=g).tolist() == a
    s3 = fg.seed()
    assert fg.initial_seed() == s3


def test_only_the_low_32_bits_of_a_seed_choose_the_stream():
    # As in torch: MT19937 takes a 32-bit seed; initial_seed() keeps all 64.
    fg.manual_seed(5)
    a = fg.rand(6).tolist()
    fg.manual_seed(5 + 2**32)
    assert fg.rand(6).tolist() == a
    assert fg.initial_seed() == 5 + 2**32
