"""The diagnoses' vocabulary: how each kind of answer is named, the typical mistakes every
numeric exercise gets (unit prefixes, factors of 2, reciprocals, GB vs GiB, a bare
percentage), why a regime choice is wrong, `Mistake`, and when two values are one answer
(`collide`, `accepts`) and how a ratio is written (`ratio_text`, mirrored by the page).

Part of the checker (`roofline.exercises.core` names every module and re-exports them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..units import RATE_DIGITS, format_si

#: How each kind of answer is written, for messages and formatting.
UNIT_FOR_KIND = {
    "time": "s",
    "rate": "FLOP/s",
    "bandwidth": "B/s",
    "size": "B",
    "count": "FLOPs",
    "intensity": "FLOPs/B",
}


#: How each kind of quantity is named in messages (None: a plain number).
KIND_WORDS = {
    "time": "a time (e.g. '1.01 ms')",
    "rate": "a rate in FLOP/s (e.g. '989.5 TFLOP/s')",
    "bandwidth": "a bandwidth in B/s (e.g. '3.35 TB/s')",
    "size": "a size in bytes (e.g. '16 GB')",
    "count": "a count of FLOPs (e.g. '2e12 FLOPs')",
    "intensity": "an intensity in FLOPs/B",
    None: "a plain number",
}


_KIND_WORDS = KIND_WORDS  # the first version's name


#: The factor-of-2 slips an exercise may name (`Exercise.twice`): each doubles the answer, or
#: (taken the other way) halves it. An exercise names only those its quantity can suffer; one
#: that names none gets a neutral message (TWICE_NEUTRAL).
TWICE_SLIPS = {
    "sparse": "a 2:4-sparse peak where the dense one belongs (or the reverse)",
    "dtype": "the bytes per element (bf16 is 2 bytes, fp32 4, fp8 and int8 1)",
    "bidirectional": "a bidirectional link bandwidth where the one-way figure belongs "
    "(or the reverse)",
    "multiply-add": "a multiply-add counted as 1 FLOP (it is 2: a multiply and an add)",
    "kv": "the cache holds K and V, two tensors, not one",
    "read-write": "bytes read and bytes written both cross the memory bus",
    "all-reduce": "an all-reduce moves the data twice (a reduce-scatter, then an all-gather)",
    "forward-backward": "the backward pass costs twice the forward (6 FLOPs per weight and "
    "token in training, 2 in inference)",
}


#: Said for an answer twice / half the expected one when the exercise names no slip.
TWICE_NEUTRAL = {
    2.0: "It is twice the answer: a factor of 2 slipped in; check each factor of your "
    "calculation against the question.",
    0.5: "It is half the answer: a factor of 2 is missing; check each factor of your "
    "calculation against the question.",
}


#: Said for an answer 100 times a fraction, typed without "%" (tag "percent"; the check
#: skips it when the answer was typed with "%").
PERCENT_MESSAGE = (
    "That is the answer as a percentage typed without the % sign: write the sign "
    "(e.g. '65%') or the fraction (e.g. 0.65)."
)


#: The GB/GiB slip, offered only where the quantity involves bytes (`Exercise.byte_units`).
GIB_MISTAKES = (
    (2.0**30 / 1e9, "It is 7.4% too large: GiB (2^30 bytes) mixed with GB (10^9 bytes)?"),
    (1e9 / 2.0**30, "It is 7.4% too small: GB (10^9 bytes) mixed with GiB (2^30 bytes)?"),
)


#: Kinds of answer whose quantity is made of bytes: the GB/GiB slip applies by default.
BYTE_KINDS = ("size", "bandwidth", "intensity")


def twice_message(factor: float, slips) -> str:
    """The message for an answer `factor` (2 or 0.5) times the expected one: the exercise's
    own factor-of-2 slips (`TWICE_SLIPS` keys), or a neutral sentence when it names none."""
    if not slips:
        return TWICE_NEUTRAL[factor]
    head = "It is twice the answer: " if factor == 2.0 else "It is half the answer: "
    return head + "; or ".join(TWICE_SLIPS[s] for s in slips) + "?"


#: (factor, message, tag) of the generic mistakes added to every numeric exercise.
#: The "prefix" ones are a slipped unit prefix: for a bare number where a unit is
#: needed they do not apply (the student is told to add a unit instead).
GENERIC_MISTAKES = (
    (
        1e3,
        "It is 1000 times too large: a unit prefix slipped (ms vs s, GB vs TB, TFLOP/s vs GFLOP/s)?",
        "prefix",
    ),
    (
        1e-3,
        "It is 1000 times too small: a unit prefix slipped (ms vs s, GB vs TB, TFLOP/s vs PFLOP/s)?",
        "prefix",
    ),
    (
        1e6,
        "It is a million times too large: a unit prefix slipped twice (µs vs s, MB vs TB)?",
        "prefix",
    ),
    (
        1e-6,
        "It is a million times too small: a unit prefix slipped twice (s vs µs, TB vs MB)?",
        "prefix",
    ),
    (1e9, "It is 10^9 times too large: GB or ns where bytes or seconds were meant?", "prefix"),
    (1e-9, "It is 10^9 times too small: bytes or seconds where GB or ns were meant?", "prefix"),
)


#: The reciprocal of the answer, explained for the kind of quantity asked.
RECIPROCAL_MESSAGES = {
    "intensity": "That is the reciprocal of the answer: the ratio is inverted (FLOPs per byte, "
    "not bytes per FLOP?)",
    "time": "That is the reciprocal of the answer: a time is the work divided by the rate "
    "(FLOPs / FLOP/s, bytes / B/s), not the rate divided by the work.",
    "rate": "That is the reciprocal of the answer: a rate is FLOPs divided by seconds, not "
    "seconds divided by FLOPs.",
    "bandwidth": "That is the reciprocal of the answer: a bandwidth is bytes divided by seconds, "
    "not seconds divided by bytes.",
    "size": "That is the reciprocal of the answer: one of your divisions is upside down.",
    "count": "That is the reciprocal of the answer: one of your divisions is upside down.",
    None: "That is the reciprocal of the answer: the ratio is upside down (swap what goes on "
    "top and what goes below).",
}


#: The tag of a Mistake that is no mistake: another accepted answer (e.g. computed with a
#: vendor's figure where the catalog keeps another); its message says so.
ACCEPTED = "accepted"


#: Said for a bare number where the question wants a unit (the number is read in base units).
ADD_UNIT_MESSAGE = (
    "Add a unit: a number alone is read in {base}, and that is not the answer. "
    "Write the unit you mean, e.g. {example}."
)


#: Said instead for a bare number that no unit prefix would make right: the number is wrong,
#: not only its unit (a unit hint there would send the reader after the wrong slip).
NO_UNIT_FITS_MESSAGE = (
    "Not the answer in any unit: a number alone is read in {base}, and no prefix (m, µ, k, G, "
    "...) makes it right. Check the arithmetic, then write the unit you mean, e.g. {example}."
)


#: The factors a unit prefix can stand for (n, µ, m, k, M, G, T, ...): a bare number times one
#: of them that matches the answer was right in another unit.
UNIT_PREFIX_FACTORS = tuple(10.0 ** (3 * k) for k in range(-5, 6) if k)


ADD_UNIT_EXAMPLES = {
    "time": "'1.01 ms'",
    "rate": "'989.5 TFLOP/s'",
    "bandwidth": "'3.35 TB/s'",
    "size": "'16 GB'",
    "count": "'2e12 FLOPs'",
    "intensity": "'240 FLOPs/B'",
}


BASE_UNIT_NAMES = {
    "time": "seconds",
    "rate": "FLOP/s",
    "bandwidth": "bytes per second",
    "size": "bytes",
    "count": "FLOPs",
    "intensity": "FLOPs per byte",
}


@dataclass(frozen=True)
class Mistake:
    """A wrong answer students typically give, and what to tell them when they do."""

    value: Any  # a number, or for a symbolic exercise the wrong formula
    message: str
    tag: str = ""


def approximation_mistakes(
    exact, approximate, what="B << D, F", tolerance=0.02, reverse=False
) -> list[Mistake]:
    """The mistake of giving the approximate value where the exact one was asked.

    With `reverse=True` the question asks for the approximate value and the mistake
    is the exact one: pass `exact=` the approximate (expected) value and
    `approximate=` the exact one. Returns [] when the two are within `tolerance`
    of each other (then either answer is right).
    """
    try:
        expected, wrong = float(exact), float(approximate)
    except (TypeError, ValueError, OverflowError):
        return []
    if not (math.isfinite(wrong) and wrong != 0):
        return []
    if math.isfinite(expected) and collide(wrong, expected, tolerance):
        return []
    if reverse:
        return [
            Mistake(
                wrong,
                f"That is the exact value; this question asks for the approximate "
                f"one (assuming {what}).",
            )
        ]
    return [
        Mistake(
            wrong,
            f"That is the approximate value (assuming {what}); this question "
            "asks for the exact one, without that approximation.",
        )
    ]


def distinct_mistakes(expected, mistakes, tolerance=0.02) -> list[Mistake]:
    """`mistakes` without those a student could not tell from the answer or from a mistake
    before them (for parameters drawn at random, where two slips may coincide)."""
    kept, taken = [], [float(expected)]
    for mistake in mistakes:
        mistake = mistake if isinstance(mistake, Mistake) else Mistake(*mistake)
        value = float(mistake.value)
        if not any(collide(value, other, tolerance) for other in taken):
            kept.append(mistake)
            taken.append(value)
    return kept


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * abs(b)


def collide(a: float, b: float, tolerance: float) -> bool:
    """Two values a student could not tell apart: one typed exactly lands within the
    tolerance of the other."""
    return _close(a, b, tolerance) or _close(b, a, tolerance)


def round_sig(value: float, digits: int) -> float:
    """`value` rounded to `digits` significant digits (as JavaScript's toPrecision)."""
    return float(f"{value:.{digits - 1}e}")


def accepts(value: float, expected: float, tolerance: float) -> bool:
    """Within the tolerance, or rounding to 3-6 significant digits brings it there: a more
    precise answer than one that passes (325.5576 when 325.6 passes) always passes too."""
    if _close(value, expected, tolerance):
        return True
    return any(_close(round_sig(value, k), expected, tolerance) for k in range(3, 7))


def tolerance_text(tolerance: float) -> str:
    """0.02 -> '2%', 0.001 -> '0.1%'."""
    return f"{tolerance:.0%}" if tolerance >= 0.01 or tolerance == 0 else f"{tolerance:.1%}"


def ratio_text(ratio: float) -> str:
    """A ratio >= 1 to 3 significant digits, written the same way in Python and JavaScript.

    JavaScript's toPrecision rounds the exact binary value half up (494.5 -> "495"); Python's
    format rounds half to even ("494"), so round with Decimal the way JavaScript does."""
    from decimal import ROUND_HALF_UP, Decimal

    exact = Decimal(ratio)
    if exact.is_finite() and exact != 0:
        exact = exact.quantize(Decimal(1).scaleb(exact.adjusted() - 2), rounding=ROUND_HALF_UP)
    x = float(f"{float(exact):.3g}")
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    return repr(x)


def _show(value: float, kind) -> str:
    unit = UNIT_FOR_KIND.get(kind)
    if unit and unit != "FLOPs/B":  # rates keep the book's display rule (4 digits), as on the page
        return format_si(value, unit, RATE_DIGITS if unit in ("FLOP/s", "B/s") else 3)
    return f"{value:.4g}"


#: Why a regime choice is wrong when it is (keyed by the normalised choice; "{choice}" is the
#: exercise's own spelling): the method that decides it, never the answer.
REGIME_REASONS = {
    "compute": "Not {choice}: an operation is compute-bound only when its intensity (FLOPs per "
    "byte) is above the chip's ridge point (peak FLOP/s over memory bandwidth); work out both "
    "and compare them.",
    "bandwidth": "Not {choice}: an operation is memory-bound only when its intensity (FLOPs per "
    "byte) is below the chip's ridge point (peak FLOP/s over memory bandwidth); work out both "
    "and compare them.",
    "link": "Not {choice}: the link sets the pace only when sending the bytes between chips "
    "takes longer than both the math and the memory traffic; compare the three times.",
}


#: Said for a wrong choice the exercise explains nowhere (no regime, no reason given).
CHOICE_NEUTRAL = "Not {choice}: work out the figure this question turns on, then choose again."
