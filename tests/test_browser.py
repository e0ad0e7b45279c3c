"""The web edition in a real browser: headless Chromium against the built site.

The site is served by `http.server` on 127.0.0.1 (a random free port) and Chromium
resolves no other host (`--host-resolver-rules`), so a page that needs the network
shows it: a resource from another host fails and is reported.

Checked on every page: no JavaScript error (browser log, level SEVERE), every request
goes to the local server (performance log), every <img> loaded (naturalWidth > 0),
MathJax typeset every formula. With JavaScript switched off, every figure still shows.
On the chapter pages: each explorer's sliders redraw its figure (drawn in the browser), answer boxes
accept the right answer and diagnose a typical wrong one (the expected values come
from `roofline`), solution dropdowns open from their whole title, and figures sit on a
white card in dark mode. At 1280 and 390 px (a phone): no page scrolls sideways, tables keep
their columns apart and scroll inside themselves, the menu button opens the chapter list and
its links work; links have contrast >= 4.5:1 in light and dark mode; a chapter page weighs at
most 1.2 MB cold and 400 kB warm (gzip) by Chromium's own request log. A screenshot of every
page at both widths in both modes goes to _build/screenshots/ (not committed).

Without Chromium/ChromeDriver these tests skip with a message; under CI (CI=true) they fail.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import notebooks
import pytest

ROOT = notebooks.ROOT
SOURCES = notebooks.notebook_sources()
SCREENSHOTS = ROOT / "_build" / "screenshots"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("book")]


# ---------------------------------------------------------------- browser and server
def _find(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or (
            name if os.path.isabs(name) and os.access(name, os.X_OK) else None
        )
        if found:
            return found
    return None


def _unavailable(message: str):
    if IN_CI:
        pytest.fail(
            f"{message} (CI=true: the browser tests must run; .ci/run installs "
            "chromium and chromium-driver)"
        )
    pytest.skip(
        f"{message}; install them (Debian: apt-get install chromium chromium-driver) "
        "to run the browser tests"
    )


def _make_driver(javascript: bool = True):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed")
    chromium = _find("chromium", "chromium-browser", "google-chrome", "/usr/bin/chromium")
    driver_path = _find("/usr/bin/chromedriver", "chromedriver")
    if not chromium or not driver_path:
        _unavailable(
            f"Chromium ({chromium or 'missing'}) or ChromeDriver ({driver_path or 'missing'}) not found"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,900",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-domain-reliability",
        "--no-first-run",
        "--disable-sync",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    # An explicit driver path: selenium must not try to download one.
    service = Service(executable_path=driver_path)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(book_html):
    """Base URL of the built book, served from 127.0.0.1 on a free port."""
    handler = functools.partial(_QuietHandler, directory=str(book_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    driver = _make_driver()
    yield driver
    driver.quit()


def _pages(book_html: Path) -> list[str]:
    """Every page a reader can reach (relative paths), the redirect index.html excluded."""
    pages = []
    for path in sorted(book_html.rglob("*.html")):
        relative = path.relative_to(book_html)
        if relative.parts[0].startswith("_") or relative.as_posix() == "index.html":
            continue
        pages.append(relative.as_posix())
    return pages


def _notebook_pages() -> list[str]:
    return [md.relative_to(ROOT).with_suffix(".html").as_posix() for md in SOURCES]


def _load(driver, url: str) -> None:
    driver.get(url)
    driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const finish = () => setTimeout(done, 50);
        if (document.readyState === 'complete') finish(); else addEventListener('load', finish);
    """)


def _open_optional_sections(driver) -> None:
    """Open every "Going further" section, as a reader does before working its exercises
    (tests/test_going_further.py tests the closed state and the keyboard)."""
    driver.execute_script(
        "document.querySelectorAll('details.rx-going-further').forEach(d => { d.open = true; });"
    )


def _wait_for_math(driver) -> dict:
    """Wait for MathJax (if the page loads it) to finish; count formulas and typeset ones."""
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const count = (ok, error) => done({
            formulas: document.querySelectorAll('.math').length,
            typeset: [...document.querySelectorAll('.math')].filter(
                m => m.querySelector('mjx-container')).length,
            errors: document.querySelectorAll('mjx-merror').length,
            mathjax: !!window.MathJax, error: error || null});
        const start = Date.now();
        (function poll() {
            if (!document.querySelector('.math')) return count();
            if (window.MathJax && MathJax.startup && MathJax.startup.promise)
                return MathJax.startup.promise.then(() => count(), e => count(false, String(e)));
            if (Date.now() - start > 20000) return count(false, 'MathJax never started');
            setTimeout(poll, 50);
        })();
    """)


def _images(driver) -> list[dict]:
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const imgs = [...document.images];
        imgs.forEach(i => { i.loading = 'eager'; });
        Promise.all(imgs.map(i => i.complete ? null : new Promise(r => {
            i.addEventListener('load', r); i.addEventListener('error', r); }))).then(() =>
            done(imgs.map(i => ({src: i.currentSrc.slice(0, 120), width: i.naturalWidth,
                                 alt: i.alt}))));
    """)


def _requests(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def _screenshot(driver, path: Path, width: int = 1280) -> None:
    """The whole page (up to 16000 px) as a window `width` px wide and as tall as the page.
    (Chromium's captureBeyondViewport lays some pages out wider than the window, so the shot
    showed a layout no reader sees.)"""
    import base64

    path.parent.mkdir(parents=True, exist_ok=True)
    height = min(int(driver.execute_script("return document.documentElement.scrollHeight")), 16000)
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    try:
        driver.execute_script("window.scrollTo(0, 0); return document.body.offsetWidth")
        shot = driver.execute_cdp_cmd(
            "Page.captureScreenshot",
            {
                "format": "png",
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            },
        )
        path.write_bytes(base64.b64decode(shot["data"]))
    finally:
        _set_width(driver, width)


WIDTHS = (1280, 390)  # a laptop, a phone (CSS pixels)


def _set_width(driver, width: int) -> None:
    """Lay the page out `width` CSS pixels wide (a desktop browser window that narrow)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
    )
    driver.execute_script("return document.body.offsetWidth")  # force the new layout
    time.sleep(0.1)


#: The page's horizontal overflow, and what causes it.
_SIDEWAYS_JS = """
    const root = document.documentElement, width = root.clientWidth;
    const culprits = [];
    const clipped = e => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
        if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(a).overflowX)) return true;
        return false; };
    for (const e of document.querySelectorAll('body *')) {
        const r = e.getBoundingClientRect();
        if (r.width && r.right > width + 1 && !clipped(e) && !(e.parentElement && culprits.includes(e.parentElement)))
            culprits.push(e);
    }
    return {overflow: Math.max(root.scrollWidth, document.body.scrollWidth) - width,
            culprits: culprits.slice(0, 5).map(e => e.tagName.toLowerCase() + '.' +
                [...e.classList].join('.') + ' right=' + Math.round(e.getBoundingClientRect().right))};
"""

#: Every table in the article: columns that do not touch, no cell wrapped while the table has
#: room to grow, and a table wider than the text column scrolls inside itself (not cut off).
_TABLES_JS = """
    const problems = []; let count = 0, scrolling = 0;
    const px = v => parseFloat(v) || 0;
    const column = document.querySelector('article.bd-article');
    if (!column) return {count, scrolling, problems};
    const columnRight = column.getBoundingClientRect().right;
    // content tables (the general index lays out its columns with tables: not content)
    document.querySelectorAll('article.bd-article table:not(.indextable)').forEach((table, index) => {
        count += 1;
        const where = 'table ' + index + ' (' + (table.querySelector('th, td') || {}).textContent + ')';
        const spacing = px(getComputedStyle(table).borderSpacing);
        for (const row of [...table.rows].slice(0, 3)) {
            const cells = [...row.cells];
            for (let i = 0; i + 1 < cells.length; i++) {
                const gap = px(getComputedStyle(cells[i]).paddingRight) + spacing +
                            px(getComputedStyle(cells[i + 1]).paddingLeft);
                if (gap < 8) { problems.push(where + ': columns ' + i + ' and ' + (i + 1) +
                                             ' are ' + gap.toFixed(1) + ' px apart (< 8 px)'); break; }
            }
        }
        // the box the table may grow in: the nearest block container that is not the table
        const box = table.parentElement.getBoundingClientRect().width;
        const roomy = table.getBoundingClientRect().width < 0.95 * box;
        for (const cell of table.querySelectorAll('td')) {
            const style = getComputedStyle(cell);
            const line = px(style.lineHeight) || 1.2 * px(style.fontSize);
            const inner = cell.getBoundingClientRect().height - px(style.paddingTop) - px(style.paddingBottom);
            const range = document.createRange(); range.selectNodeContents(cell);
            const lines = new Set([...range.getClientRects()].map(r => Math.round(r.bottom))).size;
            if (roomy && lines > 1 && inner > 1.5 * line) {
                problems.push(where + ': the cell "' + cell.textContent.trim().slice(0, 30) +
                              '" wraps although the table has room to grow'); break;
            }
        }
        if (table.getBoundingClientRect().right > columnRight + 1)
            problems.push(where + ': sticks out of the text column');
        if (table.scrollWidth > table.clientWidth + 1) {
            let scroller = null;
            for (let e = table; e && e !== column; e = e.parentElement) {
                const overflow = getComputedStyle(e).overflowX;
                if (['hidden', 'clip'].includes(overflow)) break;
                if (['auto', 'scroll'].includes(overflow) && e.scrollWidth > e.clientWidth) { scroller = e; break; }
            }
            if (scroller) scrolling += 1;
            else problems.push(where + ': wider than its box and cut off (no scroll box)');
        }
    });
    return {count, scrolling, problems};
"""

#: WCAG contrast of every visible link (text) against the colour it is drawn on.
_LINKS_JS = """
    const rgba = c => { const m = c.match(/[\\d.]+/g) || [0, 0, 0, 0];
        return [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1]; };
    const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3])).concat(1);
    const backdrop = element => {
        const layers = [];
        for (let e = element; e; e = e.parentElement) {
            const c = rgba(getComputedStyle(e).backgroundColor);
            if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
        }
        return layers.reverse().reduce((under, top) => over(top, under), [255, 255, 255, 1]);
    };
    const luminance = c => { const l = c.slice(0, 3).map(v => { v /= 255;
        return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
        return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
    const links = [];
    document.querySelectorAll('.bd-main a, .bd-sidebar-primary a, .bd-sidebar-secondary a').forEach(a => {
        const style = getComputedStyle(a);
        if (!a.textContent.trim() || !a.getClientRects().length || style.visibility === 'hidden') return;
        const back = backdrop(a), text = over(rgba(style.color), back);
        const [hi, lo] = [luminance(text), luminance(back)].sort((x, y) => y - x);
        links.push({text: a.textContent.trim().slice(0, 40), ratio: (hi + 0.05) / (lo + 0.05),
                    color: style.color, background: 'rgb(' + back.slice(0, 3).map(Math.round).join(', ') + ')',
                    table: !!a.closest('table')});
    });
    return links;
"""


def _set_theme(driver, mode: str) -> None:
    driver.execute_script(
        """
        document.documentElement.dataset.theme = arguments[0];
        document.documentElement.dataset.mode = arguments[0];
        localStorage.setItem('theme', arguments[0]); localStorage.setItem('mode', arguments[0]);
    """,
        mode,
    )
    time.sleep(0.1)


def _local(url: str, site: str) -> bool:
    return url.startswith(site + "/") or url == site or url.startswith(("data:", "blob:", "about:"))


# ---------------------------------------------------------------- one visit per page
@pytest.fixture(scope="module")
def visits(browser, site, book_html) -> dict[str, dict]:
    """Load every page once: console errors, requests, images, math; at 1280 and 390 px:
    sideways scrolling and tables; link contrast in light and dark mode; screenshots of
    every page at both widths in both modes (_build/screenshots/PAGE-WIDTH-MODE.png)."""
    results = {}
    chapters = set(_notebook_pages())
    browser.get_log("browser"), browser.get_log("performance")
    for page in _pages(book_html):
        _set_width(browser, 1280)
        _load(browser, f"{site}/{page}")
        math = _wait_for_math(browser)
        images = _images(browser)
        visit = {"math": math, "images": images, "sideways": {}, "tables": {}, "links": {}}
        stem = Path(page).stem
        for width in WIDTHS:
            _set_width(browser, width)
            for mode in ("light", "dark"):
                _set_theme(browser, mode)
                if mode == "light":
                    visit["sideways"][width] = browser.execute_script(_SIDEWAYS_JS)
                    visit["tables"][width] = browser.execute_script(_TABLES_JS)
                if width == 1280:
                    visit["links"][mode] = browser.execute_script(_LINKS_JS)
                if width == 1280 and mode == "dark" and (page in chapters or page == "intro.html"):
                    visit["dark_images"] = browser.execute_script("""
                        return [...document.querySelectorAll(
                            '.cell_output img, .roofline-explorer img')].map(i => {
                            const s = getComputedStyle(i);
                            return {src: i.currentSrc.slice(0, 80), background: s.backgroundColor,
                                    filter: s.filter};});
                    """)
                    visit["dark_boxes"] = browser.execute_script("""
                        return [...document.querySelectorAll('.roofline-answer-box, .roofline-explorer')]
                            .map(b => { const s = getComputedStyle(b);
                                return {id: b.dataset.exercise || b.id, color: s.color,
                                        background: s.backgroundColor}; });
                    """)
                _screenshot(browser, SCREENSHOTS / f"{stem}-{width}-{mode}.png", width)
        _set_width(browser, 1280)
        _set_theme(browser, "light")
        visit["errors"] = [
            e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"
        ]
        visit["requests"] = _requests(browser)
        results[page] = visit
    return results


def test_every_page_loads_without_javascript_errors(visits):
    errors = {page: v["errors"] for page, v in visits.items() if v["errors"]}
    assert not errors, "JavaScript errors (SEVERE):\n" + "\n".join(
        f"{page}: {message}" for page, messages in errors.items() for message in messages
    )


def test_no_request_leaves_the_local_server(visits, site):
    external = {
        page: sorted({u for u in v["requests"] if not _local(u, site)})
        for page, v in visits.items()
    }
    external = {page: urls for page, urls in external.items() if urls}
    assert not external, "requests to other hosts:\n" + "\n".join(
        f"{page}: {url}" for page, urls in external.items() for url in urls
    )
    assert all(v["requests"] for v in visits.values()), "the performance log recorded no requests"


def test_every_image_is_visible(visits):
    broken = [
        f"{page}: {img['src']!r} (alt {img['alt']!r})"
        for page, v in visits.items()
        for img in v["images"]
        if img["width"] <= 0
    ]
    assert not broken, "images that did not load:\n" + "\n".join(broken)


def test_mathjax_typesets_every_formula_offline(visits):
    pages_with_math = {page: v["math"] for page, v in visits.items() if v["math"]["formulas"]}
    assert "intro.html" in pages_with_math, "the notation table in intro.html has formulas"
    for page, math in pages_with_math.items():
        assert math["mathjax"] and not math["error"], f"{page}: MathJax did not run: {math}"
        assert math["typeset"] == math["formulas"], f"{page}: {math}"
        assert math["errors"] == 0, f"{page}: {math['errors']} formulas with TeX errors"


def test_figures_are_on_a_white_card_in_dark_mode(visits):
    figures = [(page, img) for page, v in visits.items() for img in v.get("dark_images", [])]
    wrong = [
        f"{page}: {img}"
        for page, img in figures
        if img["background"] not in ("rgb(255, 255, 255)", "rgba(255, 255, 255, 1)")
        or img["filter"] != "none"
    ]
    assert not wrong, "figures without a white background (or dimmed) in dark mode:\n" + "\n".join(
        wrong
    )


def _luminance(css: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_answer_boxes_and_explorers_readable_in_dark_mode(visits):
    """Text contrast (WCAG) of each answer box and explorer card in dark mode is at least 4.5."""
    low = []
    for page, visit in visits.items():
        for box in visit.get("dark_boxes", []):
            if box["background"] in ("rgba(0, 0, 0, 0)", "transparent"):
                low.append(f"{page} {box['id']}: transparent card (text {box['color']})")
                continue
            a, b = _luminance(box["color"]), _luminance(box["background"])
            ratio = (max(a, b) + 0.05) / (min(a, b) + 0.05)
            if ratio < 4.5:
                low.append(
                    f"{page} {box['id']}: contrast {ratio:.1f} ({box['color']} on {box['background']})"
                )
    assert not low, "hard to read in dark mode:\n" + "\n".join(low)


def test_no_page_scrolls_sideways(visits):
    """At 1280 and at 390 px (a phone) no page is wider than the window: wide tables, code
    and formulas scroll inside their own box."""
    wide = [
        f"{page} at {width} px: {result['overflow']} px too wide; {result['culprits']}"
        for page, v in visits.items()
        for width, result in v["sideways"].items()
        if result["overflow"] > 1
    ]
    assert not wide, "pages that scroll sideways:\n" + "\n".join(wide)
    assert all(set(v["sideways"]) == set(WIDTHS) for v in visits.values())


def test_tables_use_the_width_and_scroll_inside_themselves(visits):
    """Every table: columns at least 8 px apart, no cell wrapped while the table could grow,
    never past the text column, and one wider than its box scrolls inside itself."""
    problems = [
        f"{page} at {width} px: {problem}"
        for page, v in visits.items()
        for width, result in v["tables"].items()
        for problem in result["problems"]
    ]
    assert not problems, "\n".join(problems)
    assert sum(v["tables"][1280]["count"] for v in visits.values()) >= 5, "the book has tables"
    assert sum(v["tables"][390]["scrolling"] for v in visits.values()) >= 1, (
        "no table scrolls inside itself at 390 px: the spec-sheet table of the catalog should"
    )


def test_links_are_readable_in_light_and_dark_mode(visits):
    """Every visible link (text, sidebars, tables) has WCAG contrast at least 4.5:1 against
    what it is drawn on, in light and in dark mode."""
    low, checked = [], Counter()
    for page, v in visits.items():
        for mode, links in v["links"].items():
            for link in links:
                checked[mode, link["table"]] += 1
                if link["ratio"] < 4.5:
                    low.append(
                        f"{page} ({mode}): {link['text']!r} {link['ratio']:.2f}:1 "
                        f"({link['color']} on {link['background']}){' in a table' if link['table'] else ''}"
                    )
    assert not low, f"{len(low)} links below 4.5:1:\n" + "\n".join(low[:30])
    for mode in ("light", "dark"):
        assert checked[mode, False] > 50 and checked[mode, True] >= 1, dict(checked)


def test_chapter_pages_are_light_as_chromium_loads_them(visits, site, book_html):
    """Everything Chromium fetched for a chapter page (fonts and MathJax's parts included),
    as a gzip-serving host sends it: at most 1.2 MB cold, at most 400 kB warm (the files
    every chapter page fetches counted as cached). No Font Awesome script or full font."""
    from urllib.parse import unquote

    from test_site import MAX_COLD_PAGE_BYTES, MAX_WARM_PAGE_BYTES, gzip_bytes

    fetched = {}
    for page in _notebook_pages():
        files = set()
        for url in visits[page]["requests"]:
            if url.startswith(site + "/"):
                path = book_html / unquote(urlsplit(url).path).lstrip("/")
                if path.is_file():
                    files.add(path)
        fetched[page] = files
    everything = set().union(*fetched.values())
    theirs = [
        f.relative_to(book_html).as_posix() for f in everything if "fontawesome" in f.as_posix()
    ]
    assert not theirs, f"pages still fetch Font Awesome's own files: {sorted(theirs)}"
    shared = set.intersection(*fetched.values())
    sizes = {f: gzip_bytes(f) for f in everything}
    report, heavy = [], []
    for page, files in fetched.items():
        cold = sum(sizes[f] for f in files)
        warm = sum(sizes[f] for f in files - shared)
        report.append(f"{page}: cold {cold / 1e3:.0f} kB, warm {warm / 1e3:.0f} kB")
        if cold > MAX_COLD_PAGE_BYTES or warm > MAX_WARM_PAGE_BYTES:
            biggest = sorted(files, key=sizes.get, reverse=True)[:4]
            heavy.append(
                report[-1]
                + "; largest: "
                + ", ".join(f"{f.relative_to(book_html)} {sizes[f] / 1e3:.0f} kB" for f in biggest)
            )
    print("\n".join(report))
    assert not heavy, "\n".join(heavy)
    assert all(len(files) >= 10 for files in fetched.values()), "the request log looks incomplete"


def _visible(driver, selector: str) -> list:
    return [e for e in driver.find_elements("css selector", selector) if e.is_displayed()]


def test_menu_opens_on_a_phone_and_leads_to_a_chapter(browser, site):
    """At 390 px: one header; its menu button opens the chapter list; a chapter link in it
    opens that chapter. At 1280 px: the same button hides the sidebar and brings it back."""
    from selenium.webdriver.support.ui import WebDriverWait

    start, target = _notebook_pages()[0], _notebook_pages()[1]
    try:
        _set_width(browser, 390)
        _load(browser, f"{site}/{start}")
        assert not browser.find_element("css selector", "#pst-header").is_displayed(), (
            "pydata's header strip (a second header with a second search box) is showing"
        )
        buttons = _visible(browser, ".primary-toggle")
        assert len(buttons) == 1, f"{len(buttons)} visible menu buttons at 390 px"
        assert len(_visible(browser, ".search-button, .search-button-field")) == 1
        buttons[0].click()
        WebDriverWait(browser, 3).until(
            lambda d: d.execute_script(
                "return document.querySelector('#pst-primary-sidebar-modal').open"
            )
        )
        links = [
            a
            for a in _visible(browser, "#pst-primary-sidebar-modal a")
            if (a.get_attribute("href") or "").endswith("/" + Path(target).name)
        ]
        assert links, f"the opened menu has no visible link to {target}"
        links[0].click()
        WebDriverWait(browser, 10).until(lambda d: d.current_url.split("#")[0].endswith(target))
        heading = browser.find_element("css selector", "article h1").text
        assert heading, f"{target} opened without a heading"

        _set_width(browser, 1280)
        _load(browser, f"{site}/{start}")
        sidebar = browser.find_element("css selector", "#pst-primary-sidebar")
        assert (
            sidebar.is_displayed()
            and not browser.find_element("css selector", "#pst-header").is_displayed()
        )
        assert len(_visible(browser, ".search-button, .search-button-field")) == 1, (
            "one search box on a wide screen"
        )
        buttons = _visible(browser, ".primary-toggle")
        assert len(buttons) == 1, f"{len(buttons)} visible menu buttons at 1280 px"
        buttons[0].click()
        WebDriverWait(browser, 3).until(lambda d: not sidebar.is_displayed())
        buttons[0].click()
        WebDriverWait(browser, 3).until(lambda d: sidebar.is_displayed())
    finally:
        _set_width(browser, 1280)


def test_search_from_a_chapter_finds_pages(browser, site):
    """A chapter page no longer loads the search index (issue 37); the search box still works:
    typing a word and Enter opens search.html, which loads the index and lists the pages."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    page = _notebook_pages()[0]
    _load(browser, f"{site}/{page}")
    loaded = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert not [u for u in loaded if u.endswith("searchindex.js")], "a chapter loads the index"
    _visible(browser, ".search-button-field, .search-button")[0].click()
    field = WebDriverWait(browser, 3).until(
        lambda d: _visible(d, "#pst-search-dialog input[name=q], .bd-search input[name=q]")
    )[0]
    field.send_keys("roofline", Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: "search.html" in d.current_url)
    WebDriverWait(browser, 10).until(
        lambda d: len(d.find_elements("css selector", "#search-results li")) > 3
    )
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_figures_show_with_javascript_off(site, book_html):
    """Every figure is a plain <img> in the page: nothing needs a script to appear."""
    driver = _make_driver(javascript=False)
    try:
        broken, seen = [], 0
        for page in _notebook_pages():
            driver.get(f"{site}/{page}")  # returns after the load event: images are in
            # The page's own scripts are off (WebDriver's are not): the theme's inline script
            # sets data-mode on <html>; with JavaScript off it must still be absent.
            assert driver.execute_script("return document.documentElement.dataset.mode") is None, (
                "JavaScript is not switched off"
            )
            for img in driver.execute_script(
                "return [...document.images].map(i => ({src: i.currentSrc.slice(0, 120), "
                "width: i.naturalWidth}))"
            ):
                seen += 1
                if img["width"] <= 0:
                    broken.append(f"{page}: {img['src']!r}")
        assert not broken, "images missing without JavaScript:\n" + "\n".join(broken)
        assert seen, "no image on any notebook page"
    finally:
        driver.quit()


# ---------------------------------------------------------------- interactive parts
def _chapter_pages_with(book_html: Path, css_class: str) -> list[str]:
    return [
        page
        for page in _notebook_pages()
        if css_class in (book_html / page).read_text(encoding="utf-8")
    ]


def test_explorer_controls_move_the_figure(browser, site, book_html):
    """Every explorer on every chapter page runs in the browser (roofline.web): each slider,
    moved with the keyboard as a reader would, redraws its SVG figure and its readout.
    (The numbers themselves are checked against the package in test_browser_explorers.py.)"""
    from selenium.webdriver.common.keys import Keys

    pages = _chapter_pages_with(book_html, "roofline-explorer")
    if not pages:
        pytest.fail("no page has an explorer (div.roofline-explorer)")
    problems, checked = [], 0
    drawing = """const svg = arguments[0].querySelector('.rx-figure svg');
                 if (!svg) return null;
                 const copy = svg.cloneNode(true); copy.querySelector('title').remove();
                 return copy.outerHTML + arguments[0].querySelector('pre').textContent;"""
    for page in pages:
        _load(browser, f"{site}/{page}")
        for index, explorer in enumerate(
            browser.find_elements("css selector", ".roofline-explorer")
        ):
            where = f"{page} explorer {index}"
            sliders = explorer.find_elements("css selector", "input[type=range]")
            if not sliders or browser.execute_script(drawing, explorer) is None:
                problems.append(f"{where}: no slider or no figure drawn in the browser")
                continue
            for number, slider in enumerate(sliders):
                browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
                before_value = slider.get_attribute("value")
                before = browser.execute_script(drawing, explorer)
                slider.click()
                slider.send_keys(
                    Keys.HOME if before_value == slider.get_attribute("max") else Keys.END
                )
                after_value = slider.get_attribute("value")
                checked += 1
                if after_value == before_value:
                    problems.append(f"{where} slider {number}: the keyboard did not move it")
                elif browser.execute_script(drawing, explorer) == before:
                    problems.append(
                        f"{where} slider {number}: moved {before_value} -> {after_value} "
                        "but the figure stayed the same"
                    )
    assert checked, "no explorer slider was found"
    assert not problems, "\n".join(problems)
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _written(value, kind: str) -> str:
    """A value written as a student would: with its unit, 4 significant figures."""
    from roofline.exercises.core import UNIT_FOR_KIND
    from roofline.units import format_si

    unit = UNIT_FOR_KIND.get(kind)
    if unit and unit != "FLOPs/B":
        return format_si(float(value), unit)
    return f"{float(value):.4g}"


def _payload(box) -> dict:
    import base64

    raw = box.get_attribute("data-payload")
    return json.loads(base64.b64decode(raw)) if raw else {}


def _submit(browser, box, text: str) -> str:
    field = box.find_element("css selector", "input")
    feedback = box.find_element("css selector", ".roofline-answer-feedback")
    browser.execute_script("arguments[0].textContent = ''", feedback)
    field.clear()
    field.send_keys(text)
    box.find_element("css selector", "button").click()
    deadline = time.time() + 3
    while not feedback.text.strip() and time.time() < deadline:
        time.sleep(0.05)
    return feedback.text.strip()


_RIGHT = re.compile(r"\b(correct|right)\b", re.I)
_NOT_YET = re.compile(r"not yet|incorrect|wrong|✘", re.I)


def test_answer_box_time_1e12_flops_h100(browser, site, book_html):
    """The worked case of the brief, with the answer derived here from the catalog."""
    import roofline as rl

    pages = [
        p
        for p in _chapter_pages_with(book_html, "roofline-answer-box")
        if 'data-exercise="time-1e12-flops-h100"' in (book_html / p).read_text(encoding="utf-8")
    ]
    assert pages, "no page has the answer box of exercise time-1e12-flops-h100"
    _load(browser, f"{site}/{pages[0]}")
    box = browser.find_element(
        "css selector", '.roofline-answer-box[data-exercise="time-1e12-flops-h100"]'
    )
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
    seconds = 1e12 / rl.get_chip("H100 SXM").peak_flops_per_s("bf16")
    right = rl.format_time(seconds)  # "1.01 ms"
    assert right.endswith(" ms")
    wrong = right.replace(" ms", " us")  # a unit-prefix slip: 1000x too small
    said = _submit(browser, box, right)
    assert _RIGHT.search(said) and not _NOT_YET.search(said), f"{right!r} -> {said!r}"
    said = _submit(browser, box, wrong)
    assert _NOT_YET.search(said) or not _RIGHT.search(said), f"{wrong!r} -> {said!r}"
    assert "prefix" in said.lower(), f"{wrong!r} should get a unit-prefix diagnosis, got {said!r}"


def test_every_answer_box_accepts_the_right_answer_and_diagnoses_a_prefix_slip(
    browser, site, book_html
):
    """Every answer box on every page. Where the page's exercise uses the default parameters,
    the right answer comes from `roofline` (not from the page) and the page's diagnosis of a
    1000x slip must be the kernel checker's. Boxes whose numbers come from the page's own
    cells (a measurement) are checked for the mechanics only. Formula answers are checked by
    the page too; homework boxes check nothing (no expected value travels in the page)."""
    from roofline.exercises import check, get_exercise

    pages = _chapter_pages_with(book_html, "roofline-answer-box")
    if not pages:
        pytest.fail("no page has an answer box (div.roofline-answer-box)")
    problems, counts = [], Counter()
    for page in pages:
        _load(browser, f"{site}/{page}")
        _open_optional_sections(browser)
        for box in browser.find_elements("css selector", ".roofline-answer-box"):
            ident = box.get_attribute("data-exercise")
            exercise = get_exercise(ident)
            payload = _payload(box)
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
            where = f"{page} {ident}"
            expected = exercise.expected()
            if payload.get("kind") == "private":  # homework: no expected value on the page
                said = _submit(browser, box, "1")
                counts["homework"] += 1
                if "does not check homework" not in said or "expected" in payload:
                    problems.append(f"{where}: a homework box must check nothing: {said!r}")
                continue
            if exercise.kind == "symbolic":
                said = _submit(browser, box, str(expected))
                counts["formula"] += 1
                if not _RIGHT.search(said) or _NOT_YET.search(said):
                    problems.append(f"{where}: formula {expected} -> {said!r}")
                continue
            if exercise.kind == "parts":
                right = "; ".join(
                    str(value) if part.kind == "symbolic" else _written(value, part.kind)
                    for part, value in zip(exercise.parts, expected)
                )
                said = _submit(browser, box, right)
                counts["parts"] += 1
                if not _RIGHT.search(said) or _NOT_YET.search(said):
                    problems.append(f"{where}: right answers {right!r} -> {said!r}")
                continue
            if exercise.kind == "choice":
                default = payload.get("expected", expected) == expected
                right = str(expected if default else payload["expected"])
            else:
                default = "expected" not in payload or abs(
                    float(payload["expected"]) - float(expected)
                ) <= 1e-9 * abs(float(expected))
                right = _written(expected if default else payload["expected"], exercise.kind)
                if default and not check(ident, right).correct:
                    problems.append(
                        f"{where}: the kernel checker rejects {right!r} (test's formatting?)"
                    )
                    continue
            counts["default" if default else "page-specific"] += 1
            said = _submit(browser, box, right)
            if not _RIGHT.search(said) or _NOT_YET.search(said):
                problems.append(f"{where}: right answer {right!r} -> {said!r}")
            if exercise.kind == "choice" or not exercise.generic_mistakes:
                continue
            value = float(expected if default else payload["expected"]) * 1000
            slip = _written(value, exercise.kind)
            said = _submit(browser, box, slip)
            if _RIGHT.search(said) and not _NOT_YET.search(said):
                problems.append(f"{where}: 1000x the answer ({slip!r}) accepted: {said!r}")
            elif default:
                kernel = check(ident, slip)
                if kernel.correct or (kernel.diagnosis and kernel.diagnosis[:40] not in said):
                    problems.append(
                        f"{where}: {slip!r}: the page says {said!r}, the kernel "
                        f"checker says {kernel.message!r}"
                    )
    print(f"answer boxes checked: {dict(counts)}")
    assert counts["default"], "no answer box with the catalog's numbers was checked"
    assert not problems, "\n".join(problems)


def test_solution_opens_from_anywhere_on_its_title(browser, site, book_html):
    """A click on the title bar, on its "Exercise N" link too, opens the solution without
    leaving the place (no jump to the exercise); the chevron closes it again."""
    from selenium.webdriver.common.action_chains import ActionChains

    pages = _chapter_pages_with(book_html, "solution dropdown")
    if not pages:
        pytest.fail("no page has a solution dropdown")
    problems, opened = [], 0
    for page in pages:
        _load(browser, f"{site}/{page}")
        _open_optional_sections(browser)
        for solution in browser.find_elements("css selector", ".solution.dropdown"):
            body = solution.find_elements("css selector", ".admonition-title ~ *")
            if not body:
                continue
            where = f"{page} {solution.get_attribute('id')}"
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", solution)
            if body[0].is_displayed():
                problems.append(f"{where}: open before any click")
                continue
            title = solution.find_element("css selector", ".admonition-title")
            link = title.find_elements("css selector", "a")
            before = browser.execute_script("return [location.href, window.scrollY]")
            ActionChains(browser).move_to_element(link[0] if link else title).click().perform()
            deadline = time.time() + 2
            while not body[0].is_displayed() and time.time() < deadline:
                time.sleep(0.05)
            opened += 1
            after = browser.execute_script("return [location.href, window.scrollY]")
            if not body[0].is_displayed():
                problems.append(f"{where}: still closed after a click on its title")
            if after[0] != before[0] or abs(after[1] - before[1]) > 40:
                problems.append(f"{where}: a click on the title jumped ({before} -> {after})")
            chevron = solution.find_element("css selector", ".toggle-button")
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", chevron)
            chevron.click()
            deadline = time.time() + 2
            while body[0].is_displayed() and time.time() < deadline:
                time.sleep(0.05)
            if body[0].is_displayed():
                problems.append(f"{where}: the chevron did not close it")
    assert opened, "no solution dropdown was found"
    assert not problems, "\n".join(problems)
