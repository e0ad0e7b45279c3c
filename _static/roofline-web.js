/* Web edition of "Rooflines": menu buttons that work, and solutions that open from their title.
 * (Jupyter Book adds every .js file of _static/ to every page.)
 *
 * 1. Menu buttons. sphinx-book-theme 1.3 and pydata-sphinx-theme 0.17 (the pair jupyter-book
 *    1.0.4 installs; 1.3 requires exactly 0.17.1) each bind their sidebar toggle to
 *    document.querySelector(".primary-toggle"), the FIRST such button in the page: the one in
 *    pydata's own header (#pst-header), which roofline-web.css hides because the book theme's
 *    article header already has the same buttons (it was a second 64 px strip with a second
 *    search box). The buttons readers see had only a tooltip listener. Here every other
 *    .primary-toggle / .secondary-toggle passes its click on to the first one, so the themes'
 *    own code does the rest: on a wide screen the sidebar hides and comes back, on a narrow one
 *    it opens as a dialog with the chapter list.
 *    Why this and not an older pinned pair (sphinx-book-theme 1.1 with pydata 0.15, whose
 *    toggles are CSS checkboxes): that pair changes every page's markup, which the other tests
 *    and styles are written against, and gives up pydata 0.16-0.17's accessibility fixes;
 *    this is twenty lines, and tests/test_browser.py fails if the themes change under it.
 *
 * 2. Solutions. sphinx-exercise titles a solution "Solution to <a href=#ex>Exercise 3</a>";
 *    sphinx-togglebutton makes the title open the solution, but a click on the link part
 *    jumped to the exercise instead (and threw an error). Here a click anywhere on a
 *    dropdown's title only opens or closes it.
 *
 * 3. What a keyboard and a screen reader need (issue 25, WCAG 2.1 AA):
 *    - a box that scrolls sideways (a table, code, a wide formula) is a Tab stop with a name
 *      of its own ("Code cell 3 (scrolls sideways)", "Table 2: <caption> (scrolls sideways)"),
 *      so that the arrow keys can scroll it; it stops being one as soon as it fits (checked
 *      again whenever the column or the box changes size); a formula in a table scrolls with
 *      the table;
 *    - the sidebar's logo link is inside a landmark (a navigation region "Book home");
 *    - "Show code cell source" is named by its visible text (MyST-NB labels every such toggle
 *      "Toggle hidden content"), and so is the sidebar's search field ("Search... Ctrl+K");
 *    - each solution's button is named after its exercise ("Solution to exercise 12");
 *    - each exercise's title is a heading one level below the section it sits in, so a screen
 *      reader's heading list jumps from exercise to exercise.
 *    (MathJax's menu, which made every formula a Tab stop, is switched off by
 *    _ext/web_edition.py; the assistive MathML stays.)
 */
(function () {
  "use strict";

  // Search terms are not highlighted on the book's pages, as before search.html alone loaded
  // Sphinx's search code: sphinx_highlight.js then highlights every page it finds terms for,
  // and throws on the explorers' SVG (a <title>'s text has no getBBox). Clear them instead.
  // (a top-level const of another script: reachable by name, not as a property of window)
  if (typeof SphinxHighlight !== "undefined") {
    SphinxHighlight.highlightSearchWords = function () {
      try { localStorage.removeItem("sphinx_highlight_terms"); } catch (e) { /* no storage */ }
    };
  }

  function forwardToggles(selector) {
    const buttons = document.querySelectorAll(selector);
    const themed = buttons[0];   // the button the themes' scripts listen to
    buttons.forEach(function (button, index) {
      if (index === 0) return;
      button.addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        themed.click();
      });
    });
  }

  function solutionTitles() {
    // sphinx-togglebutton's title handler only knows clicks on the title itself or on its
    // chevron (a click on the link threw "button is not defined"), so the link's click
    // becomes a click on the chevron.
    document.addEventListener("click", function (event) {
      const link = event.target.closest(".dropdown > .admonition-title a");
      if (!link) return;
      event.preventDefault();
      event.stopPropagation();
      const chevron = link.closest(".admonition-title").querySelector(".toggle-button");
      if (chevron) chevron.click();
    }, true);
  }

  var SCROLLERS = ".bd-article table:not(.indextable), .bd-article div.highlight > pre, " +
    ".bd-article .cell_output pre, .bd-article span.math, .bd-article div.math mjx-container";

  // What a scroll box is, with its number on the page: a screen reader's list of regions
  // must tell them apart ("Code cell 3", not 79 times "Code").
  function scrollerKind(box) {
    if (box.tagName === "TABLE") {
      var caption = box.querySelector("caption") || box.querySelector("th");
      var text = caption ? caption.textContent.replace(/\s+/g, " ").trim().slice(0, 60) : "";
      return {kind: "Table", text: text};
    }
    if (box.matches(".math, mjx-container")) return {kind: "Formula", text: ""};
    var cell = box.closest(".cell");
    if (cell) return {kind: box.closest(".cell_output") ? "Output of code cell" : "Code cell", cell: cell};
    return {kind: "Code example", text: ""};
  }

  function numberOf(box, selector) {
    return Array.prototype.indexOf.call(document.querySelectorAll(selector), box) + 1;
  }

  function scrollerName(box) {
    var what = scrollerKind(box), name;
    if (what.cell) {
      name = what.kind + " " + numberOf(what.cell, ".bd-article .cell");
    } else if (what.kind === "Table") {
      name = "Table " + numberOf(box, ".bd-article table:not(.indextable)") + (what.text ? ": " + what.text : "");
    } else if (what.kind === "Formula") {
      name = "Formula " + numberOf(box, ".bd-article span.math, .bd-article div.math mjx-container");
    } else {
      name = "Code example " + numberOf(box, ".bd-article div.highlight > pre");
    }
    return name + " (scrolls sideways)";
  }

  function markScrollers() {
    document.querySelectorAll(SCROLLERS).forEach(function (box) {
      // a formula inside a table scrolls with its table: one scroll box, not two
      var scrolls = box.scrollWidth > box.clientWidth + 1 && box.getClientRects().length > 0 &&
        !(box.tagName !== "TABLE" && box.closest(".bd-article table"));
      if (scrolls && !box.hasAttribute("data-rx-scroll")) {
        box.setAttribute("data-rx-scroll", "");
        box.setAttribute("tabindex", "0");
        if (box.tagName !== "TABLE") box.setAttribute("role", "region");   // a name needs a role
        if (!box.hasAttribute("aria-label")) box.setAttribute("aria-label", scrollerName(box));
      } else if (!scrolls && box.hasAttribute("data-rx-scroll")) {
        box.removeAttribute("data-rx-scroll");
        box.removeAttribute("tabindex");
        if (box.getAttribute("role") === "region") box.removeAttribute("role");
        if (/scrolls sideways\)$/.test(box.getAttribute("aria-label") || "")) box.removeAttribute("aria-label");
      }
    });
  }

  // Re-check whenever a box or the column changes size, not only at load and on a window
  // resize: MathJax's fonts, a solution or a hidden code cell opening, a sidebar toggled
  // all re-lay the text out. Checks are batched into one per animation frame.
  function watchScrollers() {
    var pending = false;
    function soon() {
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; markScrollers(); });
    }
    var timer = null;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(markScrollers, 150);
    });
    if (!window.ResizeObserver) return;
    var observer = new ResizeObserver(soon);
    var article = document.querySelector(".bd-article");
    if (article) observer.observe(article);
    document.querySelectorAll(SCROLLERS).forEach(function (box) { observer.observe(box); });
    document.addEventListener("toggle", soon, true);   // <details> opened or closed
  }

  // The sidebar's logo (a link home) sat outside every landmark: its item becomes a small
  // navigation region of its own.
  function logoLandmark() {
    document.querySelectorAll(".bd-sidebar-primary .navbar-brand").forEach(function (logo) {
      var item = logo.closest(".sidebar-primary-item") || logo.parentElement;
      if (item && !item.closest("nav, header, main, aside, footer, [role]")) {
        item.setAttribute("role", "navigation");
        item.setAttribute("aria-label", "Book home");
      }
    });
  }

  function nameToggles() {
    // the sidebar's search field shows "Search... Ctrl+K" but was named "Search" (WCAG 2.5.3)
    document.querySelectorAll(".search-button-field[aria-label]").forEach(function (button) {
      button.removeAttribute("aria-label");
    });
    document.querySelectorAll("details.hide > summary[aria-label]").forEach(function (summary) {
      summary.removeAttribute("aria-label");   // named by its visible "Show code cell source"
    });
    document.querySelectorAll(".dropdown > .admonition-title .toggle-button").forEach(function (button) {
      var title = button.closest(".admonition-title").textContent.replace(/\s+/g, " ").trim();
      var match = /^Solution to\s*Exercise\s+([\w.-]+)/i.exec(title);
      var name = match ? "Solution to exercise " + match[1] : (title ? "Show or hide: " + title : "");
      if (name) button.setAttribute("aria-label", name);
    });
  }

  function exerciseHeadings() {
    var level = 1;
    var items = document.querySelectorAll(
      ".bd-article h1, .bd-article h2, .bd-article h3, .bd-article h4, .bd-article h5, " +
      ".bd-article .exercise > .admonition-title");
    items.forEach(function (item) {
      if (/^H[1-6]$/.test(item.tagName)) { level = Number(item.tagName[1]); return; }
      item.setAttribute("role", "heading");
      item.setAttribute("aria-level", String(Math.min(level + 1, 6)));
    });
  }

  function start() {
    forwardToggles(".primary-toggle");
    forwardToggles(".secondary-toggle");
    solutionTitles();
    exerciseHeadings();
    // after sphinx-togglebutton has added its buttons (it runs on DOMContentLoaded too)
    setTimeout(nameToggles, 0);
    logoLandmark();
    markScrollers();
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(markScrollers);
    } else {
      window.addEventListener("load", function () {
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(markScrollers);
        else markScrollers();
      });
    }
    watchScrollers();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
