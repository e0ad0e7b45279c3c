"""A no-change book build does no work twice (issue 37): the book's Sphinx extensions skip
what the last build already did. (tools/execute_parallel.py's stamp: test_execute_parallel.py.)"""

import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))

import numbering  # noqa: E402
import web_edition  # noqa: E402


class FakeApp(SimpleNamespace):
    """What the extensions' setup and handlers use of a Sphinx app: connect and outdir."""

    def connect(self, event, handler, priority=500):
        self.handlers.setdefault(event, []).append(handler)


def test_steps_after_the_build_are_skipped_only_when_no_page_was_written(tmp_path):
    app = FakeApp(outdir=str(tmp_path), handlers={})
    static = tmp_path / "_static"
    static.mkdir()
    # the generated file is missing: the step must run even though no page was written
    assert not web_edition._already_done(app, web_edition.ANSWERBOX_JS)
    (static / web_edition.ANSWERBOX_JS).write_text("// the script")
    assert web_edition._already_done(app, web_edition.ANSWERBOX_JS)
    assert web_edition._already_done(app)  # a step that generates no file of its own
    web_edition._note_page_written(app, "chapters/01", "page.html", {}, None)
    assert not web_edition._already_done(app, web_edition.ANSWERBOX_JS)
    assert not web_edition._already_done(app)


def test_figures_are_numbered_again_only_when_a_page_was_read_or_removed():
    app = FakeApp(handlers={})
    numbering.setup(app)
    from sphinx.environment.collectors.toctree import TocTreeCollector

    def no_doctree(docname):
        raise AssertionError(f"loaded the doctree of {docname} in a no-change build")

    env = SimpleNamespace(app=app, toc_fignumbers={"a": {"figure": {"f": ("1", 1)}}})
    env.get_doctree = no_doctree
    (before_read,) = app.handlers["env-before-read-docs"]
    before_read(app, env, [])  # nothing to read
    assert TocTreeCollector.assign_figure_numbers(None, env) == []
    assert env.toc_fignumbers == {"a": {"figure": {"f": ("1", 1)}}}  # the saved numbers stand
    before_read(app, env, ["chapters/01"])
    assert getattr(app, numbering._READ_OR_REMOVED)
    app2 = FakeApp(handlers={})
    numbering.setup(app2)
    (purge,) = app2.handlers["env-purge-doc"]
    purge(app2, env, "chapters/02")  # a removed page
    assert getattr(app2, numbering._READ_OR_REMOVED)
