"""Accessibility (WCAG 2.1 AA) and the printed edition, in a real browser (issue 25).

One headless Chromium session visits every page of the built book once and checks:

- axe-core (the version package.json pins; `npm ci` installs it) with the WCAG 2.0 and 2.1
  A and AA rules, at 1280 and 390 px, in light and dark mode: no serious or critical violation;
- no formula is a Tab stop (MathJax's menu made every formula one), except a formula too wide
  for the column, which scrolls sideways and must then be reachable (WCAG 2.1.1);
- every explorer slider says its value with its unit (`aria-valuetext`);
- nothing in the article is cut off (clipped by a box that does not scroll) at 390 and 320 px,
  and no page scrolls sideways at 320 px (WCAG 1.4.10, reflow);
- in print media no solution and no answer box is visible.

Then: a keyboard-only walk (Tab, from the top of the page) reaches every explorer control and
answer box within a bounded number of Tabs. (The PDF of the whole book: tests/test_book_pdf.py.)

Without Chromium, ChromeDriver or axe-core these tests skip with a message; under CI they fail.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import notebooks
import pytest
from test_browser import (
    _load,
    _make_driver,
    _pages,
    _set_theme,
    _set_width,
    _unavailable,
    _wait_for_math,
)

ROOT = notebooks.ROOT
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
#: axe's findings by rule, width and mode
REPORT = Path(os.environ.get("ROOFLINE_A11Y_REPORT", ROOT / "_build" / "a11y" / "axe-totals.json"))
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
WIDTHS = (1280, 390)
#: A keyboard reader reaches the next explorer control or answer box within this many Tabs:
#: the page header and chapter list come first (about 30 stops), then the links of the prose
#: (chapter 5's spec-sheet sections hold about 90). Chapter 6 needed 246 Tabs to its explorer
#: while every formula was a Tab stop; 86 without. Linking every glossary word at its first
#: use on each page (issue 33) and opening the optional sections added stops: chapter 5's
#: first answer box came at Tab 157; chapter 11's opening table of what joins the chips (each
#: row's glossary links) brought its first explorer control to Tab 198. 210 keeps the bound
#: near what the pages need.
MAX_TABS_BETWEEN_TARGETS = 210

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("book")]


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.is_file():
        _unavailable(f"axe-core is not installed ({AXE.relative_to(ROOT)}: run `npm ci`)")
    return AXE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def site(book_html):
    """Base URL of the built book, served from 127.0.0.1 (as in test_browser.py)."""
    import book_pdf

    server, base = book_pdf.serve(book_html)
    yield base
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    driver = _make_driver()
    driver.set_script_timeout(300)  # axe on a long chapter takes seconds (minutes on a busy CI)
    yield driver
    driver.quit()


_AXE_RUN = """
    const done = arguments[arguments.length - 1];
    // label-content-name-mismatch (WCAG 2.5.3, level A) is "experimental" in axe: asked by name
    axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}, resultTypes: ['violations'],
                       rules: {'label-content-name-mismatch': {enabled: true}}})
      .then(r => done(r.violations.filter(v => ['serious', 'critical'].includes(v.impact)).map(v => ({
          id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
          targets: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))),
            e => done([{id: 'axe-error', impact: 'critical', help: String(e), count: 1, targets: []}]));
"""

#: Formulas a Tab reaches: MathJax's containers and anything focusable inside a formula.
_FORMULA_STOPS_JS = """
    const stops = [...document.querySelectorAll(
        '.math[tabindex], mjx-container[tabindex], .math [tabindex], mjx-container [tabindex]')]
        .filter(e => e.tabIndex >= 0 && !e.hasAttribute('data-rx-scroll'));
    return {stops: stops.length, formulas: document.querySelectorAll('.math').length,
            scrolling: document.querySelectorAll('.math[data-rx-scroll], mjx-container[data-rx-scroll]').length};
"""

_SLIDERS_JS = """
    return [...document.querySelectorAll('.roofline-explorer input[type=range]')].map(s => ({
        name: s.getAttribute('aria-label'), valuetext: s.getAttribute('aria-valuetext') || ''}));
"""

#: Elements of the article cut off by an ancestor that clips (overflow hidden/clip) and does
#: not scroll. Visually hidden helpers (1 px boxes, MathJax's assistive MathML) are not content.
_CLIPPED_JS = """
    const article = document.querySelector('article.bd-article');
    if (!article) return {clipped: [], overflow: 0};
    const clipped = [], seen = [];
    const hidden = e => { const s = getComputedStyle(e);
        return s.position === 'absolute' && (s.clip !== 'auto' || s.clipPath !== 'none'); };
    for (const e of article.querySelectorAll('*')) {
        if (e.closest('mjx-assistive-mml, .rx-live-region, script, style, svg')) continue;
        if (seen.some(s => s.contains(e))) continue;   // inside one already reported
        const r = e.getBoundingClientRect();
        if (r.width < 2 || r.height < 2 || hidden(e)) continue;
        for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
            const s = getComputedStyle(a);
            if (s.overflowX === 'visible') continue;
            if (['auto', 'scroll'].includes(s.overflowX)) break;   // it scrolls: reachable
            const box = a.getBoundingClientRect();
            if (r.right > box.right + 2 || r.left < box.left - 2) {
                seen.push(e);
                clipped.push(e.tagName.toLowerCase() + '.' + [...e.classList].join('.') + ' "' +
                    (e.textContent || '').trim().slice(0, 40) + '" in ' + a.tagName.toLowerCase() + '.' +
                    [...a.classList].join('.') + ' (' + Math.round(r.right - box.right) + ' px)');
            }
            break;
        }
    }
    const root = document.documentElement;
    return {clipped: clipped.slice(0, 8), overflow: root.scrollWidth - root.clientWidth};
"""

_PRINTED_JS = """
    const shown = e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
    return {solutions: [...document.querySelectorAll('.solution, .solution-start')].filter(shown).length,
            answers: [...document.querySelectorAll('.roofline-answer-box input, .roofline-answer-box button')]
                .filter(shown).length,
            explorers: [...document.querySelectorAll('.roofline-explorer')].filter(shown).length};
"""


def _media(driver, media: str) -> None:
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": media})


def _visit(driver, url: str, axe_source: str) -> dict:
    """Everything checked on one page (one load)."""
    _set_width(driver, 1280)
    _load(driver, url)
    _wait_for_math(driver)
    driver.execute_script(axe_source)
    # no colour transitions (the theme fades colours for 0.15 s): axe measures the final colours
    driver.execute_script(
        "document.head.insertAdjacentHTML('beforeend', '<style>*, *::before, *::after "
        "{transition: none !important; animation: none !important}</style>')"
    )
    visit = {"axe": {}, "clipped": {}}
    for width in WIDTHS:
        _set_width(driver, width)
        time.sleep(0.2)  # roofline-web.js marks the scroll boxes 150 ms after a resize
        for mode in ("light", "dark"):
            _set_theme(driver, mode)
            visit["axe"][(width, mode)] = driver.execute_async_script(_AXE_RUN, AXE_TAGS)
        _set_theme(driver, "light")
        if width == 1280:
            visit["formulas"] = driver.execute_script(_FORMULA_STOPS_JS)
            visit["sliders"] = driver.execute_script(_SLIDERS_JS)
    for width in (390, 320):
        _set_width(driver, width)
        visit["clipped"][width] = driver.execute_script(_CLIPPED_JS)
    _set_width(driver, 1280)
    _media(driver, "print")
    try:
        visit["printed"] = driver.execute_script(_PRINTED_JS)
    finally:
        _media(driver, "")
    return visit


@pytest.fixture(scope="module")
def audit(browser, site, book_html, axe_source) -> dict[str, dict]:
    """Every page, visited once (see the module's docstring)."""
    results = {page: _visit(browser, f"{site}/{page}", axe_source) for page in _pages(book_html)}
    totals: dict[str, int] = {}
    for visit in results.values():
        for (width, mode), violations in visit["axe"].items():
            for v in violations:
                key = f"{v['id']} ({v['impact']}) {width} {mode}"
                totals[key] = totals.get(key, 0) + v["count"]
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(totals, indent=1, sort_keys=True), encoding="utf-8")
    print(f"axe serious+critical nodes: {sum(totals.values())} ({REPORT})")
    return results


def test_axe_finds_no_serious_or_critical_violation(audit):
    problems = [
        f"{page} at {width} px, {mode}: {v['impact']} {v['id']} x{v['count']} ({v['help']}) "
        f"{v['targets']}"
        for page, visit in audit.items()
        for (width, mode), violations in visit["axe"].items()
        for v in violations
    ]
    assert len(audit) >= 10, "every page of the book is audited"
    assert not problems, "axe-core (WCAG 2.0/2.1 A and AA):\n" + "\n".join(problems)


def test_no_formula_is_a_tab_stop(audit):
    stops = {page: v["formulas"] for page, v in audit.items() if v["formulas"]["stops"]}
    assert not stops, f"formulas a Tab reaches (MathJax's menu?): {stops}"
    formulas = sum(v["formulas"]["formulas"] for v in audit.values())
    assert formulas > 100, "the book has formulas"
    # a formula wider than the column scrolls and is then a Tab stop: only a few are that wide
    wide = {
        page: v["formulas"]["scrolling"] for page, v in audit.items() if v["formulas"]["scrolling"]
    }
    assert sum(wide.values()) <= 0.02 * formulas, f"formulas that scroll at 1280 px: {wide}"


def test_every_slider_says_its_value_with_a_unit(audit):
    sliders = [(page, s) for page, v in audit.items() for s in v["sliders"]]
    assert len(sliders) >= 5, "the book's explorers have sliders"
    bad = [f"{page}: {s}" for page, s in sliders if not re.search(r"\d", s["valuetext"])]
    assert not bad, "sliders without aria-valuetext:\n" + "\n".join(bad)
    units = [s["valuetext"] for _, s in sliders if s["name"].startswith(("intensity", "link"))]
    assert units and all(re.search(r"FLOPs/B|B/s", t) for t in units), units


def test_nothing_in_an_article_is_clipped_on_a_phone(audit):
    problems = [
        f"{page} at {width} px: {item}"
        for page, visit in audit.items()
        for width, result in visit["clipped"].items()
        for item in result["clipped"]
    ]
    problems += [
        f"{page} at 320 px scrolls sideways by {v['clipped'][320]['overflow']} px"
        for page, v in audit.items()
        if v["clipped"][320]["overflow"] > 1
    ]
    assert not problems, "\n".join(problems)


def test_print_hides_solutions_and_answer_boxes(audit, book_html):
    shown = {
        page: v["printed"]
        for page, v in audit.items()
        if v["printed"]["solutions"] or v["printed"]["answers"]
    }
    assert not shown, f"visible in print: {shown}"
    explorers = sum(v["printed"]["explorers"] for v in audit.values())
    assert explorers >= 5, "explorers print (their figure and readout)"


# ---------------------------------------------------------------- the keyboard alone
_RECORD_JS = """
    window.__focusWalk = [];
    document.addEventListener('focusin', e => {
        const t = e.target;
        window.__focusWalk.push(t.closest('.roofline-explorer, .roofline-answer-box') ?
            (t.dataset.control || t.dataset.number || t.tagName.toLowerCase()) + '@' +
            (t.closest('.roofline-explorer') || t.closest('.roofline-answer-box')).id +
            (t.closest('.roofline-answer-box') ? t.closest('.roofline-answer-box').dataset.exercise : '')
            : '');
    });
    document.activeElement && document.activeElement.blur();
    // optional "Going further" sections open, as a keyboard reader opens one (Enter on its
    // summary: tests/test_going_further.py), so their controls are walked too
    document.querySelectorAll('details.rx-going-further').forEach(d => { d.open = true; });
    window.scrollTo(0, 0);
    return [...document.querySelectorAll(
        '.roofline-explorer input:not([disabled]), .roofline-explorer select:not([disabled]), ' +
        '.roofline-answer-box input, .roofline-answer-box button')].map(t =>
        (t.dataset.control || t.dataset.number || t.tagName.toLowerCase()) + '@' +
        (t.closest('.roofline-explorer') || t.closest('.roofline-answer-box')).id +
        (t.closest('.roofline-answer-box') ? t.closest('.roofline-answer-box').dataset.exercise : ''));
"""


def tab_walk(driver, url: str, limit: int = 1500) -> tuple[list[str], dict[str, int]]:
    """Tab through `url` from the top: the targets (explorer controls, answer boxes) and the
    number of Tabs at which each was first reached."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _load(driver, url)
    _wait_for_math(driver)
    targets = driver.execute_script(_RECORD_JS)
    body = driver.find_element("css selector", "body")
    ActionChains(driver).move_to_element_with_offset(body, 0, 0)
    reached: dict[str, int] = {}
    pressed = 0
    while pressed < limit and len(reached) < len(set(targets)):
        ActionChains(driver).send_keys(*([Keys.TAB] * 50)).perform()
        pressed += 50
        walk = driver.execute_script("return window.__focusWalk")
        for index, name in enumerate(walk, start=1):
            if name and name not in reached:
                reached[name] = index
    return targets, reached


def test_keyboard_reaches_every_explorer_control_and_answer_box(browser, site, book_html):
    from test_browser import _chapter_pages_with

    pages = sorted(
        set(_chapter_pages_with(book_html, "roofline-explorer"))
        | set(_chapter_pages_with(book_html, "roofline-answer-box"))
    )
    assert pages, "no page has an explorer or an answer box"
    _set_width(browser, 1280)
    problems, summary = [], {}
    for page in pages:
        targets, reached = tab_walk(browser, f"{site}/{page}")
        missing = [t for t in targets if t not in reached]
        if missing:
            problems.append(f"{page}: never reached by Tab: {missing[:5]}")
            continue
        order = sorted(reached.values())
        gaps = [b - a for a, b in zip([0] + order, order)]
        summary[page] = (order[0], max(gaps))
        if max(gaps) > MAX_TABS_BETWEEN_TARGETS:
            where = order[gaps.index(max(gaps))]
            problems.append(
                f"{page}: {max(gaps)} Tabs to the control reached at Tab {where} "
                f"(at most {MAX_TABS_BETWEEN_TARGETS})"
            )
    print(f"Tabs to the first target and the longest gap: {summary}")
    assert not problems, "\n".join(problems)
