"""Answer boxes for the static web page: check an answer in the browser, no kernel.

When the book is built, every exercise's check cell runs with `answer = None`; its
Feedback then renders `render_answer_box(exercise, params)`: an input, a button and
a feedback line, with an inline script (no CDN, no external file). The box carries,
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

from ..units import GRAMMAR, parse_quantity_details
from . import core

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
        payload["symbols"] = list(exercise.symbols)
        payload["points"] = points
        payload["expected_values"] = _values_at(expected, names, points)
        payload["mistakes"] = [
            [_values_at(m.value, names, points), m.message]
            for m in exercise.specific_mistakes(**resolved)
        ]
        return payload
    if exercise.kind == "choice":
        extra = exercise.choice_words
        payload["expected"] = str(expected)
        payload["choices"] = {core.normalise_choice(c, extra): c for c in exercise.choices}
        payload["choice_words"] = dict(extra)
        payload["listed"] = ", ".join(repr(c) for c in exercise.choices)
        payload["mistakes"] = [
            [core.normalise_choice(str(m.value), extra), m.message]
            for m in exercise.specific_mistakes(**resolved)
        ]
        return payload
    payload["expected"] = _number(expected)
    payload["wanted"] = None if exercise.kind == "number" else exercise.kind
    payload["tol_text"] = core.tolerance_text(exercise.tolerance)
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
    "base_units": core.BASE_UNIT_NAMES,
    "unit_examples": core.ADD_UNIT_EXAMPLES,
}

# The checker in the browser. It mirrors core.numeric_verdict / choice_verdict /
# _check_symbolic / _check_parts and units.parse_quantity_details step by step, with
# the shared tables above; keep them in sync (tests/test_exercises.py compares the
# two on every exercise and on the table of typed answers).
BOX_SCRIPT = r"""
(function () {
  if (window.RooflineAnswerBox) { return; }
  var S = JSON.parse(new TextDecoder("utf-8").decode(Uint8Array.from(atob("%SHARED%"), function (c) { return c.charCodeAt(0); })));
  function decode(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
    return JSON.parse(new TextDecoder("utf-8").decode(bytes));
  }
  function num(x) { return typeof x === "number" ? x : Number(x); }
  function Unreadable(msg) { this.msg = msg; }
  // ---- the shared grammar (roofline.units.GRAMMAR), read step by step as parse_quantity_details does
  var G = S.grammar;
  function fail(msg) { throw new Unreadable(msg); }
  function has(obj, key) { return Object.prototype.hasOwnProperty.call(obj, key); }
  function pyRepr(text) {  // Python's repr() of a str, for the messages that quote the answer
    var quote = (text.indexOf("'") >= 0 && text.indexOf('"') < 0) ? '"' : "'";
    var out = "";
    for (var i = 0; i < text.length; i++) {
      var c = text[i], code = text.charCodeAt(i);
      if (c === "\\") { out += "\\\\"; }
      else if (c === quote) { out += "\\" + c; }
      else if (c === "\n") { out += "\\n"; } else if (c === "\r") { out += "\\r"; }
      else if (c === "\t") { out += "\\t"; }
      else if (code < 32 || code === 127) { out += "\\x" + ("0" + code.toString(16)).slice(-2); }
      else { out += c; }
    }
    return quote + out + quote;
  }
  var EXAMPLES = "'1.01 ms', '989.5 TFLOP/s', '3.35 TB/s', '1/6' or '240'";
  function replaceAll(text, a, b) { return text.split(a).join(b); }
  function checkCommas(text) {
    return text.replace(/\d[\d,]*/g, function (run) {
      if (run.indexOf(",") < 0) { return run; }
      if (/^\d{1,3}(,\d{3})+$/.test(run)) { return replaceAll(run, ",", ""); }
      var shown = run.replace(/,+$/, "");
      fail("write " + replaceAll(shown, ",", ".") + ", not " + shown + ": use a point for decimals " +
        "(a comma is read only as a thousands separator, as in 1,000)");
    });
  }
  function splitExpression(text, allowed) {
    var i = 0, n = text.length;
    while (i < n) {
      var c = text[i];
      if (allowed.indexOf(c) >= 0) { i++; continue; }
      if ((c === "e" || c === "E") && i > 0 && "0123456789.".indexOf(text[i - 1]) >= 0) {
        var j = i + 1;
        if (j < n && (text[j] === "+" || text[j] === "-")) { j++; }
        if (j < n && "0123456789".indexOf(text[j]) >= 0) { i = j; continue; }
      }
      break;
    }
    return [text.slice(0, i).trim(), text.slice(i).trim()];
  }
  function tokens(expression) {
    var out = [], i = 0, n = expression.length, NUM = /(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/y;
    while (i < n) {
      var c = expression[i];
      if (c === " ") { i++; }
      else if ("+-*/^()".indexOf(c) >= 0) { out.push(c); i++; }
      else {
        NUM.lastIndex = i;
        var m = NUM.exec(expression);
        if (!m) { fail("could not read " + pyRepr(expression) + " as a number"); }
        out.push(parseFloat(m[0]));
        i = NUM.lastIndex;
      }
    }
    return out;
  }
  function evaluate(toks, text) {
    var pos = 0;
    function peek() { return pos < toks.length ? toks[pos] : null; }
    function take() { var t = peek(); pos++; return t; }
    function bad() {
      fail("could not read " + pyRepr(text) + " as a number with a unit; write it like " + EXAMPLES);
    }
    function expression() {
      var v = term();
      while (peek() === "+" || peek() === "-") { v = take() === "+" ? v + term() : v - term(); }
      return v;
    }
    function term() {
      var v = unary();
      while (peek() === "*" || peek() === "/") {
        if (take() === "*") { v = v * unary(); }
        else {
          var d = unary();
          if (d === 0) { fail(pyRepr(text) + " divides by zero"); }
          v = v / d;
        }
      }
      return v;
    }
    function unary() {
      if (peek() === "+" || peek() === "-") { var sign = take() === "-" ? -1 : 1; return sign * unary(); }
      return power();
    }
    function power() {
      var base = atom();
      if (peek() === "^") {
        take();
        var e = unary();
        if (base === 0 && e < 0) { fail(pyRepr(text) + " divides by zero"); }
        if (base < 0 && e !== Math.floor(e)) { fail(pyRepr(text) + " takes a root of a negative number"); }
        return Math.pow(base, e);
      }
      return base;
    }
    function atom() {
      var t = take();
      if (typeof t === "number") { return t; }
      if (t === "(") { var v = expression(); if (take() !== ")") { bad(); } return v; }
      bad();
    }
    if (!toks.length) { bad(); }
    var value = expression();
    if (pos !== toks.length) { bad(); }
    return value;
  }
  function endsWith(s, t) { return s.length >= t.length && s.slice(s.length - t.length) === t; }
  function unitAtom(part) {
    var tables = [[G.exact_units, false], [G.folded_units, true]];
    for (var t = 0; t < 2; t++) {
      var table = tables[t][0], folded = tables[t][1];
      for (var i = 0; i < table.length; i++) {
        var spelling = table[i][0], base = table[i][1];
        var word = folded ? part.toLowerCase() : part;
        if (!endsWith(word, spelling)) { continue; }
        var prefix = part.slice(0, part.length - spelling.length);
        if (prefix === "") { return [1.0, base, false]; }
        for (var k = 0; k < G.short_prefixes.length; k++) {
          if (prefix === G.short_prefixes[k][0]) { return [G.short_prefixes[k][1], base, G.short_prefixes[k][2]]; }
        }
        for (k = 0; k < G.long_prefixes.length; k++) {
          if (prefix.toLowerCase() === G.long_prefixes[k][0]) { return [G.long_prefixes[k][1], base, G.long_prefixes[k][2]]; }
        }
      }
    }
    return null;
  }
  function parseDetails(text) {
    var cleaned = text.trim();
    for (var i = 0; i < G.replace.length; i++) { cleaned = replaceAll(cleaned, G.replace[i][0], G.replace[i][1]); }
    for (var a = 0; a < G.approximately.length; a++) {
      if (cleaned.toLowerCase().indexOf(G.approximately[a]) === 0) {
        cleaned = cleaned.slice(G.approximately[a].length).trim();
        break;
      }
    }
    if (G.infinity.indexOf(cleaned.toLowerCase()) >= 0) {
      return {value: Infinity, kind: null, number: Infinity, factor: 1, binary: false};
    }
    cleaned = checkCommas(cleaned);
    var split = splitExpression(cleaned, G.expression_chars), expr = split[0], unit = split[1];
    if (!expr) { fail("could not read " + pyRepr(text) + " as a number with a unit; write it like " + EXAMPLES); }
    var number = evaluate(tokens(expr), text);
    unit = unit.replace(/\.+$/, "").trim();
    if (!unit) { return {value: number, kind: null, number: number, factor: 1, binary: false}; }
    if (unit === "%") { return {value: number / 100, kind: null, number: number, factor: 0.01, binary: false}; }
    var words = unit.split(/\s+/).filter(function (w) { return w; }).map(function (w) {
      return w.toLowerCase() === "per" ? "/" : w; });
    var parts = words.join("").split("/"), atoms = [];
    if (parts.length <= 2) { for (i = 0; i < parts.length; i++) { atoms.push(unitAtom(parts[i])); } }
    else { atoms.push(null); }
    var kind = null, binary = false;
    if (atoms.indexOf(null) < 0) {
      var key = atoms.map(function (a) { return a[1]; }).join("/");
      kind = has(G.kinds, key) ? G.kinds[key] : null;
      binary = atoms.some(function (a) { return a[2]; });
      if (binary && key.indexOf("byte") < 0) { kind = null; }
    }
    if (kind === null) {
      var hint = (/b(ps|\/|$)/.test(unit) && unit.toLowerCase().indexOf("byte") < 0)
        ? " (a lower-case b is a bit; write B for bytes)" : "";
      fail("unknown unit " + pyRepr(unit) + " in " + pyRepr(text) + hint + "; use s, FLOP/s, B/s, B, " +
        "FLOPs or FLOPs/B with an SI prefix such as m, \u00b5, k, M, G, T");
    }
    var factor = atoms[0][0] / (atoms.length === 2 ? atoms[1][0] : 1.0);
    return {value: number * factor, kind: kind, number: number, factor: factor, binary: binary};
  }

  function sentence(t) { t = t.charAt(0).toUpperCase() + t.slice(1); return /[.?!]$/.test(t) ? t : t + "."; }
  function close(a, b, tol) { return Math.abs(a - b) <= tol * Math.abs(b); }
  function accepts(v, e, tol) {
    if (close(v, e, tol)) { return true; }
    for (var k = 3; k < 7; k++) { if (close(Number(v.toPrecision(k)), e, tol)) { return true; } }
    return false;
  }
  function ratioText(r) { return String(Number(r.toPrecision(3))); }
  function fractionText(r) {
    for (var q = 1; q < 13; q++) {
      var p = Math.round(r * q);
      if (p !== 0 && Math.abs(r * q - p) <= 1e-9 * Math.max(1, Math.abs(r * q))) { return q === 1 ? String(p) : p + "/" + q; }
    }
    return ratioText(r);
  }
  function bucket(ratio) {
    var size = ratio > 1 ? ratio : 1 / ratio, side = ratio > 1 ? "too large" : "too small";
    if (size < 1.5) { return side + ", but by less than 50%"; }
    if (size < 10) { return side + ", by a factor between 1.5 and 10"; }
    return side + ", by more than a factor of 10";
  }
  function echoOf(P, d) {
    for (var i = 0; i < P.givens.length; i++) {
      var g = P.givens[i];  // [text, kind, factor, number]
      if (g[1] === d.kind && g[2] === d.factor && close(d.number, g[3], 1e-9)) { return g[0]; }
    }
    return null;
  }
  var ONE_COMMA = /(^|[^\d.,])(\d{1,3}),(\d{3})(?![\d,])/g;
  function commaReading(raw) {  // core.comma_reading
    var found = [], m;
    ONE_COMMA.lastIndex = 0;
    while ((m = ONE_COMMA.exec(raw)) !== null) { found.push(m); }
    if (found.length !== 1 || raw.split(",").length !== 2 || found[0][3] === "000") { return null; }
    var head = found[0][2], tail = found[0][3], value;
    var dotted = raw.replace(ONE_COMMA, function (all, pre, h, t) { return pre + h + "." + t; });
    try { value = parseDetails(dotted).value; } catch (e) { if (e instanceof Unreadable) { return null; } throw e; }
    return [head + "," + tail, head + tail, head + "." + tail, value];
  }
  var COUNT_PREFIXES = [["k", 1e3], ["M", 1e6], ["G", 1e9], ["T", 1e12], ["P", 1e15]];
  function missingPrefix(v, e, tol) {  // core._missing_prefix
    for (var i = 0; i < COUNT_PREFIXES.length; i++) {
      if (v > 0 && accepts(v * COUNT_PREFIXES[i][1], e, tol)) { return COUNT_PREFIXES[i][0]; }
    }
    return null;
  }
  function checkNumeric(P, text) {  // core.numeric_verdict
    text = text.trim();
    var verdict = numericCore(P, text);
    var comma = verdict[0] ? null : commaReading(text);
    if (comma === null) { return verdict; }
    if (isFinite(comma[3]) && accepts(comma[3], num(P.expected), P.tolerance)) {
      return [false, comma[0] + " is read as " + comma[1] + ": a comma separates thousands, as in 1,000. " +
        "For the decimal " + comma[2] + ", write a point."];
    }
    return [false, verdict[1] + " (Note: " + comma[0] + " is read as " + comma[1] + ", a comma separating thousands.)"];
  }
  function numericCore(P, text) {
    if (!text) { throw new Unreadable("The answer is empty; type a number."); }
    if (text.length > 100) {
      throw new Unreadable("That text is too long to be a number; type a number such as 240 " +
        "or a quantity such as '1.01 ms'.");
    }
    var d;
    try { d = parseDetails(text); } catch (e) { if (e instanceof Unreadable) { throw new Unreadable(sentence(e.msg)); } throw e; }
    var value = d.value, unitKind = d.kind, expected = num(P.expected), wanted = P.wanted;
    if (unitKind === "count_or_rate") { unitKind = (wanted === "count" || wanted === "rate") ? wanted : "count"; }
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
    var echoed = echoOf(P, d);
    if (echoed !== null) {
      return [false, "That repeats the figure the question gives (" + echoed + "); the question asks you to work from it to a new figure."];
    }
    if (accepts(value, expected, P.tolerance)) { return [true, P.correct_message]; }
    if (value < 0 && expected >= 0) { return [false, "That is negative; the answer is a positive quantity."]; }
    var bare = unitKind === null && wanted !== null && wanted !== "intensity" && wanted !== "count";
    var prefix = wanted === "count" ? missingPrefix(value, expected, P.tolerance) : null;
    if (unitKind === null && prefix !== null) {
      return [false, "A number alone counts FLOPs one by one, so " + text + " is " + text + " FLOPs. If you " +
        "mean " + text + " " + prefix + "FLOPs, write the prefix ('" + text + " " + prefix + "FLOPs') or the whole number."];
    }
    for (var i = 0; i < P.mistakes.length; i++) {
      if (bare && P.mistakes[i][2] === "prefix") { continue; }
      if (close(value, num(P.mistakes[i][0]), P.tolerance)) { return [P.mistakes[i][2] === "accepted", P.mistakes[i][1]]; }
    }
    if (bare && value !== 0) {
      return [false, S.add_unit.replace("{base}", S.base_units[wanted]).replace("{example}", S.unit_examples[wanted])];
    }
    if (value === 0) { return [false, "That is zero; the answer is not."]; }
    var ratio = value / expected;
    if (P.homework) { return [false, "Not within " + P.tol_text + " of the answer: yours is " + bucket(ratio) + "."]; }
    var direction = ratio > 1 ? "about " + ratioText(ratio) + " times too large"
                              : "about " + ratioText(1 / ratio) + " times too small";
    return [false, "Not within " + P.tol_text + " of the answer: yours is " + direction + "."];
  }
  function normaliseChoice(text, extra) {
    var words = text.toLowerCase().replace(/[^a-z0-9]+/g, " ").split(" ");
    var keep = [];
    for (var i = 0; i < words.length; i++) {
      if (words[i] && S.filler.indexOf(words[i]) < 0) { keep.push(words[i]); }
    }
    var t = keep.join(" ");
    if (extra && has(extra, t)) { return extra[t]; }
    return has(S.synonyms, t) ? S.synonyms[t] : t;
  }
  function checkChoice(P, text) {
    var t = normaliseChoice(text.slice(0, 200), P.choice_words);
    if (!has(P.choices, t)) {
      throw new Unreadable(pyRepr(Array.from(text).length > 40 ? Array.from(text).slice(0, 37).join("") + "..." : text) +
        " is not one of the choices: " + P.listed + ".");
    }
    if (P.choices[t] === P.expected) { return [true, P.correct_message]; }
    for (var i = 0; i < P.mistakes.length; i++) {
      if (P.mistakes[i][0] === t) { return [false, P.mistakes[i][1]]; }
    }
    return [false, "Not " + P.choices[t] + ": compare the operation's intensity with this chip's ridge point."];
  }
  // ---- formulas (roofline.exercises.core.formula_tree), evaluated at the payload's points
  var F = S.formula, FEX = "2*B*D*F";
  function formulaTokens(text, names) {
    text = replaceAll(text, "**", "^");
    var chars = Array.from(text);
    for (var i = 0; i < chars.length; i++) {
      if (F.chars.indexOf(chars[i]) < 0) {
        fail("A formula may hold only letters, digits and + - * / ^ ( ); " + pyRepr(chars[i]) +
          " is not allowed. Write it like " + FEX + ".");
      }
    }
    var words = names.concat(F.functions).slice().sort(function (a, b) {
      return b.length - a.length || (a < b ? -1 : a > b ? 1 : 0); });
    var toks = [], n = text.length, NUM = /(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/y, RUN = /[A-Za-z0-9_.]+/y;
    i = 0;
    while (i < n) {
      var c = text[i];
      if (c === " ") { i++; continue; }
      if ("+-*/^()".indexOf(c) >= 0) { toks.push(["op", c]); i++; continue; }
      NUM.lastIndex = i;
      var m = NUM.exec(text);
      if (m && "0123456789.".indexOf(c) >= 0) { toks.push(["num", m[0]]); i = NUM.lastIndex; continue; }
      var word = null;
      for (var k = 0; k < words.length; k++) { if (text.startsWith(words[k], i)) { word = words[k]; break; } }
      if (word === null) {
        RUN.lastIndex = i;
        fail("The answer uses " + pyRepr(RUN.exec(text)[0]) + "; this question uses only " +
          names.join(", ") + " (write products with *, e.g. " + FEX + ").");
      }
      toks.push(["name", word]);
      i += word.length;
    }
    var out = [];
    for (i = 0; i < toks.length; i++) {
      var t = toks[i];
      if (out.length) {
        var prev = out[out.length - 1];
        var left = prev[0] === "num" || (prev[0] === "name" && F.functions.indexOf(prev[1]) < 0) ||
          (prev[0] === "op" && prev[1] === ")");
        var right = t[0] === "num" || t[0] === "name" || (t[0] === "op" && t[1] === "(");
        if (left && right) { out.push(["op", "*"]); }
      }
      out.push(t);
    }
    return out;
  }
  function hasSymbol(tree) {
    if (tree[0] === "sym") { return true; }
    if (tree[0] === "num") { return false; }
    for (var i = 1; i < tree.length; i++) { if (hasSymbol(tree[i])) { return true; } }
    return false;
  }
  function evalTree(tree, point) {
    var op = tree[0];
    if (op === "num") { return parseFloat(tree[1]); }
    if (op === "sym") { return point[tree[1]]; }
    var a = evalTree(tree[1], point);
    if (op === "neg") { return -a; }
    if (op === "sqrt") { return a >= 0 ? Math.sqrt(a) : NaN; }
    var b = evalTree(tree[2], point);
    if (op === "add") { return a + b; }
    if (op === "sub") { return a - b; }
    if (op === "mul") { return a * b; }
    if (op === "div") { return b !== 0 ? a / b : Infinity; }
    return (a < 0 && b !== Math.floor(b)) ? NaN : Math.pow(a, b);
  }
  function formulaTree(text, names) {
    if (text.length > 300) { fail("That formula is too long; write it like " + FEX + "."); }
    var toks = formulaTokens(text, names), pos = 0;
    function bad() { fail("Could not read " + pyRepr(text) + " as a formula; write it like " + FEX + "."); }
    function peek() { return pos < toks.length ? toks[pos] : ["end", ""]; }
    function take() { var t = peek(); pos++; return t; }
    function isOp(t, chars) { return t[0] === "op" && chars.indexOf(t[1]) >= 0; }
    function expression() {
      var tree = term();
      while (isOp(peek(), "+-")) { tree = [take()[1] === "+" ? "add" : "sub", tree, term()]; }
      return tree;
    }
    function term() {
      var tree = unary();
      while (isOp(peek(), "*/")) { tree = [take()[1] === "*" ? "mul" : "div", tree, unary()]; }
      return tree;
    }
    function unary() {
      if (isOp(peek(), "+-")) { var sign = take()[1], inner = unary(); return sign === "-" ? ["neg", inner] : inner; }
      return power();
    }
    function power() {
      var base = atom();
      if (isOp(peek(), "^")) {
        take();
        var e = unary();
        if (hasSymbol(e)) { fail("Powers must be numbers, like B^2."); }
        var v = evalTree(e, {});
        if (!isFinite(v) || Math.abs(v) > F.max_power) { fail("That formula has a power too large to be the answer."); }
        return ["pow", base, e];
      }
      return base;
    }
    function atom() {
      var t = take();
      if (t[0] === "num") {
        if (!isFinite(parseFloat(t[1]))) { fail("That formula has a number too large to be the answer."); }
        return ["num", t[1]];
      }
      if (t[0] === "name" && F.functions.indexOf(t[1]) >= 0) {
        if (!isOp(take(), "(")) { bad(); }
        var inner = expression();
        if (!isOp(take(), ")")) { bad(); }
        return [t[1], inner];
      }
      if (t[0] === "name") { return ["sym", t[1]]; }
      if (isOp(t, "(")) { var e = expression(); if (!isOp(take(), ")")) { bad(); } return e; }
      bad();
    }
    if (!toks.length) { bad(); }
    var tree = expression();
    if (pos !== toks.length) { bad(); }
    return tree;
  }
  function sameValues(a, b) {
    for (var i = 0; i < a.length; i++) {
      if (!(Math.abs(a[i] - b[i]) <= 1e-9 * (Math.abs(a[i]) + Math.abs(b[i])))) { return false; }
    }
    return true;
  }
  function checkFormula(P, text) {
    if (!text.trim()) { throw new Unreadable("The answer is empty; write an expression such as 2*B*D*F."); }
    var tree = formulaTree(text, P.symbols), values = [];
    for (var i = 0; i < P.points.length; i++) {
      var v = evalTree(tree, P.points[i]);
      if (!isFinite(v)) { fail("That formula divides by zero."); }
      values.push(v);
    }
    if (sameValues(values, P.expected_values)) { return [true, P.correct_message]; }
    for (i = 0; i < P.mistakes.length; i++) {
      if (sameValues(values, P.mistakes[i][0])) { return [false, P.mistakes[i][1]]; }
    }
    var ratios = values.map(function (v, k) { return v / P.expected_values[k]; });
    var constant = ratios[0] !== 0 && ratios.every(function (r) { return Math.abs(r - ratios[0]) <= 1e-9 * Math.abs(ratios[0]); });
    if (constant) {
      return [false, P.homework ? "Right shape, wrong constant factor: check the numbers in your formula."
                                : "Right shape, wrong constant factor: yours is " + fractionText(ratios[0]) + " times the answer."];
    }
    return [false, "That expression is not equal to the answer."];
  }
  function checkOne(P, text) {
    if (P.kind === "choice") { return checkChoice(P, text); }
    if (P.kind === "symbolic") { return checkFormula(P, text); }
    if (P.kind === "parts") { return checkParts(P, text); }
    return checkNumeric(P, text);
  }
  function verdictOf(P, text) {
    try {
      return checkOne(P, text);
    } catch (e) {
      if (e instanceof Unreadable) { return [false, e.msg]; }
      return [false, "Could not check that answer (" + e + ")."];
    }
  }
  function checkParts(P, text) {
    var pieces = text.split(";").map(function (p) { return p.trim(); }), n = P.parts.length;
    if (pieces.length !== n) {
      throw new Unreadable("This question asks for " + n + " answers, separated by ';' (you gave " +
        pieces.length + "): " + P.labels.join("; ") + ".");
    }
    var all = true, lines = [];
    for (var i = 0; i < n; i++) {
      var v = verdictOf(P.parts[i], pieces[i]);
      all = all && v[0];
      lines.push("(" + (i + 1) + ") " + P.labels[i] + ": " + (v[0] ? "right" : "not yet") + " - " + v[1]);
    }
    return [all, lines.join(" ")];
  }
  function verdict(P, text) {
    if (P.kind === "private") { return [false, P.message]; }
    return verdictOf(P, text);
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
      var hint = (!ok && P.hint && P.kind !== "private") ? " Hint: " + P.hint : "";
      out.textContent = (ok ? "\u2714 Correct: " : "\u2718 Not yet: ") + v[1] + hint;
      out.setAttribute("data-correct", ok ? "true" : "false");
      out.style.borderLeft = "4px solid " + (ok ? "#009E73" : "#D55E00");
      out.style.padding = "0.3em 0.6em";
    }
    button.addEventListener("click", run);
    input.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { ev.preventDefault(); run(); } });
  }
  window.RooflineAnswerBox = {init: init, verdict: verdict, parseQuantity: function (t) {
    try { var d = parseDetails(t); return [d.value, d.kind === "count_or_rate" ? "count" : d.kind]; }
    catch (e) { if (e instanceof Unreadable) { throw new Error(e.msg); } throw e; }
  }, decode: decode};
})();
""".replace(
    "%SHARED%", base64.b64encode(json.dumps(_SHARED, ensure_ascii=False).encode("utf-8")).decode()
)


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
        f"<script>{BOX_SCRIPT}\nwindow.RooflineAnswerBox.init({json.dumps(box_id)});</script>"
    )
