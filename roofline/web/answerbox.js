// The answer boxes' checker in the browser (roofline.exercises.answerbox renders the boxes).
// It mirrors core.numeric_verdict / choice_verdict / _check_symbolic / _check_parts,
// units.parse_quantity_details and roofline/arith.py step by step, with the shared tables that
// answerbox.py writes in place of __ROOFLINE_SHARED__; tests/test_exercises.py runs it in node
// and compares its verdicts with the kernel's on every exercise and on a table of typed answers.
// In a notebook each box carries its own copy (Colab shows every output in its own frame); the
// web edition loads it once per page (_ext/web_edition.py) and each box's own script only
// calls init, or is initialised when this file loads.
(function () {
  if (window.RooflineAnswerBox) { return; }
  var S = JSON.parse(new TextDecoder("utf-8").decode(Uint8Array.from(atob("__ROOFLINE_SHARED__"), function (c) { return c.charCodeAt(0); })));
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
  var EXAMPLES = G.examples;
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
  // ---- the one arithmetic grammar (roofline/arith.py): tokens, a tree, its value
  function ArithError(reason, run) { this.reason = reason; this.run = run || ""; }
  var NUMBER = new RegExp(G.number, "y"), RUN = /[A-Za-z0-9_.]+/y, BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div"};
  function arithTokens(text, names, functions, implicit) {
    var words = names.concat(functions).slice().sort(function (a, b) {
      return b.length - a.length || (a < b ? -1 : a > b ? 1 : 0); });
    var toks = [], i = 0, n = text.length;
    while (i < n) {
      var c = text[i];
      if (c === " ") { i++; continue; }
      if ("+-*/^()".indexOf(c) >= 0) { toks.push(["op", c]); i++; continue; }
      NUMBER.lastIndex = i;
      var m = "0123456789.".indexOf(c) >= 0 ? NUMBER.exec(text) : null;
      if (m) { toks.push(["num", m[0]]); i = NUMBER.lastIndex; continue; }
      var word = null;
      for (var k = 0; k < words.length; k++) { if (text.startsWith(words[k], i)) { word = words[k]; break; } }
      if (word === null) {
        RUN.lastIndex = i;
        var run = RUN.exec(text);
        throw new ArithError(words.length ? "name" : "number", run ? run[0] : c);
      }
      toks.push(["name", word]);
      i += word.length;
    }
    return implicit ? withProducts(toks, functions) : toks;
  }
  function withProducts(toks, functions) {
    var out = [];
    for (var i = 0; i < toks.length; i++) {
      var t = toks[i];
      if (out.length) {
        var prev = out[out.length - 1];
        var left = prev[0] === "num" || (prev[0] === "name" && functions.indexOf(prev[1]) < 0) ||
          (prev[0] === "op" && prev[1] === ")");
        var right = t[0] === "num" || t[0] === "name" || (t[0] === "op" && t[1] === "(");
        if (left && right) { out.push(["op", "*"]); }
      }
      out.push(t);
    }
    return out;
  }
  function arithParse(toks, functions, check) {
    var pos = 0;
    function peek() { return pos < toks.length ? toks[pos] : ["end", ""]; }
    function take() { var t = peek(); pos++; return t; }
    function isOp(t, chars) { return t[0] === "op" && chars.indexOf(t[1]) >= 0; }
    function syntax() { throw new ArithError("syntax"); }
    function checked(node) { if (check) { check(node); } return node; }
    function expression() {
      var tree = term();
      while (isOp(peek(), "+-")) { tree = [BINARY[take()[1]], tree, term()]; }
      return tree;
    }
    function term() {
      var tree = unary();
      while (isOp(peek(), "*/")) { tree = [BINARY[take()[1]], tree, unary()]; }
      return tree;
    }
    function unary() {
      if (isOp(peek(), "+-")) { var sign = take()[1], inner = unary(); return sign === "-" ? ["neg", inner] : inner; }
      return power();
    }
    function power() {
      var base = atom();
      if (isOp(peek(), "^")) { take(); return checked(["pow", base, unary()]); }
      return base;
    }
    function atom() {
      var t = take();
      if (t[0] === "num") { return checked(["num", t[1]]); }
      if (t[0] === "name" && functions.indexOf(t[1]) >= 0) {
        if (!isOp(take(), "(")) { syntax(); }
        var inner = expression();
        if (!isOp(take(), ")")) { syntax(); }
        return [t[1], inner];
      }
      if (t[0] === "name") { return ["sym", t[1]]; }
      if (isOp(t, "(")) { var e = expression(); if (!isOp(take(), ")")) { syntax(); } return e; }
      syntax();
    }
    if (!toks.length) { syntax(); }
    var tree = expression();
    if (pos !== toks.length) { syntax(); }
    return tree;
  }
  function hasSymbol(tree) {
    if (tree[0] === "sym") { return true; }
    if (tree[0] === "num") { return false; }
    for (var i = 1; i < tree.length; i++) { if (hasSymbol(tree[i])) { return true; } }
    return false;
  }
  function arithEval(tree, values, strict) {
    function bad(reason, value) { if (strict) { throw new ArithError(reason); } return value; }
    var op = tree[0];
    if (op === "num") { return parseFloat(tree[1]); }
    if (op === "sym") { return values[tree[1]]; }
    var a = arithEval(tree[1], values, strict);
    if (op === "neg") { return -a; }
    if (op === "sqrt") { return a >= 0 ? Math.sqrt(a) : bad("root", NaN); }
    var b = arithEval(tree[2], values, strict);
    if (op === "add") { return a + b; }
    if (op === "sub") { return a - b; }
    if (op === "mul") { return a * b; }
    if (op === "div") { return b !== 0 ? a / b : bad("zero", Infinity); }
    if (a === 0 && b < 0) { return bad("zero", Infinity); }
    if (a < 0 && b !== Math.floor(b)) { return bad("root", NaN); }
    return Math.pow(a, b);
  }
  function evaluate(expression, text) {  // units._evaluate
    try { return arithEval(arithParse(arithTokens(expression, [], [], false), []), {}, true); }
    catch (e) {
      if (!(e instanceof ArithError)) { throw e; }
      if (e.reason === "number") { fail("could not read " + pyRepr(expression) + " as a number"); }
      if (e.reason === "zero") { fail(pyRepr(text) + " divides by zero"); }
      if (e.reason === "root") { fail(pyRepr(text) + " takes a root of a negative number"); }
      fail("could not read " + pyRepr(text) + " as a number with a unit; write it like " + EXAMPLES);
    }
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
    var number = evaluate(expr, text);
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
  var COUNT_NOUN = new RegExp(S.count_noun);  // core.COUNT_NOUN
  function countDetails(text) {  // core.count_details: a plain number typed with its noun
    var m = COUNT_NOUN.exec(text), d;
    if (m === null || m.index === 0 || /b(ps|\/|$)/.test(m[0])) { return null; }  // "5 Gbps": bits
    try { d = parseDetails(text.slice(0, m.index)); } catch (e) { if (e instanceof Unreadable) { return null; } throw e; }
    return (d.kind !== null || d.factor !== 1) ? null : d;
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
    try { d = parseDetails(text); } catch (e) {
      if (!(e instanceof Unreadable)) { throw e; }
      d = P.wanted === null ? countDetails(text) : null;  // "116 sequences", "27065 tokens/s"
      if (d === null) { throw new Unreadable(sentence(e.msg)); }
    }
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
    if (P.rounding && Number.isInteger(expected) && !Number.isInteger(value) &&  // core.unrounded
        (P.rounding[0] === "down" ? Math.floor(value) : Math.ceil(value)) === expected) {
      return [false, P.rounding[1]];
    }
    var bare = unitKind === null && wanted !== null && wanted !== "intensity" && wanted !== "count";
    var prefix = wanted === "count" ? missingPrefix(value, expected, P.tolerance) : null;
    if (unitKind === null && prefix !== null) {
      return [false, "A number alone counts FLOPs one by one, so " + text + " is " + text + " FLOPs. If you " +
        "mean " + text + " " + prefix + "FLOPs, write the prefix ('" + text + " " + prefix + "FLOPs') or the whole number."];
    }
    for (var i = 0; i < P.mistakes.length; i++) {
      if (bare && P.mistakes[i][2] === "prefix") { continue; }
      if (P.mistakes[i][2] === "percent" && d.factor === 0.01) { continue; }  // typed with "%"
      if (close(value, num(P.mistakes[i][0]), P.tolerance)) { return [P.mistakes[i][2] === "accepted", P.mistakes[i][1]]; }
    }
    if (bare && value !== 0) {  // core: "add a unit" only where some unit prefix makes it right
      var fits = false;
      for (var u = 0; u < S.unit_factors.length; u++) {
        if (accepts(value * S.unit_factors[u], expected, P.tolerance)) { fits = true; }
      }
      return [false, (fits ? S.add_unit : S.no_unit_fits).replace("{base}", S.base_units[wanted]).replace("{example}", S.unit_examples[wanted])];
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
    // core.wrong_choice_messages: the payload lists every wrong choice with its message
    return [false, S.choice_neutral.replace("{choice}", P.choices[t])];
  }
  // ---- formulas (roofline.exercises.core.formula_tree), evaluated at the payload's points
  var F = S.formula, FEX = "2*B*D*F";
  function formulaTokens(text, names) {  // core.formula_tokens
    text = replaceAll(text, "**", "^");
    var chars = Array.from(text);
    for (var i = 0; i < chars.length; i++) {
      if (F.chars.indexOf(chars[i]) < 0) {
        fail("A formula may hold only letters, digits and + - * / ^ ( ); " + pyRepr(chars[i]) +
          " is not allowed. Write it like " + FEX + ".");
      }
    }
    try { return arithTokens(text, names, F.functions, true); }
    catch (e) {
      if (!(e instanceof ArithError)) { throw e; }
      fail("The answer uses " + pyRepr(e.run) + "; this question uses only " +
        names.join(", ") + " (write products with *, e.g. " + FEX + ").");
    }
  }
  function checkFormulaNode(node) {  // core._check_formula_node
    if (node[0] === "num" && !isFinite(parseFloat(node[1]))) { fail("That formula has a number too large to be the answer."); }
    if (node[0] === "pow") {
      if (hasSymbol(node[2])) { fail("Powers must be numbers, like B^2."); }
      var v = arithEval(node[2], {}, false);
      if (!isFinite(v) || Math.abs(v) > F.max_power) { fail("That formula has a power too large to be the answer."); }
    }
  }
  function evalTree(tree, point) { return arithEval(tree, point, false); }
  function formulaTree(text, names) {  // core.formula_tree
    if (text.length > 300) { fail("That formula is too long; write it like " + FEX + "."); }
    var toks = formulaTokens(text, names);
    try { return arithParse(toks, F.functions, checkFormulaNode); }
    catch (e) {
      if (!(e instanceof ArithError)) { throw e; }
      fail("Could not read " + pyRepr(text) + " as a formula; write it like " + FEX + ".");
    }
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
    var factors = P.factors || [];  // core.formula_factors: off by one named kind of factor
    for (i = 0; i < factors.length; i++) {
      if (sameValues(ratios, factors[i][0])) { return [false, factors[i][1]]; }
    }
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
  // Loaded once by a web page (not inline): initialise every box on the page.
  function initAll() {
    Array.prototype.forEach.call(document.querySelectorAll(".roofline-answer-box[id]"), function (box) { init(box.id); });
  }
  if (typeof document !== "undefined" && document.querySelectorAll) {
    if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", initAll); } else { initAll(); }
  }
})();
