"""Formatting and parsing of quantities with units.

Everything in `roofline` is stored in SI base units: seconds, bytes, bytes/s,
FLOPs (a count) and FLOP/s (a rate). These helpers turn such numbers into text
for people ("1.01 ms", "989 TFLOP/s", "16 GiB") and read text back into
numbers, so that the book never converts a unit by hand.
"""

from __future__ import annotations

import math
import re
from typing import Any, NoReturn, TypedDict

from .arith import NUMBER, ArithError, evaluate, parse, tokens

__all__ = [
    "format_si",
    "format_time",
    "format_flops",
    "format_flops_rate",
    "format_bandwidth",
    "format_bytes",
    "format_intensity",
    "parse_quantity",
    "UNIT_KINDS",
    "GRAMMAR",
    "parse_quantity_details",
]

_SI_PREFIXES = [
    (1e24, "Y"),
    (1e21, "Z"),
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
]
_SMALL_PREFIXES = [(1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]
_BINARY_PREFIXES = [
    (2.0**60, "Ei"),
    (2.0**50, "Pi"),
    (2.0**40, "Ti"),
    (2.0**30, "Gi"),
    (2.0**20, "Mi"),
    (2.0**10, "Ki"),
    (1.0, ""),
]


def _number(value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"expected a plain number to format, got {value!r} ({type(value).__name__})"
        ) from None
    return x


def _round_sig(x: float, digits: int) -> str:
    """`x` with `digits` significant digits, without trailing zeros."""
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:  # e.g. 1e+03 after rounding 999.6 up: print it plainly
        text = f"{float(text):.{max(digits - 1, 0)}f}"
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return text


def _scaled(value: float, prefixes, digits: int) -> tuple[str, str]:
    """Pick the largest prefix with a mantissa >= 1, rounding carried into the next prefix."""
    for factor, prefix in prefixes:
        mantissa = value / factor
        if abs(mantissa) >= 1:
            text = _round_sig(mantissa, digits)
            # 999.7 k rounds to 1000 k: prefer 1 M
            if abs(float(text)) >= 1000 and prefixes is not _BINARY_PREFIXES:
                index = [p for _, p in prefixes].index(prefix)
                if index > 0:
                    bigger_factor, bigger_prefix = prefixes[index - 1]
                    return _round_sig(value / bigger_factor, digits), bigger_prefix
            return text, prefix
    factor, prefix = prefixes[-1]
    return _round_sig(value / factor, digits), prefix


def format_si(value, unit: str, digits: int = 3) -> str:
    """`value` (in base units) with an SI prefix: format_si(3.35e12, "B/s") -> "3.35 TB/s"."""
    x = _number(value)
    if math.isnan(x):
        return f"nan {unit}"
    if math.isinf(x):
        return f"{'-' if x < 0 else ''}inf {unit}"
    if x == 0:
        return f"0 {unit}"
    if abs(x) < 1:
        prefixes = _SMALL_PREFIXES
    else:
        prefixes = _SI_PREFIXES
    text, prefix = _scaled(x, prefixes, digits)
    return f"{text} {prefix}{unit}"


def format_time(seconds, digits: int = 3) -> str:
    """A duration in seconds: format_time(1.011e-3) -> "1.01 ms"."""
    x = _number(seconds)
    if x >= 1e3 and math.isfinite(x):
        # long times read better as seconds than as "ks"
        return f"{_round_sig(x, max(digits, len(str(int(x)))))} s"
    return format_si(x, "s", digits)


def format_flops(count, digits: int = 3) -> str:
    """A number of floating-point operations (a count, not a rate): "1 TFLOPs"."""
    return format_si(count, "FLOPs", digits)


#: The book's one display rule for the quantities a reader meets in several chapters: peak
#: rates, bandwidths and intensities (ridge points, crossovers) keep 4 significant digits, so
#: the H100's dense bf16 peak always reads "989.5 TFLOP/s" and the TPU v5e's ridge point
#: "240.5 FLOPs/B" (never 989/990 or 240/241). Times, sizes and counts keep 3.
RATE_DIGITS = 4


def format_flops_rate(flops_per_s, digits: int = RATE_DIGITS) -> str:
    """A rate of floating-point operations: format_flops_rate(9.895e14) -> "989.5 TFLOP/s"."""
    return format_si(flops_per_s, "FLOP/s", digits)


def format_bandwidth(bytes_per_s, digits: int = RATE_DIGITS) -> str:
    """A bandwidth in bytes per second: format_bandwidth(3.35e12) -> "3.35 TB/s"."""
    return format_si(bytes_per_s, "B/s", digits)


def format_bytes(n_bytes, binary: bool = False, digits: int = 3) -> str:
    """A size in bytes, SI ("16 GB", powers of 1000) or binary ("16 GiB", powers of 1024)."""
    x = _number(n_bytes)
    if not binary or x == 0 or not math.isfinite(x):
        return format_si(x, "B", digits)
    text, prefix = _scaled(x, _BINARY_PREFIXES, digits)
    return f"{text} {prefix}B"


def format_intensity(flops_per_byte, digits: int = RATE_DIGITS) -> str:
    """An arithmetic intensity (FLOPs per byte), e.g. a ridge point: "240.5 FLOPs/B"."""
    x = _number(flops_per_byte)
    return f"{_round_sig(x, digits) if math.isfinite(x) else x} FLOPs/B"


# ---------------------------------------------------------------- parsing
#
# One table-driven grammar, read by `parse_quantity` here and by the answer boxes'
# JavaScript (`roofline.exercises.answerbox`), which follows the same steps with the
# same tables, so a kernel and a web page read every answer the same way.


#: The grammar's tables (JSON-ready). Prefixes: [spelling, factor, binary]; the short
#: ones are case-sensitive (m is milli, M mega), the long ones are matched in lower case.
#: Units: [spelling, base]; "exact" spellings match as typed, "folded" ones in lower case.
class Grammar(TypedDict):
    """The shape of `GRAMMAR`. Rows are lists, not tuples, so that the table survives a JSON
    round trip to the answer boxes' script unchanged."""

    #: [symbol, factor (dimensionless), binary?] rows: "Ki", "k", "u", ...
    short_prefixes: list[list[Any]]
    #: [name, factor, binary?] rows: "kibi", "kilo", ...
    long_prefixes: list[list[Any]]
    #: [spelling, base unit] rows matched case-sensitively (FLOPS is a rate, FLOPs a count)
    exact_units: list[list[str]]
    #: [spelling, base unit] rows matched in lower case
    folded_units: list[list[str]]
    #: "numerator/denominator" base units -> kind of quantity
    kinds: dict[str, str]
    number: str
    examples: str
    expression_chars: str
    infinity: list[str]
    #: [old, new] replacements made before reading
    replace: list[list[str]]
    approximately: list[str]


GRAMMAR: Grammar = {
    "short_prefixes": [
        ["Ki", 2.0**10, True],
        ["Mi", 2.0**20, True],
        ["Gi", 2.0**30, True],
        ["Ti", 2.0**40, True],
        ["Pi", 2.0**50, True],
        ["Ei", 2.0**60, True],  # format_bytes(binary=True) prints it from 1 EiB up
        ["k", 1e3, False],
        ["K", 1e3, False],
        ["M", 1e6, False],
        ["G", 1e9, False],
        ["T", 1e12, False],
        ["P", 1e15, False],
        ["E", 1e18, False],
        ["m", 1e-3, False],
        ["u", 1e-6, False],
        ["\u00b5", 1e-6, False],
        ["\u03bc", 1e-6, False],
        ["n", 1e-9, False],
        ["p", 1e-12, False],
    ],
    "long_prefixes": [
        ["kibi", 2.0**10, True],
        ["mebi", 2.0**20, True],
        ["gibi", 2.0**30, True],
        ["tebi", 2.0**40, True],
        ["pebi", 2.0**50, True],
        ["exbi", 2.0**60, True],
        ["kilo", 1e3, False],
        ["mega", 1e6, False],
        ["giga", 1e9, False],
        ["tera", 1e12, False],
        ["peta", 1e15, False],
        ["exa", 1e18, False],
        ["milli", 1e-3, False],
        ["micro", 1e-6, False],
        ["nano", 1e-9, False],
        ["pico", 1e-12, False],
    ],
    # FLOPS and OPS with a capital S are rates (the spec sheets' "989 TFLOPS");
    # FLOPs, flops and Flops are counts ("2e12 FLOPs").
    "exact_units": [
        ["FLOPS", "flop_rate"],
        ["OPS", "flop_rate"],
        ["FLOPs", "flop"],
        ["OPs", "flop"],
        ["Bps", "byte_rate"],
        ["B", "byte"],
        ["s", "second"],
    ],
    # any other spelling of "flops" (flops, Tflops, gigaflops) is a count or a rate,
    # whichever the question asks for
    "folded_units": [
        ["flops", "flop_any"],
        ["flop", "flop"],
        ["ops", "flop"],
        ["op", "flop"],
        ["bytes", "byte"],
        ["byte", "byte"],
        ["seconds", "second"],
        ["second", "second"],
        ["secs", "second"],
        ["sec", "second"],
    ],
    #: "numerator/denominator" base units -> the kind of quantity.
    "kinds": {
        "flop": "count",
        "flop/second": "rate",
        "flop_rate": "rate",
        "flop_rate/second": "rate",
        "byte": "size",
        "byte/second": "bandwidth",
        "byte_rate": "bandwidth",
        "second": "time",
        "flop/byte": "intensity",
        "flop_any": "count_or_rate",
        "flop_any/second": "rate",
        "flop_any/byte": "intensity",
    },
    #: A number as the arithmetic reads it (roofline.arith.NUMBER; the answer boxes' script
    #: compiles the same pattern).
    "number": NUMBER.pattern,
    #: How a quantity is written, for messages that say what to type.
    "examples": "'1.01 ms', '989.5 TFLOP/s', '3.35 TB/s', '1/6' or '240'",
    #: Characters that may appear in the arithmetic before the unit.
    "expression_chars": "0123456789.+-*/^() ",
    #: Whole answers that mean infinity.
    "infinity": ["inf", "+inf", "infinity", "+infinity", "\u221e"],
    #: Text replaced before reading (unicode minus, multiplication signs, spaces, "per").
    "replace": [
        ["\u2212", "-"],
        ["\u00d7", "*"],
        ["\u22c5", "*"],
        ["\u00b7", "*"],
        ["\u00a0", " "],
        ["\u202f", " "],
        ["\u2009", " "],
        ["**", "^"],
        ["_", ""],
        ["x10^", "*10^"],
        ["X10^", "*10^"],
    ],
    #: Words a student puts before an estimate ("~306", "about 6,300"), dropped before reading.
    "approximately": [
        "approximately",
        "approx.",
        "approx",
        "roughly",
        "around",
        "about",
        "circa",
        "ca.",
        "~",
        "\u2248",
    ],
}

#: What each unit measures (kept for the first version's callers).
UNIT_KINDS = {
    "s": "time",
    "FLOP/s": "rate",
    "B/s": "bandwidth",
    "B": "size",
    "FLOPs": "count",
    "FLOPs/B": "intensity",
}

_EXAMPLES = GRAMMAR["examples"]


class _QuantityError(ValueError):
    pass


def _fail(message: str) -> NoReturn:
    raise _QuantityError(message)


def _check_commas(text: str) -> str:
    """Thousands separators (1,000 or 12,345.6) go; a decimal comma (1,01) is refused."""

    def replace(match):
        run = match.group(0)
        if "," not in run:
            return run
        if re.fullmatch(r"\d{1,3}(,\d{3})+", run):
            return run.replace(",", "")
        shown = run.rstrip(",")
        dotted = shown.replace(",", ".")
        _fail(
            f"write {dotted}, not {shown}: use a point for decimals (a comma is read only as "
            "a thousands separator, as in 1,000)"
        )

    return re.sub(r"\d[\d,]*", replace, text)


def _split_expression(text: str, allowed: str):
    """(the arithmetic at the start, the unit after it)."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in allowed:
            i += 1
            continue
        # an exponent: 2e12, 1.5E-3 (the e follows a digit or a point, a digit or sign follows it)
        if c in "eE" and i > 0 and text[i - 1] in "0123456789.":
            j = i + 1
            if j < n and text[j] in "+-":
                j += 1
            if j < n and text[j] in "0123456789":
                i = j
                continue
        break
    return text[:i].strip(), text[i:].strip()


def _evaluate(expression: str, text: str) -> float:
    """Arithmetic on numbers (`roofline.arith`'s grammar without names): + - * / ^ and
    parentheses, the usual precedence. Raises _QuantityError with a message."""
    try:
        return evaluate(parse(tokens(expression)))
    except ArithError as error:
        if error.reason == "number":
            _fail(f"could not read {expression!r} as a number")
        if error.reason == "zero":
            _fail(f"{text!r} divides by zero")
        if error.reason == "root":
            _fail(f"{text!r} takes a root of a negative number")
        _fail(f"could not read {text!r} as a number with a unit; write it like {_EXAMPLES}")
        raise  # unreachable: _fail raises


def _unit_atom(part: str) -> tuple[float, str, bool] | None:
    """(factor, base unit, binary prefix?) of one side of a unit: 'TFLOP', 'GiB', 'ms'."""
    g = GRAMMAR
    for table, folded in ((g["exact_units"], False), (g["folded_units"], True)):
        for spelling, base in table:
            word = part.lower() if folded else part
            if not word.endswith(spelling):
                continue
            prefix = part[: len(part) - len(spelling)]
            if prefix == "":
                return 1.0, base, False
            for symbol, factor, binary in g["short_prefixes"]:
                if prefix == symbol:
                    return factor, base, binary
            for name, factor, binary in g["long_prefixes"]:
                if prefix.lower() == name:
                    return factor, base, binary
    return None


def parse_quantity_details(text: str) -> dict:
    """Read an answer: {"value" (base units), "kind" (or None), "number" (before the unit),
    "factor" (the unit's), "binary" (a GiB-style prefix)}. See `parse_quantity`."""
    if not isinstance(text, str):
        raise TypeError(f"expected text such as '1.01 ms', got {type(text).__name__}")
    g = GRAMMAR
    cleaned = text.strip()
    for old, new in g["replace"]:
        cleaned = cleaned.replace(old, new)
    for word in g["approximately"]:
        if cleaned.lower().startswith(word):
            cleaned = cleaned[len(word) :].strip()
            break
    if cleaned.lower() in g["infinity"]:
        return {"value": math.inf, "kind": None, "number": math.inf, "factor": 1.0, "binary": False}
    cleaned = _check_commas(cleaned)
    expression, unit = _split_expression(cleaned, g["expression_chars"])
    if not expression:
        _fail(f"could not read {text!r} as a number with a unit; write it like {_EXAMPLES}")
    number = _evaluate(expression, text)
    unit = unit.rstrip(".").strip()  # "Bandwidth." or "25 GB/sec." with a full stop
    if not unit:
        return {"value": number, "kind": None, "number": number, "factor": 1.0, "binary": False}
    if unit == "%":
        return {
            "value": number / 100,
            "kind": None,
            "number": number,
            "factor": 0.01,
            "binary": False,
        }
    words = ["/" if w.lower() == "per" else w for w in unit.split()]
    parts = "".join(words).split("/")
    atoms = [_unit_atom(p) for p in parts] if len(parts) <= 2 else [None]
    known = [a for a in atoms if a is not None]
    kind = None
    if len(known) == len(atoms):
        key = "/".join(a[1] for a in known)
        kind = g["kinds"].get(key)
        binary = any(a[2] for a in known)
        if binary and "byte" not in key:
            kind = None
    if kind is None:
        hint = (
            " (a lower-case b is a bit; write B for bytes)"
            if re.search(r"b(ps|/|$)", unit) and "byte" not in unit.lower()
            else ""
        )
        _fail(
            f"unknown unit {unit!r} in {text!r}{hint}; use s, FLOP/s, B/s, B, FLOPs or FLOPs/B "
            "with an SI prefix such as m, \u00b5, k, M, G, T"
        )
    factor = known[0][0] / (known[1][0] if len(known) == 2 else 1.0)
    return {
        "value": number * factor,
        "kind": kind,
        "number": number,
        "factor": factor,
        "binary": binary,
    }


def parse_quantity(text: str) -> tuple[float, str | None]:
    """Read "1.01 ms" -> (1.01e-3, "time"); a bare "4.5e10" -> (4.5e10, None).

    Numbers may be written as arithmetic ("1/6", "2*989e12", "1.5x10^12"); thousands
    separators (1,000) are read, a decimal comma (1,01) is refused. Units: s, FLOP/s,
    B/s, B, FLOPs (a count), FLOPs/B, in short or long spellings ("teraFLOPS", "GB/sec",
    "gigabytes", "millisecond", "OPs per byte"), with an SI prefix (k ... P, m, u/µ, n, p)
    or a binary one for bytes (KiB ... PiB). "%" divides by 100. Raises ValueError with
    a message a student can act on.
    """
    details = parse_quantity_details(text)
    kind = details["kind"]
    return details["value"], ("count" if kind == "count_or_rate" else kind)
