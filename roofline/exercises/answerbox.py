"""Answer boxes for the static web page: check an answer in the browser, no kernel.

When the book is built, every exercise's check cell runs with `answer = None`; its
Feedback then renders `render_answer_box(exercise, params)`: an input, a button and
a feedback line, with an inline copy of `roofline/web/answerbox.js` (no CDN, no external file;
the web edition's build keeps one copy per page). The box carries,
base64-encoded so the answer is not in plain view in the page text, what `roofline`
computed at build time: the expected value, the tolerance, the `mistake_table`, the
given quantities (to recognise an echo); for a formula, its values and its mistakes'
values at a few random points; for a question in parts, one such payload per part.

The script reads answers with the same tables as the kernel (`roofline.units.GRAMMAR`
for quantities, `core.FORMULA_GRAMMAR` for formulas, `core.CHOICE_SYNONYMS` and
`CHOICE_FILLER` for choices) and follows `parse_quantity_details`, `numeric_verdict`,
`choice_verdict` and `formula_tree` step by step, so it gives the kernel's verdicts and
messages (tests/test_exercises.py runs it in node on every exercise). A formula is
checked by evaluating it at the points: the kernel's sympy check gives the same verdict.

A homework box (`exercise.homework`) carries no expected value and no mistakes: it
says to check in the notebook, with the student's own id.

DOM contract (tested in a browser by tests of the web page; keep these names):
    <div class="roofline-answer-box" data-exercise="ID" id="...">
      <input> <button> <div class="roofline-answer-feedback" role="status">
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import json
import math
import re
import secrets
from importlib import resources

from ..units import GRAMMAR, parse_quantity_details
from . import core, feedback

__all__ = [
    "answer_payload",
    "private_payload",
    "encode_payload",
    "decode_payload",
    "render_answer_box",
    "BOX_SCRIPT",
]

_COUNTER = itertools.count(1)
_TOKEN = secrets.token_hex(3)  # a new kernel never reuses an old output's ids


def _number(x):
    """A float for JSON: non-finite values as the strings JavaScript's Number() reads."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def _points(exercise, count=4) -> list:
    """Random but reproducible positive values of the formula's symbols (0.5 to 3.5)."""
    points = []
    for k in range(count):
        point = {}
        for name in exercise.symbols:
            digest = hashlib.sha256(f"{exercise.id}\0{k}\0{name}".encode()).digest()
            point[name] = 0.5 + int.from_bytes(digest[:4], "big") / 2**32 * 3
        for alias, name in exercise.symbol_aliases.items():  # another spelling, same value
            point[alias] = point[name]
        points.append(point)
    return points


def _values_at(expression, names, points) -> list:
    import sympy

    expression = core._by_name(sympy.sympify(expression, locals=names), names)
    return [
        float(expression.evalf(30, subs={names[k]: sympy.Float(v, 30) for k, v in p.items()}))
        for p in points
    ]


def answer_payload(exercise: core.Exercise, params: dict | None = None) -> dict:
    """Everything the browser needs to check an answer, computed by `roofline` now."""
    resolved = exercise.resolve(params or {})
    payload = {
        "id": exercise.id,
        "kind": exercise.kind,
        "tolerance": exercise.tolerance,
        "hint": exercise.hints[0] if exercise.hints else "",
        "homework": bool(exercise.homework),
    }
    if exercise.kind == "parts":
        payload["parts"] = [answer_payload(part, resolved) for part in exercise.parts]
        payload["labels"] = [part.label() for part in exercise.parts]
        return payload
    expected = exercise.answer(resolved)
    payload["correct_message"] = core.correct_message(exercise, expected)
    if exercise.kind == "symbolic":
        names = core._symbols(exercise)
        points = _points(exercise)
        payload["symbols"] = list(exercise.symbols) + list(exercise.symbol_aliases)
        payload["points"] = points
        payload["expected_values"] = _values_at(expected, names, points)
        payload["mistakes"] = [
            [_values_at(m.value, names, points), m.message]
            for m in exercise.specific_mistakes(**resolved)
        ]
        payload["factors"] = [
            [_values_at(ratio, names, points), message]
            for ratio, message in core.formula_factors(exercise)
        ]
        return payload
    if exercise.kind == "choice":
        extra = exercise.choice_words
        payload["expected"] = str(expected)
        payload["choices"] = {core.normalise_choice(c, extra): c for c in exercise.choices}
        payload["choice_words"] = dict(extra)
        payload["listed"] = ", ".join(repr(c) for c in exercise.choices)
        payload["mistakes"] = [  # every wrong choice, with its own message
            [key, message]
            for key, message in core.wrong_choice_messages(exercise, resolved).items()
        ]
        return payload
    payload["expected"] = _number(expected)
    payload["wanted"] = None if exercise.kind == "number" else exercise.kind
    payload["tol_text"] = core.tolerance_text(exercise.tolerance)
    payload["rounding"] = (
        [exercise.rounding[0], exercise.unrounded_message()] if exercise.rounding else None
    )
    payload["mistakes"] = [
        [_number(m.value), m.message, m.tag] for m in exercise.mistake_table(**resolved)
    ]
    givens = []
    for text in exercise.given_quantities(**resolved):
        try:
            d = parse_quantity_details(text)
        except ValueError:
            continue
        givens.append([text, d["kind"], d["factor"], _number(d["number"])])
    payload["givens"] = givens
    return payload


#: What a homework box carries: no expected value, no mistakes (nothing to back out).
def private_payload(exercise: core.Exercise) -> dict:
    return {
        "id": exercise.id,
        "kind": "private",
        "hint": "",
        "message": (
            "Homework is checked with your own student id and numbers: put your "
            "answer in the notebook cell above and run it (in Jupyter or Colab). "
            "This box does not check homework."
        ),
    }


def encode_payload(payload: dict) -> str:
    return base64.b64encode(json.dumps(payload, ensure_ascii=False).encode("utf-8")).decode("ascii")


def decode_payload(text: str) -> dict:
    """The inverse of encode_payload (what the page's script does with atob + JSON.parse)."""
    return json.loads(base64.b64decode(text).decode("utf-8"))


_SHARED = {
    "grammar": GRAMMAR,
    "formula": core.FORMULA_GRAMMAR,
    "words": {str(k): v for k, v in core.KIND_WORDS.items()},
    "synonyms": core.CHOICE_SYNONYMS,
    "filler": list(core.CHOICE_FILLER),
    "add_unit": core.ADD_UNIT_MESSAGE,
    "no_unit_fits": core.NO_UNIT_FITS_MESSAGE,
    "unit_factors": list(core.UNIT_PREFIX_FACTORS),
    "base_units": core.BASE_UNIT_NAMES,
    "unit_examples": core.ADD_UNIT_EXAMPLES,
    "count_noun": core.COUNT_NOUN.pattern,  # "116 sequences": a count with its noun
    "choice_neutral": core.CHOICE_NEUTRAL,
}

#: The checker in the browser (roofline/web/answerbox.js) with the shared tables above in place
#: of its placeholder: it mirrors core's verdicts and roofline/arith.py step by step (tests in
#: tests/test_exercises.py compare the two on every exercise and on a table of typed answers).
BOX_SCRIPT = (
    resources.files("roofline.web")
    .joinpath("answerbox.js")
    .read_text(encoding="utf-8")
    .replace(
        "__ROOFLINE_SHARED__",
        base64.b64encode(json.dumps(_SHARED, ensure_ascii=False).encode("utf-8")).decode(),
    )
)
#: The attribute that marks a box's inline copy of the script: the web edition's build drops
#: every such copy and loads the script once per page instead (_ext/web_edition.py).
SCRIPT_MARK = "data-roofline-answerbox"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text)[:40] or "x"


def render_answer_box(exercise: core.Exercise, params: dict | None = None) -> str:
    """The HTML of a self-contained answer box for `exercise` (unique ids on every call).
    A homework box carries no expected value: it says to check in the notebook."""
    private = bool(exercise.homework)
    payload = private_payload(exercise) if private else answer_payload(exercise, params)
    box_id = f"rlbox-{_slug(exercise.id)}-{_TOKEN}-{next(_COUNTER)}"
    placeholder = {
        "choice": " or ".join(exercise.choices),
        "symbolic": "a formula, e.g. 2*B*D*F",
        "number": "a number",
        "time": "a time, e.g. 12.3 ms",
        "rate": "a rate, e.g. 450 TFLOP/s",
        "bandwidth": "a bandwidth, e.g. 1.2 TB/s",
        "size": "a size, e.g. 8 GB",
        "count": "a count, e.g. 3e12 FLOPs",
        "intensity": "FLOPs per byte",
        "parts": "answers separated by ;",
    }[exercise.kind]
    intro = (
        payload["message"]
        if private
        else "Check your answer here (this page checks it in your browser; no kernel needed)."
        + (
            " A formula is checked by evaluating it at random values of "
            + ", ".join(exercise.symbols)
            + "."
            if exercise.kind == "symbolic"
            else ""
        )
    )
    e = html.escape
    return (
        f'<div class="roofline-answer-box" data-exercise="{e(exercise.id)}" id="{box_id}" '
        f'data-kind="{e(exercise.kind)}" data-payload="{encode_payload(payload)}" '
        'style="border:1px solid #999;border-radius:4px;padding:0.5em 0.8em;margin:0.4em 0">'
        f'<div style="font-size:0.9em;margin-bottom:0.3em">{e(intro)}</div>'
        f'<label for="{box_id}-input" style="margin-right:0.4em">Your answer to '
        f"&ldquo;{e(exercise.label())}&rdquo;:</label>"
        f'<input id="{box_id}-input" type="text" autocomplete="off" spellcheck="false" '
        f'placeholder="{e(placeholder)}" style="min-width:12em">'
        f'<button type="button" id="{box_id}-button" style="margin-left:0.4em">Check</button>'
        f'<div class="roofline-answer-feedback" role="status" aria-live="polite" id="{box_id}-feedback" '
        'style="margin-top:0.3em"></div>'
        "</div>"
        f"<script {SCRIPT_MARK}>{BOX_SCRIPT}\n"
        f"window.RooflineAnswerBox.init({json.dumps(box_id)});</script>"
    )


feedback.ANSWER_BOX_RENDERER = render_answer_box  # Feedback's HTML shows this box
