"""The regrade report: what changed between an earlier detailed CSV and this run, and why.

    python -m roofline grade DIR --out grades.csv --compare OLD.csv

writes grades.regrade.csv next to --out: one row per student and file whose score or any
verdict changed (student_id, file, old_score, new_score, change, questions, why), each
question's reason one of

- "submission changed": the answer submitted is not the one graded before;
- "edition changed": same answer, the INFO rows name other homework editions;
- "answer key changed": same answer and edition, another expected value (a catalog fix);
- "checker changed": same answer and expected value, another verdict (the checking rules);

and rows for a file graded only before ("no longer graded") or only now ("newly graded").
Every student and file whose rows are identical is counted, never listed: nothing else moved.
Students are matched by `report.match_key`, files by name. Both sides are read from the CSV
files as written (cells capped and neutralised alike), so equal answers compare equal.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from .report import FIELDS, match_key, safe_cell

REGRADE_FIELDS = ("student_id", "file", "old_score", "new_score", "change", "questions", "why")
_EDITION = re.compile(r"edition (?P<edition>[^;]+)")


def read_detailed(path) -> list[dict]:
    """The rows of a detailed CSV this grader wrote; ValueError when it is not one."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [
            f
            for f in ("student_id", "file", "exercise", "correct")
            if f not in (reader.fieldnames or ())
        ]
        if missing:
            raise ValueError(
                f"--compare {path}: not a detailed grades CSV (no {', '.join(missing)} column); "
                "pass the --out file of the earlier run"
            )
        return [{k: r.get(k) or "" for k in FIELDS} for r in reader]


def _by_submission(rows) -> dict[tuple[str, str], dict]:
    """{(id key, file): {"id": shown id, "questions": {exercise: row}, "total": (right, of)}}."""
    out: dict[tuple[str, str], dict] = {}
    for r in rows:
        exercise = r["exercise"]
        if not r.get("file") or not ("/" in exercise or exercise in ("TOTAL", "ERROR")):
            continue
        entry = out.setdefault(
            (match_key(r["student_id"]), r["file"]),
            {"id": r["student_id"], "questions": {}, "score": None},
        )
        if "/" in exercise:
            entry["questions"][exercise] = r
        elif exercise == "TOTAL":
            right, _, of = r["correct"].partition("/")
            entry["score"] = f"{right} of {of}" if of else r["correct"]
        else:
            entry["score"] = "error"
    return out


def edition_of(rows) -> str | None:
    """The edition(s) the INFO row names, or None (a CSV written before editions)."""
    for r in rows:
        if r.get("exercise") == "INFO":
            found = _EDITION.search(r.get("feedback", ""))
            return found.group("edition").strip() if found else None
    return None


def _why(old: dict, new: dict, editions_differ: bool) -> str | None:
    """Why one question's row changed, or None when it did not."""
    same_answer = old["submitted"] == new["submitted"]
    if old["correct"] == new["correct"] and old["expected"] == new["expected"] and same_answer:
        return None
    if not same_answer:
        return "submission changed"
    if editions_differ and old["expected"] != new["expected"]:
        return "edition changed"
    if old["expected"] != new["expected"]:
        return f"answer key changed ({old['expected'] or '?'} -> {new['expected'] or '?'})"
    return "checker changed"


def _score_value(score: str | None) -> float | None:
    if not score or " of " not in score:
        return None
    try:
        return float(score.split(" of ")[0])
    except ValueError:
        return None


def compare(old_rows: list[dict], new_rows: list[dict]) -> tuple[list[dict], int]:
    """(the regrade rows, how many student-file pairs did not change)."""
    old, new = _by_submission(old_rows), _by_submission(new_rows)
    editions_differ = edition_of(old_rows) != edition_of(new_rows)
    out, unchanged = [], 0
    for key in sorted(set(old) | set(new), key=lambda k: (k[0], k[1])):
        before, after = old.get(key), new.get(key)
        if before is None or after is None:
            entry = after or before
            assert entry is not None
            out.append(
                _change_row(
                    entry["id"],
                    key[1],
                    before and before["score"],
                    after and after["score"],
                    [],
                    "newly graded" if before is None else "no longer graded",
                )
            )
            continue
        reasons = {}
        for exercise in sorted(set(before["questions"]) | set(after["questions"])):
            o, n = before["questions"].get(exercise), after["questions"].get(exercise)
            if o is None or n is None:
                reasons[exercise] = "question added" if o is None else "question removed"
                continue
            why = _why(o, n, editions_differ)
            if why:
                reasons[exercise] = why
        if not reasons and before["score"] == after["score"]:
            unchanged += 1
            continue
        out.append(
            _change_row(
                after["id"], key[1], before["score"], after["score"], sorted(reasons), reasons
            )
        )
    return out, unchanged


def _change_row(sid, file, old_score, new_score, questions, why) -> dict:
    old_value, new_value = _score_value(old_score), _score_value(new_score)
    change = ""
    if old_value is not None and new_value is not None:
        change = f"{new_value - old_value:+g}" if new_value != old_value else "0"
    if isinstance(why, dict):
        groups: dict[str, list[str]] = {}
        for exercise, reason in why.items():
            groups.setdefault(reason, []).append(exercise.split("/", 1)[-1])
        why = "; ".join(f"{reason}: {', '.join(qs)}" for reason, qs in groups.items()) or (
            "the total changed"
        )
    return {
        "student_id": sid,
        "file": file,
        "old_score": old_score or "",
        "new_score": new_score or "",
        "change": change,
        "questions": ", ".join(q.split("/", 1)[-1] for q in questions),
        "why": why,
    }


def write_regrade(rows: list[dict], out) -> None:
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=REGRADE_FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: safe_cell(row.get(k, ""), 500) for k in REGRADE_FIELDS})
    tmp.replace(out)
