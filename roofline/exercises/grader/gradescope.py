"""Gradescope: an autograder zip that grades each submission with this grader.

    python -m roofline autograder --set part1 --out autograder.zip [--weights q1=2]
                                  [--visibility after_due_date]

The zip holds `setup.sh` (installs bubblewrap and this package from the wheel inside the zip,
so the version matches the one that built it; the wheel is written by `wheel.py` with the
standard library, so building needs neither setuptools nor `wheel`), `run_autograder` (grades submission/*.ipynb
and writes results/results.json) and `config.json` (set, weights, visibility). Gradescope
unpacks it into /autograder/source; `run_autograder` honours AUTOGRADER_ROOT (default
/autograder), so the layout can be tried anywhere. results.json: a total `score` and one test
per question (`name`, `score`, `max_score`, `output`), with `visibility` (Gradescope's
hidden, after_due_date, after_published or visible). Scores are in points (question weights).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once when the autograder is built (as root, Ubuntu).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 python3-pip bubblewrap util-linux >/dev/null
cd /autograder/source
pip3 install --break-system-packages "$(ls roofline-*.whl)[grade]" 2>/dev/null \\
  || pip3 install "$(ls roofline-*.whl)[grade]"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: grade submission/*.ipynb, write results.json.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
exec python3 -m roofline.exercises.grader.gradescope run --root "$ROOT"
"""


def build_wheel(out_dir: Path) -> Path:
    """This package's wheel in `out_dir`, built with the standard library (no setuptools, no
    `wheel`: see roofline.exercises.grader.wheel)."""
    from .wheel import build_wheel as build

    return build(Path(out_dir))


def build_zip(set_id: str, out, weights: str | None = None, visibility="after_due_date") -> Path:
    """Write the autograder zip for homework `set_id`; return its path."""
    from .. import homework
    from .gradebook import parse_weights

    if set_id not in homework.sets():
        raise ValueError(f"no homework set {set_id!r}; there are {', '.join(homework.sets())}")
    if visibility not in VISIBILITIES:
        raise ValueError(f"--visibility must be one of {', '.join(VISIBILITIES)}")
    parse_weights(weights, homework.questions(set_id))  # fails here, not on Gradescope
    config = {"set": set_id, "weights": weights or "", "visibility": visibility}
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
                info = zipfile.ZipInfo(name)
                info.external_attr = 0o755 << 16
                archive.writestr(info, text)
            archive.writestr("config.json", json.dumps(config, indent=1))
            archive.write(wheel, wheel.name)
    return out


# Teacher-facing reasons (report.py, folder.py) a student can fix, and what to tell them.
FIXABLE = (
    (
        "STUDENT_ID is empty",
        "STUDENT_ID is empty: type your student id in the first cell "
        '(STUDENT_ID = "..."), run all cells and submit again',
    ),
    (
        "the notebook has no STUDENT_ID",
        "the notebook has no STUDENT_ID: start again from the "
        "homework notebook you were given, type your id in its first cell and submit again",
    ),
    ("this notebook is homework", "{reason} Submit the notebook of this assignment's homework"),
    ("this notebook's code asks for", "{reason} Submit the notebook of this assignment's homework"),
    ("STUDENT_ID ", "{reason}"),  # checked_identity's message: not your id
    (
        "cannot read the file",
        "this file is not a notebook that can be read: download the "
        "notebook again (File > Download > .ipynb) and submit that file",
    ),
    ("no notebook", "no .ipynb file was submitted: submit the homework notebook (.ipynb)"),
)


def student_message(reason: str) -> tuple[str, bool]:
    """(what to tell the student, whether they can fix it) for an ERROR row's reason."""
    for start, text in FIXABLE:
        if reason.startswith(start):
            return text.format(reason=reason.rstrip(". ") + "."), True
    return f"the autograder could not grade this notebook ({reason}); tell your teacher", False


def _question_tests(rows: list[dict], weights: dict, visibility: str) -> list[dict]:
    tests = []
    for r in rows:
        if "/" in r["exercise"]:
            q = r["exercise"].split("/", 1)[1]
            right = r["correct"] == "yes"
            tests.append(
                {
                    "name": q,
                    "score": weights.get(q, 1.0) if right else 0.0,
                    "max_score": weights.get(q, 1.0),
                    "output": ("right. " if right else "not right. ") + r["feedback"],
                    "visibility": visibility,
                }
            )
    return tests


def results(rows: list[dict], weights: dict, visibility: str) -> dict:
    """Gradescope's results.json from one submission's detailed rows.

    A submission that could not be graded (an ERROR row, or no notebook) is shown to the
    student at once, whatever `visibility` the teacher chose for scores: one test named
    "Fix this and resubmit" (or "Not graded"), visibility "visible", and the submission's own
    visibility "visible" too, since its score is 0 because nothing was graded, not a result
    to hold back. Graded questions keep `visibility`."""
    tests = _question_tests(rows, weights, visibility)
    notes = [f"{r['exercise']}: {r['feedback']}" for r in rows if r["exercise"] == "NOTE"]
    out: dict = {"visibility": visibility, "stdout_visibility": "hidden"}
    if not tests:
        error = next((r["feedback"] for r in rows if r["exercise"] == "ERROR"), "")
        message, fixable = student_message(error or "no notebook was graded")
        tests = [
            {
                "name": "Fix this and resubmit" if fixable else "Not graded",
                "score": 0.0,
                "max_score": sum(weights.values()),
                "status": "failed",
                "output": message,
                "visibility": "visible",
            }
        ]
        out.update(visibility="visible", output=message)
    elif notes:
        out["output"] = "\n".join(notes)
    return {"score": sum(t["score"] for t in tests), "tests": tests, **out}


def submitter_ids(root) -> list[str]:
    """The student ids Gradescope has for whoever handed this submission in: `users[].sid` in
    /autograder/submission_metadata.json (one per group member; Gradescope fills it from the
    course roster's student id). Empty when the file or the ids are missing."""
    try:
        metadata = json.loads((Path(root) / "submission_metadata.json").read_text("utf-8"))
        users = metadata.get("users") or []
        return [str(u["sid"]).strip() for u in users if isinstance(u, dict) and u.get("sid")]
    except (OSError, ValueError, AttributeError, TypeError):
        return []


def checked_identity(rows: list[dict], ids: list[str]) -> list[dict]:
    """`rows`, or one ERROR row when the notebook's STUDENT_ID is none of the submitters' ids
    (compared by `report.match_key`): its numbers, and so its score, would be another
    student's. Without ids from Gradescope the notebook's id stands, with a NOTE saying so."""
    from .report import match_key, visible

    typed = next((r["student_id"] for r in rows if r.get("student_id")), "")
    if not rows or not typed:
        return rows
    if not ids:
        note = "Gradescope names no student id for this submission: graded with its STUDENT_ID"
        return rows + [{**rows[0], "exercise": "NOTE", "correct": "", "feedback": note}]
    if match_key(typed) in {match_key(i) for i in ids}:
        return rows
    error = (
        f"STUDENT_ID {visible(typed)!r} is not your id ({', '.join(ids)}): the numbers and the "
        "score belong to the id you type. Type your own id in STUDENT_ID, run all and resubmit"
    )
    return [{**rows[0], "exercise": "ERROR", "correct": "", "feedback": error, "expected": ""}]


def lock_down(root) -> None:
    """As root, make Gradescope's files unreadable to the sandbox's unprivileged uid.

    Without bubblewrap (Gradescope's container may refuse its user namespaces) the grader
    still runs each kernel as an unused uid (64000 + slot) with no capabilities, as
    Gradescope's own guidance advises (student code as a non-root user). That uid can read
    what is world-readable; so, before any student code runs: /autograder may be entered but
    not listed (0711); source/ (config, wheel), submission/ (the handed-in files) and
    results/ are root's alone (0700); submission_metadata.json (names, emails, earlier
    scores) is root's alone (0600). The grader, as root, reads and writes them as before."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    root = Path(root)
    (root / "results").mkdir(parents=True, exist_ok=True)
    modes = {root: 0o711, root / "source": 0o700, root / "submission": 0o700}
    modes.update({root / "results": 0o700, root / "submission_metadata.json": 0o600})
    for path, mode in modes.items():
        if path.exists() and not path.is_symlink():
            os.chmod(path, mode)


def run(root, sandbox: str = "auto") -> dict:
    """Grade root/submission/*.ipynb (the newest counts) and write root/results/results.json.

    `sandbox`: auto (bubblewrap where it works, else the limits only, as an unused uid when
    run as root), bwrap or rlimits, as `python -m roofline grade --sandbox`."""
    from .. import homework
    from .folder import grade_folder
    from .gradebook import parse_weights

    root = Path(root)
    config = json.loads((root / "source" / "config.json").read_text(encoding="utf-8"))
    set_id, visibility = config["set"], config.get("visibility", "after_due_date")
    weights = parse_weights(config.get("weights"), homework.questions(set_id))
    lock_down(root)
    submission = root / "submission"
    notebooks = sorted(
        (p for p in submission.glob("*") if p.suffix.lower() == ".ipynb" and p.is_file()),
        key=lambda p: (p.lstat().st_mtime, p.name),
    )
    rows: list[dict] = []
    if notebooks:
        newest = notebooks[-1].name
        every = grade_folder(
            submission, set_override=set_id, jobs=1, hidden=[root / "results"], sandbox=sandbox
        )
        rows = [r for r in every if r["file"] == newest]
        rows = checked_identity(rows, submitter_ids(root))
    result = results(rows, weights, visibility)
    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result


def main(argv=None) -> int:
    """`python -m roofline autograder ...` (build) and `... gradescope run --root R` (grade)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m roofline autograder")
    parser.add_argument("action", nargs="?", choices=("build", "run"), default="build")
    parser.add_argument("--set", help="homework set (part1, ...)")
    parser.add_argument("--out", type=Path, default=Path("autograder.zip"))
    parser.add_argument("--weights", default=None, help="question weights, e.g. q1=2,q3=0.5")
    parser.add_argument("--visibility", default="after_due_date", choices=VISIBILITIES)
    parser.add_argument("--root", default=os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    parser.add_argument("--sandbox", choices=("auto", "bwrap", "rlimits"), default="auto")
    args = parser.parse_args(argv)
    if args.action == "run":
        result = run(args.root, args.sandbox)
        print(f"score {result['score']:g}")
        return 0
    if not args.set:
        parser.error("--set is required (part1, part2, ...)")
    try:
        out = build_zip(args.set, args.out, args.weights, args.visibility)
    except (ValueError, RuntimeError, subprocess.CalledProcessError) as error:
        print(error, file=sys.stderr)
        return 2
    print(f"wrote {out}: upload it as the autograder of a Gradescope programming assignment")
    return 0


if __name__ == "__main__":
    sys.exit(main())
