"""Self-checking exercises: an answer computed by `roofline`, a tolerance, hints,
and a table of typical mistakes that says what a wrong answer looks like.

The same `mistake_table` drives the checker in a kernel (`check`) and the answer
boxes on the static web page (`roofline.exercises.answerbox`), so both give the
same verdict and the same diagnosis.

    >>> from roofline.exercises import check
    >>> check("time-1e12-flops-h100", "1.01 ms").correct
    True
"""

from __future__ import annotations

import math
import numbers
import re
import sys
from dataclasses import dataclass, field
from typing import Callable

from ..units import format_si, parse_quantity

__all__ = ["Exercise", "Mistake", "Feedback", "register", "get_exercise", "list_exercises",
           "check", "check_answer", "approximation_mistakes", "UNIT_FOR_KIND", "KIND_WORDS"]

#: How each kind of answer is written, for messages and formatting.
UNIT_FOR_KIND = {
    "time": "s", "rate": "FLOP/s", "bandwidth": "B/s", "size": "B",
    "count": "FLOPs", "intensity": "FLOPs/B",
}
#: How each kind of quantity is named in messages (None: a plain number).
KIND_WORDS = {
    "time": "a time (e.g. '1.01 ms')", "rate": "a rate in FLOP/s (e.g. '989 TFLOP/s')",
    "bandwidth": "a bandwidth in B/s (e.g. '3.35 TB/s')", "size": "a size in bytes (e.g. '16 GB')",
    "count": "a count of FLOPs (e.g. '2e12 FLOPs')", "intensity": "an intensity in FLOPs/B",
    None: "a plain number",
}
_KIND_WORDS = KIND_WORDS  # the first version's name

#: Words a student may type for a regime, mapped to the choice they mean.
CHOICE_SYNONYMS = {"memory": "bandwidth", "bandwidth": "bandwidth", "mem": "bandwidth",
                   "hbm": "bandwidth", "math": "compute", "compute": "compute", "flops": "compute",
                   "link": "link", "ici": "link", "nvlink": "link", "interconnect": "link",
                   "network": "link", "communication": "link", "comms": "link"}


def _listed_choice(answer, choices):
    """Wrap `answer` so that it returns the exercise's own spelling of the choice it means.

    `Estimate.bound` says "memory" where an older exercise lists "bandwidth": both normalise
    to the same choice, and the student sees the word the question uses.
    """
    if getattr(answer, "_listed_choice", False):
        return answer

    def listed(params):
        value = answer(params)
        if isinstance(value, str):
            by_meaning = {normalise_choice(c): c for c in choices}
            return by_meaning.get(normalise_choice(value), value)
        return value
    listed._listed_choice = True
    return listed

_TWICE = ("off by a factor of 2 - a sparse peak where the dense one belongs (or the reverse), "
          "bytes per element (bf16 is 2 bytes), or a bidirectional bandwidth where the one-way "
          "figure belongs (or the reverse)?")
#: (factor, message) of the generic mistakes added to every numeric exercise.
GENERIC_MISTAKES = (
    (1e3, "It is 1000 times too large: a unit prefix slipped (ms vs s, GB vs TB, TFLOP/s vs GFLOP/s)?"),
    (1e-3, "It is 1000 times too small: a unit prefix slipped (ms vs s, GB vs TB, TFLOP/s vs PFLOP/s)?"),
    (1e6, "It is a million times too large: a unit prefix slipped twice (µs vs s, MB vs TB)?"),
    (1e-6, "It is a million times too small: a unit prefix slipped twice (s vs µs, TB vs MB)?"),
    (1e9, "It is 10^9 times too large: GB or ns where bytes or seconds were meant?"),
    (1e-9, "It is 10^9 times too small: bytes or seconds where GB or ns were meant?"),
    (2.0, "It is twice the answer: " + _TWICE),
    (0.5, "It is half the answer: " + _TWICE),
    (2.0**30 / 1e9, "It is 7.4% too large: GiB (2^30 bytes) mixed with GB (10^9 bytes)?"),
    (1e9 / 2.0**30, "It is 7.4% too small: GB (10^9 bytes) mixed with GiB (2^30 bytes)?"),
)
RECIPROCAL_MESSAGE = ("That is the reciprocal of the answer: the ratio is inverted "
                      "(FLOPs per byte, not bytes per FLOP?)")


@dataclass(frozen=True)
class Mistake:
    """A wrong answer students typically give, and what to tell them when they do."""

    value: object
    message: str


def approximation_mistakes(exact, approximate, what="B << D, F", tolerance=0.02,
                           reverse=False) -> list[Mistake]:
    """The mistake of giving the approximate value where the exact one was asked.

    With `reverse=True` the question asks for the approximate value and the mistake
    is the exact one: pass `exact=` the approximate (expected) value and
    `approximate=` the exact one. Returns [] when the two are within `tolerance`
    of each other (then either answer is right).
    """
    try:
        expected, wrong = float(exact), float(approximate)
    except (TypeError, ValueError, OverflowError):
        return []
    if not (math.isfinite(wrong) and wrong != 0):
        return []
    if math.isfinite(expected) and abs(wrong - expected) <= tolerance * abs(expected):
        return []
    if reverse:
        return [Mistake(wrong, f"That is the exact value; this question asks for the approximate "
                               f"one (assuming {what}).")]
    return [Mistake(wrong, f"That is the approximate value (assuming {what}); this question "
                           "asks for the exact one, without that approximation.")]


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
        if not isinstance(self.id, str) or not self.id:
            raise ValueError("an exercise needs a non-empty text id")
        if self.kind not in valid:
            raise ValueError(f"exercise {self.id}: kind must be one of {sorted(valid)}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"exercise {self.id}: a choice exercise needs choices")
        if self.kind == "symbolic" and not self.symbols:
            raise ValueError(f"exercise {self.id}: a symbolic exercise needs its symbols' names")
        if not (0 <= self.tolerance < 0.5):
            raise ValueError(f"exercise {self.id}: tolerance is relative, e.g. 0.02 for 2%")
        object.__setattr__(self, "hints", tuple(self.hints))
        object.__setattr__(self, "symbols", tuple(self.symbols))
        object.__setattr__(self, "choices", tuple(self.choices))
        if self.kind == "choice":
            object.__setattr__(self, "answer", _listed_choice(self.answer, self.choices))

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

    def specific_mistakes(self, **params) -> list[Mistake]:
        resolved = self.resolve(params)
        return [m if isinstance(m, Mistake) else Mistake(*m)
                for m in (self.mistakes(resolved) if self.mistakes else [])]

    def mistake_table(self, **params) -> list[Mistake]:
        """Specific mistakes first, then the generic ones, for a numeric exercise."""
        table = self.specific_mistakes(**params)
        if self.kind in ("symbolic", "choice") or not self.generic_mistakes:
            return table
        expected = float(self.answer(self.resolve(params)))
        if expected == 0 or not math.isfinite(expected):
            return table
        table += [Mistake(expected * factor, message) for factor, message in GENERIC_MISTAKES]
        if abs(expected) != 1:
            table.append(Mistake(1 / expected, RECIPROCAL_MESSAGE))
        return table

    def check(self, answer, **params) -> "Feedback":
        return check_answer(self, answer, self.resolve(params))


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer. Renders as HTML in Jupyter/Colab and as text elsewhere.

    An unanswered exercise (answer None) also renders a static answer box, so a
    reader of the web page (no kernel) can still check an answer.
    """

    exercise_id: str
    correct: bool
    message: str
    diagnosis: str | None = None
    hints: tuple[str, ...] = ()
    answered: bool = True
    exercise: Exercise | None = field(default=None, repr=False, compare=False)
    params: dict | None = field(default=None, repr=False, compare=False)

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
        if not self.answered and self.exercise is not None:
            from .answerbox import render_answer_box
            try:
                return render_answer_box(self.exercise, self.params or {})
            except Exception as error:  # never hide the exercise behind a build error
                hint += f"<div><em>(No answer box: {html.escape(_safe_str(error))})</em></div>"
        return (f'<div class="roofline-feedback" role="status" style="background:{colour};'
                f'color:#111;border-left:4px solid {border};padding:0.5em 0.8em;margin:0.3em 0">'
                f"<strong>{mark}</strong> <code>{html.escape(self.exercise_id)}</code>: "
                f"{html.escape(self.message)}{hint}</div>")


# ---------------------------------------------------------------- the registry
_REGISTRY: dict[str, Exercise] = {}


def register(exercise: Exercise) -> Exercise:
    if not isinstance(exercise, Exercise):
        raise TypeError(f"register takes an Exercise, got {type(exercise).__name__}")
    if exercise.id in _REGISTRY and _REGISTRY[exercise.id] is not exercise:
        old = _REGISTRY[exercise.id]
        # re-running a module (importlib.reload, a notebook cell) redefines the same exercise
        if getattr(old.answer, "__module__", None) != getattr(exercise.answer, "__module__", 0):
            raise ValueError(f"two exercises share the id {exercise.id!r}")
    _REGISTRY[exercise.id] = exercise
    return exercise


def get_exercise(exercise_id) -> Exercise:
    if isinstance(exercise_id, Exercise):
        return exercise_id
    if not isinstance(exercise_id, str) or exercise_id not in _REGISTRY:
        import difflib
        close = difflib.get_close_matches(_safe_str(exercise_id), list(_REGISTRY), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no exercise {_safe_str(exercise_id)!r}.{hint}")
    return _REGISTRY[exercise_id]


def list_exercises() -> list[str]:
    return list(_REGISTRY)


def check(exercise_id, answer, **params) -> Feedback:
    """Check `answer` to exercise `exercise_id` (with optional parameters); never raises
    on what a student types. Returns a Feedback (`.correct`, `.message`)."""
    try:
        exercise = get_exercise(exercise_id)
    except KeyError as error:
        return Feedback(_safe_str(exercise_id), False, str(error.args[0]))
    try:
        resolved = exercise.resolve(params)
    except TypeError as error:
        return Feedback(exercise.id, False, str(error))
    return check_answer(exercise, answer, resolved)


# ---------------------------------------------------------------- checking
class _Unreadable(Exception):
    pass


def _safe_str(value, limit=80) -> str:
    """str(value) that never raises (a student's object may have a broken __str__)."""
    try:
        text = str(value)
    except Exception:
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _unanswered(answer) -> bool:
    return answer is None or answer is Ellipsis


def _as_number(answer):
    """(value in base units, unit kind or None) for a numeric answer; raises _Unreadable."""
    np = sys.modules.get("numpy")
    sympy = sys.modules.get("sympy")
    if answer is None:
        raise _Unreadable("No answer yet: replace None with your number.")
    if answer is Ellipsis:
        raise _Unreadable("No answer yet: replace ... with your number.")
    if isinstance(answer, (bool,)) or (np is not None and isinstance(answer, np.bool_)):
        raise _Unreadable("That is True/False; this question wants a number.")
    if np is not None and isinstance(answer, np.ndarray):
        if answer.size != 1:
            raise _Unreadable(f"That is an array of {answer.size} values; give one number.")
        answer = answer.reshape(()).item()
    if np is not None and isinstance(answer, np.generic):
        answer = answer.item()
    if isinstance(answer, (bytes, bytearray)):
        raise _Unreadable("That is bytes (b'...'); type the number itself, or text such as '1.01 ms'.")
    if sympy is not None and isinstance(answer, sympy.Basic):
        free = getattr(answer, "free_symbols", set())
        if free:
            raise _Unreadable(f"That expression still contains {', '.join(sorted(map(str, free)))}; "
                              "substitute numbers to get a value.")
        try:
            answer = complex(answer.evalf())
        except (TypeError, ValueError, AttributeError):
            raise _Unreadable("That expression has no numeric value.") from None
    if isinstance(answer, complex):
        if answer.imag != 0:
            raise _Unreadable("That is a complex number; the answer is a real number.")
        answer = answer.real
    if isinstance(answer, (list, tuple, set, frozenset, dict)):
        raise _Unreadable(f"That is a {type(answer).__name__}; give one number.")
    if isinstance(answer, str):
        text = answer.strip()
        if not text:
            raise _Unreadable("The answer is empty; type a number.")
        if len(text) > 100:
            raise _Unreadable("That text is too long to be a number; type a number such as "
                              "240 or a quantity such as '1.01 ms'.")
        try:
            return parse_quantity(text)
        except (ValueError, TypeError) as error:
            raise _Unreadable(_safe_str(error, 300)) from None
    if isinstance(answer, numbers.Number) or hasattr(type(answer), "__float__"):
        try:
            return float(answer), None
        except OverflowError:
            raise _Unreadable("That number is too large to be any answer here.") from None
        except Exception:
            raise _Unreadable(f"Cannot read that {type(answer).__name__} as a number; type a "
                              "number such as 240 or a quantity such as '1.01 ms'.") from None
    raise _Unreadable(f"Cannot read a {type(answer).__name__} as a number; type a number "
                      "such as 240 or a quantity such as '1.01 ms'.")


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * abs(b)


def check_answer(exercise: Exercise, answer, params: dict) -> Feedback:
    """Compare `answer` with the exercise's expected value; diagnose typical mistakes."""
    answered = not _unanswered(answer)
    try:
        if exercise.kind == "symbolic":
            result = _check_symbolic(exercise, answer, params)
        elif exercise.kind == "choice":
            result = _check_choice(exercise, answer, params)
        else:
            result = _check_numeric(exercise, answer, params)
    except _Unreadable as problem:
        result = Feedback(exercise.id, False, str(problem), hints=exercise.hints)
    except Exception as error:  # the checker must never crash on a student's input
        result = Feedback(exercise.id, False,
                          f"Could not check that answer ({type(error).__name__}: "
                          f"{_safe_str(error, 200)}).", hints=exercise.hints)
    if answered:
        return result
    return Feedback(result.exercise_id, result.correct, result.message, result.diagnosis,
                    result.hints, answered=False, exercise=exercise, params=dict(params))


def ratio_text(ratio: float) -> str:
    """A ratio >= 1 to 3 significant digits, written the same way in Python and JavaScript."""
    x = float(f"{ratio:.3g}")
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    return repr(x)


def correct_message(exercise: Exercise, expected) -> str:
    if exercise.kind == "choice":
        return f"{expected} is right."
    if exercise.kind == "symbolic":
        import sympy
        return f"{sympy.sstr(expected)} is right."
    if math.isinf(float(expected)):
        return "Right: there is no finite value."
    wanted = None if exercise.kind == "number" else exercise.kind
    return f"{_show(float(expected), wanted)} is right (within {exercise.tolerance:.0%})."


def _check_numeric(exercise, answer, params) -> Feedback:
    value, unit_kind = _as_number(answer)
    expected = float(exercise.answer(params))
    wanted = None if exercise.kind == "number" else exercise.kind
    if unit_kind is not None and wanted is not None and unit_kind != wanted:
        return Feedback(exercise.id, False,
                        f"That is {KIND_WORDS[unit_kind]}, but the question asks for {KIND_WORDS[wanted]}.",
                        diagnosis="wrong unit kind", hints=exercise.hints)
    if unit_kind is not None and wanted is None and unit_kind != "intensity":
        return Feedback(exercise.id, False,
                        f"That is {KIND_WORDS[unit_kind]}, but the question asks for a plain number.",
                        diagnosis="wrong unit kind", hints=exercise.hints)
    if math.isnan(value):
        return Feedback(exercise.id, False, "That is NaN (not a number): check for 0/0 or inf - inf.",
                        hints=exercise.hints)
    if math.isinf(value):
        if math.isinf(expected) and (value > 0) == (expected > 0):
            return Feedback(exercise.id, True, correct_message(exercise, expected))
        return Feedback(exercise.id, False, "That is infinite; the answer is a finite number. "
                        "Did you divide by zero?", hints=exercise.hints)
    if math.isinf(expected):
        return Feedback(exercise.id, False, "There is no finite answer here: no batch size is large "
                        "enough (enter inf, or float('inf')).", hints=exercise.hints)
    if _close(value, expected, exercise.tolerance):
        return Feedback(exercise.id, True, correct_message(exercise, expected))
    if value < 0 <= expected:
        return Feedback(exercise.id, False, "That is negative; the answer is a positive quantity.",
                        diagnosis="sign", hints=exercise.hints)
    for mistake in exercise.mistake_table(**params):
        if _close(value, float(mistake.value), exercise.tolerance):
            return Feedback(exercise.id, False, mistake.message, diagnosis=mistake.message,
                            hints=exercise.hints)
    if value == 0:
        return Feedback(exercise.id, False, "That is zero; the answer is not.", hints=exercise.hints)
    ratio = value / expected
    direction = (f"about {ratio_text(ratio)} times too large" if ratio > 1
                 else f"about {ratio_text(1 / ratio)} times too small")
    return Feedback(exercise.id, False, f"Not within {exercise.tolerance:.0%} of the answer: "
                    f"yours is {direction}.", hints=exercise.hints)


def _show(value: float, kind) -> str:
    unit = UNIT_FOR_KIND.get(kind)
    if unit and unit != "FLOPs/B":
        return format_si(value, unit)
    return f"{value:.4g}"


def normalise_choice(text: str) -> str:
    """'Compute-bound ' -> 'compute', 'memory bound' -> 'bandwidth' (mirrored in the answer box)."""
    text = text.strip().lower().replace("-", " ").replace("_", " ")
    words = [w for w in text.split() if w not in ("bound", "limited", "the", "it", "is")]
    text = " ".join(words)
    return CHOICE_SYNONYMS.get(text, text)


def _check_choice(exercise, answer, params) -> Feedback:
    expected = str(exercise.answer(params))
    listed = ", ".join(repr(c) for c in exercise.choices)
    if _unanswered(answer):
        raise _Unreadable(f"No answer yet: type one of {listed}.")
    if not isinstance(answer, str):
        raise _Unreadable(f"Answer with one of {listed} (as text, in quotes).")
    options = {normalise_choice(c): c for c in exercise.choices}
    text = normalise_choice(answer[:200])
    if text not in options:
        raise _Unreadable(f"{_safe_str(answer, 40)!r} is not one of the choices: {listed}.")
    if options[text] == expected:
        return Feedback(exercise.id, True, correct_message(exercise, expected))
    for mistake in exercise.specific_mistakes(**params):
        if normalise_choice(str(mistake.value)) == text:
            return Feedback(exercise.id, False, mistake.message, diagnosis=mistake.message,
                            hints=exercise.hints)
    return Feedback(exercise.id, False, f"Not {options[text]}: compare the operation's intensity "
                    "with this chip's ridge point.", hints=exercise.hints)


# ---------------------------------------------------------------- symbolic answers
_ALLOWED_FORMULA = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 +-*/^().,_")


def _symbols(exercise):
    import sympy
    return {name: sympy.Symbol(name, positive=True) for name in exercise.symbols}


def _by_name(expression, names):
    """Replace symbols made without positive=True by the exercise's, matching names."""
    return expression.subs({s: names[s.name] for s in expression.free_symbols
                            if s.name in names and s is not names[s.name]})


def parse_formula(text: str, names: dict):
    """Read a student's formula ('2*B*D*F/n', '2BDF/n', 'B^2') safely into sympy.

    Only letters, digits, spaces and + - * / ^ ( ) . , are allowed (no Python code),
    and powers must stay small, so reading a formula can neither run code nor hang.
    """
    import sympy
    from sympy.parsing.sympy_parser import (implicit_multiplication_application, parse_expr,
                                            standard_transformations)
    if len(text) > 300:
        raise _Unreadable("That formula is too long; write it like 2*B*D*F.")
    bad = sorted(set(text) - _ALLOWED_FORMULA)
    if bad or "__" in text:
        raise _Unreadable(f"A formula may hold only letters, digits and + - * / ^ ( ); "
                          f"{''.join(bad[:5]) or '__'!r} is not allowed. Write it like 2*B*D*F.")
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        # every name is a symbol, sqrt, or symbols written side by side ("BDF" is B*D*F);
        # no other name may reach parse_expr, which would evaluate it (exit, input, ...)
        if word not in names and word != "sqrt" and not all(c in names for c in word):
            raise _Unreadable(f"The answer uses {word!r}; this question uses only "
                              f"{', '.join(names)} (write products with *, e.g. 2*B*D*F).")
    allowed = {"Integer": sympy.Integer, "Float": sympy.Float, "Rational": sympy.Rational,
               "Symbol": sympy.Symbol, "sqrt": sympy.sqrt, "Mul": sympy.Mul, "Add": sympy.Add,
               "Pow": sympy.Pow}
    kwargs = dict(local_dict=dict(names), global_dict=allowed,
                  transformations=standard_transformations + (implicit_multiplication_application,))
    source = text.replace("^", "**")
    try:
        lazy = parse_expr(source, evaluate=False, **kwargs)
    except Exception:
        raise _Unreadable(f"Could not read {text!r} as a formula; write it like 2*B*D*F.") from None
    for node in sympy.preorder_traversal(lazy):
        if isinstance(node, sympy.Pow) and node.exp.is_number:
            try:
                too_big = abs(float(sympy.N(node.exp, 5))) > 64
            except (TypeError, ValueError):
                too_big = True
            if too_big:
                raise _Unreadable("That formula has a power too large to be the answer.")
    try:
        return parse_expr(source, **kwargs)
    except Exception:
        raise _Unreadable(f"Could not read {text!r} as a formula; write it like 2*B*D*F.") from None


_PROBES = (1.3731, 2.1789, 0.7193, 3.3311, 1.9123, 2.7059, 0.4517, 1.1467)


def symbolically_equal(a, b) -> bool:
    """a == b for all positive values of their symbols; fast (no sympy.simplify unless needed)."""
    import sympy
    difference = a - b
    if difference == 0:
        return True
    try:
        if sympy.cancel(sympy.expand(difference)) == 0:
            return True
    except Exception:
        pass
    symbols = sorted(difference.free_symbols, key=lambda s: s.name)
    for shift in (0, 3):
        point = {s: _PROBES[(i + shift) % len(_PROBES)] for i, s in enumerate(symbols)}
        try:
            d = complex(difference.evalf(subs=point))
            scale = abs(complex(a.evalf(subs=point))) + abs(complex(b.evalf(subs=point)))
        except (TypeError, ValueError):
            break
        if not math.isfinite(abs(d)) or abs(d) > 1e-9 * max(scale, 1e-300):
            return False
    return sympy.simplify(difference) == 0  # equal at the probes: let sympy decide


def _check_symbolic(exercise, answer, params) -> Feedback:
    import sympy
    names = _symbols(exercise)
    expected = _by_name(sympy.sympify(exercise.answer(params), locals=names), names)
    listed = ", ".join(exercise.symbols)
    if _unanswered(answer):
        raise _Unreadable(f"No answer yet: write an expression in {listed}.")
    if isinstance(answer, str):
        if not answer.strip():
            raise _Unreadable("The answer is empty; write an expression such as 2*B*D*F.")
        answer = parse_formula(answer, names)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(answer, np.generic):
        answer = answer.item()
    if isinstance(answer, bool) or not isinstance(answer, (sympy.Basic, numbers.Number)):
        raise _Unreadable(f"Write a sympy expression in {listed} (or a string such as '2*B*D*F').")
    if isinstance(answer, complex) or (isinstance(answer, float) and not math.isfinite(answer)):
        raise _Unreadable(f"That is a number; the answer is an expression in {listed}.")
    answer = sympy.sympify(answer)
    if not isinstance(answer, sympy.Expr):
        raise _Unreadable(f"That is not an expression in {listed}; write one such as 2*B*D*F.")
    answer = _by_name(answer, names)
    unknown = sorted(s.name for s in answer.free_symbols if s.name not in names)
    if unknown:
        raise _Unreadable(f"The answer uses {', '.join(unknown)}; this question uses "
                          f"only {listed}.")
    if symbolically_equal(answer, expected):
        return Feedback(exercise.id, True, correct_message(exercise, expected))
    for mistake in exercise.specific_mistakes(**params):
        wrong = _by_name(sympy.sympify(mistake.value, locals=names), names)
        if symbolically_equal(answer, wrong):
            return Feedback(exercise.id, False, mistake.message, diagnosis=mistake.message,
                            hints=exercise.hints)
    try:
        ratio = sympy.cancel(answer / expected)
    except Exception:
        ratio = None
    if ratio is not None and ratio.is_number and ratio != 0:
        return Feedback(exercise.id, False, f"Right shape, wrong constant factor: yours is "
                        f"{sympy.sstr(ratio)} times the answer.", hints=exercise.hints)
    return Feedback(exercise.id, False, "That expression is not equal to the answer.",
                    hints=exercise.hints)
