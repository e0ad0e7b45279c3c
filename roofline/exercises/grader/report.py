"""The grader's report: verdicts, the folder survey, the journal, the roster and the CSV.

Everything here runs in the grader, on plain data: a submission's report (its id and answers
as the kernel gave them) is validated, every verdict is recomputed with `roofline`, and the
rows are written to a CSV a spreadsheet shows as text. Lengths are in characters.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path

FIELDS = ("student_id", "file", "exercise", "submitted", "correct", "feedback", "expected")
"""`expected` is for the teacher only (the student's right answer): do not hand it out."""
SET_KEY = "rooflines_set"  # notebook metadata: the homework set the book wrote it for
_SET_PATTERN = re.compile(r"""homework\.parameters\(\s*["'](?P<set>[A-Za-z0-9_-]+)["']""")
JOURNAL_VERSION = 1

# Caps on what goes into the CSV (characters).
ID_CAP, SUBMITTED_CAP, FEEDBACK_CAP = 100, 200, 500


def clean_text(text, cap: int) -> str:
    """One line of at most `cap` characters: control characters become spaces."""
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", " ", str(text)).replace("\n", " ")
    return text if len(text) <= cap else text[: cap - 1] + "…"


def notebook_set(metadata) -> str | None:
    """The homework set named in a notebook's metadata (written by tools/notebooks.py)."""
    try:
        value = metadata.get(SET_KEY)
    except AttributeError:
        return None
    return value if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,40}", value) else None


def code_set(cells: list[str]) -> str | None:
    """The set a notebook's code asks parameters for, when every such call agrees (else None).

    A hint only, for notebooks saved before the book wrote the set into the metadata."""
    found = {m.group("set") for m in _SET_PATTERN.finditer("\n".join(cells))}
    return found.pop() if len(found) == 1 else None


_ANSWER_SET = re.compile(r"""\banswers\[\s*["'](?P<q>[A-Za-z0-9_-]{1,20})["']\s*\]\s*=(?!=)""")


def answer_notes(cells: list[str], notes: dict[int, str]) -> dict[str, str]:
    """{question: the note of the code cell that sets answers[question]} for the cells that
    raised, were stopped or killed their kernel (`notes` by cell number, from 1): why an
    answer may be missing, for its own feedback line, not only a NOTE row."""
    found: dict[str, str] = {}
    for number, note in sorted(notes.items()):
        if 1 <= number <= len(cells):
            for match in _ANSWER_SET.finditer(cells[number - 1]):
                found.setdefault(match.group("q"), note)
    return found


def decode(encoded):
    kind = encoded.get("type")
    value = encoded.get("value")
    if kind == "none":
        return None, ""
    if kind == "float":
        return float(value), str(value)
    if kind == "int":
        return int(value), str(value)
    if kind == "complex":
        return complex(float(value[0]), float(value[1])), f"{value[0]}+{value[1]}j"
    if kind in ("str", "sympy"):
        return str(value), str(value)
    raise ValueError(
        f"a {clean_text(encoded.get('name', 'value'), 50)} "
        f"({clean_text(value, 100)}) is not a number, text or formula"
    )


def _row(sid_text: str, file: str, exercise, submitted="", correct="", feedback="", expected=""):
    return {
        "student_id": sid_text,
        "file": file,
        "exercise": exercise,
        "submitted": submitted,
        "correct": correct,
        "feedback": feedback,
        "expected": expected,
    }


def expected_text(sid: str, set_id: str, q: str) -> str:
    """This student's right answer to `q`, as text (6 significant digits); '' if unknown."""
    from .. import editions, homework
    from ..core import get_exercise

    try:
        params = homework.parameters(set_id, sid, quiet=True)
        with editions.frozen(set_id):
            value = get_exercise(homework.exercise_id(set_id, q)).answer(params)
    except Exception:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def which_set(report: dict, folder_set: str | None) -> tuple[str | None, str | None]:
    """(the set to grade this notebook as, or None; why it cannot be graded, or None).

    The notebook's metadata names its set; a notebook of another set than the folder's is
    not graded (its answers belong to other questions). Without metadata (saved before the
    book wrote it) the folder's set counts, then the set its code asks parameters for."""
    from .. import homework

    claimed, hint = report.get("set"), report.get("code_set")
    if claimed and folder_set and claimed != folder_set:
        return None, (
            f"this notebook is homework {claimed} (its metadata says so), not {folder_set}, "
            "the set this folder is graded as: was it handed in to the wrong assignment?"
        )
    if not claimed and hint and folder_set and hint != folder_set:
        return None, (
            f"this notebook's code asks for the numbers of homework {hint}, not {folder_set}, "
            "the set this folder is graded as: was it handed in to the wrong assignment?"
        )
    set_id = claimed or folder_set or hint
    if set_id not in homework.sets():
        return None, (
            "cannot tell which homework set this is (no set in the notebook's metadata and "
            'no homework.parameters("partN", ...) cell); pass --set'
        )
    return set_id, None


def _id_problem(report: dict) -> str | None:
    """Why the notebook's STUDENT_ID cannot be graded, or None."""
    from .. import homework

    if not report.get("has_id"):
        return "the notebook has no STUDENT_ID; cannot derive the student's numbers"
    if not homework.normalise_id(report.get("student_id")):
        return (
            "STUDENT_ID is empty: the student did not type their id, "
            "so their numbers are unknown; ask them to resubmit"
        )
    if report.get("answers") is None:
        return "the notebook has no `answers` dictionary"
    return None


def _verdict(
    sid: str, set_id: str, q: str, answers: dict, why: str | None = None
) -> tuple[str, str, str]:
    """(submitted, correct, feedback) for one question, recomputed with `roofline`. `why`: the
    note of the cell that sets answers[q], when it raised or was stopped (`answer_notes`)."""
    from .. import homework

    because = f': {why} (the cell that sets answers["{q}"])' if isinstance(why, str) else ""
    if q not in answers:
        return (
            "",
            "no",
            f"unanswered{because}"
            if because
            else (f'unanswered: there is no answers["{q}"] in the notebook'),
        )
    try:
        value, shown = decode(answers[q])
    except (ValueError, TypeError, OverflowError, IndexError, AttributeError) as error:
        return str(answers[q].get("value", "")), "no", f"cannot be graded: {error}"
    if value is None:
        return "", "no", f"unanswered{because}"
    feedback = homework.check(sid, set_id, q, value)
    return shown, "yes" if feedback.correct else "no", feedback.message


def grade_submission(
    path: Path, report: dict, set_override: str | None = None, file: str | None = None
) -> list[dict]:
    """Rows for one submission, every verdict recomputed here with `roofline`.

    `set_override`: the set the folder is graded as (--set, or the folder's majority)."""
    from .. import homework

    file = file or path.name
    sid = str(report.get("student_id") or "")
    sid_text = sid.strip()
    notes = [_row(sid_text, file, "NOTE", feedback=n) for n in report.get("notes", [])]
    if "error" in report:
        return [_row(sid_text, file, "ERROR", feedback=report["error"])] + notes
    length = max(report.get("id_length") or 0, len(sid))
    if length > ID_CAP:
        notes.append(
            _row(
                sid_text,
                file,
                "NOTE",
                feedback=f"STUDENT_ID is {length} characters long; it is cut to "
                f"{ID_CAP} characters in this file (and to 1000 for grading)",
            )
        )
    set_id, problem = which_set(report, set_override)
    problem = problem or _id_problem(report)
    if problem or set_id is None:
        return [_row(sid_text, file, "ERROR", feedback=problem)] + notes
    rows, right = [], 0
    questions = homework.questions(set_id)
    for q in questions:
        why = (report.get("answer_notes") or {}).get(q)
        submitted, correct, feedback = _verdict(sid, set_id, q, report["answers"], why)
        right += correct == "yes"
        expected = expected_text(sid, set_id, q)
        rows.append(_row(sid_text, file, f"{set_id}/{q}", submitted, correct, feedback, expected))
    return rows + notes + [_row(sid_text, file, "TOTAL", correct=f"{right}/{len(questions)}")]


# ---------------------------------------------------------------- the folder
def survey(folder: Path) -> tuple[list[tuple[str, Path]], list[dict]]:
    """(name, path) of every notebook to grade, and a SKIPPED row for every other file.

    Notebooks are found in subfolders too and whatever the case of `.ipynb`; names are
    relative to `folder`. Links are not followed (they could point anywhere)."""
    notebooks, skipped = [], []

    def skip(name, why):
        skipped.append(
            {
                "student_id": "",
                "file": name,
                "exercise": "SKIPPED",
                "submitted": "",
                "correct": "",
                "feedback": why,
            }
        )

    for root, dirs, files in os.walk(folder, followlinks=False):
        rel_root = Path(root).relative_to(folder)
        for d in sorted(dirs):
            if os.path.islink(os.path.join(root, d)):
                skip((rel_root / d).as_posix(), "a link to a folder; links are not followed")
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(root, d)))
        for name in sorted(files):
            full = Path(root) / name
            rel = (rel_root / name).as_posix()
            if full.is_symlink():
                skip(rel, "a link; links are not followed (copy the file itself into the folder)")
            elif ".ipynb_checkpoints" in full.relative_to(folder).parts:
                skip(rel, "a Jupyter checkpoint (autosave) copy, not a submission")
            elif not full.is_file():
                skip(rel, "not a regular file")
            elif full.suffix.lower() == ".ipynb":
                notebooks.append((rel, full))
            else:
                what = f"a {full.suffix} file" if full.suffix else "a file without an extension"
                skip(rel, f"not a notebook ({what}); rename it to .ipynb if it is one")
    notebooks.sort(key=lambda item: (item[0].casefold(), item[0]))
    skipped.sort(key=lambda row: (row["file"].casefold(), row["file"]))
    return notebooks, skipped


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_journal(journal: Path, limits_key: str) -> dict:
    """{(name, sha256): report} from a journal; a torn last line (a killed grader) is ignored."""
    done = {}
    try:
        with open(journal, encoding="utf-8") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                    if (
                        entry.get("version") == JOURNAL_VERSION
                        and entry.get("limits") == limits_key
                    ):
                        done[(entry["file"], entry["sha256"])] = entry["report"]
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue
    except FileNotFoundError:
        pass
    return done


def read_roster(path) -> list[str]:
    """Student ids, one a line (or the first column of a CSV; a header named id/student_id is skipped)."""
    ids = []
    with open(path, newline="", encoding="utf-8-sig") as handle:
        for row in csv.reader(handle):
            if not row or not row[0].strip() or row[0].strip().startswith("#"):
                continue
            ids.append(row[0].strip())
    if ids and ids[0].casefold() in ("id", "student_id", "student id", "studentid"):
        ids = ids[1:]
    return ids


def match_key(student_id) -> str:
    """The key two ids are matched by (roster, gradebook, Gradescope): NFKC, every Unicode space
    and invisible format character removed, case-folded. 'S9001', 's9001' + a no-break space
    and full-width 'ｓ９００１' all give 's9001'. (The numbers a notebook shows come from
    `homework.normalise_id`, which this does not change.)"""
    text = unicodedata.normalize("NFKC", str(student_id or ""))
    text = "".join(
        ch for ch in text if not ch.isspace() and unicodedata.category(ch)[0] not in ("Z", "C")
    )
    return unicodedata.normalize("NFKC", text.casefold())


def named_in_file(file: str, known: dict) -> str | None:
    """The key of the roster student whose id (or LMS alias: the keys of `known`, whose values
    are roster ids) the file's path names ('s9001_hw1.ipynb', 'smithj_12345_678_hw1.ipynb',
    's9001/hw1.ipynb'); None if none, or if it names two students by whole words (a Canvas
    user id equal to another's submission id, say). Without a whole-word match, an id of 5
    characters or more inside a word counts, the longest first."""
    path = unicodedata.normalize("NFKC", str(Path(file).with_suffix(""))).casefold()
    stem = " ".join(re.split(r"[\W_]+", path))
    tokens = set(stem.split())
    words = sorted(k for k in known if k and k in tokens)
    if words:
        students = {match_key(known[k]) for k in words}
        return words[0] if len(students) == 1 else None
    inside = sorted((k for k in known if len(k) >= 5 and k in stem), key=lambda k: (-len(k), k))
    return inside[0] if inside else None


def _stranger_note(student_id, known: dict[str, str]) -> str:
    """The NOTE for an id not on the roster; it names a roster id that it looks like."""
    looks = [original for original in known.values() if skeleton(original) == skeleton(student_id)]
    if looks:
        return (
            f"this STUDENT_ID is not on the roster but looks like {looks[0]}: it has look-alike "
            f"letters or invisible characters ({visible(str(student_id))[:80]})"
        )
    return "this STUDENT_ID is not on the roster"


def roster_rows(
    rows: list[dict], roster: list[str], names: dict[str, str], aliases: dict | None = None
) -> list[dict]:
    """NOTE rows for ids off the roster or files named for another student; MISSING rows.

    Ids match by `match_key`; a file whose path names another roster student than its
    STUDENT_ID counts for neither (see gradebook.summary_rows)."""
    known = {match_key(r): r for r in roster if match_key(r)}
    lookup = dict(known)
    lookup.update({match_key(a): r for a, r in (aliases or {}).items() if match_key(a)})
    by_file: dict[str, list[dict]] = {}
    for r in rows:
        by_file.setdefault(r["file"], []).append(r)
    out, seen = [], set()
    for file, group in by_file.items():
        graded = any(r["exercise"] == "TOTAL" for r in group)
        key = match_key(names.get(file))
        extra = []
        named = named_in_file(file, lookup)
        owner = None if named is None else match_key(lookup[named])
        if graded and key and owner in (None, key):
            seen.add(key)
        if graded and key and key not in known:
            extra.append(_stranger_note(names.get(file), known))
        if graded and owner is not None and owner != key:
            extra.append(
                f"the file is named for {known[owner]} but its STUDENT_ID is "
                f"{visible(str(names.get(file) or '(empty)'))}: the gradebook credits it to "
                "nobody until you check"
            )
        notes = [
            {
                **group[0],
                "exercise": "NOTE",
                "submitted": "",
                "correct": "",
                "feedback": text,
                "expected": "",
            }
            for text in extra
        ]
        out += group[:1] + notes + group[1:] if group[0]["exercise"] == "ERROR" else notes + group
    for key, original in known.items():
        if key not in seen:
            out.append(
                {
                    "student_id": original,
                    "file": "",
                    "exercise": "MISSING",
                    "submitted": "",
                    "correct": "",
                    "feedback": "on the roster, but no graded submission has this id",
                }
            )
    return out


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_CAPS = {
    "student_id": ID_CAP,
    "file": 300,
    "exercise": 60,
    "submitted": SUBMITTED_CAP,
    "correct": 20,
    "feedback": FEEDBACK_CAP,
    "expected": SUBMITTED_CAP,
}


def visible(text: str) -> str:
    """`text` with invisible and control characters written out as <U+200B> (zero-width,
    direction overrides, NUL ...), so that two ids that look alike in a spreadsheet differ."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp") and ch not in "\t\n":
            out.append(f"<U+{ord(ch):04X}>")
        else:
            out.append(ch)
    return "".join(out)


def skeleton(student_id) -> str:
    """What an id looks like: NFKC, case-folded, invisible characters dropped, common Cyrillic
    and Greek look-alikes of Latin letters mapped to them (to flag ids that mimic a roster id)."""
    text = unicodedata.normalize("NFKC", str(student_id or "")).casefold()
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf"))
    return re.sub(r"\s+", " ", text.translate(_LOOKALIKES)).strip()


_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁԛԝмнткв" + "αεικνορτυχ",
    "aeopcyxijsdqwmhtkb" + "aeiknoptux",
)


def safe_cell(value, cap: int = FEEDBACK_CAP) -> str:
    """A CSV cell a spreadsheet shows as text: control and invisible characters are written
    out (<U+200B>) or become spaces, the length is capped, and text starting with = + - @
    (a formula), after any leading spaces or tabs, gets a leading ' unless it is a plain
    number such as -1.5e3."""
    text = "" if value is None else str(value)
    text = clean_text(visible(text.replace("\t", " ")), cap)
    if text.lstrip()[:1] in ("=", "+", "-", "@") and not _NUMBER.fullmatch(text):
        text = "'" + text
    return text


def write_csv(rows, out) -> None:
    """Write the rows atomically: to a temporary file next to `out`, then renamed over it."""
    out = Path(out)
    handle = tempfile.NamedTemporaryFile(
        "w",
        newline="",
        encoding="utf-8",
        dir=out.parent or ".",
        prefix=f".{out.name}.",
        suffix=".tmp",
        delete=False,
    )
    try:
        with handle:
            writer = csv.DictWriter(handle, fieldnames=FIELDS)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: safe_cell(row.get(k, ""), _CAPS[k]) for k in FIELDS})
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o644)
        os.replace(handle.name, out)
    except BaseException:
        try:
            os.unlink(handle.name)
        except OSError:
            pass
        raise
