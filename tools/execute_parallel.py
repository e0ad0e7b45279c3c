"""Execute the book's notebooks in parallel into Jupyter Book's execution cache.

Jupyter Book 1 (MyST-NB, ``execute_notebooks: cache``) executes the notebooks one after
another while it builds. This script runs first: it reads each notebook of ``_toc.yml`` the
way MyST-NB reads it, skips those whose code already has a cached run, executes the others
over a pool of processes (one per core) and stores each run in the same cache. The build
that follows then finds every notebook in the cache and only renders.

A notebook that measures this machine (chapter 9) says so in its front matter
(``rooflines_build: {execute_alone: true}``): it runs first, alone, so that no other kernel
competes with the cores and memory it measures.

The cache knows each notebook's code, not the package it imports: a run made with another
version of `roofline/` is stale although its notebook did not change. So the cache carries a
fingerprint of the package's files, and a different fingerprint empties it first.

After a run that leaves every notebook in the cache, a stamp (`sources_stamp`: the table of
contents, every notebook source and the package fingerprint) is kept beside the cache. While it
matches, there is nothing to execute: `tools/build_book.py` checks it (`cache_is_current`, a
few file reads) and does not start this script at all, which would spend about 1.5 s importing
MyST-NB and jupyter-cache to find every notebook cached.

A notebook that fails here is left out of the cache: the build executes it again and
reports the failing cell in its usual way, so nothing is hidden by running in parallel.

    python tools/execute_parallel.py [--cache DIR] [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT_S = 120  # as _config.yml's execute.timeout
BUILD_KEY = "rooflines_build"  # front-matter key: {execute_alone: true} for a measuring notebook


def toc_sources(root: Path = ROOT) -> list[Path]:
    """Every .md file _toc.yml names, in book order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    names: list[str] = [toc["root"]]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "file" in node:
                names.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk({k: v for k, v in toc.items() if k != "root"})
    paths = [root / (n if n.endswith(".md") else n + ".md") for n in names]
    return [p for p in paths if p.exists()]


def read_notebook(path: Path):
    """The notebook as MyST-NB reads a MyST Markdown source (None if it is plain Markdown)."""
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    text = path.read_text(encoding="utf-8")
    if not is_myst_markdown_notebook(text):
        return None
    return read_myst_markdown_notebook(
        text, config=MdParserConfig(), add_source_map=True, path=str(path)
    )


PACKAGE_FINGERPRINT = "roofline-package.sha256"  # file in the cache folder


def package_fingerprint(root: Path = ROOT) -> str:
    """sha256 over the package's source and data files (names and contents, sorted)."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((root / "roofline").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".js", ".json", ".css"):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def forget_stale_runs(cache_dir: Path) -> bool:
    """Empty the cache when its runs were made with other package files; True if it did."""
    mark = cache_dir / PACKAGE_FINGERPRINT
    now = package_fingerprint()
    stale = cache_dir.exists() and (not mark.exists() or mark.read_text().strip() != now)
    if stale:
        shutil.rmtree(cache_dir)
        # Sphinx re-reads only the pages whose source changed: drop its saved state (and the
        # executed copies it wrote) so that every page is rendered from the new runs
        for derived in (".doctrees", "jupyter_execute"):
            shutil.rmtree(cache_dir.parent / derived, ignore_errors=True)
    cache_dir.mkdir(parents=True, exist_ok=True)
    mark.write_text(now + "\n")
    return stale


SOURCES_STAMP = "sources.sha256"  # file in the cache folder: what the last complete run read


def sources_stamp(root: Path = ROOT) -> str:
    """sha256 over _toc.yml, every notebook source it names (names and bytes) and the package
    fingerprint: what decides whether a notebook must run again. Reads files only (about
    0.02 s); imports neither MyST-NB nor jupyter-cache."""
    import hashlib

    digest = hashlib.sha256(package_fingerprint(root).encode() + b"\0")
    for path in [root / "_toc.yml", *toc_sources(root)]:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_is_current(cache_dir: Path, root: Path = ROOT) -> bool:
    """Whether the last run left every notebook in the cache and neither a notebook source, the
    table of contents nor a roofline/ file changed since (the stamp it wrote still matches).
    Then there is nothing to execute, and the build skips this step without starting it."""
    stamp = cache_dir / SOURCES_STAMP
    if not (stamp.is_file() and (cache_dir / "global.db").is_file()):
        return False
    return stamp.read_text(encoding="utf-8").strip() == sources_stamp(root)


def in_cache(cache, notebook) -> bool:
    """Whether the cache holds a run of this notebook's code (MyST-NB's own match)."""
    try:
        cache.match_cache_notebook(notebook)
    except KeyError:
        return False
    return True


def execute_one(path_text: str) -> tuple[str, object, float, str | None]:
    """Run one notebook in its own folder (as the build does); return it, seconds, error."""
    from jupyter_cache.executors.utils import single_nb_execution

    path = Path(path_text)
    notebook = read_notebook(path)
    result = single_nb_execution(
        notebook,
        cwd=str(path.parent),
        allow_errors=False,
        timeout=TIMEOUT_S,
        meta_override=True,
        # one stream output per cell and stream, its chunks joined as written: the kernel
        # sends a print in as many chunks as its flushes happened to cut it, and MyST-NB's
        # merge (nb_merge_streams) ends each chunk with a newline, so `print("a:", 0)` showed
        # as "a: 0" or "a:\n 0" from one build to the next (chapters 6 and 7 did)
        coalesce_streams=True,
    )
    error = None if result.err is None else f"{type(result.err).__name__}: {result.err}"
    return path_text, notebook, result.time, error


def runs_alone(path: Path) -> bool:
    """Whether the notebook's front matter asks to run with no other kernel beside it."""
    notebook = read_notebook(path)
    return bool(notebook and notebook.metadata.get(BUILD_KEY, {}).get("execute_alone"))


def store(cache, path_text: str, notebook, seconds: float, error, tag: str, failed: list) -> None:
    """Cache a successful run (as MyST-NB does); note a failure for the build to repeat."""
    from jupyter_cache.base import CacheBundleIn

    name = Path(path_text).relative_to(ROOT)
    if error:
        failed.append(name)
        print(f"  {tag} {name} failed ({error.splitlines()[0][:120]})", flush=True)
        return
    record = cache.add_nb_to_project(path_text, read_data={"name": "myst_nb_md", "type": "plugin"})
    cache.cache_notebook_bundle(
        CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds}),
        check_validity=False,
        overwrite=True,
    )
    print(f"  {tag} {name} {seconds:.1f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=ROOT / "_build" / ".jupyter_cache")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    from jupyter_cache import get_cache

    # As _ext/web_edition.py does for the kernels the build runs: the web page's answer boxes.
    os.environ["ROOFLINE_WEB_EDITION"] = "1"
    # and chapter 9 measures this machine in a few seconds (roofline.measure's "build" mode)
    os.environ["ROOFLINE_MEASURE_MODE"] = "build"

    (args.cache / SOURCES_STAMP).unlink(missing_ok=True)  # rewritten once every run is cached
    if forget_stale_runs(args.cache):
        print("execute_parallel: roofline/ changed since the cached runs; executing afresh")
    cache = get_cache(str(args.cache))
    stamp = sources_stamp()  # before the runs: a source edited while they run is not stamped
    todo = []
    for path in toc_sources():
        notebook = read_notebook(path)
        if notebook is not None and not in_cache(cache, notebook):
            todo.append(path)
    if not todo:
        print("execute_parallel: every notebook is in the cache")
        (args.cache / SOURCES_STAMP).write_text(stamp + "\n", encoding="utf-8")
        return 0
    alone = [p for p in todo if runs_alone(p)]
    # Longest sources first, so that a long notebook does not start last.
    rest = sorted((p for p in todo if p not in alone), key=lambda p: -p.stat().st_size)
    print(f"execute_parallel: {len(todo)} notebooks on {args.jobs} processes", flush=True)
    start = time.perf_counter()
    failed: list[Path] = []
    done = 0
    for group, jobs in ((alone, 1), (rest, args.jobs)):
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(execute_one, str(p)) for p in group]
            for future in as_completed(futures):
                done += 1
                store(cache, *future.result(), f"[{done}/{len(todo)}]", failed)
    print(f"execute_parallel: {time.perf_counter() - start:.0f} s", flush=True)
    if failed:
        print(
            "  the build will run these again and name the failing cell: "
            + ", ".join(map(str, failed))
        )
    else:
        (args.cache / SOURCES_STAMP).write_text(stamp + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
