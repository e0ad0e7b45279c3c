"""Readable notebook displays (issue 14): Chip, Cost and ShardedMatmul show a short summary
with units as text (repr) and as an HTML table; rl.book.expect_error shows an error's message.

Expected strings are worked out by hand from the figures named in each test."""

import pytest
import sympy

import roofline as rl
from roofline.display import Summary, quantity


def test_cost_of_a_cube_matmul_reads_with_units():
    # 2 * 8192^3 = 1.0995e12 FLOPs; 3 matrices of 8192^2 bf16 elements = 6 * 8192^2 = 4.027e8 B;
    # intensity 2 * 8192^3 / (6 * 8192^2) = 8192 / 3 = 2730.7 FLOPs/B
    cost = rl.matmul(8192, 8192, 8192)
    text = repr(cost)
    assert text.splitlines()[0] == "Cost of matmul (bf16 math on the matrix units)"
    assert repr(rl.dot(1000)).splitlines()[0] == "Cost of dot (bf16 math on the vector units)"
    assert "1.1 TFLOPs" in text and "403 MB" in text and "2731 FLOPs/B" in text
    assert str(cost) == text
    page = cost._repr_html_()
    assert page.startswith("<table") and "403 MB" in page and "2731 FLOPs/B" in page


def test_symbolic_and_array_costs_show_formulas_and_ranges():
    B = sympy.Symbol("B", positive=True)
    text = repr(rl.matmul(B, 8192, 8192))
    assert "134217728*B" in text  # 2 * 8192 * 8192 = 134,217,728 FLOPs per row of X
    import numpy as np

    many = repr(rl.matmul(np.array([1, 2, 4, 8, 16]), 8192, 8192))
    # FLOPs from 2 * 8192^2 = 134 MFLOPs (B = 1) to 16 times that, 2.15 GFLOPs
    assert "134 MFLOPs to 2.15 GFLOPs (5 values)" in many


def test_chip_summary_is_short_and_has_its_figures():
    chip = rl.get_chip("TPU v5e")  # catalog: 197 TFLOP/s bf16, 16 GB HBM at 819 GB/s
    text = repr(chip)
    assert text.splitlines()[0] == "Chip TPU v5e"
    assert "197 TFLOP/s dense" in text and "16 GB at 819 GB/s" in text
    assert "240.5 FLOPs/B" in text  # 197e12 / 819e9 = 240.54
    assert str(chip) == "TPU v5e"  # str stays the name (f-strings in the chapters rely on it)
    for name in rl.list_chips():  # the issue: a 2,635-character dump before
        assert len(repr(rl.get_chip(name))) < 1200
        assert "<table" in rl.get_chip(name)._repr_html_()
    assert "2:4 sparse" in repr(rl.get_chip("H100 SXM"))


def test_sharded_matmul_summary():
    # n = 4 over D: per chip 2 * 8192^3 / 4 = 2.75e11 FLOPs; a partial sum Y is 8192^2 * 2 B
    # = 134 MB; a one-way ring all-reduce sends 2 * 3/4 of it = 201 MB per link direction
    text = repr(rl.sharded_matmul(8192, 8192, 8192, n=4))
    assert "275 GFLOPs" in text and "partial sum (all-reduced)      134 MB" in text
    assert "sent per link, one way (ring)  201 MB" in text
    assert "1.1 TFLOPs" in text  # all four chips together: the whole matmul


def test_summary_html_escapes_and_quantity_falls_back():
    page = Summary("<b>x</b>", [("a&b", "<script>")]).html()
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;" in page
    assert quantity("not a number", rl.format_time) == "not a number"
    assert quantity(sympy.Integer(1000), rl.format_bytes) == "1 kB"


def test_expect_error_shows_the_message_and_goes_on(capsys):
    with rl.book.expect_error() as caught:
        rl.get_chip("H10")
    out = capsys.readouterr().out
    assert out.startswith("ValueError: unknown chip 'H10'") and "Traceback" not in out
    assert isinstance(caught.error, ValueError)
    with rl.book.expect_error():
        {}["missing"]  # KeyError's str() would add quotes around the message
    assert capsys.readouterr().out == "KeyError: missing\n"


def test_expect_error_refuses_a_block_that_does_not_fail():
    with pytest.raises(AssertionError, match="raised no error"):
        with rl.book.expect_error():
            rl.get_chip("H100")


def test_expect_error_lets_other_kinds_through():
    with pytest.raises(ZeroDivisionError):
        with rl.book.expect_error(ValueError):
            _ = 1 / 0


def test_estimate_summary_lists_each_resource_and_the_bound():
    # H100 SXM: bf16 matrix peak 989.5 TFLOP/s, HBM3 at 3.35 TB/s. An 8192-cube matmul:
    # math 1.0995e12 / 989.5e12 = 1.111 ms; memory 4.027e8 B / 3.35e12 = 120 µs;
    # lower bound 1.11 ms, upper 1.111 + 0.120 = 1.23 ms; compute-bound
    est = rl.estimate(rl.matmul(8192, 8192, 8192), "H100 SXM")
    text = repr(est)
    assert text.splitlines()[0] == "Estimate: matmul on H100 SXM (bf16)"
    assert "1.11 ms (1.1 TFLOPs at 989.5 TFLOP/s)" in text  # 989.5 to 3 digits, half to even
    assert "120 µs (403 MB at 3.35 TB/s)" in text
    assert (
        "lower bound (overlap)     1.11 ms" in text and "upper bound (no overlap)  1.23 ms" in text
    )
    assert "compute-bound (math takes longest)" in text
    assert "<table" in est._repr_html_() and "1.23 ms" in est._repr_html_()
    B = sympy.Symbol("B", positive=True)
    symbolic = repr(rl.estimate(rl.matmul(B, 8192, 8192), "H100 SXM"))
    # 2 * 8192^2 / 989.5e12 = 1.356e-7 s per row of X
    assert "1.36e-7*B (134217728*B at 989.5 TFLOP/s)" in symbolic
    assert "depends on the symbols' values" in symbolic


def test_sharded_estimate_summary_has_a_link_row():
    text = repr(rl.sharded_estimate(8192, 8192, 8192, "TPU v5e", n=4))
    link_rows = [line for line in text.splitlines() if "(link)" in line]
    assert len(link_rows) == 1 and "-bound" in text.splitlines()[-1]
