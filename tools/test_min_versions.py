"""Test the lowest versions pyproject.toml allows: `make test-min` (called by .ci/run).

`pip install roofline` may pick any version inside the bounds `pyproject.toml` declares, while
`make test` runs with the newest ones pinned in `requirements-lock.txt`. This script makes a
throwaway virtual environment in a temporary folder with the **lowest** release series of each
runtime dependency (`numpy==1.24.*`, ...: the newest patch of the minimum minor version, which
is what has wheels for this Python), adds pytest and hypothesis at their locked versions, and
runs the fast tests of the package's core (costs, units, catalog, estimates, collectives,
widget construction) against the checkout, imported from the source tree.

Python 3.11, the version Colab and CI use, has wheels for every minimum below. Needs PyPI (or a
mirror pip is configured for); 68 s on the project's 2-core machine, most of it installing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The lowest series of each runtime dependency; must equal pyproject.toml's lower bounds
#: (checked below, so that raising a bound there without raising it here fails).
MINIMUM = {
    "numpy": "1.24",
    "sympy": "1.12",
    "matplotlib": "3.7",
    "ipywidgets": "7.7",  # what Colab ships
    "threadpoolctl": "3.1",
}

#: The tests run: fast, no book build, no browser, no optional dependency.
TESTS = [
    "tests/test_costs_estimate.py",
    "tests/test_cost_formulas.py",
    "tests/test_units.py",
    "tests/test_units_properties.py",
    "tests/test_arith.py",
    "tests/test_catalog.py",
    "tests/test_tiles.py",
    "tests/test_multichip.py",
    "tests/test_widgets.py",
]


def declared_lower_bounds() -> dict[str, str]:
    """name -> lower bound, from pyproject.toml's [project] dependencies."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    return dict(re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9.]+)', block))


def locked(name: str) -> str:
    """`name==version` as requirements-lock.txt pins it."""
    for line in (ROOT / "requirements-lock.txt").read_text(encoding="utf-8").splitlines():
        if line.lower().startswith(f"{name.lower()}=="):
            return line.split(";")[0].strip()
    raise SystemExit(f"{name} is not pinned in requirements-lock.txt")


def run(cmd: list[str], **kwargs) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def main() -> int:
    declared = declared_lower_bounds()
    if declared != MINIMUM:
        print(f"pyproject.toml's lower bounds {declared} differ from MINIMUM {MINIMUM}: update")
        print("tools/test_min_versions.py together with the bounds.")
        return 1
    if sys.version_info >= (3, 12):
        # numpy 1.24 and matplotlib 3.7 have no wheels for 3.12+, where pip resolves to newer
        # releases anyway: the lower bounds only bind on 3.10 and 3.11
        print(f"minimum versions: skipped on Python {sys.version.split()[0]} (run with 3.10/3.11)")
        return 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="roofline-min-") as tmp:
        venv = Path(tmp) / "venv"
        run([sys.executable, "-m", "venv", str(venv)])
        python = str(venv / "bin" / "python")
        pins = [f"{name}=={version}.*" for name, version in MINIMUM.items()]
        tools = [locked(name) for name in ("pytest", "hypothesis")]
        run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins, *tools])
        run([python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"])
        env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
        fast = ["-m", "not slow and not browser", "-p", "no:cacheprovider"]
        run([python, "-m", "pytest", "-q", *fast, *TESTS], cwd=ROOT, env=env)
    print(f"minimum versions: passed in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
