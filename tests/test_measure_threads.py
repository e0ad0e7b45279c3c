"""roofline.measure counts threads: the peak and the bandwidth of a ridge point come from the
same number of threads (issue 16, item 4), and the measured figure keeps its labels apart."""

import numpy as np
import pytest

import roofline as rl
from roofline.measure import (
    KERNELS,
    BandwidthSample,
    IncompleteMeasurement,
    MatmulSample,
    MeasureResult,
    OperationSample,
    bytes_counted,
    load_result,
    measure,
    measure_kernel,
    sweep_sizes,
)
from roofline.measure.matmul import blas_threads, limit_blas_threads, measure_matmul

MiB = 2**20


def _sweep(cache_bytes_per_s=100e9, dram_bytes_per_s=20e9):
    """One-thread samples: 100 GB/s up to 1 MiB of working set, 20 GB/s beyond."""
    samples = []
    for name, k in KERNELS.items():
        for ws in sweep_sizes(64 * 2**10, 256 * MiB, per_octave=2):
            n = ws // (k.arrays * 8)
            bw = cache_bytes_per_s if ws <= MiB else dram_bytes_per_s
            samples.append(BandwidthSample(name, n, [bytes_counted(name, n) / bw] * 3))
    return samples


def threaded_result():
    n = 1000
    flops = 2 * n**3  # 2e9 FLOPs per call
    matmuls = [
        MatmulSample("fp64", n, n, n, [flops / 40e9], threads=1),  # 40 GFLOP/s, 1 thread
        MatmulSample("fp64", n, n, n, [flops / 150e9], threads=4),
    ]  # 150 GFLOP/s, 4 threads
    # add on 4 threads over 2^24 elements: 3 x 8 x 2^24 bytes in 8 ms -> 50.33 GB/s
    threaded = [BandwidthSample("add", 2**24, [0.008], threads=4)]
    ops = [OperationSample("dot big", rl.dot(2**24, "fp64"), 2 * 8 * 2**24, [0.01])]
    return MeasureResult(
        "testhost",
        "2025-01-01 12:00",
        "Test CPU",
        {"mode": "test"},
        _sweep(),
        matmuls,
        ops,
        memory_bytes=8 * 2**30,
        threaded_bandwidth=threaded,
    )


def test_ridges_pair_each_peak_with_a_bandwidth_of_the_same_threads():
    result = threaded_result()
    assert result.threads == 4
    # the one-thread chip ignores the faster 4-thread matmul: 2e9 FLOPs / (2e9 / 40e9) s
    assert result.chip.peak_flops_per_s("fp64") == pytest.approx(40e9)
    assert result.chip.hbm_bytes_per_s == pytest.approx(20e9)
    one, four = result.ridges("fp64")
    assert (one["threads"], four["threads"]) == (1, 4)
    assert one["ridge"] == pytest.approx(40e9 / 20e9)  # 2 FLOPs/B
    # 4 threads: 150e9 FLOP/s over 3 * 8 * 2^24 bytes / time = 50.33e9 B/s -> 2.98 FLOPs/B
    assert four["bytes_per_s"] == pytest.approx(50.331648e9, rel=1e-9)
    assert four["ridge"] == pytest.approx(150e9 / 50.331648e9, rel=1e-9)
    all_chip = result.chip_all_threads
    assert all_chip.peak_flops_per_s("fp64") == pytest.approx(150e9)
    assert rl.critical_intensity(all_chip, "fp64") == pytest.approx(four["ridge"])
    text = result.table()
    assert "1 thread" in text and "4 threads" in text


def test_a_one_thread_run_has_one_ridge_and_no_all_thread_chip_to_invent():
    result = threaded_result()
    result.threaded_bandwidth = []
    result.matmuls = result.matmuls[:1]
    assert result.threads == 1
    assert len(result.ridges()) == 1
    assert (
        result.chip_all_threads is result.chip
        or result.chip_all_threads.hbm_bytes_per_s == result.chip.hbm_bytes_per_s
    )
    with pytest.raises(IncompleteMeasurement, match="several threads"):
        result.threaded_main_memory()


def test_threads_survive_the_json_round_trip(tmp_path):
    result = threaded_result()
    path = tmp_path / "m.json"
    result.save_json(path)
    again = load_result(path)
    assert [m.threads for m in again.matmuls] == [1, 4]
    assert [s.threads for s in again.threaded_bandwidth] == [4]
    assert [r["ridge"] for r in again.ridges()] == pytest.approx(
        [r["ridge"] for r in result.ridges()]
    )


def test_old_files_without_thread_counts_still_load():
    d = threaded_result().to_dict()
    for m in d["matmuls"]:
        m.pop("threads")
    del d["threaded_bandwidth"]
    old = MeasureResult.from_dict(d)
    assert all(m.threads is None for m in old.matmuls) and old.threads == 1
    assert old.chip.peak_flops_per_s("fp64") == pytest.approx(150e9)  # the best unlabelled sample


def test_threaded_kernel_computes_the_whole_array_and_counts_the_same_bytes():
    sample = measure_kernel("add", 3 * 8 * 10_001, repeats=1, target_bytes=1, threads=3)
    assert sample.threads == 3 and sample.n_elements == 10_001
    assert sample.bytes == 3 * 8 * 10_001
    with pytest.raises(ValueError, match="threads"):
        measure_kernel("add", 3 * 8 * 1000, threads=0)
    # the pieces cover the arrays exactly: run the same split by hand
    from roofline.measure.bandwidth import KERNELS as K

    a, b, c = np.zeros(10_001), np.arange(10_001.0), np.ones(10_001)
    bounds = [10_001 * i // 3 for i in range(4)]
    for lo, hi in zip(bounds, bounds[1:]):
        K["add"].run([a[lo:hi], b[lo:hi], c[lo:hi]])
    assert np.array_equal(a, b + 1)


def test_blas_is_limited_to_one_thread_and_the_count_is_recorded():
    with limit_blas_threads(1):
        assert blas_threads() == 1
    sample = measure_matmul(32, "fp64", repeats=1, threads=1)
    assert sample.threads == 1
    assert measure_matmul(32, "fp64", repeats=1).threads == blas_threads()
    with pytest.raises(ValueError, match="threads"):
        limit_blas_threads(0)


def test_a_tiny_real_run_measures_all_threads_when_blas_has_several():
    result = measure(mode="tiny", progress=False, accelerator=False)
    assert all(m.threads in (1, blas_threads()) for m in result.matmuls)
    assert any(m.threads == 1 for m in result.matmuls)
    if blas_threads() > 1:
        assert {s.threads for s in result.threaded_bandwidth} == {blas_threads()}
        assert len(result.ridges()) == 2
    else:
        assert not result.threaded_bandwidth and len(result.ridges()) == 1


def test_measured_figure_writes_no_label_on_the_plot():
    pytest.importorskip("matplotlib")
    from roofline.measure.figures import measured_roofline_figure

    result = threaded_result()
    fig = measured_roofline_figure(result)
    ax = fig.axes[0]
    assert len(ax.texts) == 0 and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(label.startswith("dot big") for label in labels)
    assert any(label.startswith("4 threads") for label in labels)
    assert any("ridge 2 FLOPs/B" in label for label in labels)  # 40e9 / 20e9
    text = rl.plots.alt_text(fig)
    assert "4 threads" in text and "dot big" in text
