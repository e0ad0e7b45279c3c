"""Grade a folder of submitted homework notebooks (.ipynb as downloaded from Colab/Jupyter).

    python -m roofline grade SUBMISSIONS_DIR --out grades.csv [--timeout S] [--jobs N]

Each notebook runs in its own process (and its own kernel) with a time limit. After
the student's cells, one appended cell prints `STUDENT_ID` and `answers` as JSON; the
grader then RECOMPUTES every verdict itself, with `roofline`, from the id and the
submitted values. Whatever the notebook printed or claimed is never trusted.

The CSV has one row per student and question (student_id, file, exercise, submitted,
correct, feedback), NOTE rows (a cell that was stopped or raised, a duplicated id),
ERROR rows (a file that cannot be read or graded) and a TOTAL row per student ("3/8").
Every other submission is still graded: one bad file never stops the rest.

Student notebooks run arbitrary code: grade in a throwaway account or container.
"""

from __future__ import annotations

import concurrent.futures
import csv
import json
import math
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["grade_folder", "grade_submission", "run_notebook", "write_csv", "FIELDS", "main"]

FIELDS = ("student_id", "file", "exercise", "submitted", "correct", "feedback")
_SET_PATTERN = re.compile(r"""homework\.parameters\(\s*["'](?P<set>[A-Za-z0-9_-]+)["']""")

# The cell appended after the student's cells. It only reports values; it judges nothing.
_EXTRACT = r'''
def __roofline_grade_report():
    import json
    def enc(v):
        try:
            import numpy
            if isinstance(v, numpy.ndarray) and v.size == 1:
                v = v.reshape(()).item()
            elif isinstance(v, numpy.generic):
                v = v.item()
        except Exception:
            pass
        try:
            mod = type(v).__module__ or ""
            if v is None or v is Ellipsis:
                return {"type": "none"}
            if isinstance(v, bool):
                return {"type": "other", "name": "bool", "value": repr(v)}
            if isinstance(v, int):
                return {"type": "int", "value": str(v)} if len(str(v)) < 400 else {"type": "other", "name": "int", "value": "a huge integer"}
            if isinstance(v, float):
                return {"type": "float", "value": repr(v)}
            if isinstance(v, complex):
                return {"type": "complex", "value": [repr(v.real), repr(v.imag)]}
            if isinstance(v, str):
                return {"type": "str", "value": v[:2000]}
            if mod.startswith("sympy"):
                if getattr(v, "is_number", False) and v.is_real:
                    return {"type": "float", "value": repr(float(v))}
                return {"type": "sympy", "value": str(v)[:2000]}
            return {"type": "other", "name": type(v).__name__, "value": repr(v)[:200]}
        except Exception:
            return {"type": "other", "name": type(v).__name__, "value": "<unprintable>"}
    g = globals()
    sid, ans = g.get("STUDENT_ID", None), g.get("answers", None)
    report = {"has_id": "STUDENT_ID" in g,
              "student_id": sid if isinstance(sid, str) else (None if sid is None else str(sid)[:200]),
              "answers": ({str(k)[:50]: enc(v) for k, v in list(ans.items())[:100]}
                          if isinstance(ans, dict) else None)}
    print("%NONCE%" + json.dumps(report))
__roofline_grade_report()
'''


# ---------------------------------------------------------------- one notebook (in a subprocess)
def run_notebook(path: Path, timeout: float) -> dict:
    """Execute one submission in a fresh kernel; return its id, answers and notes as a dict."""
    import nbformat
    from nbclient import NotebookClient

    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception as error:
        return {"error": f"cannot read the notebook: {type(error).__name__}: {str(error)[:200]}"}
    sources = "\n".join(cell.get("source", "") for cell in nb.cells if cell.get("cell_type") == "code")
    found = _SET_PATTERN.search(sources)
    set_id = found.group("set") if found else None
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nonce = "ROOFLINE-GRADE-" + secrets.token_hex(16) + ":"
    nb.cells.append(nbformat.v4.new_code_cell(_EXTRACT.replace("%NONCE%", nonce)))
    with tempfile.TemporaryDirectory(prefix="roofline-grade-") as workdir:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                                interrupt_on_timeout=True, startup_timeout=120,
                                resources={"metadata": {"path": workdir}})
        try:
            client.execute()
        except Exception as error:
            return {"set": set_id, "error": f"the notebook could not be run: {type(error).__name__}: "
                                            f"{str(error)[:200]}"}
    notes = []
    for number, cell in enumerate(nb.cells[:-1], start=1):
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                continue
            if output.get("ename") == "KeyboardInterrupt":
                notes.append(f"code cell {number} ran longer than {timeout:g} s and was stopped")
            else:
                notes.append(f"code cell {number} raised {output.get('ename')}: "
                             f"{str(output.get('evalue', ''))[:120]}")
    report = None
    for output in nb.cells[-1].get("outputs", []):
        for line in str(output.get("text", "")).splitlines():
            if line.startswith(nonce):
                report = json.loads(line[len(nonce):])
    if report is None:
        return {"set": set_id, "notes": notes,
                "error": "the notebook's STUDENT_ID and answers could not be read after running it"}
    return {"set": set_id, "notes": notes, **report}


def _run_in_subprocess(path: Path, timeout: float) -> dict:
    """run_notebook in its own process group, killed as a whole past the time limit."""
    limit = 2 * timeout + 90  # kernel start-up and the extraction cell on a busy machine
    command = [sys.executable, "-m", "roofline.exercises.grading", "--run-one", str(path),
               "--timeout", str(timeout)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
        return {"error": f"the notebook ran longer than {limit:g} s in all and was stopped; "
                         "nothing could be graded"}
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if process.returncode != 0 or not lines:
        return {"error": f"the grader failed on this notebook (exit {process.returncode}): "
                         f"{stderr.strip()[-300:]}"}
    return json.loads(lines[-1])


# ---------------------------------------------------------------- verdicts (in the grader)
def _decode(encoded):
    kind = encoded.get("type")
    value = encoded.get("value")
    if kind == "none":
        return None, ""
    if kind == "float":
        return float(value), value
    if kind == "int":
        return int(value), value
    if kind == "complex":
        return complex(float(value[0]), float(value[1])), f"{value[0]}+{value[1]}j"
    if kind in ("str", "sympy"):
        return str(value), str(value)
    raise ValueError(f"a {encoded.get('name', 'value')} ({value}) is not a number, text or formula")


def grade_submission(path: Path, report: dict, set_override: str | None = None) -> list[dict]:
    """Rows for one submission, every verdict recomputed here with `roofline`."""
    from . import homework

    file = path.name
    sid = report.get("student_id")
    sid_text = (sid or "").strip()

    def row(exercise, submitted="", correct="", feedback=""):
        return {"student_id": sid_text, "file": file, "exercise": exercise,
                "submitted": submitted, "correct": correct, "feedback": feedback}

    notes = [row("NOTE", feedback=note) for note in report.get("notes", [])]
    if "error" in report:
        return [row("ERROR", feedback=report["error"])] + notes
    set_id = set_override or report.get("set")
    if set_id not in homework.sets():
        return [row("ERROR", feedback="cannot tell which homework set this is (no "
                                      "homework.parameters(\"partN\", ...) cell)")] + notes
    if not report.get("has_id"):
        return [row("ERROR", feedback="the notebook has no STUDENT_ID; cannot derive the "
                                      "student's numbers")] + notes
    if not homework.normalise_id(sid):
        return [row("ERROR", feedback="STUDENT_ID is empty: the student did not type their id, "
                                      "so their numbers are unknown; ask them to resubmit")] + notes
    answers = report.get("answers")
    if answers is None:
        return [row("ERROR", feedback="the notebook has no `answers` dictionary")] + notes
    rows, right = [], 0
    questions = homework.questions(set_id)
    for q in questions:
        exercise = f"{set_id}/{q}"
        if q not in answers:
            rows.append(row(exercise, "", "no", f"unanswered: there is no answers[\"{q}\"] in the notebook"))
            continue
        try:
            value, shown = _decode(answers[q])
        except (ValueError, TypeError, OverflowError) as error:
            rows.append(row(exercise, str(answers[q].get("value", ""))[:200], "no",
                            f"cannot be graded: {error}"))
            continue
        if value is None:
            rows.append(row(exercise, "", "no", "unanswered"))
            continue
        feedback = homework.check(sid, set_id, q, value)
        right += bool(feedback.correct)
        rows.append(row(exercise, shown, "yes" if feedback.correct else "no", feedback.message))
    return rows + notes + [row("TOTAL", correct=f"{right}/{len(questions)}")]


def grade_folder(folder, timeout: float = 120, jobs: int | None = None,
                 set_override: str | None = None, progress=None) -> list[dict]:
    """Grade every .ipynb in `folder` (not recursive); return the CSV rows."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder of submitted .ipynb files")
    paths = sorted(p for p in folder.iterdir() if p.suffix == ".ipynb" and p.is_file())
    jobs = max(1, jobs or os.cpu_count() or 1)
    reports: dict[Path, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_run_in_subprocess, p, timeout): p for p in paths}
        for future in concurrent.futures.as_completed(futures):
            path = futures[future]
            try:
                reports[path] = future.result()
            except Exception as error:  # nothing may be lost: record and go on
                reports[path] = {"error": f"the grader failed: {type(error).__name__}: {error}"}
            if progress:
                progress(path, reports[path])
    from . import homework
    owners: dict[str, list[str]] = {}
    for path in paths:
        key = homework.normalise_id(reports[path].get("student_id"))
        if key and "error" not in reports[path]:
            owners.setdefault(key, []).append(path.name)
    rows = []
    for path in paths:
        try:
            graded = grade_submission(path, reports[path], set_override)
        except Exception as error:
            graded = [{"student_id": str(reports[path].get("student_id") or ""), "file": path.name,
                       "exercise": "ERROR", "submitted": "", "correct": "",
                       "feedback": f"the grader failed: {type(error).__name__}: {error}"}]
        key = homework.normalise_id(reports[path].get("student_id"))
        others = [name for name in owners.get(key, []) if name != path.name]
        if others:
            graded.insert(0, {**graded[0], "exercise": "NOTE", "submitted": "", "correct": "",
                              "feedback": f"duplicated student id: also submitted in {', '.join(others)}"})
        rows += graded
    return rows


def write_csv(rows, out) -> None:
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def main(args) -> int:
    """The `grade` subcommand (args from roofline.__main__)."""
    try:
        import nbclient  # noqa: F401
    except ImportError:
        print("grading needs nbclient and ipykernel: pip install nbclient ipykernel", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        rows = grade_folder(args.submissions, timeout=args.timeout, jobs=args.jobs,
                            set_override=args.set,
                            progress=lambda p, r: print(f"ran {p.name}", file=sys.stderr))
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    write_csv(rows, args.out)
    students = sum(1 for r in rows if r["exercise"] == "TOTAL")
    errors = sum(1 for r in rows if r["exercise"] == "ERROR")
    print(f"graded {students} submission(s), {errors} could not be graded; wrote {args.out} "
          f"in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":  # the worker: python -m roofline.exercises.grading --run-one PATH
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--run-one", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=120)
    ns = parser.parse_args()
    print(json.dumps(run_notebook(ns.run_one, ns.timeout)))
