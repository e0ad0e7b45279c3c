"""Release the package version the Colab twins install (issue 35).

Every twin's setup cell installs `roofline @ git+<repo>@v<version>` (tools/notebooks.py,
`package_tag`): the package as it was when the twin's numbers were glued into its text. So a
release is a git tag on the commit whose twins name it, made when the prose's numbers change:

    python tools/release.py check   # what the next step is (exit 1 if the tag is missing/stale)
    python tools/release.py tag     # tag HEAD v<version> (annotated, local; push it yourself)

The procedure (CONTRIBUTING.md, "Releasing"): when a change alters a glued number or a
catalog figure the text prints, bump `version` in pyproject.toml, run `make book` and
`make notebooks` (the setup cells now name the new tag), commit, merge to main, then on main
run `tools/release.py tag` and `git push origin v<version>`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import notebooks

ROOT = notebooks.ROOT


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def tags() -> list[str]:
    """The repository's tags (`git tag -l`); [] outside a git checkout."""
    result = git("tag", "-l")
    return result.stdout.split() if result.returncode == 0 else []


def glue_at(revision: str) -> dict[str, dict[str, str]] | None:
    """{twin path: its glued values} at `revision` (None for a twin that is not there)."""
    found: dict[str, dict[str, str]] = {}
    for md in notebooks.notebook_sources():
        path = md.relative_to(ROOT).with_suffix(".ipynb").as_posix()
        shown = git("show", f"{revision}:{path}")
        if shown.returncode == 0:
            found[path] = json.loads(shown.stdout)["metadata"].get(notebooks.GLUE_KEY, {})
    return found


def problems() -> list[str]:
    """What stops the twins' tag from being the release their text was built from."""
    tag = notebooks.package_tag()
    if tag not in tags():
        return [
            f"the twins install tag {tag}, which this repository does not have: on main, "
            f"run `python tools/release.py tag` and `git push origin {tag}`"
        ]
    then, now = glue_at(tag), glue_at("HEAD")
    changed = sorted(path for path in now if then and then.get(path) != now[path])
    if changed:
        return [
            f"the numbers in {', '.join(changed)} changed since {tag}: bump `version` in "
            "pyproject.toml, `make book && make notebooks`, commit, then tag the new version"
        ]
    return []


def tag() -> int:
    name = notebooks.package_tag()
    if git("status", "--porcelain").stdout.strip():
        print("the working tree has uncommitted changes: commit them first", file=sys.stderr)
        return 1
    if notebooks.problems():
        print("the twins are out of sync: run `make notebooks` and commit", file=sys.stderr)
        return 1
    if name in tags():
        print(f"{name} exists already; bump `version` in pyproject.toml", file=sys.stderr)
        return 1
    made = git("tag", "-a", name, "-m", f"roofline {name}: the package the twins install")
    print(made.stdout + made.stderr or f"tagged HEAD {name}; push it: git push origin {name}")
    return made.returncode


def main(argv: list[str]) -> int:
    if argv == ["tag"]:
        return tag()
    if argv == ["check"]:
        found = problems()
        print("\n".join(found) or f"{notebooks.package_tag()} is the twins' release")
        return 1 if found else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
