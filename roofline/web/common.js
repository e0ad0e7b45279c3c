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
 *   wire(ex, card, dataClass): an explorer's data, controls, figure and readout hooked up;
 *   announcer(card, shown): what a screen reader hears after the reader pauses (0.4 s): the control
 *     moved and its value, then the readout lines that changed (not the title line, which
 *     restates the controls), never the whole readout again.
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
        // the readout's first line (its title) restates the controls: the lead names the change
        var lines = changedLines(heard, readout).filter(function (line) {
          return line !== readout.split("\n")[0];
        });
        heard = readout;
        region.textContent = [lead].concat(lines.length ? lines : ["no figure changed"])
          .filter(Boolean).join(". ");
      }, 400);
    };
  }

  /* The skeleton of an explorer that redraws as a whole (training step, serving). Sets on
   * `ex`: card; data (the JSON in the script element of class dataClass); controls by name
   * (enabled; a change calls ex.update(name)); figure (shown, the static first frame
   * hidden); caption; announce (the announcer above). A new figure width redraws
   * (ex.update() with no name: nothing is announced). Ends with ex.update(). */
  function wire(ex, card, dataClass) {
    ex.card = card;
    ex.data = JSON.parse(card.querySelector("script." + dataClass).textContent);
    ex.controls = {};
    Array.prototype.forEach.call(card.querySelectorAll("[data-control]"), function (control) {
      var name = control.getAttribute("data-control");
      ex.controls[name] = control;
      control.disabled = false;
      control.addEventListener("input", function () { ex.update(name); });
      control.addEventListener("change", function () { ex.update(name); });
    });
    var staticFrame = card.querySelector(".rx-static");
    if (staticFrame) staticFrame.style.display = "none";
    ex.figure = card.querySelector(".rx-figure");
    ex.figure.style.display = "block";
    ex.caption = card.querySelector(".roofline-explorer-caption");
    ex.announce = announcer(card, ex.caption.textContent);
    ex.update();
    if (root.ResizeObserver) {
      var width = ex.figure.clientWidth;
      new root.ResizeObserver(function () {
        if (Math.abs(ex.figure.clientWidth - width) > 2) { width = ex.figure.clientWidth; ex.update(); }
      }).observe(ex.figure);
    }
  }

  var SVGNS = "http://www.w3.org/2000/svg";
  function el(tag, attrs, parent, text) {
    var node = document.createElementNS(SVGNS, tag);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  /* A text of `size` px, squeezed to `room` px when it would be wider (about 0.6 em a glyph). */
  function fitText(parent, attrs, text, size, room) {
    var node = el("text", attrs, parent, text);
    node.setAttribute("font-size", size);
    if (text.length * size * 0.6 > room) {
      node.setAttribute("textLength", Math.round(room));
      node.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
    return node;
  }

  /* The training-step and serving explorers' figure, drawn at the figure's own width (300 to
   * 660 CSS px, so that text stays 10 to 13 px on a phone instead of shrinking with a scaled
   * drawing): time bars on a log axis (bars: [{key, seconds, colour}], an optional dashed
   * line at `dashed` seconds) and, at the right, memory per chip stacked against capacity
   * (memory: [{part, bytes, colour}], capacity in bytes). Replaces the figure's content. */
  function barsFigure(figure, spec) {
    var W = Math.round(Math.max(300, Math.min(660, figure.clientWidth || 660)));
    var narrow = W < 520, H = spec.height;
    var svg = el("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
                         "aria-label": spec.label, style: "max-width:100%;height:auto;display:block",
                         "font-family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"});
    el("title", {}, svg, spec.short);
    fitText(svg, {x: W / 2, y: 18, "text-anchor": "middle"}, spec.title, 13, W - 8);
    var mw = narrow ? 28 : 40, legend = 78, mx = W - mw - legend - 8;
    var left = 54, right = mx - (narrow ? 56 : 80), top = 34, bottom = H - 40;
    var values = spec.bars.map(function (b) { return b.seconds; });
    var lo = Math.log10(Math.min.apply(null, values) / 2);
    var hi = Math.log10(Math.max(spec.dashed || 0, Math.max.apply(null, values)) * 2);
    function x(v) { return left + (Math.log10(v) - lo) / (hi - lo) * (right - left); }
    var bh = (bottom - top) / spec.bars.length;
    spec.bars.forEach(function (b, i) {
      var y = top + i * bh;
      el("rect", {x: left, y: y + 3, width: Math.max(1, x(b.seconds) - left), height: bh - 6,
                  fill: b.colour}, svg);
      el("text", {x: left - 6, y: y + bh / 2 + 4, "text-anchor": "end", "font-size": 11}, svg, b.key);
      el("text", {x: x(b.seconds) + 4, y: y + bh / 2 + 4, "font-size": 11}, svg, fmtTime(b.seconds));
    });
    if (spec.dashed) {
      el("line", {x1: x(spec.dashed), x2: x(spec.dashed), y1: top, y2: bottom, stroke: "#000",
                  "stroke-dasharray": "4 3"}, svg);
    }
    el("line", {x1: left, x2: right, y1: bottom, y2: bottom, stroke: "#000"}, svg);
    var every = Math.max(1, Math.ceil((Math.floor(hi) - Math.ceil(lo) + 1) / Math.max(2, Math.floor((right - left) / 48))));
    for (var p = Math.ceil(lo), k = 0; p <= Math.floor(hi); p++, k++) {
      el("line", {x1: x(Math.pow(10, p)), x2: x(Math.pow(10, p)), y1: bottom, y2: bottom + 4, stroke: "#000"}, svg);
      if (k % every === 0) {
        el("text", {x: x(Math.pow(10, p)), y: bottom + 16, "text-anchor": "middle", "font-size": 11},
           svg, fmtTime(Math.pow(10, p)));
      }
    }
    fitText(svg, {x: (left + right) / 2, y: H - 6, "text-anchor": "middle"}, spec.timeTitle, 12,
            right - left + 40);
    var peak = Math.max(spec.memory.reduce(function (a, m) { return a + m.bytes; }, 0), spec.capacity) * 1.1;
    function my(b) { return bottom - b / peak * (bottom - top); }
    var base = 0;
    spec.memory.forEach(function (m, i) {
      el("rect", {x: mx, y: my(base + m.bytes), width: mw, height: my(base) - my(base + m.bytes),
                  fill: m.colour}, svg);
      el("rect", {x: mx + mw + 8, y: bottom - 14 * spec.memory.length + 14 * i, width: 9, height: 9,
                  fill: m.colour}, svg);
      el("text", {x: mx + mw + 20, y: bottom - 14 * spec.memory.length + 14 * i + 8, "font-size": 10},
         svg, m.part);
      base += m.bytes;
    });
    el("line", {x1: mx - 6, x2: mx + mw + 6, y1: my(spec.capacity), y2: my(spec.capacity), stroke: "#000",
                "stroke-width": 2}, svg);
    fitText(svg, {x: W - 4, y: H - 6, "text-anchor": "end"}, "memory (line: capacity)", 12,
            W - right - 44);
    figure.replaceChildren(svg);
    return svg;
  }

  root.RooflineWeb = {sig: sig, si: si, fmtTime: fmtTime, fmtBytes: fmtBytes, fmtCount: fmtCount,
                      onReady: onReady, bootAll: bootAll, announcer: announcer,
                      changedLines: changedLines, wire: wire, svg: el, barsFigure: barsFigure};
})();
