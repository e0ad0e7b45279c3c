"""The Colab twin says what the page says about figures (issue 24, item 6): each figure's cell
is followed by "**Figure N:** caption", references read "Figure N", and N is the number the
web page shows: per chapter, "Figure 6.2" (issue 36; _ext/numbering.py renumbers Sphinx's
book-wide count). The setup cell installs the tagged version the text was built from."""

import json
import re

import notebooks
import pytest

SOURCES = notebooks.notebook_sources()


def _cells(md):
    return json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))["cells"]


def test_figure_numbers_restart_in_every_chapter():
    numbers = notebooks.figure_numbers()
    # counted by hand from the sources: chapter 6 names three figures (all roofs on the v5e,
    # two intensities, the nccl-tests fit), chapter 7 two; so they are 6.1-6.3 and 7.1-7.2,
    # whatever chapters 1-5 hold
    assert numbers["fig-ch06-v5e-all-roofs"] == "6.1"
    assert numbers["fig-ch06-nccl-alpha-beta"] == "6.3"
    assert numbers["fig-ch07-layer-on-two-rooflines"] == "7.1"
    assert numbers["fig-ch07-memory-and-compute-walls"] == "7.2"
    for name, shown in numbers.items():
        chapter, position = shown.split(".")
        assert int(chapter) == int(re.match(r"fig-ch(\d\d)", name).group(1)), (name, shown)
        assert int(position) >= 1


def test_exercises_restart_in_every_chapter_and_homework_set():
    titles = [title for _, title in notebooks.exercise_index().values()]
    assert any(t.startswith("Exercise 12.1") for t in titles), titles[:3]
    assert not any(re.match(r"Exercise \d+[ (]", t) for t in titles), "a book-wide number"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_every_figure_cell_is_followed_by_its_numbered_caption(md):
    numbers = notebooks.figure_numbers()
    cells = _cells(md)
    for index, cell in enumerate(cells):
        figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
        if cell["cell_type"] != "code" or not figure.get("caption"):
            continue
        after = "".join(cells[index + 1]["source"])
        assert after.startswith(f"**Figure {numbers[figure['name']]}:**"), (md.name, after[:80])


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_references_name_the_figure_number(md):
    prose = "\n".join("".join(c["source"]) for c in _cells(md) if c["cell_type"] == "markdown")
    assert "[the figure]" not in prose.lower()
    for number, anchor in re.findall(r"\[Figure ([\dH]+\.\d+)\]\([^)#]*#(fig-[\w-]+)\)", prose):
        assert notebooks.figure_numbers()[anchor] == number


def test_numref_with_its_own_text_keeps_it():
    twin = notebooks._Twin("chapters/07_x.md", {})
    assert twin.roles("{numref}`Fig. %s <fig-ch07-layer-on-two-rooflines>`").startswith(
        "[Fig. 7.1]("
    )
    assert twin.roles("{numref}`fig-ch07-layer-on-two-rooflines`").startswith("[Figure 7.1](")


def test_setup_cell_installs_the_tag_and_falls_back_to_the_branch():
    source = notebooks.setup_cell_source()
    url, branch = notebooks.repository()
    tag = notebooks.package_tag()
    assert re.fullmatch(r"v\d+\.\d+\.\d+\S*", tag)
    assert f"git+{url}@{tag}" in source and f"git+{url}@{branch}" in source
    assert source.index(tag) < source.index(f"@{branch}")  # the tag first
    compile(source, "setup", "exec")


@pytest.mark.slow
@pytest.mark.xdist_group("book")
def test_figure_numbers_are_the_web_pages(book_html):
    numbers = notebooks.figure_numbers()
    for name, number in numbers.items():
        document = notebooks.figure_index()[name]
        page = (book_html / f"{document}.html").read_text(encoding="utf-8")
        found = re.search(
            r'id="' + re.escape(name) + r'".*?<span class="caption-number">Figure ([\dH]+\.\d+) ',
            page,
            re.S,
        )
        assert found and found.group(1) == number, name
