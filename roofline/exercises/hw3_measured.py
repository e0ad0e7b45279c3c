"""Homework part 3: reading a measured roofline (a synthetic 'measured' chip per student)."""

from .. import attainable_flops_per_s, critical_intensity, get_chip
from ..hardware import Chip, Peak, Source
from ..units import format_bandwidth, format_flops_rate, format_intensity
from .core import Mistake
from .homework import (
    DEMO_ID,
    TIE_MARGIN,
    Draw,
    HomeworkSet,
    define_set,
    draw_until,
    register_question,
    tie_ratio,
)

SET_ID = "part3"
CHIPS = ("TPU v5e", "TPU v5p", "TPU v6e", "A100 SXM", "H100 SXM", "H200", "B200", "MI300X")
FLOPS_EFFICIENCY = (0.55, 0.6, 0.65, 0.7, 0.75)
BANDWIDTH_EFFICIENCY = (0.84, 0.86, 0.88, 0.9, 0.92)
#: Intensities (FLOPs/B) of the measured points shown to the student.
MEASURED_INTENSITIES = tuple(2.0**k for k in range(-1, 13))
PROBE_INTENSITIES = (3, 6, 12, 24, 48, 96)
#: Where q5's intensity lies: between the measured and the spec ridge (compute-bound, though
#: the spec sheet says bandwidth-bound), or below the measured ridge (bandwidth-bound).
REGIME_SIDES = ("between", "below")
#: Added to the drawn FLOP/s efficiency, so that q6's answer takes 25 values (0.55 to 0.79), not 5.
FLOPS_EFFICIENCY_STEPS = (0.0, 0.01, 0.02, 0.03, 0.04)
#: Where in its interval q5's intensity lies: "between": the fraction of the way from the
#: measured to the spec ridge on a log scale; "below": the fraction of the measured ridge.
REGIME_POSITIONS = {"between": (0.35, 0.5, 0.65, 0.8), "below": (0.3, 0.4, 0.5, 0.6, 0.75)}


def _draw_once(draw: Draw) -> dict:
    p = {
        "chip": draw.choice(CHIPS),
        "flops_efficiency": draw.choice(FLOPS_EFFICIENCY),
        "bandwidth_efficiency": draw.choice(BANDWIDTH_EFFICIENCY),
        "probe_intensity": draw.choice(PROBE_INTENSITIES),
        # drawn last, so the earlier numbers of every id stay as they were
        "regime_side": draw.choice(REGIME_SIDES),
    }
    # (issue 30) drawn after those, for the same reason: q5's intensity and q6's fraction vary
    step = draw.choice(FLOPS_EFFICIENCY_STEPS)
    p["flops_efficiency"] = round(p["flops_efficiency"] + step, 2)
    p["regime_position"] = draw.choice(REGIME_POSITIONS[p["regime_side"]])
    return p


def far_from_the_measured_ridge(p: dict) -> bool:
    """q5 is no near tie: its intensity is at least TIE_MARGIN away from the measured ridge."""
    ridge = critical_intensity(measured_chip(p))
    return tie_ratio((regime_intensity(p), ridge)) >= 1 + TIE_MARGIN


def make_parameters(draw: Draw) -> dict:
    """A student's chip and 'measured' fractions, from the id's seed; redrawn while q5's
    intensity lies within TIE_MARGIN of the measured ridge."""
    return draw_until(draw, _draw_once, far_from_the_measured_ridge)


def measured_chip(p: dict) -> Chip:
    """The student's 'measured' chip: the spec chip's bf16 peak and bandwidth times efficiencies."""
    spec = get_chip(p["chip"])
    peak = spec.peak_flops_per_s("bf16") * p["flops_efficiency"]
    bandwidth = spec.hbm_bytes_per_s * p["bandwidth_efficiency"]
    note = Source(
        "synthetic measurement for homework part 3",
        f"{p['flops_efficiency']:.0%} of the dense bf16 peak, "
        f"{p['bandwidth_efficiency']:.0%} of the memory bandwidth",
    )
    return Chip(
        name=f"measured {spec.name}",
        vendor="measurement",
        peaks=(Peak("bf16", peak, note),),
        hbm_bytes=spec.hbm_bytes,
        hbm_bytes_per_s=bandwidth,
        memory_source=note,
    )


def regime_intensity(p: dict) -> float:
    """q5's intensity, to 3 significant digits (as shown): between the measured and the spec
    ridge, where the spec sheet gives the wrong regime (`regime_position` of the way from the
    one to the other on a log scale), or below the measured ridge (`regime_position` of it).
    Draws made before the position was drawn keep the old places: the geometric mean, half."""
    measured = critical_intensity(measured_chip(p))
    if p.get("regime_side", "between") == "below":
        value = measured * p.get("regime_position", 0.5)
    else:
        spec = critical_intensity(p["chip"])
        value = measured * (spec / measured) ** p.get("regime_position", 0.5)
    return float(f"{value:.2e}")


def measured_points(p: dict) -> list[tuple[float, float]]:
    """(intensity in FLOPs/B, achieved FLOP/s) of the idealised measurement."""
    chip = measured_chip(p)
    return [(i, attainable_flops_per_s(i, chip)) for i in MEASURED_INTENSITIES]


def describe(p: dict) -> list:
    spec = get_chip(p["chip"])
    rows = [
        (
            "chip (spec sheet)",
            f"{spec.name}: {format_flops_rate(spec.peak_flops_per_s('bf16'))} "
            f"dense bf16, {format_bandwidth(spec.hbm_bytes_per_s)}",
        )
    ]
    rows += [
        (f"measured at {format_intensity(i, digits=4)}", format_flops_rate(f))
        for i, f in measured_points(p)
    ]
    rows += [
        ("q4 asks about intensity", format_intensity(p["probe_intensity"])),
        ("q5 asks about intensity", format_intensity(regime_intensity(p))),
    ]
    return rows


def _register(q, **kwargs):
    return register_question(SET_ID, q, DEMO, **kwargs)


DEMO = make_parameters(Draw(f"{SET_ID}\0{DEMO_ID}"))

_SPEC = "That is the spec sheet's figure; read the measured one off the table."

_register(
    "q1",
    question="What memory bandwidth did the measurement reach?",
    answer=lambda p: measured_chip(p).hbm_bytes_per_s,
    kind="bandwidth",
    mistakes=lambda p: [Mistake(get_chip(p["chip"]).hbm_bytes_per_s, _SPEC)],
    hints=(
        "On the slanted part, achieved FLOP/s = bandwidth x intensity: divide one by the other.",
    ),
)
_register(
    "q2",
    question="What peak FLOP/s did the measurement reach?",
    answer=lambda p: measured_chip(p).peak_flops_per_s("bf16"),
    kind="rate",
    mistakes=lambda p: [Mistake(get_chip(p["chip"]).peak_flops_per_s("bf16"), _SPEC)],
    hints=("The flat part of the measured roofline.",),
)
_register(
    "q3",
    question="Where is the measured ridge point?",
    answer=lambda p: critical_intensity(measured_chip(p)),
    kind="intensity",
    mistakes=lambda p: [
        Mistake(
            critical_intensity(p["chip"]),
            "That is the spec-sheet ridge; the measured one is q2 / q1.",
        )
    ],
    hints=("Measured peak (q2) divided by measured bandwidth (q1).",),
)
_register(
    "q4",
    question="What FLOP/s can an operation with the probe intensity attain on the measured chip?",
    answer=lambda p: attainable_flops_per_s(p["probe_intensity"], measured_chip(p)),
    kind="rate",
    mistakes=lambda p: [
        Mistake(attainable_flops_per_s(p["probe_intensity"], p["chip"]), _SPEC),
        Mistake(
            measured_chip(p).peak_flops_per_s("bf16"),
            "That is the flat roof, but this intensity is below the ridge: the slanted "
            "roof, bandwidth x intensity, applies.",
        ),
    ],
    hints=("min(measured peak, measured bandwidth x intensity).",),
)
_register(
    "q5",
    question="Is an operation at q5's intensity compute-bound or bandwidth-bound on the measured chip?",
    answer=lambda p: (
        "compute" if regime_intensity(p) >= critical_intensity(measured_chip(p)) else "bandwidth"
    ),
    kind="choice",
    choices=("compute", "bandwidth"),
    mistakes=lambda p: [_regime_mistake(p)],
    hints=("Compare the intensity with the measured ridge (q3), not the spec sheet's.",),
)


def _regime_mistake(p):
    if p.get("regime_side", "between") == "below":
        return Mistake(
            "compute",
            "The intensity lies below the measured ridge (q3): the slanted "
            "roof, bandwidth x intensity, is lower than the peak there.",
        )
    return Mistake(
        "bandwidth",
        "By the spec sheet's ridge it would be; but the measured ridge "
        "(q3) is lower, and the intensity lies above it.",
    )


_register(
    "q6",
    question="What fraction of the spec sheet's dense bf16 peak does the chip reach?",
    answer=lambda p: (
        measured_chip(p).peak_flops_per_s("bf16") / get_chip(p["chip"]).peak_flops_per_s("bf16")
    ),
    kind="number",
    mistakes=lambda p: [
        Mistake(
            p["bandwidth_efficiency"],
            "That is the bandwidth fraction (q1 over the spec bandwidth); this question asks "
            "for the FLOP/s fraction: q2 over the spec sheet's dense bf16 peak.",
        ),
        Mistake(
            100 * p["flops_efficiency"],
            "That is a percentage; give the fraction, a number between 0 and 1 (or type the % "
            "sign).",
        ),
    ],
    hints=("q2 divided by the spec-sheet peak.",),
)

define_set(
    HomeworkSet(
        SET_ID,
        "Homework part 3 (a measured roofline)",
        make_parameters,
        tuple(f"q{i}" for i in range(1, 7)),
        describe,
    )
)
