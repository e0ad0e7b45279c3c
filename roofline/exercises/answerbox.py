"""Answer boxes for the static web page: check an answer in the browser, no kernel.

When the book is built, every exercise's check cell runs with `answer = None`; its
Feedback then renders `render_answer_box(exercise, params)`: an input, a button and
a feedback line, with an inline script (no CDN, no external file). The box carries,
base64-encoded so the answer is not in plain view in the page text, the expected
value, the tolerance, the answer kind and the exercise's `mistake_table`, all
computed by `roofline` at build time. The script mirrors `roofline.units.parse_quantity`
and the numeric/choice checks of `roofline.exercises.core`, so it gives the same
verdicts and diagnoses as `check` in a kernel. Symbolic answers need sympy: their
box says so and points to Colab.

DOM contract (tested in a browser by tests of the web page; keep these names):
    <div class="roofline-answer-box" data-exercise="ID" id="...">
      <input> <button> <div class="roofline-answer-feedback" role="status">
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import math
import re
import secrets

from ..units import _PARSE_PREFIXES, UNIT_KINDS
from . import core

__all__ = ["answer_payload", "encode_payload", "decode_payload", "render_answer_box", "BOX_SCRIPT"]

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


def answer_payload(exercise: core.Exercise, params: dict | None = None) -> dict:
    """Everything the browser needs to check an answer, computed by `roofline` now."""
    resolved = exercise.resolve(params or {})
    payload = {"id": exercise.id, "kind": exercise.kind, "tolerance": exercise.tolerance,
               "hint": exercise.hints[0] if exercise.hints else ""}
    if exercise.kind == "symbolic":
        payload["symbols"] = list(exercise.symbols)
        payload["message"] = ("This answer is a formula, which needs sympy to compare: check it "
                              "in Colab or Jupyter with the check cell below the exercise. "
                              "This page cannot check formulas.")
        return payload
    expected = exercise.answer(resolved)
    payload["correct_message"] = core.correct_message(exercise, expected)
    if exercise.kind == "choice":
        payload["expected"] = str(expected)
        payload["choices"] = {core.normalise_choice(c): c for c in exercise.choices}
        payload["listed"] = ", ".join(repr(c) for c in exercise.choices)
        payload["mistakes"] = [[core.normalise_choice(str(m.value)), m.message]
                               for m in exercise.specific_mistakes(**resolved)]
        return payload
    payload["expected"] = _number(expected)
    payload["wanted"] = None if exercise.kind == "number" else exercise.kind
    payload["tol_text"] = f"{exercise.tolerance:.0%}"
    payload["mistakes"] = [[_number(m.value), m.message] for m in exercise.mistake_table(**resolved)]
    return payload


def encode_payload(payload: dict) -> str:
    return base64.b64encode(json.dumps(payload, ensure_ascii=False).encode("utf-8")).decode("ascii")


def decode_payload(text: str) -> dict:
    """The inverse of encode_payload (what the page's script does with atob + JSON.parse)."""
    return json.loads(base64.b64decode(text).decode("utf-8"))


_PREFIX_ORDER = sorted(_PARSE_PREFIXES, key=len, reverse=True)
_SHARED = {
    "units": UNIT_KINDS,
    "prefixes": [[p, _PARSE_PREFIXES[p]] for p in _PREFIX_ORDER],
    "words": {str(k): v for k, v in core.KIND_WORDS.items()},
    "synonyms": core.CHOICE_SYNONYMS,
}

# The checker in the browser. It mirrors core._check_numeric / _check_choice and
# units.parse_quantity step by step; keep them in sync (tests/test_exercises.py
# checks the shared tables and messages it is given).
BOX_SCRIPT = r"""
(function () {
  if (window.RooflineAnswerBox) { return; }
  var S = JSON.parse(atob("%SHARED%"));
  function decode(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    return JSON.parse(new TextDecoder("utf-8").decode(bytes));
  }
  function num(x) { return typeof x === "number" ? x : Number(x); }
  function Unreadable(msg) { this.msg = msg; }
  var QUANTITY = /^\s*([-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)\s*([^\d\s].*?)?\s*$/;
  function parseQuantity(text) {
    var cleaned = text.trim().split(",").join("").split("_").join("")
      .split("\u00d710^").join("e").split("x10^").join("e");
    var m = QUANTITY.exec(cleaned);
    if (!m) {
      throw new Unreadable("could not read '" + text + "' as a number with a unit; write it like " +
        "'1.01 ms', '989 TFLOP/s', '4.5e10 B/s' or '240'");
    }
    var number = parseFloat(m[1]), unit = (m[5] || "").trim();
    if (!unit) { return [number, null]; }
    if (unit.toUpperCase() === "FLOPS" && unit !== "FLOPs" && unit !== "flops") { unit = "FLOP/s"; }
    for (var i = 0; i < S.prefixes.length; i++) {
      var prefix = S.prefixes[i][0], factor = S.prefixes[i][1];
      if (prefix && unit.indexOf(prefix) !== 0) { continue; }
      var rest = unit.slice(prefix.length), candidates = [rest, rest.replace(/\.+$/, "")];
      for (var j = 0; j < 2; j++) {
        var c = candidates[j], kind = Object.prototype.hasOwnProperty.call(S.units, c) ? S.units[c] : null;
        if (kind === null && c.toUpperCase() === "FLOPS" && prefix) { kind = "rate"; }
        if (kind !== null) {
          if (prefix.slice(-1) === "i" && kind !== "size" && kind !== "bandwidth") { continue; }
          return [number * factor, kind];
        }
      }
    }
    throw new Unreadable("unknown unit '" + unit + "' in '" + text + "'; use s, FLOP/s, B/s, B, " +
      "FLOPs or FLOPs/B with an SI prefix such as m, \u00b5, k, M, G, T");
  }
  function close(a, b, tol) { return Math.abs(a - b) <= tol * Math.abs(b); }
  function ratioText(r) { return String(Number(r.toPrecision(3))); }
  function checkNumeric(P, text) {
    text = text.trim();
    if (!text) { throw new Unreadable("The answer is empty; type a number."); }
    if (text.length > 100) {
      throw new Unreadable("That text is too long to be a number; type a number such as 240 " +
        "or a quantity such as '1.01 ms'.");
    }
    var q = parseQuantity(text), value = q[0], unitKind = q[1];
    var expected = num(P.expected), wanted = P.wanted;
    if (unitKind !== null && wanted !== null && unitKind !== wanted) {
      return [false, "That is " + S.words[unitKind] + ", but the question asks for " + S.words[wanted] + "."];
    }
    if (unitKind !== null && wanted === null && unitKind !== "intensity") {
      return [false, "That is " + S.words[unitKind] + ", but the question asks for a plain number."];
    }
    if (isNaN(value)) { return [false, "That is NaN (not a number): check for 0/0 or inf - inf."]; }
    if (!isFinite(value)) {
      if (!isFinite(expected) && (value > 0) === (expected > 0)) { return [true, P.correct_message]; }
      return [false, "That is infinite; the answer is a finite number. Did you divide by zero?"];
    }
    if (!isFinite(expected)) {
      return [false, "There is no finite answer here: no batch size is large enough (enter inf, or float('inf'))."];
    }
    if (close(value, expected, P.tolerance)) { return [true, P.correct_message]; }
    if (value < 0 && expected >= 0) { return [false, "That is negative; the answer is a positive quantity."]; }
    for (var i = 0; i < P.mistakes.length; i++) {
      if (close(value, num(P.mistakes[i][0]), P.tolerance)) { return [false, P.mistakes[i][1]]; }
    }
    if (value === 0) { return [false, "That is zero; the answer is not."]; }
    var ratio = value / expected;
    var direction = ratio > 1 ? "about " + ratioText(ratio) + " times too large"
                              : "about " + ratioText(1 / ratio) + " times too small";
    return [false, "Not within " + P.tol_text + " of the answer: yours is " + direction + "."];
  }
  function normaliseChoice(text) {
    var words = text.trim().toLowerCase().split("-").join(" ").split("_").join(" ").split(/\s+/);
    var keep = [];
    for (var i = 0; i < words.length; i++) {
      var w = words[i];
      if (w && ["bound", "limited", "the", "it", "is"].indexOf(w) < 0) { keep.push(w); }
    }
    var t = keep.join(" ");
    return Object.prototype.hasOwnProperty.call(S.synonyms, t) ? S.synonyms[t] : t;
  }
  function checkChoice(P, text) {
    var t = normaliseChoice(text.slice(0, 200));
    if (!Object.prototype.hasOwnProperty.call(P.choices, t)) {
      throw new Unreadable("'" + text.slice(0, 40) + "' is not one of the choices: " + P.listed + ".");
    }
    if (P.choices[t] === P.expected) { return [true, P.correct_message]; }
    for (var i = 0; i < P.mistakes.length; i++) {
      if (P.mistakes[i][0] === t) { return [false, P.mistakes[i][1]]; }
    }
    return [false, "Not " + P.choices[t] + ": compare the operation's intensity with this chip's ridge point."];
  }
  function verdict(P, text) {
    if (P.kind === "symbolic") { return [false, P.message]; }
    try {
      return P.kind === "choice" ? checkChoice(P, text) : checkNumeric(P, text);
    } catch (e) {
      if (e instanceof Unreadable) { return [false, e.msg]; }
      return [false, "Could not check that answer (" + e + ")."];
    }
  }
  function init(id) {
    var box = document.getElementById(id);
    if (!box || box.getAttribute("data-ready")) { return; }
    box.setAttribute("data-ready", "1");
    var P = decode(box.getAttribute("data-payload"));
    var input = box.querySelector("input"), button = box.querySelector("button");
    var out = box.querySelector(".roofline-answer-feedback");
    function run() {
      var v = verdict(P, input.value), ok = v[0];
      var hint = (!ok && P.hint && P.kind !== "symbolic") ? " Hint: " + P.hint : "";
      out.textContent = (ok ? "\u2714 Correct: " : "\u2718 Not yet: ") + v[1] + hint;
      out.setAttribute("data-correct", ok ? "true" : "false");
      out.style.borderLeft = "4px solid " + (ok ? "#009E73" : "#D55E00");
      out.style.padding = "0.3em 0.6em";
    }
    button.addEventListener("click", run);
    input.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { ev.preventDefault(); run(); } });
  }
  window.RooflineAnswerBox = {init: init, verdict: verdict, parseQuantity: function (t) {
    try { return parseQuantity(t); } catch (e) { if (e instanceof Unreadable) { throw new Error(e.msg); } throw e; }
  }, decode: decode};
})();
""".replace("%SHARED%", base64.b64encode(json.dumps(_SHARED).encode()).decode())


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text)[:40] or "x"


def render_answer_box(exercise: core.Exercise, params: dict | None = None) -> str:
    """The HTML of a self-contained answer box for `exercise` (unique ids on every call)."""
    payload = answer_payload(exercise, params)
    box_id = f"rlbox-{_slug(exercise.id)}-{_TOKEN}-{next(_COUNTER)}"
    symbolic = exercise.kind == "symbolic"
    placeholder = {"choice": " or ".join(exercise.choices), "symbolic": "e.g. 2*B*D*F",
                   "number": "a number", "time": "a time, e.g. 12.3 ms",
                   "rate": "a rate, e.g. 450 TFLOP/s", "bandwidth": "a bandwidth, e.g. 1.2 TB/s",
                   "size": "a size, e.g. 8 GB", "count": "a count, e.g. 3e12 FLOPs",
                   "intensity": "FLOPs per byte"}[exercise.kind]
    intro = ("Check your answer here (this page checks it in your browser; no kernel needed)."
             if not symbolic else payload["message"])
    e = html.escape
    return (
        f'<div class="roofline-answer-box" data-exercise="{e(exercise.id)}" id="{box_id}" '
        f'data-kind="{e(exercise.kind)}" data-payload="{encode_payload(payload)}" '
        'style="border:1px solid #999;border-radius:4px;padding:0.5em 0.8em;margin:0.4em 0">'
        f'<div style="font-size:0.9em;margin-bottom:0.3em">{e(intro)}</div>'
        f'<label for="{box_id}-input" style="margin-right:0.4em">Your answer to <code>{e(exercise.id)}</code>:</label>'
        f'<input id="{box_id}-input" type="text" autocomplete="off" spellcheck="false" '
        f'placeholder="{e(placeholder)}" style="min-width:12em">'
        f'<button type="button" id="{box_id}-button" style="margin-left:0.4em">Check</button>'
        f'<div class="roofline-answer-feedback" role="status" aria-live="polite" id="{box_id}-feedback" '
        'style="margin-top:0.3em"></div>'
        "</div>"
        f"<script>{BOX_SCRIPT}\nwindow.RooflineAnswerBox.init({json.dumps(box_id)});</script>"
    )
