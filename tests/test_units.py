"""Formatting and parsing of units: the book never converts a unit by hand."""

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import roofline as rl
from roofline.units import parse_quantity


@pytest.mark.parametrize(
    "seconds, text",
    [
        (1e12 / 989.5e12, "1.01 ms"),  # Q7: milliseconds, not microseconds
        (1.0106e-6, "1.01 µs"),
        (2.5, "2.5 s"),
        (0.9996e-3, "1 ms"),  # rounding carries into the next prefix
        (3e-9, "3 ns"),
    ],
)
def test_format_time(seconds, text):
    assert rl.format_time(seconds) == text


def test_format_rates_and_sizes():
    assert rl.format_flops_rate(989.5e12) == "989.5 TFLOP/s"  # 4 significant digits for rates
    assert rl.format_intensity(197e12 / 819e9) == "240.5 FLOPs/B"  # 240.537...
    assert rl.format_bandwidth(2.765e12) == "2.765 TB/s"
    assert rl.format_flops_rate(1.97e14) == "197 TFLOP/s"
    assert rl.format_bandwidth(3.35e12) == "3.35 TB/s"
    assert rl.format_bytes(16e9) == "16 GB"
    assert rl.format_bytes(16 * 2**30, binary=True) == "16 GiB"
    assert rl.format_bytes(16 * 2**30) == "17.2 GB"  # GiB is 7.4% more than GB
    assert rl.format_flops(1e12) == "1 TFLOPs"  # a count, not a rate


@pytest.mark.parametrize(
    "text, value, kind",
    [
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
    ],
)
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
    for fmt, kind in (
        (rl.format_time, "time"),
        (rl.format_flops_rate, "rate"),
        (rl.format_bandwidth, "bandwidth"),
    ):
        parsed, parsed_kind = parse_quantity(fmt(value).replace("µ", "u"))
        assert parsed_kind == kind
        assert math.isclose(parsed, value, rel_tol=5e-3)


def test_format_rejects_non_numbers():
    with pytest.raises(TypeError, match="plain number"):
        rl.format_time("1 ms")


# ---------------------------------------------------------------- what students type
@pytest.mark.parametrize(
    "text, value, kind",
    [
        ("1/6", 1 / 6, None),  # a fraction, as the chapter prints it
        ("2*989e12", 1.978e15, None),  # arithmetic
        ("(1 + 2) * 3 - 4 / 2", 7.0, None),
        ("2^10", 1024.0, None),
        ("2**10", 1024.0, None),
        ("-3", -3.0, None),
        ("1.5x10^12 FLOP/s", 1.5e12, "rate"),
        ("1.5×10^12 FLOP/s", 1.5e12, "rate"),
        ("989.5 teraFLOPS", 989.5e12, "rate"),
        ("3 Tflop/s", 3e12, "rate"),
        ("481 OPs/B", 481.0, "intensity"),
        ("481 OPs per byte", 481.0, "intensity"),
        ("4378 flops/byte", 4378.0, "intensity"),
        ("300 FLOPs per byte", 300.0, "intensity"),
        ("25 GB/sec", 25e9, "bandwidth"),
        ("25 GBps", 25e9, "bandwidth"),
        ("25 gigabytes per second", 25e9, "bandwidth"),
        ("1 GiB/s", 2.0**30, "bandwidth"),
        ("34.4 gigabytes", 34.4e9, "size"),
        ("32 gibibytes", 32 * 2.0**30, "size"),
        ("2 millisecond", 2e-3, "time"),
        ("2 milliseconds", 2e-3, "time"),
        ("3 sec", 3.0, "time"),
        ("1.01 ms.", 1.01e-3, "time"),
        ("1.01 µs", 1.01e-6, "time"),
        ("1.01 μs", 1.01e-6, "time"),
        ("1,000 ns", 1e-6, "time"),
        ("12,345.5", 12345.5, None),
        ("74%", 0.74, None),
        ("2e12 FLOPs", 2e12, "count"),
        ("1 TFLOPs", 1e12, "count"),
        ("20 TOPS", 20e12, "rate"),
        ("inf", math.inf, None),
    ],
)
def test_parse_quantity_reads_what_students_type(text, value, kind):
    parsed, parsed_kind = parse_quantity(text)
    assert parsed == pytest.approx(value, rel=1e-12) and parsed_kind == kind


@pytest.mark.parametrize(
    "bad, says",
    [
        ("1,01 ms", "write 1.01, not 1,01"),
        ("0,5", "write 0.5, not 0,5"),
        ("1,0000", "write 1.0000, not 1,0000"),
        ("1/0", "divides by zero"),
        ("(-8)^0.5", "root of a negative number"),
        ("5 Gbps", "a lower-case b is a bit"),
        ("1 GiFLOP/s", "unknown unit"),
        ("(1 + 2", "write it like"),
        ("ms", "write it like"),
    ],
)
def test_parse_quantity_refuses_with_a_reason(bad, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        parse_quantity(bad)


def test_the_grammar_is_plain_data_the_page_can_read():
    import json

    from roofline.units import GRAMMAR

    assert json.loads(json.dumps(GRAMMAR)) == GRAMMAR


@pytest.mark.parametrize(
    "text,value",
    [
        ("~306", 306.0),
        ("about 1.01 ms", 1.01e-3),
        ("approx. 3.35 TB/s", 3.35e12),
        ("\u2248 16 GB", 16e9),
        ("Roughly 2*989.5e12", 1979e12),
    ],
)
def test_an_estimate_marker_before_the_number_is_read_past(text, value):
    assert rl.parse_quantity(text)[0] == pytest.approx(value)


def test_a_marker_alone_is_still_not_a_number():
    with pytest.raises(ValueError, match="could not read"):
        rl.parse_quantity("about")
