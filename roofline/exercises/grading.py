"""Grade a folder of submitted homework notebooks (.ipynb as downloaded from Colab/Jupyter).

    python -m roofline grade SUBMISSIONS_DIR --out grades.csv [--timeout S] [--jobs N] [--roster F]

Each notebook runs in its own kernel inside its own sandbox (bubblewrap when installed:
a fresh working directory holding only that notebook, no network, everything else
read-only and the other submissions invisible; resource limits always). The grader
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

The CSV has one row per student and question (student_id, file, exercise, submitted,
correct, feedback), NOTE rows (a cell that was stopped or raised, a duplicated id, an id
not on the roster), ERROR rows (a file that cannot be read or graded), SKIPPED rows (a
file that is not a notebook), MISSING rows (a roster student without a submission) and
a TOTAL row per graded student ("3/8"). Cells are neutralised for spreadsheets (a text
cell starting with = + - @ gets a leading ') and capped in length.
"""

from __future__ import annotations

import ast
import concurrent.futures
import csv
import dataclasses
import hashlib
import json
import os
import queue
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

__all__ = [
    "Limits",
    "grade_folder",
    "grade_submission",
    "run_notebook",
    "write_csv",
    "read_roster",
    "sandbox_kind",
    "FIELDS",
    "main",
]

FIELDS = ("student_id", "file", "exercise", "submitted", "correct", "feedback")
_SET_PATTERN = re.compile(r"""homework\.parameters\(\s*["'](?P<set>[A-Za-z0-9_-]+)["']""")
JOURNAL_VERSION = 1

# Caps on what goes into the CSV (characters).
ID_CAP, SUBMITTED_CAP, FEEDBACK_CAP = 100, 200, 500
MIB = 2**20


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one notebook may use. Times in seconds, sizes in bytes."""

    cell_s: float = 120.0
    """wall time of one code cell; past it the cell is interrupted (then its kernel killed)."""
    notebook_s: float = 1800.0
    """wall time of the whole notebook, kernel start-ups and reruns included."""
    memory_bytes: int = 4096 * MIB
    """address space of each process in the sandbox (RLIMIT_AS)."""
    cpu_s: int = 1800
    """CPU time of each process in the sandbox (RLIMIT_CPU)."""
    processes: int = 128
    """processes and threads of the sandbox's user (RLIMIT_NPROC; a kernel uses about 10)."""
    file_bytes: int = 256 * MIB
    """largest file a sandboxed process may write (RLIMIT_FSIZE)."""
    open_files: int = 256
    """open file descriptors per process (RLIMIT_NOFILE)."""
    disk_bytes: int = 256 * MIB
    """size of the sandbox's home and of its /tmp (each a tmpfs, so it counts as memory)."""
    startup_s: float = 60.0
    """time a kernel may take to start and answer (a busy machine is slow)."""
    interrupt_grace_s: float = 3.0
    """time an interrupted cell gets to stop before its kernel is killed."""
    restarts: int = 3
    """kernel restarts per notebook after a cell crashed or hung it."""

    def key(self) -> str:
        """What a journalled result depends on (a rerun with other limits regrades)."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)


# ---------------------------------------------------------------- the report, asked over the protocol
# Defined silently in the kernel before the student's cells under a random name; each
# snapshot is a user_expression calling it. It only reports values; it judges nothing.
_REPORTER = r"""
def %NAME%():
    import json
    def enc(v):
        try:
            import numpy
            if isinstance(v, numpy.ndarray) and v.size == 1:
                v = v.reshape(()).item()
            elif isinstance(v, numpy.generic):
                v = v.item()
        except Exception:
            pass
        try:
            mod = type(v).__module__ or ""
            if v is None or v is Ellipsis:
                return {"type": "none"}
            if isinstance(v, bool):
                return {"type": "other", "name": "bool", "value": repr(v)}
            if isinstance(v, int):
                return {"type": "int", "value": str(v)} if v.bit_length() < 1200 else {"type": "other", "name": "int", "value": "a huge integer"}
            if isinstance(v, float):
                return {"type": "float", "value": repr(v)}
            if isinstance(v, complex):
                return {"type": "complex", "value": [repr(v.real), repr(v.imag)]}
            if isinstance(v, str):
                return {"type": "str", "value": v[:2000]}
            if mod.startswith("sympy"):
                if getattr(v, "is_number", False) and v.is_real:
                    return {"type": "float", "value": repr(float(v))}
                return {"type": "sympy", "value": str(v)[:2000]}
            return {"type": "other", "name": type(v).__name__[:50], "value": repr(v)[:200]}
        except Exception:
            return {"type": "other", "name": type(v).__name__[:50], "value": "<unprintable>"}
    g = globals()
    sid, ans = g.get("STUDENT_ID", None), g.get("answers", None)
    try:
        length = len(sid) if isinstance(sid, str) else 0
        sid = sid[:1000] if isinstance(sid, str) else (None if sid is None else repr(sid)[:200])
    except Exception:
        length, sid = 0, "<unprintable>"
    try:
        ans = {str(k)[:50]: enc(v) for k, v in list(ans.items())[:100]} if isinstance(ans, dict) else None
    except Exception:
        ans = None
    return json.dumps({"has_id": "STUDENT_ID" in g, "student_id": sid, "id_length": length,
                       "answers": ans})
"""
_MAX_MESSAGE_BYTES = 8 * MIB  # larger messages from a kernel are dropped by zmq


def _parse_snapshot(reply_content) -> dict | None:
    """The report inside an execute_reply's user_expressions, validated; None if unusable.

    The kernel is the student's process, so this is only ever *their own* claim about
    their own id and answers (which they could have typed anyway): validate, never trust."""
    try:
        expression = reply_content["user_expressions"]["report"]
        if expression.get("status") != "ok":
            return None
        text = expression["data"]["text/plain"]
        if not isinstance(text, str) or len(text) > 2 * _MAX_MESSAGE_BYTES:
            return None
        report = json.loads(ast.literal_eval(text))
    except Exception:
        return None
    if not isinstance(report, dict) or not isinstance(report.get("has_id"), bool):
        return None
    sid = report.get("student_id")
    answers = report.get("answers")
    if sid is not None and not isinstance(sid, str):
        return None
    if answers is not None:
        if not isinstance(answers, dict) or len(answers) > 100:
            return None
        for key, value in answers.items():
            if not (isinstance(value, dict) and isinstance(value.get("type"), str)):
                return None
    length = report.get("id_length")
    length = (
        length if isinstance(length, int) and not isinstance(length, bool) and length >= 0 else 0
    )
    return {
        "has_id": report["has_id"],
        "student_id": sid,
        "id_length": max(length, len(sid or "")),
        "answers": answers,
    }


# ---------------------------------------------------------------- the sandbox
_warned = set()
_warn_lock = threading.Lock()


def _warn_once(key: str, message: str) -> None:
    with _warn_lock:
        if key not in _warned:
            _warned.add(key)
            print(f"WARNING: {message}", file=sys.stderr)


def sandbox_kind(requested: str = "auto") -> str:
    """'bwrap' (bubblewrap usable here) or 'rlimits' (resource limits only)."""
    if requested not in ("auto", "bwrap", "rlimits"):
        raise ValueError(f"--sandbox must be auto, bwrap or rlimits, not {requested!r}")
    if requested == "rlimits":
        return "rlimits"
    usable = shutil.which("bwrap") is not None and sys.platform.startswith("linux")
    if usable:
        probe = subprocess.run(
            ["bwrap", *_bwrap_base(), "--", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=30,
        )
        usable = probe.returncode == 0
        why = probe.stderr.decode(errors="replace").strip()[-300:]
    else:
        why = "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if not usable:
        if requested == "bwrap":
            raise RuntimeError(f"the bubblewrap sandbox cannot run here: {why}")
        _warn_once(
            "no-bwrap",
            f"no sandbox: {why}. Student code will run with resource limits only: "
            "it can read what your account can read, reach the network, and "
            "(unless the grader runs as root) write your files. Grade in a "
            "throwaway account or container, or install bubblewrap.",
        )
        return "rlimits"
    return "bwrap"


def _bwrap_base() -> list[str]:
    """The system part of the sandbox: read-only /usr /etc ..., its own /proc /dev, no network."""
    args = [
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    if os.geteuid() != 0:
        args += ["--unshare-user"]
    for top in ("/usr", "/etc"):
        if os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _python_paths() -> list[str]:
    """Directories the kernel's Python needs, read-only: the interpreter, the venv and `roofline`.

    Only the `roofline` package folder itself is shown (not the repository around it, where a
    teacher may keep submissions or grades)."""
    import roofline

    wanted = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
        os.path.dirname(os.path.abspath(roofline.__file__)),
    }
    for entry in sys.path:
        if (
            entry
            and os.path.isdir(entry)
            and any(entry.startswith(p + os.sep) for p in (sys.prefix, sys.base_prefix))
        ):
            wanted.add(entry)
    paths = sorted(
        {os.path.realpath(p) for p in wanted if os.path.isdir(p)}
        | {os.path.abspath(p) for p in wanted if os.path.isdir(p)}
    )
    system = ("/usr/", "/etc/", "/bin/", "/lib/", "/lib64/", "/sbin/")
    paths = [p for p in paths if not (p + "/").startswith(system)]
    return [p for p in paths if not any(p.startswith(q + os.sep) for q in paths)]


def _rlimit_args(limits: Limits, processes: int) -> list[str]:
    return [
        f"--as={limits.memory_bytes}",
        f"--cpu={int(limits.cpu_s)}",
        f"--nproc={processes}",
        f"--fsize={limits.file_bytes}",
        f"--nofile={limits.open_files}",
        "--core=0",
    ]


def _count_processes(uid: int) -> int:
    """Processes and threads (tasks) of `uid` now: what RLIMIT_NPROC counts."""
    count = 0
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry}/task"))
            except OSError:
                pass
    return count


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of `uid` (a sandbox uid no one else uses), until none is left."""
    if not os.path.isdir("/proc"):
        return
    for _ in range(50):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found = True
                    os.kill(int(entry), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass
        if not found:
            return
        time.sleep(0.02)


class _Sandbox:
    """One notebook's private directory and the command that starts its kernel."""

    def __init__(self, base: Path, kind: str, uid: int | None, limits: Limits, notebook: Path):
        self.kind, self.uid, self.limits = kind, uid, limits
        self.dir = Path(tempfile.mkdtemp(prefix="nb-", dir=base))
        self.home, self.tmp, self.run = self.dir / "home", self.dir / "tmp", self.dir / "run"
        for folder in (self.home, self.tmp, self.run):
            folder.mkdir(mode=0o700)
            if uid is not None:
                os.chown(folder, uid, uid)
        os.chmod(self.home, 0o711)  # bwrap's set-up (no capabilities left) must enter it
        shutil.copyfile(notebook, self.home / "submission.ipynb")
        if uid is not None:
            os.chown(self.home / "submission.ipynb", uid, uid)
            os.chown(self.dir, 0, 0)
            os.chmod(self.dir, 0o711)
        self.inside_home = "/home/student" if kind == "bwrap" else str(self.home)
        self.inside_tmp = "/tmp" if kind == "bwrap" else str(self.tmp)
        self.inside_run = "/run/kernel" if kind == "bwrap" else str(self.run)

    def env(self) -> dict:
        path = os.pathsep.join(
            [os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]
        )
        return {
            "PATH": path,
            "HOME": self.inside_home,
            "TMPDIR": self.inside_tmp,
            "USER": "student",
            "LOGNAME": "student",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "NUMEXPR_NUM_THREADS": "1",
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def command(self, kernel: list[str], processes: int, hidden: list[Path]) -> list[str]:
        prlimit = shutil.which("prlimit")
        limit = [prlimit, *_rlimit_args(self.limits, processes), "--"] if prlimit else []
        if self.kind != "bwrap":
            return limit + kernel
        args = ["bwrap", *_bwrap_base()]
        # home and /tmp: size-capped tmpfs (a notebook cannot fill the grader's disk). Mounted
        # first, so that a Python or a checkout that lives under /tmp is bound on top of it.
        size = str(self.limits.disk_bytes)
        args += [
            "--perms",
            "0755",
            "--dir",
            "/home",
            "--perms",
            "0755",
            "--dir",
            "/run",
            "--perms",
            "01777",
            "--size",
            size,
            "--tmpfs",
            "/home/student",
            "--perms",
            "01777",
            "--size",
            size,
            "--tmpfs",
            "/tmp",
        ]
        made = {"/", "/tmp", "/home", "/home/student", "/run"}  # already there, with their modes
        for path in _python_paths():
            for parent in reversed(Path(path).parents[:-1]):  # readable folders above it
                if str(parent) not in made:
                    made.add(str(parent))
                    args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", path, path]
        shown = _python_paths() + ["/usr", "/etc"]
        for path in hidden:  # submissions or output inside a shown folder: hide them
            if path.exists() and any(
                str(path) == p or str(path).startswith(p + os.sep) for p in shown
            ):
                args += (
                    ["--tmpfs", str(path)]
                    if path.is_dir()
                    else ["--ro-bind", "/dev/null", str(path)]
                )
        args += [
            "--ro-bind",
            str(self.home / "submission.ipynb"),
            "/home/student/submission.ipynb",
            "--bind",
            str(self.run),
            self.inside_run,
            "--chdir",
            "/home/student",
            "--hostname",
            "sandbox",
            "--clearenv",
        ]
        for name, value in self.env().items():
            args += ["--setenv", name, value]
        if self.uid is not None:  # root: a real unprivileged uid for the student's code
            args += [
                "--cap-add",
                "CAP_SETUID",
                "--cap-add",
                "CAP_SETGID",
                "--",
                "setpriv",
                f"--reuid={self.uid}",
                f"--regid={self.uid}",
                "--clear-groups",
                "--bounding-set=-all",
                "--inh-caps=-all",
                "--no-new-privs",
            ]
        else:
            args += ["--"]
        return limit + args + kernel

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- one notebook
# ipykernel_launcher without the debugger (debugpy's import is a quarter of a kernel's start-up).
_LAUNCH = (
    "import sys; sys.modules['debugpy'] = None; "
    "from ipykernel import kernelapp; kernelapp.launch_new_instance()"
)


class _KernelGone(Exception):
    pass


class _Kernel:
    """A kernel in a sandbox, driven over ipc sockets that live in the sandbox's run dir."""

    def __init__(
        self,
        sandbox: _Sandbox,
        context,
        processes: int,
        hidden,
        deadline: float,
        live: set,
        live_lock,
    ):
        from jupyter_client.blocking import BlockingKernelClient
        from jupyter_client.connect import write_connection_file

        self.sandbox, self.deadline = sandbox, deadline
        # The same sockets seen from both sides: <run>/k-1 ... here, /run/kernel/k-1 ... inside.
        key = secrets.token_hex(16).encode()
        ports = dict(shell_port=1, iopub_port=2, stdin_port=3, control_port=4, hb_port=5)
        self.connection = str(sandbox.run / "grader.json")
        write_connection_file(
            self.connection, transport="ipc", ip=str(sandbox.run / "k"), key=key, **ports
        )
        write_connection_file(
            str(sandbox.run / "kernel.json"),
            transport="ipc",
            ip=f"{sandbox.inside_run}/k",
            key=key,
            **ports,
        )
        if sandbox.uid is not None:
            os.chown(sandbox.run / "kernel.json", sandbox.uid, sandbox.uid)
        kernel = [
            sys.executable,
            "-s",
            "-c",
            _LAUNCH,
            "-f",
            f"{sandbox.inside_run}/kernel.json",
            "--HistoryManager.enabled=False",
            "--IPKernelApp.quiet=True",
        ]
        command = sandbox.command(kernel, processes, hidden)
        extra = {}
        if sandbox.kind != "bwrap":
            extra = {"env": sandbox.env(), "cwd": str(sandbox.home)}
            if sandbox.uid is not None:
                extra.update(user=sandbox.uid, group=sandbox.uid, extra_groups=[])
            if not shutil.which("prlimit"):
                extra["preexec_fn"] = _preexec_limits(sandbox.limits, processes)
        self.live, self.live_lock = live, live_lock
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            **extra,
        )
        with live_lock:
            live.add(self)
        self.client = BlockingKernelClient(connection_file=self.connection, context=context)
        self.client.load_connection_file()
        self.client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=True)

    stop = threading.Event()  # replaced per grading run; set: every wait ends now

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_reply(self, msg_id: str, until: float, channel="shell"):
        """The reply to msg_id, or None at `until`; raises _KernelGone if the kernel died."""
        get = self.client.get_shell_msg if channel == "shell" else self.client.get_control_msg
        while True:
            left = min(until, self.deadline) - time.monotonic()
            if left <= 0 or self.stop.is_set():
                return None
            try:
                message = get(timeout=min(0.2, left))
            except queue.Empty:
                if not self.alive():
                    raise _KernelGone(self.process.returncode) from None
                continue
            except Exception:  # an unreadable message: ignore it
                continue
            if (
                isinstance(message, dict)
                and message.get("parent_header", {}).get("msg_id") == msg_id
            ):
                return message

    def ready(self, startup_s: float) -> bool:
        until = time.monotonic() + startup_s
        while time.monotonic() < min(until, self.deadline):
            msg_id = self.client.kernel_info()
            if self.wait_reply(msg_id, min(until, time.monotonic() + 2.0)) is not None:
                return True
        return False

    def send(self, code: str, silent=False, user_expressions=None) -> str:
        return self.client.execute(
            code,
            silent=silent,
            store_history=not silent,
            allow_stdin=False,
            stop_on_error=False,
            user_expressions=user_expressions or {},
        )

    def execute(self, code: str, until: float, silent=False, user_expressions=None):
        reply = self.wait_reply(self.send(code, silent, user_expressions), until)
        return None if reply is None else reply.get("content", {})

    def interrupt(self) -> None:
        message = self.client.session.msg("interrupt_request", {})
        self.client.control_channel.send(message)

    def kill(self) -> None:
        try:
            self.client.stop_channels()
        except Exception:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.kill()
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self.sandbox.uid is not None:
            _kill_uid(self.sandbox.uid)
        with self.live_lock:
            self.live.discard(self)


def _preexec_limits(limits: Limits, processes: int):
    def apply():
        import resource

        for name, value in (
            ("RLIMIT_AS", limits.memory_bytes),
            ("RLIMIT_CPU", int(limits.cpu_s)),
            ("RLIMIT_NPROC", processes),
            ("RLIMIT_FSIZE", limits.file_bytes),
            ("RLIMIT_NOFILE", limits.open_files),
            ("RLIMIT_CORE", 0),
        ):
            if hasattr(resource, name):
                try:
                    resource.setrlimit(getattr(resource, name), (value, value))
                except (ValueError, OSError):
                    pass

    return apply


def _stopped_kernel_note(number, gone) -> str:
    """The NOTE for a cell whose kernel died (it is skipped and the notebook run again)."""
    return (
        f"code cell {number} stopped its kernel (the kernel {_describe_exit(gone.args[0])}); "
        "it was skipped and the notebook run again without it"
    )


def _describe_exit(code) -> str:
    if code is None:
        return "stopped answering"
    if code > 128:  # bwrap and shells report a child killed by signal N as 128 + N
        code = 128 - code
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        extra = " (out of memory or CPU time?)" if -code in (signal.SIGKILL, signal.SIGXCPU) else ""
        return f"was killed by {name}{extra}"
    return f"exited with status {code}"


def _clean_text(text, cap: int) -> str:
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", " ", str(text)).replace("\n", " ")
    return text if len(text) <= cap else text[: cap - 1] + "…"


def run_notebook(
    path: Path,
    limits: Limits = Limits(),
    kind: str = "bwrap",
    uid: int | None = None,
    base: Path | None = None,
    context=None,
    hidden=(),
    live=None,
    live_lock=None,
    stop: threading.Event | None = None,
) -> dict:
    """Execute one submission in sandboxed kernels; return its set, id, answers and notes.

    Cells run one by one; after each, the id and answers are asked for over the protocol.
    A cell that raises is noted; one past `limits.cell_s` is interrupted; one that kills or
    hangs its kernel is skipped and the notebook is run again from the start without it."""
    import nbformat
    import zmq

    try:
        nb = nbformat.read(str(path), as_version=4)
        cells = [
            str(cell.get("source", "")) for cell in nb.cells if cell.get("cell_type") == "code"
        ]
    except Exception as error:
        return {
            "error": f"cannot read the notebook: {type(error).__name__}: {_clean_text(error, 200)}"
        }
    found = _SET_PATTERN.search("\n".join(cells))
    set_id = found.group("set") if found else None
    own_context = context is None
    if own_context:
        context = zmq.Context()
        context.setsockopt(zmq.MAXMSGSIZE, _MAX_MESSAGE_BYTES)
        context.setsockopt(zmq.LINGER, 0)
    live = set() if live is None else live
    live_lock = live_lock or threading.Lock()
    own_base = base is None
    base = Path(tempfile.mkdtemp(prefix="rlg-")) if own_base else base
    if own_base and uid is not None:
        os.chmod(base, 0o711)
    deadline = time.monotonic() + limits.notebook_s
    processes = (
        limits.processes if uid is not None else _count_processes(os.getuid()) + limits.processes
    )
    notes: dict[int, str] = {}
    skip: set[int] = set()
    report = None
    failure = None
    try:
        for attempt in range(limits.restarts + 1):
            if stop is not None and stop.is_set():
                failure = "the grader was stopped"
                break
            sandbox = _Sandbox(base, kind, uid, limits, path)
            kernel = None
            try:
                kernel = _Kernel(
                    sandbox, context, processes, list(hidden), deadline, live, live_lock
                )
                if stop is not None:
                    kernel.stop = stop
                if not kernel.ready(limits.startup_s):
                    failure = (
                        f"the kernel did not start within {limits.startup_s:g} s"
                        if time.monotonic() < deadline
                        else None
                    )
                    break
                name = "_roofline_report_" + secrets.token_hex(8)
                setup = kernel.execute(
                    _REPORTER.replace("%NAME%", name),
                    time.monotonic() + limits.startup_s,
                    silent=True,
                )
                if setup is None or setup.get("status") != "ok":
                    failure = "the kernel did not accept the grader's report function"
                    break
                snapshot = {"report": f"{name}()"}
                restart = False
                for number, source in enumerate(cells, start=1):
                    if time.monotonic() >= deadline:
                        break
                    if number in skip or not source.strip():
                        continue
                    try:
                        msg_id = kernel.send(source, user_expressions=snapshot)
                        reply = kernel.wait_reply(msg_id, time.monotonic() + limits.cell_s)
                        if reply is None and time.monotonic() < deadline:
                            kernel.interrupt()
                            reply = kernel.wait_reply(
                                msg_id, time.monotonic() + limits.interrupt_grace_s
                            )
                            if reply is None:
                                notes[number] = (
                                    f"code cell {number} ran longer than {limits.cell_s:g} s "
                                    "and could not be stopped; it was skipped and the "
                                    "notebook run again without it"
                                )
                                skip.add(number)
                                restart = True
                                break
                        content = {} if reply is None else reply.get("content", {})
                        if content.get("status") == "error":
                            if content.get("ename") == "KeyboardInterrupt":
                                notes[number] = (
                                    f"code cell {number} ran longer than "
                                    f"{limits.cell_s:g} s and was stopped"
                                )
                            else:
                                notes[number] = (
                                    f"code cell {number} raised "
                                    f"{_clean_text(content.get('ename'), 60)}: "
                                    f"{_clean_text(content.get('evalue', ''), 120)}"
                                )
                    except _KernelGone as gone:
                        notes[number] = _stopped_kernel_note(number, gone)
                        skip.add(number)
                        restart = True
                        break
                    if content.get("status") != "ok":  # no user_expressions in the reply: ask
                        try:
                            content = kernel.execute(
                                "",
                                time.monotonic() + min(10.0, limits.startup_s),
                                silent=True,
                                user_expressions=snapshot,
                            )
                        except _KernelGone as gone:  # it died just after this cell: its doing
                            notes[number] = _stopped_kernel_note(number, gone)
                            skip.add(number)
                            restart = True
                            break
                    fresh = _parse_snapshot(content) if content else None
                    if fresh is not None:
                        report = fresh
                if not restart:
                    break
                if attempt == limits.restarts:
                    notes[len(cells) + 1] = (
                        f"its kernel was restarted {limits.restarts} times; the "
                        "cells after the last failure were not run"
                    )
            except _KernelGone as gone:
                failure = (
                    f"the kernel {_describe_exit(gone.args[0])} before the notebook's cells ran"
                )
                break
            finally:
                if kernel is not None:
                    kernel.kill()
                sandbox.cleanup()
        if time.monotonic() >= deadline:
            notes[len(cells) + 3] = (
                f"the notebook ran longer than {limits.notebook_s:g} s in all and "
                "was stopped; answers recorded until then are graded"
            )
    finally:
        if own_base:
            shutil.rmtree(base, ignore_errors=True)
        if own_context:
            context.destroy(linger=0)
    if report is not None and failure:
        notes[len(cells) + 2] = f"after a restart {failure}; the later cells were not run"
    ordered = [notes[k] for k in sorted(notes)]
    if report is None:
        error = (
            failure or "the notebook's STUDENT_ID and answers could not be read after running it"
        )
        return {"set": set_id, "notes": ordered, "error": error}
    return {"set": set_id, "notes": ordered, **report}


# ---------------------------------------------------------------- verdicts (in the grader)
def _decode(encoded):
    kind = encoded.get("type")
    value = encoded.get("value")
    if kind == "none":
        return None, ""
    if kind == "float":
        return float(value), str(value)
    if kind == "int":
        return int(value), str(value)
    if kind == "complex":
        return complex(float(value[0]), float(value[1])), f"{value[0]}+{value[1]}j"
    if kind in ("str", "sympy"):
        return str(value), str(value)
    raise ValueError(
        f"a {_clean_text(encoded.get('name', 'value'), 50)} "
        f"({_clean_text(value, 100)}) is not a number, text or formula"
    )


def grade_submission(
    path: Path, report: dict, set_override: str | None = None, file: str | None = None
) -> list[dict]:
    """Rows for one submission, every verdict recomputed here with `roofline`."""
    from . import homework

    file = file or path.name
    sid = report.get("student_id")
    sid_text = (sid or "").strip()

    def row(exercise, submitted="", correct="", feedback=""):
        return {
            "student_id": sid_text,
            "file": file,
            "exercise": exercise,
            "submitted": submitted,
            "correct": correct,
            "feedback": feedback,
        }

    notes = [row("NOTE", feedback=note) for note in report.get("notes", [])]
    if "error" in report:
        return [row("ERROR", feedback=report["error"])] + notes
    length = max(report.get("id_length") or 0, len(sid or ""))
    if length > ID_CAP:
        notes.append(
            row(
                "NOTE",
                feedback=f"STUDENT_ID is {length} characters long; it is cut to "
                f"{ID_CAP} characters in this file (and to 1000 for grading)",
            )
        )
    set_id = set_override or report.get("set")
    if set_id not in homework.sets():
        return [
            row(
                "ERROR",
                feedback="cannot tell which homework set this is (no "
                'homework.parameters("partN", ...) cell); pass --set',
            )
        ] + notes
    if not report.get("has_id"):
        return [
            row(
                "ERROR",
                feedback="the notebook has no STUDENT_ID; cannot derive the student's numbers",
            )
        ] + notes
    if not homework.normalise_id(sid):
        return [
            row(
                "ERROR",
                feedback="STUDENT_ID is empty: the student did not type their id, "
                "so their numbers are unknown; ask them to resubmit",
            )
        ] + notes
    answers = report.get("answers")
    if answers is None:
        return [row("ERROR", feedback="the notebook has no `answers` dictionary")] + notes
    rows, right = [], 0
    questions = homework.questions(set_id)
    for q in questions:
        exercise = f"{set_id}/{q}"
        if q not in answers:
            rows.append(
                row(exercise, "", "no", f'unanswered: there is no answers["{q}"] in the notebook')
            )
            continue
        try:
            value, shown = _decode(answers[q])
        except (ValueError, TypeError, OverflowError, IndexError, AttributeError) as error:
            rows.append(
                row(exercise, str(answers[q].get("value", "")), "no", f"cannot be graded: {error}")
            )
            continue
        if value is None:
            rows.append(row(exercise, "", "no", "unanswered"))
            continue
        feedback = homework.check(sid, set_id, q, value)
        right += bool(feedback.correct)
        rows.append(row(exercise, shown, "yes" if feedback.correct else "no", feedback.message))
    return rows + notes + [row("TOTAL", correct=f"{right}/{len(questions)}")]


# ---------------------------------------------------------------- the folder
def _survey(folder: Path) -> tuple[list[tuple[str, Path]], list[dict]]:
    """(name, path) of every notebook to grade, and a SKIPPED row for every other file.

    Notebooks are found in subfolders too and whatever the case of `.ipynb`; names are
    relative to `folder`. Links are not followed (they could point anywhere)."""
    notebooks, skipped = [], []

    def skip(name, why):
        skipped.append(
            {
                "student_id": "",
                "file": name,
                "exercise": "SKIPPED",
                "submitted": "",
                "correct": "",
                "feedback": why,
            }
        )

    for root, dirs, files in os.walk(folder, followlinks=False):
        rel_root = Path(root).relative_to(folder)
        for d in sorted(dirs):
            if os.path.islink(os.path.join(root, d)):
                skip((rel_root / d).as_posix(), "a link to a folder; links are not followed")
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(root, d)))
        for name in sorted(files):
            full = Path(root) / name
            rel = (rel_root / name).as_posix()
            if full.is_symlink():
                skip(rel, "a link; links are not followed (copy the file itself into the folder)")
            elif ".ipynb_checkpoints" in full.relative_to(folder).parts:
                skip(rel, "a Jupyter checkpoint (autosave) copy, not a submission")
            elif not full.is_file():
                skip(rel, "not a regular file")
            elif full.suffix.lower() == ".ipynb":
                notebooks.append((rel, full))
            else:
                what = f"a {full.suffix} file" if full.suffix else "a file without an extension"
                skip(rel, f"not a notebook ({what}); rename it to .ipynb if it is one")
    notebooks.sort(key=lambda item: (item[0].casefold(), item[0]))
    skipped.sort(key=lambda row: (row["file"].casefold(), row["file"]))
    return notebooks, skipped


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_journal(journal: Path, limits_key: str) -> dict:
    """{(name, sha256): report} from a journal; a torn last line (a killed grader) is ignored."""
    done = {}
    try:
        with open(journal, encoding="utf-8") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                    if (
                        entry.get("version") == JOURNAL_VERSION
                        and entry.get("limits") == limits_key
                    ):
                        done[(entry["file"], entry["sha256"])] = entry["report"]
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue
    except FileNotFoundError:
        pass
    return done


def read_roster(path) -> list[str]:
    """Student ids, one a line (or the first column of a CSV; a header named id/student_id is skipped)."""
    ids = []
    with open(path, newline="", encoding="utf-8-sig") as handle:
        for row in csv.reader(handle):
            if not row or not row[0].strip() or row[0].strip().startswith("#"):
                continue
            ids.append(row[0].strip())
    if ids and ids[0].casefold() in ("id", "student_id", "student id", "studentid"):
        ids = ids[1:]
    return ids


def _roster_rows(rows: list[dict], roster: list[str], names: dict[str, str]) -> list[dict]:
    """NOTE rows for ids off the roster or files named for another student; MISSING rows."""
    from . import homework

    known = {homework.normalise_id(r): r for r in roster if homework.normalise_id(r)}
    by_file: dict[str, list[dict]] = {}
    for r in rows:
        by_file.setdefault(r["file"], []).append(r)
    out, seen = [], set()
    for file, group in by_file.items():
        graded = any(r["exercise"] == "TOTAL" for r in group)
        key = homework.normalise_id(names.get(file))
        extra = []
        if graded and key:
            seen.add(key)
            if key not in known:
                extra.append("this STUDENT_ID is not on the roster")
        stem = re.sub(r"[^0-9a-z]+", " ", Path(file).stem.casefold())
        tokens = set(stem.split())
        named = sorted(
            (k for k in known if k in tokens or (len(k) >= 5 and k in stem)), key=len, reverse=True
        )
        if graded and named and key not in named:
            extra.append(
                f"the file is named for {known[named[0]]} but its STUDENT_ID is "
                f"{names.get(file) or '(empty)'}"
            )
        notes = [
            {**group[0], "exercise": "NOTE", "submitted": "", "correct": "", "feedback": text}
            for text in extra
        ]
        out += group[:1] + notes + group[1:] if group[0]["exercise"] == "ERROR" else notes + group
    for key, original in known.items():
        if key not in seen:
            out.append(
                {
                    "student_id": original,
                    "file": "",
                    "exercise": "MISSING",
                    "submitted": "",
                    "correct": "",
                    "feedback": "on the roster, but no graded submission has this id",
                }
            )
    return out


def _probe(kind: str, uid: int | None, limits: Limits, base: Path, notebook: Path) -> None:
    """Start Python the way kernels will be started (no student code): a clear error up front
    instead of an ERROR row per notebook when the sandbox cannot work here."""
    sandbox = _Sandbox(base, kind, uid, limits, notebook)
    processes = (
        limits.processes if uid is not None else _count_processes(os.getuid()) + limits.processes
    )
    command = sandbox.command(
        [sys.executable, "-s", "-c", "import ipykernel, zmq, roofline"], processes, []
    )
    extra = {}
    if kind != "bwrap":
        extra = {"env": sandbox.env(), "cwd": str(sandbox.home)}
        if uid is not None:
            extra.update(user=uid, group=uid, extra_groups=[])
    try:
        result = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=max(60.0, limits.startup_s),
            **extra,
        )
        why = (
            result.stderr.decode(errors="replace").strip()[-500:]
            or f"exit status {result.returncode}"
        )
        failed = result.returncode != 0
    except (OSError, subprocess.TimeoutExpired) as error:
        failed, why = True, str(error)
    finally:
        sandbox.cleanup()
    if failed:
        who = f" as uid {uid}" if uid is not None else ""
        hint = (
            " (that uid must be able to read and run this Python and its packages: a venv under "
            "/root is not; install bubblewrap, or put the venv where every user can read it)"
            if kind != "bwrap" and uid is not None
            else ""
        )
        raise RuntimeError(f"the {kind} sandbox cannot start Python{who}{hint}: {why}")


class _Slots:
    """Sandbox uids for the notebooks running at once (root only): one uid per slot, so a
    process limit or a `kill -1` in one sandbox never touches another."""

    def __init__(self, jobs: int, base_uid: int | None):
        self.free = queue.Queue()
        for i in range(jobs):
            self.free.put(None if base_uid is None else base_uid + i)


def _check_uids(base_uid: int, jobs: int) -> None:
    import pwd

    for uid in range(base_uid, base_uid + jobs):
        try:
            user = pwd.getpwuid(uid).pw_name
        except KeyError:
            continue
        raise RuntimeError(
            f"uid {uid} belongs to the user {user!r}; sandboxed notebooks need uids no "
            f"one uses: pass --sandbox-uid with another first uid"
        )
    for uid in range(base_uid, base_uid + jobs):
        if _count_processes(uid):
            raise RuntimeError(
                f"processes of uid {uid} are running; sandboxed notebooks need uids no "
                f"one uses: pass --sandbox-uid with another first uid"
            )


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
) -> list[dict]:
    """Grade every notebook under `folder`; return the CSV rows (one per file at least).

    `journal`: a JSONL file where each finished notebook's report is appended; reports
    already there (same file content and limits) are reused instead of run again."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder of submitted .ipynb files")
    import zmq

    from . import homework

    homework.sets()  # imports every exercise module here first: their .pyc are then ready for the kernels
    limits = limits or Limits(cell_s=timeout)
    kind = sandbox_kind(sandbox)
    jobs = max(1, jobs or os.cpu_count() or 1)
    root = os.geteuid() == 0 if hasattr(os, "geteuid") else False
    if root:
        _check_uids(sandbox_uid, jobs)
    slots = _Slots(jobs, sandbox_uid if root else None)
    notebooks, skipped = _survey(folder)
    hidden = [folder.resolve(), *[Path(h).resolve() for h in hidden]]
    done = _read_journal(journal, limits.key()) if journal else {}
    digests = {}
    for name, path in notebooks:
        try:
            digests[name] = _digest(path)
        except OSError as error:
            digests[name] = None
            done[(name, None)] = {"error": f"cannot read the file: {_clean_text(error, 200)}"}
    reports: dict[str, dict] = {}
    todo = []
    for name, path in notebooks:
        if (name, digests[name]) in done:
            reports[name] = done[(name, digests[name])]
            if progress:
                progress(name, reports[name], True)
        else:
            todo.append((name, path))

    context = zmq.Context()
    context.setsockopt(zmq.MAXMSGSIZE, _MAX_MESSAGE_BYTES)
    context.setsockopt(zmq.LINGER, 0)
    base = Path(tempfile.mkdtemp(prefix="rlg-"))
    if root:
        os.chmod(base, 0o711)
    if todo:
        try:
            _probe(kind, sandbox_uid if root else None, limits, base, todo[0][1])
        except BaseException:
            shutil.rmtree(base, ignore_errors=True)
            context.destroy(linger=0)
            raise
    live, live_lock, stop = set(), threading.Lock(), threading.Event()
    journal_lock = threading.Lock()
    journal_handle = open(journal, "a", encoding="utf-8") if journal else None

    def one(name, path):
        uid = slots.free.get()
        try:
            try:
                report = run_notebook(
                    path, limits, kind, uid, base, context, hidden, live, live_lock, stop
                )
            except Exception as error:  # nothing may be lost: record and go on
                report = {
                    "error": f"the grader failed on this notebook: {type(error).__name__}: "
                    f"{_clean_text(error, 300)}"
                }
        finally:
            slots.free.put(uid)
        if journal_handle:
            line = json.dumps(
                {
                    "version": JOURNAL_VERSION,
                    "file": name,
                    "sha256": digests[name],
                    "limits": limits.key(),
                    "report": report,
                }
            )
            with journal_lock:
                journal_handle.write(line + "\n")
                journal_handle.flush()
                os.fsync(journal_handle.fileno())
        return report

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(one, name, path): name for name, path in todo}
            try:
                for future in concurrent.futures.as_completed(futures):
                    name = futures[future]
                    reports[name] = future.result()
                    if progress:
                        progress(name, reports[name], False)
            except BaseException:  # Ctrl-C: stop every notebook now; the journal keeps what is done
                stop.set()
                for future in futures:
                    future.cancel()
                with live_lock:
                    kernels = list(live)
                for kernel in kernels:
                    kernel.kill()
                raise
    finally:
        if journal_handle:
            journal_handle.close()
        context.destroy(linger=0)
        shutil.rmtree(base, ignore_errors=True)

    owners: dict[str, list[str]] = {}
    for name, _ in notebooks:
        key = homework.normalise_id(reports[name].get("student_id"))
        if key and "error" not in reports[name]:
            owners.setdefault(key, []).append(name)
    rows = []
    for name, path in notebooks:
        try:
            graded = grade_submission(path, reports[name], set_override, file=name)
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
        key = homework.normalise_id(reports[name].get("student_id"))
        others = [other for other in owners.get(key, []) if other != name]
        if others and "error" not in reports[name]:
            graded.insert(
                0,
                {
                    **graded[0],
                    "exercise": "NOTE",
                    "submitted": "",
                    "correct": "",
                    "feedback": f"duplicated student id: also submitted in {', '.join(others)}",
                },
            )
        rows += graded
    if roster is not None:
        names = {name: reports[name].get("student_id") for name, _ in notebooks}
        rows = _roster_rows(rows, list(roster), names)
    return rows + skipped


# ---------------------------------------------------------------- the CSV
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_CAPS = {
    "student_id": ID_CAP,
    "file": 300,
    "exercise": 60,
    "submitted": SUBMITTED_CAP,
    "correct": 20,
    "feedback": FEEDBACK_CAP,
}


def safe_cell(value, cap: int = FEEDBACK_CAP) -> str:
    """A CSV cell a spreadsheet shows as text: control characters become spaces, the length
    is capped, and text starting with = + - @ (a formula) gets a leading ' unless it is a
    plain number such as -1.5e3."""
    text = _clean_text("" if value is None else value, cap)
    if text[:1] in ("=", "+", "-", "@") and not _NUMBER.fullmatch(text):
        text = "'" + text
    return text


def write_csv(rows, out) -> None:
    """Write the rows atomically: to a temporary file next to `out`, then renamed over it."""
    out = Path(out)
    handle = tempfile.NamedTemporaryFile(
        "w",
        newline="",
        encoding="utf-8",
        dir=out.parent or ".",
        prefix=f".{out.name}.",
        suffix=".tmp",
        delete=False,
    )
    try:
        with handle:
            writer = csv.DictWriter(handle, fieldnames=FIELDS)
            writer.writeheader()
            for row in rows:
                writer.writerow({k: safe_cell(row.get(k, ""), _CAPS[k]) for k in FIELDS})
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o644)
        os.replace(handle.name, out)
    except BaseException:
        try:
            os.unlink(handle.name)
        except OSError:
            pass
        raise


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
