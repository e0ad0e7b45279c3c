"""What a cold chapter page costs a reader: every file the page fetches, gzip -6 as a
compressing server would send it (issue 37's target: <= 500 kB per chapter).

Chromium loads each page from a local server with an empty cache and lists what it fetched
(the Resource Timing entries, which include what scripts load later, e.g. MathJax's
components and fonts); each file is then compressed from the built site.

    python benchmarks/bench_page_weight.py [--html _build/html] [PAGE ...]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tools")]

PAGES = [
    "chapters/01_where_does_the_time_go.html",
    "chapters/04_matmul_critical_batch.html",
    "chapters/11_spreading_a_model.html",
    "chapters/12_serving_a_model.html",
]
TARGET_BYTES = 500_000
LARGEST_PARTS = int(os.environ.get("BENCH_TOP", "4"))  # the files listed under each page


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def fetched_paths(driver, url: str) -> list[str]:
    """URL paths the page fetched, once it and MathJax have settled."""
    driver.get(url)
    driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const settle = () => (window.MathJax && MathJax.startup && MathJax.startup.promise
            ? MathJax.startup.promise : Promise.resolve()).then(() => setTimeout(done, 300));
        if (document.readyState === 'complete') settle(); else addEventListener('load', settle);
        """
    )
    names = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    return [urlsplit(url).path] + [urlsplit(n).path for n in names]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("pages", nargs="*", default=PAGES)
    args = parser.parse_args(argv)
    if not (args.html / "index.html").is_file():
        if args.html != ROOT / "_build" / "html":
            raise SystemExit(f"no built book in {args.html}: build one or pass another --html")
        print("no built book in _build/html: building it first (make book)", flush=True)
        import subprocess

        subprocess.run(
            [sys.executable, str(ROOT / "tools" / "build_book.py")], check=True, capture_output=True
        )
    from test_browser import _make_driver  # the browser tests' offline Chromium settings
    from test_site import gzip_bytes  # what a gzip-serving host sends, as the tests count it

    handler = functools.partial(_Quiet, directory=str(args.html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    driver = _make_driver()
    result = {}
    try:
        for page in args.pages:
            driver.execute_cdp_cmd("Network.clearBrowserCache", {})
            paths = dict.fromkeys(fetched_paths(driver, f"{base}/{page}"))
            sizes = {}
            for p in paths:
                file = args.html / unquote(p).lstrip("/")
                if file.is_file():
                    sizes[p] = gzip_bytes(file)
            total = sum(sizes.values())
            largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:LARGEST_PARTS]
            verdict = "ok" if total <= TARGET_BYTES else "over"
            print(f"{page}: {total / 1000:.0f} kB gzip in {len(sizes)} files ({verdict})")
            for p, n in largest:
                print(f"    {n / 1000:7.1f} kB  {p}")
            result[page] = total
            time.sleep(0.1)
    finally:
        driver.quit()
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
