"""Issue 30, section 4 (statements): what the book says about the roof, achievable bandwidth
and the chips, held against simulation and the book's own data."""

import random
import re
from pathlib import Path

import pytest

import roofline as rl
from roofline import achievable

ROOT = Path(__file__).resolve().parents[1]


def test_one_flop_per_multiply_add_cannot_lift_a_point_above_the_roof():
    # simulation: points on or below the roof of random chips, then the FLOPs halved (one FLOP
    # per multiply-add instead of two): intensity and rate both halve, the point stays below
    rng = random.Random(30)
    chips = [n for n in rl.list_chips() if rl.get_chip(n).has_peak("bf16")]
    for _ in range(2000):
        chip = rng.choice(chips)
        intensity = 10 ** rng.uniform(-1, 4)
        rate = rng.uniform(0.01, 1.0) * rl.attainable_flops_per_s(intensity, chip, "bf16")
        rl.check_below_roof(rate / 2, intensity / 2, chip, "bf16", tolerance=1.0)
    # bytes counted three times do lift one: H100 SXM at 100 FLOPs/B and 90 % of its slanted
    # roof, 0.9 x 100 x 3.35e12 = 301.5 TFLOP/s; at 100 / 3 FLOPs/B the roof is 111.7 TFLOP/s
    with pytest.raises(ValueError, match="above the roofline"):
        rl.check_below_roof(0.9 * 100 * 3.35e12, 100 / 3, "H100 SXM", "bf16")
    doc = rl.check_below_roof.__doc__
    assert "cannot: counting one FLOP per multiply-add" in doc


def test_chapter_3_says_the_flop_convention_cannot_lift_a_point():
    text = (ROOT / "chapters" / "03_the_roofline_plot.md").read_text()
    assert "or FLOPs counted once per multiply-add" not in text
    assert "lands\nbelow the roof, never above it" in text


def test_achievable_bandwidth_range_is_the_range_of_its_own_data():
    # BabelStream triad / nominal: A100 1.70 / 2.039 = 0.834, H200 4.15 / 4.8 = 0.865,
    # H100 SXM 2.97 / 3.35 = 0.887
    fractions = {name: achievable.hbm_efficiency(name) for name in achievable.HBM_MEASURED}
    assert fractions["A100 SXM"] == pytest.approx(1.70 / 2.039)
    low, high = min(fractions.values()), max(fractions.values())
    assert (round(100 * low), round(100 * high)) == (83, 89)
    assert "83-89 %" in achievable.__doc__ and "87-89" not in achievable.__doc__


def test_the_l4_is_not_called_a_geforce_card():
    text = (ROOT / "chapters" / "02_arithmetic_intensity.md").read_text()
    for sentence in re.split(r"(?<=\.)\s", text):
        if "GeForce" in sentence and "L4" in sentence:
            assert "data-centre" in sentence, sentence
    assert not re.search(r"the L4[^.]*like the other GeForce", text)
