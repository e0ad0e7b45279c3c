"""The grader and the notebook's own check agree on every answer type (issue 34, section 1).

A notebook's `homework.check(...)` reads a Fraction, a Decimal or any object whose type has
`__float__` as float(answer); the grader sees only what the probe (inside the kernel) encodes
as JSON and recomputes the verdict from that. Both paths run here over ONE list of answers:
a difference is a wrong grade that nobody sees (11 in the class of issue 34)."""

import json
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy

from roofline.exercises import core, homework
from roofline.exercises.grader import probe, report

SID = "s1"


class Quantity:
    """A student's own number type: only `__float__`."""

    def __init__(self, value):
        self.value = value

    def __float__(self):
        return float(self.value)


class BrokenFloat:
    def __float__(self):
        raise ValueError("no")


class OnlyIndex:
    """float() would accept it (via __index__) but the notebook's check does not."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return int(self.value)


def _answers_for(value: float) -> dict:
    """The same right `value` (a float the book computed) written in every type we know."""
    return {
        "float": value,
        "Fraction": Fraction(value),  # exact: a float is a binary fraction
        "Fraction near": Fraction(value).limit_denominator(10**6),
        "Decimal": Decimal(repr(value)),
        "Decimal exact": Decimal(value),
        "__float__": Quantity(value),
        "numpy float64": np.float64(value),
        "numpy float32": np.float32(value),
        "numpy 1-array": np.array([value]),
        "sympy Float": sympy.Float(value),
        "sympy Rational": sympy.Rational(Fraction(value)),
        "text": repr(value),
        "twice (wrong)": Fraction(value) * 2,
        "Decimal twice (wrong)": Decimal(repr(value)) * 2,
        "__float__ twice (wrong)": Quantity(2 * value),
        "__float__ raises": BrokenFloat(),
        "__index__ only": OnlyIndex(value),
        "bool": True,
        "list": [value],
        "None": None,
    }


def _notebook(set_id, q, answer) -> bool:
    return bool(homework.check(SID, set_id, q, answer).correct)


def _grader(set_id, q, answer) -> bool:
    encoded = json.loads(json.dumps(probe.encode(answer)))  # as the report travels
    _submitted, correct, _feedback = report._verdict(SID, set_id, q, {q: encoded})
    return correct == "yes"


NUMERIC = [
    (s, q)
    for s in homework.sets()
    for q in homework.questions(s)
    if core.get_exercise(homework.exercise_id(s, q)).kind not in ("choice", "symbolic", "parts")
]


@pytest.mark.parametrize("set_id, q", NUMERIC)
def test_grader_agrees_with_the_notebook_on_every_answer_type(set_id, q):
    params = homework.parameters(set_id, SID, quiet=True)
    value = float(core.get_exercise(homework.exercise_id(set_id, q)).answer(params))
    answers = _answers_for(value)
    verdicts = {
        name: (_notebook(set_id, q, a), _grader(set_id, q, a)) for name, a in answers.items()
    }
    disagree = {name: v for name, v in verdicts.items() if v[0] != v[1]}
    assert not disagree, f"(notebook, grader) differ for {disagree}"
    # Canaries: the right value is right in every numeric type, the doubled one wrong.
    for name in ("float", "Fraction", "Decimal", "Decimal exact", "__float__", "sympy Rational"):
        assert verdicts[name] == (True, True), name
    for name in ("twice (wrong)", "Decimal twice (wrong)", "__float__ twice (wrong)"):
        assert verdicts[name] == (False, False), name
    for name in ("__float__ raises", "__index__ only", "bool", "list", "None"):
        assert verdicts[name] == (False, False), name


def test_a_fraction_is_sent_as_the_float_the_notebook_reads():
    # 1/3 as the notebook reads it: float(Fraction(1, 3)) = 0.3333333333333333 (repr, 16 digits)
    assert probe.encode(Fraction(1, 3)) == {"type": "float", "value": "0.3333333333333333"}
    assert probe.encode(Decimal("2.5")) == {"type": "float", "value": "2.5"}
    assert probe.encode(Quantity(7)) == {"type": "float", "value": "7.0"}
    assert probe.encode(BrokenFloat())["type"] == "other"
    assert probe.encode(OnlyIndex(3))["type"] == "other"
