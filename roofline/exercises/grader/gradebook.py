"""The gradebook: one row per student, ready to import into Canvas, Moodle or a spreadsheet.

    python -m roofline grade DIR --out grades.csv --summary gradebook.csv [--roster roster.csv]
                             [--weights q1=2,q3=0.5]

Columns: student_id, score, max_score, status (graded, missing, error or review), file, notes.
With a roster: its order and its spelling, ids matched by `report.match_key`; students not on
it follow. Who handed a file in counts where it is known (see `summary_rows`): no score moves
from one student to another. A student with several graded files: the newest (modification
time) counts, the others are named in `notes`. Scores are plain decimals (never "8/8", which a spreadsheet
reads as a date). A roster is a list of ids, one a line, or a CSV whose header names a column
student_id, id or SIS User ID (Canvas), or ID number, Username or Email address (Moodle).
"""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

from .report import match_key, named_in_file, safe_cell, visible

SUMMARY_FIELDS = ("student_id", "score", "max_score", "status", "file", "notes")
ID_COLUMNS: tuple[str, ...] = ("student_id", "student id", "studentid", "sis user id")
ID_COLUMNS += ("sis_user_id", "id", "id number", "username", "email address")  # Moodle's last


def read_roster_table(path) -> tuple[list[str], list[str]]:
    """(student ids in the roster's order, warnings about how the file was read)."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [r for r in csv.reader(handle) if r and any(c.strip() for c in r)]
    rows = [r for r in rows if not r[0].strip().startswith("#")]
    if not rows:
        return [], [f"the roster {path} is empty"]
    header = [c.strip().casefold() for c in rows[0]]
    column = next((header.index(name) for name in ID_COLUMNS if name in header), None)
    if column is not None:
        ids = [r[column].strip() for r in rows[1:] if len(r) > column and r[column].strip()]
        return ids, []
    warnings = []
    if len(rows[0]) >= 3:
        warnings.append(
            f"the roster {path} has {len(rows[0])} columns and none is named student_id, id, "
            f"SIS User ID or ID number: it looks like a gradebook export, whose first column "
            f"({rows[0][0].strip()[:40]!r}) was read as the ids; name the id column"
        )
    return [r[0].strip() for r in rows if r[0].strip()], warnings


ALIAS_COLUMNS = ("id", "sis login id", "login id", "username", "email", "email address")


def read_roster_aliases(path) -> dict[str, str]:
    """{other id of a student: their roster id} from a roster CSV's other id columns (Canvas's
    `ID` and `SIS Login ID`, Moodle's `Username`, `Email address`), so a file the LMS names by
    one of them ('smithjohn_12345_678_hw1.ipynb') is known to be that student's. Empty for a
    plain list of ids."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [r for r in csv.reader(handle) if r and any(c.strip() for c in r)]
    rows = [r for r in rows if not r[0].strip().startswith("#")]
    if not rows:
        return {}
    header = [c.strip().casefold() for c in rows[0]]
    column = next((header.index(name) for name in ID_COLUMNS if name in header), None)
    if column is None:
        return {}
    others = [i for i, name in enumerate(header) if name in ALIAS_COLUMNS and i != column]
    aliases = {}
    for r in rows[1:]:
        if len(r) <= column or not r[column].strip():
            continue
        for i in others:
            if i < len(r) and r[i].strip():
                aliases[r[i].strip()] = r[column].strip()
    return aliases


def parse_weights(text: str | None, questions) -> dict[str, float]:
    """{question: weight} from 'q1=2,q3=0.5' (others weigh 1); ValueError says what is wrong."""
    weights = {q: 1.0 for q in questions}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        name, _, value = part.partition("=")
        name = name.strip()
        if name not in weights:
            raise ValueError(
                f"--weights: there is no question {name!r}; the questions are {', '.join(weights)}"
            )
        try:
            weights[name] = float(value)
        except ValueError:
            raise ValueError(f"--weights: {part!r} is not question=number (q1=2)") from None
        if not weights[name] >= 0:
            raise ValueError(f"--weights: {part!r} must not be negative")
    return weights


def _number(value: float) -> str:
    """A score as a spreadsheet reads it: 6, 6.5 (no trailing zeros, never a date)."""
    return f"{round(value, 6):g}"


def _file_results(rows: list[dict], weights: dict[str, float] | None) -> dict[str, dict]:
    """{file: {id, status, score, max, why}} from the detailed rows."""
    out: dict[str, dict] = {}
    for r in rows:
        if not r.get("file") or r["exercise"] in ("SKIPPED", "MISSING"):
            continue
        entry = out.setdefault(
            r["file"], {"id": r["student_id"], "status": None, "score": 0.0, "max": 0.0, "why": ""}
        )
        exercise = r["exercise"]
        if exercise == "ERROR":
            entry["status"], entry["why"] = "error", r["feedback"]
        elif exercise == "TOTAL" and entry["status"] is None:
            entry["status"] = "graded"
        elif "/" in exercise:
            q = exercise.split("/", 1)[1]
            weight = 1.0 if weights is None else weights.get(q, 1.0)
            entry["max"] += weight
            entry["score"] += weight if r["correct"] == "yes" else 0.0
    return out


def summary_rows(
    rows: list[dict], roster=None, mtimes=None, weights=None, aliases=None, owners=None
) -> list[dict]:
    """The gradebook rows (see the module's docstring). `mtimes`: {file: modification time, s}.

    Who handed a file in counts where it is known, not only the STUDENT_ID it types: `owners`
    ({file: id}, e.g. from the LMS), else the roster student (or LMS alias, `aliases`:
    {alias: roster id}) its path names. A file handed in by one student whose STUDENT_ID is
    another's is credited to nobody and flagged on both rows. Of several files with one id and
    no known sender, the newest counts only if they spell the id alike ('S9001' and 's9001'
    are two claims, not a resubmission): else the row says review and shows each file's score.
    Ids match by `report.match_key` (NFKC, no spaces, case-folded)."""
    mtimes = mtimes or {}
    known = {match_key(r): r for r in (roster or []) if match_key(r)}
    lookup = dict(known)
    lookup.update({match_key(a): r for a, r in (aliases or {}).items() if match_key(a)})
    by_student: dict[str, list[tuple[str, dict]]] = {}
    handed: dict[str, list[tuple[str, dict]]] = {}  # sender key -> files claiming another id
    for file, entry in _file_results(rows, weights).items():
        entry["key"] = key = match_key(entry["id"])
        sender = (owners or {}).get(file)
        sender_key = match_key(sender) if sender else named_in_file(file, lookup)
        if sender_key in lookup and sender_key not in known:  # an alias: the roster id's key
            sender_key = match_key(lookup[sender_key])
        entry["sender"] = sender_key
        if key and sender_key and sender_key != key:
            handed.setdefault(sender_key, []).append((file, entry))
        else:
            by_student.setdefault(key, []).append((file, entry))
    order = [(key, shown) for key, shown in known.items()]
    seen = {key for key, _ in order}
    extra = {k: v[0][1]["id"] for k, v in by_student.items() if k and k not in seen}
    extra.update({k: v[0][1]["sender"] for k, v in handed.items() if k not in seen | set(extra)})
    order += sorted(extra.items())
    keys = None if roster is None else set(known)
    out = [
        _student_row(key, shown, by_student.get(key, []), mtimes, keys, _flags(key, handed))
        for key, shown in order
    ]
    for file, entry in by_student.get("", []):  # no id: cannot be put on a student's row
        out.append(_row("", "", "", "error", file, entry["why"] or "no STUDENT_ID"))
    return out


def shown_id(text) -> str:
    """An id as a note shows it: invisible characters and every space but ' ' written out
    ('s9001<U+00A0>'), so two ids that look alike can be told apart."""
    return "".join(
        f"<U+{ord(ch):04X}>" if ch.isspace() and ch != " " else ch for ch in visible(str(text))
    )


def _flags(key: str, handed: dict) -> list[str]:
    """Notes on `key`'s row about files that mix two students: sent by `key` with another's
    STUDENT_ID, or sent by another with `key`'s."""
    notes = []
    for file, entry in handed.get(key, []):
        notes.append(
            f"handed in {file}, whose STUDENT_ID is {shown_id(entry['id'])}: not credited to "
            "anyone; check who wrote it"
        )
    for sender, files in handed.items():
        for file, entry in files:
            if entry["key"] == key and sender != key:
                notes.append(
                    f"{file} has this STUDENT_ID but was handed in by {sender}: not credited"
                )
    return notes


def _row(sid, score, max_score, status, file, notes) -> dict:
    return dict(zip(SUMMARY_FIELDS, (sid, score, max_score, status, file, notes)))


def _counted(key, files) -> tuple[list, list[str], bool]:
    """(the files that may count, notes, whether a teacher must choose) for one student."""
    confirmed = [(f, e) for f, e in files if e["sender"] == key]
    if confirmed:
        unconfirmed = sorted(f for f, e in files if e["sender"] != key)
        notes = (
            [f"not counted: {', '.join(unconfirmed)} (nothing shows this student handed it in)"]
            if unconfirmed
            else []
        )
        return confirmed, notes, False
    spellings = {e["id"].strip() for _, e in files}
    if len(spellings) <= 1:
        return files, [], False
    shown = "; ".join(
        f"{f} (STUDENT_ID {shown_id(e['id'])}: "
        + (f"{_number(e['score'])} of {_number(e['max'])}" if e["status"] == "graded" else "error")
        + ")"
        for f, e in sorted(files)
    )
    return files, [f"ids spelled differently, no sender known: choose one of {shown}"], True


def _student_row(key, shown, files, mtimes, roster: set | None, flags=()) -> dict:
    """One student's gradebook row: the newest graded file counts, the others are noted."""
    notes = [] if roster is None or key in roster else ["not on the roster"]
    notes += list(flags)
    if not files:
        why = "no submission with this id" if not flags else "no submission of their own counts"
        return _row(shown, "", "", "missing", "", "; ".join([why] + notes))
    files, more, review = _counted(key, files)
    notes += more
    if review:
        return _row(shown, "", "", "review", "", "; ".join(notes))
    graded = [(f, e) for f, e in files if e["status"] == "graded"] or files
    graded.sort(key=lambda item: (mtimes.get(item[0], 0.0), item[0]))
    file, entry = graded[-1]
    others = sorted(f for f, _ in files if f != file)
    if others:
        notes.append(f"newest of {len(files)} files counts; also submitted: {', '.join(others)}")
    if entry["status"] != "graded":
        return _row(
            shown,
            "",
            _number(entry["max"]) if entry["max"] else "",
            "error",
            file,
            "; ".join([entry["why"]] + notes),
        )
    return _row(
        shown, _number(entry["score"]), _number(entry["max"]), "graded", file, "; ".join(notes)
    )


# What a spreadsheet turns into a number, date, time, fraction or boolean when it opens a CSV:
# 0012345 (leading zeros lost), 1E5 (100000), TRUE, 1/2 and 1-2 (dates), 1:30, 5%, 12.
_CONVERTED = re.compile(
    r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?%?|true|false|[\d./:-]*\d[\d./:-]*",
    re.IGNORECASE,
)
_LITERAL_SAFE = re.compile(r"[A-Za-z0-9 ._/:%+-]{1,60}")


def id_cell(student_id) -> str:
    """An id as a CSV cell that spreadsheets keep as text: one they would convert (0012345,
    1E5, TRUE, 1/2) is written ="0012345" (a text formula Excel, LibreOffice and Google Sheets
    show as 0012345); any other id as `safe_cell` writes it. Only ids of letters, digits and
    . _ / : % + - get the formula form, so no id can close the quotes."""
    text = "" if student_id is None else str(student_id)
    if _CONVERTED.fullmatch(text.strip()) and _LITERAL_SAFE.fullmatch(text):
        return f'="{text}"'
    return safe_cell(text, 500)


def write_summary(rows: list[dict], out) -> None:
    """Write the gradebook CSV (cells neutralised for spreadsheets like the detailed CSV, ids
    kept as text: `id_cell`)."""
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=SUMMARY_FIELDS)
        writer.writeheader()
        for row in rows:
            cells = {k: safe_cell(row.get(k, ""), 500) for k in SUMMARY_FIELDS}
            cells["student_id"] = id_cell(row.get("student_id", ""))
            writer.writerow(cells)
    tmp.replace(out)


def info_row(rows: list[dict]) -> dict:
    """The INFO row that ends the detailed CSV: the package version and the set(s) graded."""
    import roofline

    from .. import editions

    sets = sorted({r["exercise"].split("/", 1)[0] for r in rows if "/" in r["exercise"]})
    named = [f"{s} edition {editions.current(s)}" for s in sets]
    return {
        "student_id": "",
        "file": "",
        "exercise": "INFO",
        "submitted": "",
        "correct": "",
        "feedback": f"graded with roofline {roofline.__version__}; set {', '.join(named) or 'none'}",
        "expected": "",
    }


def write_feedback(rows: list[dict], folder) -> int:
    """One short text file per graded or failed submission (`feedback_names`) holding what
    the student may see: each question's verdict and feedback, and the total; no expected
    values. Returns the number of files written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    by_file: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("file") and r["exercise"] not in ("SKIPPED", "MISSING", "INFO"):
            by_file.setdefault(r["file"], []).append(r)
    names = feedback_names(by_file)
    for file, group in by_file.items():
        lines = [f"Student id: {group[0]['student_id'] or '(none)'}", f"File: {file}", ""]
        for r in group:
            if "/" in r["exercise"]:
                verdict = "right" if r["correct"] == "yes" else "not right"
                lines.append(f"{r['exercise']}: {verdict}. {r['feedback']}")
            elif r["exercise"] == "TOTAL":
                lines.append(f"\nTotal: {r['correct'].replace('/', ' of ')} questions right")
            else:
                lines.append(f"{r['exercise']}: {r['feedback']}")
        (folder / names[file]).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(by_file)


def feedback_names(files) -> dict[str, str]:
    """{submission's file name: its feedback file's name}, one name per submission.

    Readable (the file name with other characters than letters, digits, . _ - made _) and
    unique: a hash of the exact name follows, so 'hw1 ada' and 'hw1_ada', 'sub/x' and 'sub__x',
    'A' and 'a' (one file on a case-insensitive disk) never share a feedback file. Two names
    that still meet, case aside, take the whole hash."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for file in sorted(files):
        full = hashlib.sha256(file.encode("utf-8", "surrogatepass")).hexdigest()
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", file.replace("/", "__"))[:120]
        name = f"{slug}-{full[:12]}.txt"
        if name.casefold() in taken:
            name = f"{slug}-{full}.txt"
        taken.add(name.casefold())
        names[file] = name
    return names
