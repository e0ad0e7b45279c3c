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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from .. import arith
from ..units import RATE_DIGITS, format_si, parse_quantity_details

__all__ = [
    "distinct_mistakes",
    "Exercise",
    "Mistake",
    "Feedback",
    "register",
    "get_exercise",
    "list_exercises",
    "check",
    "check_answer",
    "approximation_mistakes",
    "UNIT_FOR_KIND",
    "KIND_WORDS",
]

#: How each kind of answer is written, for messages and formatting.
UNIT_FOR_KIND = {
    "time": "s",
    "rate": "FLOP/s",
    "bandwidth": "B/s",
    "size": "B",
    "count": "FLOPs",
    "intensity": "FLOPs/B",
}
#: How each kind of quantity is named in messages (None: a plain number).
KIND_WORDS = {
    "time": "a time (e.g. '1.01 ms')",
    "rate": "a rate in FLOP/s (e.g. '989.5 TFLOP/s')",
    "bandwidth": "a bandwidth in B/s (e.g. '3.35 TB/s')",
    "size": "a size in bytes (e.g. '16 GB')",
    "count": "a count of FLOPs (e.g. '2e12 FLOPs')",
    "intensity": "an intensity in FLOPs/B",
    None: "a plain number",
}
_KIND_WORDS = KIND_WORDS  # the first version's name

#: Words a student may type for a regime, mapped to the choice they mean.
CHOICE_SYNONYMS = {
    "memory": "bandwidth",
    "bandwidth": "bandwidth",
    "mem": "bandwidth",
    "hbm": "bandwidth",
    "memory bandwidth": "bandwidth",
    "io": "bandwidth",
    "math": "compute",
    "compute": "compute",
    "flops": "compute",
    "arithmetic": "compute",
    "not possible": "impossible",
    "link": "link",
    "ici": "link",
    "nvlink": "link",
    "interconnect": "link",
    "network": "link",
    "communication": "link",
    "comms": "link",
}
#: Words dropped from a typed choice ("It is compute-bound." -> "compute").
CHOICE_FILLER = (
    "bound",
    "limited",
    "the",
    "it",
    "is",
    "its",
    "s",
    "a",
    "an",
    "this",
    "that",
    "by",
    "on",
    "operation",
    "matmul",
    "layer",
    "answer",
    "i",
    "think",
    "would",
    "be",
    "will",
    "so",
)


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


#: The factor-of-2 slips an exercise may name (`Exercise.twice`): each doubles the answer, or
#: (taken the other way) halves it. An exercise names only those its quantity can suffer; one
#: that names none gets a neutral message (TWICE_NEUTRAL).
TWICE_SLIPS = {
    "sparse": "a 2:4-sparse peak where the dense one belongs (or the reverse)",
    "dtype": "the bytes per element (bf16 is 2 bytes, fp32 4, fp8 and int8 1)",
    "bidirectional": "a bidirectional link bandwidth where the one-way figure belongs "
    "(or the reverse)",
    "multiply-add": "a multiply-add counted as 1 FLOP (it is 2: a multiply and an add)",
    "kv": "the cache holds K and V, two tensors, not one",
    "read-write": "bytes read and bytes written both cross the memory bus",
    "all-reduce": "an all-reduce moves the data twice (a reduce-scatter, then an all-gather)",
    "forward-backward": "the backward pass costs twice the forward (6 FLOPs per weight and "
    "token in training, 2 in inference)",
}
#: Said for an answer twice / half the expected one when the exercise names no slip.
TWICE_NEUTRAL = {
    2.0: "It is twice the answer: a factor of 2 slipped in; check each factor of your "
    "calculation against the question.",
    0.5: "It is half the answer: a factor of 2 is missing; check each factor of your "
    "calculation against the question.",
}
#: Said for an answer 100 times a fraction, typed without "%" (tag "percent"; the check
#: skips it when the answer was typed with "%").
PERCENT_MESSAGE = (
    "That is the answer as a percentage typed without the % sign: write the sign "
    "(e.g. '65%') or the fraction (e.g. 0.65)."
)
#: The GB/GiB slip, offered only where the quantity involves bytes (`Exercise.byte_units`).
GIB_MISTAKES = (
    (2.0**30 / 1e9, "It is 7.4% too large: GiB (2^30 bytes) mixed with GB (10^9 bytes)?"),
    (1e9 / 2.0**30, "It is 7.4% too small: GB (10^9 bytes) mixed with GiB (2^30 bytes)?"),
)
#: Kinds of answer whose quantity is made of bytes: the GB/GiB slip applies by default.
BYTE_KINDS = ("size", "bandwidth", "intensity")


def twice_message(factor: float, slips) -> str:
    """The message for an answer `factor` (2 or 0.5) times the expected one: the exercise's
    own factor-of-2 slips (`TWICE_SLIPS` keys), or a neutral sentence when it names none."""
    if not slips:
        return TWICE_NEUTRAL[factor]
    head = "It is twice the answer: " if factor == 2.0 else "It is half the answer: "
    return head + "; or ".join(TWICE_SLIPS[s] for s in slips) + "?"


#: (factor, message, tag) of the generic mistakes added to every numeric exercise.
#: The "prefix" ones are a slipped unit prefix: for a bare number where a unit is
#: needed they do not apply (the student is told to add a unit instead).
GENERIC_MISTAKES = (
    (
        1e3,
        "It is 1000 times too large: a unit prefix slipped (ms vs s, GB vs TB, TFLOP/s vs GFLOP/s)?",
        "prefix",
    ),
    (
        1e-3,
        "It is 1000 times too small: a unit prefix slipped (ms vs s, GB vs TB, TFLOP/s vs PFLOP/s)?",
        "prefix",
    ),
    (
        1e6,
        "It is a million times too large: a unit prefix slipped twice (µs vs s, MB vs TB)?",
        "prefix",
    ),
    (
        1e-6,
        "It is a million times too small: a unit prefix slipped twice (s vs µs, TB vs MB)?",
        "prefix",
    ),
    (1e9, "It is 10^9 times too large: GB or ns where bytes or seconds were meant?", "prefix"),
    (1e-9, "It is 10^9 times too small: bytes or seconds where GB or ns were meant?", "prefix"),
)
#: The reciprocal of the answer, explained for the kind of quantity asked.
RECIPROCAL_MESSAGES = {
    "intensity": "That is the reciprocal of the answer: the ratio is inverted (FLOPs per byte, "
    "not bytes per FLOP?)",
    "time": "That is the reciprocal of the answer: a time is the work divided by the rate "
    "(FLOPs / FLOP/s, bytes / B/s), not the rate divided by the work.",
    "rate": "That is the reciprocal of the answer: a rate is FLOPs divided by seconds, not "
    "seconds divided by FLOPs.",
    "bandwidth": "That is the reciprocal of the answer: a bandwidth is bytes divided by seconds, "
    "not seconds divided by bytes.",
    "size": "That is the reciprocal of the answer: one of your divisions is upside down.",
    "count": "That is the reciprocal of the answer: one of your divisions is upside down.",
    None: "That is the reciprocal of the answer: the ratio is upside down (swap what goes on "
    "top and what goes below).",
}
#: The tag of a Mistake that is no mistake: another accepted answer (e.g. computed with a
#: vendor's figure where the catalog keeps another); its message says so.
ACCEPTED = "accepted"
#: Said for a bare number where the question wants a unit (the number is read in base units).
ADD_UNIT_MESSAGE = (
    "Add a unit: a number alone is read in {base}, and that is not the answer. "
    "Write the unit you mean, e.g. {example}."
)
ADD_UNIT_EXAMPLES = {
    "time": "'1.01 ms'",
    "rate": "'989.5 TFLOP/s'",
    "bandwidth": "'3.35 TB/s'",
    "size": "'16 GB'",
    "count": "'2e12 FLOPs'",
    "intensity": "'240 FLOPs/B'",
}
BASE_UNIT_NAMES = {
    "time": "seconds",
    "rate": "FLOP/s",
    "bandwidth": "bytes per second",
    "size": "bytes",
    "count": "FLOPs",
    "intensity": "FLOPs per byte",
}


@dataclass(frozen=True)
class Mistake:
    """A wrong answer students typically give, and what to tell them when they do."""

    value: Any  # a number, or for a symbolic exercise the wrong formula
    message: str
    tag: str = ""


def approximation_mistakes(
    exact, approximate, what="B << D, F", tolerance=0.02, reverse=False
) -> list[Mistake]:
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
    if math.isfinite(expected) and collide(wrong, expected, tolerance):
        return []
    if reverse:
        return [
            Mistake(
                wrong,
                f"That is the exact value; this question asks for the approximate "
                f"one (assuming {what}).",
            )
        ]
    return [
        Mistake(
            wrong,
            f"That is the approximate value (assuming {what}); this question "
            "asks for the exact one, without that approximation.",
        )
    ]


def distinct_mistakes(expected, mistakes, tolerance=0.02) -> list[Mistake]:
    """`mistakes` without those a student could not tell from the answer or from a mistake
    before them (for parameters drawn at random, where two slips may coincide)."""
    kept, taken = [], [float(expected)]
    for mistake in mistakes:
        mistake = mistake if isinstance(mistake, Mistake) else Mistake(*mistake)
        value = float(mistake.value)
        if not any(collide(value, other, tolerance) for other in taken):
            kept.append(mistake)
            taken.append(value)
    return kept


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
    answer: Callable[[dict], Any]  # a number, a sympy expression, a choice or a tuple of parts
    kind: str = "number"
    params: dict = field(default_factory=dict)
    tolerance: float = 0.02
    hints: tuple[str, ...] = ()
    mistakes: Callable[[dict], list] | None = None
    symbols: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    generic_mistakes: bool = True
    title: str = ""
    """The exercise's title in the book ("A teraFLOP on an H100"), for answer boxes."""
    givens: Callable[[dict], list] | tuple = ()
    """Quantities the question gives, as typed ("32 GiB"): an answer that only repeats one
    is told so (e.g. a conversion answered with the figure to convert)."""
    parts: tuple = ()
    """For kind "parts": the sub-exercises (each with its own kind), answered together as a
    tuple or as text separated by ';'. `answer` then returns the tuple of their answers."""
    homework: bool | None = None
    """Homework feedback names the kind of slip, not the ratio to the answer, and the page
    carries no expected value. Default: True for ids starting with "hw-"."""
    choice_words: dict = field(default_factory=dict)
    """Extra words (lower case) a student may type for a choice: {"link": "bandwidth"}."""
    twice: tuple[str, ...] = ()
    """The factor-of-2 slips (keys of `TWICE_SLIPS`) this exercise's answer can suffer; an
    answer twice or half the expected one names them. None named: a neutral message."""
    byte_units: bool | None = None
    """True where the quantity involves bytes, so GB mixed with GiB (7.4%) is a slip worth
    naming. Default: True for a size, a bandwidth or an intensity, False otherwise."""
    rounding: tuple[str, ...] = ()
    """For a whole-number answer: ("down", "because ...") or ("up", "because ..."); the
    answer rounded the other way is told which way to round and why."""
    choice_reasons: dict = field(default_factory=dict)
    """For a choice: {choice: why it is wrong when it is}, for each wrong choice without a
    listed mistake (homework: the choice wrong for a student changes with their numbers)."""
    factor_words: dict = field(default_factory=dict)
    """For a formula: what a factor counts, {"H": "the number of heads", "3": "the three
    matmuls"}; an answer off by that one factor is told which kind of factor it is. The key
    "(n-1)/n" (for a symbol n) says why a ring's share belongs: an answer missing it is told."""

    def __post_init__(self):
        valid = {"number", "symbolic", "choice", "parts", *UNIT_FOR_KIND}
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
        if self.kind == "parts" and len(self.parts) < 2:
            raise ValueError(f"exercise {self.id}: a 'parts' exercise needs two parts or more")
        if self.homework is None:
            object.__setattr__(self, "homework", self.id.startswith("hw-"))
        import dataclasses

        object.__setattr__(
            self,
            "parts",
            tuple(
                dataclasses.replace(part, params=dict(self.params), homework=self.homework)
                for part in self.parts
            ),
        )
        object.__setattr__(self, "hints", tuple(self.hints))
        object.__setattr__(self, "symbols", tuple(self.symbols))
        object.__setattr__(self, "choices", tuple(self.choices))
        if self.kind == "choice":
            object.__setattr__(self, "answer", _listed_choice(self.answer, self.choices))
        unknown = [slip for slip in self.twice if slip not in TWICE_SLIPS]
        if unknown:
            raise ValueError(
                f"exercise {self.id}: unknown factor-of-2 slip {unknown[0]!r}; "
                f"use one of {sorted(TWICE_SLIPS)}"
            )
        object.__setattr__(self, "twice", tuple(self.twice))
        if self.byte_units is None:
            object.__setattr__(self, "byte_units", self.kind in BYTE_KINDS)
        if self.rounding and (len(self.rounding) != 2 or self.rounding[0] not in ("down", "up")):
            raise ValueError(
                f"exercise {self.id}: rounding is ('down' or 'up', 'because ...'), "
                f"got {self.rounding!r}"
            )
        object.__setattr__(self, "rounding", tuple(self.rounding))

    # -- parameters and the expected answer
    def resolve(self, params: dict | None = None) -> dict:
        merged = dict(self.params)
        for key, value in (params or {}).items():
            if key not in merged:
                raise TypeError(
                    f"exercise {self.id!r} has no parameter {key!r}; "
                    f"it takes {', '.join(merged) or 'none'}"
                )
            merged[key] = value
        return merged

    def expected(self, **params):
        return self.answer(self.resolve(params))

    def specific_mistakes(self, **params) -> list[Mistake]:
        resolved = self.resolve(params)
        return [
            m if isinstance(m, Mistake) else Mistake(*m)
            for m in (self.mistakes(resolved) if self.mistakes else [])
        ]

    def mistake_table(self, **params) -> list[Mistake]:
        """Specific mistakes first, then the generic ones, for a numeric exercise.

        A generic mistake that falls within the tolerance of the answer or of a mistake
        before it is left out (it could never be told apart, or never fire)."""
        table = self.specific_mistakes(**params)
        if self.kind in ("symbolic", "choice", "parts"):
            return table
        expected = float(self.answer(self.resolve(params)))
        if expected == 0 or not math.isfinite(expected):
            return table
        generic = self._rounding_mistakes(expected)  # the exercise's own rounding rule
        if not self.generic_mistakes:
            return self._distinct(table, generic, expected)
        generic += [
            Mistake(expected * factor, message, tag) for factor, message, tag in GENERIC_MISTAKES
        ]
        generic += [
            Mistake(expected * factor, twice_message(factor, self.twice)) for factor in (2.0, 0.5)
        ]
        if self.byte_units:
            generic += [Mistake(expected * factor, message) for factor, message in GIB_MISTAKES]
        if self.kind == "number" and 0 < expected < 1:
            generic.append(Mistake(expected * 100, PERCENT_MESSAGE, "percent"))
        if abs(expected) != 1:
            wanted = None if self.kind == "number" else self.kind
            generic.append(Mistake(1 / expected, RECIPROCAL_MESSAGES[wanted], "reciprocal"))
        return self._distinct(table, generic, expected)

    def _distinct(self, table: list, generic: list, expected: float) -> list[Mistake]:
        """`table` then each of `generic` a student could tell from the answer and from the
        mistakes before it (within the tolerance)."""
        taken = [expected] + [float(m.value) for m in table]
        for mistake in generic:
            value = float(mistake.value)
            if not any(collide(value, other, self.tolerance) for other in taken):
                table.append(mistake)
                taken.append(value)
        return table

    def _rounding_mistakes(self, expected: float) -> list[Mistake]:
        """The whole-number answer rounded the other way, told which way and why."""
        if not self.rounding or not float(expected).is_integer():
            return []
        way, because = self.rounding
        wrong = expected + 1 if way == "down" else expected - 1
        if wrong <= 0:
            return []
        return [Mistake(wrong, f"Round {way}, {because}", "rounding")]

    def unrounded_message(self) -> str | None:
        """What an answer that was not rounded (or rounded to a fraction) is told."""
        if not self.rounding:
            return None
        way, because = self.rounding
        return f"The answer is a whole number: round {way}, {because}"

    def given_quantities(self, **params) -> list[str]:
        givens = self.givens(self.resolve(params)) if callable(self.givens) else self.givens
        return [str(g) for g in givens]

    def label(self) -> str:
        """A human label for an answer box: the title, or the start of the question."""
        if self.title:
            return self.title
        text = " ".join(self.question.split())
        return text if len(text) <= 60 else text[:57].rsplit(" ", 1)[0] + "..."

    def check(self, answer, **params) -> Feedback:
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
    unknown: bool = False
    """True when no exercise has the id that was asked for."""
    exercise: Exercise | None = field(default=None, repr=False, compare=False)
    params: dict | None = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        mark = "Correct" if self.correct else ("Unknown exercise" if self.unknown else "Not yet")
        lines = [f"[{self.exercise_id}] {mark}: {self.message}"]
        if not self.correct and self.hints:
            lines.append("Hint: " + self.hints[0])
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        import html

        colour, border, mark = (
            ("#e8f5e9", "#009E73", "✔ Correct")
            if self.correct
            else ("#fff4e5", "#D55E00", "✘ Not yet")
            if not self.unknown
            else ("#eeeeee", "#555555", "? Unknown exercise")
        )
        hint = ""
        if not self.correct and self.hints:
            hint = f"<div><em>Hint:</em> {html.escape(self.hints[0])}</div>"
        if (
            not self.answered
            and self.exercise is not None
            and ANSWER_BOX_RENDERER is not None
            and (web_edition() or not self.exercise.homework)
        ):  # in a kernel (Colab, Jupyter) homework shows the kernel's verdict: no answer yet
            try:
                return ANSWER_BOX_RENDERER(self.exercise, self.params or {})
            except Exception as error:  # never hide the exercise behind a build error
                hint += f"<div><em>(No answer box: {html.escape(_safe_str(error))})</em></div>"
        return (
            f'<div class="roofline-feedback" role="status" style="background:{colour};'
            f'color:#111;border-left:4px solid {border};padding:0.5em 0.8em;margin:0.3em 0">'
            f"<strong>{mark}</strong> <code>{html.escape(self.exercise_id)}</code>: "
            f"{html.escape(self.message)}{hint}</div>"
        )


#: Draws an exercise's answer box (HTML) from (exercise, params). Set by
#: `roofline.exercises.answerbox` when it is imported (the package imports it), so that this
#: module imports nothing from there: the answer box depends on the checker, not back.
ANSWER_BOX_RENDERER: Callable[[Exercise, dict], str] | None = None


def web_edition() -> bool:
    """True while the book's web edition is built (its Sphinx extension sets
    ROOFLINE_WEB_EDITION=1 for the kernels it runs), False in Colab or Jupyter."""
    import os

    return os.environ.get("ROOFLINE_WEB_EDITION") == "1"


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

        close = difflib.get_close_matches(_safe_str(exercise_id), list(_REGISTRY), n=3, cutoff=0.0)
        hint = f" The nearest ids are {', '.join(close)}." if close else ""
        raise KeyError(
            f"There is no exercise {_safe_str(exercise_id)!r}; check the id's spelling.{hint}"
        )
    return _REGISTRY[exercise_id]


def list_exercises() -> list[str]:
    return list(_REGISTRY)


def check(exercise_id, answer, **params) -> Feedback:
    """Check `answer` to exercise `exercise_id` (with optional parameters); never raises
    on what a student types. Returns a Feedback (`.correct`, `.message`)."""
    try:
        exercise = get_exercise(exercise_id)
    except KeyError as error:
        return Feedback(_safe_str(exercise_id), False, str(error.args[0]), unknown=True)
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
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _sentence(text: str) -> str:
    """A parser's message as a sentence: capital first letter, full stop."""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def _unanswered(answer) -> bool:
    return answer is None or answer is Ellipsis


def _plain(value) -> dict:
    return {
        "value": value,
        "kind": None,
        "number": value,
        "factor": 1.0,
        "binary": False,
        "text": False,
    }


#: A count or a rate of counted things typed with its noun: "116 sequences", "47 chips",
#: "27065 tokens/s", "3 tokens per second" (group 1 the noun; mirrored in the page's script).
COUNT_NOUN = re.compile(r"\s+([A-Za-z][A-Za-z-]{2,})(\s*(?:/|\s+per\s+)\s*[A-Za-z]+)?\.?$")


def count_details(text: str) -> dict | None:
    """The details of a plain number typed with a noun ("116 sequences"), or None: for a
    question that asks for a plain number, the noun says what is counted, not a unit."""
    found = COUNT_NOUN.search(text)
    if found is None or found.start() == 0 or re.search(r"b(ps|/|$)", found.group(0)):
        return None  # "5 Gbps" is bits per second, a unit slip, not a count
    try:
        details = parse_quantity_details(text[: found.start()])
    except (ValueError, TypeError):
        return None
    if details["kind"] is not None or details["factor"] != 1.0:
        return None
    return dict(details, text=True, raw=text, noun=found.group(1))


def _as_details(answer, nouns: bool = False) -> dict:
    """parse_quantity_details for text; a plain number for numbers; raises _Unreadable.
    With `nouns`, a number typed with a noun ("47 chips") is read as the number."""
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
        raise _Unreadable(
            "That is bytes (b'...'); type the number itself, or text such as '1.01 ms'."
        )
    if sympy is not None and isinstance(answer, sympy.Basic):
        free: set = getattr(answer, "free_symbols", set())
        if free:
            raise _Unreadable(
                f"That expression still contains {', '.join(sorted(map(str, free)))}; "
                "substitute numbers to get a value."
            )
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
            raise _Unreadable(
                "That text is too long to be a number; type a number such as "
                "240 or a quantity such as '1.01 ms'."
            )
        try:
            return dict(parse_quantity_details(text), text=True, raw=text)
        except (ValueError, TypeError) as error:
            counted = count_details(text) if nouns else None
            if counted is not None:
                return counted
            raise _Unreadable(_sentence(str(error))) from None
    if isinstance(answer, numbers.Number) or hasattr(type(answer), "__float__"):
        try:
            return _plain(float(answer))
        except OverflowError:
            raise _Unreadable("That number is too large to be any answer here.") from None
        except Exception:
            raise _Unreadable(
                f"Cannot read that {type(answer).__name__} as a number; type a "
                "number such as 240 or a quantity such as '1.01 ms'."
            ) from None
    raise _Unreadable(
        f"Cannot read a {type(answer).__name__} as a number; type a number "
        "such as 240 or a quantity such as '1.01 ms'."
    )


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * abs(b)


def collide(a: float, b: float, tolerance: float) -> bool:
    """Two values a student could not tell apart: one typed exactly lands within the
    tolerance of the other."""
    return _close(a, b, tolerance) or _close(b, a, tolerance)


def round_sig(value: float, digits: int) -> float:
    """`value` rounded to `digits` significant digits (as JavaScript's toPrecision)."""
    return float(f"{value:.{digits - 1}e}")


def accepts(value: float, expected: float, tolerance: float) -> bool:
    """Within the tolerance, or rounding to 3-6 significant digits brings it there: a more
    precise answer than one that passes (325.5576 when 325.6 passes) always passes too."""
    if _close(value, expected, tolerance):
        return True
    return any(_close(round_sig(value, k), expected, tolerance) for k in range(3, 7))


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


def tolerance_text(tolerance: float) -> str:
    """0.02 -> '2%', 0.001 -> '0.1%'."""
    return f"{tolerance:.0%}" if tolerance >= 0.01 or tolerance == 0 else f"{tolerance:.1%}"


def ratio_text(ratio: float) -> str:
    """A ratio >= 1 to 3 significant digits, written the same way in Python and JavaScript.

    JavaScript's toPrecision rounds the exact binary value half up (494.5 -> "495"); Python's
    format rounds half to even ("494"), so round with Decimal the way JavaScript does."""
    from decimal import ROUND_HALF_UP, Decimal

    exact = Decimal(ratio)
    if exact.is_finite() and exact != 0:
        exact = exact.quantize(Decimal(1).scaleb(exact.adjusted() - 2), rounding=ROUND_HALF_UP)
    x = float(f"{float(exact):.3g}")
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    return repr(x)


def correct_message(exercise: Exercise, expected) -> str:
    if exercise.kind == "choice":
        return f"{expected} is right."
    if exercise.kind == "symbolic":
        import sympy

        names = _symbols(exercise)
        return f"{sympy.sstr(_by_name(sympy.sympify(expected, locals=names), names))} is right."
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


#: A number with one thousands comma ("1,011"): a reader of a decimal-comma locale may mean 1.011.
_ONE_COMMA = re.compile(r"(?<![\d.,])(\d{1,3}),(\d{3})(?![\d,])")


def comma_reading(details) -> tuple | None:
    """(as typed, as read, with a point, value with a point) for an answer with one thousands
    comma, e.g. ("1,011", "1011", "1.011", 1.011e-3) for '1,011 ms'; None otherwise.

    The book reads a comma as a thousands separator (1,000), so '1,011 ms' is 1011 ms; a wrong
    answer typed that way is told how it was read, and, where the decimal reading would be
    right, to write a point."""
    raw = details.get("raw") or ""
    found = _ONE_COMMA.findall(raw)
    if len(found) != 1 or raw.count(",") != 1 or found[0][1] == "000":
        return None
    head, tail = found[0]
    dotted = _ONE_COMMA.sub(r"\1.\2", raw)
    try:
        value = parse_quantity_details(dotted)["value"]
    except (ValueError, TypeError):
        return None
    return f"{head},{tail}", head + tail, f"{head}.{tail}", value


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
        return (
            False,
            ADD_UNIT_MESSAGE.format(
                base=BASE_UNIT_NAMES[wanted], example=ADD_UNIT_EXAMPLES[wanted]
            ),
            "add a unit",
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


def _show(value: float, kind) -> str:
    unit = UNIT_FOR_KIND.get(kind)
    if unit and unit != "FLOPs/B":  # rates keep the book's display rule (4 digits), as on the page
        return format_si(value, unit, RATE_DIGITS if unit in ("FLOP/s", "B/s") else 3)
    return f"{value:.4g}"


def normalise_choice(text: str, extra: dict | None = None) -> str:
    """'Compute-bound.' -> 'compute', 'memory bound' -> 'bandwidth', 'It is link-bound' ->
    'bandwidth' (mirrored in the answer box): lower case, punctuation dropped, filler words
    (CHOICE_FILLER) dropped, then CHOICE_SYNONYMS and the exercise's `choice_words`."""
    words = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    text = " ".join(w for w in words if w not in CHOICE_FILLER)
    if extra and text in extra:
        return extra[text]
    return CHOICE_SYNONYMS.get(text, text)


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


#: Why a regime choice is wrong when it is (keyed by the normalised choice; "{choice}" is the
#: exercise's own spelling): the method that decides it, never the answer.
REGIME_REASONS = {
    "compute": "Not {choice}: an operation is compute-bound only when its intensity (FLOPs per "
    "byte) is above the chip's ridge point (peak FLOP/s over memory bandwidth); work out both "
    "and compare them.",
    "bandwidth": "Not {choice}: an operation is memory-bound only when its intensity (FLOPs per "
    "byte) is below the chip's ridge point (peak FLOP/s over memory bandwidth); work out both "
    "and compare them.",
    "link": "Not {choice}: the link sets the pace only when sending the bytes between chips "
    "takes longer than both the math and the memory traffic; compare the three times.",
}
#: Said for a wrong choice the exercise explains nowhere (no regime, no reason given).
CHOICE_NEUTRAL = "Not {choice}: work out the figure this question turns on, then choose again."


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


# ---------------------------------------------------------------- answers in parts
def _split_parts(exercise, answer) -> list:
    n = len(exercise.parts)
    if isinstance(answer, str):
        pieces = [p.strip() for p in answer.split(";")]
    elif isinstance(answer, (tuple, list)):
        pieces = list(answer)
    else:
        raise _Unreadable(
            f"This question asks for {n} answers: give them as a tuple, "
            f"(first, second), or as text separated by ';'."
        )
    if len(pieces) != n:
        raise _Unreadable(
            f"This question asks for {n} answers, separated by ';' (you gave "
            f"{len(pieces)}): " + "; ".join(p.label() for p in exercise.parts) + "."
        )
    return pieces


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


# ---------------------------------------------------------------- symbolic answers
#: The formula grammar, shared with the answer boxes' script: characters allowed,
#: functions, the largest power.
class FormulaGrammar(TypedDict):
    """The shape of `FORMULA_GRAMMAR`."""

    chars: str
    functions: list[str]
    max_power: int


FORMULA_GRAMMAR: FormulaGrammar = {
    "chars": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 +-*/^()._",
    "functions": ["sqrt"],
    "max_power": 32,  # the checker's budget too (FORMULA_POWER_CAP): one limit, both pages
}
_FORMULA_EXAMPLE = "2*B*D*F"


def formula_tokens(text: str, names) -> list:
    """Tokens of a formula (`roofline.arith.tokens`): ["num", text], ["name", name], ["op", c];
    products written side by side (2BDF, 2(B+D)) get their '*'. Raises _Unreadable."""
    g = FORMULA_GRAMMAR
    text = text.replace("**", "^")
    for c in text:
        if c not in g["chars"]:
            raise _Unreadable(
                f"A formula may hold only letters, digits and + - * / ^ ( ); "
                f"{c!r} is not allowed. Write it like {_FORMULA_EXAMPLE}."
            )
    try:
        return arith.tokens(text, names, g["functions"], implicit=True)
    except arith.ArithError as error:
        raise _Unreadable(
            f"The answer uses {error.run!r}; this question uses only "
            f"{', '.join(names)} (write products with *, e.g. {_FORMULA_EXAMPLE})."
        ) from None


def _check_formula_node(node) -> None:
    """Refuse, while parsing, a number or a power too large to be an answer."""
    if node[0] == "num" and not math.isfinite(float(node[1])):
        raise _Unreadable("That formula has a number too large to be the answer.")
    if node[0] == "pow":
        exponent = node[2]
        if arith.has_symbol(exponent):
            raise _Unreadable("Powers must be numbers, like B^2.")
        value = arith.evaluate(exponent, strict=False)
        if not math.isfinite(value) or abs(value) > FORMULA_GRAMMAR["max_power"]:
            raise _Unreadable("That formula has a power too large to be the answer.")


def formula_tree(text: str, names) -> list:
    """The formula as a tree (`roofline.arith`'s): ["num", "2"], ["sym", "B"], [op, a, b] for
    add sub mul div pow, ["neg", a], ["sqrt", a]. Raises _Unreadable with a message."""
    if len(text) > 300:
        raise _Unreadable(f"That formula is too long; write it like {_FORMULA_EXAMPLE}.")
    toks = formula_tokens(text, names)
    try:
        return arith.parse(toks, FORMULA_GRAMMAR["functions"], check=_check_formula_node)
    except arith.ArithError:
        raise _Unreadable(
            f"Could not read {text!r} as a formula; write it like {_FORMULA_EXAMPLE}."
        ) from None


def _tree_to_sympy(tree, names):
    import sympy

    op = tree[0]
    if op == "num":
        return sympy.Rational(tree[1])
    if op == "sym":
        return names[tree[1]]
    args = [_tree_to_sympy(t, names) for t in tree[1:]]
    if op == "neg":
        return -args[0]
    if op == "sqrt":
        return sympy.sqrt(args[0])
    a, b = args
    return {
        "add": lambda: a + b,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "div": lambda: a / b,
        "pow": lambda: a**b,
    }[op]()


def parse_formula(text: str, names: dict):
    """Read a student's formula ('2*B*D*F/n', '2BDF/n', 'B^2') into sympy with the shared
    grammar (no Python is evaluated, powers stay small, so it can neither run code nor hang)."""
    import sympy

    result = _tree_to_sympy(formula_tree(text, names), names)
    if result.has(sympy.zoo, sympy.nan, sympy.oo):
        raise _Unreadable("That formula divides by zero.")
    return result


def symbolic_factor_message(exercise, shown: str) -> str:
    if exercise.homework:  # the factor would hand over the answer
        return "Right shape, wrong constant factor: check the numbers in your formula."
    return f"Right shape, wrong constant factor: yours is {shown} times the answer."


def fraction_text(ratio: float) -> str:
    """A constant ratio as 2, 1/2, 3/4 (denominators up to 12), else 3 significant digits;
    written the same way by the page's script."""
    for q in range(1, 13):
        p = round(ratio * q)
        if p != 0 and abs(ratio * q - p) <= 1e-9 * max(1.0, abs(ratio * q)):
            return str(p) if q == 1 else f"{p}/{q}"
    return ratio_text(ratio)


def formula_factors(exercise) -> list[tuple]:
    """[(ratio, message)]: an answer that is `ratio` times the expected formula is off by one
    factor of a kind the message names: one symbol (a count: n chips, H heads), the
    (n-1)/n of a ring, or a constant the exercise names in `factor_words` ("3": "the three
    matmuls"). Shared by the kernel (symbolic ratio) and the page (values at points)."""
    import sympy

    names, words = _symbols(exercise), exercise.factor_words
    out: list[tuple] = []
    for name in exercise.symbols:
        s = names[name]
        what = f"{name} ({words[name]})" if name in words else name
        out.append(
            (
                s,
                f"Yours is {name} times the answer: one factor {what} too many, or a division "
                f"by {name} missing.",
            )
        )
        out.append(
            (
                1 / s,
                f"Yours is the answer divided by {name}: a factor {what} is missing, or "
                f"you divided by {name} once too often.",
            )
        )
        ring = f"({name}-1)/{name}"
        if ring not in words:  # the ring's share: only where the symbol counts chips in a ring
            continue
        out.append((s / (s - 1), f"The factor {ring} is missing: {words[ring]}."))
        out.append(
            (
                (s - 1) / s,
                f"Yours is {ring} times the answer: a factor {ring} where there is "
                "none (or twice).",
            )
        )
    for key, word in words.items():
        if key in names or "/" in key:
            continue
        value = sympy.Rational(key)
        out.append(
            (1 / value, f"Yours is 1/{key} of the answer: a factor {key} ({word}) is missing.")
        )
        out.append((value, f"Yours is {key} times the answer: a factor {key} ({word}) too many."))
    return out


def _symbols(exercise):
    import sympy

    return {name: sympy.Symbol(name, positive=True) for name in exercise.symbols}


def _by_name(expression, names):
    """Replace symbols made without positive=True by the exercise's, matching names."""
    return expression.subs(
        {
            s: names[s.name]
            for s in expression.free_symbols
            if s.name in names and s is not names[s.name]
        }
    )


_PROBES = (1.3731, 2.1789, 0.7193, 3.3311, 1.9123, 2.7059, 0.4517, 1.1467)


#: The deterministic budget of a formula the checker compares (no clock: the same answer gets
#: the same verdict on any machine, loaded or not). The book's answers use < 20 terms, < 30
#: operations and powers <= 2; a formula over any limit is wrong, with a message saying why.
FORMULA_TERMS_CAP = 400  # terms once multiplied out (`expanded_terms`)
FORMULA_OPS_CAP = 200  # operations, as sympy.count_ops counts them
FORMULA_POWER_CAP = FORMULA_GRAMMAR["max_power"]  # largest numerator or denominator of a power


def expanded_terms(expression, cap: int = FORMULA_TERMS_CAP) -> int:
    """An upper bound on the number of terms of `expression` multiplied out (capped at cap+1).

    A sum adds its terms' counts, a product multiplies them, (t terms)^k gives the number of
    monomials of degree k in t variables, C(t+k-1, k); anything else counts as one term."""
    import sympy

    if isinstance(expression, sympy.Add):
        total = sum(expanded_terms(arg, cap) for arg in expression.args)
    elif isinstance(expression, sympy.Mul):
        total = 1
        for arg in expression.args:
            total = min(total * expanded_terms(arg, cap), cap + 1)
    elif isinstance(expression, sympy.Pow) and expression.exp.is_Integer:
        terms, power = expanded_terms(expression.base, cap), abs(int(expression.exp))
        if terms <= 1:
            total = 1
        elif power > cap:  # (t >= 2 terms)^k has at least k + 1 terms
            total = cap + 1
        else:
            total = math.comb(terms + power - 1, power)
    else:
        total = 1
    return min(total, cap + 1)


def _power_problem(expression) -> str | None:
    """Why a power in `expression` is outside the budget (symbolic or past
    FORMULA_POWER_CAP), or None."""
    import sympy

    for node in sympy.preorder_traversal(expression):
        if not isinstance(node, sympy.Pow):
            continue
        exponent = node.exp
        if not exponent.is_Rational:
            return "Powers must be plain numbers, like B^2."
        if max(abs(exponent.p), exponent.q) > FORMULA_POWER_CAP:
            return (
                f"That formula has a power past {FORMULA_POWER_CAP} (or a root past the "
                f"{FORMULA_POWER_CAP}nd), too large to be the answer."
            )
    return None


def formula_budget_problem(expression) -> str | None:
    """Why `expression` is too large to compare, or None: the budget is counted, never timed
    (powers, then terms once multiplied out, then sympy.count_ops operations)."""
    import sympy

    problem = _power_problem(expression)
    if problem:
        return problem
    if expanded_terms(expression) > FORMULA_TERMS_CAP:
        return (
            f"That formula has more than {FORMULA_TERMS_CAP} terms once multiplied out, too many "
            "to check; write it in a simpler form."
        )
    operations = sympy.count_ops(expression, visual=False)
    if operations > FORMULA_OPS_CAP:
        return (
            f"That formula has {operations} operations, more than the {FORMULA_OPS_CAP} the "
            "checker compares; write it in a simpler form."
        )
    return None


def symbolically_equal(a, b) -> bool:
    """a == b for all positive values of their symbols; fast (no sympy.simplify unless needed).

    Unequal formulas are told apart by evaluating both at probe points first (no expansion)."""
    import sympy

    difference = a - b
    if difference == 0:
        return True
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
    try:
        if sympy.cancel(sympy.expand(difference)) == 0:
            return True
    except Exception:
        pass
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
        raise _Unreadable(
            f"The answer uses {', '.join(unknown)}; this question uses only {listed}."
        )
    problem = formula_budget_problem(answer)
    if problem:
        raise _Unreadable(problem)
    return _compare_symbolic(exercise, answer, expected, names, params)


def _compare_symbolic(exercise, answer, expected, names, params) -> Feedback:
    """The verdict on a readable formula: equal, a known mistake, a wrong factor, or wrong."""
    import sympy

    if symbolically_equal(answer, expected):
        return Feedback(exercise.id, True, correct_message(exercise, expected))
    for mistake in exercise.specific_mistakes(**params):
        wrong = _by_name(sympy.sympify(mistake.value, locals=names), names)
        if symbolically_equal(answer, wrong):
            return Feedback(
                exercise.id, False, mistake.message, diagnosis=mistake.message, hints=exercise.hints
            )
    try:
        ratio = sympy.cancel(answer / expected)
    except Exception:
        ratio = None
    if ratio is not None and ratio != 0:
        for factor, message in formula_factors(exercise):
            if symbolically_equal(ratio, factor):
                return Feedback(
                    exercise.id, False, message, diagnosis=message, hints=exercise.hints
                )
    if ratio is not None and ratio.is_number and ratio != 0:
        try:
            shown = fraction_text(float(ratio))
        except (TypeError, ValueError):
            shown = sympy.sstr(ratio)
        return Feedback(
            exercise.id, False, symbolic_factor_message(exercise, shown), hints=exercise.hints
        )
    return Feedback(
        exercise.id, False, "That expression is not equal to the answer.", hints=exercise.hints
    )
