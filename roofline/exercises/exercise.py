"""`Exercise`: one exercise, its expected answer computed by `roofline`, its hints and its
table of mistakes (the exercise's own, then the generic ones).

Part of the checker (`roofline.exercises.core` names every module and re-exports them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .feedback import Feedback
from .mistakes import (
    BYTE_KINDS,
    GENERIC_MISTAKES,
    GIB_MISTAKES,
    PERCENT_MESSAGE,
    RECIPROCAL_MESSAGES,
    TWICE_SLIPS,
    UNIT_FOR_KIND,
    Mistake,
    collide,
    twice_message,
)
from .reading import normalise_choice
from .verdicts import check_answer


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
    symbol_aliases: dict = field(default_factory=dict)
    """For a formula: other spellings a student may type for a symbol, {"W": "BW"} (an old
    name kept accepted after a rename); each is read as the symbol it names."""
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
        stray = {a: t for a, t in self.symbol_aliases.items() if t not in self.symbols}
        if stray or set(self.symbol_aliases) & set(self.symbols):
            raise ValueError(
                f"exercise {self.id}: symbol_aliases maps a new spelling to one of the symbols "
                f"{self.symbols}; got {self.symbol_aliases}"
            )
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
