"""`import roofline` stays light: heavy libraries load only when first needed."""

import subprocess
import sys

HEAVY = ("sympy", "matplotlib", "ipywidgets", "IPython", "numpy", "scipy", "pandas")


def test_import_roofline_loads_no_heavy_library():
    code = (
        "import sys, roofline; roofline.get_chip('H100'); "
        "roofline.estimate(roofline.matmul(8, 16, 32), 'v5e'); "
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", f"import roofline loaded {out.stdout.strip()}"


def test_lazy_submodules_resolve():
    code = "import roofline; roofline.exercises.check; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


# The book's build code (Sphinx extensions) is not part of what a student installs.
# (myst_nb is not listed: roofline.book.glue, which chapter cells call, imports its `glue`
# when the book executes the notebook and does nothing in Colab, where it is absent.)
BOOK_ONLY = (
    "sphinx",
    "docutils",
    "myst_parser",
    "jupyter_book",
    "sphinx_exercise",
    "sphinx_thebe",
    "sphinx_book_theme",
    "pydata_sphinx_theme",
    "sphinx_design",
    "sphinx_togglebutton",
    "sphinx_mathjax_offline",
)


def _imported_modules(source: str) -> set[str]:
    import ast

    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def _is_sphinx_extension(source: str) -> bool:
    """A module-level `def setup(app)`: Sphinx's entry point for an extension."""
    import ast

    return any(
        isinstance(node, ast.FunctionDef)
        and node.name == "setup"
        and [a.arg for a in node.args.args] == ["app"]
        for node in ast.parse(source).body
    )


def test_imported_modules_sees_plain_and_nested_imports():
    found = _imported_modules(
        "import os\nfrom sphinx.util import logging\n"
        "def f():\n    import docutils.nodes\n    from . import x\n"
    )
    assert found == {"os", "sphinx.util", "docutils.nodes"}
    assert _is_sphinx_extension("def setup(app):\n    app.connect('x', print)\n")
    assert not _is_sphinx_extension(
        "class A:\n    def setup(app): pass\ndef setup(self, n): pass\n"
    )


def test_the_wheel_holds_no_module_that_imports_sphinx(tmp_path):
    """The package a reader installs (`pip install roofline`, or the Colab setup cell) holds
    only what a reader uses: the book's Sphinx extensions live in _ext/, outside it."""
    import shutil
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE.md"):
        shutil.copy(root / name, source / name)
    shutil.copytree(
        root / "roofline",
        source / "roofline",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    out = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"from setuptools import build_meta; build_meta.build_wheel({str(out)!r})",
        ],
        cwd=source,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    wheels = list(out.glob("roofline-*.whl"))
    assert len(wheels) == 1, f"expected one wheel in {out}, found {wheels}"
    offenders, modules = [], []
    with zipfile.ZipFile(wheels[0]) as wheel:
        for name in wheel.namelist():
            if not name.endswith(".py"):
                continue
            modules.append(name)
            text = wheel.read(name).decode("utf-8")
            bad = sorted(m for m in _imported_modules(text) if m.split(".")[0] in BOOK_ONLY)
            if bad:
                offenders.append(f"{name} imports {', '.join(bad)}")
            if _is_sphinx_extension(text):
                offenders.append(f"{name} is a Sphinx extension (module-level setup(app))")
        names = set(wheel.namelist())
    assert "roofline/__init__.py" in names and "roofline/web/explorer.js" in names, sorted(names)[
        :20
    ]
    assert len(modules) > 10, modules
    assert not offenders, (
        "modules of the installed package that import the book's build tools "
        "(move them to _ext/, loaded by _config.yml's sphinx.local_extensions):\n"
        + "\n".join(offenders)
    )
