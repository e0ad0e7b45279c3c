"""Grade a folder of submissions: survey, private copies, parallel sandboxed runs, the journal.

Every file under the folder gets a row. Each notebook is copied once, without following
links, into the grader's private folder when the folder is surveyed; from then on only that
copy is read (a student who swaps their file for a link mid-grading changes nothing). Runs
are journalled as they finish (only final results: a run the grader stopped is not), and a
rerun reuses journalled reports of unchanged files.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import json
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

from .kernel import new_context, run_notebook
from .report import (
    JOURNAL_VERSION,
    clean_text,
    digest,
    grade_submission,
    read_journal,
    roster_rows,
    skeleton,
    survey,
)
from .sandbox import Limits, Slots, check_uids, probe, sandbox_kind


def _open_no_links(root: Path, relative: str) -> int:
    """A read-only descriptor of root/relative, opened one folder at a time without following
    a link anywhere below `root` (a folder swapped for a link mid-grading is refused too)."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    parts = Path(relative).parts
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(parts[-1], os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0), dir_fd=fd)
    finally:
        os.close(fd)


def _copy_private(root: Path, relative: str, target: Path) -> None:
    """Copy root/relative to `target` without following a link at any point, and only if what
    was opened is a regular file (a link, fifo or device is refused)."""
    fd = _open_no_links(root, relative)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{relative} is not a regular file")
        if info.st_nlink > 1 and not info.st_mode & stat.S_IROTH:
            raise OSError(
                f"{relative} is a hard link to a file that only its owner may read (it has "
                f"{info.st_nlink} names); copy the file itself into the folder"
            )
        with open(fd, "rb", closefd=False) as src, open(target, "xb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    finally:
        os.close(fd)
    os.chmod(target, 0o644)


def _snapshot(folder: Path, notebooks, copies: Path, done: dict) -> tuple[dict, dict]:
    """({name: private copy}, {name: sha256 or None}); unreadable files get an error report."""
    private: dict[str, Path | None] = {}
    digests: dict[str, str | None] = {}
    for i, (name, _path) in enumerate(notebooks):
        target = copies / f"{i}.ipynb"
        try:
            _copy_private(folder, name, target)
            private[name], digests[name] = target, digest(target)
        except OSError as error:
            private[name], digests[name] = None, None
            done[(name, None)] = {"error": f"cannot read the file: {clean_text(error, 200)}"}
    return private, digests


def folder_set(reports: dict, set_override: str | None) -> tuple[str | None, str | None]:
    """(the set the folder is graded as, a note about how it was chosen or None)."""
    if set_override:
        return set_override, None
    counts = collections.Counter(
        r.get("set") or r.get("code_set") for r in reports.values() if isinstance(r, dict)
    )
    counts.pop(None, None)
    if not counts:
        return None, None
    (best, n), *rest = counts.most_common()
    if not rest:
        return best, None
    others = ", ".join(f"{k} ({v})" for k, v in rest)
    return best, (
        f"graded as {best}, the set of {n} of {sum(counts.values())} notebooks "
        f"(also found: {others}); pass --set to choose"
    )


@dataclasses.dataclass(frozen=True)
class _Settings:
    """One grading run's settings: sandbox kind, limits, parallel jobs, first slot uid."""

    kind: str
    limits: Limits
    jobs: int
    uid: int | None
    hidden: list
    journal: Path | None


class _Journal:
    """Appends final reports, one JSON line each, flushed and synced as they come."""

    def __init__(self, path: Path | None, limits_key: str, digests: dict):
        self.handle = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self.key, self.digests, self.lock = limits_key, digests, threading.Lock()

    def add(self, name: str, report: dict) -> None:
        if self.handle is None or report.get("transient"):
            return
        entry = {
            "version": JOURNAL_VERSION,
            "file": name,
            "sha256": self.digests[name],
            "limits": self.key,
            "report": report,
        }
        with self.lock:
            self.handle.write(json.dumps(entry) + "\n")
            self.handle.flush()
            os.fsync(self.handle.fileno())

    def close(self) -> None:
        if self.handle:
            self.handle.close()


class _Runner:
    """Runs notebooks in parallel, each in its own sandbox slot; Ctrl-C stops them all."""

    def __init__(self, kind, limits, slots, base, hidden, journal):
        self.kind, self.limits, self.slots, self.base = kind, limits, slots, base
        self.hidden, self.journal = hidden, journal
        self.context = new_context()
        self.live, self.live_lock, self.stop = set(), threading.Lock(), threading.Event()

    def one(self, name: str, path: Path) -> dict:
        uid = self.slots.free.get()
        try:
            report = run_notebook(
                path,
                self.limits,
                self.kind,
                uid,
                self.base,
                self.context,
                self.hidden,
                self.live,
                self.live_lock,
                self.stop,
            )
        except Exception as error:  # nothing may be lost: record and go on
            report = {
                "error": f"the grader failed on this notebook: {type(error).__name__}: "
                f"{clean_text(error, 300)}",
                "transient": True,
            }
        finally:
            self.slots.free.put(uid)
        self.journal.add(name, report)
        return report

    def run_all(self, todo, reports: dict, progress) -> None:
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.slots.jobs) as pool:
            futures = {pool.submit(self.one, name, path): name for name, path in todo}
            try:
                for future in concurrent.futures.as_completed(futures):
                    name = futures[future]
                    reports[name] = future.result()
                    if progress:
                        progress(name, reports[name], False)
            except BaseException:  # Ctrl-C: stop every notebook now; the journal keeps the rest
                self.stop.set()
                for future in futures:
                    future.cancel()
                with self.live_lock:
                    kernels = list(self.live)
                for kernel in kernels:
                    kernel.kill()
                raise

    def close(self) -> None:
        self.context.destroy(linger=0)


def _duplicate_notes(notebooks, reports: dict) -> dict[str, list[str]]:
    """{file: other files whose student id looks the same} for graded reports (ids compared
    by `skeleton`: case, spacing, invisible characters and look-alike letters aside)."""
    owners: dict[str, list[str]] = {}
    for name, _ in notebooks:
        key = skeleton(reports[name].get("student_id"))
        if key and "error" not in reports[name]:
            owners.setdefault(key, []).append(name)
    return {
        name: [o for o in owners.get(skeleton(r.get("student_id")), []) if o != name]
        for name, r in reports.items()
        if "error" not in r
    }


def _rows(notebooks, reports: dict, set_id: str | None, set_note: str | None) -> list[dict]:
    """Every notebook's rows, with a NOTE for duplicated ids and for a majority set."""
    duplicates = _duplicate_notes(notebooks, reports)
    rows = []
    for name, path in notebooks:
        try:
            graded = grade_submission(path, reports[name], set_id, file=name)
        except Exception as error:
            graded = [
                {
                    "student_id": str(reports[name].get("student_id") or ""),
                    "file": name,
                    "exercise": "ERROR",
                    "submitted": "",
                    "correct": "",
                    "feedback": f"the grader failed: {type(error).__name__}: {error}",
                }
            ]
        extra = []
        if duplicates.get(name):
            extra.append(f"duplicated student id: also submitted in {', '.join(duplicates[name])}")
        if set_note and graded[-1]["exercise"] == "TOTAL":
            extra.append(set_note)
        notes = [
            {
                **graded[0],
                "exercise": "NOTE",
                "submitted": "",
                "correct": "",
                "feedback": text,
                "expected": "",
            }
            for text in extra
        ]
        rows += notes + graded
    return rows


def grade_folder(
    folder,
    timeout: float = 120,
    jobs: int | None = None,
    set_override: str | None = None,
    progress=None,
    limits: Limits | None = None,
    sandbox: str = "auto",
    roster=None,
    journal: Path | None = None,
    hidden=(),
    sandbox_uid: int = 64000,
    retry_errors: bool = False,
    aliases: dict[str, str] | None = None,
) -> list[dict]:
    """Grade every notebook under `folder`; return the CSV rows (one per file at least).

    `journal`: a JSONL file where each finished notebook's report is appended; reports
    already there (same file content and limits) are reused instead of run again, except,
    with `retry_errors`, those that ended in an error. `aliases`: {LMS id: roster id} (a
    Canvas ID, say), by which a file's name may name a roster student."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder of submitted .ipynb files")
    from .. import homework

    homework.sets()  # imports every exercise module first: their .pyc are then ready for kernels
    limits = limits or Limits(cell_s=timeout)
    kind = sandbox_kind(sandbox)
    jobs = max(1, jobs or os.cpu_count() or 1)
    root = os.geteuid() == 0 if hasattr(os, "geteuid") else False
    if root:
        check_uids(sandbox_uid, jobs)
    notebooks, skipped = survey(folder)
    hidden = [folder.resolve(), *[Path(h).resolve() for h in hidden]]
    done = read_journal(journal, limits.key()) if journal else {}
    if retry_errors:
        done = {key: r for key, r in done.items() if "error" not in r}
    base = Path(tempfile.mkdtemp(prefix="rlg-"))
    try:
        os.chmod(base, 0o711 if root else 0o700)
        copies = base / "submissions"
        copies.mkdir(mode=0o700)
        private, digests = _snapshot(folder, notebooks, copies, done)
        settings = _Settings(kind, limits, jobs, sandbox_uid if root else None, hidden, journal)
        reports = _run(notebooks, private, digests, done, progress, base, settings)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    set_id, set_note = folder_set(reports, set_override)
    rows = _rows(notebooks, reports, set_id, set_note)
    if roster is not None:
        names = {name: reports[name].get("student_id") for name, _ in notebooks}
        rows = roster_rows(rows, list(roster), names, aliases)
    return rows + skipped


def _run(notebooks, private, digests, done, progress, base: Path, settings: _Settings) -> dict:
    """{name: report}: journalled ones reused, the others run (in parallel)."""
    reports: dict[str, dict] = {}
    todo = []
    for name, _ in notebooks:
        if (name, digests[name]) in done:
            reports[name] = done[(name, digests[name])]
            if progress:
                progress(name, reports[name], True)
        else:
            todo.append((name, private[name]))
    if not todo:
        return reports
    limits, uid = settings.limits, settings.uid
    probe(settings.kind, uid, limits, base, todo[0][1])
    slots = Slots(settings.jobs, uid)
    journal = _Journal(settings.journal, limits.key(), digests)
    runner = _Runner(settings.kind, limits, slots, base, settings.hidden, journal)
    try:
        runner.run_all(todo, reports, progress)
    finally:
        journal.close()
        runner.close()
    return reports
