"""Formatting and parsing of quantities with units.

Everything in `roofline` is stored in SI base units: seconds, bytes, bytes/s,
FLOPs (a count) and FLOP/s (a rate). These helpers turn such numbers into text
for people ("1.01 ms", "989 TFLOP/s", "16 GiB") and read text back into
numbers, so that the book never converts a unit by hand.
"""

from __future__ import annotations

import math
import re

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
]

_SI_PREFIXES = [
    (1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"),
    (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""),
]
_SMALL_PREFIXES = [(1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")]
_BINARY_PREFIXES = [
    (2.0**60, "Ei"), (2.0**50, "Pi"), (2.0**40, "Ti"), (2.0**30, "Gi"),
    (2.0**20, "Mi"), (2.0**10, "Ki"), (1.0, ""),
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


def format_flops_rate(flops_per_s, digits: int = 3) -> str:
    """A rate of floating-point operations: format_flops_rate(9.89e14) -> "989 TFLOP/s"."""
    return format_si(flops_per_s, "FLOP/s", digits)


def format_bandwidth(bytes_per_s, digits: int = 3) -> str:
    """A bandwidth in bytes per second: format_bandwidth(3.35e12) -> "3.35 TB/s"."""
    return format_si(bytes_per_s, "B/s", digits)


def format_bytes(n_bytes, binary: bool = False, digits: int = 3) -> str:
    """A size in bytes, SI ("16 GB", powers of 1000) or binary ("16 GiB", powers of 1024)."""
    x = _number(n_bytes)
    if not binary or x == 0 or not math.isfinite(x):
        return format_si(x, "B", digits)
    text, prefix = _scaled(x, _BINARY_PREFIXES, digits)
    return f"{text} {prefix}B"


def format_intensity(flops_per_byte, digits: int = 3) -> str:
    """An arithmetic intensity: "240 FLOPs/B"."""
    x = _number(flops_per_byte)
    return f"{_round_sig(x, digits) if math.isfinite(x) else x} FLOPs/B"


# ---------------------------------------------------------------- parsing

#: What each unit measures, so that an answer in the wrong kind of unit can be named.
UNIT_KINDS = {
    "s": "time", "sec": "time", "second": "time", "seconds": "time",
    "FLOP/s": "rate", "FLOPS/s": "rate", "FLOP/sec": "rate", "FLOPs/s": "rate",
    "OP/s": "rate", "OPS": "rate", "OPs/s": "rate",
    "B/s": "bandwidth", "Bps": "bandwidth", "byte/s": "bandwidth", "bytes/s": "bandwidth",
    "B": "size", "byte": "size", "bytes": "size",
    "FLOP": "count", "FLOPs": "count", "flop": "count", "flops": "count",
    "FLOPs/B": "intensity", "FLOP/B": "intensity", "FLOPs/byte": "intensity",
    "FLOP/byte": "intensity",
}

_PARSE_PREFIXES = {
    "": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50,
}

_QUANTITY = re.compile(
    r"^\s*(?P<number>[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)\s*(?P<unit>[^\d\s].*?)?\s*$"
)


def parse_quantity(text: str) -> tuple[float, str | None]:
    """Read "1.01 ms" -> (1.01e-3, "time"); a bare "4.5e10" -> (4.5e10, None).

    Accepted units: s, FLOP/s (also "FLOPS" in the marketing sense of a rate), B/s,
    B, FLOPs (a count), FLOPs/B, each with an SI prefix (k ... P, m, u/µ, n, p) or a
    binary one for bytes (KiB ... PiB). "1e12 FLOPs" is a count, "989 TFLOP/s" a rate.
    Raises ValueError with a message a student can act on.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected text such as '1.01 ms', got {type(text).__name__}")
    cleaned = text.strip().replace(",", "").replace("_", "").replace("×10^", "e").replace("x10^", "e")
    match = _QUANTITY.match(cleaned)
    if not match:
        raise ValueError(
            f"could not read {text!r} as a number with a unit; write it like '1.01 ms', "
            "'989 TFLOP/s', '4.5e10 B/s' or '240'"
        )
    number = float(match.group("number"))
    unit = (match.group("unit") or "").strip()
    if not unit:
        return number, None
    if unit.upper() == "FLOPS" and unit not in ("FLOPs", "flops"):
        unit = "FLOP/s"  # "989 TFLOPS" is how spec sheets write a rate
    # try the longest prefix first so "Gi" wins over "G" and "m" is not mistaken for "min"
    for prefix in sorted(_PARSE_PREFIXES, key=len, reverse=True):
        if prefix and not unit.startswith(prefix):
            continue
        rest = unit[len(prefix):]
        for candidate in (rest, rest.rstrip(".")):
            kind = UNIT_KINDS.get(candidate)
            if kind is None and candidate.upper() == "FLOPS" and prefix:
                kind, candidate = "rate", "FLOP/s"
            if kind is not None:
                if prefix.endswith("i") and kind not in ("size", "bandwidth"):
                    continue
                return number * _PARSE_PREFIXES[prefix], kind
    raise ValueError(
        f"unknown unit {unit!r} in {text!r}; use s, FLOP/s, B/s, B, FLOPs or FLOPs/B "
        "with an SI prefix such as m, µ, k, M, G, T"
    )
