"""Grade 100 sample submissions and print the wall time (target < 5 min on 2 cores).

    .venv/bin/python benchmarks/bench_grading.py [--count 100] [--jobs 2]
"""
import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402

TARGET_S = 300


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "subs"
        folder.mkdir()
        for i in range(args.count):
            answers = make_samples.CORRECT if i % 2 == 0 else make_samples.PARTLY_WRONG
            make_samples.make(folder / f"student_{i:03d}.ipynb", f"student-{i:03d}", answers)
        out = Path(tmp) / "grades.csv"
        start = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "roofline", "grade", str(folder), "--out",
                                 str(out), "--jobs", str(args.jobs), "--timeout", "60"],
                                cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if result.returncode != 0:
            print(result.stderr[-2000:])
            return 1
        rows = list(csv.DictReader(open(out, encoding="utf-8")))
    totals = [r for r in rows if r["exercise"] == "TOTAL"]
    print(f"graded {len(totals)} of {args.count} submissions with {args.jobs} jobs in {seconds:.1f} s "
          f"({seconds / args.count:.2f} s each); target < {TARGET_S} s")
    return 0 if len(totals) == args.count and seconds < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
