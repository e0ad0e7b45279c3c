"""The repository holds what it means to: no editor or merge leftovers, no dead code.

Fast tier: `git ls-files` and vulture (pinned in the test extra), a few seconds.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WHITELIST = Path(__file__).with_name("dead_code_whitelist.py")

#: What editors, patch and merge tools leave behind: backups (*.orig, *.rej, *~, *.bak),
#: swap files, conflict copies (`file_BASE_1234.py`, `file.BACKUP.1234.py`).
LEFTOVER = re.compile(
    r"(\.orig|\.rej|~|\.bak|\.swp|\.swo|\.BACKUP\.\d+\.\w+|_(BASE|LOCAL|REMOTE)_\d+\.\w+)$"
    r"|(^|/)\.#[^/]*$|(^|/)#[^/]*#$"
)


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (no git or no .git): nothing tracked to check")
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [p for p in out.split("\0") if p]


@pytest.mark.parametrize(
    "name, leftover",
    [
        ("roofline/web/answerbox.js.orig", True),
        ("patch.rej", True),
        ("chapters/03_the_roofline_plot.md~", True),
        ("roofline/.#plots.py", True),
        ("roofline/#plots.py#", True),
        ("roofline/plots_BASE_4711.py", True),
        ("roofline/plots.py", False),
        ("roofline/web/answerbox.js", False),
        ("tests/data/submissions/origin.json", False),
    ],
)
def test_the_leftover_pattern_knows_leftovers(name, leftover):
    assert bool(LEFTOVER.search(name)) is leftover


def test_no_editor_or_merge_leftovers_are_tracked():
    found = [p for p in _tracked() if LEFTOVER.search(p)]
    assert not found, f"editor or merge leftovers are tracked; `git rm` them: {found}"


def _code_cells(page: Path) -> list[str]:
    """The Python of a MyST notebook's code cells (options and magics dropped)."""
    cells = []
    for match in re.finditer(r"^```\{code-cell\}[^\n]*\n(.*?)^```", page.read_text(), re.S | re.M):
        body = re.sub(r"\A---\n.*?\n---\n", "", match.group(1), flags=re.S)
        body = re.sub(r"\A(:[\w-]+:[^\n]*\n)+", "", body)
        cells.append(
            "\n".join(
                line for line in body.splitlines() if not line.lstrip().startswith(("%", "!"))
            )
        )
    return cells


def test_the_package_has_no_dead_code(tmp_path):
    """vulture over the package, reading as users the chapters' and homework's code cells,
    the tests, tools, benchmarks and the Sphinx extension; only the package's findings count.
    A reported name that is used in a way vulture cannot see goes in dead_code_whitelist.py
    with the reason; a dead one is removed."""
    pytest.importorskip("vulture", reason="pip install -e '.[test]' (vulture is pinned there)")
    pages = sorted(ROOT.glob("chapters/*.md")) + sorted(ROOT.glob("exercises/*.md"))
    assert pages, "no chapters found"
    for i, cell in enumerate(c for page in pages for c in _code_cells(page)):
        (tmp_path / f"cell_{i:04d}.py").write_text(cell)
    users = [str(ROOT / d) for d in ("tests", "tools", "benchmarks", "_ext")]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "vulture",
            str(ROOT / "roofline"),
            *users,
            str(tmp_path),
            str(WHITELIST),
            "--min-confidence",
            "60",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert "Error" not in result.stderr, result.stderr
    package = str(ROOT / "roofline") + "/"
    dead = [line for line in result.stdout.splitlines() if line.startswith(("roofline/", package))]
    assert not dead, (
        "dead code in the package (remove it, or whitelist it with why):\n" + "\n".join(dead)
    )


def test_book_sources_hold_no_control_characters():
    """A tab or other control character in a MyST source is almost always a mangled escape (a
    Python string's "\\t" written into "\\text{link}" left a tab in chapter 6's formula, and the
    page showed it). Only newlines belong in the prose."""
    sources = [*ROOT.glob("chapters/*.md"), *ROOT.glob("exercises/*.md"), *ROOT.glob("*.md")]
    found = []
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            bad = [c for c in line if ord(c) < 32 or ord(c) == 127]
            if bad:
                found.append(f"{path.relative_to(ROOT)}:{number}: {bad!r}")
    assert not found, "control characters (write \\t as a backslash and t): " + "; ".join(found)
