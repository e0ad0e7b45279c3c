"""The formula checker's budget is counted, never timed (issue 34, section 1; issue 36).

A 5-second SIGALRM timer once decided whether a formula was "too slow to check": under load it
fired, and the same answer got another verdict. Now a formula is compared when it is within a
budget of powers, expanded terms and sympy operations, else it is wrong with a reason; nothing
consults a clock, which `test_no_clock_is_consulted` enforces by making every clock raise."""

import signal
import time

import pytest
import sympy

from roofline.exercises import core, homework

B = sympy.Symbol("B", positive=True)


def _formula_exercise():
    """(set, question) of the homework's formula question, and its exercise."""
    for set_id in homework.sets():
        for q in homework.questions(set_id):
            exercise = core.get_exercise(homework.exercise_id(set_id, q))
            if exercise.kind == "symbolic":
                return set_id, q, exercise
    pytest.skip("no homework formula question")


def test_power_budget_by_hand():
    assert core.FORMULA_POWER_CAP == 32
    assert core.formula_budget_problem(B**32) is None
    assert "power past 32" in core.formula_budget_problem(B**33)
    assert core.formula_budget_problem(sympy.root(B, 32)) is None  # B^(1/32)
    assert "power past 32" in core.formula_budget_problem(sympy.root(B, 33))
    assert "plain numbers" in core.formula_budget_problem(B ** sympy.Symbol("D", positive=True))


def _sum_of_squares(k: int):
    """(B+1)^2 + ... + (B+k)^2, kept unexpanded by sympy: each term is one Add (B+i) and one
    Pow, 2 operations; k terms need k-1 more Adds: 3k - 1 operations in all. Multiplied out
    each square has C(2+2-1, 2) = 3 terms: 3k terms, under the 400 cap for k <= 133."""
    return sympy.Add(*[(B + i) ** 2 for i in range(1, k + 1)])


def test_operation_budget_by_hand():
    assert core.FORMULA_OPS_CAP == 200
    assert sympy.count_ops(_sum_of_squares(67)) == 3 * 67 - 1 == 200
    assert core.formula_budget_problem(_sum_of_squares(67)) is None
    problem = core.formula_budget_problem(_sum_of_squares(68))  # 3 * 68 - 1 = 203 operations
    assert problem is not None and "203 operations" in problem


def test_terms_budget_by_hand():
    D, F, n = sympy.symbols("D F n", positive=True)
    # (B+D+F+n+1)^4: C(5+4-1, 4) = 70 terms, (...)^8: C(12, 8) = 495 > 400
    assert core.formula_budget_problem((B + D + F + n + 1) ** 4) is None
    assert "400 terms" in core.formula_budget_problem((B + D + F + n + 1) ** 8)


def _verdicts(set_id, q, exercise):
    symbols = exercise.symbols
    answer = str(exercise.answer(homework.parameters(set_id, "s1", quiet=True)))
    answers = {
        "right": answer,
        "right, rewritten": f"({answer})*{symbols[0]}^32/{symbols[0]}^32",
        "twice": f"2*({answer})",
        "too many terms": "(" + "+".join(symbols) + "+1)^32",
        "too high a power": f"{symbols[0]}^33",
        "many operations": "+".join(f"({symbols[0]}+{i})^2" for i in range(1, 80)),
    }
    return {k: bool(homework.check("s1", set_id, q, v).correct) for k, v in answers.items()}


def test_no_clock_is_consulted(monkeypatch):
    set_id, q, exercise = _formula_exercise()
    canary = _verdicts(set_id, q, exercise)
    assert canary == {
        "right": True,
        "right, rewritten": True,
        "twice": False,
        "too many terms": False,
        "too high a power": False,
        "many operations": False,
    }

    def clock(*args, **kwargs):
        raise AssertionError("the formula checker consulted a clock or a timer")

    for name in ("time", "monotonic", "perf_counter", "process_time", "thread_time"):
        for suffix in ("", "_ns"):
            if hasattr(time, name + suffix):
                monkeypatch.setattr(time, name + suffix, clock)
    for name in ("alarm", "setitimer", "signal"):
        monkeypatch.setattr(signal, name, clock)
    sympy.core.cache.clear_cache()  # compare afresh, not from sympy's cache
    assert _verdicts(set_id, q, exercise) == canary
