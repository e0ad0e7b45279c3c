"""A core path through every chapter, and optional "Going further" sections (issue 33, section 1).

A section whose heading starts "Going further:" is optional (_ext/going_further.py): collapsed
on the web page, whole in print and in the Colab twin. The core path (everything else) must not
need one: no core cell uses a Python name, no core prose a glued value or a figure, that only an
optional section defines. Each chapter's core path ends with its chapter takeaway box.
"""

from __future__ import annotations

import ast
import importlib
import re

import notebooks  # tools/ (conftest); it puts _ext/ on the path
import pytest
from docutils import nodes
from docutils.core import publish_doctree

going_further = importlib.import_module("going_further")  # _ext/going_further.py

ROOT = notebooks.ROOT
CHAPTERS = sorted((ROOT / "chapters").glob("*.md"))
#: The one form of a chapter's closing box (a section's own box is titled "Takeaway").
CHAPTER_TAKEAWAY = re.compile(r"^```\{admonition\} Chapter takeaway\n:class: tip\n", re.M)
#: Chapters the issue names: their specialist material must be optional.
MUST_HAVE_OPTIONAL = ("06_", "11_", "13_")


# ---------------------------------------------------------------- the MyST source, split
def core_and_optional(md_text: str) -> tuple[str, str]:
    """The text of the core path and of the optional sections of a chapter."""
    spans = going_further.optional_spans(md_text)
    core, optional, position = [], [], 0
    for start, end in spans:
        core.append(md_text[position:start])
        optional.append(md_text[start:end])
        position = end
    core.append(md_text[position:])
    return "".join(core), "".join(optional)


CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)


def code_cells(md_text: str) -> list[str]:
    """The Python source of every code cell (its `:tags:` line or YAML front matter removed)."""
    cells = []
    for match in CODE_CELL.finditer(md_text):
        body = match.group("body")
        body = re.sub(r"\A---\n.*?\n---\n", "", body, flags=re.S)
        body = re.sub(r"\A(?::[\w-]+:[^\n]*\n)+", "", body)
        cells.append(body)
    return cells


def defined_names(sources: list[str]) -> set[str]:
    """Names a cell binds: assignments, imports, functions, classes, loop and with targets."""
    found: set[str] = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython magics: not in this book's cells
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                found |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return found


def used_names(sources: list[str]) -> set[str]:
    found: set[str] = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        found |= {
            node.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        }
    return found


def glued(sources: list[str]) -> set[str]:
    return {
        name for source in sources for name in re.findall(r"""\bglue\(\s*["'](\w+)["']""", source)
    }


def figures(md_text: str) -> set[str]:
    return set(re.findall(r"^    name: (fig-[\w-]+)\s*$", md_text, re.M))


def what_core_needs_from_optional(md_text: str) -> list[str]:
    """Everything the core path uses that only an optional section defines."""
    core, optional = core_and_optional(md_text)
    core_cells, optional_cells = code_cells(core), code_cells(optional)
    problems = []
    only_optional = defined_names(optional_cells) - defined_names(core_cells)
    for name in sorted(only_optional & used_names(core_cells)):
        problems.append(f"Python name {name!r}")
    only_glued = glued(optional_cells) - glued(core_cells)
    for name in sorted(only_glued & set(notebooks.glued_names(core))):
        problems.append(f"glued value {{glue:text}}`{name}`")
    referenced = set(re.findall(r"\{numref\}`(?:[^`<]*<)?(fig-[\w-]+)>?`", core))
    for name in sorted((figures(optional) - figures(core)) & referenced):
        problems.append(f"figure {{numref}}`{name}`")
    return problems


def test_optional_spans_end_at_the_next_heading_of_the_same_level():
    text = (
        "# Title\n\n## Core\n\ntext\n\n## Going further: extra\n\nmore\n\n"
        "### A subsection\n\nstill optional\n\n```{code-cell} ipython3\n# a comment\n```\n\n"
        "## Exercises\n\n### Going further: one more\n\nx\n"
    )
    core, optional = core_and_optional(text)
    assert "still optional" in optional and "# a comment" in optional
    assert "## Exercises" in core and "## Core" in core and "text" in core
    assert optional.count("Going further:") == 2  # the ### one ends at the end of the text
    assert "x\n" in optional


def test_a_core_cell_using_an_optional_name_is_found():
    text = (
        "## Going further: fit\n\n```{code-cell} ipython3\nalpha = 1\nglue('a', 'one')\n```\n\n"
        "## Exercises\n\nThe fit gives {glue:text}`a`.\n\n```{code-cell} ipython3\nprint(alpha)\n```\n"
    )
    assert what_core_needs_from_optional(text) == [
        "Python name 'alpha'",
        "glued value {glue:text}`a`",
    ]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_core_cell_or_exercise_needs_an_optional_section(path):
    """A reader who skips every "Going further" section can do every other exercise: nothing
    outside those sections uses a name, a glued value or a figure defined only inside one."""
    problems = what_core_needs_from_optional(path.read_text(encoding="utf-8"))
    assert not problems, (
        f"{path.name}: the core path uses what only a 'Going further' section defines: "
        f"{problems}; compute it in a core cell, or move the exercise into the section"
    )


def test_the_issue_s_chapters_have_optional_sections():
    for path in CHAPTERS:
        if path.name.startswith(MUST_HAVE_OPTIONAL):
            _, optional = core_and_optional(path.read_text(encoding="utf-8"))
            assert optional, f"{path.name} has no 'Going further:' section"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_core_path_ends_with_the_chapter_takeaway(path):
    """One closing box per chapter, in one form, as the last thing of the core path (optional
    sections may follow it)."""
    core, _ = core_and_optional(path.read_text(encoding="utf-8"))
    boxes = list(CHAPTER_TAKEAWAY.finditer(core))
    assert len(boxes) == 1, f"{path.name}: {len(boxes)} 'Chapter takeaway' boxes, not one"
    rest = core[boxes[0].end() :]
    closing = re.search(r"^```[ \t]*$", rest, re.M)
    assert closing, f"{path.name}: the chapter takeaway box is not closed"
    after = rest[closing.end() :].strip()
    assert not after, f"{path.name}: the core path goes on after its takeaway box: {after[:80]!r}"


# ---------------------------------------------------------------- the editions
def test_the_twin_labels_an_optional_section():
    text = "## Going further: the alpha-beta fit\n\nProse.\n\n## Core again\n"
    labelled = notebooks.label_optional_sections(text)
    assert labelled.startswith(
        "## Going further: the alpha-beta fit\n\n" + going_further.TWIN_NOTE + "\n\nProse."
    )
    assert labelled.count(going_further.TWIN_NOTE) == 1


def test_html_build_wraps_the_optional_section_s_body_only():
    rst = (
        "Title\n=====\n\nCore\n----\n\ncore text\n\n"
        "Going further: extra\n--------------------\n\nhidden text\n\nSub\n~~~\n\ndeeper\n\n"
        "Back\n----\n\ncore again\n"
    )
    document = publish_doctree(rst)
    assert going_further.collapse_optional_sections(document) == 1
    (body,) = list(document.findall(going_further.going_further))
    section = body.parent
    assert section[0].astext() == "Going further: extra"  # the heading stays outside
    assert "hidden text" in body.astext() and "deeper" in body.astext()
    assert "core again" not in body.astext() and "core text" not in body.astext()
    assert isinstance(section, nodes.section)


# ---------------------------------------------------------------- the built site
@pytest.mark.slow
@pytest.mark.xdist_group("book")
def test_every_optional_section_is_collapsed_on_its_page(book_html):
    """Every "Going further" heading of a chapter is followed, on its built page, by a closed
    <details> holding the section, whose print rule shows it whole."""
    css = (book_html / "_static" / "roofline-web.css").read_text(encoding="utf-8")
    print_block = css[css.index("@media print", css.index('"Going further"')) :]
    assert re.search(r"details\.rx-going-further::details-content\s*\{[^}]*visible", print_block)
    for path in CHAPTERS:
        headings = [
            title
            for title in re.findall(r"^#{2,6} (.+)$", path.read_text(encoding="utf-8"), re.M)
            if going_further.is_going_further(title)
        ]
        page = (book_html / "chapters" / path.with_suffix(".html").name).read_text("utf-8")
        closed = re.findall(r'<details class="rx-going-further">\s*<summary', page)
        opened = re.findall(r'<details class="rx-going-further"[^>]*\bopen\b', page)
        assert not opened, f"{path.name}: an optional section is open on the page"
        assert len(closed) >= len(headings) - _nested(path), (
            f"{path.name}: {len(headings)} 'Going further' headings, {len(closed)} collapsed"
        )


def _nested(path) -> int:
    """Optional headings inside another optional section (collapsed with it)."""
    text = path.read_text(encoding="utf-8")
    spans = going_further.optional_spans(text)
    starts = [m.start() for m in re.finditer(r"^#{2,6} Going further:", text, re.M)]
    return len(starts) - len(spans)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.xdist_group("book")
def test_an_optional_section_opens_by_keyboard_and_prints_whole(book_html):
    """In Chromium: chapter 6's first optional section is closed (its body not shown), a Tab
    reaches its summary with a visible focus ring, Enter opens it; in print media a closed
    section's body is laid out in full and its summary is not shown."""
    import functools
    import http.server
    import threading

    from selenium.webdriver.common.keys import Keys
    from test_browser import _load, _make_driver

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(book_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = _make_driver()
    first = "document.querySelector('details.rx-going-further')"
    # checkVisibility(): false for content a closed <details> skips (content-visibility: hidden)
    body_shown = f"return {first}.querySelector(':scope > div').checkVisibility()"
    height = f"return {first}.getBoundingClientRect().height"
    try:
        url = (
            f"http://127.0.0.1:{server.server_address[1]}/chapters/06_communication_rooflines.html"
        )
        _load(driver, url)
        assert driver.execute_script(f"return {first}.open") is False
        assert not driver.execute_script(body_shown), "the optional section shows on screen"
        closed_px = driver.execute_script(height)
        summary = driver.find_element("css selector", "details.rx-going-further > summary")
        driver.execute_script("arguments[0].scrollIntoView(); arguments[0].focus()", summary)
        ring = driver.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
        assert ring == "solid", f"no focus ring on the summary (outline-style {ring})"
        summary.send_keys(Keys.ENTER)
        assert driver.execute_script(f"return {first}.open")
        assert driver.execute_script(body_shown)
        assert driver.execute_script(height) > closed_px + 500  # the section: text and a figure
        driver.execute_script(f"{first}.open = false")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        assert driver.execute_script(body_shown), "a closed optional section prints empty"
        assert driver.execute_script(height) > closed_px + 500
        assert (
            driver.execute_script(
                f"return getComputedStyle({first}.querySelector(':scope > summary')).display"
            )
            == "none"
        )
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
