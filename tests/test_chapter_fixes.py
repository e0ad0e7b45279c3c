"""Issue 16, item 4: chapter 8's knees at the exact crossovers, problem 4 without a limit in B,
and chapter 9's ridge from a peak and a bandwidth measured with the same threads."""

import re
from pathlib import Path

import pytest
import sympy

import roofline as rl

ROOT = Path(__file__).resolve().parent.parent
CH08 = (ROOT / "chapters" / "08_problems.md").read_text(encoding="utf-8")


def _section(text, title):
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_problem_3_knees_are_the_exact_crossovers_by_hand():
    # TPU v5e: 197 TFLOP/s bf16, 819 GB/s. X[B, D] @ W[D, F], all bf16: 2BDF FLOPs,
    # 2(BD + DF + BF) bytes. t_math = t_comms: B = r D F / (D F - r (D + F)), r = 197e12 / 819e9
    r = 197e12 / 819e9
    for size, expected in ((1024, 453.6), (8192, 255.5)):
        by_hand = r * size * size / (size * size - r * 2 * size)
        assert by_hand == pytest.approx(expected, abs=0.1)  # issue 16: "about 454", "256"
        assert rl.exact_critical_batch_size("TPU v5e", size, size) == pytest.approx(
            by_hand, rel=1e-12
        )
        # the knee is where the curve reaches the peak: just below it is bandwidth-bound
        assert rl.estimate(rl.matmul(by_hand * 0.99, size, size), "TPU v5e").bound == "memory"
        assert rl.estimate(rl.matmul(by_hand * 1.01, size, size), "TPU v5e").bound == "compute"


def test_problem_3_figure_marks_the_exact_knees_not_the_ridge():
    problem = _section(CH08, "Problem 3")
    figure = problem[problem.index("mystnb") : problem.index("fig\n```")]
    assert "exact_critical_batch_size" in problem
    assert "critical_batch_size(v5e)" not in figure  # the ridge is no knee on a batch axis
    assert "454" in figure and "256" in figure  # the alt text names the knees


def test_problem_4_intensity_does_not_depend_on_B():
    B, D, F = sympy.symbols("B D F", positive=True)
    intensity = sympy.simplify(rl.per_example_matmul(B, D, F).intensity)
    assert B not in intensity.free_symbols  # by hand: 2BDF / 2B(D + DF + F)
    assert sympy.simplify(intensity - D * F / (D * F + D + F)) == 0
    problem = _section(CH08, "Problem 4")
    assert not re.search(r"limit\([^)]*,\s*B\s*,", problem), "a limit in B of a B-free intensity"


def test_chapter_9_pairs_peak_and_bandwidth_by_threads_and_says_so():
    text = (ROOT / "chapters" / "09_measuring_a_roofline.md").read_text(encoding="utf-8")
    assert "same number of" in text and "threads**" in text
    assert "result.ridges(" in text  # both ridges, each with its threads
    assert "measured_roofline_figure(result" in text  # labels in the legend, not on the plot
    assert 'rl.plots.roofline_figure(chip, dtype="fp64", bandwidths="all", operations' not in text
