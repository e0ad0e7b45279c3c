"""The checker: `check_answer` reads an answer by its exercise's kind and gives the verdict
(numeric, choice, answers in parts; formulas in `formulas`), naming the mistake that explains a
wrong answer. Each verdict is mirrored step by step in the answer boxes' script.

Part of the checker (`roofline.exercises.core` names every module and re-exports them).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..units import parse_quantity_details
from .feedback import Feedback
from .formulas import _check_symbolic, formula_right_message
from .mistakes import (
    ACCEPTED,
    ADD_UNIT_EXAMPLES,
    ADD_UNIT_MESSAGE,
    BASE_UNIT_NAMES,
    CHOICE_NEUTRAL,
    KIND_WORDS,
    NO_UNIT_FITS_MESSAGE,
    REGIME_REASONS,
    UNIT_PREFIX_FACTORS,
    _close,
    _show,
    accepts,
    ratio_text,
    tolerance_text,
)
from .reading import (
    _as_details,
    _safe_str,
    _split_parts,
    _unanswered,
    _Unreadable,
    comma_reading,
    normalise_choice,
)

if TYPE_CHECKING:  # annotations only: no import at run time
    from .exercise import Exercise


def check_answer(exercise: Exercise, answer, params: dict) -> Feedback:
    """Compare `answer` with the exercise's expected value; diagnose typical mistakes."""
    answered = not _unanswered(answer)
    try:
        if exercise.kind == "symbolic":
            result = _check_symbolic(exercise, answer, params)
        elif exercise.kind == "parts":
            result = _check_parts(exercise, answer, params)
        elif exercise.kind == "choice":
            result = _check_choice(exercise, answer, params)
        else:
            result = _check_numeric(exercise, answer, params)
    except _Unreadable as problem:
        result = Feedback(exercise.id, False, str(problem), hints=exercise.hints)
    except Exception as error:  # the checker must never crash on a student's input
        result = Feedback(
            exercise.id,
            False,
            f"Could not check that answer ({type(error).__name__}: {_safe_str(error, 200)}).",
            hints=exercise.hints,
        )
    if answered:
        return result
    return Feedback(
        result.exercise_id,
        result.correct,
        result.message,
        result.diagnosis,
        result.hints,
        answered=False,
        exercise=exercise,
        params=dict(params),
    )


def correct_message(exercise: Exercise, expected) -> str:
    if exercise.kind == "choice":
        return f"{expected} is right."
    if exercise.kind == "symbolic":
        return formula_right_message(exercise, expected)
    if math.isinf(float(expected)):
        return "Right: there is no finite value."
    wanted = None if exercise.kind == "number" else exercise.kind
    return (
        f"{_show(float(expected), wanted)} is right (within {tolerance_text(exercise.tolerance)})."
    )


def _echo(exercise, details, params):
    """The given quantity the answer only repeats (same number, same unit), or None."""
    if not details.get("text"):
        return None
    for text in exercise.given_quantities(**params):
        try:
            given = parse_quantity_details(text)
        except ValueError:
            continue
        if (
            given["kind"] == details["kind"]
            and given["factor"] == details["factor"]
            and _close(details["number"], given["number"], 1e-9)
        ):
            return text
    return None


def numeric_verdict(exercise, details, expected, params, mistakes) -> tuple:
    """(correct, message, diagnosis) for a parsed numeric answer; mirrored in the page's
    script step by step. `mistakes`: the exercise's mistake_table. A wrong answer typed
    with one thousands comma ('1,011 ms') is told how the comma was read."""
    verdict = _numeric_verdict(exercise, details, expected, params, mistakes)
    comma = comma_reading(details) if not verdict[0] else None
    if comma is None:
        return verdict
    typed, read, dotted, value = comma
    if math.isfinite(value) and accepts(value, expected, exercise.tolerance):
        return (
            False,
            f"{typed} is read as {read}: a comma separates thousands, as in 1,000. "
            f"For the decimal {dotted}, write a point.",
            "decimal comma",
        )
    note = f" (Note: {typed} is read as {read}, a comma separating thousands.)"
    return False, verdict[1] + note, verdict[2]


def _numeric_verdict(exercise, details, expected, params, mistakes) -> tuple:
    value, unit_kind = details["value"], details["kind"]
    wanted = None if exercise.kind == "number" else exercise.kind
    if unit_kind == "count_or_rate":  # "Tflops": whichever of the two the question asks for
        unit_kind = wanted if wanted in ("count", "rate") else "count"
    if unit_kind is not None and wanted is not None and unit_kind != wanted:
        return (
            False,
            f"That is {KIND_WORDS[unit_kind]}, but the question asks for {KIND_WORDS[wanted]}.",
            "wrong unit kind",
        )
    if unit_kind is not None and wanted is None and unit_kind != "intensity":
        return (
            False,
            f"That is {KIND_WORDS[unit_kind]}, but the question asks for a plain number.",
            "wrong unit kind",
        )
    if math.isnan(value):
        return False, "That is NaN (not a number): check for 0/0 or inf - inf.", None
    if math.isinf(value):
        if math.isinf(expected) and (value > 0) == (expected > 0):
            return True, correct_message(exercise, expected), None
        return (
            False,
            "That is infinite; the answer is a finite number. Did you divide by zero?",
            None,
        )
    if math.isinf(expected):
        return (
            False,
            "There is no finite answer here: no batch size is large enough (enter "
            "inf, or float('inf')).",
            None,
        )
    echoed = _echo(exercise, details, params)
    if echoed is not None:
        return (
            False,
            f"That repeats the figure the question gives ({echoed}); the question "
            "asks you to work from it to a new figure.",
            "echo",
        )
    if accepts(value, expected, exercise.tolerance):
        return True, correct_message(exercise, expected), None
    if value < 0 <= expected:
        return False, "That is negative; the answer is a positive quantity.", "sign"
    if unrounded(exercise, value, expected):
        return False, exercise.unrounded_message(), "rounding"
    # A bare number is read in base units; for a count (FLOPs) that is the unit meant.
    bare = unit_kind is None and wanted not in (None, "intensity", "count")
    if unit_kind is None and wanted == "count":
        verdict = _bare_count_verdict(details, expected, exercise.tolerance)
        if verdict is not None:
            return verdict
    for mistake in mistakes:
        if bare and mistake.tag == "prefix":
            continue
        if mistake.tag == "percent" and details.get("factor") == 0.01:
            continue  # typed with "%": the sign was there
        if _close(value, float(mistake.value), exercise.tolerance):
            return mistake.tag == ACCEPTED, mistake.message, mistake.message
    if bare and value != 0 and wanted is not None:  # bare already implies a unit is wanted
        # "add a unit" only where some unit would make the number right (33.4 for 33.4 ms);
        # otherwise the number itself is wrong, and the message says so
        fits = any(accepts(value * f, expected, exercise.tolerance) for f in UNIT_PREFIX_FACTORS)
        message = ADD_UNIT_MESSAGE if fits else NO_UNIT_FITS_MESSAGE
        return (
            False,
            message.format(base=BASE_UNIT_NAMES[wanted], example=ADD_UNIT_EXAMPLES[wanted]),
            "add a unit" if fits else None,
        )
    if value == 0:
        return False, "That is zero; the answer is not.", None
    return False, _how_far(exercise, value / expected), None


def unrounded(exercise, value: float, expected: float) -> bool:
    """True for a fraction that rounds to the whole-number answer the way the exercise says
    (116.4 where 116 sequences fit, rounding down): the answer was not rounded."""
    if not exercise.rounding or not float(expected).is_integer() or float(value).is_integer():
        return False
    way = exercise.rounding[0]
    return (math.floor(value) if way == "down" else math.ceil(value)) == expected


def _how_far(exercise, ratio: float) -> str:
    """How far off an undiagnosed answer is: a coarse bucket for homework, else the ratio."""
    if exercise.homework:
        far = _bucket(ratio)
    elif ratio > 1:
        far = f"about {ratio_text(ratio)} times too large"
    else:
        far = f"about {ratio_text(1 / ratio)} times too small"
    return f"Not within {tolerance_text(exercise.tolerance)} of the answer: yours is {far}."


#: SI prefixes a count may have been meant with, and their factors.
COUNT_PREFIXES = (("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12), ("P", 1e15))


def _bare_count_verdict(details, expected: float, tolerance: float) -> tuple | None:
    """For a bare number where a count of FLOPs is asked ('989' for 9.895e11 FLOPs): the
    number is read as FLOPs; say which prefix would make it right, if one does."""
    value = details["value"]
    prefix = _missing_prefix(value, expected, tolerance)
    if prefix is None:
        return None
    shown = (details.get("raw") or "").strip() or f"{value:.4g}"
    return (
        False,
        f"A number alone counts FLOPs one by one, so {shown} is {shown} FLOPs. If you "
        f"mean {shown} {prefix}FLOPs, write the prefix ('{shown} {prefix}FLOPs') or the "
        "whole number.",
        "count prefix",
    )


def _missing_prefix(value: float, expected: float, tolerance: float) -> str | None:
    """The SI prefix that would make a bare count right (989 for 9.895e11 FLOPs -> 'G')."""
    for prefix, factor in COUNT_PREFIXES:
        if value > 0 and accepts(value * factor, expected, tolerance):
            return prefix
    return None


def _bucket(ratio: float) -> str:
    """How far off, coarsely (homework: no ratio a student could back the answer out of)."""
    size = ratio if ratio > 1 else 1 / ratio
    side = "too large" if ratio > 1 else "too small"
    if size < 1.5:
        return f"{side}, but by less than 50%"
    if size < 10:
        return f"{side}, by a factor between 1.5 and 10"
    return f"{side}, by more than a factor of 10"


def _check_numeric(exercise, answer, params) -> Feedback:
    details = _as_details(answer, nouns=exercise.kind == "number")
    expected = float(exercise.answer(params))
    correct, message, diagnosis = numeric_verdict(
        exercise, details, expected, params, exercise.mistake_table(**params)
    )
    return Feedback(
        exercise.id, correct, message, diagnosis=diagnosis, hints=() if correct else exercise.hints
    )


def _check_choice(exercise, answer, params) -> Feedback:
    listed = ", ".join(repr(c) for c in exercise.choices)
    if _unanswered(answer):
        raise _Unreadable(f"No answer yet: type one of {listed}.")
    if not isinstance(answer, str):
        raise _Unreadable(f"Answer with one of {listed} (as text, in quotes).")
    correct, message, diagnosis = choice_verdict(exercise, answer, params)
    return Feedback(
        exercise.id, correct, message, diagnosis=diagnosis, hints=() if correct else exercise.hints
    )


def wrong_choice_messages(exercise, params) -> dict:
    """{normalised choice: message} for every wrong choice: the exercise's listed mistake,
    else its `choice_reasons`, else the regime's reason (`REGIME_REASONS`), else neutral."""
    expected = str(exercise.answer(params))
    extra = exercise.choice_words
    listed = {
        normalise_choice(str(m.value), extra): m.message
        for m in reversed(exercise.specific_mistakes(**params))
    }
    reasons = {normalise_choice(c, extra): m for c, m in exercise.choice_reasons.items()}
    messages = {}
    for choice in exercise.choices:
        key = normalise_choice(choice, extra)
        if choice == expected or key in messages:
            continue
        template = REGIME_REASONS.get(key, CHOICE_NEUTRAL)
        messages[key] = listed.get(key) or reasons.get(key) or template.format(choice=choice)
    return messages


def choice_verdict(exercise, answer: str, params) -> tuple:
    """(correct, message, diagnosis) of a typed choice; mirrored in the page's script."""
    expected = str(exercise.answer(params))
    listed = ", ".join(repr(c) for c in exercise.choices)
    extra = exercise.choice_words
    options = {normalise_choice(c, extra): c for c in exercise.choices}
    text = normalise_choice(answer[:200], extra)
    if text not in options:
        raise _Unreadable(f"{_safe_str(answer, 40)!r} is not one of the choices: {listed}.")
    if options[text] == expected:
        return True, correct_message(exercise, expected), None
    message = wrong_choice_messages(exercise, params)[text]
    return False, message, message


def _check_parts(exercise, answer, params) -> Feedback:
    if _unanswered(answer):
        raise _Unreadable(
            f"No answer yet: give {len(exercise.parts)} answers separated by ';' ("
            + "; ".join(p.label() for p in exercise.parts)
            + ")."
        )
    pieces = _split_parts(exercise, answer)
    results = [
        check_answer(part, piece, dict(params)) for part, piece in zip(exercise.parts, pieces)
    ]
    return Feedback(
        exercise.id,
        all(r.correct for r in results),
        parts_message([(r.correct, r.message) for r in results], exercise.parts),
        diagnosis=next((r.diagnosis for r in results if r.diagnosis), None),
        hints=() if all(r.correct for r in results) else exercise.hints,
    )


def parts_message(verdicts, parts) -> str:
    """One line per part: "(1) the time: right - ... (2) the regime: not yet - ..."."""
    return " ".join(
        f"({i}) {part.label()}: {'right' if ok else 'not yet'} - {message}"
        for i, ((ok, message), part) in enumerate(zip(verdicts, parts), start=1)
    )
