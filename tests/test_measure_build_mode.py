"""Chapter 9's measurement in the book's build (issue 37): a "build" mode of a few seconds,
chosen by the environment the build sets, that leaves the accelerator out and says so."""

import pytest
from test_measure_sizes import FakeMatmul

from roofline.measure import bandwidth, measure, runner
from roofline.measure import matmul as mm
from roofline.measure.runner import MODE_VARIABLE, settings_for


def test_build_mode_sweeps_to_main_memory_with_fewer_repeats_than_quick():
    llc = 32 * 2**20
    build, quick = settings_for("build", llc_bytes=llc), settings_for("quick", llc_bytes=llc)
    # STREAM's rule: the largest working set is at least 4 x the last-level cache (128 MiB)
    assert build["max_ws"] == 4 * llc == 128 * 2**20
    assert settings_for("build", llc_bytes=8 * 2**20)["max_ws"] == 32 * 2**20
    # 64 KiB = 2^16 to 128 MiB = 2^27 at two sizes per octave: 11 octaves, 2 x 11 + 1 = 23 sizes
    sizes = bandwidth.sweep_sizes(build["min_ws"], build["max_ws"], build["per_octave"])
    assert len(sizes) == 23 and sizes[0] == 2**16 and sizes[-1] == 2**27
    assert build["repeats"] < quick["repeats"] and build["target_bytes"] < quick["target_bytes"]
    assert build["op_repeats"] < quick["op_repeats"]
    with pytest.raises(ValueError, match="'build'"):
        settings_for("fast")


def _ramp(monkeypatch, rate, threads):
    fake = FakeMatmul(rate)
    monkeypatch.setattr(mm.np, "matmul", fake.matmul)
    monkeypatch.setattr(mm.time, "perf_counter", fake.clock)
    samples = mm.ramp_matmul("fp64", "build", threads, 2, n_max=4096, timer=fake.clock)
    monkeypatch.undo()
    return [s.n for s in samples]


def test_build_mode_matmuls_stop_within_their_small_budget(monkeypatch):
    # 100 GFLOP/s: n = 512 costs 2 x 512^3 / 1e11 = 2.68 ms a call, 3 calls (a warm-up and 2
    # repeats) 8.05 ms; 1024 would add 8 x 2.68 x 3 = 64.4 ms (72 ms < 0.4 s): taken, 64.4 ms
    # spent on it; 2048 would add 8 x 21.5 x 3 = 515 ms (0.59 s > 0.4 s): stop
    assert _ramp(monkeypatch, 100e9, 1) == [512, 1024]
    # 10 GFLOP/s: 512 spends 80.5 ms; 1024 would add 644 ms: stop at 512
    assert _ramp(monkeypatch, 10e9, 2) == [512]


def test_the_environment_chooses_the_mode_unless_the_call_names_one(monkeypatch):
    monkeypatch.setenv(MODE_VARIABLE, "tiny")
    kwargs = dict(progress=False, accelerator=False, operations=False, all_threads=False)
    assert measure(quick=True, **kwargs).settings["mode"] == "tiny"
    monkeypatch.setenv(MODE_VARIABLE, "build")
    assert measure(mode="tiny", **kwargs).settings["mode"] == "tiny"


def test_build_mode_leaves_the_accelerator_out_and_says_why(monkeypatch):
    monkeypatch.setenv(MODE_VARIABLE, "build")
    # tiny sizes and matmuls under the build's name, so that the test takes no seconds
    real_settings, real_ramp = runner.settings_for, runner.ramp_matmul
    monkeypatch.setattr(
        runner, "settings_for", lambda mode, **kw: dict(real_settings("tiny", **kw), mode=mode)
    )
    monkeypatch.setattr(runner, "ramp_matmul", lambda d, mode, *a: real_ramp(d, "tiny", *a))

    def no_accelerator(**kwargs):
        raise AssertionError("the build's run looked for an accelerator (imports torch and jax)")

    monkeypatch.setattr(runner, "measure_accelerator", no_accelerator)
    result = measure(quick=True, progress=False, operations=False, all_threads=False)
    assert result.settings["mode"] == "build" and result.accelerator is None
    message = result.accelerator_message
    assert "book's build" in message and "Runtime > Change runtime type" in message


def test_the_web_page_shows_the_reference_run_and_a_notebook_its_own(tmp_path):
    # issue 33: the page's cells display the run its prose quotes. A build-mode run is swapped
    # for the stored reference; a reader's run (quick, full) is shown as measured; without a
    # reference file the build's own run is shown (and the prose names it as such).
    from roofline.measure import MeasureResult
    from roofline.measure.reference import REFERENCE_FILE, page_example, page_run

    def run(mode):
        return MeasureResult(host="here", date="today", cpu="cpu", settings={"mode": mode})

    build = run("build")
    shown = page_run(build)
    assert REFERENCE_FILE.is_file() and shown is not build
    assert shown.host == page_example(build)[0].host != "here"
    assert shown.settings["mode"] == "full"  # the stored reference is a full run
    # the accelerator cell prints the reference's answer, never an empty line
    assert shown.accelerator is None and "CPU only" in shown.accelerator_message
    for mode in ("quick", "full"):
        own = run(mode)
        assert page_run(own) is own
    assert page_run(build, reference=tmp_path / "absent.json") is build


def test_chapter_9_swaps_the_run_in_a_removed_cell_and_keeps_the_readers_cell_plain():
    # issue 33: the reader's first cell is still `result = measure(quick=True, ...)`; the swap to
    # the reference run (web page only) happens in a remove-cell right after it, before any
    # cell that prints a result
    import re
    from pathlib import Path

    text = (Path(__file__).parents[1] / "chapters" / "09_measuring_a_roofline.md").read_text(
        encoding="utf-8"
    )
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S)[1:]  # after the setup
    assert "result = measure(quick=True" in cells[0] and "print(" not in cells[0]
    assert cells[1].startswith(":tags: [remove-cell]") and "result = page_run(" in cells[1]
    assert "print(result.table())" in cells[2]
