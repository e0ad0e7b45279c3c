"""A registration made in one test does not leak into the next (issue 36)."""

import dataclasses

import pytest

import roofline as rl


@pytest.mark.parametrize("round_", [1, 2])
def test_a_registered_chip_is_gone_in_the_next_test(round_):
    # Both rounds start from the catalog alone: a leak would make round 2 see round 1's chip
    # (and register_chip would still succeed, so the count is what tells).
    before = len(rl.list_chips())
    assert "Leak test chip" not in rl.list_chips()
    rl.register_chip(dataclasses.replace(rl.get_chip("H100"), name="Leak test chip"))
    assert len(rl.list_chips()) == before + 1


def test_property_tests_run_without_a_deadline():
    # a per-example deadline is a clock in a verdict: conftest turns it off once for all
    from hypothesis import settings

    assert settings().deadline is None
