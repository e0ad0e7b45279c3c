"""Symbolic answers: the formula grammar the answer boxes' script shares, the parser (no Python
is evaluated), the counted budget of a formula (no clock), equality for positive symbols, the
factor a wrong formula is off by, and the verdict on a formula.

Part of the checker (`roofline.exercises.core` names every module and re-exports them).
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import TypedDict

from .. import arith
from .feedback import Feedback
from .mistakes import ratio_text
from .reading import _unanswered, _Unreadable


#: The formula grammar, shared with the answer boxes' script: characters allowed,
#: functions, the largest power.
class FormulaGrammar(TypedDict):
    """The shape of `FORMULA_GRAMMAR`."""

    chars: str
    functions: list[str]
    max_power: int


FORMULA_GRAMMAR: FormulaGrammar = {
    "chars": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 +-*/^()._",
    "functions": ["sqrt"],
    "max_power": 32,  # the checker's budget too (FORMULA_POWER_CAP): one limit, both pages
}


_FORMULA_EXAMPLE = "2*B*D*F"


def formula_tokens(text: str, names) -> list:
    """Tokens of a formula (`roofline.arith.tokens`): ["num", text], ["name", name], ["op", c];
    products written side by side (2BDF, 2(B+D)) get their '*'. Raises _Unreadable."""
    g = FORMULA_GRAMMAR
    text = text.replace("**", "^")
    for c in text:
        if c not in g["chars"]:
            raise _Unreadable(
                f"A formula may hold only letters, digits and + - * / ^ ( ); "
                f"{c!r} is not allowed. Write it like {_FORMULA_EXAMPLE}."
            )
    try:
        return arith.tokens(text, names, g["functions"], implicit=True)
    except arith.ArithError as error:
        raise _Unreadable(
            f"The answer uses {error.run!r}; this question uses only "
            f"{', '.join(names)} (write products with *, e.g. {_FORMULA_EXAMPLE})."
        ) from None


def _check_formula_node(node) -> None:
    """Refuse, while parsing, a number or a power too large to be an answer."""
    if node[0] == "num" and not math.isfinite(float(node[1])):
        raise _Unreadable("That formula has a number too large to be the answer.")
    if node[0] == "pow":
        exponent = node[2]
        if arith.has_symbol(exponent):
            raise _Unreadable("Powers must be numbers, like B^2.")
        value = arith.evaluate(exponent, strict=False)
        if not math.isfinite(value) or abs(value) > FORMULA_GRAMMAR["max_power"]:
            raise _Unreadable("That formula has a power too large to be the answer.")


def formula_tree(text: str, names) -> list:
    """The formula as a tree (`roofline.arith`'s): ["num", "2"], ["sym", "B"], [op, a, b] for
    add sub mul div pow, ["neg", a], ["sqrt", a]. Raises _Unreadable with a message."""
    if len(text) > 300:
        raise _Unreadable(f"That formula is too long; write it like {_FORMULA_EXAMPLE}.")
    toks = formula_tokens(text, names)
    try:
        return arith.parse(toks, FORMULA_GRAMMAR["functions"], check=_check_formula_node)
    except arith.ArithError:
        raise _Unreadable(
            f"Could not read {text!r} as a formula; write it like {_FORMULA_EXAMPLE}."
        ) from None


def _tree_to_sympy(tree, names):
    import sympy

    op = tree[0]
    if op == "num":
        return sympy.Rational(tree[1])
    if op == "sym":
        return names[tree[1]]
    args = [_tree_to_sympy(t, names) for t in tree[1:]]
    if op == "neg":
        return -args[0]
    if op == "sqrt":
        return sympy.sqrt(args[0])
    a, b = args
    return {
        "add": lambda: a + b,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "div": lambda: a / b,
        "pow": lambda: a**b,
    }[op]()


def parse_formula(text: str, names: dict):
    """Read a student's formula ('2*B*D*F/n', '2BDF/n', 'B^2') into sympy with the shared
    grammar (no Python is evaluated, powers stay small, so it can neither run code nor hang)."""
    import sympy

    result = _tree_to_sympy(formula_tree(text, names), names)
    if result.has(sympy.zoo, sympy.nan, sympy.oo):
        raise _Unreadable("That formula divides by zero.")
    return result


def symbolic_factor_message(exercise, shown: str) -> str:
    if exercise.homework:  # the factor would hand over the answer
        return "Right shape, wrong constant factor: check the numbers in your formula."
    return f"Right shape, wrong constant factor: yours is {shown} times the answer."


def fraction_text(ratio: float) -> str:
    """A constant ratio as 2, 1/2, 3/4 (denominators up to 12), else 3 significant digits;
    written the same way by the page's script."""
    for q in range(1, 13):
        p = round(ratio * q)
        if p != 0 and abs(ratio * q - p) <= 1e-9 * max(1.0, abs(ratio * q)):
            return str(p) if q == 1 else f"{p}/{q}"
    return ratio_text(ratio)


def formula_factors(exercise) -> list[tuple]:
    """[(ratio, message)]: an answer that is `ratio` times the expected formula is off by one
    factor of a kind the message names: one symbol (a count: n chips, H heads), the
    (n-1)/n of a ring, or a constant the exercise names in `factor_words` ("3": "the three
    matmuls"). Shared by the kernel (symbolic ratio) and the page (values at points)."""
    import sympy

    names, words = _symbols(exercise), exercise.factor_words
    out: list[tuple] = []
    for name in exercise.symbols:
        s = names[name]
        what = f"{name} ({words[name]})" if name in words else name
        out.append(
            (
                s,
                f"Yours is {name} times the answer: one factor {what} too many, or a division "
                f"by {name} missing.",
            )
        )
        out.append(
            (
                1 / s,
                f"Yours is the answer divided by {name}: a factor {what} is missing, or "
                f"you divided by {name} once too often.",
            )
        )
        ring = f"({name}-1)/{name}"
        if ring not in words:  # the ring's share: only where the symbol counts chips in a ring
            continue
        out.append((s / (s - 1), f"The factor {ring} is missing: {words[ring]}."))
        out.append(
            (
                (s - 1) / s,
                f"Yours is {ring} times the answer: a factor {ring} where there is "
                "none (or twice).",
            )
        )
    for key, word in words.items():
        if key in names or "/" in key:
            continue
        value = sympy.Rational(key)
        out.append(
            (1 / value, f"Yours is 1/{key} of the answer: a factor {key} ({word}) is missing.")
        )
        out.append((value, f"Yours is {key} times the answer: a factor {key} ({word}) too many."))
    return out


def formula_right_message(exercise, expected) -> str:
    """What a right formula is told: the expected formula, in the exercise's symbols."""
    import sympy

    names = _symbols(exercise)
    return f"{sympy.sstr(_by_name(sympy.sympify(expected, locals=names), names))} is right."


def _symbols(exercise):
    import sympy

    names = {name: sympy.Symbol(name, positive=True) for name in exercise.symbols}
    names.update({alias: names[name] for alias, name in exercise.symbol_aliases.items()})
    return names


def _by_name(expression, names):
    """Replace symbols made without positive=True by the exercise's, matching names."""
    return expression.subs(
        {
            s: names[s.name]
            for s in expression.free_symbols
            if s.name in names and s is not names[s.name]
        }
    )


_PROBES = (1.3731, 2.1789, 0.7193, 3.3311, 1.9123, 2.7059, 0.4517, 1.1467)


#: The deterministic budget of a formula the checker compares (no clock: the same answer gets
#: the same verdict on any machine, loaded or not). The book's answers use < 20 terms, < 30
#: operations and powers <= 2; a formula over any limit is wrong, with a message saying why.
FORMULA_TERMS_CAP = 400  # terms once multiplied out (`expanded_terms`)


FORMULA_OPS_CAP = 200  # operations, as sympy.count_ops counts them


FORMULA_POWER_CAP = FORMULA_GRAMMAR["max_power"]  # largest numerator or denominator of a power


def expanded_terms(expression, cap: int = FORMULA_TERMS_CAP) -> int:
    """An upper bound on the number of terms of `expression` multiplied out (capped at cap+1).

    A sum adds its terms' counts, a product multiplies them, (t terms)^k gives the number of
    monomials of degree k in t variables, C(t+k-1, k); anything else counts as one term."""
    import sympy

    if isinstance(expression, sympy.Add):
        total = sum(expanded_terms(arg, cap) for arg in expression.args)
    elif isinstance(expression, sympy.Mul):
        total = 1
        for arg in expression.args:
            total = min(total * expanded_terms(arg, cap), cap + 1)
    elif isinstance(expression, sympy.Pow) and expression.exp.is_Integer:
        terms, power = expanded_terms(expression.base, cap), abs(int(expression.exp))
        if terms <= 1:
            total = 1
        elif power > cap:  # (t >= 2 terms)^k has at least k + 1 terms
            total = cap + 1
        else:
            total = math.comb(terms + power - 1, power)
    else:
        total = 1
    return min(total, cap + 1)


def _power_problem(expression) -> str | None:
    """Why a power in `expression` is outside the budget (symbolic or past
    FORMULA_POWER_CAP), or None."""
    import sympy

    for node in sympy.preorder_traversal(expression):
        if not isinstance(node, sympy.Pow):
            continue
        exponent = node.exp
        if not exponent.is_Rational:
            return "Powers must be plain numbers, like B^2."
        if max(abs(exponent.p), exponent.q) > FORMULA_POWER_CAP:
            return (
                f"That formula has a power past {FORMULA_POWER_CAP} (or a root past the "
                f"{FORMULA_POWER_CAP}nd), too large to be the answer."
            )
    return None


def formula_budget_problem(expression) -> str | None:
    """Why `expression` is too large to compare, or None: the budget is counted, never timed
    (powers, then terms once multiplied out, then sympy.count_ops operations)."""
    import sympy

    problem = _power_problem(expression)
    if problem:
        return problem
    if expanded_terms(expression) > FORMULA_TERMS_CAP:
        return (
            f"That formula has more than {FORMULA_TERMS_CAP} terms once multiplied out, too many "
            "to check; write it in a simpler form."
        )
    operations = sympy.count_ops(expression, visual=False)
    if operations > FORMULA_OPS_CAP:
        return (
            f"That formula has {operations} operations, more than the {FORMULA_OPS_CAP} the "
            "checker compares; write it in a simpler form."
        )
    return None


def symbolically_equal(a, b) -> bool:
    """a == b for all positive values of their symbols; fast (no sympy.simplify unless needed).

    Unequal formulas are told apart by evaluating both at probe points first (no expansion)."""
    import sympy

    difference = a - b
    if difference == 0:
        return True
    symbols = sorted(difference.free_symbols, key=lambda s: s.name)
    for shift in (0, 3):
        point = {s: _PROBES[(i + shift) % len(_PROBES)] for i, s in enumerate(symbols)}
        try:
            d = complex(difference.evalf(subs=point))
            scale = abs(complex(a.evalf(subs=point))) + abs(complex(b.evalf(subs=point)))
        except (TypeError, ValueError):
            break
        if not math.isfinite(abs(d)) or abs(d) > 1e-9 * max(scale, 1e-300):
            return False
    try:
        if sympy.cancel(sympy.expand(difference)) == 0:
            return True
    except Exception:
        pass
    return sympy.simplify(difference) == 0  # equal at the probes: let sympy decide


def _check_symbolic(exercise, answer, params) -> Feedback:
    import sympy

    names = _symbols(exercise)
    expected = _by_name(sympy.sympify(exercise.answer(params), locals=names), names)
    listed = ", ".join(exercise.symbols)
    if _unanswered(answer):
        raise _Unreadable(f"No answer yet: write an expression in {listed}.")
    if isinstance(answer, str):
        if not answer.strip():
            raise _Unreadable("The answer is empty; write an expression such as 2*B*D*F.")
        answer = parse_formula(answer, names)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(answer, np.generic):
        answer = answer.item()
    if isinstance(answer, bool) or not isinstance(answer, (sympy.Basic, numbers.Number)):
        raise _Unreadable(f"Write a sympy expression in {listed} (or a string such as '2*B*D*F').")
    if isinstance(answer, complex) or (isinstance(answer, float) and not math.isfinite(answer)):
        raise _Unreadable(f"That is a number; the answer is an expression in {listed}.")
    answer = sympy.sympify(answer)
    if not isinstance(answer, sympy.Expr):
        raise _Unreadable(f"That is not an expression in {listed}; write one such as 2*B*D*F.")
    answer = _by_name(answer, names)
    unknown = sorted(s.name for s in answer.free_symbols if s.name not in names)
    if unknown:
        raise _Unreadable(
            f"The answer uses {', '.join(unknown)}; this question uses only {listed}."
        )
    problem = formula_budget_problem(answer)
    if problem:
        raise _Unreadable(problem)
    return _compare_symbolic(exercise, answer, expected, names, params)


def _compare_symbolic(exercise, answer, expected, names, params) -> Feedback:
    """The verdict on a readable formula: equal, a known mistake, a wrong factor, or wrong."""
    import sympy

    if symbolically_equal(answer, expected):
        return Feedback(exercise.id, True, formula_right_message(exercise, expected))
    for mistake in exercise.specific_mistakes(**params):
        wrong = _by_name(sympy.sympify(mistake.value, locals=names), names)
        if symbolically_equal(answer, wrong):
            return Feedback(
                exercise.id, False, mistake.message, diagnosis=mistake.message, hints=exercise.hints
            )
    try:
        ratio = sympy.cancel(answer / expected)
    except Exception:
        ratio = None
    if ratio is not None and ratio != 0:
        for factor, message in formula_factors(exercise):
            if symbolically_equal(ratio, factor):
                return Feedback(
                    exercise.id, False, message, diagnosis=message, hints=exercise.hints
                )
    if ratio is not None and ratio.is_number and ratio != 0:
        try:
            shown = fraction_text(float(ratio))
        except (TypeError, ValueError):
            shown = sympy.sstr(ratio)
        return Feedback(
            exercise.id, False, symbolic_factor_message(exercise, shown), hints=exercise.hints
        )
    return Feedback(
        exercise.id, False, "That expression is not equal to the answer.", hints=exercise.hints
    )
