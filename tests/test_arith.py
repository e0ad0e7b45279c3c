"""The one arithmetic grammar (roofline.arith) that reads numbers before units and formulas."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline import arith


def value(text, **names):
    toks = arith.tokens(text, names, ["sqrt"], implicit=True)
    return arith.evaluate(arith.parse(toks, ["sqrt"]), names)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1+2*3", 7.0),  # * before +
        ("(1+2)*3", 9.0),
        ("2^3^2", 2.0**9),  # ^ is right-associative: 2^(3^2)
        ("-2^2", -4.0),  # unary minus binds looser than ^, as in Python
        ("2^-1", 0.5),
        ("8/4/2", 1.0),  # / is left-associative
        ("1.5e3 - .5", 1499.5),
        ("sqrt(16)", 4.0),
        ("2B", 6.0),  # a product written side by side (B = 3)
        ("2(B+1)", 8.0),
        ("(B)(B)", 9.0),
    ],
)
def test_values_worked_by_hand(text, expected):
    assert value(text, B=3.0) == pytest.approx(expected)


@pytest.mark.parametrize(
    "text, reason",
    [("1/0", "zero"), ("0^-1", "zero"), ("(-8)^0.5", "root"), ("sqrt(-1)", "root")],
)
def test_strict_evaluation_names_the_problem(text, reason):
    with pytest.raises(arith.ArithError) as error:
        value(text)
    assert error.value.reason == reason


def test_lenient_evaluation_gives_inf_and_nan():
    assert arith.evaluate(arith.parse(arith.tokens("1/0")), strict=False) == math.inf
    assert math.isnan(arith.evaluate(arith.parse(arith.tokens("(-8)^0.5")), strict=False))
    assert arith.evaluate(arith.parse(arith.tokens("10^400"))) == math.inf


@pytest.mark.parametrize("text", ["", "(", "1+", "(1", "1)", "*2", "2 3", "sqrt 2"])
def test_syntax_errors(text):
    with pytest.raises(arith.ArithError) as error:
        arith.parse(arith.tokens(text, functions=["sqrt"]), ["sqrt"])
    assert error.value.reason == "syntax"


def test_unknown_words_are_named():
    with pytest.raises(arith.ArithError) as error:
        arith.tokens("2*B*Q", ["B", "D"])
    assert (error.value.reason, error.value.run) == ("name", "Q")
    with pytest.raises(arith.ArithError) as error:
        arith.tokens("2*x")
    assert error.value.reason == "number"


def test_longest_name_first():
    assert arith.tokens("BD", ["B", "D", "BD"]) == [["name", "BD"]]


# Random expressions over small integers: Python's own arithmetic is the reference.
_leaf = st.integers(min_value=0, max_value=9).map(str)


def _combine(children):
    binary = st.tuples(children, st.sampled_from("+-*"), children).map(
        lambda t: f"({t[0]}{t[1]}{t[2]})"
    )
    return binary | children.map(lambda c: f"-{c}")


@settings(max_examples=300)
@given(st.recursive(_leaf, _combine, max_leaves=12))
def test_random_expressions_match_python(text):
    assert arith.evaluate(arith.parse(arith.tokens(text))) == float(eval(text))  # noqa: S307
