"""The gradebook in an LMS's own layout, joined onto the export the teacher downloaded from it.

    python -m roofline grade DIR --out grades.csv --summary upload.csv \\
        --gradebook-format canvas --lms-export canvas_export.csv [--assignment "Homework 1"]

- **Canvas** (Grades > Export, then Import): the columns Student, ID, SIS User ID, SIS Login
  ID, Section, then the assignment's column; one row per student of the export (the
  "Points Possible" row kept, holding the set's maximum), a blank score where there is no
  grade (Canvas leaves that grade as it is). A column Canvas does not know becomes a new
  assignment, so `--assignment` picks the export's own column ("Homework 1 (12345)") when its
  name matches.
- **Moodle** (Grades > Export > Plain text file, then Import > CSV file): the export's name
  and id columns and the assignment's column, one row per student WITH a score only: Moodle's
  import aborts on a user it does not know (so only the export's users are written) and
  credits a row with an empty id to the student above it (so no row has an empty id).

Students are matched by `report.match_key` on any of the export's id columns. Ids are copied
from the export exactly as the LMS wrote them (0012345 stays 0012345): upload the file as it
is; a spreadsheet that opens it may turn them into numbers or dates (see
`gradebook.id_cell`, used for the plain gradebook).
"""

from __future__ import annotations

import csv
from pathlib import Path

from .report import match_key, safe_cell

CANVAS_ID_COLUMNS = ("ID", "SIS User ID", "SIS Login ID")
CANVAS_FIELDS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_ID_COLUMNS = ("ID number", "Username", "Email address")
MOODLE_NAME_COLUMNS = ("First name", "Last name", "Surname")
POINTS_POSSIBLE = "Points Possible"


def read_export(path) -> tuple[list[str], list[dict]]:
    """(header, rows as dicts) of an LMS export CSV; ValueError when it has no header."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if not header:
            raise ValueError(f"the LMS export {path} is empty")
        header = [h.strip() for h in header]
        rows = [dict(zip(header, r)) for r in reader if any(c.strip() for c in r)]
    return header, rows


def assignment_column(header: list[str], name: str) -> str:
    """The export's own column for `name` ('Homework 1' finds Canvas's 'Homework 1 (12345)'
    and Moodle's 'Assignment: Homework 1 (Real)'), else `name` itself (a new assignment)."""
    for column in header:
        for form in (column, column.partition(": ")[2]):  # Moodle: 'ACTIVITY TYPE: name (...)'
            if form == name or (form.startswith(name + " (") and form.endswith(")")):
                return column
    return name


def _scores(summary: list[dict]) -> dict[str, dict]:
    """{match_key(student_id): summary row} of the plain gradebook."""
    return {match_key(r["student_id"]): r for r in summary if match_key(r["student_id"])}


def _find(row: dict, columns, scores: dict) -> dict | None:
    for column in columns:
        key = match_key(row.get(column, ""))
        if key and key in scores:
            return scores[key]
    return None


def canvas_rows(header, export, summary, assignment) -> tuple[list[str], list[list[str]], list]:
    """(header, rows, warnings) of a Canvas import file."""
    missing = [c for c in ("Student", "ID") if c not in header]
    if missing:
        raise ValueError(
            f"the Canvas export has no {' or '.join(missing)} column: pass the file Canvas's "
            "Grades > Export wrote"
        )
    column = assignment_column(header, assignment)
    scores, used = _scores(summary), set()
    maximum = next((r["max_score"] for r in summary if r.get("max_score")), "")
    out = []
    for row in export:
        ids = [row.get(c, "") for c in CANVAS_FIELDS]
        if row.get("Student", "").strip() == POINTS_POSSIBLE:
            out.append([row.get("Student", "")] + ids[1:] + [maximum])
            continue
        found = _find(row, CANVAS_ID_COLUMNS, scores)
        score = ""
        if found is not None:
            used.add(match_key(found["student_id"]))
            score = found["score"] if found["status"] == "graded" else ""
        out.append([safe_cell(ids[0], 200)] + ids[1:4] + [safe_cell(ids[4], 200), score])
    return list(CANVAS_FIELDS) + [column], out, _left_out(summary, used, "Canvas")


def moodle_rows(header, export, summary, assignment) -> tuple[list[str], list[list[str]], list]:
    """(header, rows, warnings) of a Moodle grade import file."""
    ids = [c for c in MOODLE_ID_COLUMNS if c in header]
    if not ids:
        raise ValueError(
            "the Moodle export has no ID number, Username or Email address column: export "
            "the grades as a plain text file with one of them"
        )
    names = [c for c in MOODLE_NAME_COLUMNS if c in header]
    column = assignment_column(header, assignment)
    scores, used, warnings, out = _scores(summary), set(), [], []
    for row in export:
        found = _find(row, ids, scores)
        if found is None:
            continue
        used.add(match_key(found["student_id"]))
        if found["status"] != "graded":
            continue
        if not row.get(ids[0], "").strip():  # Moodle would credit it to the row above
            warnings.append(
                f"{found['student_id']}: their {ids[0]} is empty in the Moodle export, so "
                "their score is not written (Moodle would give it to the student above)"
            )
            continue
        cells = [safe_cell(row.get(c, ""), 200) for c in names] + [row.get(c, "") for c in ids]
        out.append(cells + [found["score"]])
    return names + ids + [column], out, warnings + _left_out(summary, used, "Moodle")


def _left_out(summary, used: set, lms: str) -> list[str]:
    """Warnings for graded students the export does not list (never written: unknown users)."""
    return [
        f"{r['student_id']} is not in the {lms} export: their score "
        f"({r['score']} of {r['max_score']}) is not in the upload file"
        for r in summary
        if r["status"] == "graded" and match_key(r["student_id"]) not in used
    ]


def write_lms(kind: str, export_path, summary: list[dict], out, assignment: str) -> list[str]:
    """Write the `kind` (canvas or moodle) upload file to `out`; return warnings."""
    header, export = read_export(export_path)
    make = {"canvas": canvas_rows, "moodle": moodle_rows}[kind]
    fields, rows, warnings = make(header, export, summary, assignment)
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(fields)
        writer.writerows(rows)
    tmp.replace(out)
    return warnings
