"""`python -m roofline grade`: the command line around `grade_folder` (arguments in
roofline/__main__.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .folder import grade_folder
from .report import read_roster, write_csv
from .sandbox import MIB, Limits


def main(args) -> int:
    """The `grade` subcommand (args from roofline.__main__)."""
    try:
        import jupyter_client  # noqa: F401
        import ipykernel  # noqa: F401
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
    limits = Limits(
        cell_s=args.timeout,
        notebook_s=args.notebook_timeout,
        memory_bytes=int(args.memory_mb * MIB),
        cpu_s=int(args.cpu_seconds),
        processes=args.processes,
        file_bytes=int(args.file_mb * MIB),
        disk_bytes=int(args.disk_mb * MIB),
        open_files=args.open_files,
    )
    roster = None
    if args.roster is not None:
        try:
            roster = read_roster(args.roster)
        except OSError as error:
            print(f"cannot read the roster {args.roster}: {error}", file=sys.stderr)
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
        )
    except (FileNotFoundError, RuntimeError) as error:
        print(error, file=sys.stderr)
        return 2
    write_csv(rows, out)
    students = sum(1 for r in rows if r["exercise"] == "TOTAL")
    errors = sum(1 for r in rows if r["exercise"] == "ERROR")
    skipped = sum(1 for r in rows if r["exercise"] == "SKIPPED")
    print(
        f"graded {students} submission(s), {errors} could not be graded, {skipped} file(s) skipped; "
        f"wrote {out} in {time.perf_counter() - start:.1f} s (journal: {journal})"
    )
    return 0
