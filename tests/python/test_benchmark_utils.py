"""ferrograd.utils.benchmark: Timer, Measurement and Compare.

The statistics are checked against NumPy, the printed summaries and tables
against the text torch.utils.benchmark prints for the same inputs (written
out by hand below), and the Timer's loops against a fake clock that the
timed statement advances, so that every block time is exact.
"""

from __future__ import annotations

import re

import ferrograd
import numpy as np
import pytest
from ferrograd.utils import benchmark
from ferrograd.utils.benchmark import Compare, Measurement, TaskSpec, Timer

HEADER = re.compile(r"^<ferrograd\.utils\.benchmark\.utils\.common\.Measurement object at 0x[0-9a-f]+>\n")


def spec(**kw):
    kw.setdefault("stmt", "f(x)")
    kw.setdefault("setup", "pass")
    return TaskSpec(**kw)


def body(m: Measurement) -> str:
    text = repr(m)
    assert HEADER.match(text), text
    return HEADER.sub("", text)


# --------------------------------------------------------------------------
# Imports


def test_import_paths():
    import ferrograd.utils.benchmark as b1
    from ferrograd.utils import benchmark as b2

    assert b1 is b2 is ferrograd.utils.benchmark
    assert benchmark.Timer is ferrograd.utils.benchmark.utils.timer.Timer
    assert benchmark.Measurement is ferrograd.utils.benchmark.utils.common.Measurement
    assert benchmark.Compare is ferrograd.utils.benchmark.utils.compare.Compare


# --------------------------------------------------------------------------
# Measurement statistics


TIMES = [
    ([1.2e-3, 1.3e-3, 1.25e-3, 1.4e-3, 1.22e-3], 100),
    ([5e-6], 1),
    ([5e-6, 6e-6], 10),
    ([3.0, 1.0, 2.0, 10.0, 4.0, 4.0, 0.5], 7),
    (list(np.random.default_rng(0).lognormal(-10, 0.3, size=101)), 1000),
]


@pytest.mark.parametrize(("raw", "number"), TIMES)
def test_statistics_match_numpy(raw, number):
    m = Measurement(number, list(raw), spec())
    per_run = np.asarray(raw) / number
    np.testing.assert_allclose(m.times, per_run, rtol=1e-15)
    np.testing.assert_allclose(m.median, np.median(per_run), rtol=1e-12)
    np.testing.assert_allclose(m.mean, np.mean(per_run), rtol=1e-12)
    iqr = np.percentile(per_run, 75) - np.percentile(per_run, 25)
    np.testing.assert_allclose(m.iqr, iqr, rtol=1e-9, atol=1e-18)
    assert m.has_warnings == (iqr / np.median(per_run) >= 0.1)


def test_meets_confidence_and_warnings():
    m = Measurement(1, [1.0, 1.1, 1.2, 1.3], spec())  # iqr 0.15, median 1.15
    assert not m.meets_confidence()
    assert not m.meets_confidence(0.1)
    assert m.meets_confidence(0.2)
    assert m.has_warnings
    steady = Measurement(1, [1.0, 1.01, 1.02, 1.0], spec())
    assert steady.meets_confidence() and not steady.has_warnings


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Constant times: the interval is the 25 ns floor; 10 us / 25 ns = 400.
        ([1e-5] * 4, 2),
        ([2.0] * 5, 4),  # capped at 4
        ([3e-8] * 3, 1),  # 1.2 -> 0 figures, raised to 1
        # Middle half [2, 3] s of [1, 2, 3, 4]: std 0.5, interval
        # 1.645 * 0.5 / sqrt(2) = 0.58; median 2.5 / 0.58 = 4.3 -> 0 -> 1.
        ([1.0, 2.0, 3.0, 4.0], 1),
        # Middle [1.00, 1.01] of 4: interval 1.645 * 0.005 / sqrt(2); 1.005 /
        # 0.0058 = 173 -> 2 figures.
        ([1.0, 1.01, 0.9, 1.1], 2),
    ],
)
def test_significant_figures(raw, expected):
    m = Measurement(1, raw, spec())
    assert m.significant_figures == expected
    # The same estimate, computed independently.
    s = np.sort(raw)
    middle = s[len(s) // 4 : int(np.ceil(3 * len(s) / 4))]
    interval = max(1.645 * np.std(middle) / np.sqrt(len(middle)), 25e-9)
    assert expected == min(max(int(np.floor(np.log10(np.median(s) / interval))), 1), 4)


def test_fields_forward_to_task_spec():
    ts = spec(label="L", sub_label="S", description="D", env="E", num_threads=3)
    m = Measurement(1, [1e-6], ts, metadata={"k": 1})
    assert (m.stmt, m.setup, m.label, m.sub_label, m.description, m.num_threads) == (
        "f(x)", "pass", "L", "S", "D", 3
    )  # fmt: skip
    assert m.env == "E" and m.metadata == {"k": 1}
    assert m.title == "L: S" and m.as_row_name == "S"
    assert Measurement(1, [1e-6], spec()).env is None  # torch returns None too
    assert Measurement(1, [1e-6], spec(stmt="g()")).as_row_name == "g()"
    with pytest.raises(AttributeError):
        _ = m.no_such_field


def test_task_spec_title():
    assert spec().title == "f(x)"
    assert spec(sub_label="s").title == "f(x): s"
    assert spec(label="L").title == "L"
    assert spec(stmt="a\nb", sub_label="s").title == "stmt: (s)\n  a\n  b"
    assert hash(spec()) == hash(spec()) and spec() == spec()


def test_merge():
    a = Measurement(2, [4e-6, 6e-6], spec())
    b = Measurement(1, [1e-6], spec(), metadata={"x": 1})
    c = Measurement(1, [7e-6], spec(stmt="g()"))
    d = Measurement(1, [8e-6], spec(env="other"))
    merged = Measurement.merge([a, c, b, d])
    assert [m.task_spec for m in merged] == [spec(), spec(stmt="g()"), spec(env="other")]
    np.testing.assert_allclose(merged[0].raw_times, [2e-6, 3e-6, 1e-6])
    assert merged[0].number_per_run == 1 and merged[0].metadata is None
    assert merged[1].raw_times == [7e-6]


def test_units_and_trimming():
    assert benchmark.select_unit(2.5e-8) == ("ns", 1e-9)
    assert benchmark.select_unit(1e-6) == ("us", 1e-6)
    assert benchmark.select_unit(999e-6) == ("us", 1e-6)
    assert benchmark.select_unit(0.5) == ("ms", 1e-3)
    assert benchmark.select_unit(12.0) == ("s", 1.0)
    assert [benchmark.unit_to_english(u) for u in ("ns", "us", "ms", "s")] == [
        "nanosecond", "microsecond", "millisecond", "second"
    ]  # fmt: skip
    assert f"{benchmark.trim_sigfig(3.14159, 2):.5f}" == "3.10000"
    assert f"{benchmark.trim_sigfig(1234.5, 2):.1f}" == "1200.0"
    assert f"{benchmark.trim_sigfig(0.0456, 1):.3f}" == "0.050"
    assert benchmark.ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]


# --------------------------------------------------------------------------
# Measurement repr (expected text as torch prints it for the same inputs)


def test_repr_many_measurements():
    m = Measurement(100, [1.2e-3, 1.3e-3, 1.25e-3, 1.4e-3, 1.22e-3], spec(stmt="x + y"))
    assert body(m) == (
        "x + y\n"
        "  Median: 12.50 us\n"
        "  IQR:    0.80 us (12.20 to 13.00)\n"
        "  5 measurements, 100 runs per measurement, 1 thread"
    )


def test_repr_single_measurement_with_labels():
    ts = spec(stmt="a\nb", setup="x=1\ny=2", label="L", sub_label="S", description="D", num_threads=4)
    assert body(Measurement(1, [5e-6], ts)) == (
        "L: S\nD\nsetup:\n  x=1\n  y=2\n\n  5.00 us\n  1 measurement, 1 runs , 4 threads"
    )


def test_repr_two_measurements_has_no_iqr():
    ts = spec(stmt="a\nb", setup="x=1", description="D", num_threads=2)
    assert body(Measurement(10, [5e-6, 6e-6], ts)) == (
        "stmt:\n  a\n  b\n\nD\nsetup: x=1\n"
        "  Median: 550.00 ns\n"
        "  2 measurements, 10 runs per measurement, 2 threads"
    )


def test_repr_warnings():
    m = Measurement(10, [5e-6, 6e-6, 9e-6, 1e-5], spec(stmt="f()", setup="x=1", sub_label="s"))
    assert body(m) == (
        "f(): s\nsetup: x=1\n"
        "  Median: 750.00 ns\n"
        "  IQR:    350.00 ns (575.00 to 925.00)\n"
        "  4 measurements, 10 runs per measurement, 1 thread\n"
        "  WARNING: Interquartile range is 46.7% of the median measurement.\n"
        "           This suggests significant environmental influence."
    )
    mild = Measurement(1, [1.0, 1.1, 1.2, 1.3], spec())
    assert body(mild).endswith(
        "  WARNING: Interquartile range is 13.0% of the median measurement.\n"
        "           This could indicate system fluctuation."
    )


def test_measurement_pickles():
    import pickle

    m = Measurement(10, [5e-6, 6e-6, 9e-6, 1e-5], spec(sub_label="s"))
    m2 = pickle.loads(pickle.dumps(m))
    assert m2 == m and body(m2) == body(m)


# --------------------------------------------------------------------------
# Compare (expected tables as torch prints them for the same inputs)

BASE = [1.0e-5, 1.1e-5, 1.2e-5, 1.05e-5, 1.15e-5]


def grid_results():
    out = []
    for ti, nt in enumerate((1, 4)):
        for si, sub in enumerate(("[1, 16]", "[32, 64]", "[128, 1024]")):
            for di, desc in enumerate(("mul", "matmul")):
                s = (1 + si) * (1 + di * 3.7) / (1 + ti)
                ts = spec(label="ops", sub_label=sub, description=desc, num_threads=nt)
                out.append(Measurement(10, [t * s for t in BASE], ts))
    return out


def test_compare_plain():
    assert str(Compare(grid_results())) == (
        "[---------------- ops -----------------]\n"
        "                   |   mul    |   matmul\n"
        "1 threads: -----------------------------\n"
        "      [1, 16]      |  1100.0  |   5170.0\n"
        "      [32, 64]     |  2200.0  |  10340.0\n"
        "      [128, 1024]  |  3300.0  |  15510.0\n"
        "4 threads: -----------------------------\n"
        "      [1, 16]      |   550.0  |   2585.0\n"
        "      [32, 64]     |  1100.0  |   5170.0\n"
        "      [128, 1024]  |  1650.0  |   7755.0\n"
        "\n"
        "Times are in nanoseconds (ns).\n"
    )


def test_compare_trim_significant_figures():
    c = Compare(grid_results())
    c.trim_significant_figures()
    assert str(c) == (
        "[--------------- ops ---------------]\n"
        "                   |  mul   |  matmul\n"
        "1 threads: --------------------------\n"
        "      [1, 16]      |  1000  |   5000 \n"
        "      [32, 64]     |  2000  |  10000 \n"
        "      [128, 1024]  |  3000  |  20000 \n"
        "4 threads: --------------------------\n"
        "      [1, 16]      |   600  |   3000 \n"
        "      [32, 64]     |  1000  |   5000 \n"
        "      [128, 1024]  |  2000  |   8000 \n"
        "\n"
        "Times are in nanoseconds (ns).\n"
    )


GREEN, RED_DIM, END = "\x1b[92m\x1b[1m", "\x1b[2m\x1b[91m", "\x1b[0m\x1b[0m"


def test_compare_colorize():
    c = Compare(grid_results())
    c.trim_significant_figures()
    c.colorize()  # column-wise, within each thread count
    lines = str(c).splitlines()
    assert lines[3] == f"      [1, 16]      |  {GREEN}1000{END}  |  {GREEN} 5000 {END}"
    assert lines[4] == f"      [32, 64]     |  {RED_DIM}2000{END}  |  {RED_DIM}10000 {END}"
    assert lines[7] == f"      [1, 16]      |  {GREEN} 600{END}  |  {GREEN} 3000 {END}"
    c = Compare(grid_results())
    c.colorize(rowwise=True)
    lines = str(c).splitlines()
    assert lines[3] == f"      [1, 16]      |  {GREEN}1100.0{END}  |  {RED_DIM} 5170.0{END}"


def noisy_results():
    return [
        Measurement(1, [1e-3, 2e-3, 1.5e-3, 3e-3], spec(label="noise", sub_label="a", description="x")),
        Measurement(1, [1e-3, 1.01e-3, 1.02e-3, 1.0e-3], spec(label="noise", sub_label="b", description="x")),
        Measurement(1, [2e-3, 1.01e-3, 1.8e-3, 1.0e-3], spec(label="noise", sub_label="a", description="y")),
    ]


def test_compare_highlight_warnings():
    c = Compare(noisy_results())
    c.highlight_warnings()
    assert str(c) == (
        "[--------------- noise ---------------]\n"
        "         |       x       |       y     \n"
        "1 threads: ----------------------------\n"
        "      a  |  1.8 (! 50%)  |  1.4 (! 60%)\n"
        "      b  |   1.0         |             \n"
        "\n"
        "Times are in milliseconds (ms).\n"
        "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
    )
    c.trim_significant_figures()
    assert str(c).splitlines()[3] == "      a  |  2 (! 50%)  |  1 (! 60%)"


def test_compare_labels_missing_cells_and_units():
    results = [
        Measurement(1, [2.5e-7, 2.6e-7, 2.4e-7], spec(stmt="a + b", description="d1")),
        Measurement(1, [1.5e-6, 1.6e-6], spec(stmt="a * b", description="d2")),
        Measurement(1, [3e-2, 3.1e-2], spec(stmt="a @ b", label="big", description="d1")),
        Measurement(1, [3e-1], spec(stmt="a @ b", label="big", description="d2", sub_label="s")),
        Measurement(1, [4.0], spec(stmt="slow()", label="big", description="d1")),
    ]
    c = Compare(results)
    assert str(c) == (
        "[--------------  --------------]\n"
        "             |    d1   |    d2  \n"
        "1 threads: ---------------------\n"
        "      a + b  |  250.0  |        \n"
        "      a * b  |         |  1550.0\n"
        "\n"
        "Times are in nanoseconds (ns).\n"
        "\n"
        "[------------- big -------------]\n"
        "              |    d1    |    d2 \n"
        "1 threads: ----------------------\n"
        "      a @ b   |    30.5  |       \n"
        "      s       |          |  300.0\n"
        "      slow()  |  4000.0  |       \n"
        "\n"
        "Times are in milliseconds (ms).\n"
    )
    c.trim_significant_figures()
    assert str(c).splitlines()[11:14] == [
        "      a @ b   |    30  |       ",
        "      s       |        |  300.0",
        "      slow()  |  4000  |       ",
    ]


def test_compare_merges_replicates():
    results = [
        Measurement(2, [1e-5, 1.2e-5], spec(label="r", description="c")),
        Measurement(1, [1.1e-5], spec(label="r", description="c")),
        Measurement(1, [2e-5], spec(label="r", description="c", stmt="g(x)")),
    ]
    assert str(Compare(results)) == (
        "[------- r -------]\n"
        "            |   c  \n"
        "1 threads: --------\n"
        "      f(x)  |   6.0\n"
        "      g(x)  |  20.0\n"
        "\n"
        "Times are in microseconds (us).\n"
    )


def test_compare_envs():
    results = [
        Measurement(1, [1e-5, 1.1e-5], spec(label="e", env="A", sub_label="s1", description="c")),
        Measurement(1, [2e-5], spec(label="e", env="B", sub_label="s1", description="c")),
        Measurement(1, [3e-5], spec(label="e", env="A", sub_label="s2", description="c")),
    ]
    assert str(Compare(results)) == (
        "[------ e -------]\n"
        "           |   c  \n"
        "1 threads: -------\n"
        "  (A)  s1  |  10.5\n"
        "       s2  |  30.0\n"
        "  (B)  s1  |  20.0\n"
        "\n"
        "Times are in microseconds (us).\n"
    )


def test_compare_without_description_and_print(capsys):
    # torch fails on a missing description; here it is an unnamed column.
    c = Compare([Measurement(1, [2e-6], spec())])
    c.extend_results([Measurement(1, [4e-6], spec(stmt="g(x)"))])
    c.print()
    assert capsys.readouterr().out == (
        "[-------  -------]\n"
        "            |     \n"
        "1 threads: -------\n"
        "      f(x)  |  2.0\n"
        "      g(x)  |  4.0\n"
        "\n"
        "Times are in microseconds (us).\n\n"
    )


def test_compare_rejects_other_objects():
    with pytest.raises(ValueError, match="Measurement"):
        Compare([1.0])


# --------------------------------------------------------------------------
# Timer

UNIT = 2.0**-10  # a block time that sums exactly in binary


class FakeClock:
    """A clock that only moves when the timed statement moves it."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def advance(self, runs=1.0):
        self.now += runs * UNIT


def test_timeit_runs_warmup_then_number():
    calls = []
    m = Timer("f()", globals={"f": lambda: calls.append(1)}).timeit(1000)
    assert len(calls) == 1000 // 100 + 1000
    assert m.number_per_run == 1000 and len(m.raw_times) == 1
    calls.clear()
    Timer("f()", globals={"f": lambda: calls.append(1)}).timeit(7)
    assert len(calls) == 2 + 7  # the warm-up is at least 2 runs


def test_timeit_time_comes_from_the_timer():
    clock = FakeClock()
    m = Timer("clock.advance()", timer=clock, globals={"clock": clock}).timeit(64)
    assert m.raw_times == [64 * UNIT] and m.times == [UNIT]


def test_setup_runs_before_stmt_and_sees_globals():
    log = []
    t = Timer(
        stmt="""
            log.append(("stmt", y))
        """,
        setup="log.append('setup'); y = base * 2",
        globals={"log": log, "base": 21},
    )
    t.timeit(3)
    # Each block (warm-up of 2, then 3) runs setup first.
    assert log == ["setup", ("stmt", 42), ("stmt", 42), "setup", *[("stmt", 42)] * 3]
    assert t._task_spec.stmt == 'log.append(("stmt", y))'


def test_torch_is_ferrograd_in_the_namespace():
    seen = []
    Timer("seen.append(torch)", globals={"seen": seen}).timeit(1)
    assert seen[0] is ferrograd
    seen.clear()
    Timer("seen.append(torch)", globals={"seen": seen, "torch": "mine"}).timeit(1)
    assert seen[0] == "mine"


def test_globals_are_copied():
    g = {"x": 1}
    Timer("x = 5", setup="global x", globals=g).timeit(2)
    assert g == {"x": 1}


@pytest.mark.parametrize("num_threads", [1, 3])
def test_num_threads_set_during_and_restored(num_threads):
    before = ferrograd.get_num_threads()
    seen = set()
    t = Timer("seen.add(torch.get_num_threads())", globals={"seen": seen}, num_threads=num_threads)
    t.timeit(5)
    t.blocked_autorange(min_run_time=1e-4)
    assert seen == {num_threads}
    assert ferrograd.get_num_threads() == before


def test_num_threads_restored_after_an_error():
    before = ferrograd.get_num_threads()
    with pytest.raises(ZeroDivisionError):
        Timer("1 / 0", num_threads=before + 1).timeit(2)
    assert ferrograd.get_num_threads() == before


def test_blocked_autorange_respects_min_run_time():
    clock = FakeClock()
    blocks = []
    t = Timer("clock.advance()", timer=clock, globals={"clock": clock}, label="fake")
    m = t.blocked_autorange(callback=lambda n, s: blocks.append((n, s)), min_run_time=0.2)
    # One run already takes 1 ms >= min_run_time / 1000, so blocks are of 1
    # run; blocks run until their total reaches 0.2 s: ceil(0.2 / UNIT).
    assert m.number_per_run == 1
    assert m.raw_times == [UNIT] * 205
    assert sum(m.raw_times[:-1]) < 0.2 <= sum(m.raw_times)
    assert blocks == [(1, UNIT)] * 205
    assert m.task_spec.label == "fake"


def test_blocked_autorange_grows_the_block():
    clock = FakeClock()
    t = Timer("clock.advance(1e-3)", timer=clock, globals={"clock": clock})
    m = t.blocked_autorange(min_run_time=0.2)
    # 1, 10, 100 runs take under 0.2 ms; 1000 runs take about 1 ms.
    assert m.number_per_run == 1000
    assert len(m.raw_times) == 205


def test_adaptive_autorange_stops_when_steady():
    clock = FakeClock()
    t = Timer("clock.advance()", timer=clock, globals={"clock": clock})
    m = t.adaptive_autorange(min_run_time=0.01)
    assert m.number_per_run == 1 and len(m.raw_times) == 11  # 11 * UNIT >= 0.01
    m = t.adaptive_autorange(min_run_time=0.001)
    assert len(m.raw_times) == 4  # at least 4 blocks


def test_adaptive_autorange_stops_at_max_run_time():
    clock = FakeClock()
    state = {"k": 0}

    def step():
        state["k"] += 1
        clock.advance(1 if state["k"] % 2 else 3)  # never steady

    m = Timer("step()", timer=clock, globals={"step": step}).adaptive_autorange(max_run_time=0.5)
    assert not m.meets_confidence(0.1)
    assert sum(m.raw_times[:-1]) <= 0.5 < sum(m.raw_times)
    assert len(m.raw_times) == 257


def test_timer_errors():
    with pytest.raises(ValueError):
        Timer(lambda: None)
    with pytest.raises(ValueError, match="global_setup"):
        Timer("pass", global_setup="#include <x>")
    with pytest.raises(ValueError, match="C\\+\\+"):
        Timer("pass", language="cpp")
    with pytest.raises(ValueError, match="language"):
        Timer("pass", language="rust")
    t = Timer("pass", language=benchmark.Language.PYTHON)
    # torch's Timer does not implement these either.
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.repeat()
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        t.autorange()
    with pytest.raises(OSError, match="Valgrind"):
        t.collect_callgrind()


def test_set_torch_threads():
    before = ferrograd.get_num_threads()
    with benchmark.set_torch_threads(before + 2):
        assert ferrograd.get_num_threads() == before + 2
    assert ferrograd.get_num_threads() == before
