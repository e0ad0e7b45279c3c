"""Classroom homework: every student gets their own numbers, checked like any exercise.

In a homework notebook::

    STUDENT_ID = "s1234567"
    params = homework.parameters("part1", STUDENT_ID)   # this student's chip and sizes
    homework.given("part1", params)                      # shows them, formatted with units
    answers["q1"] = "1.01 ms"
    homework.check(STUDENT_ID, "part1", "q1", answers["q1"])

The numbers are derived from sha256(set id + normalised student id): the same id
always gets the same numbers, different ids (almost always) different ones, and the
grader (`python -m roofline grade`) recomputes every answer from the id alone.
With an empty id the notebook still runs, on the numbers of a demo id.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from . import core, editions

__all__ = [
    "HomeworkSet",
    "define_set",
    "register_question",
    "sets",
    "get_set",
    "normalise_id",
    "parameters",
    "given",
    "check",
    "exercise_id",
    "questions",
    "DEMO_ID",
    "Draw",
    "TIE_MARGIN",
    "tie_ratio",
    "draw_until",
]

DEMO_ID = "demo"


class Draw:
    """Deterministic choices from a seed (stable across Python versions, unlike `random`)."""

    def __init__(self, seed: str):
        self._seed = seed.encode("utf-8")
        self._count = 0

    def index(self, n: int) -> int:
        self._count += 1
        digest = hashlib.sha256(self._seed + b"\0" + str(self._count).encode()).digest()
        return int.from_bytes(digest[:8], "big") % n

    def choice(self, options):
        options = list(options)
        return options[self.index(len(options))]


#: A draw whose two slowest resources lie within this fraction of each other is redrawn: the
#: verdict "compute-bound" or "memory-bound" must survive a 4-significant-digit rounding, a
#: spec figure quoted one way or another and a reasonable slip, so the slowest resource is at
#: least 5 % slower than the next one for every student.
TIE_MARGIN = 0.05


def tie_ratio(times) -> float:
    """The slowest of `times` over the second slowest (>= 1; 1.0 is an exact tie)."""
    first, second = sorted((float(t) for t in times), reverse=True)[:2]
    return first / second if second > 0 else float("inf")


def draw_until(draw: Draw, make: Callable[[Draw], dict], accept: Callable[[dict], bool]):
    """`make(draw)` again and again on the same seed until `accept` takes the result.

    Deterministic: the same id always gets the same numbers, and an id whose first draw is
    accepted keeps it (redraws only continue the id's own sequence). Raises RuntimeError if
    1000 draws in a row are rejected (a rule that rejects almost everything is a bug)."""
    for _ in range(1000):
        params = make(draw)
        if accept(params):
            return params
    raise RuntimeError("1000 homework draws in a row were rejected: check the acceptance rule")


@dataclass(frozen=True)
class HomeworkSet:
    """A problem set: how to derive a student's numbers, its questions, how to show them."""

    id: str
    title: str
    make_parameters: Callable[[Draw], dict]
    questions: tuple[str, ...]
    describe: Callable[[dict], list]
    """(label, formatted value) rows that show a student's numbers."""
    notebook: str = ""
    """The notebook the book hands out (exercises/<notebook>); "" is homework_<id>.ipynb."""

    def exercise_id(self, question: str) -> str:
        return f"hw-{self.id}-{question}"

    def notebook_name(self) -> str:
        """The file name a student downloads and hands in ("homework_part1.ipynb")."""
        return self.notebook or f"homework_{self.id}.ipynb"


_SETS: dict[str, HomeworkSet] = {}


def register_question(set_id: str, q: str, demo: dict, **kwargs) -> core.Exercise:
    """Register question `q` of a homework set as exercise "hw-<set>-<q>", with the demo id's
    parameters. For a numeric answer, mistakes that coincide with the answer (or with each other)
    for a student's numbers are left out, so each one typed gets its own diagnosis."""
    listed, answer = kwargs.pop("mistakes", None), kwargs["answer"]
    tolerance = kwargs.get("tolerance", 0.02)
    if listed is not None and kwargs.get("kind") not in ("choice", "symbolic"):
        kwargs["mistakes"] = lambda p: core.distinct_mistakes(answer(p), listed(p), tolerance)
    elif listed is not None:
        kwargs["mistakes"] = listed
    return core.register(core.Exercise(id=f"hw-{set_id}-{q}", params=dict(demo), **kwargs))


def define_set(homework_set: HomeworkSet) -> HomeworkSet:
    _SETS[homework_set.id] = homework_set
    return homework_set


def _load():
    from .. import exercises  # noqa: F401  (imports every hw*.py, which define the sets)


def sets() -> list[str]:
    _load()
    return list(_SETS)


def get_set(set_id) -> HomeworkSet:
    _load()
    if set_id not in _SETS:
        raise KeyError(f"no homework set {set_id!r}; there are {', '.join(_SETS)}")
    return _SETS[set_id]


def questions(set_id) -> tuple[str, ...]:
    return get_set(set_id).questions


def exercise_id(set_id, question) -> str:
    return get_set(set_id).exercise_id(question)


def normalise_id(student_id) -> str:
    """' S1234567 ' and 's1234567' are the same student: trimmed, case-folded, one space."""
    if student_id is None:
        return ""
    return re.sub(r"\s+", " ", str(student_id)).strip().casefold()


def _derive(set_id: str, student_id: str) -> dict:
    homework_set = get_set(set_id)
    return homework_set.make_parameters(Draw(f"{set_id}\0{normalise_id(student_id)}"))


#: set id -> the id whose numbers the notebook last showed (parameters() without quiet), so a
#: check after STUDENT_ID changed without the numbers being shown again can say so.
_SHOWN: dict[str, str] = {}


def parameters(set_id, student_id, quiet: bool = False) -> dict:
    """This student's numbers for `set_id`. An empty id gives the demo id's numbers."""
    if not quiet:
        _SHOWN[str(set_id)] = normalise_id(student_id) or DEMO_ID
    if not normalise_id(student_id):
        if not quiet:
            print(
                f'Type your student id between the quotes in STUDENT_ID = "" above and run the '
                f"notebook again. Until then you see the example numbers of the demo id "
                f"{DEMO_ID!r}."
            )
        student_id = DEMO_ID
    with editions.frozen(set_id):  # the set's edition: a catalog fix changes no one's numbers
        return _derive(set_id, student_id)


class Given:
    """The numbers a student is given, as a small table (HTML in Jupyter, text elsewhere)."""

    def __init__(self, title, rows):
        self.title, self.rows = title, rows

    def __str__(self):
        width = max(len(label) for label, _ in self.rows)
        return "\n".join(
            [self.title] + [f"  {label:<{width}}  {value}" for label, value in self.rows]
        )

    __repr__ = __str__

    def _repr_html_(self):
        import html

        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(label)}</th>"
            f"<td style='text-align:left'>{html.escape(value)}</td></tr>"
            for label, value in self.rows
        )
        return (
            f"<div class='roofline-homework-given'><strong>{html.escape(self.title)}</strong>"
            f"<table>{cells}</table></div>"
        )


def given(set_id, params) -> Given:
    homework_set = get_set(set_id)
    with editions.frozen(set_id) as edition:
        rows = homework_set.describe(params)
    named = "" if edition == editions.LIVE else f" (edition {edition})"
    return Given(f"Your numbers for {homework_set.title}{named}:", rows)


def check(student_id, set_id, question, answer) -> core.Feedback:
    """Check `answer` to `question` of `set_id` with this student's numbers; never raises."""
    try:
        homework_set = get_set(set_id)
    except KeyError as error:
        return core.Feedback(str(set_id), False, str(error.args[0]))
    if question not in homework_set.questions:
        return core.Feedback(
            f"{set_id} {question}",
            False,
            f"{set_id} has no question {question!r}; it has {', '.join(homework_set.questions)}.",
        )
    params = parameters(set_id, student_id, quiet=True)
    with editions.frozen(set_id):
        feedback = core.check(homework_set.exercise_id(question), answer, **params)
    stale = _stale_numbers(set_id, student_id)
    if stale is None or not feedback.answered or feedback.correct:
        return feedback
    return core.Feedback(feedback.exercise_id, False, stale, hints=())


def _stale_numbers(set_id, student_id) -> str | None:
    """The sentence for a check whose id differs from the one the numbers above were shown
    for (STUDENT_ID changed, the cell with homework.given not run again); None if they agree."""
    shown, now = _SHOWN.get(str(set_id)), normalise_id(student_id) or DEMO_ID
    if shown is None or shown == now:
        return None
    return (
        f"STUDENT_ID is now {now!r}, but the numbers shown above are those of {shown!r}: run "
        "all cells again (Runtime > Run all) and work from the numbers shown for your id. "
        "This answer was checked against your id's numbers, not the ones shown."
    )
