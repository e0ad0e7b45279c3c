"""Keep the Colab twins (.ipynb) of the MyST notebooks (.md) in sync.

    python tools/notebooks.py sync    # rewrite every .ipynb (and the setup cell of every .md)
    python tools/notebooks.py check   # exit 1 if anything is out of sync

The .md files are the source. Their first code cell (tagged `remove-cell`, so it
does not show on the web page) makes the `roofline` package importable in Colab;
its text is generated from `repository.url` and `repository.branch` in
`_config.yml`, so the repository is named in one place only.

The twins are written for Colab, which renders CommonMark and LaTeX and ignores
cell tags (the web edition keeps MyST):

- `{admonition}` becomes a quote with a bold title, `{exercise}` a heading
  "Exercise N (title)" numbered as on the web page;
- a solution (`{solution-start}` ... `{solution-end}`, code cells included) becomes one
  markdown cell with a closed `<details>` block: "Run all" does not answer the exercise;
- `{doc}`, `{ref}` (to an exercise), `{numref}` (to a figure: "Figure N", numbered per chapter
  as Sphinx does) and `{term}` become links to the web edition (`web_url`); a figure's cell
  is followed by a markdown cell with its number and caption ("**Figure N:** ...");
- the setup cell installs the tagged package version the text was built from (`package_tag`);
- an `{only} html` block (web page only) is dropped and an `{only} colab` block (twin only)
  kept, as plain text: a sentence that holds for one edition appears only in that one;
- `{glue:text}` roles become the values the web page shows. They come from the executed
  book (`make book` writes `_build/jupyter_execute/`) and are kept in the twin's metadata
  (`GLUE_KEY`), so `sync` can rewrite a twin without a build as long as no glued name is
  new and the code cells are unchanged. Any other MyST role or directive stops `sync` with
  an error naming it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
from going_further import TWIN_NOTE, is_going_further  # noqa: E402  (optional sections)
from numbering import number  # noqa: E402  (the web edition's per-chapter numbers)

NOTEBOOK_DIRS = ("chapters", "exercises")
NOTEBOOK_PAGES = ("sympy_in_five_minutes.md",)  # MyST notebooks at the top level (appendix pages)
SETUP_MARKER = "# Colab setup"
#: Glued values measured on the machine that builds the book (chapter 9 times its own CPU):
#: they differ from build to build, so a twin shows those of the build it was made from.
MEASURED_GLUE = {
    "chapters/09_measuring_a_roofline.md": re.compile(r"ch09_(?!h100_ridge$)"),
    # chapter 14 times its matmul and its fused and unfused chain on the building machine
    "chapters/14_your_own_code.md": re.compile(
        r"ch14_(mm_rate|mm_time|mm_share|chain_bound|fusion_time_text|chain_time_text|figure_text)$"
    ),
}
SET_KEY = "rooflines_set"  # homework twin metadata: its set (roofline.exercises.grader.report)
GLUE_KEY = "rooflines_glue"  # twin metadata: {name: text} of the values glued into its prose
EXECUTED_DIR = ROOT / "_build" / "jupyter_execute"  # where `make book` leaves executed notebooks
#   (with MyST-NB's `<name>.glue.json`, the values glued in each)


def notebook_sources() -> list[Path]:
    """Every MyST notebook (.md with a jupytext header) in the book's notebook folders, and
    the top-level notebook pages of NOTEBOOK_PAGES."""
    candidates = [path for folder in NOTEBOOK_DIRS for path in sorted((ROOT / folder).glob("*.md"))]
    candidates += [ROOT / name for name in NOTEBOOK_PAGES if (ROOT / name).exists()]
    return [
        path for path in candidates if path.read_text(encoding="utf-8").startswith("---\njupytext:")
    ]


def repository() -> tuple[str, str]:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def package_tag() -> str:
    """The git tag of the package version the twins' text is built from: "v" + the version in
    pyproject.toml (a release tags it; bump the version when the prose's numbers change)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return f"v{project['version']}"


def setup_cell_source() -> str:
    """The setup cell: install the tagged version this text was built from; if that tag is not
    published, say so and install the branch instead (Run all must not stop)."""
    url, branch = repository()
    tag = package_tag()
    return (
        f"{SETUP_MARKER}: install the book's `roofline` package where it is missing (as in Colab),\n"
        f"# version {tag}, the one this notebook's text and numbers were built from.\n"
        "import importlib.util, subprocess, sys\n"
        'if importlib.util.find_spec("roofline") is None:\n'
        '    pip = [sys.executable, "-m", "pip", "install", "-q"]\n'
        f'    if subprocess.run(pip + ["roofline @ git+{url}@{tag}"]).returncode != 0:\n'
        f'        print("roofline {tag} is not published; installing the {branch} branch, whose "\n'
        '              "numbers may differ from this text\'s.")\n'
        f'        subprocess.run(pip + ["roofline @ git+{url}@{branch}"], check=True)'
    )


_SETUP_BLOCK = re.compile(
    r"```\{code-cell\}[^\n]*\n:tags: \[remove-cell\]\n\n" + re.escape(SETUP_MARKER) + r".*?\n```\n",
    re.S,
)


def expected_md_text(text: str) -> str:
    """The .md text with its setup cell regenerated from _config.yml."""
    block = "```{code-cell} ipython3\n:tags: [remove-cell]\n\n" + setup_cell_source() + "\n```\n"
    if _SETUP_BLOCK.search(text):
        return _SETUP_BLOCK.sub(lambda _: block, text, count=1)
    raise ValueError(
        "no Colab setup cell found; the first code cell of every notebook must be it "
        "(copy it from chapters/01_where_does_the_time_go.md)"
    )


# ---------------------------------------------------------------- MyST -> CommonMark
class TwinError(ValueError):
    """The .md source uses MyST that the twin cannot show, or a glued value is unknown."""


_DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<argument>[^\n]*)\n"
    r"(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)"
    r"(?P<body>.*?)"
    r"^(?P=fence)[ \t]*$\n?",
    re.M | re.S,
)
_ROLE = re.compile(r"\{(?P<name>[\w:-]+)\}`(?P<content>[^`]*)`")
_HEADING = re.compile(r"^(#{1,6}) ", re.M)
#: A solution's summary line, as the web page's dropdown title (sphinx-exercise's) reads.
SOLUTION_SUMMARY = "Solution to {exercise}"
#: The editions an `{only}` block may name: the web page (Sphinx's html tag) and the twin.
EDITIONS = ("html", "colab")


def _options(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        match = re.match(r"\s*:([\w-]+):\s*(.*)", line)
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def _quote(text: str) -> str:
    return "\n".join(("> " + line).rstrip() for line in text.strip("\n").splitlines())


def label_optional_sections(text: str) -> str:
    """Under each "Going further:" heading, the twin's note that the section is optional
    (the web page collapses such a section instead: _ext/going_further.py)."""

    def label(match):
        if not is_going_further(match.group(2)):
            return match.group(0)
        return f"{match.group(0)}\n\n{TWIN_NOTE}"

    return re.sub(r"^(#{2,6}) (.+)$", label, text, flags=re.M)


class _Twin:
    """State while one notebook's markdown is rewritten: exercise numbers, heading level."""

    def __init__(self, source: str, glue: dict[str, str], first_exercise: int = 1):
        self.source = source
        self.glue = glue
        self.first_exercise = first_exercise
        self.exercise_titles: dict[str, str] = {}  # label -> "Exercise 22 (The asterisk)"
        self.exercises = 0
        self.heading_level = 1

    def roles(self, text: str) -> str:
        def replace(match):
            name, content = match.group("name"), match.group("content")
            if name == "glue:text" or name == "glue":
                key = content.strip()
                if ":" in key:
                    raise TwinError(
                        f"{self.source}: {{glue:text}}`{key}` has a format spec or a "
                        "path, which twins do not support; glue the formatted text"
                    )
                if key not in self.glue:
                    raise TwinError(
                        f"{self.source}: no value for {{glue:text}}`{key}`; run `make book`, "
                        "then `make notebooks` (the values come from the executed book)"
                    )
                return self.glue[key]
            if name == "math":
                return f"${content}$"
            if name in ("doc", "ref", "numref"):
                return self.link(name, content)
            if name == "term":
                return self.term(content)
            raise TwinError(
                f"{self.source}: the MyST role {{{name}}} has no Colab form yet; "
                "use plain Markdown or teach tools/notebooks.py to rewrite it"
            )

        return _ROLE.sub(replace, text)

    def link(self, role: str, content: str) -> str:
        """A cross-reference as a Markdown link to the web edition's page (and anchor)."""
        explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content.strip(), re.S)
        text, target = (
            (explicit.group(1), explicit.group(2)) if explicit else (None, content.strip())
        )
        if role == "doc":
            folder = Path(self.source).parent
            path = Path(target.lstrip("/")) if target.startswith("/") else folder / target
            path = Path(*[part for part in path.parts if part != "."]).with_suffix("")
            while ".." in path.parts:  # resolve "../x" without touching the file system
                index = path.parts.index("..")
                path = Path(*path.parts[: index - 1], *path.parts[index + 1 :])
            document = ROOT / path.with_suffix(".md")
            if not document.exists():
                raise TwinError(f"{self.source}: {{doc}}`{content}` names no document ({path}.md)")
            return f"[{text or document_title(document)}]({web_url()}{path.as_posix()}.html)"
        if role == "numref" and target.startswith("fig-"):
            # a numbered figure: "Figure N" as on the web page (numfig_format), linked to it;
            # the twin writes the same number and caption under the figure's cell
            document = figure_index().get(target)
            if document is None:
                raise TwinError(
                    f"{self.source}: {{numref}}`{content}` names no figure (no cell has "
                    f"`name: {target}` in its mystnb figure metadata)"
                )
            number = figure_numbers()[target]
            shown = (text or "Figure %s").replace("%s", str(number))
            return f"[{shown}]({web_url()}{document}.html#{target})"
        found = exercise_index().get(target)
        if found is None:
            raise TwinError(
                f"{self.source}: {{{role}}}`{content}`: twins can link to exercises only "
                f"(no exercise is labelled {target!r})"
            )
        document, title = found
        return f"[{text or title}]({web_url()}{document}.html#{target})"

    def term(self, content: str) -> str:
        """A glossary word as a link to its entry on the web edition's glossary page."""
        explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content.strip(), re.S)
        text, target = (
            (explicit.group(1), explicit.group(2)) if explicit else (content.strip(),) * 2
        )
        found = glossary_terms().get(target.strip().lower())
        if found is None:
            raise TwinError(f"{self.source}: {{term}}`{content}`: no such word in the glossary")
        document, term = found
        return f"[{text}]({web_url()}{document}.html#{glossary_anchor(term)})"

    def directive(self, match) -> str:
        name = match.group("name")
        argument = match.group("argument").strip()
        options = _options(match.group("options"))
        body = match.group("body").strip("\n")
        if name == "admonition":
            title = argument or "Note"
            return _quote(f"**{title}**\n\n{self.markdown(body)}") + "\n"
        if name in ("note", "tip", "warning", "important", "seealso", "hint", "attention"):
            return _quote(f"**{name.capitalize()}**\n\n{self.markdown(body)}") + "\n"
        if name == "exercise":
            if "nonumber" in options:
                title = "Exercise" + (f" ({argument})" if argument else "")
            else:
                shown = number(
                    self.source.removesuffix(".md"), self.first_exercise + self.exercises
                )
                title = f"Exercise {shown}" + (f" ({argument})" if argument else "")
                self.exercises += 1
            if "label" in options:
                self.exercise_titles[options["label"]] = title
            level = "#" * min(self.heading_level + 1, 6)
            return f"{level} {title}\n\n{self.markdown(body)}\n"
        if name == "math":
            return f"$$\n{body}\n$$\n"
        if name == "only":
            # edition-specific text: `{only} html` holds for the web page only (dropped here);
            # `{only} colab` for the twin only (Sphinx knows no "colab" tag, so the web drops it)
            if argument not in EDITIONS:
                raise TwinError(
                    f"{self.source}: {{only}} {argument!r}: write `{{only}} html` (web page "
                    "only) or `{only} colab` (Colab/Jupyter twin only)"
                )
            return self.markdown(body) + "\n" if argument == "colab" else ""
        raise TwinError(
            f"{self.source}: the MyST directive {{{name}}} has no Colab form yet; "
            "use plain Markdown or teach tools/notebooks.py to rewrite it"
        )

    def markdown(self, text: str) -> str:
        """CommonMark + LaTeX for one stretch of MyST markdown (no solution markers inside)."""
        out, position = [], 0
        for match in _DIRECTIVE.finditer(text):
            out.append(self.plain(text[position : match.start()]))
            out.append(self.directive(match))
            position = match.end()
        out.append(self.plain(text[position:]))
        return "".join(out).strip("\n")

    def plain(self, text: str) -> str:
        for heading in _HEADING.finditer(text):
            self.heading_level = len(heading.group(1))
        if re.search(r"^\(\S+\)=\s*$", text, re.M):
            raise TwinError(f"{self.source}: MyST targets `(label)=` have no Colab form yet")
        return label_optional_sections(self.roles(text))

    def solution_title(self, argument: str) -> str:
        label = argument.strip()
        if label not in self.exercise_titles:
            raise TwinError(
                f"{self.source}: a solution refers to {label!r}, which is no exercise "
                "above it in the same notebook"
            )
        return SOLUTION_SUMMARY.format(exercise=self.exercise_titles[label])


_SOLUTION_MARKER = re.compile(
    r"^```\{(?P<kind>solution-start|solution-end)\}[ \t]*(?P<argument>[^\n]*)\n"
    r"(?:[ \t]*:[\w-]+:[^\n]*\n)*```[ \t]*$\n?",
    re.M,
)


def _segments(notebook):
    """The cells as ("md", text) / ("code", cell) / ("start", label) / ("end", "") pieces."""
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            yield "code", cell
            continue
        position = 0
        for match in _SOLUTION_MARKER.finditer(cell.source):
            yield "md", cell.source[position : match.start()]
            yield (
                ("start" if match.group("kind") == "solution-start" else "end"),
                match.group("argument"),
            )
            position = match.end()
        yield "md", cell.source[position:]


def toc_documents() -> list[Path]:
    """The book's documents (.md) in the order of `_toc.yml`."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [ROOT / f"{name}.md" for name in files]


def web_url() -> str:
    """The web edition's address: the repository's GitHub Pages site (.github/workflows)."""
    url, _ = repository()
    match = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)(?:\.git)?", url)
    if match is None:
        raise TwinError(f"cannot tell the web edition's address from repository.url {url!r}")
    return f"https://{match.group(1).lower()}.github.io/{match.group(2)}/"


def document_title(md_path: Path) -> str:
    """The first top-level heading of a document (what a {doc} link without text shows)."""
    prose = re.sub(
        r"^```.*?^```[ \t]*$", "", md_path.read_text(encoding="utf-8"), flags=re.M | re.S
    )
    found = re.search(r"^# (.+)$", prose, re.M)  # not a comment in a code cell
    return found.group(1).strip() if found else md_path.stem


def glossary_terms() -> dict[str, tuple[str, str]]:
    """term in lower case -> (document without .md, the term as written) for every word of
    every `{glossary}` in the book (Sphinx looks terms up without regard to case)."""
    found = {}
    for document in toc_documents():
        if not document.exists():
            continue
        for match in _DIRECTIVE.finditer(document.read_text(encoding="utf-8")):
            if match.group("name") != "glossary":
                continue
            for line in match.group("body").splitlines():
                if line.strip() and not line[0].isspace():
                    name = document.relative_to(ROOT).with_suffix("").as_posix()
                    found.setdefault(line.strip().lower(), (name, line.strip()))
    return found


def glossary_anchor(term: str) -> str:
    """The id Sphinx gives a glossary term on the page ("term-full-duplex")."""
    try:
        from sphinx.util.nodes import _make_id  # what Sphinx itself uses (sphinx >= 3)
    except ImportError:  # the same rule, for a checkout without the book's packages

        def _make_id(text):
            return re.sub(r"[^\w]+", "-", text.strip()).strip("-")

    return _make_id(f"term-{term}")


def exercise_index() -> dict[str, tuple[str, str]]:
    """label -> (document without .md, "Exercise N (title)") for every exercise in the book."""
    index = {}
    for document in toc_documents():
        if not document.exists():
            continue
        docname, position = document.relative_to(ROOT).with_suffix("").as_posix(), 0
        for match in _DIRECTIVE.finditer(document.read_text(encoding="utf-8")):
            if match.group("name") != "exercise":
                continue
            options = _options(match.group("options"))
            argument = match.group("argument").strip()
            if "nonumber" in options:
                title = "Exercise"
            else:
                position += 1
                title = f"Exercise {number(docname, position)}"
            title += f" ({argument})" if argument else ""
            if "label" in options:
                index[options["label"]] = (
                    document.relative_to(ROOT).with_suffix("").as_posix(),
                    title,
                )
    return index


def figure_index() -> dict[str, str]:
    """figure name (a cell's ``mystnb: figure: name:``) -> its document without .md."""
    index = {}
    for document in toc_documents():
        if document.exists() and document.suffix == ".md":
            for name in re.findall(
                r"^    name: (fig-[\w-]+)\s*$", document.read_text(encoding="utf-8"), re.M
            ):
                index[name] = document.relative_to(ROOT).with_suffix("").as_posix()
    return index


def figure_numbers() -> dict[str, str]:
    """figure name -> its number on the web page ("6.2"): each document's named figures are
    numbered from 1 under its label (_ext/numbering.py, the rule the web edition uses)."""
    numbers: dict[str, str] = {}
    for document in toc_documents():
        if document.exists() and document.suffix == ".md":
            docname = document.relative_to(ROOT).with_suffix("").as_posix()
            text = document.read_text(encoding="utf-8")
            names = dict.fromkeys(re.findall(r"^    name: (fig-[\w-]+)\s*$", text, re.M))
            for position, name in enumerate(names, 1):
                numbers.setdefault(name, number(docname, position))
    return numbers


def figure_caption(twin: _Twin, cell) -> str | None:
    """The markdown written under a figure's cell in the twin: "**Figure N:** caption"
    (Colab ignores the cell's mystnb metadata, which the web page turns into the caption)."""
    figure = cell.metadata.get("mystnb", {}).get("figure", {})
    caption, name = figure.get("caption"), figure.get("name")
    if not caption:
        return None
    number = figure_numbers().get(name) if name else None
    head = f"**Figure {number}:**" if number else "**Figure:**"
    return f"{head} {twin.roles(str(caption).strip())}"


def twin_cells(notebook, source: str, glue: dict[str, str], first_exercise: int = 1) -> list:
    """The twin's cells: markdown rewritten for Colab, each solution one closed markdown block."""
    import nbformat

    twin = _Twin(source, glue, first_exercise)
    cells, solution = [], None
    for kind, piece in _segments(notebook):
        if kind == "start":
            if solution is not None:
                raise TwinError(f"{source}: a solution starts inside another solution")
            solution = [f"<details>\n<summary><b>{twin.solution_title(piece)}</b></summary>"]
        elif kind == "end":
            if solution is None:
                raise TwinError(f"{source}: {{solution-end}} without a {{solution-start}}")
            solution.append("</details>")
            cells.append(nbformat.v4.new_markdown_cell("\n\n".join(solution)))
            solution = None
        elif kind == "md":
            text = twin.markdown(piece)
            if not text.strip():
                continue
            if solution is not None:
                solution.append(text)
            else:
                cells.append(nbformat.v4.new_markdown_cell(text))
        elif solution is not None:  # a solution's code: shown, not run
            solution.append("```python\n" + piece.source.strip("\n") + "\n```")
            caption = figure_caption(twin, piece)
            if caption:
                solution.append(caption)
        else:
            cells.append(piece)
            caption = figure_caption(twin, piece)
            if caption:
                cells.append(nbformat.v4.new_markdown_cell(caption))
    if solution is not None:
        raise TwinError(f"{source}: a {{solution-start}} has no {{solution-end}}")
    return cells


# ---------------------------------------------------------------- glued values
def glued_names(md_text: str) -> list[str]:
    """The names of every `{glue:text}` role in a MyST text, in order."""
    return [
        m.group("content").split(":", 1)[0].strip()
        for m in _ROLE.finditer(md_text)
        if m.group("name") in ("glue:text", "glue")
    ]


def glue_text_of(data: dict) -> str:
    """What `{glue:text}` shows for a glued output: its text/plain read back as a Python
    literal where it is one (a glued string loses its quotes), as MyST-NB does."""
    from ast import literal_eval

    text = data["text/plain"]
    text = "".join(text) if isinstance(text, list) else str(text)
    try:
        return str(literal_eval(text))
    except (SyntaxError, ValueError):
        return text


def executed_glue(executed_path: Path) -> dict[str, str]:
    """name -> text of every value glued in an executed notebook: MyST-NB keeps them in a
    `.glue.json` next to the executed `.ipynb` ({name: output with "data"})."""
    import json

    glue_file = executed_path.with_suffix(".glue.json")
    if not glue_file.exists():
        return {}
    stored = json.loads(glue_file.read_text(encoding="utf-8"))
    return {
        name: glue_text_of(output["data"])
        for name, output in stored.items()
        if "text/plain" in output.get("data", {})
    }


def _code_sources(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def stored_glue(twin_path: Path) -> dict[str, str]:
    """The glued values kept in an existing twin's metadata ({} if none or unreadable)."""
    import json

    try:
        return dict(json.loads(twin_path.read_text(encoding="utf-8"))["metadata"].get(GLUE_KEY, {}))
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def fresh_glue(md_path: Path, executed_dir: Path | None = None) -> dict[str, str] | None:
    """Glued values from the executed book, or None when it has not run this .md's code."""
    import nbformat

    executed_dir = executed_dir or EXECUTED_DIR

    executed = executed_dir / md_path.relative_to(ROOT).with_suffix(".ipynb")
    if not executed.exists():
        return None
    source = jupytext.reads(md_path.read_text(encoding="utf-8"), fmt="md:myst")
    ran = nbformat.read(executed, as_version=4)
    if _code_sources(ran) != _code_sources(source):
        return None
    return executed_glue(executed)


def expected_ipynb_text(md_path: Path, glue: dict[str, str] | None = None) -> str:
    """The exact .ipynb text that should sit next to `md_path`: Colab markdown, no outputs.

    `glue` (name -> text) defaults to the values stored in the existing twin.
    """
    text = md_path.read_text(encoding="utf-8")
    if glue is None:
        glue = stored_glue(md_path.with_suffix(".ipynb"))
    names = glued_names(text)
    glue = {name: glue[name] for name in names if name in glue}
    notebook = jupytext.reads(text, fmt="md:myst")
    notebook.metadata.pop("jupytext", None)
    notebook.metadata.pop("rooflines_build", None)  # build instructions (tools/execute_parallel.py)
    notebook.metadata["colab"] = {"provenance": []}
    notebook.metadata[GLUE_KEY] = dict(sorted(glue.items()))
    homework_set = re.search(r"""homework\.parameters\(\s*["']([A-Za-z0-9_-]+)["']""", text)
    if md_path.parent.name == "exercises" and homework_set:  # handed in: the grader reads it
        notebook.metadata[SET_KEY] = homework_set.group(1)
    notebook.cells = twin_cells(notebook, md_path.relative_to(ROOT).as_posix(), glue)
    for position, cell in enumerate(notebook.cells):
        cell.id = f"cell-{position}"  # stable ids, so regenerating changes nothing
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return jupytext.writes(notebook, fmt="ipynb")


def problems() -> list[str]:
    out = []
    for md in notebook_sources():
        text = md.read_text(encoding="utf-8")
        try:
            if expected_md_text(text) != text:
                out.append(f"{md.relative_to(ROOT)}: its Colab setup cell differs from _config.yml")
        except ValueError as error:
            out.append(f"{md.relative_to(ROOT)}: {error}")
        twin = md.with_suffix(".ipynb")
        if not twin.exists():
            out.append(f"{twin.relative_to(ROOT)} is missing")
            continue
        try:
            if twin.read_text(encoding="utf-8") != expected_ipynb_text(md):
                out.append(f"{twin.relative_to(ROOT)} is out of sync with {md.name}")
        except TwinError as error:
            out.append(str(error))
    return out


#: The fix for twins whose numbers differ from the web page's. `make book` alone may not do:
#: its execution cache reruns a notebook only when the notebook changed, not the package.
REFRESH_HINT = "rm -rf _build/.jupyter_cache && make book && make notebooks"


def _stale_cache_note() -> str | None:
    """A warning when the executed book is older than the package (its numbers may be old)."""
    executed = list(EXECUTED_DIR.glob("**/*.glue.json"))
    if not executed:
        return None
    built = min(path.stat().st_mtime for path in executed)
    newer = [path for path in (ROOT / "roofline").rglob("*.py") if path.stat().st_mtime > built]
    if not newer:
        return None
    return (
        f"note: {newer[0].relative_to(ROOT)} changed after the book was executed; if a number "
        f"in the prose moved, refresh with: {REFRESH_HINT}"
    )


def sync() -> int:
    """Rewrite every twin; glued values from the executed book where it is up to date."""
    failures, stale = [], []
    for md in notebook_sources():
        text = md.read_text(encoding="utf-8")
        new = expected_md_text(text)
        if new != text:
            md.write_text(new, encoding="utf-8")
        twin = md.with_suffix(".ipynb")
        glue = fresh_glue(md)
        if glue is None:
            glue = stored_glue(twin)
            if glued_names(new):
                stale.append(md.relative_to(ROOT).as_posix())
        try:
            content = expected_ipynb_text(md, glue)
        except TwinError as error:
            failures.append(str(error))
            continue
        if not twin.exists() or twin.read_text(encoding="utf-8") != content:
            twin.write_text(content, encoding="utf-8")
            print(f"wrote {twin.relative_to(ROOT)}")
    if stale:
        print(
            "glued values kept from the previous twins (no up-to-date executed book in "
            f"{EXECUTED_DIR}) for: {', '.join(stale)}; "
            f"if their numbers changed: {REFRESH_HINT}",
            file=sys.stderr,
        )
    note = _stale_cache_note()
    if note:
        print(note, file=sys.stderr)
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command == "sync":
        if len(sys.argv) > 2:  # sync EXECUTED_DIR: values from a book built elsewhere (--out)
            EXECUTED_DIR = Path(sys.argv[2]).resolve()
        sys.exit(sync())
    elif command == "check":
        found = problems()
        print("\n".join(found) or "all notebooks in sync")
        sys.exit(1 if found else 0)
    else:
        sys.exit("usage: python tools/notebooks.py [sync|check]")
