"""Run every .ipynb twin as a student does in Colab: Colab's package versions, the package
from a built wheel, only the notebook files at hand, cell tags ignored, "Run all".

    python tools/colab_check.py            # prints one line per notebook; exit 1 on a problem

The environment is a venv with COLAB_PINS under `_build/colab-venv/`, made once (it needs the
package registry, a few minutes) and reused while the pins and the Python version are the
same. The `roofline` wheel is rebuilt and reinstalled on every run. tests/test_colab.py runs
this in `make test`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "_build" / "colab-venv"

#: What Google Colab ships (checked November 2026): the versions a student's notebook meets.
COLAB_PINS = (
    "ipywidgets==7.7.1",
    "ipython==7.34.0",
    "ipykernel==6.17.1",
    "numpy==2.0.2",
    "matplotlib==3.10.0",
    "sympy==1.13.1",
    "threadpoolctl==3.6.0",  # there as a dependency of scikit-learn; roofline.measure needs it
    # Colab preinstalls JAX, which chapter 14 runs; Colab's own version was not checked here, so
    # the version the book is locked to (requirements-lock.txt) stands in for it
    "jax==0.10.2",
    "jaxlib==0.10.2",
)
#: Installed with the pins to build the wheel without fetching anything (Colab has setuptools).
BUILD_TOOLS = ("setuptools>=70.1",)  # 70.1: bdist_wheel without the `wheel` package
#: The files a wheel is built from (copied out, so the build leaves nothing in the checkout).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE.md", "roofline")
#: How an exercise checker says "correct" (Feedback's text and HTML forms).
CORRECT = re.compile(r"\] Correct:|<strong>\u2714 Correct</strong>")
CELL_TIMEOUT_S = 180


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _run(command, what: str, **kwargs) -> str:
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {result.returncode}):\n{(result.stdout + result.stderr)[-3000:]}"
        )
    return result.stdout


def colab_venv(venv: Path = VENV) -> Path:
    """The venv with Colab's pins, made if missing or made for other pins; returns its python."""
    stamp = venv / "colab-pins.json"
    wanted = {"pins": list(COLAB_PINS + BUILD_TOOLS), "python": sys.version.split()[0]}
    python = _python(venv)
    if python.exists() and stamp.exists():
        try:
            if json.loads(stamp.read_text(encoding="utf-8")) == wanted:
                return python
        except ValueError:
            pass
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", venv], "making the Colab venv")
    _run(
        [
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            *COLAB_PINS,
            *BUILD_TOOLS,
        ],
        f"installing Colab's versions ({', '.join(COLAB_PINS)}) from the package registry",
        timeout=1800,
    )
    stamp.write_text(json.dumps(wanted), encoding="utf-8")
    return python


def install_wheel(python: Path, work: Path) -> str:
    """Build the roofline wheel from a copy of the sources and install it (no editable install,
    nothing new fetched: Colab's pins must already satisfy its dependencies). Returns its name."""
    source = work / "source"
    source.mkdir()
    for name in WHEEL_SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(
                path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        else:
            shutil.copy2(path, source / name)
    wheels = work / "wheels"
    _run(
        [
            python,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-w",
            wheels,
            source,
        ],
        "building the roofline wheel",
        timeout=600,
    )
    wheel = next(wheels.glob("roofline-*.whl"))
    _run(
        [
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--force-reinstall",
            "--no-deps",
            "--disable-pip-version-check",
            wheel,
        ],
        "installing the roofline wheel",
    )
    _run([python, "-m", "pip", "check"], "checking the Colab venv's dependencies (pip check)")
    return wheel.name


def kernel_manager(python: Path, kernels: Path):
    """A KernelManager that starts `python`'s ipykernel (a kernelspec of our own, not the user's)."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec = kernels / "colab"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Colab-like",
                "language": "python",
                # PYTHONPATH could reach the checkout; debugpy's frozen-module note is not Colab's
                "env": {"PYTHONPATH": "", "PYDEVD_DISABLE_FILE_VALIDATION": "1"},
            }
        ),
        encoding="utf-8",
    )
    return KernelManager(
        kernel_name="colab", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)])
    )


def _output_texts(output) -> list[str]:
    if output.get("output_type") == "stream":
        return [output.get("text", "")]
    data = output.get("data", {})
    return [data[key] for key in ("text/plain", "text/html") if key in data]


def run_notebook(path: Path, python: Path, kernels: Path) -> list[str]:
    """Execute one notebook top to bottom, tags removed; the problems found (empty: fine):
    an error, a warning on stderr, or an exercise check that says "Correct"."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("tags", None)  # Colab ignores tags (raises-exception included)
    km = kernel_manager(python, kernels)
    client = NotebookClient(
        nb,
        km=km,
        timeout=CELL_TIMEOUT_S,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    problems = []
    try:
        client.execute()
    except CellExecutionError as error:
        last = re.sub(r"\x1b\[[0-9;]*m", "", str(error)).strip().splitlines()[-1]
        problems.append(f"{path.name}: Run all stopped: {last[:300]}")
    except Exception as error:  # a timeout or a dead kernel
        problems.append(f"{path.name}: Run all failed: {type(error).__name__}: {str(error)[:300]}")
    finally:
        if km.has_kernel:  # a client given its kernel manager leaves the kernel running
            km.shutdown_kernel(now=True)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                problems.append(
                    f"{path.name} cell {index}: {output['ename']}: {output['evalue'][:300]}"
                )
            if output.get("name") == "stderr" and "Warning" in output.get("text", ""):
                problems.append(
                    f"{path.name} cell {index} shows the student a warning: "
                    f"{output['text'].strip()[:300]}"
                )
            said = [text for text in _output_texts(output) if CORRECT.search(text)]
            if said:  # once per output (its text and HTML forms both say it)
                problems.append(
                    f"{path.name} cell {index}: an exercise is reported correct under "
                    f"Run all, before the student answered: {said[0].strip()[:200]}"
                )
    return problems


def check(notebooks: list[Path], log=print) -> list[str]:
    """Build the environment, install the wheel, run every notebook; all problems found."""
    python = colab_venv()
    problems = []
    with tempfile.TemporaryDirectory(prefix="colab-check-") as tmp:
        work = Path(tmp)
        log(f"installed {install_wheel(python, work)} into {python.parent.parent}")
        student = work / "student"  # only the .ipynb files, as a student has them
        student.mkdir()
        copies = []
        for path in notebooks:
            copy = student / path.name
            shutil.copy2(path, copy)
            copies.append(copy)
        where = _run(
            [
                python,
                "-c",
                "import roofline, IPython, ipywidgets, numpy, matplotlib, sympy; "
                "print(roofline.__file__); print(IPython.__version__, ipywidgets.__version__, "
                "numpy.__version__, matplotlib.__version__, sympy.__version__)",
            ],
            "importing roofline in the Colab venv",
            cwd=student,
            env=_clean_env(),
        )
        package_file, versions = where.strip().splitlines()
        if Path(package_file).resolve().is_relative_to(ROOT.resolve() / "roofline"):
            problems.append(
                f"roofline was imported from the checkout ({package_file}), not the wheel"
            )
        log(f"IPython, ipywidgets, numpy, matplotlib, sympy: {versions}")
        for copy in copies:
            found = run_notebook(copy, python, work / "kernels")
            log(f"{copy.name}: {'ok' if not found else f'{len(found)} problem(s)'}")
            problems += found
    return problems


def _clean_env() -> dict:
    import os

    return {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }


def twins() -> list[Path]:
    sys.path.insert(0, str(ROOT / "tools"))
    import notebooks

    return [md.with_suffix(".ipynb") for md in notebooks.notebook_sources()]


if __name__ == "__main__":
    found = check(twins())
    print("\n".join(found) or "every notebook ran top to bottom")
    sys.exit(1 if found else 0)
