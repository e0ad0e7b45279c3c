"""Self-checking exercises for the chapters and the homework problem sets.

    from roofline.exercises import check
    check("matmul-critical-batch", 240)      # -> Feedback(.correct, .message)

Every chapter keeps its exercises in a module of this package named `ch*.py`
(homework sets in `hw*.py`); all are registered when this package is imported.
"""

import importlib
import pkgutil

from . import answerbox as _answerbox  # noqa: F401  (sets feedback.ANSWER_BOX_RENDERER)
from .core import (
    UNIT_FOR_KIND,
    Exercise,
    Feedback,
    Mistake,
    check,
    get_exercise,
    list_exercises,
    register,
)

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module.startswith(("ch", "hw")):
        importlib.import_module(f"{__name__}.{_module}")

__all__ = [
    "Exercise",
    "Feedback",
    "Mistake",
    "check",
    "get_exercise",
    "list_exercises",
    "register",
    "UNIT_FOR_KIND",
]
