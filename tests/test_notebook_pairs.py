"""The .ipynb twins that Colab opens match their .md sources and carry no outputs."""
import json

import pytest

import notebooks

SOURCES = notebooks.notebook_sources()


def test_there_are_notebooks():
    assert len(SOURCES) >= 1


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_pair_in_sync(md):
    twin = md.with_suffix(".ipynb")
    assert twin.exists(), f"{twin.name} missing: run `make notebooks`"
    assert twin.read_text(encoding="utf-8") == notebooks.expected_ipynb_text(md), (
        f"{twin.name} is out of sync with {md.name}: run `make notebooks`")


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
