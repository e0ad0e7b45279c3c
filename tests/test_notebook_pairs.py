"""The .ipynb twins that Colab opens match their .md sources and carry no outputs."""

import json
import re

import notebooks
import pytest

SOURCES = notebooks.notebook_sources()


def test_there_are_notebooks():
    assert len(SOURCES) >= 1


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_pair_in_sync(md):
    twin = md.with_suffix(".ipynb")
    assert twin.exists(), f"{twin.name} missing: run `make notebooks`"
    assert twin.read_text(encoding="utf-8") == notebooks.expected_ipynb_text(md), (
        f"{twin.name} is out of sync with {md.name}: run `make notebooks`"
    )


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_ipynb_has_no_outputs(md):
    nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_first_code_cell_is_colab_setup_from_config(md):
    text = md.read_text(encoding="utf-8")
    assert notebooks.expected_md_text(text) == text, "setup cell differs: run `make notebooks`"
    nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "code")
    url, branch = notebooks.repository()
    assert f"git+{url}@{branch}" in "".join(first["source"])
    assert "remove-cell" in first["metadata"].get("tags", [])


# ---------------------------------------------------------------- the Colab edition (issue 14)
import html as html_lib  # noqa: E402

# What Colab would show as raw text: a MyST role, a directive fence, a directive option line,
# a MyST target. (LaTeX such as \text{comms} has no backtick after its brace.)
MYST_LEFTOVERS = re.compile(
    r"\{[\w:-]+\}`|^\s*(?:>\s*)*(?:`{3,}|:{3,})\{|^\s*(?:>\s*)*:(?:label|class|tags|nonumber):|"
    r"^\(\S+\)=\s*$",
    re.M,
)


def twin_markdown(md):
    nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]


def twin_glue(md):
    return json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))["metadata"][
        notebooks.GLUE_KEY
    ]


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_twin_markdown_has_no_myst_left(md):
    for text in twin_markdown(md):
        found = MYST_LEFTOVERS.search(text)
        assert found is None, (
            f"{md.with_suffix('.ipynb').name}: MyST left for Colab: {found.group(0)!r} in\n{text[:400]}"
        )


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_no_cell_raises_on_purpose(md):
    # Colab ignores tags: a cell that raises stops "Run all" (use rl.book.expect_error)
    nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        assert "raises-exception" not in cell["metadata"].get("tags", []), "".join(cell["source"])


def split_source(md):
    """(code cells outside solutions, code cells inside, number of solutions), read from the
    .md with plain string handling, independently of tools/notebooks.py."""
    outside, inside, solutions, in_solution = [], [], 0, False
    lines = iter(md.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if line.startswith("```{solution-start}"):
            in_solution, solutions = True, solutions + 1
        elif line.startswith("```{solution-end}"):
            in_solution = False
        elif line.startswith("```{code-cell}"):
            body = []
            for inner in lines:
                if inner == "```":
                    break
                body.append(inner)
            (inside if in_solution else outside).append(body)
    return outside, inside, solutions


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_twin_solutions_are_closed_markdown_that_run_all_skips(md):
    outside, inside, solutions = split_source(md)
    nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) == len(outside), "a solution's code cell is still a code cell in the twin"
    blocks = [t for t in twin_markdown(md) if t.startswith("<details>")]
    assert len(blocks) == solutions
    for block in blocks:
        assert "<details open" not in block and block.rstrip().endswith("</details>")
        assert re.search(r"<summary><b>Solution to Exercise (?:[A-Z]|\d+)\.\d+", block)
    shown = "\n".join(blocks)
    for body in inside:  # the solution's code is there to read (and copy)
        code_lines = [line for line in body if line.strip() and not line.startswith(":")]
        assert all(line in shown for line in code_lines)


def test_answer_cells_start_unanswered():
    # Every exercise check in a twin's code (what Run all runs) is given None, never a value.
    for md in SOURCES:
        nb = json.loads(md.with_suffix(".ipynb").read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and re.search(r"^answer = ", source, re.M):
                assert re.search(r"^answer = None\b", source, re.M), (md.name, source)


# -- the rewriting itself, on a small MyST text whose CommonMark form is written out by hand
SAMPLE_MD = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

## Exercises

```{admonition} Takeaway
:class: tip
A point above the roof means a wrong figure: {glue:text}`peak`.
```

```{exercise} First one
:label: ex-a

How fast?
```

```{code-cell} ipython3
answer = None
```

```{solution-start} ex-a
:class: dropdown
```

Divide by two.

```{code-cell} ipython3
value = 2
```

```{solution-end}
```
"""

SAMPLE_TWIN_MARKDOWN = [
    "## Exercises\n\n"
    "> **Takeaway**\n>\n> A point above the roof means a wrong figure: 989 TFLOP/s.\n\n"
    "### Exercise 7 (First one)\n\nHow fast?",
    "<details>\n<summary><b>Solution to Exercise 7 (First one)</b></summary>\n\n"
    "Divide by two.\n\n```python\nvalue = 2\n```\n\n</details>",
]


def _sample_cells(text, glue):
    import jupytext

    nb = jupytext.reads(text, fmt="md:myst")
    return notebooks.twin_cells(nb, "sample.md", glue, first_exercise=7)


def test_twin_rewrites_admonition_exercise_solution_and_glue():
    cells = _sample_cells(SAMPLE_MD, {"peak": "989 TFLOP/s"})
    assert [c.source for c in cells if c.cell_type == "markdown"] == SAMPLE_TWIN_MARKDOWN
    assert [c.source for c in cells if c.cell_type == "code"] == ["answer = None"]


def test_twin_refuses_unknown_myst_and_unknown_glue():
    with pytest.raises(notebooks.TwinError, match="make book"):
        _sample_cells(SAMPLE_MD, {})
    with pytest.raises(notebooks.TwinError, match=r"\{figure\}"):
        _sample_cells(SAMPLE_MD.replace("{admonition} Takeaway", "{figure} x.png"), {"peak": "1"})
    with pytest.raises(notebooks.TwinError, match=r"\{ref\}"):
        _sample_cells(SAMPLE_MD.replace("How fast?", "See {ref}`ex-a`."), {"peak": "1"})


def test_cross_references_become_links_to_the_web_edition():
    assert (
        notebooks.web_url() == "https://roofline-book.github.io/rooflines/"
    )  # from _config.yml's repository
    twin = notebooks._Twin("chapters/06_x.md", {})
    assert (
        twin.roles("see {doc}`the critical batch chapter <04_matmul_critical_batch>`.")
        == "see [the critical batch chapter](https://roofline-book.github.io/rooflines/"
        "chapters/04_matmul_critical_batch.html)."
    )
    assert (
        twin.roles("{doc}`/exercises/homework_part1`")
        == "[Homework, part 1: rooflines on one chip](https://roofline-book.github.io/rooflines/"
        "exercises/homework_part1.html)"
    )
    # the number is chapter 5's own exercise number (checked against the built page elsewhere)
    assert re.fullmatch(
        r"\[Exercise 5\.\d+ \(The asterisk on TF32\)\]\(https://roofline-book\.github\.io/rooflines/"
        r"chapters/05_reading_a_spec_sheet\.html#ch05-h100-dense\)",
        twin.roles("{ref}`ch05-h100-dense`"),
    )
    with pytest.raises(notebooks.TwinError, match="names no document"):
        twin.roles("{doc}`no_such_chapter`")
    # glossary words: Sphinx's ids are "term-" + the word, spaces as hyphens, case kept
    assert (
        twin.roles("{term}`collectives <collective>` over {term}`full duplex` links")
        == "[collectives](https://roofline-book.github.io/rooflines/glossary.html#term-collective) over "
        "[full duplex](https://roofline-book.github.io/rooflines/glossary.html#term-full-duplex) links"
    )
    assert twin.roles("{term}`ICI`").endswith("glossary.html#term-ICI)")
    with pytest.raises(notebooks.TwinError, match="no such word in the glossary"):
        twin.roles("{term}`flux capacitor`")


def test_glue_text_reads_values_as_myst_nb_shows_them():
    assert notebooks.glue_text_of({"text/plain": "'1.39 PFLOP/s'"}) == "1.39 PFLOP/s"
    assert notebooks.glue_text_of({"text/plain": '"it\'s"'}) == "it's"
    assert notebooks.glue_text_of({"text/plain": "240"}) == "240"
    assert notebooks.glue_text_of({"text/plain": "Cost of matmul"}) == "Cost of matmul"


# -- against the built web edition
def plain_quotes(text):
    """Sphinx turns ' and " into typographic quotes on the page; the twin keeps them plain."""
    return text.translate(
        str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
    )


def pasted_texts(page):
    """The text of every {glue:text} value on a built page (MyST-NB's span.pasted-text), in order."""
    text = page.read_text(encoding="utf-8")
    return [
        plain_quotes(html_lib.unescape(m))
        for m in re.findall(r'<span class="pasted-text">(.*?)</span>', text, re.S)
    ]


def exercise_titles(page):
    """ "Exercise N (title)" of every exercise on a built page, in order."""
    text = page.read_text(encoding="utf-8")
    found = re.findall(
        r'<p class="admonition-title">\s*<span class="caption-number">(Exercise (?:[\dH]+\.)?\d+ )</span>\s*'
        r"(?:\((.*?)\)\s*</p>)?",
        text,
        re.S,
    )
    return [
        (number + f"({plain_quotes(html_lib.unescape(title))})" if title else number.strip())
        for number, title in found
    ]


@pytest.mark.slow
@pytest.mark.xdist_group("book")
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_twin_shows_the_numbers_the_web_page_shows(book_html, md):
    page = book_html / md.relative_to(notebooks.ROOT).with_suffix(".html")
    web = pasted_texts(page)
    names = notebooks.glued_names(md.read_text(encoding="utf-8"))
    assert len(web) == len(names), (
        f"{page.name} shows {len(web)} glued values, the .md has {len(names)} roles"
    )
    glue = twin_glue(md)
    measured = notebooks.MEASURED_GLUE.get(md.relative_to(notebooks.ROOT).as_posix())
    prose = "\n".join(twin_markdown(md))
    for name, on_page in zip(names, web):
        in_twin = glue.get(name)
        assert in_twin, f"{md.name}: the twin has no value for {name}: run {notebooks.REFRESH_HINT}"
        assert in_twin in prose
        if measured is not None and measured.match(name):
            continue  # measured on the building machine: differs from build to build
        assert in_twin == on_page, (
            f"{md.name}: {name} is {in_twin!r} in the twin but {on_page!r} on "
            f"the web page: run {notebooks.REFRESH_HINT}"
        )


@pytest.mark.slow
@pytest.mark.xdist_group("book")
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_twin_numbers_exercises_as_the_web_page(book_html, md):
    page = book_html / md.relative_to(notebooks.ROOT).with_suffix(".html")
    web = exercise_titles(page)
    twin = [
        m
        for text in twin_markdown(md)
        for m in re.findall(r"^#+ (Exercise (?:[\dH]+\.)?\d+.*)$", text, re.M)
    ]
    assert twin == web


@pytest.mark.slow
@pytest.mark.xdist_group("book")
def test_twin_links_to_the_web_edition_resolve(book_html):
    base = notebooks.web_url()
    checked = 0
    for md in SOURCES:
        for text in twin_markdown(md):
            for target in re.findall(r"\]\((" + re.escape(base) + r"[^)\s]*)\)", text):
                page, _, anchor = target[len(base) :].partition("#")
                built = book_html / page
                assert built.exists(), (
                    f"{md.with_suffix('.ipynb').name} links to {target}: no such page"
                )
                if anchor:
                    assert f'id="{anchor}"' in built.read_text(encoding="utf-8"), (
                        f"{target}: no such anchor"
                    )
                checked += 1
    assert checked >= 10  # chapter 6 links to chapter 4 and to many glossary words
