"""Build the book into _build/html, executing every notebook, warnings as errors.

    python tools/build_book.py                  # the reader's book (_build/html)
    python tools/build_book.py --no-solutions   # the teacher's hand-out (_build/teacher/html)
    python tools/build_book.py --out DIR        # build somewhere else (the tests use this)

On failure it names the cause: the notebook and cell that raised, or the warning.
"""

from __future__ import annotations

import argparse
import re
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
import execute_parallel  # noqa: E402


def teacher_config(tmp: Path) -> Path:
    """_config.yml with solutions hidden (sphinx-exercise's hide_solutions)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config.setdefault("sphinx", {}).setdefault("config", {})["hide_solutions"] = True
    # The book's own extensions (_ext/): Jupyter Book resolves local_extensions paths
    # against the config file's folder, and this config is written to `tmp`.
    local = config["sphinx"].get("local_extensions") or {}
    config["sphinx"]["local_extensions"] = {
        name: str((ROOT / path).resolve()) for name, path in local.items()
    }
    # sphinx-exercise's own hide_solutions leaves gated solutions (solution-start/-end,
    # which may hold code cells) half removed; _ext/hide_solutions.py removes them whole.
    config["sphinx"]["local_extensions"]["hide_solutions"] = str(ROOT / "_ext")
    config["title"] = config.get("title", "") + " (without solutions)"
    path = tmp / "_config.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def summarize_failures(log: str) -> list[str]:
    """Name each notebook whose execution failed, the cell that raised, and the error."""
    text = ANSI.sub("", log)
    summary = []
    for match in re.finditer(
        r"^(\S+\.(?:md|ipynb)): WARNING: Executing notebook failed", text, re.M
    ):
        rest = text[match.end() :]
        cell = re.search(
            r"An error occurred while executing the following cell:\n-+\n(.*?)\n-+\n", rest, re.S
        )
        error = re.search(r"^(\w+(?:Error|Exception|Interrupt): .*)$", rest, re.M)
        summary.append(
            f"notebook {match.group(1)} failed in the cell:\n    "
            + (cell.group(1).strip().replace("\n", "\n    ") if cell else "(cell not found)")
            + (f"\n  with {error.group(1)}" if error else "")
        )
    for match in re.finditer(r"^(.*(?:WARNING|ERROR).*)$", text, re.M):
        line = match.group(1)
        if "Executing notebook failed" not in line and "[IPKernelApp]" not in line and not summary:
            summary.append(f"first warning (warnings are errors here): {line.strip()}")
            break
    return summary


def execute_in_parallel(cache: Path) -> None:
    """Fill the execution cache over all cores first (tools/execute_parallel.py); the build
    then renders from the cache. A notebook that fails there is executed again by the build,
    which names the failing cell."""
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "tools" / "execute_parallel.py"), "--cache", str(cache)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    assert process.stdout is not None
    for line in process.stdout:
        if "Kernel is running over TCP without encryption" not in line:  # kernels on 127.0.0.1
            sys.stdout.write(line)
    process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-solutions", action="store_true", help="hide exercise solutions")
    parser.add_argument("--out", type=Path, help="output folder (default _build or _build/teacher)")
    parser.add_argument("--clean", action="store_true", help="remove the output folder first")
    parser.add_argument(
        "--serial", action="store_true", help="let Jupyter Book execute the notebooks one by one"
    )
    args = parser.parse_args()

    out = args.out or (ROOT / "_build" / "teacher" if args.no_solutions else ROOT)
    if args.clean:
        shutil.rmtree(out / "_build" if out == ROOT else out, ignore_errors=True)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book), "build", str(ROOT), "-n", "-W", "--keep-going"]
    if out != ROOT:
        command += ["--path-output", str(out)]
    start = time.perf_counter()
    cache = out / "_build" / ".jupyter_cache"
    if not args.serial and execute_parallel.cache_is_current(cache):
        print("execute_parallel: no notebook source and no roofline/ file changed since the last")
        print("  complete run, so every notebook is in the cache (not started)")
    elif not args.serial:
        execute_in_parallel(cache)
    with tempfile.TemporaryDirectory() as tmp:
        if args.no_solutions:
            command += ["--config", str(teacher_config(Path(tmp)))]
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        lines = []
        for line in process.stdout:
            sys.stdout.write(line)
            lines.append(line)
        returncode = process.wait()
        seconds = time.perf_counter() - start
    html = (out if out != ROOT else ROOT) / "_build" / "html"
    if returncode != 0:
        print(f"\nThe book did not build (exit {returncode}).", file=sys.stderr)
        for item in summarize_failures("".join(lines)):
            print("  " + item, file=sys.stderr)
        return returncode
    print(
        f"\nBuilt in {seconds:.0f} s. Open {html / 'index.html'} in a browser, or serve it with\n"
        f"  python -m http.server --directory {html} 8000   and visit http://localhost:8000"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
