"""Command line: `python -m roofline grade ...` and `python -m roofline measure ...`.

    python -m roofline grade SUBMISSIONS_DIR --out grades.csv [--timeout S] [--jobs N]
    python -m roofline measure [...]      # measure this machine's roofline
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be positive")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m roofline",
                                     description="Tools of the Rooflines book.")
    sub = parser.add_subparsers(dest="command", metavar="{grade,measure}")
    grade = sub.add_parser("grade", help="grade a folder of submitted homework notebooks (.ipynb)",
                           description="Run every .ipynb in SUBMISSIONS_DIR in its own process and "
                                       "kernel, recompute every answer's verdict from the student's "
                                       "id, and write one CSV row per student and question.")
    grade.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR")
    grade.add_argument("--out", type=Path, default=Path("grades.csv"), help="CSV file (default grades.csv)")
    grade.add_argument("--timeout", type=_positive(float), default=120,
                       help="seconds each cell may run before it is stopped (default 120)")
    grade.add_argument("--jobs", type=_positive(int), default=os.cpu_count() or 1,
                       help="notebooks run at once (default: all cores)")
    grade.add_argument("--set", default=None, help="homework set (part1, ...) when it cannot be "
                                                   "read from the notebooks")
    sub.add_parser("measure", help="measure this machine's roofline (roofline.measure)",
                   add_help=False)
    return parser


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "measure":
        try:
            from .measure.cli import main as measure_main
        except ImportError as error:
            print(f"`measure` is not available in this installation ({error}). It needs the "
                  "roofline.measure module.", file=sys.stderr)
            return 2
        return measure_main(argv[1:]) or 0
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "grade":
        from .exercises.grading import main as grade_main
        return grade_main(args)
    parser.print_help()
    return 1


if __name__ == "__main__":
    sys.exit(main())
