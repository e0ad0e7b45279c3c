/* Rooflines: the training-step explorer of the web edition (roofline.step_explorer).
 *
 * No dependencies, no network. Each card (class roofline-step-explorer) carries, as JSON in a
 * script element of class rx-step-data, every result the package computed with
 * roofline.training_step for the combinations its controls offer (a page has no Python): the
 * results array in the order model, chip, chip count, layout, recompute (the last varying
 * fastest); each entry is [t_lower, slowest, MFU ceiling (whole per cent), t_upper, seconds
 * per resource, label per resource, GB per memory part, total GB], rounded as shown, or the index of the reason it is refused. This
 * script looks the chosen one up, draws the bars in SVG and writes the readout exactly as
 * roofline.step_explorer.readout does. (No markup in this file: it is inlined into the page.)
 * window.rooflineStepExplorers[i].state() returns what is shown; .set({...}) moves controls.
 */
(function () {
  "use strict";
  if (window.RooflineStepExplorer) { window.RooflineStepExplorer.bootAll(); return; }
  var SVGNS = "http://www.w3.org/2000/svg";
  var KIND_COLOURS = {compute: "#0072B2", memory: "#009E73", link: "#E69F00", bubble: "#D55E00"};
  var MEMORY_COLOURS = ["#0072B2", "#56B4E9", "#E69F00", "#CC79A7"];
  var AXES = ["tp", "ep", "fsdp", "pp", "dp"];
  var PRESETS = {
    "data parallel": [{}, "dp"], "FSDP": [{}, "fsdp"], "TP 8 \u00d7 DP": [{tp: 8}, "dp"],
    "TP 8 \u00d7 FSDP": [{tp: 8}, "fsdp"], "TP 8 \u00d7 PP 8 \u00d7 DP": [{tp: 8, pp: 8}, "dp"],
    "EP 8 \u00d7 FSDP (mixture of experts)": [{ep: 8}, "fsdp"]
  };

  // number formats: roofline.units, shared by every explorer (common.js)
  var W = window.RooflineWeb, fmtTime = W.fmtTime, fmtBytes = W.fmtBytes;

  function layoutFor(preset, n) {
    var p = PRESETS[preset], out = {}, used = 1, k;
    for (k in p[0]) { used *= p[0][k]; }
    for (k in p[0]) { out[k] = p[0][k]; }
    out[p[1]] = n / used;
    return AXES.filter(function (a) { return (out[a] || 1) > 1; })
               .map(function (a) { return a + "=" + out[a]; }).join(" \u00d7 ");
  }

  function el(tag, attrs, parent) {
    var node = document.createElementNS(SVGNS, tag);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }

  function Explorer(card) {
    this.card = card;
    this.data = JSON.parse(card.querySelector("script.rx-step-data").textContent);
    this.controls = {};
    var self = this;
    card.querySelectorAll("[data-control]").forEach(function (control) {
      var name = control.getAttribute("data-control");
      self.controls[name] = control;
      control.disabled = false;
      control.addEventListener("input", function () { self.update(name); });
      control.addEventListener("change", function () { self.update(name); });
    });
    card.querySelector(".rx-static").style.display = "none";
    this.figure = card.querySelector(".rx-figure");
    this.figure.style.display = "block";
    this.caption = card.querySelector(".roofline-explorer-caption");
    this.announce = W.announcer(card, this.caption.textContent);
    this.update();
  }

  Explorer.prototype.values = function () {
    var d = this.data.controls, c = this.controls;
    return {
      model: c.model.value, chip: c.chip.value,
      n_chips: d.n_chips[Number(c.n_chips.value)],
      layout: c.layout.value, recompute: c.recompute.value
    };
  };

  /* The package's result for control values v ({model, chip, n_chips, layout, recompute}). */
  function entry(data, v) {
    var d = data.controls, index = 0;
    var names = ["model", "chip", "n_chips", "layout", "recompute"];
    for (var i = 0; i < names.length; i++) {
      index = index * d[names[i]].length + d[names[i]].indexOf(v[names[i]]);
    }
    return data.results[index];
  }

  /* What the card shows for control values v: the looked-up result and the readout as
   * roofline.step_explorer.readout writes it. Pure: node runs it in the fast tests. */
  function compute(data, v) {
    var e = entry(data, v);
    var title = v.model + " on " + v.n_chips + " \u00d7 " + v.chip + ", " + v.layout;
    if (typeof e === "number") {
      return {title: title, possible: false, reason: data.reasons[e],
              text: title + "\nnot possible: " + data.reasons[e]};
    }
    var times = [], memory = [];
    data.order.forEach(function (key, i) {
      if (e[4][i] !== null) {
        times.push({key: key, seconds: e[4][i], kind: data.kinds[key], label: data.labels[e[5][i]]});
      }
    });
    data.memory_parts.forEach(function (part, i) { memory.push({part: part, bytes: e[6][i] * 1e9}); });
    var slowestKey = data.order[e[1]];
    var slowest = times.filter(function (t) { return t.key === slowestKey; })[0];
    var total = e[7] * 1e9;
    var capacity = data.capacity[v.chip];
    var lines = [title, "layout " + layoutFor(v.layout, v.n_chips)];
    lines.push("per step: " + times.map(function (t) { return t.label + " " + fmtTime(t.seconds); }).join(", "));
    lines.push("best case " + fmtTime(e[0]) + " (" + slowest.kind + "-bound: " + slowest.label +
               "); no overlap " + fmtTime(e[3]) + "; MFU ceiling " + e[2] + "%");
    lines.push("memory per chip: " + memory.map(function (m) { return m.part + " " + fmtBytes(m.bytes); }).join(", ") +
               "; total " + fmtBytes(total) + " of " + fmtBytes(capacity) + " (" +
               (total <= capacity ? "fits" : "does NOT fit") + ")");
    return {title: title, possible: true, times: times, memory: memory, t_lower: e[0],
            t_upper: e[3], bound: slowest.kind, mfu: e[2], memory_total: total,
            capacity: capacity, fits: total <= capacity, text: lines.join("\n")};
  }

  Explorer.prototype.state = function () { return compute(this.data, this.values()); };

  /* name: the control just moved (none at start): a screen reader then hears its new value
   * and the readout lines that changed, once the reader pauses (common.js announcer). */
  Explorer.prototype.update = function (name) {
    var s = this.state(), slider = this.controls.n_chips, v = this.values();
    slider.setAttribute("aria-valuetext", W.fmtCount(v.n_chips) + " chips");
    var out = this.card.querySelector('output[data-for="n_chips"]');
    if (out) out.textContent = W.fmtCount(v.n_chips);
    this.caption.textContent = s.text;
    this.draw(s);
    if (name) {
      this.announce(name === "n_chips" ? W.fmtCount(v.n_chips) + " chips" : name + " " + v[name],
                    s.text);
    }
  };

  Explorer.prototype.draw = function (s) {
    var W = 660, H = 300, svg = el("svg", {viewBox: "0 0 " + W + " " + H, width: "100%",
      role: "img", "aria-label": s.possible ? s.title + ": " + s.bound + "-bound, best case " +
      fmtTime(s.t_lower) + "; memory per chip " + fmtBytes(s.memory_total) : s.title + ": not possible"});
    el("title", {}, svg).textContent = s.possible ? s.title + ": " + s.bound + "-bound" : s.title + ": not possible";
    el("text", {x: W / 2, y: 18, "text-anchor": "middle", "font-size": 14}, svg).textContent = s.title;
    if (!s.possible) {
      el("text", {x: W / 2, y: H / 2, "text-anchor": "middle", "font-size": 13}, svg).textContent = "not possible";
      this.figure.replaceChildren(svg);
      return;
    }
    var left = 60, right = 440, top = 34, bottom = H - 40;
    var values = s.times.map(function (t) { return t.seconds; });
    var lo = Math.log10(Math.min.apply(null, values) / 2);
    var hi = Math.log10(Math.max(s.t_upper, Math.max.apply(null, values)) * 1.5);
    function x(v) { return left + (Math.log10(v) - lo) / (hi - lo) * (right - left); }
    var bh = (bottom - top) / s.times.length;
    s.times.forEach(function (t, i) {
      var y = top + i * bh;
      el("rect", {x: left, y: y + 3, width: Math.max(1, x(t.seconds) - left), height: bh - 6,
                  fill: KIND_COLOURS[t.kind]}, svg);
      el("text", {x: left - 6, y: y + bh / 2 + 4, "text-anchor": "end", "font-size": 11}, svg)
        .textContent = t.key;
      el("text", {x: x(t.seconds) + 4, y: y + bh / 2 + 4, "font-size": 11}, svg).textContent = fmtTime(t.seconds);
    });
    el("line", {x1: x(s.t_lower), x2: x(s.t_lower), y1: top, y2: bottom, stroke: "#000",
                "stroke-dasharray": "4 3"}, svg);
    el("line", {x1: left, x2: right, y1: bottom, y2: bottom, stroke: "#000"}, svg);
    for (var p = Math.ceil(lo); p <= Math.floor(hi); p++) {
      el("line", {x1: x(Math.pow(10, p)), x2: x(Math.pow(10, p)), y1: bottom, y2: bottom + 4, stroke: "#000"}, svg);
      el("text", {x: x(Math.pow(10, p)), y: bottom + 16, "text-anchor": "middle", "font-size": 11}, svg)
        .textContent = fmtTime(Math.pow(10, p));
    }
    el("text", {x: (left + right) / 2, y: H - 6, "text-anchor": "middle", "font-size": 12}, svg)
      .textContent = "time per step (dashed: best case)";
    // memory per chip against capacity
    var mx = 540, mw = 40, peak = Math.max(s.memory_total, s.capacity) * 1.1;
    function my(b) { return bottom - b / peak * (bottom - top); }
    var base = 0;
    s.memory.forEach(function (m, i) {
      el("rect", {x: mx, y: my(base + m.bytes), width: mw, height: my(base) - my(base + m.bytes),
                  fill: MEMORY_COLOURS[i]}, svg);
      el("rect", {x: mx + mw + 14, y: bottom - 56 + 14 * i, width: 9, height: 9, fill: MEMORY_COLOURS[i]}, svg);
      el("text", {x: mx + mw + 26, y: bottom - 48 + 14 * i, "font-size": 10}, svg).textContent = m.part;
      base += m.bytes;
    });
    el("line", {x1: mx - 8, x2: mx + mw + 8, y1: my(s.capacity), y2: my(s.capacity), stroke: "#000",
                "stroke-width": 2}, svg);
    el("text", {x: mx + mw / 2, y: H - 6, "text-anchor": "middle", "font-size": 12}, svg)
      .textContent = "memory (line: capacity)";
    this.figure.replaceChildren(svg);
  };

  Explorer.prototype.set = function (values) {
    for (var k in values) {
      var c = this.controls[k];
      c.value = k === "n_chips" ? String(this.data.controls.n_chips.indexOf(values[k])) : values[k];
    }
    this.update();
    return this;
  };

  window.RooflineStepExplorer = {
    compute: compute,
    bootAll: function () {
      W.bootAll(".roofline-step-explorer", "rooflineStepExplorers", function (card) { return new Explorer(card); });
    }
  };
  W.onReady(window.RooflineStepExplorer.bootAll);
})();
