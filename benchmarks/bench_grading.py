"""Grade 100 sample submissions with the sandbox on and print the wall time.

Target (issue 26): at most 0.5 s per submission on 2 cores, each in its own bubblewrap
sandbox (seccomp filter included) and kernel: 50 s for 100 (issue 15's was 2 minutes).

    .venv/bin/python benchmarks/bench_grading.py [--count 100] [--jobs 2] [--sandbox auto]
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402

TARGET_PER_SUBMISSION_S = 0.5


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "bwrap", "rlimits"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "subs"
        folder.mkdir()
        for i in range(args.count):
            answers = make_samples.CORRECT if i % 2 == 0 else make_samples.PARTLY_WRONG
            make_samples.make(folder / f"student_{i:03d}.ipynb", f"student-{i:03d}", answers)
        out = Path(tmp) / "grades.csv"
        load_before = _load()
        start = time.perf_counter()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "roofline",
                "grade",
                str(folder),
                "--out",
                str(out),
                "--jobs",
                str(args.jobs),
                "--timeout",
                "60",
                "--sandbox",
                args.sandbox,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - start
        if result.returncode != 0:
            print(result.stderr[-2000:])
            return 1
        with open(out, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    totals = [r for r in rows if r["exercise"] == "TOTAL"]
    print(
        f"sandbox {args.sandbox}; load average before/after: {load_before} / {_load()} "
        "(other work on the machine inflates the time)"
    )
    print(
        f"graded {len(totals)} of {args.count} submissions with {args.jobs} jobs in {seconds:.1f} s "
        f"({seconds / args.count:.2f} s each); target <= {TARGET_PER_SUBMISSION_S} s each"
    )
    fast = seconds <= TARGET_PER_SUBMISSION_S * args.count
    return 0 if len(totals) == args.count and fast else 1


if __name__ == "__main__":
    sys.exit(main())
