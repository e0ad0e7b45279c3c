"""Formatting and parsing of units: the book never converts a unit by hand."""
import math

import pytest
from hypothesis import given, strategies as st

import roofline as rl
from roofline.units import parse_quantity


@pytest.mark.parametrize("seconds, text", [
    (1e12 / 989.5e12, "1.01 ms"),      # Q7: milliseconds, not microseconds
    (1.0106e-6, "1.01 µs"),
    (2.5, "2.5 s"),
    (0.9996e-3, "1 ms"),               # rounding carries into the next prefix
    (3e-9, "3 ns"),
])
def test_format_time(seconds, text):
    assert rl.format_time(seconds) == text


def test_format_rates_and_sizes():
    assert rl.format_flops_rate(989.5e12) == "990 TFLOP/s"
    assert rl.format_flops_rate(1.97e14) == "197 TFLOP/s"
    assert rl.format_bandwidth(3.35e12) == "3.35 TB/s"
    assert rl.format_bytes(16e9) == "16 GB"
    assert rl.format_bytes(16 * 2**30, binary=True) == "16 GiB"
    assert rl.format_bytes(16 * 2**30) == "17.2 GB"    # GiB is 7.4% more than GB
    assert rl.format_flops(1e12) == "1 TFLOPs"          # a count, not a rate


@pytest.mark.parametrize("text, value, kind", [
    ("1.01 ms", 1.01e-3, "time"),
    ("1.01 us", 1.01e-6, "time"),
    ("1.01 µs", 1.01e-6, "time"),
    ("989 TFLOP/s", 989e12, "rate"),
    ("989 TFLOPS", 989e12, "rate"),
    ("4.5e10 B/s", 4.5e10, "bandwidth"),
    ("3.35 TB/s", 3.35e12, "bandwidth"),
    ("16 GiB", 16 * 2**30, "size"),
    ("16 GB", 16e9, "size"),
    ("2e12 FLOPs", 2e12, "count"),
    ("240", 240.0, None),
    ("240 FLOPs/B", 240.0, "intensity"),
    ("1,000", 1000.0, None),
])
def test_parse_quantity(text, value, kind):
    parsed, parsed_kind = parse_quantity(text)
    assert math.isclose(parsed, value, rel_tol=1e-12)
    assert parsed_kind == kind


@pytest.mark.parametrize("bad", ["", "abc", "1.01 parsecs", "ms", "1 GiFLOP/s"])
def test_parse_quantity_rejects_with_a_helpful_message(bad):
    with pytest.raises(ValueError, match="write it like|unknown unit"):
        parse_quantity(bad)


@given(st.floats(min_value=1e-12, max_value=1e20, allow_nan=False))
def test_format_then_parse_round_trips_within_rounding(value):
    # three significant digits: the parsed value is within 0.5% of the original
    for fmt, kind in ((rl.format_time, "time"), (rl.format_flops_rate, "rate"),
                      (rl.format_bandwidth, "bandwidth")):
        parsed, parsed_kind = parse_quantity(fmt(value).replace("µ", "u"))
        assert parsed_kind == kind
        assert math.isclose(parsed, value, rel_tol=5e-3)


def test_format_rejects_non_numbers():
    with pytest.raises(TypeError, match="plain number"):
        rl.format_time("1 ms")
