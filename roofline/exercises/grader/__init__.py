"""The sandboxed grader, one module per job (see roofline/exercises/grading.py for the overview).

- `sandbox`: bubblewrap, resource limits, sandbox uids and their reaping;
- `cgroup`: one cgroup per sandbox (v1 or v2) capping its whole memory and processes;
- `kernel`: the Jupyter kernel client that runs one notebook's cells;
- `probe`: the module imported INSIDE the student's kernel to report its id and answers;
- `report`: verdicts, survey, journal, roster and CSV (plain data, no processes);
- `folder`: a whole folder, in parallel, with the journal;
- `lms`: the gradebook in Canvas's or Moodle's import layout, joined onto their export;
- `regrade`: the regrade report (--compare OLD.csv);
- `cli`: the `grade` subcommand.

Nothing is imported here: the kernel imports `probe` alone.
"""
