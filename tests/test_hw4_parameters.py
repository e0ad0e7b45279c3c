"""Homework part 4: the parameters a student can print give no answer away (issue 33: the drawn
share of the bound's throughput, `measured_fraction`, was nearly q3's MFU)."""

import pytest

from roofline.exercises import core, editions, homework
from roofline.exercises import hw4_models as hw4

IDS = [""] + [f"s{i}" for i in range(40)]


@pytest.mark.parametrize("student", IDS)
def test_parameters_hold_the_throughput_not_the_share(student):
    p = homework.parameters("part4", student, quiet=True)
    assert "measured_fraction" not in p
    with editions.frozen("part4"):
        bound = hw4.train(p).tokens_per_s
        q3 = core.get_exercise(homework.exercise_id("part4", "q3")).answer(p)
    # the throughput is one of the drawn shares of the bound, to 4 significant digits
    shares = [float(f"{share * bound:.4g}") for share in hw4.MEASURED_FRACTIONS]
    assert p["measured_tokens_per_s"] in shares
    # and no printed number is q3's answer (within the check's 2 %)
    numbers = [v for v in p.values() if isinstance(v, (int, float))]
    assert not any(abs(v - q3) <= 0.02 * q3 for v in numbers), (p, q3)
