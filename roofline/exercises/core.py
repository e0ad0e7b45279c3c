"""Self-checking exercises: an answer computed by `roofline`, a tolerance, hints,
and a table of typical mistakes that says what a wrong answer looks like.

The same `mistake_table` drives the checker in a kernel (`check`) and the answer
boxes on the static web page (`roofline.exercises.answerbox`), so both give the
same verdict and the same diagnosis.

    >>> from roofline.exercises import check
    >>> check("time-1e12-flops-h100", "1.01 ms").correct
    True

The checker is one module per job, each importing only those above it; this module re-exports
every name, so `from roofline.exercises.core import ...` works as before:

- `reading`: what a student typed (numbers, units, nouns, choices, parts); `_Unreadable`
- `mistakes`: the diagnoses' vocabulary (generic mistakes, kind words, `Mistake`, tolerances)
- `feedback`: `Feedback`, the verdict and its HTML
- `formulas`: symbolic answers (grammar, parser, counted budget, comparison)
- `verdicts`: `check_answer` and the numeric, choice and parts verdicts
- `exercise`: `Exercise` and its table of mistakes
- `registry`: exercises by id, `check`
"""

from __future__ import annotations

from . import feedback as _feedback
from .exercise import (  # noqa: F401  (re-exported)
    Exercise,
    _listed_choice,
)
from .feedback import (  # noqa: F401  (re-exported)
    Feedback,
    web_edition,
)
from .formulas import (  # noqa: F401  (re-exported)
    _FORMULA_EXAMPLE,
    _PROBES,
    FORMULA_GRAMMAR,
    FORMULA_OPS_CAP,
    FORMULA_POWER_CAP,
    FORMULA_TERMS_CAP,
    FormulaGrammar,
    _by_name,
    _check_formula_node,
    _check_symbolic,
    _compare_symbolic,
    _power_problem,
    _symbols,
    _tree_to_sympy,
    expanded_terms,
    formula_budget_problem,
    formula_factors,
    formula_right_message,
    formula_tokens,
    formula_tree,
    fraction_text,
    parse_formula,
    symbolic_factor_message,
    symbolically_equal,
)
from .mistakes import (  # noqa: F401  (re-exported)
    _KIND_WORDS,
    ACCEPTED,
    ADD_UNIT_EXAMPLES,
    ADD_UNIT_MESSAGE,
    BASE_UNIT_NAMES,
    BYTE_KINDS,
    CHOICE_NEUTRAL,
    GENERIC_MISTAKES,
    GIB_MISTAKES,
    KIND_WORDS,
    NO_UNIT_FITS_MESSAGE,
    PERCENT_MESSAGE,
    RECIPROCAL_MESSAGES,
    REGIME_REASONS,
    TWICE_NEUTRAL,
    TWICE_SLIPS,
    UNIT_FOR_KIND,
    UNIT_PREFIX_FACTORS,
    Mistake,
    _close,
    _show,
    accepts,
    approximation_mistakes,
    collide,
    distinct_mistakes,
    ratio_text,
    round_sig,
    tolerance_text,
    twice_message,
)
from .reading import (  # noqa: F401  (re-exported)
    _ONE_COMMA,
    CHOICE_FILLER,
    CHOICE_SYNONYMS,
    COUNT_NOUN,
    _as_details,
    _plain,
    _safe_str,
    _sentence,
    _split_parts,
    _unanswered,
    _Unreadable,
    comma_reading,
    count_details,
    normalise_choice,
)
from .registry import (  # noqa: F401  (re-exported)
    _REGISTRY,
    check,
    get_exercise,
    list_exercises,
    register,
)
from .verdicts import (  # noqa: F401  (re-exported)
    COUNT_PREFIXES,
    _bare_count_verdict,
    _bucket,
    _check_choice,
    _check_numeric,
    _check_parts,
    _echo,
    _how_far,
    _missing_prefix,
    _numeric_verdict,
    check_answer,
    choice_verdict,
    correct_message,
    numeric_verdict,
    parts_message,
    unrounded,
    wrong_choice_messages,
)

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


def __getattr__(name: str):
    """`core.ANSWER_BOX_RENDERER` reads the one in `feedback` (set by the answer boxes)."""
    if name == "ANSWER_BOX_RENDERER":
        return _feedback.ANSWER_BOX_RENDERER
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
