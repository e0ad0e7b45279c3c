"""The matmul sizes quick mode picks (issue 24, item 5): counted, never timed.

A fake clock charges each matmul call 2 n^3 / rate seconds, so the ramp's choices can be
derived by hand: on a 100 GFLOP/s machine n = 512 costs 2.68 ms a call, 1024 costs 21.5 ms,
2048 costs 172 ms, 4096 costs 1.37 s."""

from roofline.measure import matmul as mm
from roofline.measure import measure
from roofline.measure.matmul import (
    MATMUL_PLANS,
    blas_threads,
    first_matmul_size,
    next_matmul_size,
    ramp_matmul,
)
from roofline.measure.runner import largest_matmul_n


def test_first_size_grows_with_the_thread_count():
    # quick: 512 until n^2 = 262144 < 131072 x threads, i.e. from 3 threads on 1024, 9 on 2048
    assert [first_matmul_size("quick", t) for t in (1, 2, 3, 8, 9, 32, 128)] == [
        512,
        512,
        1024,
        1024,
        2048,
        2048,
        4096,
    ]
    assert first_matmul_size("full", 2) == 1024 and first_matmul_size("tiny", 64) == 64


def test_next_size_doubles_while_the_budget_allows():
    # 21.5 ms a call at n = 1024, 4 calls at 2048 cost 8 x 21.5 x 4 = 688 ms
    assert next_matmul_size(1024, 0.0215, 0.1, 1.5, 4096, 4) == 2048
    assert next_matmul_size(1024, 0.0215, 0.9, 1.5, 4096, 4) is None  # 0.9 + 0.688 > 1.5
    assert next_matmul_size(4096, 1e-6, 0.0, 1.5, 4096, 4) is None  # at the largest n


class FakeMatmul:
    """np.matmul replaced by a clock that advances 2 n^3 / rate per call."""

    def __init__(self, rate):
        self.rate, self.now, self.calls = rate, 0.0, []

    def clock(self):
        return self.now

    def matmul(self, a, b, out=None):
        n = a.shape[0]
        self.calls.append(n)
        self.now += 2.0 * n**3 / self.rate
        return out


def _ramp(monkeypatch, rate, threads):
    fake = FakeMatmul(rate)
    monkeypatch.setattr(mm.np, "matmul", fake.matmul)
    real_perf = mm.time.perf_counter
    monkeypatch.setattr(mm.time, "perf_counter", fake.clock)
    try:
        samples = ramp_matmul("fp32", "quick", threads, 3, n_max=4096, timer=fake.clock)
    finally:
        monkeypatch.setattr(mm.time, "perf_counter", real_perf)
    return [s.n for s in samples]


def test_the_ramp_stops_at_the_budget(monkeypatch):
    # 100 GFLOP/s on 1 thread: 512 (spent ~13 ms), 1024 (~108 ms): 2048 costs 8 x 21.5 ms x 4
    # = 688 ms more, 0.8 s in all < 5 s: taken; then 4096 would add 5.5 s: stop at 2048
    assert _ramp(monkeypatch, 100e9, 1) == [512, 1024, 2048]
    # a slow machine (10 GFLOP/s): 1024 spends 1.07 s; 2048 would add 6.9 s (8 s in all > 5 s):
    # stop at 1024
    assert _ramp(monkeypatch, 10e9, 1) == [512, 1024]
    # a fast 16-thread machine (2 TFLOP/s) starts at 2048 and reaches the largest n
    assert _ramp(monkeypatch, 2e12, 16) == [2048, 4096]


def test_memory_caps_the_largest_matmul():
    # 3 fp64 matrices of 4096^2 take 402.7 MB: a quarter of 2 GB (500 MB) holds them, of 1 GB not
    assert largest_matmul_n(2e9) == 4096
    assert largest_matmul_n(1e9) == 2048
    assert MATMUL_PLANS["quick"]["n_max"] >= 4096


def test_quick_measures_both_peaks_on_all_threads(monkeypatch):
    """Quick mode (tiny sizes here) times fp64 and fp32 on one thread and on all threads."""
    result = measure(mode="tiny", progress=False, accelerator=False, operations=False)
    counts = {(m.dtype, m.threads) for m in result.matmuls}
    assert {("fp64", 1), ("fp32", 1)} <= counts
    if blas_threads() > 1:
        assert {("fp64", blas_threads()), ("fp32", blas_threads())} <= counts
        assert not [w for w in result.peak_warnings() if "NOT MEASURED" in w]


def test_a_missing_peak_is_said_plainly():
    from test_measure_threads import threaded_result

    result = threaded_result()  # fp64 on 1 and 4 threads, no fp32
    warnings = result.peak_warnings()
    assert "NOT MEASURED: the fp32 matmul peak on 4 threads." in warnings
    assert "NOT MEASURED: the fp32 matmul peak on 1 thread." in warnings
    assert "NOT MEASURED" in result.table()


def _rising_result(mode, sizes, growth=1.2):
    """A hand-built run: fp64 and fp32 matmuls on one thread whose rate grows by `growth` from
    one size to the next (20 %: the largest is the fastest); `mode` in its settings."""
    from roofline.measure import MatmulSample, MeasureResult

    matmuls = []
    for dtype in ("fp64", "fp32"):
        for i, n in enumerate(sizes):
            rate = 40e9 * growth**i  # FLOP/s: 40, 48, 57.6 GFLOP/s ...
            matmuls.append(MatmulSample(dtype, n, n, n, [2 * n**3 / rate], threads=1))
    return MeasureResult(
        "testhost", "2025-01-01 12:00", "Test CPU", {"mode": mode}, [], matmuls, []
    )


def test_a_rising_peak_note_says_what_the_mode_can_do():
    """The note on a peak still rising at the largest n names what stopped the ramp and points
    to the full mode only from a shorter mode (a full run cannot try larger sizes)."""
    # full mode stopped at 2048 (its largest n is 8192): the budget or the memory stopped it
    full = _rising_result("full", [1024, 2048]).peak_warnings()
    assert full == [
        f"note: the {dtype} peak on 1 thread was still rising at n=2048, where the full mode's "
        "time budget (or the memory) stopped it; the peak may be higher than this run measured."
        for dtype in ("fp64", "fp32")
    ]
    assert not any("full mode (" in w for w in full)
    # quick mode at 1024: the full mode tries larger sizes
    quick = _rising_result("quick", [512, 1024]).peak_warnings()
    assert quick[0] == (
        "note: the fp64 peak on 1 thread was still rising at n=1024, where the quick mode's "
        "time budget (or the memory) stopped it; the full mode (`measure()`, or "
        "`python -m roofline measure` without --quick) tries larger sizes."
    )
    # build mode reached its largest n, 2048: said so, and the full mode is still the advice
    build = _rising_result("build", [256, 512, 1024, 2048]).peak_warnings()
    assert build[0].startswith(
        "note: the fp64 peak on 1 thread was still rising at n=2048, the largest size the "
        "build mode tries; the full mode ("
    )
    # a full run that reached its own largest n (8192) says so, and gives no advice to run it
    top = _rising_result("full", [4096, 8192]).peak_warnings()
    assert top[0] == (
        "note: the fp64 peak on 1 thread was still rising at n=8192, the largest size the full "
        "mode tries; the peak may be higher than this run measured."
    )
    # a file without a mode recommends nothing it cannot know
    assert (
        _rising_result(None, [512, 1024])
        .peak_warnings()[0]
        .endswith(
            "at n=1024, where the run stopped; the peak may be higher than this run measured."
        )
    )
    # no note where the largest n is under 10 % faster than the slowest (5 % here), or where
    # only one size was timed (nothing to compare)
    assert _rising_result("quick", [512, 1024], growth=1.05).peak_warnings() == []
    assert _rising_result("quick", [1024]).peak_warnings() == []
