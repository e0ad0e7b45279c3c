"""Grade a folder of submitted homework notebooks (.ipynb as downloaded from Colab/Jupyter).

    python -m roofline grade SUBMISSIONS_DIR --out grades.csv [--timeout S] [--jobs N] [--roster F]

Each notebook runs in its own kernel inside its own sandbox (bubblewrap when installed:
a fresh working directory holding only that notebook, no network, everything else
read-only and the other submissions invisible; resource limits always; a cgroup capping the
whole sandbox's memory and processes where one can be made). The grader
sends the notebook's code cells to the kernel one by one over the Jupyter protocol
(unix sockets in that notebook's private directory) and, after each cell, asks the
kernel for `STUDENT_ID` and `answers` in an execute request whose reply only the
grader receives. The kernel's stdout and stderr go to /dev/null: nothing a notebook
prints is ever read. The grader then RECOMPUTES every verdict itself, with `roofline`.

Nothing is lost: a cell that raises, runs past `--timeout` or kills its kernel is noted
and skipped (the kernel is restarted and the other cells run again without it), so
it costs only what depends on it; rows are journalled (`OUT.journal`) as each notebook
finishes, a rerun of a killed grader resumes from the journal, and the CSV is written
atomically. Every file in the folder gets a row: graded notebooks their question rows,
the rest a SKIPPED or ERROR row that says why.

The code lives in roofline/exercises/grader/, one module per job: `sandbox` (bubblewrap,
limits, seccomp, uid slots), `cgroup` (a memory and pids cgroup per sandbox), `kernel` (the
Jupyter client), `probe` (imported inside the student's kernel to report), `report`
(verdicts, CSV, roster, journal), `folder` (a whole folder in parallel), `gradebook` (--summary, --weights, --feedback-dir), `lms` (--gradebook-format canvas|moodle
joined onto the LMS's export), `regrade` (--compare OLD.csv), `gradescope` (the
autograder zip) and `cli`. This module re-exports the public names.

The CSV has one row per student and question (student_id, file, exercise, submitted,
correct, feedback, expected: the teacher-only right answer), NOTE rows (a cell that was
stopped or raised, a duplicated id, an id not on the roster), ERROR rows (a file that cannot
be read or graded), SKIPPED rows (a file that is not a notebook), MISSING rows (a roster
student without a submission), a TOTAL row per graded student ("3/8") and a final INFO row
(package version, set). Cells are neutralised for spreadsheets (a text cell starting with
= + - @, after any spaces, gets a leading ') and capped in length.
"""

from __future__ import annotations

import shutil  # noqa: F401  (tests patch grading.shutil.which)

from .grader.cli import main
from .grader.folder import grade_folder
from .grader.kernel import MAX_MESSAGE_BYTES, run_notebook
from .grader.kernel import parse_snapshot as _parse_snapshot
from .grader.report import (
    FEEDBACK_CAP,
    FIELDS,
    ID_CAP,
    JOURNAL_VERSION,
    SUBMITTED_CAP,
    grade_submission,
    read_roster,
    safe_cell,
    write_csv,
)
from .grader.report import read_journal as _read_journal
from .grader.report import roster_rows as _roster_rows
from .grader.report import survey as _survey
from .grader.sandbox import MIB, Limits, sandbox_kind

__all__ = [
    "FEEDBACK_CAP",
    "FIELDS",
    "ID_CAP",
    "JOURNAL_VERSION",
    "MAX_MESSAGE_BYTES",
    "MIB",
    "SUBMITTED_CAP",
    "Limits",
    "_parse_snapshot",
    "_read_journal",
    "_roster_rows",
    "_survey",
    "grade_folder",
    "grade_submission",
    "main",
    "read_roster",
    "run_notebook",
    "safe_cell",
    "sandbox_kind",
    "write_csv",
]
