"""Control groups for sandboxes: one memory and process limit on each sandbox's whole tree.

Per-process limits (RLIMIT_AS, RLIMIT_NPROC) do not count memory that no process maps (memfds
written with write(), files in a tmpfs) nor the sum over many processes; a cgroup does: every
page a sandbox's processes allocate, shmem (memfds, tmpfs) included, is charged to it, and
past its limit the kernel's out-of-memory killer stops a process of that sandbox only.

Both kinds are found at run time. cgroup v1 (a `memory` and a `pids` hierarchy, as mounted
on this project's CI): `memory.limit_in_bytes`, `memory.memsw.limit_in_bytes` where swap is
accounted, `pids.max`. cgroup v2 (`/sys/fs/cgroup/cgroup.controllers`): `memory.max`,
`memory.swap.max`, `pids.max`, under the nearest ancestor of the grader's own cgroup whose
children get the memory and pids controllers (root may enable them; otherwise a delegated
cgroup must). The grader makes one parent group `roofline-grader-<pid>` per hierarchy and
one group per sandbox under it, moves the sandbox's first process in before it starts
anything (`wrap` + `Group.add`), and removes the group, after killing what is left in it,
when the sandbox is done. Where no group can be made: a one-time warning, per-process limits
only. Sizes in bytes.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import signal
import sys
import threading
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PREFIX = "roofline-grader-"
CONTROLLERS = ("memory", "pids")

_lock = threading.Lock()
_state: dict[str, object] = {}  # "hierarchy": Hierarchy | None once looked for; "warned"


@dataclasses.dataclass(frozen=True)
class Hierarchy:
    """Where this grader's groups live: version 1 or 2, and the parent folder of each."""

    version: int
    parents: tuple[Path, ...]
    """v1: (memory parent, pids parent); v2: (the one parent,)."""


def own_paths(text: str) -> dict[str, str]:
    """{controller: path} from /proc/self/cgroup's text ("" is the v2 hierarchy's key)."""
    paths: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                paths[name] = parts[2]
    return paths


def v1_mounts(text: str) -> dict[str, Path]:
    """{controller: mount point} of the cgroup v1 hierarchies in /proc/self/mounts' text."""
    found: dict[str, Path] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] == "cgroup":
            for option in fields[3].split(","):
                if option in CONTROLLERS:
                    found[option] = Path(fields[1])
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _remove_stale(folder: Path) -> None:
    """Empty parents left by a grader that was killed (its pid is gone): removed."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(PREFIX) :]
        if entry.name.startswith(PREFIX) and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            for child in entry.iterdir() if entry.is_dir() else []:
                if child.is_dir():
                    _rmdir(child)
            _rmdir(entry)


def _rmdir(path: Path) -> bool:
    try:
        os.rmdir(path)
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _v1_parent(mount: Path, own: str, limit_file: str) -> Path | None:
    """A parent group in one v1 hierarchy: under the grader's own group, else the mount's top
    (a container may show its own group as the top)."""
    for above in (mount / own.lstrip("/"), mount):
        if not above.is_dir():
            continue
        _remove_stale(above)
        parent = above / f"{PREFIX}{os.getpid()}"
        try:
            parent.mkdir(exist_ok=True)
        except OSError:
            continue
        if (parent / limit_file).exists() and os.access(parent / "cgroup.procs", os.W_OK):
            return parent
        _rmdir(parent)
    return None


def _find_v1(mounts_text: str, cgroup_text: str) -> Hierarchy | None:
    mounts, own = v1_mounts(mounts_text), own_paths(cgroup_text)
    if set(mounts) != set(CONTROLLERS):
        return None
    memory = _v1_parent(mounts["memory"], own.get("memory", "/"), "memory.limit_in_bytes")
    if memory is None:
        return None
    pids = _v1_parent(mounts["pids"], own.get("pids", "/"), "pids.max")
    if pids is None:
        _rmdir(memory)
        return None
    return Hierarchy(1, (memory, pids))


def _enable(group: Path) -> bool:
    """Memory and pids for `group`'s children (its cgroup.subtree_control); True if they are."""
    have = _read(group / "cgroup.subtree_control").split()
    if all(c in have for c in CONTROLLERS):
        return True
    try:
        (group / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in CONTROLLERS))
        return True
    except OSError:  # busy (it holds processes), not ours, or a controller not available
        return False


def _find_v2(root: Path, cgroup_text: str) -> Hierarchy | None:
    """A parent under the nearest ancestor of our own group whose children can have memory
    and pids limits (our own group holds processes, so only the top may enable them there)."""
    own = Path(own_paths(cgroup_text).get("", "/").lstrip("/"))
    for above in [root / own, *[root / p for p in own.parents]]:
        if not above.is_dir():
            continue
        _remove_stale(above)
        parent = above / f"{PREFIX}{os.getpid()}"
        try:
            parent.mkdir(exist_ok=True)
        except OSError:
            continue
        if (
            ((parent / "memory.max").exists() or _enable(above))
            and (parent / "memory.max").exists()
            and (parent / "pids.max").exists()
            and _enable(parent)
        ):
            return Hierarchy(2, (parent,))
        _rmdir(parent)
    return None


def hierarchy() -> Hierarchy | None:
    """This grader's parent groups, made on first use (None where no group can be made: said
    once). Removed when the grader exits."""
    with _lock:
        if "hierarchy" not in _state:
            found = None
            if sys.platform.startswith("linux"):
                cgroup_text = _read(Path("/proc/self/cgroup"))
                if (ROOT / "cgroup.controllers").exists():
                    found = _find_v2(ROOT, cgroup_text)
                else:
                    found = _find_v1(_read(Path("/proc/self/mounts")), cgroup_text)
            _state["hierarchy"] = found
            if found is not None:
                atexit.register(_remove_parents, found)
        return _state["hierarchy"]  # type: ignore[return-value]


def _remove_parents(found: Hierarchy) -> None:
    for parent in found.parents:
        for child in parent.iterdir() if parent.is_dir() else []:
            if child.is_dir():
                _rmdir(child)
        _rmdir(parent)


def warn_unusable(why: str = "") -> None:
    """The one-time warning where no cgroup can be made."""
    with _lock:
        if _state.get("warned"):
            return
        _state["warned"] = True
    print(
        f"WARNING: no cgroup for the sandboxes{why} (cgroup v1 memory and pids hierarchies "
        "or cgroup v2 with those controllers, writable: run as root, or in a delegated cgroup): "
        "memory "
        "and process limits apply per process only, so memfds, the sandbox's home and /tmp "
        "and many processes together can use more than --memory-mb and --processes",
        file=sys.stderr,
    )


class Group:
    """One sandbox's cgroup(s): a memory limit (swap included, where accounted) and a limit on
    processes and threads, over every process the sandbox starts."""

    def __init__(self, found: Hierarchy, name: str, memory_bytes: int, processes: int):
        self.version = found.version
        self.folders = [parent / name for parent in found.parents]
        try:
            for folder in self.folders:
                folder.mkdir()
            if self.version == 1:
                memory, pids = self.folders
                (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                if (memory / "memory.memsw.limit_in_bytes").exists():
                    (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
                (pids / "pids.max").write_text(str(processes))
            else:
                (only,) = self.folders
                (only / "memory.max").write_text(str(memory_bytes))
                if (only / "memory.swap.max").exists():
                    (only / "memory.swap.max").write_text("0")
                (only / "pids.max").write_text(str(processes))
        except OSError:
            self.remove()
            raise

    def add(self, pid: int) -> None:
        """Move process `pid` into the group (before it has started any child)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(pid))

    def oom_kills(self) -> int:
        """Processes of the group the out-of-memory killer has killed (0 where not counted)."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        for line in _read(self.folders[0] / name).splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            found |= {int(p) for p in _read(folder / "cgroup.procs").split() if p.isdigit()}
        return found

    def remove(self) -> None:
        """Kill every process left in the group, then remove it."""
        for _ in range(200):
            left = self.pids()
            if not left:
                break
            if self.version == 2 and (self.folders[0] / "cgroup.kill").exists():
                try:
                    (self.folders[0] / "cgroup.kill").write_text("1")
                except OSError:
                    pass
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)
        for folder in self.folders:
            for _ in range(50):  # a killed process leaves the group a moment after it dies
                if _rmdir(folder):
                    break
                time.sleep(0.02)


def new_group(name: str, memory_bytes: int, processes: int) -> Group | None:
    """A group for one sandbox, or None (with the one-time warning) where none can be made."""
    found = hierarchy()
    if found is not None:
        try:
            return Group(found, name, memory_bytes, processes)
        except OSError as error:
            warn_unusable(f" ({error})")
            return None
    warn_unusable()
    return None


# The sandbox's first process: waits for one line on stdin (sent once the grader has moved it
# into its group), then becomes the sandbox's command, stdin from /dev/null. Without the line
# (the grader could not move it) it exits, running nothing.
WAIT_THEN_EXEC = ["/bin/sh", "-c", 'read -r ready && exec "$@" </dev/null', "sandbox"]


def wrap(command: list[str]) -> list[str]:
    """`command` run by WAIT_THEN_EXEC: see `start`."""
    return [*WAIT_THEN_EXEC, *command]


def start(group: Group | None, command: list[str], /, **popen_kwargs):
    """Popen of `command`, which runs in `group` from its first instruction on: the wrapper
    waits for the grader to move it in. Without a group, a plain Popen."""
    import subprocess

    if group is None:
        return subprocess.Popen(command, stdin=subprocess.DEVNULL, **popen_kwargs)
    process = subprocess.Popen(wrap(command), stdin=subprocess.PIPE, **popen_kwargs)
    ready, process.stdin = process.stdin, None  # communicate() must not touch it later
    assert ready is not None
    try:
        group.add(process.pid)
        ready.write(b"go\n")
    except OSError:
        process.kill()
        process.wait()
        raise
    finally:
        try:
            ready.close()
        except OSError:
            pass
    return process
