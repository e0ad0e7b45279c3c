"""The exercises by id: `register`, `get_exercise`, `list_exercises`, and `check`, which never
raises on what a student types.

Part of the checker (`roofline.exercises.core` names every module and re-exports them).
"""

from __future__ import annotations

from .exercise import Exercise
from .feedback import Feedback
from .reading import _safe_str
from .verdicts import check_answer

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
