"""tools/execute_parallel.py: the build's parallel execution step (issue 37)."""

import execute_parallel as ep


def test_runs_made_with_other_package_files_are_forgotten(tmp_path):
    cache = tmp_path / ".jupyter_cache"
    cache.mkdir()
    (cache / "global.db").write_text("runs of an older package")
    (cache / ep.PACKAGE_FINGERPRINT).write_text("0" * 64)  # not this package's fingerprint
    assert ep.forget_stale_runs(cache) is True
    assert not (cache / "global.db").exists()
    assert (cache / ep.PACKAGE_FINGERPRINT).read_text().strip() == ep.package_fingerprint()
    (cache / "global.db").write_text("runs of this package")
    assert ep.forget_stale_runs(cache) is False  # same package: the runs stay
    assert (cache / "global.db").exists()


def test_the_measuring_chapter_runs_alone_and_every_toc_notebook_is_found():
    sources = ep.toc_sources()
    names = [p.name for p in sources]
    assert "09_measuring_a_roofline.md" in names and "homework_part4.md" in names
    assert [p.name for p in sources if ep.runs_alone(p)] == ["09_measuring_a_roofline.md"]
