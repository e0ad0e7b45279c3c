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
 */
(function () {
  "use strict";

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

  function start() {
    forwardToggles(".primary-toggle");
    forwardToggles(".secondary-toggle");
    solutionTitles();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
