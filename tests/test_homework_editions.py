"""Homework editions (issue 34, section 4): a catalog fix changes no student's numbers unless
the class moves to a new edition on purpose; the notebook and the grader's INFO row name it."""

import dataclasses

import pytest

from roofline import catalog, get_chip
from roofline.exercises import core, edition_maker, editions, homework
from roofline.exercises.grader import gradebook
from roofline.hardware import Chip
from roofline.models import ModelConfig, get_model, list_models


def _answers(set_id, sid):
    params = homework.parameters(set_id, sid, quiet=True)
    with editions.frozen(set_id):
        return params, [
            core.get_exercise(homework.exercise_id(set_id, q)).answer(params)
            for q in homework.questions(set_id)
        ]


def _h100_student(set_id="part1"):
    for i in range(200):
        sid = f"s{i}"
        if homework.parameters(set_id, sid, quiet=True)["chip"] == "H100 SXM":
            return sid
    pytest.skip("no id drew the H100 SXM")


def test_every_chip_and_model_survives_the_round_trip():
    for name in catalog.list_chips():
        chip = get_chip(name)
        assert editions.from_json(Chip, editions.to_json(chip)) == chip, name
    for name in list_models():
        model = get_model(name)
        again = editions.from_json(ModelConfig, editions.to_json(model))
        assert editions.to_json(again) == editions.to_json(model), name


def test_a_catalog_fix_changes_no_students_numbers(monkeypatch):
    ids = [f"s{i}" for i in range(40)] + [_h100_student()]
    before = {(s, sid): _answers(s, sid) for s in homework.sets() for sid in ids}
    live_h100 = get_chip("H100 SXM")
    # The fix: the H100's memory bandwidth quoted 10 % higher (any figure would do).
    fixed = dataclasses.replace(live_h100, hbm_bytes_per_s=live_h100.hbm_bytes_per_s * 1.1)
    monkeypatch.setitem(catalog.CATALOG, "H100 SXM", fixed)
    assert get_chip("H100 SXM").hbm_bytes_per_s == live_h100.hbm_bytes_per_s * 1.1  # canary
    after = {(s, sid): _answers(s, sid) for s in homework.sets() for sid in ids}
    assert after == before
    assert "H100 SXM" in editions.differences("part1")
    # Canary: the live catalog (no edition) would have moved the H100 student's answers.
    sid = _h100_student()
    params = homework.parameters("part1", sid, quiet=True)
    with editions.frozen("part1", editions.LIVE):
        live = [
            core.get_exercise(homework.exercise_id("part1", q)).answer(params)
            for q in homework.questions("part1")
        ]
    assert live != before[("part1", sid)][1]


def test_the_check_a_student_runs_uses_the_edition(monkeypatch):
    sid = _h100_student()
    params, answers = _answers("part1", sid)
    q1 = answers[0]  # the time of part 1's first question, with the recorded H100
    assert homework.check(sid, "part1", "q1", q1).correct
    live = get_chip("H100 SXM")
    fixed = dataclasses.replace(live, hbm_bytes_per_s=live.hbm_bytes_per_s * 1.1)
    monkeypatch.setitem(catalog.CATALOG, "H100 SXM", fixed)
    assert homework.check(sid, "part1", "q1", q1).correct  # still right after the fix


def test_the_notebook_and_the_info_row_name_the_edition():
    now = editions.current("part1")  # edition 3 since the model and topology fixes of issues 30-31
    assert now.isdigit() and int(now) >= 1
    given = homework.given("part1", homework.parameters("part1", "s1", quiet=True))
    assert f"(edition {now})" in str(given)
    rows = [{"exercise": "part1/q1"}, {"exercise": "TOTAL"}]
    assert f"set part1 edition {now}" in gradebook.info_row(rows)["feedback"]
    with pytest.raises(KeyError, match="no edition '9'"):
        with editions.frozen("part1", "9"):
            pass


def test_a_new_edition_is_made_on_purpose_and_never_rewritten(tmp_path, monkeypatch):
    monkeypatch.setattr(editions, "EDITIONS_DIR", tmp_path)
    editions._file.cache_clear()
    editions._objects.cache_clear()
    try:
        assert editions.current("part1") == editions.LIVE  # no file: the live catalog
        assert edition_maker.freeze("part1") == "1"
        assert edition_maker.freeze("part1") == "2" and editions.current("part1") == "2"
        with pytest.raises(ValueError, match="editions never change"):
            edition_maker.freeze("part1", "1")
    finally:
        editions._file.cache_clear()
        editions._objects.cache_clear()
