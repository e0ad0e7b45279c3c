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
  var KIND_COLOURS = {compute: "#0072B2", memory: "#009E73", link: "#E69F00", bubble: "#D55E00"};
  var MEMORY_COLOURS = ["#0072B2", "#56B4E9", "#E69F00", "#CC79A7"];
  var AXES = ["tp", "ep", "fsdp", "pp", "dp"];
  var PRESETS = {
    "data parallel": [{}, "dp"], "FSDP": [{}, "fsdp"], "TP 8 \u00d7 DP": [{tp: 8}, "dp"],
    "TP 8 \u00d7 FSDP": [{tp: 8}, "fsdp"], "TP 8 \u00d7 PP 8 \u00d7 DP": [{tp: 8, pp: 8}, "dp"],
    "EP 8 \u00d7 FSDP (mixture of experts)": [{ep: 8}, "fsdp"]
  };

  // number formats: roofline.units, shared by every explorer (common.js)
  var RW = window.RooflineWeb, fmtTime = RW.fmtTime, fmtBytes = RW.fmtBytes;

  function layoutFor(preset, n) {
    var p = PRESETS[preset], out = {}, used = 1, k;
    for (k in p[0]) { used *= p[0][k]; }
    for (k in p[0]) { out[k] = p[0][k]; }
    out[p[1]] = n / used;
    return AXES.filter(function (a) { return (out[a] || 1) > 1; })
               .map(function (a) { return a + "=" + out[a]; }).join(" \u00d7 ");
  }

  var el = RW.svg;

  function Explorer(card) { RW.wire(this, card, "rx-step-data"); }  // common.js: the skeleton

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
    slider.setAttribute("aria-valuetext", RW.fmtCount(v.n_chips) + " chips");
    var out = this.card.querySelector('output[data-for="n_chips"]');
    if (out) out.textContent = RW.fmtCount(v.n_chips);
    this.caption.textContent = s.text;
    this.draw(s);
    if (name) {
      this.announce(name === "n_chips" ? RW.fmtCount(v.n_chips) + " chips" : name + " " + v[name],
                    s.text);
    }
  };

  Explorer.prototype.draw = function (s) {
    if (!s.possible) {
      var W = Math.round(Math.max(300, Math.min(660, this.figure.clientWidth || 660))), H = 120;
      var svg = el("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
                           "aria-label": s.title + ": not possible",
                           style: "max-width:100%;height:auto;display:block"});
      el("title", {}, svg).textContent = s.title + ": not possible";
      el("text", {x: W / 2, y: 18, "text-anchor": "middle", "font-size": 13}, svg).textContent = s.title;
      el("text", {x: W / 2, y: H / 2 + 10, "text-anchor": "middle", "font-size": 13}, svg).textContent = "not possible";
      this.figure.replaceChildren(svg);
      return;
    }
    RW.barsFigure(this.figure, {
      height: 300, title: s.title, short: s.title + ": " + s.bound + "-bound",
      label: s.title + ": " + s.bound + "-bound, best case " + fmtTime(s.t_lower) +
             "; memory per chip " + fmtBytes(s.memory_total),
      bars: s.times.map(function (t) { return {key: t.key, seconds: t.seconds, colour: KIND_COLOURS[t.kind]}; }),
      dashed: s.t_lower, timeTitle: "time per step (dashed: best case)",
      memory: s.memory.map(function (m, i) { return {part: m.part, bytes: m.bytes, colour: MEMORY_COLOURS[i]}; }),
      capacity: s.capacity
    });
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
      RW.bootAll(".roofline-step-explorer", "rooflineStepExplorers", function (card) { return new Explorer(card); });
    }
  };
  RW.onReady(window.RooflineStepExplorer.bootAll);
})();
