import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


# ---------------------------------------------------------------- the built book (helper "web")
# The book is built ONCE per test session and shared by tests/test_book_build.py,
# tests/test_site.py and tests/test_browser.py. Every test that uses it carries
# @pytest.mark.xdist_group("book"), so under `pytest -n 2 --dist loadgroup` they all run
# on one worker and the build happens once.
# While working on the web edition you may point ROOFLINE_BOOK_HTML at an html folder you
# built yourself (tools/build_book.py --out DIR -> DIR/_build/html); it is ignored under CI.
import os  # noqa: E402
import subprocess  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests have no per-example deadline: a deadline is a clock, and on a loaded machine it
# failed tests that pass alone (issue 36). Slowness belongs in `make bench`.
settings.register_profile("no-clock", deadline=None)
settings.load_profile("no-clock")


@dataclass
class BuiltBook:
    html: Path  # the html folder (index.html, chapters/, _static/, ...)
    returncode: int
    output: str  # the tail of the build's stdout and stderr
    prebuilt: bool  # True when taken from ROOFLINE_BOOK_HTML instead of built here

    def require(self) -> Path:
        """The html folder; skips the calling test when the build failed (the build test fails)."""
        if self.returncode != 0:
            pytest.skip(
                "the book did not build; see test_book_builds_clean_with_warnings_as_errors"
            )
        return self.html


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> BuiltBook:
    prebuilt = os.environ.get("ROOFLINE_BOOK_HTML")
    if prebuilt and os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        html = Path(prebuilt).resolve()
        if not (html / "index.html").exists():
            pytest.fail(
                f"ROOFLINE_BOOK_HTML={prebuilt} has no index.html; build with "
                "`python tools/build_book.py --out DIR` and point it at DIR/_build/html"
            )
        return BuiltBook(html, 0, f"(prebuilt: {html})", True)
    out = tmp_path_factory.mktemp("book")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_book.py"), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1"},
    )
    return BuiltBook(
        out / "_build" / "html",
        result.returncode,
        result.stdout[-6000:] + result.stderr[-6000:],
        False,
    )


@pytest.fixture(scope="session")
def book_html(built_book) -> Path:
    """The built book's html folder (the calling test is skipped if the build failed)."""
    return built_book.require()


# ---------------------------------------------------------------- registrations stay in their test
@pytest.fixture(autouse=True)
def _undo_registrations():
    """A chip or model a test registers (rl.register_chip / rl.register_model) is gone after
    that test, so the order tests run in cannot change what `list_chips()` returns."""
    from roofline import catalog, models

    chips, user_models = dict(catalog._USER_CHIPS), dict(models._USER_MODELS)
    yield
    catalog._USER_CHIPS.clear()
    catalog._USER_CHIPS.update(chips)
    models._USER_MODELS.clear()
    models._USER_MODELS.update(user_models)


# ---------------------------------------------------------------- one sandboxed grader at a time
@pytest.fixture
def one_grader_at_a_time(tmp_path_factory):
    """Sandboxed grading runs use the same unprivileged uids (64000 and up, one per job) and
    refuse uids whose processes are running: two pytest-xdist workers grading at once would
    make each other's run fail. Tests that grade take this lock, shared by the session's
    workers (a file next to their temporary folders)."""
    import fcntl

    lock_path = tmp_path_factory.getbasetemp().parent / "roofline-grader.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# ---------------------------------------------------------------- no hang at garbage collection
# pyzmq destroys a Context when it is garbage-collected. A context left by a notebook executed
# in this process (tests/test_book_build.py), whose kernel client's event-loop thread still
# polls one of its sockets, then blocks forever inside whichever later test triggers the
# collection (seen once in CI: a worker stuck in Context.term under test_training). Contexts
# are left to the process's exit instead.
try:
    import zmq  # noqa: E402

    zmq.Context.__del__ = lambda self: None  # type: ignore[method-assign]
except ImportError:  # the minimal-versions venv has no pyzmq (and runs no notebook)
    pass
