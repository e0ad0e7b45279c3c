"""Build the book into _build/html, executing every notebook, warnings as errors.

    python tools/build_book.py                  # the reader's book (_build/html)
    python tools/build_book.py --no-solutions   # the teacher's hand-out (_build/teacher/html)
    python tools/build_book.py --out DIR        # build somewhere else (the tests use this)

On failure it names the cause: the notebook and cell that raised, or the warning.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import check_python  # noqa: E402,F401  (exits on an unsupported Python)


def teacher_config(tmp: Path) -> Path:
    """_config.yml with solutions hidden (sphinx-exercise's hide_solutions)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config.setdefault("sphinx", {}).setdefault("config", {})["hide_solutions"] = True
    config["title"] = config.get("title", "") + " (without solutions)"
    path = tmp / "_config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def report_failures(html: Path) -> None:
    reports = sorted((html / "reports").rglob("*.log")) if (html / "reports").exists() else []
    for report in reports:
        print(f"\n--- notebook execution failed: {report.relative_to(html)} ---")
        print(report.read_text(encoding="utf-8", errors="replace")[-4000:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-solutions", action="store_true", help="hide exercise solutions")
    parser.add_argument("--out", type=Path, help="output folder (default _build or _build/teacher)")
    parser.add_argument("--clean", action="store_true", help="remove the output folder first")
    args = parser.parse_args()

    out = args.out or (ROOT / "_build" / "teacher" if args.no_solutions else ROOT)
    if args.clean:
        shutil.rmtree(out / "_build" if out == ROOT else out, ignore_errors=True)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book), "build", str(ROOT),
               "-n", "-W", "--keep-going"]
    if out != ROOT:
        command += ["--path-output", str(out)]
    with tempfile.TemporaryDirectory() as tmp:
        if args.no_solutions:
            command += ["--config", str(teacher_config(Path(tmp)))]
        start = time.perf_counter()
        result = subprocess.run(command, cwd=ROOT)
        seconds = time.perf_counter() - start
    html = (out if out != ROOT else ROOT) / "_build" / "html"
    if result.returncode != 0:
        report_failures(html)
        print(f"\nThe book did not build (exit {result.returncode}). The first warning or the "
              "failing notebook and cell are printed above.", file=sys.stderr)
        return result.returncode
    print(f"\nBuilt in {seconds:.0f} s. Open {html / 'index.html'} in a browser, or serve it with\n"
          f"  python -m http.server --directory {html} 8000   and visit http://localhost:8000")
    return 0


if __name__ == "__main__":
    sys.exit(main())
