"""Issue 24 item 3: statements an expert called wrong stay corrected in chapters 1-5, and one
word names each regime. Text checks on the MyST sources (the built pages are checked elsewhere)."""

import re
from pathlib import Path

import pytest

import roofline as rl
from roofline.exercises import check

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
FIRST_FIVE = sorted(CHAPTERS.glob("0[1-5]_*.md"))


def _text(prefix):
    return next(p for p in FIRST_FIVE if p.name.startswith(prefix)).read_text()


@pytest.mark.parametrize("page", FIRST_FIVE, ids=lambda p: p.name)
def test_memory_bound_is_the_one_word(page):
    text = page.read_text()
    # the synonym is named once, where the term is defined (chapter 1), and nowhere used
    uses = [m.start() for m in re.finditer(r"bandwidth-bound", text)]
    for start in uses:
        assert "also called" in text[max(0, start - 40) : start], page.name


def test_bandwidth_bound_is_still_accepted_as_an_answer():
    assert check("time-which-bound-h100", "bandwidth-bound").correct
    assert check("time-which-bound-h100", "memory-bound").correct


def test_corrected_statements_stay_corrected():
    assert "opposite directions." not in _text("04")
    assert "Almost all the time of a neural network" not in _text("04")
    assert "Bandwidths are always SI" not in _text("05")
    assert "not twice as on" not in _text("03")
    assert "Williams, Andrew Waterman and David Patterson" in _text("03")
    assert "hundreds of times below any" not in _text("02")


@pytest.mark.parametrize(
    "prefix, typed",
    [
        ("04", r"\approx 103"),
        ("04", r"\approx 173"),
        ("04", r"\approx 6317"),
        ("05", "1340"),
        ("05", r"\approx 808"),
        ("05", "141 GB of an H200"),
    ],
)
def test_solution_numbers_come_from_code(prefix, typed):
    assert typed not in _text(prefix)


def test_tpu_v4_int8_equals_bf16_so_int8_math_halves_its_critical_batch():
    # Google: 275 TFLOPs bf16 and 275 TOPs int8 at 1200 GBps: bf16 B_crit = 275e12 / 1.2e12
    v4 = rl.get_chip("TPU v4")
    assert v4.peak_flops_per_s("int8") == v4.peak_flops_per_s("bf16") == 275e12
    assert rl.critical_batch_size(v4, "int8") == pytest.approx(275e12 / 1.2e12 / 2)
    assert rl.critical_batch_size(v4, "bf16") == pytest.approx(275e12 / 1.2e12)
