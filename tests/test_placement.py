"""rl.place: counts from the compiler, a formula or PyTorch's counters, a measured time.

Expected counts are derived by hand in the comments; the timing is tested with a fake clock.
"""

import subprocess
import sys

import pytest

import roofline as rl
from roofline.placement import Placement, cost_dict, count_or_none, roofs_for, time_calls

N = 512


class FakeClock:
    """A clock that advances by the next step each time a timed call runs."""

    def __init__(self, steps):
        self.now = 0.0
        self.steps = list(steps)
        self.reads = 0

    def __call__(self):
        self.reads += 1
        return self.now

    def call(self):
        self.now += self.steps.pop(0)


# ---------------------------------------------------------------- timing


def test_time_calls_warms_up_untimed_then_times_each_call():
    clock = FakeClock([100.0, 3.0, 1.0, 2.0])  # the first step is the warm-up's
    times = time_calls(clock.call, repeats=3, warmup=1, clock=clock)
    assert times == [3.0, 1.0, 2.0]
    assert clock.reads == 6  # two reads per timed call, none for the warm-up


def test_time_calls_without_repeats_stops_once_the_budget_is_spent():
    # each call takes 0.1 s: after 2 calls 0.2 s are spent but 3 is the minimum, so 3 calls
    clock = FakeClock([0.1] * 10)
    times = time_calls(clock.call, repeats=None, warmup=0, clock=clock, budget_s=0.2)
    assert len(times) == 3
    # calls of 0.01 s: 0.2 s are reached after 20 calls
    clock = FakeClock([0.01] * 100)
    times = time_calls(clock.call, repeats=None, warmup=0, clock=clock, budget_s=0.2)
    assert len(times) == 20


def test_time_calls_rejects_bad_repeats():
    with pytest.raises(ValueError, match="repeats"):
        time_calls(lambda: None, repeats=0)
    with pytest.raises(ValueError, match="warmup"):
        time_calls(lambda: None, repeats=1, warmup=-1)


def test_place_with_a_formula_uses_the_median_of_the_fake_clock():
    # matmul 512 x 512 x 512 in fp32 by hand: FLOPs 2 * 512^3 = 268,435,456;
    # bytes: read X and W, write Y, 512^2 elements of 4 bytes each: 3 * 512^2 * 4 = 3,145,728
    clock = FakeClock([9.0, 0.004, 0.001, 0.002])
    r = rl.place(
        lambda: clock.call(),
        cost=rl.matmul(N, N, N, "fp32"),
        repeats=3,
        clock=clock,
        roofs="H100",
    )
    assert r.flops == 2 * N**3 == 268_435_456
    assert r.bytes == 3 * N * N * 4 == 3_145_728
    assert r.seconds == pytest.approx(0.002)  # median of 4 ms, 1 ms, 2 ms
    assert r.flops_per_s == pytest.approx(268_435_456 / 0.002)
    assert r.intensity == pytest.approx(2 * N**3 / (3 * N * N * 4))  # = 512 / 6 = 85.33
    assert r.sources == {
        "flops": "formula",
        "bytes": "formula",
        "seconds": "measured",
        "roofs": "catalog: H100 SXM",
    }
    # the H100's fp32 ridge: 67 TFLOP/s / 3.35 TB/s = 20 FLOPs/B < 85.33: compute-bound
    assert r.ridge == pytest.approx(67e12 / 3.35e12)
    assert r.bound == "compute"
    assert "formula" in r.table() and "85.33 FLOPs/B" in r.table()


# ---------------------------------------------------------------- missing counts


def test_missing_and_negative_counts_are_none():
    assert count_or_none(None) is None
    assert count_or_none(-1) is None  # XLA's "could not count"
    assert count_or_none(float("nan")) is None
    assert count_or_none(True) is None
    assert count_or_none(3) == 3.0


def test_cost_analysis_as_a_list_or_a_dict():
    counts = {"flops": 2.0, "bytes accessed": 12.0}
    assert cost_dict([counts]) == counts  # older JAX: one dict per computation
    assert cost_dict(counts) == counts
    assert cost_dict([]) == {} and cost_dict(None) == {}


def test_a_missing_count_is_shown_as_missing_and_never_plotted():
    r = Placement("f", flops=None, bytes=100.0, seconds=1.0, chip=rl.get_chip("H100"), dtype="fp32")
    assert r.flops_per_s is None and r.intensity is None and r.bound is None
    assert r.point() is None
    assert "FLOPs" in r.table() and "missing" in r.table()
    with pytest.raises(ValueError, match="flops missing"):
        r.plot()


def test_no_catalog_entry_says_which_figures_are_missing_and_how_to_pass_them():
    chip, source, why = roofs_for(None, "cpu")
    assert chip is None and source == ""
    assert "peak FLOP/s and memory bandwidth" in why and "roofs=" in why
    r = Placement("f", 10.0, 10.0, 1.0, device="cpu", dtype="fp32", roofs_missing=why)
    with pytest.raises(ValueError, match="roofs="):
        r.plot()


def test_roofs_from_a_measurement_use_all_threads():
    from roofline.measure import load_result
    from roofline.measure.runner import REFERENCE_FILE

    result = load_result(REFERENCE_FILE)
    chip, source, _ = roofs_for(result, "cpu")
    assert chip.name == result.chip_all_threads.name
    assert source.startswith("measured")


def test_a_point_under_its_roof_is_plotted_without_a_violation():
    # 1 GFLOP in 1 s at intensity 1: far under the H100's roof (3.35 TB/s x 1 FLOP/B)
    r = Placement("mine", 1e9, 1e9, 1.0, dtype="fp32", chip=rl.get_chip("H100"))
    fig = r.plot()
    assert fig.roofline_violations == []


# ---------------------------------------------------------------- errors


def test_not_a_function():
    with pytest.raises(TypeError, match="needs a function"):
        rl.place(42)


def test_a_missing_backend_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax now raises ImportError
    with pytest.raises(ImportError, match=r"roofline\[jax\]"):
        rl.place(lambda x: x, 1.0, backend="jax")
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match="pip install torch"):
        rl.place(lambda x: x, 1.0, backend="torch")


def test_place_and_place_trace_load_no_framework():
    code = (
        "import sys, roofline as rl; rl.place; rl.place_trace; "
        "print([m for m in ('jax', 'torch', 'numpy') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- JAX


def test_jax_matmul_counts_match_the_hand_formula():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.ones((N, N), jnp.float32)
    r = rl.place(lambda a, b: a @ b, x, x, repeats=2)
    assert r.flops == 2 * N**3  # 268,435,456
    assert r.bytes == 3 * N * N * 4  # 3,145,728: X, W read, Y written once
    assert r.sources["flops"] == "compiler" and r.sources["seconds"] == "measured"
    assert r.dtype == "fp32" and r.device == "cpu" and len(r.timings) == 2
    assert r.seconds > 0


def chain(x):
    import jax.numpy as jnp

    return jnp.exp(jnp.sin(x) * 2.0 + 1.0)


def test_jax_unfused_chain_moves_each_intermediate_the_fused_one_does_not():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.ones((N, N), jnp.float32)
    elements = N * N
    fused = rl.place(chain, x, repeats=1)
    # fused by jit: read x once, write the result once: 2 x 4 bytes per element
    assert fused.bytes == 2 * 4 * elements  # 2,097,152
    # op by op: sin, mul, add, exp each read 4 bytes and write 4 bytes per element, and the
    # two scalar constants (2.0, 1.0) are read as 4-byte arrays: 4 x 8 x N^2 + 2 x 4
    unfused = rl.place(chain, x, jit=False, repeats=1)
    assert unfused.bytes == 4 * 8 * elements + 2 * 4  # 8,388,616
    # FLOPs: the mul and the add, 1 per element each; sin and exp are transcendentals
    assert fused.flops == unfused.flops == 2 * elements
    assert fused.transcendentals == unfused.transcendentals == 2 * elements
    assert unfused.intensity == pytest.approx(fused.intensity / 4, rel=1e-5)


def test_jax_arguments_that_do_not_trace():
    pytest.importorskip("jax")
    with pytest.raises(ValueError, match="could not trace"):
        rl.place(lambda s: s.upper(), "text")


# ---------------------------------------------------------------- PyTorch (skipped without it)


def test_torch_matmul_and_unfused_chain():
    torch = pytest.importorskip("torch")
    x = torch.ones((N, N), dtype=torch.float32)
    r = rl.place(torch.matmul, x, x, repeats=1)
    assert r.flops == 2 * N**3  # FlopCounterMode: 2 FLOPs per multiply-add
    assert r.bytes == 3 * N * N * 4  # one mm: two inputs, one output
    assert r.sources["flops"] == "counter"
    # sin, mul by a Python scalar, add a Python scalar, exp: 4 ops, each reads and writes
    # 4 bytes per element (scalars are not tensors): 4 x 8 x N^2; FLOPs 0 (not counted)
    r = rl.place(lambda t: torch.exp(torch.sin(t) * 2.0 + 1.0), x, backend="torch", repeats=1)
    assert r.bytes == 4 * 8 * N * N
    assert r.flops in (0, None)


def test_slow_calls_show_progress():
    import io

    stream = io.StringIO()
    clock = FakeClock([2.0, 2.0])
    time_calls(clock.call, repeats=2, warmup=0, clock=clock, progress=stream)
    assert stream.getvalue().splitlines() == ["timed 1 of 2 calls", "timed 2 of 2 calls"]


def test_cost_may_be_a_function_of_the_arguments():
    # rl.elementwise(1000, "fp32"): 1 FLOP and 3 x 4 bytes per element (two reads, one write)
    clock = FakeClock([0.0, 1e-3])
    r = rl.place(
        lambda a, b: None,
        1000,
        2,
        cost=lambda n, _: rl.elementwise(n, "fp32"),
        repeats=1,
        clock=clock,
    )
    assert (r.flops, r.bytes, r.dtype) == (1000, 12_000, "fp32")
    with pytest.raises(TypeError, match="roofline.Cost"):
        rl.place(lambda: None, cost=lambda: 3, repeats=1)


def test_roofs_by_name_and_bad_roofs():
    chip, source, _ = roofs_for("v5e", "cpu")
    assert chip.name == "TPU v5e" and source == "catalog: TPU v5e"
    chip, _, _ = roofs_for(None, "NVIDIA H100 80GB HBM3")  # the name torch prints
    assert chip.name == "H100 SXM"
    with pytest.raises(TypeError, match="roofs must be"):
        roofs_for(3.5, "cpu")


def test_the_table_gives_the_roofs_the_share_is_taken_against():
    # H100 SXM from the catalog: fp32 peak 67 TFLOP/s, HBM 3.35 TB/s (the figures above)
    clock = FakeClock([9.0, 0.002])
    r = rl.place(
        lambda: clock.call(), cost=rl.matmul(N, N, N, "fp32"), repeats=1, clock=clock, roofs="H100"
    )
    rows = {name: value for name, value, _ in r.rows()}
    assert rows["roof: peak"] == rl.format_flops_rate(67e12)
    assert rows["roof: memory"] == rl.format_bandwidth(3.35e12)


# ---------------------------------------------------------------- chapter 14's fusion sentence


@pytest.mark.parametrize(
    "fused, unfused, said, never",
    [
        # 2 ms op by op against 1 ms jitted: fusion helped, 2.0 times
        (1e-3, 2e-3, "took 2.0 times as long", "faster"),
        # 1.05: inside the 1.2 band either way, so no gap is explained
        (1e-3, 1.05e-3, "within the noise", "took 1.1 times as long"),
        # 2.78 / 3.29 = 0.845 > 1 / 1.2 = 0.833 (the build in the newcomer's report): noise
        (3.29e-3, 2.78e-3, "unfused / fused = 0.84", "fusion helped"),
        # 0.7 < 0.833: the order came out reversed, and the text says so
        (1e-3, 0.7e-3, "came out faster (0.7 times", "fusion helped"),
    ],
)
def test_the_fusion_sentence_follows_the_measured_ratio(fused, unfused, said, never):
    from roofline.placement import fusion_time_text

    text = fusion_time_text(fused, unfused)
    assert said in text and never not in text
