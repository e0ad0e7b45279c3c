/* Rooflines: what every page explorer shares (roofline.web.COMMON_SCRIPT).
 *
 * Inlined before each explorer's own script (explorer.js, step_explorer.js,
 * serving_explorer.js); defines window.RooflineWeb once per page. No dependencies, no network,
 * no markup (not even in comments: it is inlined into the page). Also loads in node (the fast
 * tests run the explorers' formulas there on the package's exported data): nothing here
 * touches the page until a function is called.
 *
 *   sig(x, digits), si(value, unit, digits): numbers as roofline.units writes them
 *     (3 significant digits unless told; rates and intensities take 4, RATE_DIGITS);
 *   fmtTime, fmtBytes, fmtCount: times, byte sizes, whole counts with thousands separators;
 *   onReady(fn): run fn once the page is parsed;
 *   bootAll(selector, listName, make): make(card) once per card, kept in window[listName];
 *   announcer(card, shown): what a screen reader hears after the reader pauses (0.4 s): the control
 *     moved and its value, then the readout lines that changed, never the whole readout again.
 */
(function () {
  "use strict";
  var root = typeof window !== "undefined" ? window : globalThis;
  if (root.RooflineWeb) return;

  var BIG = [[1e24, "Y"], [1e21, "Z"], [1e18, "E"], [1e15, "P"], [1e12, "T"], [1e9, "G"],
             [1e6, "M"], [1e3, "k"], [1, ""]];
  var SMALL = [[1, ""], [1e-3, "m"], [1e-6, "\u00b5"], [1e-9, "n"], [1e-12, "p"]];
  function sig(x, digits) {
    if (x === 0) return "0";
    var text = Number(x.toPrecision(digits)).toString();
    if (text.indexOf("e") >= 0) text = Number(x.toPrecision(digits)).toFixed(0);
    return text;
  }
  function si(value, unit, digits) {
    digits = digits || 3;
    if (!isFinite(value)) return (value < 0 ? "-" : "") + "inf " + unit;
    if (value === 0) return "0 " + unit;
    var table = Math.abs(value) < 1 ? SMALL : BIG;
    for (var i = 0; i < table.length; i++) {
      var m = value / table[i][0];
      if (Math.abs(m) >= 1 || i === table.length - 1) {
        var text = sig(m, digits);
        if (Math.abs(Number(text)) >= 1000 && i > 0) {
          return sig(value / table[i - 1][0], digits) + " " + table[i - 1][1] + unit;
        }
        return text + " " + table[i][1] + unit;
      }
    }
  }
  function fmtTime(s) {
    return s >= 1e3 ? sig(s, Math.max(3, String(Math.floor(s)).length)) + " s" : si(s, "s");
  }
  function fmtBytes(b) { return si(b, "B"); }
  function fmtCount(n) { return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  function onReady(fn) {
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn);
    else fn();
  }
  function bootAll(selector, listName, make) {
    root[listName] = root[listName] || [];
    Array.prototype.forEach.call(document.querySelectorAll(selector), function (card) {
      if (card.getAttribute("data-booted")) return;
      card.setAttribute("data-booted", "1");
      root[listName].push(make(card));
    });
  }

  /* The lines of `now` not in `before`, in their order (what a change altered). */
  function changedLines(before, now) {
    var old = {};
    before.split("\n").forEach(function (line) { old[line] = true; });
    return now.split("\n").filter(function (line) { return line && !old[line]; });
  }
  function announcer(card, shown) {  // shown: the readout on the page before any change
    var region = card.querySelector(".rx-live-region"), timer = null, heard = shown;
    return function (lead, readout) {
      if (!region) return;
      clearTimeout(timer);
      timer = setTimeout(function () {
        var lines = changedLines(heard, readout);
        heard = readout;
        region.textContent = [lead].concat(lines.length ? lines : ["no figure changed"])
          .filter(Boolean).join(". ");
      }, 400);
    };
  }

  root.RooflineWeb = {sig: sig, si: si, fmtTime: fmtTime, fmtBytes: fmtBytes, fmtCount: fmtCount,
                      onReady: onReady, bootAll: bootAll, announcer: announcer,
                      changedLines: changedLines};
})();
