"""tools/execute_parallel.py: the build's parallel execution step (issue 37)."""

import execute_parallel as ep


def test_runs_made_with_other_package_files_are_forgotten(tmp_path):
    cache = tmp_path / ".jupyter_cache"
    cache.mkdir()
    (cache / "global.db").write_text("runs of an older package")
    (cache / ep.PACKAGE_FINGERPRINT).write_text("0" * 64)  # not this package's fingerprint
    (tmp_path / ".doctrees").mkdir()  # Sphinx's state: it would keep unchanged pages as they were
    assert ep.forget_stale_runs(cache) is True
    assert not (cache / "global.db").exists()
    assert not (tmp_path / ".doctrees").exists()
    assert (cache / ep.PACKAGE_FINGERPRINT).read_text().strip() == ep.package_fingerprint()
    (cache / "global.db").write_text("runs of this package")
    assert ep.forget_stale_runs(cache) is False  # same package: the runs stay
    assert (cache / "global.db").exists()


def test_the_measuring_chapter_runs_alone_and_every_toc_notebook_is_found():
    sources = ep.toc_sources()
    names = [p.name for p in sources]
    assert "09_measuring_a_roofline.md" in names and "homework_part4.md" in names
    assert [p.name for p in sources if ep.runs_alone(p)] == ["09_measuring_a_roofline.md"]


def _tiny_book(root):
    """A book of one notebook and a one-file package, as the stamp reads them."""
    (root / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: ch\n")
    (root / "intro.md").write_text("# Intro\n")
    (root / "ch.md").write_text("---\njupytext: {}\n---\n```{code-cell} ipython3\nx = 1\n```\n")
    (root / "roofline").mkdir()
    (root / "roofline" / "units.py").write_text("KILO = 1000\n")


def test_a_build_with_nothing_changed_skips_the_execution_step(tmp_path):
    _tiny_book(tmp_path)
    cache = tmp_path / "_build" / ".jupyter_cache"
    assert not ep.cache_is_current(cache, tmp_path)  # no cache yet: the step must run
    cache.mkdir(parents=True)
    (cache / "global.db").write_text("the runs")
    assert not ep.cache_is_current(cache, tmp_path)  # no stamp: the last run was not complete
    (cache / ep.SOURCES_STAMP).write_text(ep.sources_stamp(tmp_path) + "\n")
    assert ep.cache_is_current(cache, tmp_path)
    # each input of a notebook's run, changed, makes the step run again
    for path, text in (
        ("ch.md", "---\njupytext: {}\n---\n```{code-cell} ipython3\nx = 2\n```\n"),
        ("roofline/units.py", "KILO = 1024\n"),
        ("_toc.yml", "format: jb-book\nroot: intro\n"),
    ):
        before = (tmp_path / path).read_text()
        (tmp_path / path).write_text(text)
        assert not ep.cache_is_current(cache, tmp_path), path
        (tmp_path / path).write_text(before)
        assert ep.cache_is_current(cache, tmp_path), path
    (tmp_path / "roofline" / "new.py").write_text("")  # a new package file counts too
    assert not ep.cache_is_current(cache, tmp_path)
    (tmp_path / "roofline" / "new.py").unlink()
    (cache / "global.db").unlink()  # the cache itself gone: run
    assert not ep.cache_is_current(cache, tmp_path)


def test_a_line_printed_in_chunks_is_one_line_on_the_page(tmp_path):
    """The kernel sends a line in as many stream messages as flushes cut it into; the run keeps
    it as written (MyST-NB's merge would end each chunk with a newline)."""
    notebook = tmp_path / "chunks.md"
    notebook.write_text(
        "---\njupytext:\n  text_representation: {extension: .md, format_name: myst}\n"
        "kernelspec: {name: python3, display_name: Python 3, language: python}\n"
        "---\n```{code-cell} ipython3\nimport sys\n"
        "sys.stdout.write('difference:'); sys.stdout.flush(); sys.stdout.write(' 0\\n')\n"
        "print()\nprint('next')\n```\n"
    )
    _, executed, _, error = ep.execute_one(str(notebook))
    assert error is None
    (cell,) = [c for c in executed.cells if c.cell_type == "code"]
    assert [(o["name"], o["text"]) for o in cell.outputs] == [("stdout", "difference: 0\n\nnext\n")]
