"""The printed edition: one PDF of the whole built book, made with headless Chromium.

    python tools/book_pdf.py                              # _build/html -> _build/rooflines.pdf
    python tools/book_pdf.py --html _build/teacher/_build/html --out _build/rooflines-teacher.pdf
    python tools/book_pdf.py --solutions                  # a teacher's copy with the solutions

Every page of `_toc.yml` (root first, then the parts' chapters in order: the list is read, never
typed here) is served from 127.0.0.1, loaded in Debian's Chromium (selenium + chromedriver, as
tests/test_browser.py drives it), its formulas typeset by MathJax and its images loaded, its
chapter and sections numbered (pages under chapters/: "Chapter 3", "3.1 ..."), then printed
with the book's print stylesheet (_static/roofline-web.css, `@media print`: no solutions, no
answer boxes, code and tables wrapped to the page, short code cells kept whole) through
DevTools' Page.printToPDF. Then the pages become a book (pypdf):

- front matter: a title page naming the edition (package version, commit and its date) and a
  contents page listing every chapter and section with its page number, numbered i, ii, ...;
- the body numbered 1, 2, ... throughout: page labels, and the number stamped in each footer
  (a running head with the chapter on every page but its first);
- bookmarks two levels deep: each chapter (numbered) and its sections;
- every link into the book (glossary terms, "Figure N", cross-references, the contents) jumps
  to the page where its target landed: each page gets, before printing, a 1-px same-page link
  to every id the book links to, so Chromium gives each a named destination; after merging,
  link annotations to the local server or to a chapter's own names become explicit
  destinations in the merged file. Links to the web stay links to the web.

The text stays text (selectable, searchable), and tagged: Chromium tags each printed document
(generateTaggedPDF) and `merge_structure` joins their structure trees under one Document.

Paper: A4, 15 mm margins. (Jupyter Book's own `pdfhtml` builder downloads its own browser,
which does not work offline.)
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import functools
import http.server
import importlib.metadata
import io
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable
from html import escape as html_escape
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urljoin, urlsplit

import yaml

if TYPE_CHECKING:
    from pypdf import PdfReader

ROOT = Path(__file__).resolve().parent.parent
MM_PER_INCH = 25.4
#: A4 in inches and the margin (15 mm) on every side.
PAPER_IN = (210 / MM_PER_INCH, 297 / MM_PER_INCH)
MARGIN_IN = 15 / MM_PER_INCH


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


_PREPARE_JS = """
    const [number, ids] = arguments;
    document.documentElement.classList.add('rx-print-book');
    const article = document.querySelector('article.bd-article') || document.querySelector('article');
    const h1 = article.querySelector('h1');
    if (number) {
        const label = document.createElement('p');
        label.className = 'rx-print-chapter';
        label.textContent = 'Chapter ' + number;
        h1.before(label);
    }
    const sections = [];
    article.querySelectorAll('section > h2').forEach((h2, k) => {
        const title = [...h2.childNodes]
            .filter(n => !(n.classList && n.classList.contains('headerlink')))
            .map(n => n.textContent).join('').replace(/\\s+/g, ' ').trim();
        let label = title;
        if (number) {
            const span = document.createElement('span');
            span.className = 'rx-print-secnum';
            span.textContent = number + '.' + (k + 1) + '\\u2002';
            h2.prepend(span);
            label = number + '.' + (k + 1) + ' ' + title;
        }
        if (h2.parentElement.id) sections.push([h2.parentElement.id, label]);
    });
    // One same-page link to every id some page links to: Chromium then gives each a named
    // destination (it makes them only for link targets). 1 px, removed from the merged file.
    const box = document.createElement('div');
    box.setAttribute('aria-hidden', 'true');
    box.style.cssText = 'position:absolute;left:0;top:0;width:1px;height:1px;overflow:hidden;';
    for (const id of new Set([...ids, ...sections.map(s => s[0])])) {
        if (!document.getElementById(id)) continue;
        const a = document.createElement('a');
        a.href = '#' + encodeURIComponent(id);
        a.textContent = '.';
        a.className = 'rx-print-anchor';
        box.append(a);
    }
    document.body.append(box);
    return sections;
"""


@dataclasses.dataclass
class Chapter:
    """One printed page of `_toc.yml`: its path, heading, number (chapters only), sections
    (id, numbered title) and printed PDF."""

    page: str
    title: str
    number: str | None
    sections: list[tuple[str, str]]
    pdf: PdfReader

    @property
    def label(self) -> str:
        """The chapter's title as bookmarks, the contents and running heads show it."""
        return f"{self.number}\u2002{self.title}" if self.number else self.title


def _print_options(header_footer: bool = False) -> dict:
    return {
        "printBackground": True,
        "paperWidth": PAPER_IN[0],
        "paperHeight": PAPER_IN[1],
        "marginTop": MARGIN_IN,
        "marginBottom": MARGIN_IN,
        "marginLeft": MARGIN_IN,
        "marginRight": MARGIN_IN,
        "displayHeaderFooter": header_footer,
        "generateTaggedPDF": True,
    }


def print_page(
    driver, url: str, solutions: bool, number: str | None = None, ids: Iterable[str] = ()
) -> tuple[str, list[tuple[str, str]], bytes]:
    """Load `url`, wait for its formulas, images and fonts, number its chapter and sections
    (`number`: "3" or None), give every id in `ids` a named destination; its title, its
    sections (id, numbered title) and its printed PDF (no header or footer: `stamp` adds them)."""
    driver.get(url)
    title = driver.execute_async_script(_READY_JS, solutions)
    if title.startswith("ERROR "):
        raise RuntimeError(f"{url}: {title}")
    sections = driver.execute_script(_PREPARE_JS, number, sorted(ids))
    result = driver.execute_cdp_cmd("Page.printToPDF", _print_options())
    return title, [tuple(s) for s in sections], base64.b64decode(result["data"])


def chapter_numbers(pages: list[str]) -> dict[str, str]:
    """The chapters (pages under chapters/) numbered 1, 2, ... in reading order; the
    introduction, homework sets and reference pages stay unnumbered."""
    chapters = [page for page in pages if page.startswith("chapters/")]
    return {page: str(k) for k, page in enumerate(chapters, start=1)}


def link_targets(html: Path, pages: list[str]) -> dict[str, set[str]]:
    """For each page, the ids that a link somewhere in the book's articles points to."""
    from bs4 import BeautifulSoup

    targets: dict[str, set[str]] = {page: set() for page in pages}
    for page in pages:
        soup = BeautifulSoup((html / page).read_text(encoding="utf-8"), "html.parser")
        for anchor in soup.select("article a[href]"):
            target = _book_target(urljoin(f"http://{SITE_HOST}/{page}", str(anchor["href"])))
            if target and target[0] in targets and target[1]:
                targets[target[0]].add(target[1])
    return targets


#: The host of the front matter's links (they are rewritten like the chapters' own).
SITE_HOST = "rooflines.invalid"


def _book_target(url: str) -> tuple[str, str] | None:
    """("chapters/03_x.html", "fragment") for a link into the printed book (served from
    127.0.0.1, or SITE_HOST), None for any other link."""
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", SITE_HOST):
        return None
    return unquote(parts.path.lstrip("/")) or "index.html", unquote(parts.fragment)


def edition(root: Path = ROOT) -> str:
    """ "Edition 0.1.0, commit 1a2b3c4 of 2026-12-02": the package version and the commit
    the book was printed from (its date, not the clock's), "+ local changes" when the
    checkout differs from it."""
    try:
        version = importlib.metadata.version("roofline")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"

    def git(*args: str) -> str:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("log", "-1", "--format=%h of %cs")
    if not commit:
        return f"Edition {version}, printed outside a git checkout"
    dirty = " + local changes" if git("status", "--porcelain", "--untracked-files=no") else ""
    return f"Edition {version}, commit {commit}{dirty}"


def _contents_rows(chapters: list[Chapter], parts: dict[str, str]) -> list[str]:
    rows, page_number = [], 1
    for chapter in chapters:
        if chapter.page in parts:
            rows.append(f'<p class="part">{html_escape(parts[chapter.page])}</p>')
        dests = _named_destinations(chapter.pdf)
        rows.append(_contents_row("chapter", chapter.label, chapter.page, "", page_number))
        for section_id, title in chapter.sections:
            local = dests.get(section_id, (0, None))[0]
            rows.append(
                _contents_row("section", title, chapter.page, section_id, page_number + local)
            )
        page_number += len(chapter.pdf.pages)
    return rows


def _contents_row(kind: str, title: str, page: str, fragment: str, number: int) -> str:
    href = f"http://{SITE_HOST}/{page}" + (f"#{fragment}" if fragment else "")
    return (
        f'<p class="{kind}"><a href="{html_escape(href)}"><span class="t">{html_escape(title)}'
        f'</span><span class="n">{number}</span></a></p>'
    )


_FRONT_CSS = """
body { font-family: 'Lato', 'DejaVu Sans', sans-serif; color: #222; margin: 0; }
.title-page { height: 250mm; display: flex; flex-direction: column; justify-content: center; }
.title-page h1 { font-size: 40pt; margin: 0 0 6mm; }
.title-page .sub { font-size: 14pt; color: #444; margin: 0 0 30mm; }
.title-page .edition { font-size: 10pt; color: #444; }
.contents { break-before: page; font-size: 10pt; }
.contents h2 { font-size: 20pt; margin: 0 0 6mm; }
.contents p { margin: 0; break-inside: avoid; }
.contents a { color: inherit; text-decoration: none; display: flex; align-items: baseline; }
.contents .t { flex: 0 1 auto; }
.contents a::after { content: ""; order: 1; flex: 1 1 auto; margin: 0 2mm;
    border-bottom: 1px dotted #999; }
.contents .n { order: 2; min-width: 8mm; text-align: right; }
.contents .part { font-weight: bold; font-size: 11pt; margin: 4mm 0 1mm; break-after: avoid; }
.contents .chapter { font-weight: bold; margin-top: 1.5mm; }
.contents .section { padding-left: 8mm; }
"""


def front_matter_html(chapters: list[Chapter], parts: dict[str, str], edition_text: str) -> str:
    """The title page and the contents (chapters and their sections, with page numbers)."""
    subtitle = chapters[0].title if chapters and chapters[0].title != "Rooflines" else ""
    rows = "\n".join(_contents_rows(chapters, parts))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Rooflines</title>'
        f"<style>{_FRONT_CSS}</style></head><body>"
        '<section class="title-page"><h1>Rooflines</h1>'
        f'<p class="sub">{html_escape(subtitle) or "An executable textbook"}</p>'
        f'<p class="edition">{html_escape(edition_text)}</p>'
        '<p class="edition">The web edition has the live explorers and answer boxes, and is '
        "the one checked for accessibility (WCAG 2.1 AA).</p></section>"
        f'<section class="contents"><h2>Contents</h2>{rows}</section></body></html>'
    )


def toc_parts(toc_file: Path = ROOT / "_toc.yml") -> dict[str, str]:
    """{first page of each part: the part's caption}, pages as in `toc_pages`."""
    toc = yaml.safe_load(toc_file.read_text(encoding="utf-8"))
    return {
        str(Path(part["chapters"][0]["file"]).with_suffix(".html")): part.get("caption", "")
        for part in toc.get("parts") or []
        if part.get("chapters")
    }


def print_front_matter(driver, html_text: str) -> bytes:
    """The front matter, printed from `html_text` by the same browser."""
    driver.get("about:blank")
    driver.execute_script(
        "document.open(); document.write(arguments[0]); document.close();", html_text
    )
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; document.fonts.ready.then(() => done());"
    )
    result = driver.execute_cdp_cmd("Page.printToPDF", _print_options())
    return base64.b64decode(result["data"])


def _named_destinations(reader: PdfReader) -> dict[str, tuple[int, float | None]]:
    """{id: (page index in `reader`, top in points)} for every named destination."""
    found = {}
    for name, dest in reader.named_destinations.items():
        try:
            index = reader.get_destination_page_number(dest)
        except Exception:  # noqa: BLE001 - a destination to no page: skip it
            continue
        top = dest.top if dest.top is not None else None
        found[str(name).lstrip("/")] = (index, float(top) if top is not None else None)
    return found


#: Helvetica's advance widths (1/1000 em) of the characters a page number uses.
_HELVETICA_WIDTHS = {**dict.fromkeys("0123456789", 556), "i": 222, "v": 500, "x": 500, "l": 222}
FOOT_PT = 8.0


def roman(number: int) -> str:
    """Lower-case roman numerals, as front matter is numbered: 4 -> "iv"."""
    if number <= 0:
        raise ValueError(f"roman numerals start at 1, not {number}")
    out = ""
    for value, letters in ((50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv")):
        while number >= value:
            out, number = out + letters, number - value
    return out + "i" * number


def _pdf_text(text: str) -> bytes:
    raw = text.encode("cp1252", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def stamp(writer, page_index: int, number: str, running_head: str = "") -> None:
    """Print `number` centred in the bottom margin and `running_head` left in the top
    margin of page `page_index`, in 8 pt Helvetica, marked as pagination artifacts."""
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject

    page = writer.pages[page_index]
    width, height = float(page.mediabox.width), float(page.mediabox.height)
    margin = MARGIN_IN * 72
    text_width = sum(_HELVETICA_WIDTHS.get(c, 556) for c in number) * FOOT_PT / 1000
    ops = [b"Q /Artifact <</Type /Pagination>> BDC q 0.3 g BT /RxFoot %.1f Tf" % FOOT_PT]
    ops.append(
        b"1 0 0 1 %.2f %.2f Tm (%s) Tj" % ((width - text_width) / 2, margin / 2, _pdf_text(number))
    )
    if running_head:
        ops.append(
            b"1 0 0 1 %.2f %.2f Tm (%s) Tj"
            % (margin, height - margin / 2 - FOOT_PT / 2, _pdf_text(running_head))
        )
    ops.append(b"ET Q EMC")
    streams = []
    for data in (b"q", b"\n".join(ops)):
        stream = DecodedStreamObject()
        stream.set_data(data)
        streams.append(writer._add_object(stream))
    contents = page.get("/Contents")
    if contents is None:
        existing = []
    elif isinstance(contents.get_object(), ArrayObject):
        existing = list(contents.get_object())
    else:
        existing = [contents]
    page[NameObject("/Contents")] = ArrayObject([streams[0], *existing, streams[1]])
    if "/Resources" not in page:
        page[NameObject("/Resources")] = DictionaryObject()
    resources = page["/Resources"].get_object()
    fonts = resources.get("/Font")
    if fonts is None:
        fonts = DictionaryObject()
        resources[NameObject("/Font")] = fonts
    fonts.get_object()[NameObject("/RxFoot")] = _helvetica(writer)


def _helvetica(writer):
    """One Helvetica font object per writer (a standard font: nothing embedded)."""
    from pypdf.generic import DictionaryObject, NameObject

    ref = getattr(writer, "_rx_helvetica", None)
    if ref is None:
        font = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
                NameObject("/Encoding"): NameObject("/WinAnsiEncoding"),
            }
        )
        ref = writer._add_object(font)
        writer._rx_helvetica = ref
    return ref


def _xyz(writer, index: int, top: float | None):
    """An explicit destination: page `index` of `writer`, scrolled to `top` (points)."""
    from pypdf.generic import ArrayObject, FloatObject, NameObject, NullObject

    return ArrayObject(
        [
            writer.pages[index].indirect_reference,
            NameObject("/XYZ"),
            NullObject(),
            FloatObject(top) if top is not None else NullObject(),
            NullObject(),
        ]
    )


def rewrite_links(
    writer,
    owners: list[str | None],
    dests: dict[tuple[str, str], tuple[int, float | None]],
    starts: dict[str, int],
) -> list[str]:
    """Turn every link into the book (a URL of the page it was printed from, or a named
    destination of its own chapter) into a jump to the page where its target landed; drop
    the 1-px anchors `print_page` added. `owners[i]`: the book page that page i of
    `writer` was printed from. Returns the links into the book with no target found."""
    from pypdf.generic import ArrayObject, NameObject

    unresolved = []
    for index, page in enumerate(writer.pages):
        annots = page.get("/Annots")
        if annots is None:
            continue
        kept = ArrayObject()
        for ref in annots.get_object():
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link":
                kept.append(ref)
                continue
            x0, y0, x1, y1 = (float(v) for v in annot["/Rect"])
            if abs(x1 - x0) * abs(y1 - y0) < 2:  # a 1-px anchor from _PREPARE_JS
                continue
            target = _link_target(annot, owners[index])
            if target is not None:
                book_page, fragment = target
                if book_page in starts:
                    where = dests.get((book_page, fragment)) if fragment else None
                    if where is None:
                        if fragment:
                            unresolved.append(f"{book_page}#{fragment}")
                        where = (starts[book_page], None)
                    annot[NameObject("/Dest")] = _xyz(writer, *where)
                    if "/A" in annot:
                        del annot["/A"]
            kept.append(ref)
        page[NameObject("/Annots")] = kept
    return unresolved


def _link_target(annot, owner: str | None) -> tuple[str, str] | None:
    action = annot.get("/A")
    if action is not None:
        action = action.get_object()
        if action.get("/S") == "/URI":
            return _book_target(str(action.get("/URI")))
        if action.get("/S") == "/GoTo" and owner:
            dest = action.get("/D")
            return (owner, str(dest).lstrip("/")) if isinstance(dest, str) else None
        return None
    dest = annot.get("/Dest")
    if isinstance(dest, str) and owner:  # a named destination of the same chapter
        return owner, str(dest).lstrip("/")
    return None


def _number_tree(node) -> list[tuple[int, object]]:
    """The (key, value) pairs of a PDF number tree (a ParentTree), leaves in order."""
    node = node.get_object()
    pairs = []
    nums = node.get("/Nums")
    if nums is not None:
        nums = nums.get_object()
        pairs += [(int(nums[k]), nums[k + 1]) for k in range(0, len(nums), 2)]
    for kid in node.get("/Kids") or []:
        pairs += _number_tree(kid)
    return pairs


def merge_structure(writer, sources: list[tuple[PdfReader, int]]) -> int:
    """Keep the tags: join the structure trees of `sources` (each printed document and the
    index in `writer` of its first page, its pages already added) under one Document, each
    document's own Document becoming a Part. Struct elements, the parent tree and the
    pages' and annotations' StructParents keys are carried over, the keys shifted so that
    they stay unique. Returns the number of parent-tree entries (0: nothing was tagged)."""
    from pypdf.generic import (
        ArrayObject,
        BooleanObject,
        DictionaryObject,
        IndirectObject,
        NameObject,
        NumberObject,
        TextStringObject,
    )

    document = DictionaryObject(
        {NameObject("/Type"): NameObject("/StructElem"), NameObject("/S"): NameObject("/Document")}
    )
    document_ref = writer._add_object(document)
    tree = DictionaryObject({NameObject("/Type"): NameObject("/StructTreeRoot")})
    tree_ref = writer._add_object(tree)
    document[NameObject("/P")] = tree_ref
    kids, nums, role_map, offset = ArrayObject(), ArrayObject(), DictionaryObject(), 0
    for reader, first in sources:
        source_root = reader.trailer["/Root"].get("/StructTreeRoot")
        if source_root is None:
            continue
        # the source's tree root becomes our Document: its elements' /P point there
        writer._id_translated.setdefault(id(reader), {})[source_root.indirect_reference.idnum] = (
            document_ref.idnum
        )
        source_root = source_root.get_object()
        for page_index in range(first, first + len(reader.pages)):
            page = writer.pages[page_index]
            source_page = reader.pages[page_index - first]
            if "/StructParents" in source_page:
                key = int(source_page["/StructParents"]) + offset
                page[NameObject("/StructParents")] = NumberObject(key)
            for ref in page.get("/Annots") or []:
                annot = ref.get_object()
                if "/StructParent" in annot:
                    annot[NameObject("/StructParent")] = NumberObject(
                        int(annot["/StructParent"]) + offset
                    )
        source_kids = source_root.raw_get("/K") if "/K" in source_root else ArrayObject()
        if not isinstance(source_kids.get_object(), ArrayObject):
            source_kids = ArrayObject([source_kids])
        for kid in source_kids.get_object():
            clone = kid.clone(writer)
            if not isinstance(clone, IndirectObject):  # a direct element: give it a number
                clone = writer._add_object(clone)
            element = clone.get_object()
            if element.get("/S") == "/Document":
                element[NameObject("/S")] = NameObject("/Part")
            kids.append(clone)
        pairs = _number_tree(source_root["/ParentTree"]) if "/ParentTree" in source_root else []
        for key, value in pairs:
            nums += [NumberObject(key + offset), value.clone(writer)]
        for name, role in (source_root.get("/RoleMap") or DictionaryObject()).items():
            role_map[NameObject(name)] = role
        offset += max((key for key, _ in pairs), default=-1) + 1
    document[NameObject("/K")] = kids
    tree[NameObject("/K")] = document_ref
    tree[NameObject("/ParentTree")] = writer._add_object(
        DictionaryObject({NameObject("/Nums"): nums})
    )
    tree[NameObject("/ParentTreeNextKey")] = NumberObject(offset)
    if role_map:
        tree[NameObject("/RoleMap")] = role_map
    if offset:
        writer._root_object[NameObject("/StructTreeRoot")] = tree_ref
        writer._root_object[NameObject("/MarkInfo")] = DictionaryObject(
            {NameObject("/Marked"): BooleanObject(True)}
        )
        writer._root_object[NameObject("/Lang")] = TextStringObject("en")
    return offset


def build_pdf(
    html: Path, out: Path, solutions: bool = False, pages: list[str] | None = None
) -> list[str]:
    """Print every page of the book (or `pages`) and make one book of them in `out`: a title
    page naming the edition, a contents page with page numbers (front matter numbered i, ii,
    ...), then the pages numbered 1, 2, ... throughout, chapters numbered, bookmarks for each
    chapter and its sections, every link into the book a jump inside the PDF. Returns the
    chapter bookmarks' titles, in order."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import Fit

    pages = pages or toc_pages()
    missing = [p for p in pages if not (html / p).is_file()]
    if missing:
        sys.exit(f"book_pdf: {html} lacks {', '.join(missing)}; build the book first (make book)")
    numbers, targets = chapter_numbers(pages), link_targets(html, pages)
    server, base = serve(html)
    driver = chromium_driver()
    chapters: list[Chapter] = []
    try:
        for page in pages:
            title, sections, pdf = print_page(
                driver, f"{base}/{page}", solutions, numbers.get(page), targets[page]
            )
            chapters.append(
                Chapter(page, title, numbers.get(page), sections, PdfReader(io.BytesIO(pdf)))
            )
            print(f"  {page}: {title} ({len(chapters[-1].pdf.pages)} pages)", flush=True)
        front = PdfReader(
            io.BytesIO(
                print_front_matter(driver, front_matter_html(chapters, toc_parts(), edition()))
            )
        )
    finally:
        driver.quit()
        server.shutdown()

    writer = PdfWriter()
    owners: list[str | None] = []
    for source in front.pages:
        writer.add_page(source)
        owners.append(None)
    starts, dests = {}, {}
    for chapter in chapters:
        starts[chapter.page] = len(writer.pages)
        for source in chapter.pdf.pages:
            writer.add_page(source)
            owners.append(chapter.page)
        for name, (index, top) in _named_destinations(chapter.pdf).items():
            dests[(chapter.page, name)] = (starts[chapter.page] + index, top)
    # front matter's own links: the contents rows were written as SITE_HOST URLs
    merge_structure(writer, [(front, 0)] + [(c.pdf, starts[c.page]) for c in chapters])
    unresolved = rewrite_links(writer, owners, dests, starts)
    if unresolved:
        print(f"book_pdf: {len(unresolved)} links to ids not found: {unresolved[:5]}", flush=True)

    n_front, total = len(front.pages), len(writer.pages)
    writer.set_page_label(0, n_front - 1, style="/r", start=1)
    writer.set_page_label(n_front, total - 1, style="/D", start=1)
    for index in range(1, n_front):
        stamp(writer, index, roman(index + 1))
    for chapter in chapters:
        first = starts[chapter.page]
        for index in range(first, first + len(chapter.pdf.pages)):
            head = chapter.label.replace("\u2002", "  ") if index > first else ""
            stamp(writer, index, str(index - n_front + 1), head)

    contents_page = 1 if n_front > 1 else 0
    writer.add_outline_item(title="Contents", page_number=contents_page)
    for chapter in chapters:
        parent = writer.add_outline_item(
            title=chapter.label, page_number=starts[chapter.page], is_open=False
        )
        for section_id, title in chapter.sections:
            index, top = dests.get((chapter.page, section_id), (starts[chapter.page], None))
            writer.add_outline_item(
                title=title, page_number=index, parent=parent, fit=Fit.xyz(top=top)
            )
    writer.add_metadata(
        {"/Title": "Rooflines", "/Author": "The Rooflines authors", "/Subject": edition()}
    )
    writer.page_mode = "/UseOutlines"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as handle:
        writer.write(handle)
    return [chapter.label for chapter in chapters]


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
