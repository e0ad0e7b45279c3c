"""Static checks of the built web edition (the HTML files themselves, no browser).

What readers of the static pages rely on: every internal link and image resolves,
every image has alt text, figures are in the page (no JavaScript needed to see them),
nothing is fetched from another host (MathJax is bundled), no Thebe leftovers, a Colab
button on every notebook page that opens that notebook's paired .ipynb, and pages
light enough to load on a slow connection.

The book is built once per session by the `built_book` fixture (tests/conftest.py).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import notebooks
import pytest
import yaml

ROOT = notebooks.ROOT
SOURCES = notebooks.notebook_sources()
MAX_COLD_PAGE_BYTES = 1_200_000  # gzip: a chapter page and everything it loads, nothing cached
MAX_WARM_PAGE_BYTES = 400_000  # gzip: the same, the files every chapter page shares cached

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("book")]


# ---------------------------------------------------------------- parsing
class Page(HTMLParser):
    """The parts of one HTML page these tests look at."""

    def __init__(self, path: Path):
        super().__init__(convert_charrefs=True)
        self.path = path
        self.links: list[tuple[str, str, str]] = []  # (tag, attribute, url)
        self.images: list[dict] = []
        self.ids: set[str] = set()
        self.scripts: list[str] = []  # inline classic scripts
        self.script_srcs: list[str] = []
        self.classes: Counter = Counter()
        self._in_script: dict | None = None
        self._script_text: list[str] = []
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        for name in (attrs.get("class") or "").split():
            self.classes[name] += 1
        for attribute in ("href", "src"):
            if attrs.get(attribute) is not None:
                self.links.append((tag, attribute, attrs[attribute]))
        if tag == "img":
            self.images.append(attrs)
        if tag == "script":
            if attrs.get("src"):
                self.script_srcs.append(attrs["src"])
            else:
                self._in_script = attrs
                self._script_text = []

    def handle_data(self, data):
        if self._in_script is not None:
            self._script_text.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._in_script is not None:
            kind = (self._in_script.get("type") or "text/javascript").lower()
            if kind in ("text/javascript", "application/javascript", "module"):
                self.scripts.append("".join(self._script_text))
            self._in_script = None


def html_pages(html: Path) -> list[Path]:
    return sorted(
        p for p in html.rglob("*.html") if not p.relative_to(html).parts[0].startswith("_")
    )


def notebook_page(html: Path, md: Path) -> Path:
    return html / md.relative_to(ROOT).with_suffix(".html")


@pytest.fixture(scope="module")
def pages(book_html) -> dict[Path, Page]:
    return {path: Page(path) for path in html_pages(book_html)}


def is_external(url: str) -> bool:
    scheme = urlsplit(url).scheme
    return url.startswith("//") or scheme in ("http", "https")


# ---------------------------------------------------------------- links and images
def test_every_internal_link_and_image_resolves(book_html, pages):
    broken = []
    for path, page in pages.items():
        for tag, attribute, url in page.links:
            parts = urlsplit(url)
            if parts.scheme or url.startswith("//") or not url:
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if not target.exists():
                broken.append(
                    f"{path.relative_to(book_html)}: <{tag} {attribute}={url!r}> -> missing file"
                )
                continue
            if parts.fragment and target.suffix == ".html" and tag == "a":
                ids = pages[target].ids if target in pages else Page(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(
                        f"{path.relative_to(book_html)}: <a href={url!r}> -> no id "
                        f"{parts.fragment!r} in {target.name}"
                    )
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:40])


def test_every_image_has_alt_text(book_html, pages):
    missing = [
        f"{path.relative_to(book_html)}: <img src={str(img.get('src'))[:80]!r}>"
        for path, page in pages.items()
        for img in page.images
        if not (img.get("alt") or "").strip()
    ]
    assert not missing, (
        "images without alt text (give each figure alt text in the cell's "
        "mystnb.image.alt metadata):\n" + "\n".join(missing)
    )


def _figure_outputs(executed: Path) -> int:
    """Image outputs of the executed notebook that the page shows (not removed by tags)."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    count = 0
    for cell in nb["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] != "code" or tags & {"remove-output", "remove-cell"}:
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if (
                any(mime.startswith("image/") for mime in data)
                and "application/vnd.jupyter.widget-view+json" not in data
            ):
                count += 1
    return count


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_every_figure_is_a_static_image_in_the_page(book_html, pages, md):
    """Each figure a notebook cell draws is an <img> in the HTML itself (no JavaScript needed)."""
    executed = book_html.parent / "jupyter_execute" / md.relative_to(ROOT).with_suffix(".ipynb")
    if not executed.exists():
        pytest.skip(f"no executed notebook at {executed}")
    page = pages[notebook_page(book_html, md)]
    shown = sum(
        1
        for img in page.images
        if str(img.get("src", "")).startswith(("data:image/", "../_images/", "_images/"))
    )
    assert shown >= _figure_outputs(executed), (
        f"{md.name}: the notebook draws {_figure_outputs(executed)} figures, the page holds only "
        f"{shown} <img> from _images/ or data: URIs"
    )


# ---------------------------------------------------------------- no network
def test_no_page_loads_anything_from_another_host(book_html, pages):
    """Scripts, stylesheets, images, fonts, frames: all bundled with the site.
    (Plain <a href> links to other sites are fine: they load nothing.)"""
    offenders = []
    for path, page in pages.items():
        for tag, attribute, url in page.links:
            if tag == "a" or not is_external(url):
                continue
            if tag == "link":
                continue  # checked below with its rel
            offenders.append(f"{path.relative_to(book_html)}: <{tag} {attribute}={url}>")
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"<link\b[^>]*>", text):
            tag = match.group(0)
            href = re.search(r'href="([^"]*)"', tag)
            rel = re.search(r'rel="([^"]*)"', tag)
            if (
                href
                and is_external(href.group(1))
                and rel
                and rel.group(1) not in ("canonical", "alternate", "license")
            ):
                offenders.append(f"{path.relative_to(book_html)}: {tag}")
        for cdn in (
            "cdn.jsdelivr.net",
            "unpkg.com",
            "cdnjs.cloudflare.com",
            "fonts.googleapis.com",
            "require.js",
            "@jupyter-widgets/html-manager",
        ):
            if cdn in text:
                offenders.append(f"{path.relative_to(book_html)}: mentions {cdn}")
    for css in sorted((book_html / "_static").rglob("*.css")):
        for url in re.findall(
            r'url\(\s*["\']?(https?:)?//([^)"\']+)', css.read_text(errors="replace")
        ):
            offenders.append(f"_static/{css.relative_to(book_html / '_static')}: url(//{url[1]})")
    assert not offenders, "resources from other hosts:\n" + "\n".join(offenders[:40])


def test_mathjax_is_bundled_with_the_site(book_html, pages):
    with_math = [p for p, page in pages.items() if page.classes["math"]]
    assert with_math, "no page has math; the notation table in intro.md should"
    for path in with_math:
        srcs = [s for s in pages[path].script_srcs if "mathjax" in s.lower()]
        assert srcs, f"{path.name} has math but loads no MathJax"
        for src in srcs:
            assert not is_external(src), f"{path.name} loads MathJax from {src}"
            assert (path.parent / urlsplit(src).path).resolve().is_file(), (
                f"{src} is not in the site"
            )
    assert (book_html / "_static" / "mathjax" / "output" / "chtml" / "fonts").is_dir(), (
        "MathJax's CHTML fonts are not bundled"
    )


# ---------------------------------------------------------------- scripts
_DECLARATION = re.compile(r"(?:^|[;{}\n])\s*(?:const|let|class)\s+([A-Za-z_$][\w$]*)")


def test_no_script_declares_the_same_name_twice(book_html, pages):
    """A top-level `const`/`let` declared by two inline scripts of one page is a SyntaxError
    (Jupyter Book 1's sphinx-thebe did this with THEBE_JS_URL)."""
    problems = []
    for path, page in pages.items():
        names = Counter()
        for script in page.scripts:
            # only top-level declarations: skip scripts that wrap their code in a function
            if re.match(r"\s*(\(|!|;?\s*\(?\s*function|\{)", script):
                continue
            names.update(set(_DECLARATION.findall(script)))
        twice = [name for name, n in names.items() if n > 1]
        if twice:
            problems.append(f"{path.relative_to(book_html)}: {', '.join(twice)}")
        if "THEBE_JS_URL" in path.read_text(encoding="utf-8"):
            problems.append(f"{path.relative_to(book_html)}: still carries sphinx-thebe's script")
    assert not problems, "inline scripts declaring a name twice:\n" + "\n".join(problems)


def test_no_widget_view_json_rendered(book_html, pages):
    for path in pages:
        text = path.read_text(encoding="utf-8")
        assert "application/vnd.jupyter.widget-view+json" not in text, (
            f"{path.name} renders widget-view JSON (a widget placeholder with no kernel); "
            "nb_mime_priority_overrides should drop it"
        )
        # the saved widget state is dead weight without the ipywidgets manager
        assert "application/vnd.jupyter.widget-state+json" not in text, (
            f"{path.name} embeds saved ipywidgets state; _ext/web_edition.py should drop it"
        )


# ---------------------------------------------------------------- interactive parts
def test_book_has_explorers_and_answer_boxes(pages):
    classes = sum((page.classes for page in pages.values()), Counter())
    assert classes["roofline-explorer"] >= 1, (
        "no static explorer (div.roofline-explorer) in the book"
    )
    assert classes["roofline-answer-box"] >= 1, (
        "no answer box (div.roofline-answer-box) in the book"
    )


def test_explorers_and_answer_boxes_are_complete(book_html, pages):
    from roofline.exercises import get_exercise

    problems = []
    for path in pages:
        text = path.read_text(encoding="utf-8")
        for block in _blocks(text, "roofline-explorer"):
            where = f"{path.relative_to(book_html)} explorer"
            if 'type="range"' not in block:
                problems.append(f'{where}: no <input type="range">')
            if not re.search(r'<img\b[^>]*\balt="[^"]+"', block):
                problems.append(f"{where}: no <img alt=...> frame")
            if "<script" not in block:
                problems.append(f"{where}: no inline script")
            if "colab" not in block.lower():
                problems.append(f"{where}: does not say that Colab gives the full version")
        for block in _blocks(text, "roofline-answer-box"):
            ident = re.search(r'data-exercise="([^"]+)"', block)
            where = f"{path.relative_to(book_html)} answer box"
            if not ident:
                problems.append(f"{where}: no data-exercise")
                continue
            try:
                get_exercise(ident.group(1))
            except KeyError as error:
                problems.append(f"{where}: {error}")
            for needle in ("<input", "<button", "roofline-answer-feedback"):
                if needle not in block:
                    problems.append(f"{where} {ident.group(1)}: no {needle}")
    assert not problems, "\n".join(problems)


def _blocks(text: str, css_class: str) -> list[str]:
    """The HTML of each <div class="... css_class ..."> element, up to its matching </div>."""
    blocks = []
    for match in re.finditer(rf'<div\b[^>]*class="[^"]*\b{re.escape(css_class)}\b[^"]*"', text):
        depth, position = 0, match.start()
        for tag in re.finditer(r"<(/?)div\b", text[match.start() :]):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                position = match.start() + tag.end()
                break
        blocks.append(text[match.start() : position])
    return blocks


# ---------------------------------------------------------------- launch buttons
def test_colab_button_opens_the_paired_notebook_on_every_notebook_page(book_html, pages):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = urlsplit(config["repository"]["url"]).path.strip("/")  # org/name
    branch = config["repository"].get("branch", "main")
    colab = config["launch_buttons"]["colab_url"].rstrip("/")
    missing = []
    for md in SOURCES:
        notebook = md.with_suffix(".ipynb")
        relative = notebook.relative_to(ROOT).as_posix()
        assert notebook.exists(), f"{relative} (the Colab twin of {md.name}) does not exist"
        expected = f"{colab}/github/{repo}/blob/{branch}/{relative}"
        found = [
            url
            for tag, _, url in pages[notebook_page(book_html, md)].links
            if tag == "a" and "colab" in url
        ]
        if expected not in found:
            missing.append(f"{md.name}: expected {expected}, found {found}")
    assert not missing, "\n".join(missing)


# ---------------------------------------------------------------- weight and theme
def gzip_bytes(path: Path) -> int:
    """Bytes `path` takes on the wire from a server that gzips text (level 6, the usual
    default); images and fonts are already compressed and go as they are (the smaller)."""
    import gzip

    data = path.read_bytes()
    return min(len(data), len(gzip.compress(data, 6)))


def named_assets(path: Path, page: Page) -> set[Path]:
    """The local files a page's HTML names: itself, stylesheets, scripts, preloads, images.
    (What the browser fetches on top, such as fonts and MathJax's parts, is counted by
    tests/test_browser.py from Chromium's own request log.)"""
    text = path.read_text(encoding="utf-8")
    urls = [
        url
        for tag, attribute, url in page.links
        if (tag, attribute) in (("script", "src"), ("img", "src"))
    ]
    urls += re.findall(
        r'<link\b[^>]*\brel="(?:stylesheet|preload|icon)"[^>]*\bhref="([^"]+)"', text
    )
    urls += re.findall(
        r'<link\b[^>]*\bhref="([^"]+)"[^>]*\brel="(?:stylesheet|preload|icon)"', text
    )
    files = {path.resolve()}
    for url in urls:
        if url.startswith("data:") or is_external(url):
            continue
        target = (path.parent / unquote(urlsplit(url).path)).resolve()
        if target.is_file():
            files.add(target)
    return files


def test_gzip_bytes_counts_text_compressed_and_images_as_they_are(tmp_path):
    text, image = tmp_path / "a.html", tmp_path / "b.png"
    text.write_text("<p>roofline</p>" * 1000)  # 15000 bytes, very repetitive
    image.write_bytes(__import__("random").Random(0).randbytes(1024))  # gzip cannot shrink these
    assert gzip_bytes(text) < 300
    assert gzip_bytes(image) == 1024


def test_chapter_pages_are_light(book_html, pages):
    """A cold chapter page (all it names) at most 1.2 MB gzip-compressed; a warm one (the
    files every chapter page shares counted as cached) at most 400 kB."""
    chapter_pages = [notebook_page(book_html, md) for md in SOURCES]
    assets = {path: named_assets(path, pages[path]) for path in chapter_pages}
    shared = set.intersection(*assets.values())
    heavy = []
    for path, files in assets.items():
        cold = sum(gzip_bytes(f) for f in files)
        warm = sum(gzip_bytes(f) for f in files - shared)
        if cold > MAX_COLD_PAGE_BYTES or warm > MAX_WARM_PAGE_BYTES:
            biggest = sorted(files, key=gzip_bytes, reverse=True)[:4]
            heavy.append(
                f"{path.relative_to(book_html)}: cold {cold / 1e3:.0f} kB, warm {warm / 1e3:.0f} kB; "
                "largest: " + ", ".join(f"{f.name} {gzip_bytes(f) / 1e3:.0f} kB" for f in biggest)
            )
    assert not heavy, (
        f"pages over {MAX_COLD_PAGE_BYTES / 1e6} MB cold or {MAX_WARM_PAGE_BYTES / 1e3:.0f} kB "
        "warm (gzip): shrink figures (dpi, SVG), explorer data, or shared assets\n"
        + "\n".join(heavy)
    )


def test_no_page_loads_font_awesome_script(book_html, pages):
    """pydata-sphinx-theme's fontawesome.js (0.54 MB gzip) is replaced by a cut-down icon font
    (_ext/web_edition.py); the icon stylesheet and its fonts are in the site."""
    offenders = [
        p.relative_to(book_html).as_posix()
        for p in pages
        if "fontawesome.js" in p.read_text(encoding="utf-8")
    ]
    assert not offenders, f"pages that still load fontawesome.js: {offenders}"
    css = (book_html / "_static" / "roofline-icons.css").read_text(encoding="utf-8")
    fonts = re.findall(r'url\("([^"]+)"\)', css)
    assert fonts and all((book_html / "_static" / f).is_file() for f in fonts), css
    assert all(gzip_bytes(book_html / "_static" / f) < 20_000 for f in fonts)
    missing = [
        p.name
        for p, page in pages.items()
        if 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8")
        and not any("roofline-icons.css" in url for tag, _, url in page.links if tag == "link")
    ]
    assert not missing, f"pages without _static/roofline-icons.css: {missing}"


def test_dark_mode_stylesheet_is_on_every_page(book_html, pages):
    assert (book_html / "_static" / "roofline-web.css").is_file()
    without = [
        p.name
        for p, page in pages.items()
        if 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8")  # index.html
        and not any(
            url.endswith("roofline-web.css") or "roofline-web.css?" in url
            for tag, _, url in page.links
            if tag == "link"
        )
    ]
    assert not without, f"pages without _static/roofline-web.css: {without}"


# ---------------------------------------------------------------- deployment
def test_pages_workflow_builds_as_make_book_does():
    """The GitHub Pages workflow: checkout, Python 3.11, `make book`, `make pdf` (the PDF
    copied into the site as rooflines.pdf, issue 35), upload _build/html, deploy."""
    workflow = yaml.safe_load(
        (ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8")
    )
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    steps = build["steps"]
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    assert uses[0] == "actions/checkout"
    python = next(step for step in steps if step.get("uses", "").startswith("actions/setup-python"))
    assert str(python["with"]["python-version"]) == "3.11"
    runs = [step["run"].strip() for step in steps if "run" in step]
    assert runs[0] == "make book", runs
    assert len(runs) == 2 and "make pdf" in runs[1], runs
    assert "cp _build/rooflines.pdf _build/html/rooflines.pdf" in runs[1], runs
    upload = next(
        step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact")
    )
    assert upload["with"]["path"] == "_build/html"
    assert uses.index("actions/upload-pages-artifact") > uses.index("actions/setup-python")
    assert deploy["needs"] == "build"
    assert any(step.get("uses", "").startswith("actions/deploy-pages") for step in deploy["steps"])
    permissions = workflow["permissions"]
    assert permissions["pages"] == "write" and permissions["id-token"] == "write"
    # `make book` builds into _build/html: the Makefile runs tools/build_book.py without --out
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\nbook:", 1)[1].split("\n\n", 1)[0]
    assert "tools/build_book.py" in recipe and "--out" not in recipe
