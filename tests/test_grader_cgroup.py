"""Each sandbox in a cgroup (issue 26, "limits that do not count"): memory that no process
maps (memfds, the sandbox's tmpfs /tmp) and the sandbox's processes all count against one
memory and one process limit, next to an honest canary whose grade must not move.

Without the cgroup, a notebook held 1.5 GiB in memfds, or 480 MiB in /tmp plus 1 GiB in
memfds, under `--memory-mb 1024` (RLIMIT_AS does not count pages no process maps). The
kernel tests run where a cgroup v1 or v2 memory and pids controller is writable (root in CI);
elsewhere they are skipped with the reason."""

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roofline.exercises.grader import cgroup, folder, sandbox

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "submissions"))
import make_samples  # noqa: E402 (found on the path set just above)

MIB = 2**20
HAVE_BWRAP = sys.platform.startswith("linux") and shutil.which("bwrap") is not None
NO_CGROUP = "no writable cgroup memory and pids controllers here (needs root or delegation)"


def _usable() -> bool:
    return sys.platform.startswith("linux") and cgroup.hierarchy() is not None


# ---------------------------------------------------------------- no kernel
def test_own_paths_and_v1_mounts_by_hand():
    text = "9:name=systemd:/\n8:pids:/a\n4:memory:/api/x\n2:cpu,cpuacct:/c\n0::/user.slice\n"
    assert cgroup.own_paths(text) == {
        "name=systemd": "/",
        "pids": "/a",
        "memory": "/api/x",
        "cpu": "/c",
        "cpuacct": "/c",
        "": "/user.slice",
    }
    mounts = (
        "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n"
        "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
        "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
        "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
    )
    assert cgroup.v1_mounts(mounts) == {
        "memory": Path("/sys/fs/cgroup/memory"),
        "pids": Path("/sys/fs/cgroup/pids"),
    }


@pytest.mark.parametrize("version", [1, 2])
def test_the_limits_are_written_where_each_version_reads_them(tmp_path, version):
    """On plain folders standing in for a cgroup file system: which file gets which value."""
    parents = (tmp_path / "memory", tmp_path / "pids") if version == 1 else (tmp_path / "v2",)
    for parent in parents:
        parent.mkdir()
    group = cgroup.Group(cgroup.Hierarchy(version, parents), "nb-1", 768 * MIB, 72)
    if version == 1:
        assert (parents[0] / "nb-1" / "memory.limit_in_bytes").read_text() == "805306368"
        assert (parents[1] / "nb-1" / "pids.max").read_text() == "72"
    else:
        assert (parents[0] / "nb-1" / "memory.max").read_text() == "805306368"
        assert (parents[0] / "nb-1" / "pids.max").read_text() == "72"
    assert group.pids() == set()


def test_the_wrapper_runs_nothing_until_told():
    """Without the grader's line on stdin the command never runs (it could not be moved)."""
    done = subprocess.run(
        [*cgroup.wrap(["sh", "-c", "echo ran"])],
        input=b"",
        capture_output=True,
        check=False,
    )
    assert done.returncode != 0 and done.stdout == b""
    told = subprocess.run(
        cgroup.wrap(["sh", "-c", "echo ran"]), input=b"go\n", capture_output=True, check=True
    )
    assert told.stdout == b"ran\n"


def test_without_a_cgroup_it_is_said_once_and_the_sandbox_still_starts(monkeypatch, capsys):
    monkeypatch.setattr(cgroup, "hierarchy", lambda: None)
    monkeypatch.setitem(cgroup._state, "warned", False)
    assert cgroup.new_group("a", MIB, 8) is None and cgroup.new_group("b", MIB, 8) is None
    warning = capsys.readouterr().err
    assert warning.count("WARNING: no cgroup") == 1 and "per process only" in warning
    plain = cgroup.start(None, ["sh", "-c", "echo ran"], stdout=subprocess.PIPE)
    assert plain.communicate(timeout=30)[0] == b"ran\n"


# ---------------------------------------------------------------- a real group, no kernel
FORK_COUNT = """
import os, time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError:
    pass
print(n, flush=True)
time.sleep(30)  # stay in the group until it is removed (exiting here raced the count)
"""


@pytest.mark.skipif(not _usable(), reason=NO_CGROUP)
def test_the_pids_limit_bounds_a_fork_bomb_exactly():
    """pids.max = 20 and no RLIMIT_NPROC: the Python (1 task) forks exactly 19 children; the
    group's removal kills them all."""
    group = cgroup.new_group(f"test-{os.getpid()}", 512 * MIB, 20)
    assert group is not None
    try:
        process = cgroup.start(
            group,
            [sys.executable, "-c", FORK_COUNT],
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        line = process.stdout.readline()
        assert line.strip() == b"19", line
        assert len(group.pids()) == 20
    finally:
        group.remove()
    assert not any(folder.exists() for folder in group.folders)
    process.wait(timeout=10)


@pytest.mark.skipif(not _usable() or os.geteuid() != 0, reason=NO_CGROUP + ", as root")
@pytest.mark.parametrize("kind", ["rlimits", "bwrap"])
def test_a_sandbox_runs_in_its_group_from_the_start_as_its_slot_uid(tmp_path, kind):
    """The sandbox's command (limits only, or bubblewrap) sees itself in the sandbox's group
    (its name under our parent; bubblewrap's cgroup namespace shows it as "/") and runs as
    the slot uid; the group, and anything left in it, is gone after cleanup."""
    if kind == "bwrap" and not HAVE_BWRAP:
        pytest.skip("needs bubblewrap")
    notebook = tmp_path / "n.ipynb"
    notebook.write_text("{}")
    uid = 200000 + 8 * random.randrange(50000)
    box = sandbox.Sandbox(tmp_path, kind, uid, sandbox.Limits(), notebook)
    assert box.group is not None
    try:
        command = box.command(["/bin/sh", "-c", "id -u; cat /proc/self/cgroup"], 10, [])
        process = box.spawn(command, stdout=subprocess.PIPE, **box.popen_kwargs(10))
        out, _ = process.communicate(timeout=60)
        lines = out.decode().split()
        assert lines[0] == str(uid), lines
        own = cgroup.own_paths("\n".join(lines[1:]))
        key = "memory" if box.group.version == 1 else ""
        expected = "/" if kind == "bwrap" else "/" + box.dir.name
        assert own[key].endswith(expected), own
    finally:
        folders = box.group.folders
        box.cleanup()
    assert not any(f.exists() for f in folders)


# ---------------------------------------------------------------- sandboxed kernels
MEMFD_HOG = """
import os
fds, total = [], 0
for i in range(24):  # 24 x 64 MiB = 1.5 GiB, none of it in any process's address space
    fd = os.memfd_create(f"m{i}")
    for _ in range(64):
        os.write(fd, b"x" * 2**20)
    fds.append(fd)
    total += 64
raise RuntimeError(f"held memfd MiB={total}")
"""

TMP_HOG = """
import os
for name in ("a", "b"):  # 2 x 240 MiB in /tmp (a tmpfs of 512 MiB; 256 MiB per file)
    with open("/tmp/big" + name, "wb") as f:
        for _ in range(240):
            f.write(b"y" * 2**20)
fds, total = [], 0
for i in range(16):  # and 1 GiB in memfds
    fd = os.memfd_create(f"m{i}")
    for _ in range(64):
        os.write(fd, b"x" * 2**20)
    fds.append(fd)
    total += 64
raise RuntimeError(f"held tmp MiB=480 memfd MiB={total}")
"""

NESTED_TMPFS = """
import subprocess
nested = subprocess.run(
    ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
     "mount -t tmpfs -o size=2g none /home && echo mounted"],
    capture_output=True, text=True)
raise RuntimeError(f"nested={nested.returncode}:{nested.stdout.strip()}:{nested.stderr[-80:]}")
"""


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_BWRAP, reason="needs bubblewrap")
@pytest.mark.skipif(not _usable(), reason=NO_CGROUP)
def test_memfds_and_tmp_over_the_memory_limit_stop_only_that_notebook(tmp_path):
    """`--memory-mb 1024`, `--disk-mb 512`: a notebook holding 1.5 GiB in memfds, and one
    holding 480 MiB in /tmp and 1 GiB in memfds, are killed by the out-of-memory killer in
    their own cgroup (twice: the cell is retried once, then skipped with a note); the canary
    and their other answers keep every point. A tmpfs mounted in a nested user namespace is
    refused (the seccomp filter) before any of this."""
    subs = tmp_path / "subs"
    subs.mkdir()
    make_samples.make(subs / "alice.ipynb", "alice", make_samples.CORRECT)  # the canary
    make_samples.make(subs / "mem.ipynb", "mem", make_samples.CORRECT, {"q4": MEMFD_HOG})
    make_samples.make(subs / "tmp.ipynb", "tmp", make_samples.CORRECT, {"q6": TMP_HOG})
    make_samples.make(subs / "nest.ipynb", "nest", make_samples.CORRECT, {"q2": NESTED_TMPFS})
    limits = sandbox.Limits(
        cell_s=60, notebook_s=600, memory_bytes=1024 * MIB, disk_bytes=512 * MIB
    )
    uid = 200000 + 8 * random.randrange(50000) if os.geteuid() == 0 else None
    rows = folder.grade_folder(subs, jobs=2, limits=limits, sandbox_uid=uid)
    totals = {r["file"]: r["correct"] for r in rows if r["exercise"] == "TOTAL"}
    assert totals == {f: "8/8" for f in ("alice.ipynb", "mem.ipynb", "tmp.ipynb", "nest.ipynb")}
    notes = {
        f: [r["feedback"] for r in rows if r["file"] == f and r["exercise"] == "NOTE"]
        for f in totals
    }
    assert notes["alice.ipynb"] == []
    for file in ("mem.ipynb", "tmp.ipynb"):
        assert len(notes[file]) == 1 and "stopped its kernel" in notes[file][0], notes[file]
        assert "out-of-memory killer" in notes[file][0] and "MiB=" not in notes[file][0]
    (nested,) = notes["nest.ipynb"]
    assert "nested=" in nested and "nested=0" not in nested and ":mounted" not in nested, nested
    found = cgroup.hierarchy()
    assert found is not None
    assert [p for parent in found.parents for p in parent.iterdir() if p.is_dir()] == []
