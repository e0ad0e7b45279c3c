/* Optional "Going further" sections (issue 33; _ext/going_further.py collapses them on the web
 * page into <details class="rx-going-further">, a native disclosure: Tab, Enter, Space).
 *
 * 1. A link that leads into a closed section (a figure, a subsection in "On this page", a
 *    glossary or search hit) opens it first, so the target is there to scroll to (recent
 *    Chromium does this by itself for <details>; other browsers may not).
 * 2. Printing shows every section whole: the print stylesheet does (::details-content), and
 *    for browsers without that pseudo-element every closed section is opened before printing
 *    and closed again after.
 */
(function () {
  "use strict";
  var SECTION = "details.rx-going-further";

  // Open every closed section around the element with this id; whether one was closed.
  function openAround(id) {
    var target = null, opened = false;
    try { target = id && document.getElementById(decodeURIComponent(id)); } catch (e) { /* bad % */ }
    var details = target && target.closest(SECTION);
    while (details) {
      if (!details.open) { details.open = true; opened = true; }
      details = details.parentElement && details.parentElement.closest(SECTION);
    }
    return opened ? target : null;
  }

  function fromHash() {
    var target = location.hash.length > 1 && openAround(location.hash.slice(1));
    if (target) target.scrollIntoView();
  }

  var openedForPrint = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll(SECTION + ":not([open])").forEach(function (details) {
      details.open = true;
      openedForPrint.push(details);
    });
  });
  window.addEventListener("afterprint", function () {
    openedForPrint.forEach(function (details) { details.open = false; });
    openedForPrint = [];
  });

  window.addEventListener("hashchange", fromHash);
  // a click on a same-page link to a target inside a closed section: opened before the
  // browser scrolls to it
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest('a[href^="#"]');
    if (link) openAround(link.getAttribute("href").slice(1));
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fromHash);
  else fromHash();
})();
