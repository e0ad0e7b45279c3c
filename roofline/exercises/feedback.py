"""`Feedback`: the verdict on one answer, as text and as HTML (an unanswered exercise draws
its answer box through `ANSWER_BOX_RENDERER`, which `roofline.exercises.answerbox` sets, so
that this module imports nothing from there).

Part of the checker (`roofline.exercises.core` names every module and re-exports them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .reading import _safe_str

if TYPE_CHECKING:  # annotations only: no import at run time
    from .exercise import Exercise


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
