"""One arithmetic grammar for everything the book reads from a student: the number before a
unit ("1/6 ms", "2*989e12 FLOP/s", read by `roofline.units`) and a formula ("2*B*D*F/n", read
by `roofline.exercises.core`). The answer boxes' script (`roofline/web/answerbox.js`) has the
one JavaScript copy of this parser; tests/test_exercises.py holds the two to the same verdicts.

Grammar, with the usual precedence (a unary minus binds looser than ^, as in Python: -2^2 = -4)::

    expression := term (("+" | "-") term)*
    term       := unary (("*" | "/") unary)*
    unary      := ("+" | "-") unary | power
    power      := atom ("^" unary)?
    atom       := number | name | function "(" expression ")" | "(" expression ")"

Trees are plain lists: ["num", "2"], ["sym", "B"], [op, a, b] for op in add sub mul div pow,
["neg", a], [function, a]. Nothing here imports a heavy library.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

__all__ = ["NUMBER", "OPERATORS", "ArithError", "tokens", "parse", "evaluate", "has_symbol"]

#: A number as both parsers read it: 12, 1.5, .5, 2e12, 1.5E-3.
NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
OPERATORS = "+-*/^()"
_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div"}


class ArithError(ValueError):
    """Text the grammar cannot read. `reason` says why, for the caller's own message:
    "number" (a run that is not a number), "name" (a word that is not one of the names; `run`
    holds it), "syntax" (tokens in an order the grammar does not allow), "zero" (a division
    by zero) or "root" (a fractional power of a negative number)."""

    def __init__(self, reason: str, run: str = ""):
        super().__init__(reason if not run else f"{reason}: {run}")
        self.reason = reason
        self.run = run


def tokens(text: str, names: Iterable[str] = (), functions: Iterable[str] = (), implicit=False):
    """["num", text], ["name", word] and ["op", c] tokens of `text` (spaces dropped).

    Names and functions match longest first. With `implicit`, products written side by side
    (2BDF, 2(B+D), (B)(D)) get their "*"."""
    functions = list(functions)
    words = sorted([*names, *functions], key=lambda w: (-len(w), w))
    out: list[list[str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == " ":
            i += 1
            continue
        if c in OPERATORS:
            out.append(["op", c])
            i += 1
            continue
        match = NUMBER.match(text, i) if c in "0123456789." else None
        if match:
            out.append(["num", match.group(0)])
            i = match.end()
            continue
        word = next((w for w in words if text.startswith(w, i)), None)
        if word is None:
            run = re.compile(r"[A-Za-z0-9_.]+").match(text, i)
            raise ArithError("name" if words else "number", run.group(0) if run else c)
        out.append(["name", word])
        i += len(word)
    return _with_products(out, functions) if implicit else out


def _with_products(toks: list, functions: list) -> list:
    out: list[list[str]] = []
    for token in toks:
        if out:
            prev = out[-1]
            left = (
                prev[0] == "num"
                or (prev[0] == "name" and prev[1] not in functions)
                or prev == ["op", ")"]
            )
            right = token[0] in ("num", "name") or token == ["op", "("]
            if left and right:
                out.append(["op", "*"])
        out.append(token)
    return out


def parse(toks: list, functions: Iterable[str] = (), check: Callable | None = None) -> list:
    """The tree of a token list (see the module's grammar). `check(node)` is called on every
    "num" and "pow" node as it is built and may raise the caller's own error."""
    functions = set(functions)
    position = 0

    def peek():
        return toks[position] if position < len(toks) else ["end", ""]

    def take():
        nonlocal position
        token = peek()
        position += 1
        return token

    def checked(node):
        if check is not None:
            check(node)
        return node

    def expect_close():
        if take() != ["op", ")"]:
            raise ArithError("syntax")

    def expression():
        tree = term()
        while peek()[0] == "op" and peek()[1] in "+-":
            tree = [_BINARY[take()[1]], tree, term()]
        return tree

    def term():
        tree = unary()
        while peek()[0] == "op" and peek()[1] in "*/":
            tree = [_BINARY[take()[1]], tree, unary()]
        return tree

    def unary():
        if peek()[0] == "op" and peek()[1] in "+-":
            sign = take()[1]
            inner = unary()
            return ["neg", inner] if sign == "-" else inner
        return power()

    def power():
        base = atom()
        if peek() == ["op", "^"]:
            take()
            return checked(["pow", base, unary()])
        return base

    def atom():
        token = take()
        if token[0] == "num":
            return checked(["num", token[1]])
        if token[0] == "name" and token[1] in functions:
            if take() != ["op", "("]:
                raise ArithError("syntax")
            inner = expression()
            expect_close()
            return [token[1], inner]
        if token[0] == "name":
            return ["sym", token[1]]
        if token == ["op", "("]:
            inner = expression()
            expect_close()
            return inner
        raise ArithError("syntax")

    if not toks:
        raise ArithError("syntax")
    tree = expression()
    if position != len(toks):
        raise ArithError("syntax")
    return tree


def has_symbol(tree: list) -> bool:
    """Whether a tree names a symbol anywhere."""
    return tree[0] == "sym" or (tree[0] != "num" and any(has_symbol(t) for t in tree[1:]))


def evaluate(tree: list, values: dict | None = None, strict: bool = True) -> float:
    """The value of a tree, with `values` for its symbols. A result too large is inf. With
    `strict`, a division by zero or a fractional power of a negative number raises ArithError
    ("zero", "root"); otherwise they give inf and nan."""
    op = tree[0]
    if op == "num":
        return float(tree[1])
    if op == "sym":
        return float((values or {})[tree[1]])
    args = [evaluate(t, values, strict) for t in tree[1:]]
    if op == "neg":
        return -args[0]
    if op == "sqrt":
        if args[0] < 0:
            return _bad("root", strict, math.nan)
        return math.sqrt(args[0])
    a, b = args
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op == "div":
        return a / b if b != 0 else _bad("zero", strict, math.inf)
    if a == 0 and b < 0:
        return _bad("zero", strict, math.inf)
    if a < 0 and b != math.floor(b):
        return _bad("root", strict, math.nan)
    try:
        return a**b
    except OverflowError:
        return math.inf


def _bad(reason: str, strict: bool, value: float) -> float:
    if strict:
        raise ArithError(reason)
    return value
