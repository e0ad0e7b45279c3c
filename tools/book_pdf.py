"""The printed edition: one PDF of the whole built book, made with headless Chromium.

    python tools/book_pdf.py                              # _build/html -> _build/rooflines.pdf
    python tools/book_pdf.py --html _build/teacher/_build/html --out _build/rooflines-teacher.pdf
    python tools/book_pdf.py --solutions                  # a teacher's copy with the solutions

Every page of `_toc.yml` (root first, then the parts' chapters in order: the list is read, never
typed here) is served from 127.0.0.1, loaded in Debian's Chromium (selenium + chromedriver, as
tests/test_browser.py drives it), its formulas typeset by MathJax and its images loaded, then
printed with the book's print stylesheet (_static/roofline-web.css, `@media print`: no
solutions, no answer boxes, code and tables wrapped to the page) through DevTools'
Page.printToPDF. pypdf merges the pages in that order with one bookmark per chapter, titled
with the chapter's heading. The text stays text (selectable, searchable).

Paper: A4, 15 mm margins, page numbers in the footer. (Jupyter Book's own `pdfhtml` builder
downloads its own browser, which does not work offline.)
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import io
import shutil
import sys
import threading
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
MM_PER_INCH = 25.4
#: A4 in inches and the margin (15 mm) on every side.
PAPER_IN = (210 / MM_PER_INCH, 297 / MM_PER_INCH)
MARGIN_IN = 15 / MM_PER_INCH
FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#444;">'
    '<span class="title"></span> &middot; <span class="pageNumber"></span></div>'
)


def toc_pages(toc_file: Path = ROOT / "_toc.yml") -> list[str]:
    """The book's pages in reading order, as paths of the built HTML ("intro.html", ...)."""
    toc = yaml.safe_load(toc_file.read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    walk(toc.get("chapters"))
    for part in toc.get("parts") or []:
        walk(part.get("chapters"))
    return [str(Path(name).with_suffix(".html")) for name in files]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(html: Path):
    """An HTTP server for `html` on a free port of 127.0.0.1; returns (server, base URL)."""
    handler = functools.partial(_Quiet, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def chromium_driver():
    """Headless Chromium through the system's chromedriver (selenium downloads nothing)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = next(
        (
            shutil.which(n)
            for n in ("chromium", "chromium-browser", "google-chrome")
            if shutil.which(n)
        ),
        None,
    )
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    if not chromium or not Path(driver_path).exists():
        sys.exit(
            "book_pdf: Chromium and ChromeDriver are needed "
            "(Debian: apt-get install chromium chromium-driver)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,900",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--no-first-run",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    return driver


_READY_JS = """
    const done = arguments[arguments.length - 1];
    const solutions = arguments[0];
    document.documentElement.dataset.theme = 'light';
    document.documentElement.dataset.mode = 'light';
    if (solutions) {
        document.documentElement.classList.add('rx-print-solutions');
        document.querySelectorAll('.solution.toggle-hidden').forEach(
            s => s.classList.remove('toggle-hidden'));
    }
    const imgs = [...document.images];
    imgs.forEach(i => { i.loading = 'eager'; });
    const images = Promise.all(imgs.map(i => i.complete ? null : new Promise(r => {
        i.addEventListener('load', r); i.addEventListener('error', r); })));
    const math = (window.MathJax && MathJax.startup && MathJax.startup.promise) || null;
    Promise.all([images, math]).then(() => document.fonts.ready).then(() => {
        const h1 = document.querySelector('article h1');
        done(h1 ? h1.textContent.replace(/\\u00b6|#$/g, '').trim() : document.title);
    }, e => done('ERROR ' + e));
"""


def print_page(driver, url: str, solutions: bool) -> tuple[str, bytes]:
    """Load `url`, wait for its formulas, images and fonts; its title and its printed PDF."""
    driver.get(url)
    title = driver.execute_async_script(_READY_JS, solutions)
    if title.startswith("ERROR "):
        raise RuntimeError(f"{url}: {title}")
    result = driver.execute_cdp_cmd(
        "Page.printToPDF",
        {
            "printBackground": True,
            "paperWidth": PAPER_IN[0],
            "paperHeight": PAPER_IN[1],
            "marginTop": MARGIN_IN,
            "marginBottom": MARGIN_IN,
            "marginLeft": MARGIN_IN,
            "marginRight": MARGIN_IN,
            "displayHeaderFooter": True,
            "headerTemplate": "<span></span>",
            "footerTemplate": FOOTER,
        },
    )
    return title, base64.b64decode(result["data"])


def build_pdf(
    html: Path, out: Path, solutions: bool = False, pages: list[str] | None = None
) -> list[str]:
    """Print every page of the book (or `pages`) and merge them into `out`; returns the
    chapter titles, one bookmark each, in order."""
    from pypdf import PdfReader, PdfWriter

    pages = pages or toc_pages()
    missing = [p for p in pages if not (html / p).is_file()]
    if missing:
        sys.exit(f"book_pdf: {html} lacks {', '.join(missing)}; build the book first (make book)")
    server, base = serve(html)
    driver = chromium_driver()
    writer, titles = PdfWriter(), []
    try:
        for page in pages:
            title, pdf = print_page(driver, f"{base}/{page}", solutions)
            writer.append(PdfReader(io.BytesIO(pdf)), outline_item=title)
            titles.append(title)
            print(f"  {page}: {title}", flush=True)
    finally:
        driver.quit()
        server.shutdown()
    writer.add_metadata({"/Title": "Rooflines", "/Author": "The Rooflines authors"})
    writer.page_mode = "/UseOutlines"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as handle:
        writer.write(handle)
    return titles


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "html", help="built book")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "rooflines.pdf")
    parser.add_argument(
        "--solutions", action="store_true", help="print the solutions too (a teacher's copy)"
    )
    args = parser.parse_args()
    titles = build_pdf(args.html.resolve(), args.out.resolve(), solutions=args.solutions)
    print(f"{args.out}: {len(titles)} chapters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
