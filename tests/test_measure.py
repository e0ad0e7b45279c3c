"""roofline.measure: byte counting, plateau detection on injected curves, the Chip it
builds, a tiny real run, interrupts, memory checks, the CLI round trip and the
accelerator path (skipped without a library; exercised with a stand-in module)."""

import io
import json
import math
import sys
import types

import numpy as np
import pytest

import roofline as rl
from roofline.measure import (
    KERNELS,
    BandwidthSample,
    IncompleteMeasurement,
    InsufficientMemoryError,
    MatmulSample,
    MeasureResult,
    OperationSample,
    bytes_counted,
    catalog_chip_for,
    combine_best,
    find_plateaus,
    load_chip,
    load_result,
    measure,
    measure_accelerator,
    measure_kernel,
    memory_levels,
    sweep_sizes,
    working_set_bytes,
)
from roofline.measure import accelerator as acc_mod
from roofline.measure.runner import Progress, check_memory

KiB, MiB = 2**10, 2**20


# ------------------------------------------------------------ byte counting
@pytest.mark.parametrize(
    "kernel, arrays_read, arrays_written, arrays_held",
    [("copy", 1, 1, 2), ("scale", 1, 1, 2), ("add", 2, 1, 3)],
)
def test_bytes_counted_match_the_arrays_numpy_touches(
    kernel, arrays_read, arrays_written, arrays_held
):
    n = 1000
    one = np.empty(n).nbytes  # 8N, from numpy itself
    assert bytes_counted(kernel, n) == (arrays_read + arrays_written) * one
    assert working_set_bytes(kernel, n) == arrays_held * one


def test_kernels_compute_what_they_claim_without_temporaries():
    b, c = np.arange(5.0), np.arange(5.0) * 10
    a = np.zeros(5)
    KERNELS["copy"].run([a, b])
    assert np.array_equal(a, b)
    KERNELS["scale"].run([a, b], scalar=3.0)
    assert np.array_equal(a, 3 * b)
    KERNELS["add"].run([a, b, c])
    assert np.array_equal(a, b + c)


def test_sweep_sizes_are_geometric():
    sizes = sweep_sizes(64 * KiB, 1 * MiB, per_octave=2)
    assert sizes[0] == 64 * KiB and sizes[-1] == 1 * MiB
    ratios = [b / a for a, b in zip(sizes, sizes[1:])]
    assert all(abs(r - math.sqrt(2)) < 1e-3 for r in ratios)
    with pytest.raises(ValueError):
        sweep_sizes(2 * MiB, 1 * MiB)


class StepTimer:
    """A clock that advances `dt` seconds each time it is read; optionally raises after `limit` reads."""

    def __init__(self, dt=1e-3, limit=None):
        self.t, self.dt, self.reads, self.limit = 0.0, dt, 0, limit

    def __call__(self):
        self.reads += 1
        if self.limit is not None and self.reads > self.limit:
            raise KeyboardInterrupt
        self.t += self.dt
        return self.t


def test_measure_kernel_turns_injected_timings_into_bytes_per_second():
    timer = StepTimer(dt=2e-3)
    s = measure_kernel("add", 3 * 8 * 1000, repeats=4, target_bytes=0, timer=timer)
    assert s.n_elements == 1000 and len(s.times) == 4
    # each repeat: one call between two clock reads 2 ms apart -> 24000 bytes / 2 ms
    assert s.best == pytest.approx(3 * 8 * 1000 / 2e-3)
    assert s.median == pytest.approx(s.best)


# ------------------------------------------------------------ plateau detection
def hierarchy_curve(levels, sizes, overhead_s=0.0, noise=0.0, seed=0):
    """Bandwidth a kernel would show: each level's bandwidth while the working set fits it,
    slowed at small sizes by a fixed per-call overhead (time = ws/bw + overhead)."""
    rng = np.random.default_rng(seed)
    out = []
    for ws in sizes:
        bw = next(b for cap, b in levels if ws <= cap)
        t = ws / bw + overhead_s
        out.append(ws / t * (1 + noise * rng.uniform(-1, 1)))
    return out


LEVELS = [(1 * MiB, 200e9), (24 * MiB, 100e9), (math.inf, 40e9)]


def test_plateaus_found_at_each_level_of_an_injected_hierarchy():
    sizes = sweep_sizes(16 * KiB, 512 * MiB, per_octave=4)
    bws = hierarchy_curve(LEVELS, sizes, overhead_s=5e-8, noise=0.05)
    levels = memory_levels(sizes, bws)
    assert levels.main_memory_reached
    assert [round(p.bytes_per_s / 1e9) for p in levels.plateaus] == pytest.approx(
        [200, 100, 40], rel=0.08
    )
    assert levels.overhead_points > 0  # the overhead ramp at small sizes is not a level
    assert levels.main_memory.min_working_set > 24 * MiB
    assert levels.caches[0].max_working_set <= 1 * MiB


def test_call_overhead_ramp_is_not_a_cache_level():
    sizes = sweep_sizes(16 * KiB, 512 * MiB, per_octave=4)
    bws = hierarchy_curve(LEVELS, sizes, overhead_s=1e-6)  # 1 us per numpy call: a long ramp
    levels = memory_levels(sizes, bws)
    assert len(levels.plateaus) == 3 and levels.overhead_points > 4
    # what is left of the fastest level is still biased low by the overhead, never high
    assert 0.7 * 200e9 < levels.caches[0].bytes_per_s < 200e9


def test_one_noisy_point_does_not_split_a_plateau():
    sizes = sweep_sizes(256 * KiB, 256 * MiB, per_octave=2)
    bws = hierarchy_curve(LEVELS, sizes)
    i = sizes.index(next(s for s in sizes if s > 4 * MiB))
    bws[i] *= 0.5  # another process woke up
    assert len(find_plateaus(sizes, bws)) == 3


def test_a_sweep_that_stops_inside_the_caches_says_so():
    sizes = sweep_sizes(256 * KiB, 32 * MiB, per_octave=2)
    bws = hierarchy_curve(
        [(1 * MiB, 200e9), (8 * MiB, 100e9), (16 * MiB, 70e9), (math.inf, 40e9)], sizes
    )
    levels = memory_levels(sizes, bws)
    assert not levels.main_memory_reached


def test_a_plateau_slower_than_a_level_further_out_is_a_dip_not_a_level():
    # chapter 9's reference run (issue 33): the curve falls to 13 GB/s at 108-181 MiB, then
    # levels off at 22 GB/s beyond; data further from the core never moves faster, so the
    # slow stretch is no memory level. Injected: 200 GB/s to 1 MiB, 100 GB/s to 24 MiB, 30 GB/s
    # to 96 MiB (two octaves, 8 points at 4 per octave: long enough to be a plateau), 40 GB/s.
    sizes = sweep_sizes(16 * KiB, 1024 * MiB, per_octave=4)
    curve = [(1 * MiB, 200e9), (24 * MiB, 100e9), (96 * MiB, 30e9), (math.inf, 40e9)]
    levels = memory_levels(sizes, hierarchy_curve(curve, sizes))
    assert [p.bytes_per_s for p in levels.plateaus] == pytest.approx([200e9, 100e9, 40e9])
    assert [p.bytes_per_s for p in levels.dips] == pytest.approx([30e9])
    assert levels.dips[0].min_working_set > 24 * MiB and levels.dips[0].max_working_set <= 96 * MiB
    # a monotone hierarchy has none
    assert memory_levels(sizes, hierarchy_curve(LEVELS, sizes)).dips == ()


def test_a_short_last_run_close_to_the_last_plateau_continues_it():
    # a quick run on the build machine ended 35 GB/s at 64-181 MiB, then one point at 256 MiB
    # cut off by the run rule: that point is main memory still, not a level of its own (nor
    # does it make the plateau before it a dip). Raw bandwidths (GB/s), one size per octave:
    # smoothed (running median of 3), ... 43, 43, 35, 35, 35, then (35 + 32.2) / 2 = 33.6:
    # the run 43..35 (43 / 35 = 1.23 <= 1.25) cannot take 33.6 (43 / 33.6 = 1.28), so the last
    # run is one point, 32.2, within 1.25 of the plateau's median 35: it continues it
    bw = [165] * 6 + [104] * 6 + [60, 43, 43, 35, 35, 35, 32.2]
    sizes = [2**k * MiB / 64 for k in range(len(bw))]
    levels = memory_levels(sizes, [b * 1e9 for b in bw])
    assert levels.main_memory_reached and levels.dips == ()
    assert [p.bytes_per_s for p in levels.plateaus] == pytest.approx([165e9, 104e9, 35e9])
    assert levels.main_memory.max_working_set == sizes[-1]


def test_the_reference_run_counts_three_levels_and_shows_its_dip():
    # the stored reference run (roofline/measure/reference_run.json): its curve, read by eye
    # from the per-kernel timings, has fast plateaus up to ~1.2 MiB (~85 GB/s) and ~64 MiB
    # (~27 GB/s), ~13 GB/s at 108-181 MiB and ~22 GB/s from 215 MiB on (copy only)
    from roofline.measure.reference import REFERENCE_FILE

    result = load_result(REFERENCE_FILE)
    levels = result.levels()
    bandwidths = [p.bytes_per_s for p in levels.plateaus]
    assert len(bandwidths) == 3 and bandwidths == sorted(bandwidths, reverse=True)
    assert 20e9 < levels.main_memory.bytes_per_s < 25e9
    assert len(levels.dips) == 1 and 10e9 < levels.dips[0].bytes_per_s < 16e9
    assert "not a level: " in result.table()


def test_plateau_input_errors_are_clear():
    with pytest.raises(ValueError, match="increasing"):
        memory_levels([2, 1], [1, 1])
    with pytest.raises(ValueError, match="one of each"):
        memory_levels([1, 2], [1])
    with pytest.raises(ValueError, match="positive"):
        memory_levels([1, 2], [1, -1])


def test_combine_best_takes_the_fastest_kernel_at_each_size():
    sizes, bws = combine_best({"copy": ([100, 200], [5.0, 1.0]), "add": ([100.5, 200], [3.0, 2.0])})
    assert sizes == [100, 200] and bws == [5.0, 2.0]


# ------------------------------------------------------------ the Chip
def synthetic_result(partial=False):
    sizes = sweep_sizes(64 * KiB, 256 * MiB, per_octave=2)
    samples = []
    for name, k in KERNELS.items():
        for ws, bw in zip(sizes, hierarchy_curve(LEVELS, sizes)):
            n = ws // (k.arrays * 8)
            samples.append(BandwidthSample(name, n, [bytes_counted(name, n) / bw] * 3))
    matmuls = [
        MatmulSample("fp64", 512, 512, 512, [2 * 512**3 / 50e9, 2 * 512**3 / 40e9]),
        MatmulSample("fp32", 512, 512, 512, [2 * 512**3 / 100e9]),
    ]
    ops = [
        OperationSample("dot big", rl.dot(2**24, "fp64"), 2 * 8 * 2**24, [0.01]),
        OperationSample("dot small", rl.dot(2**10, "fp64"), 2 * 8 * 2**10, [1e-6]),
    ]
    return MeasureResult(
        "testhost",
        "2025-01-01 12:00",
        "Test CPU",
        {"mode": "test"},
        samples,
        matmuls,
        ops,
        partial=partial,
        memory_bytes=8 * 2**30,
    )


def test_chip_from_injected_timings():
    chip = synthetic_result().chip
    assert isinstance(chip, rl.Chip) and chip.memory_kind == "DRAM"
    assert chip.hbm_bytes_per_s == pytest.approx(40e9)
    # peak = fastest repeat: 2 n^3 / the smaller time
    assert chip.peak_flops_per_s("fp64") == pytest.approx(50e9)
    assert chip.peak_flops_per_s("fp32") == pytest.approx(100e9)
    assert chip.peak("fp64").source.url.startswith("measured on testhost 2025-01-01")
    assert [bw for _, bw in chip.extra_memories] == pytest.approx([200e9, 100e9])
    # usable like a catalog chip: ridge = peak / bandwidth, estimates, figures
    assert rl.critical_intensity(chip, "fp64") == pytest.approx(50e9 / 40e9)
    est = rl.estimate(rl.dot(2**24, "fp64"), chip)
    assert est.t_lower == pytest.approx((2 * 2**24 + 1) * 8 / 40e9)
    assert est.bound == "memory"


def test_predictions_use_the_level_that_holds_the_data():
    rows = {r["label"]: r for r in synthetic_result().predictions()}
    small = rows["dot small"]
    assert small["level"].startswith("cache")
    assert small["predicted_level"] == pytest.approx((2 * 2**10 + 1) * 8 / 200e9)
    assert small["predicted"] == pytest.approx((2 * 2**10 + 1) * 8 / 40e9)
    assert rows["dot big"]["level"] == "DRAM"
    assert rows["dot big"]["ratio"] == pytest.approx(0.01 / ((2 * 2**24 + 1) * 8 / 40e9))


def test_chip_works_in_a_roofline_figure():
    pytest.importorskip("matplotlib")
    result = synthetic_result()
    fig = rl.plots.roofline_figure(
        result.chip, dtype="fp64", bandwidths="all", operations=result.points()
    )
    assert len(fig.roofline_ridges) == 3


# ------------------------------------------------------------ real runs
def test_tiny_real_run_is_complete():
    # its speed (a few seconds) is a target of benchmarks/bench_measure.py, not an assertion
    result = measure(mode="tiny", progress=False)
    assert not result.partial
    assert {s.kernel for s in result.bandwidth} == set(KERNELS)
    chip = result.chip
    assert chip.peak_flops_per_s("fp64") > 1e6 and chip.hbm_bytes_per_s > 1e8
    assert "accelerator skipped" in result.accelerator_message
    assert "PARTIAL" not in result.table()


def test_interrupt_keeps_what_was_measured():
    # the sweep reads the clock twice per repeat; stop after 7 reads, i.e. during the 2nd sample
    result = measure(mode="tiny", timer=StepTimer(limit=7), progress=False, accelerator=False)
    assert result.partial and result.interrupted_during.startswith("bandwidth")
    assert len(result.bandwidth) >= 1 and all(s.times for s in result.bandwidth)
    assert "PARTIAL RESULT" in result.table()
    with pytest.raises(IncompleteMeasurement, match="no matmul"):
        _ = result.chip


def test_interrupt_during_matmul_keeps_the_sweep():
    from roofline.measure.runner import settings_for

    s = settings_for("tiny")
    n_bw = len(sweep_sizes(s["min_ws"], s["max_ws"], s["per_octave"])) * len(KERNELS)
    reads = n_bw * s["repeats"] * 2 + 1
    result = measure(mode="tiny", timer=StepTimer(limit=reads), progress=False, accelerator=False)
    assert result.partial and result.interrupted_during.startswith("matmul")
    assert len(result.bandwidth) == n_bw
    result.levels()  # the sweep is analysable


def test_too_little_memory_is_refused_before_anything_runs():
    def timer():
        raise AssertionError("nothing may be timed or allocated")

    with pytest.raises(InsufficientMemoryError, match="--quick"):
        measure(mode="full", available_bytes=64 * MiB, timer=timer, progress=False)
    with pytest.raises(InsufficientMemoryError):
        check_memory(10 * 2**30, available=2**30)
    check_memory(2**20, available=2**30)  # fits: no error


def test_progress_bar_writes_to_its_stream():
    stream = io.StringIO()
    bar = Progress(2, True, stream=stream)
    bar.step("first")
    bar.step("second")
    bar.close()
    text = stream.getvalue()
    assert "1/2" in text and "second" in text and text.endswith("\n")
    quiet = io.StringIO()
    Progress(2, False, stream=quiet).step("x")
    assert quiet.getvalue() == ""


def test_cli_quick_json_round_trip(tmp_path, capsys):
    from roofline.measure.cli import main

    path = tmp_path / "m.json"
    plot = tmp_path / "m.png"
    assert (
        main(
            [
                "--tiny",
                "--json",
                str(path),
                "--plot",
                str(plot),
                "--no-accelerator",
                "--no-progress",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "main memory (DRAM)" in out and "FLOP/s" in out and "B/s" in out
    assert plot.stat().st_size > 1000
    saved = json.loads(path.read_text())
    chip = load_chip(path)
    # the loader recomputes the Chip from the raw timings; it matches the saved summary
    assert chip.peak_flops_per_s("fp64") == pytest.approx(
        saved["summary"]["peaks_flops_per_s"]["fp64"]
    )
    assert chip.memory_levels() == pytest.approx(saved["summary"]["memory_levels_bytes_per_s"])
    again = load_result(path)
    assert again.to_dict()["bandwidth"] == saved["bandwidth"]


def test_loader_rejects_other_files(tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="--json"):
        load_result(path)


# ------------------------------------------------------------ accelerators
#: What torch (`torch.cuda.get_device_name`) and jax (`device.device_kind`) print, and the
#: catalog chip each denotes: one row per branch of the name matching written before the
#: catalog's `device_names` field (issue 27), so that the lookup keeps every mapping.
DEVICE_NAME_TABLE = [
    ("TPU v4", "TPU v4"),
    ("TPU v5 lite", "TPU v5e"),
    ("TPU v5e", "TPU v5e"),
    ("TPU v5", "TPU v5p"),  # jax names v5p "TPU v5"
    ("TPU v5p", "TPU v5p"),
    ("TPU v6 lite", "TPU v6e"),
    ("TPU v6e", "TPU v6e"),
    ("TPU7x", "TPU7x"),
    ("TPU v7", "TPU7x"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM"),
    ("A100-SXM4-80GB", "A100 SXM"),  # older drivers print no "NVIDIA"
    ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB"),  # Colab's A100: its own entry, not the 80GB's
    ("NVIDIA L40S", "L40S"),
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H200", "H200"),
    ("NVIDIA B200", "B200"),
    ("NVIDIA GB200", "GB200"),
    ("AMD Instinct MI300X", "MI300X"),
    ("AMD Instinct MI300X VF", "MI300X"),  # a virtual function of the same GPU
    ("AMD Instinct MI325X", "MI325X"),
    ("AMD Instinct MI355X", "MI355X"),
    ("NVIDIA GeForce RTX 3090", "RTX 3090"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"),
    ("NVIDIA GeForce RTX 5090", "RTX 5090"),
    ("Tesla T4", "T4"),
    ("NVIDIA L4", "L4"),
]

#: Devices the catalog has no entry for, or variants whose figures differ from the entry's
#: (A100 PCIe, H100 NVL, H200 NVL): no match rather than a wrong peak.
UNMATCHED_DEVICE_NAMES = [
    "NVIDIA A100 80GB PCIe",
    "NVIDIA A100-PCIE-40GB",
    "NVIDIA H100 NVL",
    "NVIDIA H200 NVL",
    "NVIDIA GeForce GTX 1080",
    "Tesla V100-SXM2-16GB",
    "NVIDIA A10G",
    "cpu",
    "",
    "   ",
    None,
]


@pytest.mark.parametrize("name, expected", DEVICE_NAME_TABLE)
def test_device_names_match_the_catalog(name, expected):
    assert catalog_chip_for(name).name == expected
    # case and spacing as another driver version might print them
    assert catalog_chip_for(name.upper().replace(" ", "  ")).name == expected


@pytest.mark.parametrize("name", UNMATCHED_DEVICE_NAMES)
def test_variants_with_other_figures_are_not_matched(name):
    assert catalog_chip_for(name) is None


def test_no_accelerator_library_is_a_skip_with_a_message(monkeypatch):
    monkeypatch.setattr(acc_mod, "_have", lambda module: False)
    result, message = measure_accelerator(quick=True)
    assert result is None
    assert "neither PyTorch nor JAX" in message


class _FakeTensor:
    def __init__(self, array):
        self.a = array

    def copy_(self, other):
        np.copyto(self.a, other.a)
        return self


def _fake_torch(device="NVIDIA H100 80GB HBM3"):
    torch = types.ModuleType("torch")
    torch.bfloat16, torch.float16, torch.float32 = np.float32, np.float16, np.float32
    torch.device = lambda name: name
    torch.randn = lambda *shape, device=None, dtype=None: _FakeTensor(
        np.ones(shape, dtype=np.float32)
    )
    torch.empty = lambda *shape, device=None, dtype=None: _FakeTensor(
        np.empty(shape, dtype=np.float32)
    )
    torch.ones = lambda *shape, device=None, dtype=None: _FakeTensor(
        np.ones(shape, dtype=np.float32)
    )
    torch.empty_like = lambda t: _FakeTensor(np.empty_like(t.a))
    torch.matmul = lambda a, b, out=None: np.matmul(a.a, b.a, out=out.a)
    torch.cuda = types.SimpleNamespace(
        is_available=lambda: True,
        get_device_name=lambda i=0: device,
        synchronize=lambda: None,
        is_bf16_supported=lambda: True,
        empty_cache=lambda: None,
    )
    return torch


def test_accelerator_path_with_a_stand_in_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch())
    monkeypatch.setattr(acc_mod, "_have", lambda module: module == "torch")
    timer = StepTimer(dt=1e-3)
    result, message = measure_accelerator(
        quick=True, timer=timer, matmul_n=64, copy_bytes=2**16, repeats=2
    )
    assert result is not None, message
    assert result.catalog_name == "H100 SXM" and result.dtype == "bf16"
    inner = 3  # quick mode times 3 calls between clock reads
    assert result.flops_per_s == pytest.approx(2 * 64**3 / (1e-3 / inner))
    h100 = rl.get_chip("H100 SXM")
    assert result.fraction_of_peak() == pytest.approx(
        result.flops_per_s / h100.peak("bf16").dense_flops_per_s
    )
    assert result.bytes_per_s == pytest.approx(2**16 / (1e-3 / inner))
    assert "% of peak" in result.report()


def test_t4_is_measured_in_fp16(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch("Tesla T4"))
    result, _ = measure_accelerator(
        library="torch",
        device_name="Tesla T4",
        timer=StepTimer(),
        matmul_n=32,
        copy_bytes=2**12,
        repeats=1,
    )
    assert result.dtype == "fp16" and result.fraction_of_peak() is not None


def test_importing_roofline_does_not_import_measure_or_torch():
    import subprocess

    code = "import roofline, sys; print('roofline.measure' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]


# ------------------------------------------------------------ chapter 9 claims
def test_chapter_add_intensity_is_one_flop_per_24_bytes_by_sympy_and_by_counting():
    import sympy

    N = sympy.symbols("N", positive=True)
    add = rl.elementwise(N, "fp64", name="add")
    assert sympy.simplify(add.intensity - sympy.Rational(1, 24)) == 0
    # the same from the benchmark's own byte counting: 1 FLOP per element, 3 x 8 bytes
    assert 1000 / bytes_counted("add", 1000) == pytest.approx(1 / 24)


def test_chapter_mbw_counts_half_of_stream():
    n = 2**20
    mbw_bytes = np.empty(n).nbytes  # memcpy of one array: the bytes copied, once
    assert bytes_counted("copy", n) == 2 * mbw_bytes


def test_chapter_dot_is_below_a_cpu_ridge_and_the_measured_chip_says_so():
    chip = synthetic_result().chip
    intensity = rl.dot(10**7, "fp64").intensity
    assert abs(intensity - 1 / 8) < 1e-6  # (2N - 1) / ((2N + 1) * 8)
    assert intensity < chip.peak_flops_per_s("fp64") / chip.hbm_bytes_per_s
    from roofline.exercises import check

    assert check(
        "measure-dot-regime",
        "bandwidth-bound",
        peak=chip.peak_flops_per_s("fp64"),
        bandwidth=chip.hbm_bytes_per_s,
    ).correct


def test_ch09_exercise_answers_recomputed_independently():
    from roofline.exercises import check

    assert check("measure-add-bytes", "60 MB").correct  # 3 arrays x 4 bytes x 5e6 (fp32)
    assert not check("measure-add-bytes", "120 MB").correct  # 8 bytes per element: fp64
    # (STREAM: read and write, 2 x 8N bytes; mbw: the 8N bytes copied once), over 100 ms
    assert check(
        "measure-copy-bandwidth", f"{2 * 8 * 2**24 / 0.1} B/s; {8 * 2**24 / 0.1} B/s"
    ).correct
    assert not check(
        "measure-copy-bandwidth", f"{8 * 2**24 / 0.1} B/s; {8 * 2**24 / 0.1} B/s"
    ).correct
    assert not check("measure-copy-bandwidth", f"{2 * 8 * 2**24 / 0.1} B/s").correct  # one part
    assert check("measure-ridge-point", 8.0).correct  # fp32 example: 1.6e11 / 2e10
    assert check("measure-ridge-point", 5.0, peak=1e11, bandwidth=2e10).correct
    peak = rl.get_chip("H100 SXM").peak("bf16")
    assert check("measure-gpu-fraction", 6.5e14 / peak.dense_flops_per_s).correct
    assert not check("measure-gpu-fraction", 6.5e14 / peak.sparse_flops_per_s).correct
