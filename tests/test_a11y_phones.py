"""Phones and dark mode, in a real browser (issue 35, section 2).

- the focus ring on explorer and answer-box controls reaches 3:1 on their card, light and dark;
- a scroll box is a Tab stop exactly while it scrolls, re-checked after any re-layout (a window
  resize, or the column changing width without one), and each has a name of its own;
- the sidebar's logo link sits inside a landmark;
- no table header cell is empty (chapter 5, homework part 4);
- homework part 4's formulas inside its table do not scroll inside the scrolling table;
- the homework pages show the web's sentence and not the twin's.
"""

from __future__ import annotations

import time

import pytest
from test_browser import _load, _make_driver, _set_theme, _set_width, _wait_for_math

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("book")]


@pytest.fixture(scope="module")
def site(book_html):
    import book_pdf

    server, base = book_pdf.serve(book_html)
    yield base
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    driver = _make_driver()
    yield driver
    driver.quit()


def _open(driver, site, page, width=1280, mode="light"):
    _load(driver, f"{site}/{page}")
    _set_theme(driver, mode)
    _wait_for_math(driver)
    _set_width(driver, width)
    time.sleep(0.4)  # the resize handler and ResizeObserver have run


#: The focus indicator of the focused element: its outline (or box-shadow ring) colour, and
#: the colour of the card around it, composited to opaque RGB.
_RING_JS = """
    const el = arguments[0];
    el.focus({focusVisible: true});
    const s = getComputedStyle(el);
    const card = el.closest('.roofline-explorer, .roofline-answer-box');
    let back = 'rgb(255, 255, 255)';
    for (let e = el.parentElement; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') { back = c; break; }
    }
    return {visible: el.matches(':focus-visible'), style: s.outlineStyle, width: s.outlineWidth,
            outline: s.outlineColor, shadow: s.boxShadow, card: back, cardClass: card && card.className};
"""


def _contrast(a: str, b: str) -> float:
    from test_browser import _luminance

    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize(
    "page, selector",
    [
        ("chapters/04_matmul_critical_batch.html", ".roofline-explorer select"),
        ("chapters/04_matmul_critical_batch.html", ".roofline-explorer input[type=range]"),
        ("chapters/01_where_does_the_time_go.html", ".roofline-answer-box input"),
        ("chapters/01_where_does_the_time_go.html", ".roofline-answer-box button"),
    ],
)
def test_focus_ring_on_cards_reaches_3_to_1(browser, site, page, selector, mode):
    from selenium.webdriver.common.by import By

    _open(browser, site, page, mode=mode)
    element = browser.find_elements(By.CSS_SELECTOR, selector)[0]
    ring = browser.execute_script(_RING_JS, element)
    assert ring["visible"], ring
    assert ring["style"] != "none" and float(ring["width"].rstrip("px")) >= 2, ring
    ratio = _contrast(ring["outline"], ring["card"])
    assert ratio >= 3.0, (
        f"{page} {selector} {mode}: ring {ring['outline']} on {ring['card']} = {ratio:.2f}:1"
    )


#: Every candidate scroll box: whether it scrolls now, whether it is marked, its name.
_SCROLL_STATE_JS = """
    const boxes = [...document.querySelectorAll('.bd-article table:not(.indextable), ' +
        '.bd-article div.highlight > pre, .bd-article .cell_output pre, .bd-article span.math, ' +
        '.bd-article div.math mjx-container')];
    return boxes.filter(b => b.getClientRects().length).map(b => ({
        scrolls: b.scrollWidth > b.clientWidth + 1 && !(b.tagName !== 'TABLE' && b.closest('.bd-article table')),
        marked: b.hasAttribute('data-rx-scroll'), tab: b.tabIndex,
        name: b.getAttribute('aria-label') || '', tag: b.tagName,
        math: !!b.closest('.math, mjx-container'), inTable: !!b.closest('table') && b.tagName !== 'TABLE'}));
"""


def _mismatches(state):
    return [b for b in state if b["scrolls"] != b["marked"] or (b["marked"] and b["tab"] != 0)]


def test_scroll_boxes_are_tab_stops_exactly_while_they_scroll_after_relayout(browser, site):
    page = "chapters/06_communication_rooflines.html"
    _open(browser, site, page, width=390)
    narrow = browser.execute_script(_SCROLL_STATE_JS)
    assert any(b["marked"] and b["math"] for b in narrow), "no formula scrolls at 390 px?"
    assert not _mismatches(narrow)
    _set_width(browser, 1280)
    time.sleep(0.4)
    wide = browser.execute_script(_SCROLL_STATE_JS)
    assert not _mismatches(wide), _mismatches(wide)[:5]
    assert sum(b["marked"] for b in wide) < sum(b["marked"] for b in narrow)
    # a re-layout with no window resize: the column narrows (a sidebar, a zoomed font...)
    browser.execute_script("document.querySelector('.bd-article').style.maxWidth = '300px'")
    time.sleep(0.4)
    squeezed = browser.execute_script(_SCROLL_STATE_JS)
    assert not _mismatches(squeezed), _mismatches(squeezed)[:5]
    browser.execute_script("document.querySelector('.bd-article').style.maxWidth = ''")
    time.sleep(0.4)
    again = browser.execute_script(_SCROLL_STATE_JS)
    assert not _mismatches(again), "formulas that fit again are still Tab stops"


@pytest.mark.parametrize("width", [390, 320])
def test_each_scroll_region_has_a_name_of_its_own(browser, site, width):
    _open(browser, site, "chapters/06_communication_rooflines.html", width=width)
    names = [b["name"] for b in browser.execute_script(_SCROLL_STATE_JS) if b["marked"]]
    assert len(names) > 10
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"{len(duplicates)} names shared, e.g. {duplicates[:5]}"
    assert all(n.endswith("(scrolls sideways)") for n in names)
    assert any(n.startswith("Code cell ") for n in names), names[:10]


def test_sidebar_logo_is_inside_a_landmark(browser, site):
    _open(browser, site, "chapters/05_reading_a_spec_sheet.html")
    outside = browser.execute_script("""
        const landmark = 'header, nav, main, aside, footer, [role=banner], [role=navigation], ' +
            '[role=main], [role=complementary], [role=contentinfo], [role=region][aria-label], ' +
            '[role=search]';
        return [...document.querySelectorAll('.navbar-brand')].filter(a => !a.closest(landmark))
            .map(a => a.outerHTML.slice(0, 80));
    """)
    assert not outside


@pytest.mark.parametrize(
    "page", ["chapters/05_reading_a_spec_sheet.html", "exercises/homework_part4.html"]
)
def test_no_empty_table_header(browser, site, page):
    _open(browser, site, page)
    empty = browser.execute_script("""
        return [...document.querySelectorAll('.bd-article th')]
            .filter(th => !th.textContent.trim() && !th.getAttribute('aria-label'))
            .map(th => th.closest('table').textContent.trim().slice(0, 60));
    """)
    assert not empty


@pytest.mark.parametrize("width", [390, 320])
def test_homework_4_formula_in_a_table_does_not_scroll_inside_it(browser, site, width):
    _open(browser, site, "exercises/homework_part4.html", width=width)
    state = browser.execute_script(_SCROLL_STATE_JS)
    in_tables = [b for b in state if b["inTable"]]
    assert in_tables and not any(b["marked"] for b in in_tables)
    nested = browser.execute_script("""
        return [...document.querySelectorAll('.bd-article table span.math')]
            .filter(m => m.scrollWidth > m.clientWidth + 1 &&
                         ['auto', 'scroll'].includes(getComputedStyle(m).overflowX)).length;
    """)
    assert nested == 0
    assert any(b["marked"] and b["tag"] == "TABLE" for b in state), "the table scrolls as one"


def test_the_homework_page_says_only_the_webs_sentence(browser, site):
    _open(browser, site, "exercises/homework_part1.html")
    text = browser.execute_script("return document.querySelector('.bd-article').innerText")
    assert "On this web page (no kernel)" in text
    assert "In this notebook the cell after each question" not in text


_LABEL_OVER_REGION_JS = """
    const ex = window.rooflineExplorers[0], c = ex.controls['intensity'];
    const covered = [];
    for (const at of [0, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 1]) {
        c.value = String(+c.min + (+c.max - +c.min) * at);
        c.dispatchEvent(new Event('input'));
        const svg = ex.root.querySelector('svg');
        const regions = [...svg.querySelectorAll('.rx-region')].map(t => t.getBoundingClientRect());
        for (const box of svg.querySelectorAll('.rx-label rect')) {
            const b = box.getBoundingClientRect();
            for (const r of regions)
                if (b.left < r.right && r.left < b.right && b.top < r.bottom && r.top < b.bottom)
                    covered.push(at);
        }
    }
    return {covered: covered, regions: svg_regions()};
    function svg_regions() { return ex.root.querySelectorAll('svg .rx-region').length; }
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_chapter_9_point_label_leaves_the_region_names_free(browser, site, width):
    _open(browser, site, "chapters/09_measuring_a_roofline.html", width=width)
    found = browser.execute_script(_LABEL_OVER_REGION_JS)
    assert found["regions"] == 2
    assert not found["covered"], f"the point's label covers a region name at {found['covered']}"
