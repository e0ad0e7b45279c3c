"""A Jupyter kernel client for the grader: one submission's kernels, driven over the protocol.

The kernel runs in a `Sandbox`; the grader talks to it over ipc sockets in the sandbox's run
folder, sends the notebook's code cells one by one and, after each, evaluates the probe's
`report()` as a user expression, whose reply only the grader receives. The kernel's stdout
and stderr go to /dev/null: nothing a notebook prints is ever read. Times in seconds.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from .report import answer_notes, clean_text, code_set, notebook_set
from .sandbox import MIB, Limits, Sandbox, kill_uid, process_limit

MAX_MESSAGE_BYTES = 8 * MIB  # larger messages from a kernel are dropped by zmq
QUEUED_MESSAGES = 16  # per socket: at most 16 x 8 MiB = 128 MiB waiting in the grader
PROBE_MODULE = "roofline.exercises.grader.probe"


def parse_snapshot(reply_content) -> dict | None:
    """The report inside an execute_reply's user_expressions, validated; None if unusable.

    The kernel is the student's process, so this is only ever *their own* claim about
    their own id and answers (which they could have typed anyway): validate, never trust."""
    try:
        expression = reply_content["user_expressions"]["report"]
        if expression.get("status") != "ok":
            return None
        text = expression["data"]["text/plain"]
        if not isinstance(text, str) or len(text) > 2 * MAX_MESSAGE_BYTES:
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
        for value in answers.values():
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


# ipykernel_launcher without the debugger (debugpy's import is a quarter of a kernel's start-up).
_LAUNCH = (
    "import sys; sys.modules['debugpy'] = None; "
    "from ipykernel import kernelapp; kernelapp.launch_new_instance()"
)


class KernelGone(Exception):
    pass


class Kernel:
    """A kernel in a sandbox, driven over ipc sockets that live in the sandbox's run dir."""

    def __init__(
        self,
        sandbox: Sandbox,
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
        ports: dict = {"shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4}
        ports["hb_port"] = 5
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
        os.chmod(sandbox.run / "kernel.json", 0o644)  # the kernel reads it; only root writes
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
        extra = sandbox.popen_kwargs(processes)
        self.live, self.live_lock = live, live_lock
        self.process = sandbox.spawn(
            command,
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
        """The reply to msg_id, or None at `until`; raises KernelGone if the kernel died."""
        get = self.client.get_shell_msg if channel == "shell" else self.client.get_control_msg
        while True:
            left = min(until, self.deadline) - time.monotonic()
            if left <= 0 or self.stop.is_set():
                return None
            try:
                message = get(timeout=min(0.2, left))
            except queue.Empty:
                if not self.alive():
                    raise KernelGone(
                        self.process.returncode, self.sandbox.out_of_memory()
                    ) from None
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
            kill_uid(self.sandbox.uid)
        with self.live_lock:
            self.live.discard(self)


def stopped_kernel_note(number, gone) -> str:
    """The NOTE for a cell whose kernel died (it is skipped and the notebook run again)."""
    return (
        f"code cell {number} stopped its kernel (the kernel {describe_exit(*gone.args)}); "
        "it was skipped and the notebook run again without it"
    )


def describe_exit(code, out_of_memory: bool = False) -> str:
    """How a kernel ended, from its exit status (and whether its sandbox's cgroup saw the
    out-of-memory killer strike)."""
    if out_of_memory:
        return "was killed by the out-of-memory killer: its sandbox used all its memory"
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


# ---------------------------------------------------------------- one notebook
@dataclasses.dataclass
class NotebookRun:
    """What one submission's run has found so far, across kernel restarts."""

    cells: list[str]
    limits: Limits
    deadline: float
    stop: threading.Event | None = None
    notes: dict[int, str] = dataclasses.field(default_factory=dict)
    skip: set[int] = dataclasses.field(default_factory=set)
    deaths: dict[int, int] = dataclasses.field(default_factory=dict)
    retries_left: int = 2
    report: dict | None = None
    failure: str | None = None
    transient: bool = False

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    def died_in(self, number: int, gone: KernelGone) -> None:
        """A cell's kernel died: run again with it once (it may have been killed from outside,
        by the out-of-memory killer, say); the second time, skip it and say so."""
        self.deaths[number] = self.deaths.get(number, 0) + 1
        if self.deaths[number] == 1 and self.retries_left > 0:
            self.retries_left -= 1
            return
        self.notes[number] = stopped_kernel_note(number, gone)
        self.skip.add(number)


def read_cells(path: Path) -> tuple[list[str], object]:
    """The notebook's code cells and its metadata; raises ValueError when it cannot be read."""
    import nbformat

    try:
        nb = nbformat.read(str(path), as_version=4)
        cells = [str(c.get("source", "")) for c in nb.cells if c.get("cell_type") == "code"]
        return cells, nb.get("metadata", {})
    except Exception as error:
        raise ValueError(f"cannot read the notebook: {unreadable_reason(error)}") from None


def unreadable_reason(error: Exception) -> str:
    """Why a file is not a notebook, WITHOUT quoting the file: nbformat's NotJSONError puts the
    file's first bytes in its message, and the file may be a link to one the grader alone may
    read (/etc/shadow). JSON errors say where (line, column); others only their type."""
    import json

    cause = error
    while cause is not None and not isinstance(cause, json.JSONDecodeError):
        cause = cause.__cause__ or cause.__context__  # type: ignore[assignment]
    if isinstance(cause, json.JSONDecodeError):
        return f"it is not JSON ({cause.msg} at line {cause.lineno}, column {cause.colno})"
    if type(error).__name__ == "NotJSONError":
        return "it is not JSON"
    return f"it is not a valid notebook ({type(error).__name__})"


def new_context():
    """A zmq context whose sockets drop messages over MAX_MESSAGE_BYTES, queue at most
    QUEUED_MESSAGES of them (a kernel flooding a channel the grader does not read, the
    control channel say, then waits instead of growing the grader) and never linger."""
    import zmq

    context = zmq.Context()
    context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
    context.setsockopt(zmq.RCVHWM, QUEUED_MESSAGES)
    context.setsockopt(zmq.LINGER, 0)
    return context


def _run_cell(kernel: Kernel, run: NotebookRun, number: int, source: str, snapshot) -> bool:
    """Run one cell and read the report after it; True when the kernel must be restarted."""
    limits = run.limits
    try:
        msg_id = kernel.send(source, user_expressions=snapshot)
        reply = kernel.wait_reply(msg_id, time.monotonic() + limits.cell_s)
        if reply is None and not run.out_of_time():
            kernel.interrupt()
            reply = kernel.wait_reply(msg_id, time.monotonic() + limits.interrupt_grace_s)
            if reply is None:
                run.notes[number] = (
                    f"code cell {number} ran longer than {limits.cell_s:g} s and could not be "
                    "stopped; it was skipped and the notebook run again without it"
                )
                run.skip.add(number)
                return True
        content = {} if reply is None else reply.get("content", {})
        if content.get("status") == "error":
            run.notes[number] = _error_note(number, content, limits)
        if content.get("status") != "ok":  # no user_expressions in the reply: ask
            until = time.monotonic() + min(10.0, limits.startup_s)
            content = kernel.execute("", until, silent=True, user_expressions=snapshot)
    except KernelGone as gone:  # it died in (or just after) this cell: its doing, or not
        run.died_in(number, gone)
        return True
    fresh = parse_snapshot(content) if content else None
    if fresh is not None:
        run.report = fresh
    return False


def _error_note(number: int, content: dict, limits: Limits) -> str:
    if content.get("ename") == "KeyboardInterrupt":
        return f"code cell {number} ran longer than {limits.cell_s:g} s and was stopped"
    return (
        f"code cell {number} raised {clean_text(content.get('ename'), 60)}: "
        f"{clean_text(content.get('evalue', ''), 120)}"
    )


def _attempt(run: NotebookRun, sandbox: Sandbox, start_kernel) -> bool:
    """One kernel's run of the cells not skipped; True when another attempt is needed."""
    kernel = None
    try:
        kernel = start_kernel(sandbox)
        if not kernel.ready(run.limits.startup_s):
            if not run.out_of_time():
                run.failure = f"the kernel did not start within {run.limits.startup_s:g} s"
                run.transient = True
            return False
        sandbox.seal_run()  # sockets bound: from now on the kernel's uid cannot change them
        name = "_roofline_probe_" + secrets.token_hex(8)
        until = time.monotonic() + run.limits.startup_s
        setup = kernel.execute(f"import {PROBE_MODULE} as {name}", until, silent=True)
        if setup is None or setup.get("status") != "ok":
            run.failure = "the kernel did not accept the grader's report function"
            return False
        snapshot = {"report": f"{name}.report()"}
        for number, source in enumerate(run.cells, start=1):
            if run.out_of_time():
                return False
            if number in run.skip or not source.strip():
                continue
            if _run_cell(kernel, run, number, source, snapshot):
                return True
        return False
    except KernelGone as gone:
        if run.retries_left > 0:  # killed before any cell ran: not the student's doing
            run.retries_left -= 1
            return True
        run.failure = f"the kernel {describe_exit(*gone.args)} before the notebook's cells ran"
        run.transient = True
        return False
    finally:
        if kernel is not None:
            kernel.kill()
        sandbox.cleanup()


def _drive(run: NotebookRun, new_sandbox, start_kernel) -> None:
    """Attempts until the cells have run, the restarts are spent or time is up."""
    attempt = restarts = 0
    while True:
        if run.stop is not None and run.stop.is_set():
            run.failure, run.transient = "the grader was stopped", True
            return
        skipped = len(run.skip)
        again = _attempt(run, new_sandbox(), start_kernel)
        attempt += 1
        if not again or run.out_of_time():
            return
        restarts += len(run.skip) > skipped
        if restarts > run.limits.restarts:
            run.notes[len(run.cells) + 1] = (
                f"its kernel was restarted {run.limits.restarts} times; the "
                "cells after the last failure were not run"
            )
            return
        if attempt > run.limits.restarts + 2 * len(run.cells) + 4:  # a guard: never loop on
            return


def _result(run: NotebookRun, sets: dict) -> dict:
    """The report of a finished run: set, id, answers and notes, or an error."""
    cells = run.cells
    if run.out_of_time():
        run.notes[len(cells) + 3] = (
            f"the notebook ran longer than {run.limits.notebook_s:g} s in all and "
            "was stopped; answers recorded until then are graded"
        )
    if run.report is not None and run.failure:
        run.notes[len(cells) + 2] = f"after a restart {run.failure}; the later cells were not run"
    ordered = [run.notes[k] for k in sorted(run.notes)]
    if run.report is None:
        error = (
            run.failure
            or "the notebook's STUDENT_ID and answers could not be read after running it"
        )
        result = {**sets, "notes": ordered, "error": error}
        if run.transient:
            result["transient"] = True
        return result
    return {**sets, "notes": ordered, **run.report, "answer_notes": answer_notes(cells, run.notes)}


#: The limits a notebook runs under unless the caller gives its own (frozen: safe to share).
DEFAULT_LIMITS = Limits()


def run_notebook(
    path: Path,
    limits: Limits = DEFAULT_LIMITS,
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
    hangs its kernel is run once more (it may have been killed from outside) and then skipped,
    the notebook running again from the start without it. `path` must be the grader's own
    copy of the submission. A report with "transient": True failed for a reason that a rerun
    may not meet (the grader stopped, a kernel that did not start)."""
    try:
        cells, metadata = read_cells(path)
    except ValueError as error:
        return {"error": str(error)}
    sets = {"set": notebook_set(metadata), "code_set": code_set(cells)}
    own_context, own_base = context is None, base is None
    context = new_context() if own_context else context
    base = Path(tempfile.mkdtemp(prefix="rlg-")) if base is None else base
    if own_base and uid is not None:
        os.chmod(base, 0o711)
    live = set() if live is None else live
    live_lock = live_lock or threading.Lock()
    deadline = time.monotonic() + limits.notebook_s
    run = NotebookRun(cells, limits, deadline, stop)
    processes = process_limit(limits, uid)

    def start_kernel(sandbox):
        kernel = Kernel(sandbox, context, processes, list(hidden), deadline, live, live_lock)
        if stop is not None:
            kernel.stop = stop
        return kernel

    try:
        _drive(run, lambda: Sandbox(base, kind, uid, limits, path), start_kernel)
    finally:
        if own_base:
            shutil.rmtree(base, ignore_errors=True)
        if own_context:
            context.destroy(linger=0)
    return _result(run, sets)
