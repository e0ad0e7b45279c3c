"""The sandbox a submitted notebook's kernel runs in: bubblewrap, resource limits, uid slots.

bubblewrap (when installed and usable) gives each kernel a fresh home holding only its
notebook, a private /tmp, no network, its own process tree, everything else read-only;
resource limits (prlimit, or setrlimit in the child) apply always, and where a cgroup can be
made (`cgroup.py`) the whole sandbox's memory and processes are capped too. As root each running
notebook gets its own unused uid (a "slot"), whose processes are all killed when it ends.
Times in seconds, sizes in bytes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import queue
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import cgroup

MIB = 2**20
SANDBOX_TASKS = 8
"""tasks of the sandbox itself (the wrapper, bwrap and its init) on top of `Limits.processes`."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one notebook may use. Times in seconds, sizes in bytes."""

    cell_s: float = 120.0
    """wall time of one code cell; past it the cell is interrupted (then its kernel killed)."""
    notebook_s: float = 1800.0
    """wall time of the whole notebook, kernel start-ups and reruns included."""
    memory_bytes: int = 4096 * MIB
    """address space of each process in the sandbox (RLIMIT_AS) and, where a cgroup can be
    made, the memory of the whole sandbox: its processes, memfds, home and /tmp together."""
    cpu_s: int = 1800
    """CPU time of each process in the sandbox (RLIMIT_CPU)."""
    processes: int = 128
    """processes and threads of the sandbox's user (RLIMIT_NPROC; a kernel uses about 10) and,
    where a cgroup can be made, of the whole sandbox (plus `SANDBOX_TASKS` of its own)."""
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


# ---------------------------------------------------------------- the sandbox
_warned: set[str] = set()
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
            check=False,
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


def count_processes(uid: int) -> int:
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


def kill_uid(uid: int) -> None:
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


class Sandbox:
    """One notebook's private directory and the command that starts its kernel.

    `notebook` is the grader's own private copy of the submission (made once when the folder
    is surveyed), so nothing a student can change is opened again here."""

    def __init__(self, base: Path, kind: str, uid: int | None, limits: Limits, notebook: Path):
        self.kind, self.uid, self.limits = kind, uid, limits
        self.dir = Path(tempfile.mkdtemp(prefix="nb-", dir=base))
        self.home, self.tmp, self.run = self.dir / "home", self.dir / "tmp", self.dir / "run"
        for folder in (self.home, self.tmp, self.run):
            folder.mkdir(mode=0o700)
            if uid is not None:
                os.chown(folder, uid, uid)
        os.chmod(self.home, 0o711)  # bwrap's set-up (no capabilities left) must enter it
        shutil.copyfile(notebook, self.home / "submission.ipynb", follow_symlinks=False)
        if uid is not None:
            os.chown(self.home / "submission.ipynb", uid, uid)
            os.chown(self.dir, 0, 0)
            os.chmod(self.dir, 0o711)
        self.inside_home = "/home/student" if kind == "bwrap" else str(self.home)
        self.inside_tmp = "/tmp" if kind == "bwrap" else str(self.tmp)
        self.inside_run = "/run/kernel" if kind == "bwrap" else str(self.run)
        self.seccomp = seccomp_fd() if kind == "bwrap" else None
        self.group = cgroup.new_group(
            self.dir.name, limits.memory_bytes, limits.processes + SANDBOX_TASKS
        )
        if kind == "bwrap" and self.seccomp is None:
            _warn_once(
                "no-seccomp",
                f"no seccomp filter on {platform.machine()}: keyring calls and nested user "
                "namespaces are not blocked in the sandbox",
            )

    def env(self) -> dict:
        """The kernel's whole environment (nothing of the grader's is passed on)."""
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

    def popen_kwargs(self, processes: int) -> dict:
        """subprocess arguments for the command: without bwrap, the environment, folder and uid."""
        if self.kind == "bwrap":
            return {"pass_fds": (self.seccomp,)} if self.seccomp is not None else {}
        extra: dict[str, object] = {"env": self.env(), "cwd": str(self.home)}
        if self.uid is not None:
            extra.update(user=self.uid, group=self.uid, extra_groups=[])
        if not shutil.which("prlimit"):
            extra["preexec_fn"] = preexec_limits(self.limits, processes)
        return extra

    def command(self, kernel: list[str], processes: int, hidden: list[Path]) -> list[str]:
        """The command line that runs `kernel` in this sandbox, limits first."""
        prlimit = shutil.which("prlimit")
        limit = [prlimit, *_rlimit_args(self.limits, processes), "--"] if prlimit else []
        if self.kind != "bwrap":
            return limit + kernel
        args = ["bwrap", *_bwrap_base(), *self._private_folders(), *_python_binds()]
        args += _hide(hidden)
        if self.seccomp is not None:
            args += ["--seccomp", str(self.seccomp)]
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
        return limit + args + self._as_student() + kernel

    def _private_folders(self) -> list[str]:
        """Home and /tmp: size-capped tmpfs (a notebook cannot fill the grader's disk).

        Mounted first, so that a Python or a checkout under /tmp is bound on top of them."""
        size = str(self.limits.disk_bytes)
        args = ["--perms", "0755", "--dir", "/home", "--perms", "0755", "--dir", "/run"]
        for folder in ("/home/student", "/tmp"):
            args += ["--perms", "01777", "--size", size, "--tmpfs", folder]
        return args

    def _as_student(self) -> list[str]:
        """The end of bwrap's arguments: as root, drop to the slot's unprivileged uid."""
        if self.uid is None:
            return ["--"]
        return [
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

    def seal_run(self) -> None:
        """Once the kernel has bound its sockets (before any student code runs): the run folder
        becomes root's and read-only for the slot uid, so a notebook can neither write files
        there nor swap a socket for a link. (Without root the kernel runs as the grader's
        user, who owns the folder: nothing to seal.)"""
        if self.uid is not None:
            os.chown(self.run, 0, 0)
            os.chmod(self.run, 0o755)

    def out_of_memory(self) -> bool:
        """Whether the out-of-memory killer has struck in this sandbox's cgroup."""
        return self.group is not None and self.group.oom_kills() > 0

    def spawn(self, command: list[str], **popen_kwargs) -> subprocess.Popen:
        """Start `command` (from `command()`) inside this sandbox's cgroup, if it has one, from
        its first instruction on; stdin is /dev/null."""
        return cgroup.start(self.group, command, **popen_kwargs)

    def cleanup(self) -> None:
        """Kill what is left in the cgroup and remove it; remove the sandbox's folder."""
        if self.group is not None:
            self.group.remove()
            self.group = None
        if self.seccomp is not None:
            os.close(self.seccomp)
            self.seccomp = None
        shutil.rmtree(self.dir, ignore_errors=True)


def _python_binds() -> list[str]:
    """Read-only binds of the folders Python needs, with readable folders made above them."""
    args: list[str] = []
    made = {"/", "/tmp", "/home", "/home/student", "/run"}  # already there, with their modes
    for path in _python_paths():
        for parent in reversed(Path(path).parents[:-1]):  # readable folders above it
            if str(parent) not in made:
                made.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", path, path]
    return args


def _hide(hidden: list[Path]) -> list[str]:
    """Submissions or output inside a folder the sandbox shows: mounted over, so invisible."""
    args: list[str] = []
    shown = _python_paths() + ["/usr", "/etc"]
    for path in hidden:
        if path.exists() and any(str(path) == p or str(path).startswith(p + os.sep) for p in shown):
            args += (
                ["--tmpfs", str(path)] if path.is_dir() else ["--ro-bind", "/dev/null", str(path)]
            )
    return args


def preexec_limits(limits: Limits, processes: int):
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


def process_limit(limits: Limits, uid: int | None) -> int:
    """RLIMIT_NPROC for a sandbox: per slot uid as root, else on top of this user's own tasks."""
    return limits.processes if uid is not None else count_processes(os.getuid()) + limits.processes


def probe(kind: str, uid: int | None, limits: Limits, base: Path, notebook: Path) -> None:
    """Start Python the way kernels will be started (no student code): a clear error up front
    instead of an ERROR row per notebook when the sandbox cannot work here."""
    sandbox = Sandbox(base, kind, uid, limits, notebook)
    processes = process_limit(limits, uid)
    command = sandbox.command(
        [sys.executable, "-s", "-c", "import ipykernel, zmq, roofline"], processes, []
    )
    extra = sandbox.popen_kwargs(processes)
    try:
        process = sandbox.spawn(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **extra)
        try:
            _, stderr = process.communicate(timeout=max(60.0, limits.startup_s))
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
        why = stderr.decode(errors="replace").strip()[-500:] or f"exit status {process.returncode}"
        failed = process.returncode != 0
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


class Slots:
    """Sandbox uids for the notebooks running at once (root only): one uid per slot, so a
    process limit or a `kill -1` in one sandbox never touches another."""

    def __init__(self, jobs: int, base_uid: int | None):
        self.jobs = jobs
        self.free: queue.Queue = queue.Queue()
        for i in range(jobs):
            self.free.put(None if base_uid is None else base_uid + i)


def check_uids(base_uid: int, jobs: int) -> None:
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
        if count_processes(uid):
            raise RuntimeError(
                f"processes of uid {uid} are running; sandboxed notebooks need uids no "
                f"one uses: pass --sandbox-uid with another first uid"
            )


# ---------------------------------------------------------------- seccomp filter (bwrap --seccomp)
# Syscall numbers and the audit architecture of x86-64 (linux/audit.h, asm/unistd_64.h).
AUDIT_ARCH_X86_64 = 0xC000003E
SYSCALLS_X86_64 = {"add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "clone": 56}
CLONE3_X86_64 = 435
X32_SYSCALL_BIT = 0x40000000
CLONE_NEWUSER = 0x10000000
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
EPERM, ENOSYS = 1, 38


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    """One classic-BPF instruction (struct sock_filter: u16 code, u8 jt, u8 jf, u32 k)."""
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_program() -> bytes | None:
    """The sandbox's seccomp filter as bwrap --seccomp reads it, or None off x86-64.

    Refused with EPERM: the keyring calls (keyrings are not namespaced: a kernel could read
    or plant keys of another session) and new user namespaces (unshare or clone with
    CLONE_NEWUSER: inside one a notebook could mount a tmpfs outside its limits); clone3
    gets ENOSYS, so that the C library falls back to clone, whose flags the filter can read;
    x32 calls are refused. Everything else is allowed."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    ld_abs, jeq, jge, and_k, ret = 0x20, 0x15, 0x35, 0x54, 0x06
    nr = SYSCALLS_X86_64
    program = [
        _bpf(ld_abs, 0, 0, 4),  # 0: A = arch
        _bpf(jeq, 1, 0, AUDIT_ARCH_X86_64),  # 1
        _bpf(ret, 0, 0, _RET_ERRNO | EPERM),  # 2: another architecture's call: refused
        _bpf(ld_abs, 0, 0, 0),  # 3: A = syscall number
        _bpf(jge, 7, 0, X32_SYSCALL_BIT),  # 4 -> 12 (refuse)
        _bpf(jeq, 6, 0, nr["add_key"]),  # 5 -> 12
        _bpf(jeq, 5, 0, nr["request_key"]),  # 6 -> 12
        _bpf(jeq, 4, 0, nr["keyctl"]),  # 7 -> 12
        _bpf(jeq, 5, 0, CLONE3_X86_64),  # 8 -> 14 (ENOSYS)
        _bpf(jeq, 5, 0, nr["unshare"]),  # 9 -> 15 (flags)
        _bpf(jeq, 4, 0, nr["clone"]),  # 10 -> 15 (flags)
        _bpf(ret, 0, 0, _RET_ALLOW),  # 11
        _bpf(ret, 0, 0, _RET_ERRNO | EPERM),  # 12
        _bpf(ret, 0, 0, _RET_ALLOW),  # 13 (unused)
        _bpf(ret, 0, 0, _RET_ERRNO | ENOSYS),  # 14
        _bpf(ld_abs, 0, 0, 16),  # 15: A = low 32 bits of the first argument (flags)
        _bpf(and_k, 0, 0, CLONE_NEWUSER),  # 16
        _bpf(jeq, 0, 1, CLONE_NEWUSER),  # 17: CLONE_NEWUSER set -> 18, else 19
        _bpf(ret, 0, 0, _RET_ERRNO | EPERM),  # 18
        _bpf(ret, 0, 0, _RET_ALLOW),  # 19
    ]
    return b"".join(program)


def seccomp_fd() -> int | None:
    """A file descriptor holding `seccomp_program()`, read from its start (None: no filter)."""
    program = seccomp_program()
    if program is None or not hasattr(os, "memfd_create"):
        return None
    fd = os.memfd_create("roofline-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
