"""Keep the Colab twins (.ipynb) of the MyST notebooks (.md) in sync.

    python tools/notebooks.py sync    # rewrite every .ipynb (and the setup cell of every .md)
    python tools/notebooks.py check   # exit 1 if anything is out of sync

The .md files are the source. Their first code cell (tagged `remove-cell`, so it
does not show on the web page) makes the `roofline` package importable in Colab;
its text is generated from `repository.url` and `repository.branch` in
`_config.yml`, so the repository is named in one place only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIRS = ("chapters", "exercises")
SETUP_MARKER = "# Colab setup"


def notebook_sources() -> list[Path]:
    """Every MyST notebook (.md with a jupytext header) in the book's notebook folders."""
    found = []
    for folder in NOTEBOOK_DIRS:
        for path in sorted((ROOT / folder).glob("*.md")):
            if path.read_text(encoding="utf-8").startswith("---\njupytext:"):
                found.append(path)
    return found


def repository() -> tuple[str, str]:
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def setup_cell_source() -> str:
    url, branch = repository()
    return (
        f"{SETUP_MARKER}: install the book's `roofline` package where it is missing (as in Colab).\n"
        "import importlib.util, subprocess, sys\n"
        "if importlib.util.find_spec(\"roofline\") is None:\n"
        "    subprocess.run([sys.executable, \"-m\", \"pip\", \"install\", \"-q\",\n"
        f"                    \"roofline @ git+{url}@{branch}\"], check=True)"
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
    raise ValueError("no Colab setup cell found; the first code cell of every notebook must be it "
                     "(copy it from chapters/01_where_does_the_time_go.md)")


def expected_ipynb_text(md_path: Path) -> str:
    """The exact .ipynb text that should sit next to `md_path`: same cells, no outputs."""
    notebook = jupytext.reads(md_path.read_text(encoding="utf-8"), fmt="md:myst")
    notebook.metadata.pop("jupytext", None)
    notebook.metadata["colab"] = {"provenance": []}
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell-{number}"  # stable ids, so regenerating changes nothing
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
        elif twin.read_text(encoding="utf-8") != expected_ipynb_text(md):
            out.append(f"{twin.relative_to(ROOT)} is out of sync with {md.name}")
    return out


def sync() -> None:
    for md in notebook_sources():
        text = md.read_text(encoding="utf-8")
        new = expected_md_text(text)
        if new != text:
            md.write_text(new, encoding="utf-8")
        twin = md.with_suffix(".ipynb")
        content = expected_ipynb_text(md)
        if not twin.exists() or twin.read_text(encoding="utf-8") != content:
            twin.write_text(content, encoding="utf-8")
            print(f"wrote {twin.relative_to(ROOT)}")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command == "sync":
        sync()
    elif command == "check":
        found = problems()
        print("\n".join(found) or "all notebooks in sync")
        sys.exit(1 if found else 0)
    else:
        sys.exit("usage: python tools/notebooks.py [sync|check]")
