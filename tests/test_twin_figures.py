"""The Colab twin says what the page says about figures (issue 24, item 6): each figure's cell
is followed by "**Figure N:** caption", references read "Figure N", and N is the number the
web page shows (Sphinx numbers named figures book-wide in _toc.yml order). The setup cell
installs the tagged version the text was built from."""

import json
import re

import notebooks
import pytest

SOURCES = notebooks.notebook_sources()


def _cells(md):
    return json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))["cells"]


def test_figure_numbers_run_through_the_book_in_toc_order():
    numbers = notebooks.figure_numbers()
    assert sorted(numbers.values()) == list(range(1, len(numbers) + 1))
    # counted by hand from the sources: ch02 has 1 figure, ch03 4, ch04 1, ch05 1, ch06 3 (the
    # nccl-tests fit joined it), so chapter 7's first figure is the 11th (the issue's "figure 10")
    assert numbers["fig-ch07-layer-on-two-rooflines"] == 11
    order = [name for name, _ in sorted(numbers.items(), key=lambda kv: kv[1])]
    chapters = [re.match(r"fig-ch(\d\d)", name).group(1) for name in order]
    assert chapters == sorted(chapters)


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
    for number, anchor in re.findall(r"\[Figure (\d+)\]\([^)#]*#(fig-[\w-]+)\)", prose):
        assert notebooks.figure_numbers()[anchor] == int(number)


def test_numref_with_its_own_text_keeps_it():
    twin = notebooks._Twin("chapters/07_x.md", {})
    assert twin.roles("{numref}`Fig. %s <fig-ch07-layer-on-two-rooflines>`").startswith(
        "[Fig. 11]("
    )
    assert twin.roles("{numref}`fig-ch07-layer-on-two-rooflines`").startswith("[Figure 11](")


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
            r'id="' + re.escape(name) + r'".*?<span class="caption-number">Figure (\d+) ',
            page,
            re.S,
        )
        assert found and int(found.group(1)) == number, name
