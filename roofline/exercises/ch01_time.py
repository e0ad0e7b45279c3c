"""Exercises of chapter 1, "Where does the time go?"."""

from .. import estimate, get_chip
from ..costs import Cost
from .core import Exercise, register

register(Exercise(
    id="time-1e12-flops-h100",
    question="How long do 1e12 FLOPs of bf16 math take on an H100 SXM at its dense peak?",
    answer=lambda p: estimate(Cost("work", p["flops"], 1, "bf16"), p["chip"]).t_math,
    kind="time",
    params={"flops": 1e12, "chip": "H100 SXM"},
    hints=("Divide the FLOPs by the chip's dense bf16 peak in FLOP/s.",),
))
