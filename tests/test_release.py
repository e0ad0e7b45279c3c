"""The tag the Colab twins install exists (issue 35): each twin's setup cell installs
`roofline @ git+<repo>@v<version>`; without that tag Colab falls back to main with a warning,
and main's numbers may differ from the text's. tools/release.py holds the procedure."""

from __future__ import annotations

import json
import subprocess

import notebooks
import pytest
import release

ROOT = notebooks.ROOT


def _in_git_checkout() -> bool:
    result = subprocess.run(
        ["git", "rev-parse", "--is-inside-work-tree"], cwd=ROOT, capture_output=True, text=True
    )
    return result.returncode == 0 and result.stdout.strip() == "true"


def test_the_tag_the_twins_install_exists_in_the_repository():
    if not _in_git_checkout():
        pytest.skip("not a git checkout (an unpacked archive has no tags)")
    tag = notebooks.package_tag()
    every = subprocess.run(["git", "tag", "-l"], cwd=ROOT, capture_output=True, text=True)
    if not every.stdout.split():
        # a clone made without tags (--no-tags, or a shallow CI checkout) cannot tell; a
        # checkout that has tags but not this one fails below
        pytest.skip("this checkout has no tags at all (`git fetch --tags` to check)")
    listed = subprocess.run(["git", "tag", "-l", tag], cwd=ROOT, capture_output=True, text=True)
    assert listed.stdout.split() == [tag], (
        f"the twins install {tag}, which `git tag -l` does not list: after merging to main, "
        f"run `python tools/release.py tag` and `git push origin {tag}` (a shallow clone "
        "fetches no tags: `git fetch --tags`)"
    )
    # the tagged commit's twins name that same tag: Colab gets the text's own package
    for md in notebooks.notebook_sources()[:3]:
        path = md.relative_to(ROOT).with_suffix(".ipynb").as_posix()
        shown = subprocess.run(
            ["git", "show", f"{tag}:{path}"], cwd=ROOT, capture_output=True, text=True
        )
        if shown.returncode == 0:
            setup = "".join(json.loads(shown.stdout)["cells"][0]["source"])
            assert f"@{tag}" in setup, f"{path} at {tag} installs another version"


def test_a_missing_tag_and_changed_numbers_are_named(monkeypatch):
    tag = notebooks.package_tag()
    monkeypatch.setattr(release, "tags", lambda: [])
    assert "release.py tag" in release.problems()[0]
    monkeypatch.setattr(release, "tags", lambda: [tag])
    glue = {"a.ipynb": {"x": "1 ms"}}
    monkeypatch.setattr(release, "glue_at", lambda revision: glue)
    assert release.problems() == []
    moved = {"a.ipynb": {"x": "2 ms"}}
    monkeypatch.setattr(release, "glue_at", lambda revision: glue if revision == tag else moved)
    found = release.problems()
    assert len(found) == 1 and "a.ipynb" in found[0] and "bump `version`" in found[0]
