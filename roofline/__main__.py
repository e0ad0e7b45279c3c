"""Command line: `python -m roofline grade ...` and `python -m roofline measure ...`.

python -m roofline grade SUBMISSIONS_DIR --out grades.csv [--timeout S] [--jobs N] [...]
python -m roofline measure [...]      # measure this machine's roofline
python -m roofline autograder --set part1 --out autograder.zip   # a Gradescope autograder
python -m roofline prairielearn --set part1 --out DIR   # a PrairieLearn question
python -m roofline model NAME [--train ...]   # a whole model; a training step on many chips
python -m roofline editions check          # homework editions against the catalog

Every subcommand but `grade` is listed once, in `roofline.subcommands.SUBCOMMANDS`.
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
    """The `python -m roofline` parser: `grade` in full; the subcommands of
    `roofline.subcommands.SUBCOMMANDS` parse their own arguments (listed here for --help)."""
    from .exercises.grading import Limits
    from .subcommands import SUBCOMMANDS

    parser = argparse.ArgumentParser(
        prog="python -m roofline", description="Tools of the Rooflines book."
    )
    sub = parser.add_subparsers(dest="command")  # usage: {grade,...}, from the choices

    d = Limits()
    grade = _grade_parser(sub)
    _add_grade_input_arguments(grade, d)
    _add_grade_sandbox_arguments(grade, d)
    _add_grade_report_arguments(grade)
    for name, command in SUBCOMMANDS.items():
        sub.add_parser(name, help=command.help, add_help=False)
    return parser


def _grade_parser(sub) -> argparse.ArgumentParser:
    """The `grade` subcommand with its description and its sandbox/time/resume epilog."""
    grade = sub.add_parser(
        "grade",
        help="grade a folder of submitted homework notebooks (.ipynb)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run every notebook under SUBMISSIONS_DIR in its own sandboxed kernel, read each "
        "student's id and answers over the Jupyter protocol (never from what the notebook "
        "prints), recompute every verdict from the id, and write one CSV row per student "
        "and question.",
        epilog="Sandbox (bubblewrap, when installed): a fresh home holding only that notebook, private "
        "/tmp, no network (not even loopback), a clean environment, everything else read-only, "
        "other submissions and the output invisible, its own process tree, and an unused uid "
        "(64000 + slot) when run as root. Without bubblewrap only the limits apply (a warning "
        "says so).\n\nTime: a cell past --timeout is interrupted (killed with its kernel if it "
        "does not stop; the notebook then runs again without it); a notebook past "
        "--notebook-timeout is stopped. Answers recorded until then are graded.\n\n"
        "A rerun resumes from OUT.journal (pass --fresh to start over).",
    )
    return grade


def _add_grade_input_arguments(grade: argparse.ArgumentParser, d) -> None:
    """What to grade and how fast: folder, output CSV, cell/notebook timeouts (s), jobs, set, roster."""
    grade.add_argument("submissions", type=Path, metavar="SUBMISSIONS_DIR")
    grade.add_argument(
        "--out", type=Path, default=Path("grades.csv"), help="CSV file (default grades.csv)"
    )
    grade.add_argument(
        "--timeout",
        type=_positive(float),
        default=d.cell_s,
        help=f"seconds each cell may run before it is stopped (default {d.cell_s:g})",
    )
    grade.add_argument(
        "--notebook-timeout",
        type=_positive(float),
        default=d.notebook_s,
        help=f"seconds one notebook may run in all, kernel start-ups included "
        f"(default {d.notebook_s:g})",
    )
    grade.add_argument(
        "--jobs",
        type=_positive(int),
        default=os.cpu_count() or 1,
        help="notebooks run at once (default: all cores)",
    )
    grade.add_argument(
        "--set",
        default=None,
        help="homework set (part1, ...) when it cannot be read from the notebooks",
    )
    grade.add_argument(
        "--roster",
        type=Path,
        default=None,
        help="student ids, one a line, or a CSV with a column student_id, id, SIS User ID "
        "or ID number (Moodle): "
        "flags ids not on it, roster students with no submission, and files named for "
        "another student",
    )


def _add_grade_sandbox_arguments(grade: argparse.ArgumentParser, d) -> None:
    """Sandbox choice and per-sandbox limits (memory/file/disk in MiB, CPU in s, counts, uid)."""
    grade.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "rlimits"),
        default="auto",
        help="auto: bubblewrap if it works here, else limits only (default auto)",
    )
    grade.add_argument(
        "--memory-mb",
        type=_positive(float),
        default=d.memory_bytes / 2**20,
        help="address space per sandboxed process and, where a cgroup can be made, memory "
        f"of the whole sandbox, MiB (default {d.memory_bytes // 2**20})",
    )
    grade.add_argument(
        "--cpu-seconds",
        type=_positive(int),
        default=d.cpu_s,
        help=f"CPU time per sandboxed process, s (default {d.cpu_s})",
    )
    grade.add_argument(
        "--processes",
        type=_positive(int),
        default=d.processes,
        help=f"processes and threads per sandbox, per uid and cgroup (default {d.processes})",
    )
    grade.add_argument(
        "--file-mb",
        type=_positive(float),
        default=d.file_bytes / 2**20,
        help=f"largest file a notebook may write, MiB (default {d.file_bytes // 2**20})",
    )
    grade.add_argument(
        "--disk-mb",
        type=_positive(float),
        default=d.disk_bytes / 2**20,
        help=f"size of the sandbox's home and of its /tmp, MiB each; counts as memory "
        f"(default {d.disk_bytes // 2**20})",
    )
    grade.add_argument(
        "--open-files",
        type=_positive(int),
        default=d.open_files,
        help=f"open files per sandboxed process (default {d.open_files})",
    )
    grade.add_argument(
        "--sandbox-uid",
        type=_positive(int),
        default=64000,
        help="as root: first of --jobs unused uids the notebooks run as (default 64000)",
    )


def _add_grade_report_arguments(grade: argparse.ArgumentParser) -> None:
    """Outputs beyond the CSV (gradebook, weights, feedback files) and journal resume options."""
    grade.add_argument(
        "--summary",
        type=Path,
        default=None,
        help="also write a gradebook CSV: one row per student (student_id, score, max_score, "
        "status, file, notes), in roster order",
    )
    grade.add_argument(
        "--compare",
        type=Path,
        default=None,
        help="an earlier run's detailed CSV: also write OUT.regrade.csv, who changed, by how "
        "much, on which questions and why",
    )
    grade.add_argument(
        "--gradebook-format",
        choices=("plain", "canvas", "moodle"),
        default="plain",
        help="layout of the --summary file: plain (default), or an LMS's upload layout joined "
        "onto its own export (--lms-export)",
    )
    grade.add_argument(
        "--lms-export",
        type=Path,
        default=None,
        help="the gradebook export downloaded from Canvas or Moodle (also the roster when "
        "--roster is not given)",
    )
    grade.add_argument(
        "--assignment",
        default=None,
        help="the LMS assignment column to fill, e.g. 'Homework 1' (default: 'Roofline SET'; "
        "a name the export does not have becomes a new assignment)",
    )
    grade.add_argument(
        "--weights",
        default=None,
        help="question weights for the gradebook, e.g. q1=2,q3=0.5 (others weigh 1)",
    )
    grade.add_argument(
        "--feedback-dir",
        type=Path,
        default=None,
        help="write one short feedback file per submission (verdicts, no expected values)",
    )
    grade.add_argument(
        "--retry-errors",
        action="store_true",
        help="rerun the notebooks whose journalled result is an error; reuse the others",
    )
    grade.add_argument(
        "--fresh", action="store_true", help="ignore OUT.journal: run every notebook again"
    )


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from .subcommands import SUBCOMMANDS

    command = SUBCOMMANDS.get(argv[0]) if argv else None
    if command is not None:
        try:
            function = command.load()
        except ImportError as error:  # e.g. `measure` without the roofline.measure module
            print(f"`{argv[0]}` is not available in this installation ({error}).", file=sys.stderr)
            return 2
        return function(argv[1:]) or 0
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "grade":
        from .exercises.grading import main as grade_main

        return grade_main(args)
    parser.print_help()
    return 1


if __name__ == "__main__":
    sys.exit(main())
