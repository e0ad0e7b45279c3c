"""Grade sample submissions of homework part 1 and part 4, sandboxed, and print the time per
notebook (`make bench`).

Targets (issue 34, section 5): at most 0.5 s per notebook with 2 jobs for part 1, each
notebook in its own sandbox (bubblewrap and the seccomp filter where they work) and kernel;
part 4 within 2x of part 1. Printed, never asserted in a test; the exit status is 1 when a
target is missed or a notebook is not graded.

Samples: half the notebooks right, half wrong. Part 1's are `tests/data/submissions`'s (a
student's own arithmetic from `params`); part 4's type each student's right answers as
literals (`report.expected_text`, 6 significant digits), or "1" for the wrong half.

    .venv/bin/python benchmarks/bench_grading.py [--count 100] [--jobs 2] [--sets part1,part4]
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
sys.path.insert(0, str(ROOT))
import make_samples  # noqa: E402

TARGET_PER_NOTEBOOK_S = 0.5  # part 1, 2 jobs, sandboxed
TARGET_RATIO = 2.0  # part 4 / part 1


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _literal_sample(set_id: str, path: Path, student_id: str, right: bool) -> None:
    """The set's notebook with STUDENT_ID typed and every answer a literal."""
    from roofline.exercises import homework
    from roofline.exercises.grader.report import expected_text

    nb = json.loads((ROOT / "exercises" / f"homework_{set_id}.ipynb").read_text("utf-8"))
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code":
            continue
        if source.startswith("STUDENT_ID ="):
            source = f"STUDENT_ID = {student_id!r}"
        for q in homework.questions(set_id):
            if source.startswith(f'answers["{q}"] = None'):
                answer = expected_text(student_id, set_id, q) if right else "1"
                try:
                    float(answer)
                    typed = answer
                except ValueError:
                    typed = repr(answer)
                source = source.replace(f'answers["{q}"] = None', f'answers["{q}"] = {typed}', 1)
        cell["source"] = source
    path.write_text(json.dumps(nb), encoding="utf-8")


def _samples(set_id: str, folder: Path, count: int) -> int:
    """Write `count` submissions of `set_id`; return how many should score full marks."""
    for i in range(count):
        sid, right = f"student-{i:03d}", i % 2 == 0
        path = folder / f"student_{i:03d}.ipynb"
        if set_id == "part1":
            answers = make_samples.CORRECT if right else make_samples.PARTLY_WRONG
            make_samples.make(path, sid, answers)
        else:
            _literal_sample(set_id, path, sid, right)
    return (count + 1) // 2


def _cpu_children_s() -> float:
    """CPU seconds (user + system) of the finished child processes of this one, their own
    waited-for children included (the grader, bubblewrap, the kernels)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _grade(set_id: str, count: int, jobs: int, sandbox: str) -> tuple[float, float, list, int]:
    """(wall s, CPU s, TOTAL rows, notebooks expected right) for `count` notebooks of `set_id`."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "subs"
        folder.mkdir()
        full = _samples(set_id, folder, count)
        out = Path(tmp) / "grades.csv"
        command = [sys.executable, "-m", "roofline", "grade", str(folder), "--out", str(out)]
        command += ["--jobs", str(jobs), "--timeout", "60", "--sandbox", sandbox, "--set", set_id]
        start, cpu = time.perf_counter(), _cpu_children_s()
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        seconds, cpu = time.perf_counter() - start, _cpu_children_s() - cpu
        if result.returncode != 0:
            print(result.stderr[-2000:])
            return seconds, cpu, [], full
        with open(out, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    return seconds, cpu, [r for r in rows if r["exercise"] == "TOTAL"], full


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100, help="notebooks per set")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "bwrap", "rlimits"))
    parser.add_argument("--sets", default="part1,part4")
    args = parser.parse_args()
    from roofline.exercises.grader.sandbox import sandbox_kind

    kind = sandbox_kind(args.sandbox)
    print(f"sandbox {kind}, {args.jobs} jobs; load average before: {_load()}")
    if kind == "bwrap":
        print(
            "(CPU time is not counted with bubblewrap: the kernels die with their namespace, "
            "unwaited; --sandbox rlimits counts it, as a lower bound on an idle machine's time)"
        )
    per: dict[str, float] = {}
    ok = True
    for set_id in args.sets.split(","):
        seconds, cpu, totals, full = _grade(set_id, args.count, args.jobs, args.sandbox)
        n = len(totals)
        right = sum(1 for r in totals if r["correct"].split("/")[0] == r["correct"].split("/")[1])
        if n == args.count:
            per[set_id] = seconds / args.count
        print(
            f"{set_id}: graded {n} of {args.count} notebooks ({right} full marks, {full} "
            f"expected) in {seconds:.1f} s: {seconds / args.count:.2f} s per notebook"
        )
        if kind == "rlimits":  # kernels are the grader's waited-for children: CPU is counted
            print(
                f"  CPU {cpu / args.count:.2f} s per notebook (grader and kernels): at least "
                f"{cpu / args.count / args.jobs:.2f} s per notebook on {args.jobs} idle cores"
            )
        ok = ok and n == args.count and right == full
    print(f"load average after: {_load()} (other work on the machine inflates the times)")
    if "part1" in per:
        fast = per["part1"] <= TARGET_PER_NOTEBOOK_S
        print(
            f"part1 target <= {TARGET_PER_NOTEBOOK_S} s per notebook: {'met' if fast else 'MISSED'}"
        )
        ok = ok and fast
    if "part1" in per and "part4" in per:
        ratio = per["part4"] / per["part1"]
        close = ratio <= TARGET_RATIO
        print(
            f"part4 / part1 = {ratio:.2f} (target <= {TARGET_RATIO}): {'met' if close else 'MISSED'}"
        )
        ok = ok and close
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
