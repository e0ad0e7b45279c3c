/* Rooflines: the serving explorer of the web edition (roofline.serving_explorer).
 *
 * No dependencies, no network. Each card (class roofline-serving-explorer) carries, as JSON in
 * a script element of class rx-serving-data, the constants the package exported
 * (roofline.serving_explorer.web_constants): each model's counts, longest context and
 * attention groups (a sliding-window group meets and caches at most its window), each chip's dense bf16 peak,
 * HBM bandwidth and capacity, and each tensor-parallel all-reduce as seconds per byte plus a
 * fixed latency. This script mirrors roofline.serving.serving_estimate for one replica of tp
 * chips (bf16 matmuls and KV cache, the weights in the chosen dtype, a prompt as long as the
 * context), draws the bars in SVG and writes the readout exactly as
 * roofline.serving_explorer.readout does (a browser test compares the two).
 * (No markup in this file: it is inlined into the page.)
 * window.rooflineServingExplorers[i].state() returns what is shown; .set({...}) moves controls.
 */
(function () {
  "use strict";
  if (window.RooflineServingExplorer) { window.RooflineServingExplorer.bootAll(); return; }
  var BAR_COLOURS = {math: "#0072B2", HBM: "#009E73", TP: "#E69F00"};
  var MEMORY_COLOURS = {weights: "#0072B2", "KV cache": "#56B4E9", reserve: "#F0E442"};
  var SLIDERS = {tp: "chips", batch: "sequences", context: "tokens"};

  // number formats: roofline.units, shared by every explorer (common.js)
  var RW = window.RooflineWeb, fmtTime = RW.fmtTime, fmtBytes = RW.fmtBytes, fmtCount = RW.fmtCount;
  function fmtPerS(x) {  // roofline.serving_explorer._per_s
    var v = Number(x.toPrecision(3));
    return v >= 100 ? v.toLocaleString("en-US", {maximumFractionDigits: 0}) : String(v);
  }

  // roofline.models._keys_per_query: the keys one query meets, averaged over a sequence of
  // seq tokens; a sliding-window layer meets at most its window (null: no window)
  function keysPerQuery(seq, window, causal) {
    var w = window === null ? seq : Math.min(window, seq);
    return causal ? w - w * w / (2 * seq) : w;
  }
  // roofline.models.ModelConfig.attention_flops_per_token: every attention group's FLOPs per
  // query per key times the keys it meets (decode: against the cache; prefill: causal)
  function attentionFlops(m, ctx, prefill) {
    return m.attention.reduce(function (sum, g) {
      return sum + g.layers * ((prefill ? g.prefill : g.decode) * keysPerQuery(ctx, g.window, prefill));
    }, 0);
  }
  // ModelConfig.kv_cache_bytes: one sequence of ctx tokens, bf16; a windowed layer keeps at
  // most its window
  function kvBytes(m, ctx) {
    return m.attention.reduce(function (sum, g) {
      return sum + g.layers * (g.kv * (g.window === null ? ctx : Math.min(ctx, g.window)));
    }, 0);
  }

  // roofline.serving: one pass over `tokens` tokens, each attending over ctx (prefill: causal)
  function pass(m, chip, tp, tokens, ctx, wbytes, prefill, share) {
    var attention = attentionFlops(m, ctx, prefill);
    var flops = (2 * m.N + attention) * tokens / tp;
    var read = m.params - m.untied;
    if (m.experts > 1) {  // the experts the tokens route to: E (1 - (1 - k/E)^tokens)
      var distinct = m.experts * (1 - Math.pow(1 - m.k / m.experts, tokens));
      read = m.params - m.expert_params - m.untied + m.expert_params * distinct / m.experts;
    }
    var kv = (prefill ? 1 : tokens) * kvBytes(m, ctx) * share;  // prefill writes one prompt's
    var parts = {weights: read * wbytes / tp / chip.hbm, kv: kv / chip.hbm};
    var times = {math: flops / chip.peak, HBM: parts.weights + parts.kv};
    if (tp > 1) {
      var ar = chip.all_reduce[String(tp)];
      times.TP = 2 * m.L * (ar[0] * tokens * m.D * 2 + ar[1]);
    }
    return {times: times, parts: parts};
  }
  function slowest(times) {
    var best = null;
    ["math", "HBM", "TP"].forEach(function (k) {
      if (k in times && (best === null || times[k] > times[best])) best = k;
    });
    return best;
  }
  var KINDS = {math: "compute", HBM: "memory", TP: "link"};


  function Explorer(card) { RW.wire(this, card, "rx-serving-data"); }  // common.js: the skeleton

  Explorer.prototype.values = function () {
    var d = this.data.controls, c = this.controls, v = {};
    ["model", "chip", "weights"].forEach(function (k) { v[k] = c[k].value; });
    Object.keys(SLIDERS).forEach(function (k) { v[k] = d[k][Number(c[k].value)]; });
    return v;
  };

  /* What the card shows for control values v ({model, chip, weights, tp, batch, context}):
   * the package's serving_estimate mirrored on the exported constants, and the readout
   * as roofline.serving_explorer.readout writes it. Pure: node runs it in the fast tests. */
  function compute(data, v) {
    var m = data.models[v.model], chip = data.chips[v.chip], tp = v.tp;
    var wbytes = data.dtype_bytes[v.weights];
    var share = Math.max(Math.floor(m.kv_heads / tp), 1) / m.kv_heads;
    var decode = pass(m, chip, tp, v.batch, v.context, wbytes, false, share);
    var prefill = pass(m, chip, tp, v.context, v.context, wbytes, true, share);
    var key = slowest(decode.times), step = decode.times[key];
    var ttft = prefill.times[slowest(prefill.times)];
    var kvSeq = kvBytes(m, v.context) * share;
    var memory = {weights: m.params * wbytes / tp, "KV cache": v.batch * kvSeq,
                  reserve: data.reserve * chip.capacity};
    var total = memory.weights + memory["KV cache"] + memory.reserve;
    var maxBatch = Math.max(0, Math.floor((chip.capacity - memory.weights - memory.reserve) / kvSeq));
    var title = v.model + " on " + tp + " \u00d7 " + v.chip + ", batch " + v.batch +
                ", context " + fmtCount(v.context) + ", " + v.weights + " weights";
    var t = decode.times;
    var line = "decode step: math " + fmtTime(t.math) + ", HBM " + fmtTime(t.HBM) + " (weights " +
               fmtTime(decode.parts.weights) + ", KV cache " + fmtTime(decode.parts.kv) + ")";
    if ("TP" in t) line += ", TP all-reduces " + fmtTime(t.TP);
    var fits = total <= chip.capacity;
    var text = [title, line,
      "time per output token \u2265 " + fmtTime(step) + " (" + KINDS[key] + "-bound: " + key +
        "); \u2264 " + fmtPerS(v.batch / step) + " tokens/s; time to first token \u2265 " + fmtTime(ttft),
      "memory per chip: weights " + fmtBytes(memory.weights) + ", KV cache " +
        fmtBytes(memory["KV cache"]) + ", reserve " + fmtBytes(memory.reserve) + "; total " +
        fmtBytes(total) + " of " + fmtBytes(chip.capacity) + " (" + (fits ? "fits" : "does NOT fit") +
        "); largest batch that fits: " + fmtCount(maxBatch)].join("\n");
    return {title: title, times: t, bound: KINDS[key], slowest: key, t_step: step,
            tokens_per_s: v.batch / step, ttft: ttft, memory: memory, memory_total: total,
            capacity: chip.capacity, fits: fits, max_batch: maxBatch, text: text, values: v};
  }

  Explorer.prototype.state = function () { return compute(this.data, this.values()); };

  /* The context slider stops at the model's trained context (models[m].max_context, as
   * roofline.serving_explorer.contexts_for): a range input clamps its value to a lowered max. */
  Explorer.prototype.limitContext = function () {
    var slider = this.controls.context, offered = this.data.controls.context;
    var limit = this.data.models[this.controls.model.value].max_context, last = offered.length - 1;
    while (last > 0 && offered[last] > limit) last--;
    slider.max = String(last);
    if (Number(slider.value) > last) slider.value = String(last);
  };

  /* name: the control just moved (none at start): a screen reader then hears its new value
   * and the readout lines that changed, once the reader pauses (common.js announcer). */
  Explorer.prototype.update = function (name) {
    this.limitContext();
    var s = this.state(), card = this.card, c = this.controls;
    Object.keys(SLIDERS).forEach(function (k) {
      var value = s.values[k];
      c[k].setAttribute("aria-valuetext", fmtCount(value) + " " + SLIDERS[k]);
      var out = card.querySelector('output[data-for="' + k + '"]');
      if (out) out.textContent = fmtCount(value);
    });
    this.caption.textContent = s.text;
    this.draw(s);
    if (name) {
      var value = s.values[name];
      this.announce(name + " " + (name in SLIDERS ? fmtCount(value) + " " + SLIDERS[name] : value),
                    s.text);
    }
  };

  Explorer.prototype.draw = function (s) {
    RW.barsFigure(this.figure, {
      height: 260, title: s.title, short: s.title + ": " + s.bound + "-bound",
      label: s.title + ": " + s.bound + "-bound, " + fmtTime(s.t_step) + " per output token; memory per chip " +
             fmtBytes(s.memory_total) + " of " + fmtBytes(s.capacity),
      bars: ["math", "HBM", "TP"].filter(function (k) { return k in s.times; })
        .map(function (k) { return {key: k, seconds: s.times[k], colour: BAR_COLOURS[k]}; }),
      timeTitle: "time per decode step, per chip",
      memory: Object.keys(s.memory).map(function (part) {
        return {part: part, bytes: s.memory[part], colour: MEMORY_COLOURS[part]};
      }),
      capacity: s.capacity
    });
  };

  Explorer.prototype.set = function (values) {
    if ("model" in values) this.controls.model.value = values.model;
    this.limitContext();  // the context slider's range is the model's before a context is set
    for (var k in values) {
      var c = this.controls[k];
      c.value = k in SLIDERS ? String(this.data.controls[k].indexOf(values[k])) : values[k];
    }
    this.update();
    return this;
  };

  window.RooflineServingExplorer = {
    compute: compute,
    bootAll: function () {
      RW.bootAll(".roofline-serving-explorer", "rooflineServingExplorers", function (card) { return new Explorer(card); });
    }
  };
  RW.onReady(window.RooflineServingExplorer.bootAll);
})();
