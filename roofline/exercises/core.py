"""Self-checking exercises: an answer computed by `roofline`, a tolerance, hints,
and a table of typical mistakes that says what a wrong answer looks like.

The same `mistake_table` drives the checker in a kernel (`check`) and the answer
boxes on the static web page, so both give the same diagnosis.
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass, field
from typing import Callable

from ..units import format_si, parse_quantity

__all__ = ["Exercise", "Mistake", "Feedback", "register", "get_exercise", "list_exercises",
           "check", "UNIT_FOR_KIND"]

#: How each kind of answer is written, for messages and formatting.
UNIT_FOR_KIND = {
    "time": "s", "rate": "FLOP/s", "bandwidth": "B/s", "size": "B",
    "count": "FLOPs", "intensity": "FLOPs/B",
}
_KIND_WORDS = {
    "time": "a time (e.g. '1.01 ms')", "rate": "a rate in FLOP/s (e.g. '989 TFLOP/s')",
    "bandwidth": "a bandwidth in B/s (e.g. '3.35 TB/s')", "size": "a size in bytes (e.g. '16 GB')",
    "count": "a count of FLOPs (e.g. '2e12 FLOPs')", "intensity": "an intensity in FLOPs/B",
    None: "a plain number",
}


@dataclass(frozen=True)
class Mistake:
    """A wrong answer students typically give, and what to tell them when they do."""

    value: object
    message: str


@dataclass(frozen=True)
class Exercise:
    """One exercise. `answer(params)` computes the expected value with `roofline`.

    kind: "number" (a plain number: a batch size, a ratio, an intensity given bare),
    one of UNIT_FOR_KIND's keys for a quantity that may carry a unit, "symbolic"
    for a sympy expression in `symbols`, or "choice" for one of `choices`.
    `mistakes(params)` lists exercise-specific wrong answers (e.g. the B << D
    approximation where the exact value was asked); generic ones (unit prefixes,
    factors of 2, reciprocals, GB vs GiB) are added for every numeric exercise.
    """

    id: str
    question: str
    answer: Callable[[dict], object]
    kind: str = "number"
    params: dict = field(default_factory=dict)
    tolerance: float = 0.02
    hints: tuple[str, ...] = ()
    mistakes: Callable[[dict], list] | None = None
    symbols: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    generic_mistakes: bool = True

    def __post_init__(self):
        valid = {"number", "symbolic", "choice", *UNIT_FOR_KIND}
        if self.kind not in valid:
            raise ValueError(f"exercise {self.id}: kind must be one of {sorted(valid)}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"exercise {self.id}: a choice exercise needs choices")

    # -- parameters and the expected answer
    def resolve(self, params: dict | None = None) -> dict:
        merged = dict(self.params)
        for key, value in (params or {}).items():
            if key not in merged:
                raise TypeError(f"exercise {self.id!r} has no parameter {key!r}; "
                                f"it takes {', '.join(merged) or 'none'}")
            merged[key] = value
        return merged

    def expected(self, **params):
        return self.answer(self.resolve(params))

    def mistake_table(self, **params) -> list[Mistake]:
        """Specific mistakes first, then the generic ones, for a numeric exercise."""
        resolved = self.resolve(params)
        table = list(self.mistakes(resolved)) if self.mistakes else []
        if self.kind in ("symbolic", "choice") or not self.generic_mistakes:
            return table
        expected = float(self.answer(resolved))
        if expected == 0 or not math.isfinite(expected):
            return table
        generic = [
            (1e3, "It is 1000 times too large: a unit prefix slipped (ms vs s, GB vs TB, TFLOP/s vs GFLOP/s)?"),
            (1e-3, "It is 1000 times too small: a unit prefix slipped (ms vs s, GB vs TB, TFLOP/s vs PFLOP/s)?"),
            (1e6, "It is a million times too large: a unit prefix slipped twice (µs vs s, MB vs TB)?"),
            (1e-6, "It is a million times too small: a unit prefix slipped twice (s vs µs, TB vs MB)?"),
            (1e9, "It is 10^9 times too large: GB or ns where bytes or seconds were meant?"),
            (1e-9, "It is 10^9 times too small: bytes or seconds where GB or ns were meant?"),
            (2.0, "It is twice the answer: off by a factor of 2 - a sparse peak where the dense one "
                  "belongs (or the reverse), bytes per element (bf16 is 2 bytes), or a "
                  "bidirectional bandwidth where the one-way figure belongs (or the reverse)?"),
            (0.5, "It is half the answer: off by a factor of 2 - a sparse peak where the dense one "
                  "belongs (or the reverse), bytes per element (bf16 is 2 bytes), or a "
                  "bidirectional bandwidth where the one-way figure belongs (or the reverse)?"),
            (2.0**30 / 1e9, "It is off by 7.4%: GiB (2^30 bytes) mixed with GB (10^9 bytes)?"),
            (1e9 / 2.0**30, "It is off by 7.4%: GB (10^9 bytes) mixed with GiB (2^30 bytes)?"),
        ]
        table += [Mistake(expected * factor, message) for factor, message in generic]
        if abs(expected) != 1:
            table.append(Mistake(1 / expected, "That is the reciprocal of the answer: the ratio is "
                                               "inverted (FLOPs per byte, not bytes per FLOP?)"))
        return table

    def check(self, answer, **params) -> "Feedback":
        return check_answer(self, answer, self.resolve(params))


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer. Renders as HTML in Jupyter/Colab and as text elsewhere."""

    exercise_id: str
    correct: bool
    message: str
    diagnosis: str | None = None
    hints: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        mark = "Correct" if self.correct else "Not yet"
        lines = [f"[{self.exercise_id}] {mark}: {self.message}"]
        if not self.correct and self.hints:
            lines.append("Hint: " + self.hints[0])
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        import html
        colour, border, mark = (("#e8f5e9", "#009E73", "✔ Correct") if self.correct
                                else ("#fff4e5", "#D55E00", "✘ Not yet"))
        hint = ""
        if not self.correct and self.hints:
            hint = f"<div><em>Hint:</em> {html.escape(self.hints[0])}</div>"
        return (f'<div class="roofline-feedback" role="status" style="background:{colour};'
                f'color:#111;border-left:4px solid {border};padding:0.5em 0.8em;margin:0.3em 0">'
                f"<strong>{mark}</strong> <code>{html.escape(self.exercise_id)}</code>: "
                f"{html.escape(self.message)}{hint}</div>")


# ---------------------------------------------------------------- the registry
_REGISTRY: dict[str, Exercise] = {}


def register(exercise: Exercise) -> Exercise:
    if exercise.id in _REGISTRY and _REGISTRY[exercise.id] is not exercise:
        raise ValueError(f"two exercises share the id {exercise.id!r}")
    _REGISTRY[exercise.id] = exercise
    return exercise


def get_exercise(exercise_id: str) -> Exercise:
    if isinstance(exercise_id, Exercise):
        return exercise_id
    if exercise_id not in _REGISTRY:
        import difflib
        close = difflib.get_close_matches(str(exercise_id), list(_REGISTRY), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no exercise {exercise_id!r}.{hint}")
    return _REGISTRY[exercise_id]


def list_exercises() -> list[str]:
    return list(_REGISTRY)


def check(exercise_id, answer, **params) -> Feedback:
    """Check `answer` to exercise `exercise_id` (with optional parameters); never raises
    on what a student types. Returns a Feedback (`.correct`, `.message`)."""
    try:
        exercise = get_exercise(exercise_id)
    except KeyError as error:
        return Feedback(str(exercise_id), False, str(error.args[0]))
    try:
        resolved = exercise.resolve(params)
    except TypeError as error:
        return Feedback(exercise.id, False, str(error))
    return check_answer(exercise, answer, resolved)


# ---------------------------------------------------------------- checking
class _Unreadable(Exception):
    pass


def _as_number(answer, kind):
    """(value in base units, unit kind or None) for a numeric answer; raises _Unreadable."""
    np = sys.modules.get("numpy")
    sympy = sys.modules.get("sympy")
    if answer is None:
        raise _Unreadable("No answer yet: replace None (or ...) with your number.")
    if answer is Ellipsis:
        raise _Unreadable("No answer yet: replace ... with your number.")
    if isinstance(answer, bool):
        raise _Unreadable("That is True/False; this question wants a number.")
    if np is not None and isinstance(answer, np.ndarray):
        if answer.size != 1:
            raise _Unreadable(f"That is an array of {answer.size} values; give one number.")
        answer = answer.reshape(()).item()
    if np is not None and isinstance(answer, np.generic):
        answer = answer.item()
    if sympy is not None and isinstance(answer, sympy.Basic):
        if answer.free_symbols:
            raise _Unreadable(f"That expression still contains {', '.join(map(str, answer.free_symbols))}; "
                              "substitute numbers to get a value.")
        try:
            answer = complex(answer.evalf())
        except (TypeError, ValueError):
            raise _Unreadable("That expression has no numeric value.") from None
    if isinstance(answer, complex):
        if answer.imag != 0:
            raise _Unreadable("That is a complex number; the answer is a real number.")
        answer = answer.real
    if isinstance(answer, (list, tuple, set, dict)):
        raise _Unreadable(f"That is a {type(answer).__name__}; give one number.")
    if isinstance(answer, str):
        text = answer.strip()
        if not text:
            raise _Unreadable("The answer is empty; type a number.")
        try:
            value, unit_kind = parse_quantity(text)
        except (ValueError, TypeError) as error:
            raise _Unreadable(str(error)) from None
        return value, unit_kind
    if isinstance(answer, numbers.Real):
        try:
            return float(answer), None
        except OverflowError:
            raise _Unreadable("That number is too large to be any answer here.") from None
    raise _Unreadable(f"Cannot read a {type(answer).__name__} as a number; type a number "
                      "such as 240 or a quantity such as '1.01 ms'.")


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * abs(b)


def check_answer(exercise: Exercise, answer, params: dict) -> Feedback:
    """Compare `answer` with the exercise's expected value; diagnose typical mistakes."""
    try:
        if exercise.kind == "symbolic":
            return _check_symbolic(exercise, answer, params)
        if exercise.kind == "choice":
            return _check_choice(exercise, answer, params)
        return _check_numeric(exercise, answer, params)
    except _Unreadable as problem:
        return Feedback(exercise.id, False, str(problem), hints=exercise.hints)
    except Exception as error:  # the checker must never crash on a student's input
        return Feedback(exercise.id, False,
                        f"Could not check that answer ({type(error).__name__}: {error}).",
                        hints=exercise.hints)


def _check_numeric(exercise, answer, params) -> Feedback:
    value, unit_kind = _as_number(answer, exercise.kind)
    expected = float(exercise.answer(params))
    wanted = None if exercise.kind == "number" else exercise.kind
    if unit_kind is not None and wanted is not None and unit_kind != wanted:
        return Feedback(exercise.id, False,
                        f"That is {_KIND_WORDS[unit_kind]}, but the question asks for {_KIND_WORDS[wanted]}.",
                        diagnosis="wrong unit kind", hints=exercise.hints)
    if unit_kind is not None and wanted is None and unit_kind != "intensity":
        return Feedback(exercise.id, False,
                        f"That is {_KIND_WORDS[unit_kind]}, but the question asks for a plain number.",
                        diagnosis="wrong unit kind", hints=exercise.hints)
    if math.isnan(value):
        return Feedback(exercise.id, False, "That is NaN (not a number): check for 0/0 or inf - inf.",
                        hints=exercise.hints)
    if math.isinf(value):
        if math.isinf(expected) and (value > 0) == (expected > 0):
            return Feedback(exercise.id, True, "Right: there is no finite value.")
        return Feedback(exercise.id, False, "That is infinite; the answer is a finite number. "
                        "Did you divide by zero?", hints=exercise.hints)
    if math.isinf(expected):
        return Feedback(exercise.id, False, "There is no finite answer here: no batch size is large "
                        "enough (enter inf, or float('inf')).", hints=exercise.hints)
    shown = _show(expected, wanted)
    if _close(value, expected, exercise.tolerance):
        return Feedback(exercise.id, True, f"{shown} is right (within {exercise.tolerance:.0%}).")
    if value < 0 <= expected:
        return Feedback(exercise.id, False, "That is negative; the answer is a positive quantity.",
                        diagnosis="sign", hints=exercise.hints)
    for mistake in exercise.mistake_table(**params):
        if _close(value, float(mistake.value), exercise.tolerance):
            return Feedback(exercise.id, False, mistake.message, diagnosis=mistake.message,
                            hints=exercise.hints)
    ratio = value / expected if expected else float("inf")
    direction = f"{ratio:.3g} times too large" if ratio > 1 else f"{1 / ratio:.3g} times too small" if ratio > 0 else "off"
    return Feedback(exercise.id, False, f"Not within {exercise.tolerance:.0%} of the answer: "
                    f"yours is {direction}.", hints=exercise.hints)


def _show(value: float, kind) -> str:
    unit = UNIT_FOR_KIND.get(kind)
    if unit and unit != "FLOPs/B":
        return format_si(value, unit)
    return f"{value:.4g}"


def _check_choice(exercise, answer, params) -> Feedback:
    expected = str(exercise.answer(params))
    if answer is None or answer is Ellipsis:
        raise _Unreadable(f"No answer yet: type one of {', '.join(repr(c) for c in exercise.choices)}.")
    if not isinstance(answer, str):
        raise _Unreadable(f"Answer with one of {', '.join(repr(c) for c in exercise.choices)} (as text).")
    text = answer.strip().lower().replace("-bound", "").replace(" bound", "").strip()
    options = {c.lower(): c for c in exercise.choices}
    if text not in options:
        raise _Unreadable(f"{answer!r} is not one of the choices: {', '.join(repr(c) for c in exercise.choices)}.")
    if options[text] == expected:
        return Feedback(exercise.id, True, f"{expected} is right.")
    for mistake in (exercise.mistakes(params) if exercise.mistakes else []):
        if str(mistake.value).lower() == text:
            return Feedback(exercise.id, False, mistake.message, diagnosis=mistake.message,
                            hints=exercise.hints)
    return Feedback(exercise.id, False, f"Not {options[text]}: compare the operation's intensity "
                    "with this chip's ridge point.", hints=exercise.hints)


def _check_symbolic(exercise, answer, params) -> Feedback:
    import sympy
    names = {name: sympy.Symbol(name, positive=True) for name in exercise.symbols}
    expected = sympy.sympify(exercise.answer(params), locals=names)
    if answer is None or answer is Ellipsis:
        raise _Unreadable(f"No answer yet: write an expression in {', '.join(exercise.symbols)}.")
    if isinstance(answer, str):
        if not answer.strip():
            raise _Unreadable("The answer is empty; write an expression such as 2*B*D*F.")
        try:
            from sympy.parsing.sympy_parser import (implicit_multiplication_application,
                                                    parse_expr, standard_transformations)
            answer = parse_expr(answer.replace("^", "**"), local_dict=names,
                                global_dict={"Integer": sympy.Integer, "Float": sympy.Float,
                                             "Rational": sympy.Rational, "Symbol": sympy.Symbol,
                                             "sqrt": sympy.sqrt, "oo": sympy.oo},
                                transformations=standard_transformations + (implicit_multiplication_application,))
        except Exception:
            raise _Unreadable(f"Could not read {answer!r} as a formula; write it like 2*B*D*F.") from None
    if isinstance(answer, bool) or not isinstance(answer, (sympy.Basic, numbers.Number)):
        raise _Unreadable(f"Write a sympy expression in {', '.join(exercise.symbols)} "
                          "(or a string such as '2*B*D*F').")
    answer = sympy.sympify(answer)
    # symbols the student made without positive=True: match them by name
    answer = answer.subs({s: names[s.name] for s in answer.free_symbols if s.name in names})
    unknown = [s.name for s in answer.free_symbols if s.name not in names]
    if unknown:
        raise _Unreadable(f"The answer uses {', '.join(sorted(unknown))}; this question uses "
                          f"only {', '.join(exercise.symbols)}.")
    if sympy.simplify(answer - expected) == 0:
        return Feedback(exercise.id, True, f"{sympy.sstr(expected)} is right.")
    for mistake in (exercise.mistakes(params) if exercise.mistakes else []):
        if sympy.simplify(answer - sympy.sympify(mistake.value, locals=names)) == 0:
            return Feedback(exercise.id, False, mistake.message, diagnosis=mistake.message,
                            hints=exercise.hints)
    try:
        ratio = sympy.simplify(answer / expected)
    except Exception:
        ratio = None
    if ratio is not None and ratio.is_number:
        return Feedback(exercise.id, False, f"Right shape, wrong constant factor: yours is "
                        f"{sympy.sstr(ratio)} times the answer.", hints=exercise.hints)
    return Feedback(exercise.id, False, "That expression is not equal to the answer.",
                    hints=exercise.hints)
