"""`python -m roofline grade`: the command line around `grade_folder` (arguments in
roofline/__main__.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .folder import grade_folder
from .gradebook import (
    info_row,
    parse_weights,
    read_roster_aliases,
    read_roster_table,
    summary_rows,
    write_feedback,
    write_summary,
)
from .lms import write_lms
from .regrade import compare, read_detailed, write_regrade
from .report import write_csv
from .sandbox import MIB, Limits


def main(args) -> int:
    """The `grade` subcommand (args from roofline.__main__)."""
    try:
        import ipykernel  # noqa: F401
        import jupyter_client  # noqa: F401
        import nbformat  # noqa: F401
        import zmq  # noqa: F401
    except ImportError:
        print(
            'grading needs ipykernel, jupyter_client, pyzmq and nbformat: pip install -e ".[grade]" '
            "(or pip install ipykernel jupyter_client pyzmq nbformat)",
            file=sys.stderr,
        )
        return 2
    start = time.perf_counter()
    limits = _limits(args)
    try:
        roster, old_rows = _inputs(args)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    out = Path(args.out)
    if not out.parent.is_dir():
        print(f"cannot write {out}: the folder {out.parent} does not exist", file=sys.stderr)
        return 2
    journal = out.with_name(out.name + ".journal")
    if args.fresh and journal.exists():
        journal.unlink()

    def progress(name, report, reused):
        print(f"{'reused' if reused else 'ran'} {name}", file=sys.stderr)

    try:
        rows = grade_folder(
            args.submissions,
            jobs=args.jobs,
            set_override=args.set,
            progress=progress,
            limits=limits,
            sandbox=args.sandbox,
            roster=roster,
            journal=journal,
            hidden=[out.parent.resolve()] if args.out else (),
            sandbox_uid=args.sandbox_uid,
            retry_errors=getattr(args, "retry_errors", False),
            aliases=read_roster_aliases(args.roster) if args.roster is not None else None,
        )
    except (FileNotFoundError, RuntimeError) as error:
        print(error, file=sys.stderr)
        return 2
    rows.append(info_row(rows))
    write_csv(rows, out)
    if old_rows is not None:
        _write_regrade(old_rows, out)
    if getattr(args, "feedback_dir", None):
        count = write_feedback(rows, args.feedback_dir)
        print(f"wrote {count} feedback file(s) to {args.feedback_dir}")
    if getattr(args, "summary", None):
        try:
            _write_summary(args, rows, roster)
        except ValueError as error:
            print(f"{error} (the detailed CSV {out} is written)", file=sys.stderr)
            return 2
    students = sum(1 for r in rows if r["exercise"] == "TOTAL")
    errors = sum(1 for r in rows if r["exercise"] == "ERROR")
    skipped = sum(1 for r in rows if r["exercise"] == "SKIPPED")
    print(
        f"graded {students} submission(s), {errors} could not be graded, {skipped} file(s) skipped; "
        f"wrote {out} in {time.perf_counter() - start:.1f} s (journal: {journal})"
    )
    return 0


def _inputs(args) -> tuple[list[str] | None, list[dict] | None]:
    """(the roster's ids or None, the --compare CSV's rows or None), read before grading;
    ValueError with what to do when an option cannot be used as given."""
    problem = _lms_problem(args)
    if problem:
        raise ValueError(problem)
    old_rows = None
    if getattr(args, "compare", None) is not None:
        try:  # read now: --out may be the same file, rewritten after grading
            old_rows = read_detailed(args.compare)
        except (OSError, ValueError) as error:
            raise ValueError(f"cannot read --compare {args.compare}: {error}") from None
    if args.roster is None and getattr(args, "lms_export", None) is not None:
        args.roster = args.lms_export  # the LMS's export lists the class
    if args.roster is None:
        return None, old_rows
    try:
        roster, warnings = read_roster_table(args.roster)
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read the roster {args.roster}: {error}") from None
    for warning in warnings:
        print(f"WARNING: {warning}", file=sys.stderr)
    return roster, old_rows


def _write_regrade(old_rows: list[dict], out: Path) -> None:
    """OUT.regrade.csv: the changes from `old_rows` to the CSV just written to `out`."""
    changes, unchanged = compare(old_rows, read_detailed(out))
    regrade_out = out.with_name(f"{out.stem}.regrade.csv")
    write_regrade(changes, regrade_out)
    print(
        f"regrade: {len(changes)} student file(s) changed, {unchanged} unchanged; "
        f"wrote {regrade_out}"
    )


def _limits(args) -> Limits:
    """The sandbox limits from the command line (sizes given in MiB)."""
    return Limits(
        cell_s=args.timeout,
        notebook_s=args.notebook_timeout,
        memory_bytes=int(args.memory_mb * MIB),
        cpu_s=int(args.cpu_seconds),
        processes=args.processes,
        file_bytes=int(args.file_mb * MIB),
        disk_bytes=int(args.disk_mb * MIB),
        open_files=args.open_files,
    )


def _write_summary(args, rows: list[dict], roster) -> None:
    """The gradebook (--summary), weighted by --weights; ValueError for unknown questions."""
    questions = sorted(
        {r["exercise"].split("/", 1)[1] for r in rows if "/" in r["exercise"]},
        key=lambda q: (len(q), q),
    )
    weights = parse_weights(getattr(args, "weights", None), questions) if questions else None
    mtimes = {}
    folder = Path(args.submissions)
    for r in rows:
        try:
            mtimes[r["file"]] = (folder / r["file"]).lstat().st_mtime
        except (OSError, ValueError):
            pass
    aliases = read_roster_aliases(args.roster) if args.roster is not None else None
    summary = summary_rows(rows, roster, mtimes, weights, aliases)
    kind = getattr(args, "gradebook_format", "plain") or "plain"
    if kind == "plain":
        write_summary(summary, args.summary)
        print(f"wrote the gradebook {args.summary}")
        return
    sets = sorted({r["exercise"].split("/", 1)[0] for r in rows if "/" in r["exercise"]})
    assignment = getattr(args, "assignment", None) or f"Roofline {', '.join(sets) or 'homework'}"
    for warning in write_lms(kind, args.lms_export, summary, args.summary, assignment):
        print(f"WARNING: {warning}", file=sys.stderr)
    print(f"wrote the {kind} gradebook {args.summary} (column {assignment!r}): upload it as is")


def _lms_problem(args) -> str | None:
    """Why --gradebook-format / --lms-export cannot be used as given, or None."""
    kind = getattr(args, "gradebook_format", "plain") or "plain"
    export = getattr(args, "lms_export", None)
    if kind == "plain":
        return None
    if not getattr(args, "summary", None):
        return f"--gradebook-format {kind} writes the --summary file: pass --summary upload.csv"
    if export is None:
        return (
            f"--gradebook-format {kind} needs the gradebook export downloaded from {kind}: "
            "pass --lms-export FILE"
        )
    if not Path(export).is_file():
        return f"--lms-export {export}: no such file"
    return None
