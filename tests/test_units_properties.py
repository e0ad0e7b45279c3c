"""Property tests of `roofline.units`: what is formatted parses back within the display
precision, and "k * quantity" reads as k times the quantity."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import roofline as rl
from roofline.units import RATE_DIGITS, parse_quantity

values = st.floats(min_value=1e-12, max_value=1e20, allow_nan=False, allow_infinity=False)


def _display_tolerance(digits: int) -> float:
    """Rounding to `digits` significant digits moves a value by at most half a unit in the last
    digit: 0.5 x 10^(1 - digits) of it (a mantissa of at least 1), 5e-4 for 4 digits."""
    return 0.5 * 10.0 ** (1 - digits)


def _round_trip(text: str, value: float, kind: str | None, digits: int) -> None:
    parsed, parsed_kind = parse_quantity(text.replace("µ", "u"))
    assert parsed_kind == kind, text
    assert math.isclose(parsed, value, rel_tol=_display_tolerance(digits) * (1 + 1e-9)), text


@given(values)
def test_rates_bandwidths_and_intensities_round_trip_at_four_digits(value):
    _round_trip(rl.format_flops_rate(value), value, "rate", RATE_DIGITS)
    _round_trip(rl.format_bandwidth(value), value, "bandwidth", RATE_DIGITS)
    if value >= 1e-3:  # plain digits, no prefix: tiny intensities print as 0
        _round_trip(rl.format_intensity(value), value, "intensity", RATE_DIGITS)


@given(values, st.integers(min_value=2, max_value=6))
def test_times_sizes_and_counts_round_trip_at_their_digits(value, digits):
    _round_trip(rl.format_time(value, digits=digits), value, "time", digits)
    _round_trip(rl.format_flops(value, digits=digits), value, "count", digits)
    if value >= 1:  # there is no fraction of a byte prefix
        _round_trip(rl.format_bytes(value, digits=digits), value, "size", digits)
        _round_trip(rl.format_bytes(value, binary=True, digits=digits), value, "size", digits)


UNITS = ["ms", "us", "s", "TFLOP/s", "GB/s", "TB/s", "GiB", "GB", "FLOPs/B", "TFLOPs"]


@given(
    st.integers(min_value=1, max_value=10**6),
    st.floats(min_value=1e-3, max_value=1e6, allow_nan=False),
    st.sampled_from(UNITS),
)
def test_k_times_a_quantity_scales_it(k, x, unit):
    one, kind = parse_quantity(f"{x!r} {unit}")
    scaled, scaled_kind = parse_quantity(f"{k} * {x!r} {unit}")
    assert scaled_kind == kind
    assert scaled == pytest.approx(k * one, rel=1e-12)


@pytest.mark.parametrize(
    "text, value",
    [
        ("3 * 1 TB/s", 3e12),  # by hand: 3 x 10^12 B/s
        ("2 * 5 ms", 10e-3),
        ("4 * 1 GiB", 4 * 2**30),
        ("1e3 * 1 GB", 1e12),
    ],
)
def test_k_times_a_quantity_examples(text, value):
    assert parse_quantity(text)[0] == pytest.approx(value, rel=1e-12)
