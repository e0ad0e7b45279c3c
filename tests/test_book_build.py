"""Every notebook runs top to bottom in a fresh kernel, and the whole book builds
from a clean output folder with warnings as errors."""

import subprocess
import sys

import notebooks
import pytest
from nbclient import NotebookClient

ROOT = notebooks.ROOT
SOURCES = notebooks.notebook_sources()
RAISES = "raises-exception"


@pytest.mark.slow
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_notebook_executes_in_fresh_kernel(md, tmp_path):
    import jupytext

    nb = jupytext.read(md)
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(md.parent)}}
    )
    client.execute()
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        tags = cell.metadata.get("tags", [])
        if RAISES in tags:
            assert errors, f"cell {index} is tagged {RAISES} but raised nothing"
        else:
            assert not errors, f"cell {index} raised: {errors[0]['ename']}: {errors[0]['evalue']}"
        for output in cell.get("outputs", []):
            if output.get("name") == "stderr":
                assert "Warning" not in output.get("text", ""), (
                    f"{md.name} cell {index} printed a warning: {output['text'][:300]}"
                )


@pytest.mark.slow
@pytest.mark.xdist_group("book")
def test_book_builds_clean_with_warnings_as_errors(built_book):
    # The build itself runs once per session in the `built_book` fixture (tests/conftest.py)
    # and is shared with tests/test_site.py and tests/test_browser.py.
    if built_book.prebuilt:
        pytest.skip("ROOFLINE_BOOK_HTML points at a prebuilt book; unset it to test the build")
    assert built_book.returncode == 0, built_book.output
    html = built_book.html
    for md in SOURCES:
        page = html / md.relative_to(ROOT).with_suffix(".html")
        assert page.exists(), f"{page} was not built"
    assert (html / "index.html").exists()


def test_build_script_names_unsupported_python():
    code = (
        "import sys; sys.version_info = (3, 8, 0, 'final', 0); "
        "sys.argv=['x']; exec(open(r'%s').read())" % (ROOT / "tools" / "check_python.py")
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode != 0
    assert "needs Python 3.10" in result.stderr
