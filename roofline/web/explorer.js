/* Rooflines: the page explorers, computed and drawn (SVG) in the browser.
 *
 * No dependencies, no network: each explorer's card (a div of class roofline-explorer) carries
 * its data as JSON in a script element of class rx-data (exported by the Python package,
 * roofline.web: the catalog figures and the starting values) and this script, inlined once per
 * explorer, defines window.RooflineExplorer once and boots every explorer on the page.
 * (No markup in this file, not even in comments: it is inlined into the page.)
 *
 * The formulas mirror the package (roofline.estimate, roofline.costs, roofline.collectives):
 *   ridge = peak / bandwidth; attainable = min(peak, bandwidth * I)
 *   matmul: FLOPs 2BDF, bytes a*B*D + w*D*F + o*B*F; exact critical batch
 *     B* = ridge*w*D*F / (2DF - ridge*(a*D + o*F)) (infinite when the denominator <= 0)
 *   sharded over n chips along D: per chip FLOPs 2BDF/n, HBM bytes of the [B, D/n] x [D/n, F]
 *     slice, link bytes on the busiest link of the all-reduce of the 2BF-byte partial sums
 *     (the package's bytes per byte of the array, exported per chip, n and slice choice: one
 *     axis of a larger slice or the n chips alone; no routing here); bound = slowest of
 *     compute, memory, link (ties: compute, memory).
 * window.rooflineExplorers[i].state() returns the numbers behind the figure; .set({...})
 * moves controls through the same path as a reader's input.
 */
(function () {
  "use strict";
  if (!window.RooflineExplorer) {
    var SVGNS = "http://www.w3.org/2000/svg";
    var COLOURS = {black: "#000000", orange: "#E69F00", sky: "#56B4E9", green: "#009E73",
                   yellow: "#F0E442", blue: "#0072B2", red: "#D55E00", purple: "#CC79A7"};

    // ------------------------------------------------------------ number formats
    // roofline.units, shared by every explorer (common.js, inlined before this script)
    var RW = window.RooflineWeb, sig = RW.sig, si = RW.si, fmtTime = RW.fmtTime;
    // rates and intensities: 4 significant digits, as roofline.units.RATE_DIGITS
    function fmtRate(f) { return si(f, "FLOP/s", 4); }
    function fmtBw(b) { return si(b, "B/s", 4); }
    function fmtI(x) { return sig(x, 4) + " FLOPs/B"; }
    var fmtInt = RW.fmtCount;

    // ------------------------------------------------------------ the model (mirrors roofline)
    var model = {
      peak: function (chip, dtype) {                 // Chip.peak_flops_per_s(dtype)
        var p = chip.matrix[dtype];
        return p !== undefined ? p : chip.vector[dtype];
      },
      roofline: function (chip, dtype, intensity) {
        var peak = model.peak(chip, dtype), bw = chip.hbm_bytes_per_s, ridge = peak / bw;
        return {chip: chip.name, dtype: dtype, intensity: intensity, peak_flops_per_s: peak,
                hbm_bytes_per_s: bw, ridge: ridge, attainable_flops_per_s: Math.min(peak, bw * intensity),
                bound: intensity >= ridge ? "compute" : "memory"};
      },
      matmul: function (data, chip, dtype, weights, B, D, F) {
        var by = data.dtype_bytes, a = by[dtype], o = by[dtype], w = by[weights || dtype];
        var peak = chip.matrix[dtype], bw = chip.hbm_bytes_per_s, ridge = peak / bw;
        var flops = 2 * B * D * F, bytes = a * B * D + w * D * F + o * B * F;
        var intensity = flops / bytes, tMath = flops / peak, tMem = bytes / bw;
        var denominator = 2 * D * F - ridge * (a * D + o * F);
        return {chip: chip.name, dtype: dtype, weights: weights || dtype, B: B, D: D, F: F,
                flops: flops, bytes: bytes, intensity: intensity, peak_flops_per_s: peak,
                hbm_bytes_per_s: bw, ridge: ridge,
                attainable_flops_per_s: Math.min(peak, bw * intensity),
                t_math: tMath, t_memory: tMem, t_lower: Math.max(tMath, tMem), t_upper: tMath + tMem,
                bound: tMath >= tMem ? "compute" : "memory",
                critical_batch: ridge * w / 2,
                exact_critical_batch: denominator > 0 ? ridge * w * D * F / denominator : Infinity};
      },
      allReduce: function (chip, n, slice) {         // roofline.web.sharded_link, looked up
        var byN = chip.link && chip.link.all_reduce ? chip.link.all_reduce[String(n)] : null;
        if (!byN) return null;
        return byN[slice] || byN.axis;               // a switch or mesh: no slice of its own
      },
      sharded: function (data, chip, n, B, D, F, link, slice) {
        var e = data.dtype_bytes.bf16, peak = chip.matrix.bf16, bw = chip.hbm_bytes_per_s;
        var d = D / n, flops = 2 * B * d * F, bytes = e * B * d + e * d * F + e * B * F;
        var ar = model.allReduce(chip, n, slice || "axis"), links = (chip.link && chip.link.count) || 1;
        // bytes on the busiest link, one way: per_byte x the array (the 2BF-byte partial sums)
        var linkBytes = ar.per_byte * B * F * e;
        var t = [flops / peak, bytes / bw, linkBytes / link], kinds = ["compute", "memory", "link"];
        var best = 0;
        for (var i = 1; i < 3; i++) if (t[i] > t[best]) best = i;
        return {chip: chip.name, n: n, B: B, D: D, F: F, link_bytes_per_s: link, topology: ar.topology,
                slice: slice || "axis", where: ar.where,
                links: links, flops: flops, hbm_bytes: bytes, link_bytes: linkBytes,
                peak_flops_per_s: peak, hbm_bytes_per_s: bw,
                t_math: t[0], t_memory: t[1], t_link: t[2], bound: kinds[best],
                threshold_D: n * ar.per_byte * e * peak / (2 * link)};
      }
    };

    // ------------------------------------------------------------ SVG helpers
    function el(name, attrs, parent, text) {
      var node = document.createElementNS(SVGNS, name);
      for (var k in attrs) node.setAttribute(k, attrs[k]);
      if (text !== undefined) node.textContent = text;
      if (parent) parent.appendChild(node);
      return node;
    }
    function logScale(lo, hi, a, b) {
      var l0 = Math.log(lo), span = Math.log(hi) - l0;
      return function (v) { return a + (b - a) * (Math.log(v) - l0) / span; };
    }
    function decades(lo, hi) {
      var out = [];
      for (var k = Math.ceil(Math.log10(lo) - 1e-9); k <= Math.floor(Math.log10(hi) + 1e-9); k++) out.push(Math.pow(10, k));
      return out;
    }
    function sup(k, base) { return (base || "10") + String(k).split("").map(function (c) { return "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"["-0123456789".indexOf(c)]; }).join(""); }

    /* A log-log frame: axes, ticks and their labels (most of the figure's text), built only
     * when its size or ranges change; f.g, the group of everything else (title, roof, curves,
     * points, labels), is emptied and gets the title. Returns the scales and f.g. */
    function frame(ex, W, H, x, y, opts) {
      var key = [W, H, x[0], x[1], y[0], y[1]].join("|"), f = ex._frame;
      if (!(f && f.key === key && f.svg.parentNode === ex.figure)) f = newFrame(ex, W, H, x, y, opts, key);
      while (f.g.firstChild) f.g.removeChild(f.g.firstChild);
      el("text", {x: 4, y: 15, "font-size": 13, "font-weight": "bold", fill: "#000"}, f.g, opts.title);
      return f;
    }
    function newFrame(ex, W, H, x, y, opts, key) {
      // never wider than the card: below the 300 px layout (a 320 px phone) it scales down
      var svg = el("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
                           style: "max-width:100%;height:auto;display:block",
                           "font-family": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"});
      var title = el("title", {}, svg, "");
      var xt = opts.xticks(x[0], x[1]), yt = decades(y[0], y[1]), ylabels = yt.map(opts.ylabel);
      var widest = Math.max.apply(null, ylabels.map(function (t) { return t.length; }));
      var m = {l: Math.round(widest * 6.3 + 10), r: 18, t: 40, b: 38};  // room for the tick labels
      var sx = logScale(x[0], x[1], m.l, W - m.r), sy = logScale(y[0], y[1], H - m.b, m.t);
      el("rect", {x: 0, y: 0, width: W, height: H, fill: "#ffffff"}, svg);
      var axes = el("g", {"font-size": 11, fill: "#000"}, svg);
      var every = Math.max(1, Math.ceil(xt.length / Math.max(2, Math.floor((W - m.l - m.r) / 52))));
      xt.forEach(function (v, i) {
        var px = sx(v);
        el("line", {x1: px, x2: px, y1: m.t, y2: H - m.b, stroke: "#e3e3e3"}, axes);
        if (i % every === 0) el("text", {x: px, y: H - m.b + 14, "text-anchor": i === xt.length - 1 && px > W - m.r - 12 ? "end" : "middle"},
                                axes, opts.xlabel(v));
      });
      var yevery = Math.max(1, Math.ceil(yt.length / Math.max(2, Math.floor((H - m.t - m.b) / 22))));
      yt.forEach(function (v, i) {
        var py = sy(v);
        el("line", {x1: m.l, x2: W - m.r, y1: py, y2: py, stroke: "#e3e3e3"}, axes);
        if (i % yevery === 0) el("text", {x: m.l - 4, y: py + 4, "text-anchor": "end"}, axes, ylabels[i]);
      });
      el("rect", {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: "none", stroke: "#000"}, axes);
      el("text", {x: (m.l + W - m.r) / 2, y: H - 6, "text-anchor": "middle"}, axes, opts.xtitle);
      el("text", {x: 4, y: m.t - 8, fill: "#333"}, axes, opts.ytitle + " \u2191");
      var f = {sx: sx, sy: sy, m: m, W: W, H: H, svg: svg, title: title, key: key,
               g: el("g", {"class": "rx-moving"}, svg)};
      ex._frame = f;
      if (ex.figure.replaceChildren) ex.figure.replaceChildren(svg);
      else { ex.figure.innerHTML = ""; ex.figure.appendChild(svg); }
      return f;
    }
    function clampPx(f, v) { return Math.max(f.m.l, Math.min(f.W - f.m.r, f.sx(v))); }

    /* A label in a white box at (px, py); flipped left of the point in the right part. It
     * stays above the row of region names ("memory-bound", "compute-bound") at the bottom of
     * the plot: a point low in the plot (chapter 9's CPU) put its label over them. */
    var REGION_ROW = 22;   // px above the x axis kept for the region names
    function label(f, px, py, lines, colour) {
      var widest = Math.max.apply(null, lines.map(function (s) { return s.length; })) * 6.4 + 8;
      var x = px + 10 + widest <= f.W - f.m.r ? px + 10 : Math.max(f.m.l + 2, px - 10 - widest);
      var h = 15 * lines.length + 4;
      var y = Math.min(Math.max(py + 6, f.m.t + 2), f.H - f.m.b - REGION_ROW - h);
      var g = el("g", {"font-size": 11, "class": "rx-label"}, f.g);
      el("rect", {x: x, y: y, width: widest, height: h, rx: 3, fill: "#fff", stroke: colour}, g);
      lines.forEach(function (s, i) { el("text", {x: x + 4, y: y + 14 + 15 * i, fill: "#000"}, g, s); });
    }

    function drawRoof(f, peak, bw, x) {
      var ridge = peak / bw, sx = f.sx, sy = f.sy;
      el("rect", {x: f.m.l, y: f.m.t, width: Math.max(0, clampPx(f, ridge) - f.m.l), height: f.H - f.m.t - f.m.b,
                  fill: COLOURS.sky, "fill-opacity": 0.10}, f.g);
      el("rect", {x: clampPx(f, ridge), y: f.m.t, width: Math.max(0, f.W - f.m.r - clampPx(f, ridge)),
                  height: f.H - f.m.t - f.m.b, fill: COLOURS.yellow, "fill-opacity": 0.14}, f.g);
      el("text", {x: f.m.l + 6, y: f.H - f.m.b - 8, "font-size": 11, fill: "#333", "class": "rx-region"}, f.g, "memory-bound");
      el("text", {x: f.W - f.m.r - 6, y: f.H - f.m.b - 8, "font-size": 11, fill: "#333", "text-anchor": "end", "class": "rx-region"}, f.g, "compute-bound");
      el("polyline", {points: [sx(x[0]) + "," + sy(bw * x[0]), sx(ridge) + "," + sy(peak), sx(x[1]) + "," + sy(peak)].join(" "),
                      fill: "none", stroke: COLOURS.blue, "stroke-width": 2.5, "class": "rx-roof"}, f.g);
      el("line", {x1: sx(ridge), x2: sx(ridge), y1: sy(peak), y2: f.H - f.m.b, stroke: "#000",
                  "stroke-dasharray": "2 3", "stroke-width": 1}, f.g);
      // the ridge's value right of the ridge, or left of it where it would leave the frame
      var ridgeText = "ridge " + fmtI(ridge), fitsRight = sx(ridge) + 4 + ridgeText.length * 6.4 <= f.W - 2;
      el("text", {x: fitsRight ? sx(ridge) + 4 : sx(ridge) - 4, y: sy(peak) - 6, "font-size": 11, fill: "#000",
                  "text-anchor": fitsRight ? "start" : "end"}, f.g, ridgeText);
    }
    function drawPoints(f, points) {
      points.forEach(function (p) {
        var px = f.sx(p.x), py = f.sy(p.y);
        el("line", {x1: px, x2: px, y1: f.H - f.m.b, y2: py, stroke: p.colour, "stroke-dasharray": "3 2"}, f.g);
        el("path", {d: "M" + px + " " + (py - 7) + "l7 7l-7 7l-7 -7z", fill: p.colour, stroke: "#000", "class": "rx-point"}, f.g);
        label(f, px, py, p.lines, p.colour);
      });
    }
    /* One pair of axes for every chip and dtype of the menu: switching them moves the roof
     * (the eye can compare) and redraws only the moving part. */
    function rooflineRanges(ex) {
      if (ex._ranges) return ex._ranges;
      var x = ex.data.x_range.slice(), peaks = [], slopes = [];
      for (var name in ex.chips) {
        var chip = ex.chips[name];
        chip.dtypes.forEach(function (d) {
          var p = model.peak(chip, d);
          if (p === undefined) return;
          peaks.push(p); slopes.push(chip.hbm_bytes_per_s);
          x = [Math.min(x[0], p / chip.hbm_bytes_per_s / 100), Math.max(x[1], p / chip.hbm_bytes_per_s * 100)];
        });
      }
      var low = Math.min.apply(null, slopes) * x[0], high = Math.max.apply(null, peaks) * 2;
      ex._ranges = {x: x, y: [Math.pow(10, Math.floor(Math.log10(low))), Math.pow(10, Math.ceil(Math.log10(high)))]};
      return ex._ranges;
    }
    var decadeTicks = {xticks: decades, xlabel: function (v) { return v >= 0.01 && v <= 1e4 ? String(+v.toPrecision(3)) : sup(Math.round(Math.log10(v))); },
                       ylabel: function (v) { return si(v, "FLOP/s", 2).replace(" ", "\u2009"); }};

    // ------------------------------------------------------------ the explorer
    function Explorer(root, data) {
      this.root = root;
      this.data = data;
      this.chips = data.chips;
      this.values = {};
      this.timings = [];
      this.figure = root.querySelector(".rx-figure");
      this.readout = root.querySelector(".roofline-explorer-caption");
      this.controls = {};
      var self = this;
      Array.prototype.forEach.call(root.querySelectorAll("[data-control]"), function (input) {
        var name = input.getAttribute("data-control");
        self.controls[name] = input;
        input.disabled = false;
        var handler = function () { self._fromControl(name); };
        input.addEventListener(input.tagName === "SELECT" ? "change" : "input", handler);
      });
      // the number field beside each slider: an exact value, committed on Enter, Tab or a step
      this.numbers = {};
      Array.prototype.forEach.call(root.querySelectorAll("[data-number]"), function (input) {
        var name = input.getAttribute("data-number");
        self.numbers[name] = input;
        input.disabled = false;
        input.addEventListener("change", function () { self._fromNumber(name); });
      });
      this.liveRegion = root.querySelector(".rx-live-region");
      var start = data.start;
      for (var k in start) this.values[k] = start[k];
      this._syncOptions();
      root.classList.add("rx-live");
      var staticFrame = root.querySelector(".rx-static");
      if (staticFrame) staticFrame.style.display = "none";
      this.figure.style.display = "block";
      this.render();
      if (window.ResizeObserver) {
        var width = this.figure.clientWidth;
        new ResizeObserver(function () {
          if (Math.abs(self.figure.clientWidth - width) > 2) { width = self.figure.clientWidth; self.render(); }
        }).observe(this.figure);
      }
    }
    Explorer.prototype.spec = function (name) { return this.data.controls[name]; };
    Explorer.prototype.chip = function () { return this.chips[this.values.chip]; };
    /* A slider's position <-> value: log10 or log2 scales; whole numbers where asked. */
    Explorer.prototype._valueOf = function (name, position) {
      var s = this.spec(name), v = Math.pow(s.scale === "log2" ? 2 : 10, position);
      return s.integer ? Math.round(v) : v;
    };
    Explorer.prototype._positionOf = function (name, value) {
      return this.spec(name).scale === "log2" ? Math.log2(value) : Math.log10(value);
    };
    Explorer.prototype._fromControl = function (name) {
      var t0 = performance.now();
      var input = this.controls[name];
      if (input.tagName === "SELECT") {
        var v = input.value;
        this.values[name] = name === "n" ? Number(v) : (name === "weights" && v === "" ? null : v);
      } else {
        this.values[name] = this._valueOf(name, Number(input.value));
      }
      this._changed(name);
      this.render();
      this.timings.push(performance.now() - t0);
      this._announce(name);
    };
    /* A value typed in (or stepped in) a slider's number field, in the field's unit
     * (data-per-unit: bytes/s or FLOPs/B per unit), kept within the slider's range. */
    Explorer.prototype._fromNumber = function (name) {
      var input = this.numbers[name], s = this.spec(name);
      var value = Number(input.value) * Number(input.getAttribute("data-per-unit") || 1);
      if (isFinite(value) && value > 0) {
        var base = s.scale === "log2" ? 2 : 10;
        value = Math.min(Math.max(value, Math.pow(base, s.min)), Math.pow(base, s.max));
        this.values[name] = s.integer ? Math.max(1, Math.round(value)) : value;
        this._changed(name);
        this.render();
        this._announce(name);
      } else {
        this._syncOptions();   // not a positive number: the field shows the value in use again
      }
    };
    /* What a screen reader hears once the reader pauses: the readout (a chip change names the
     * chip first). A polite live region, updated 0.4 s after the last change. */
    Explorer.prototype._announce = function (name) {
      var region = this.liveRegion, text = this.readout.textContent.replace(/\n/g, ". ");
      if (!region) return;
      if (name === "chip") text = "Chip changed to " + this.values.chip + ". " + text;
      clearTimeout(this._announceTimer);
      this._announceTimer = setTimeout(function () { region.textContent = text; }, 400);
    };
    /* Keep dependent choices valid (dtype follows the chip, weights the dtype, n the chip). */
    Explorer.prototype._changed = function (name) {
      if (name === "chip" && this.values.link_bytes_per_s !== undefined) {
        var link = this.chip().link;
        if (link) this.values.link_bytes_per_s = link.one_way_bytes_per_s;
      }
      this._syncOptions();
    };
    function setOptions(select, options, value) {
      var key = options.map(function (o) { return o[0] + "=" + o[1]; }).join("|");
      if (select.getAttribute("data-options") !== key) {
        select.innerHTML = "";
        options.forEach(function (o) {
          var opt = document.createElement("option");
          opt.value = o[0]; opt.textContent = o[1];
          select.appendChild(opt);
        });
        select.setAttribute("data-options", key);
      }
      select.value = value;
    }
    Explorer.prototype.dtypeChoices = function () {
      var chip = this.chip(), matrixOnly = this.data.kind === "matmul";
      return chip.dtypes.filter(function (d) { return !matrixOnly || chip.matrix[d] !== undefined; });
    };
    Explorer.prototype.weightChoices = function () {
      var by = this.data.dtype_bytes, dt = this.values.dtype;
      return Object.keys(by).filter(function (d) { return d !== dt && by[d] <= by[dt]; });
    };
    Explorer.prototype.nChoices = function () {
      var link = this.chip().link;
      return this.data.n_choices.filter(function (k) {
        var most = !link ? null : link.most_chips;   // roofline.topology.most_chips_on_one_axis
        return !most || k <= most;
      });
    };
    Explorer.prototype._syncOptions = function () {
      var v = this.values, c = this.controls;
      if (v.dtype !== undefined) {
        var dtypes = this.dtypeChoices();
        if (dtypes.indexOf(v.dtype) < 0) v.dtype = dtypes.indexOf("bf16") >= 0 ? "bf16" : dtypes[0];
        if (c.dtype) setOptions(c.dtype, dtypes.map(function (d) { return [d, d]; }), v.dtype);
      }
      if (v.weights !== undefined) {
        var ws = this.weightChoices();
        if (v.weights !== null && ws.indexOf(v.weights) < 0) v.weights = null;
        if (c.weights) setOptions(c.weights, [["", "same as the math (" + v.dtype + ")"]].concat(
          ws.map(function (d) { return [d, d]; })), v.weights === null ? "" : v.weights);
      }
      if (v.n !== undefined) {
        var ns = this.nChoices();
        if (ns.indexOf(v.n) < 0) v.n = ns.filter(function (k) { return k <= v.n; }).pop() || ns[0];
        if (c.n) setOptions(c.n, ns.map(function (k) { return [String(k), String(k)]; }), String(v.n));
      }
      if (v.slice !== undefined && c.slice) {
        // a slice of its own differs from one axis only on a TPU torus; elsewhere both are the
        // chip's switch or mesh, so the control rests (its value is kept for the next TPU)
        // the package exports an "alone" choice only where it differs (roofline.web.slice_choices)
        var link = this.chip().link, byN = link && link.all_reduce ? link.all_reduce[String(v.n)] : null;
        var torus = !!(byN && byN.alone);
        c.slice.disabled = !torus;
        c.slice.title = torus ? "" : "only a TPU torus has slices: " + this.chip().name + " is the same either way";
        c.slice.value = v.slice;
      }
      if (c.chip) c.chip.value = v.chip;
      for (var name in c) {
        var s = this.spec(name);
        if (s && s.type === "range") {
          c[name].value = this._positionOf(name, v[name]);
          c[name].setAttribute("aria-valuetext", this.formatValue(name, v[name]));
          var field = this.numbers && this.numbers[name];
          if (field) {
            var shown = v[name] / Number(field.getAttribute("data-per-unit") || 1);
            field.value = String(Number(shown.toPrecision(6)));
          }
        }
      }
    };
    Explorer.prototype.formatValue = function (name, v) {
      if (name === "intensity") return fmtI(v);
      if (name === "link_bytes_per_s") return fmtBw(v);
      return fmtInt(v);
    };
    /* Move controls, e.g. set({chip: "H200", B: 256}): the same path as a reader's input. */
    Explorer.prototype.set = function (values) {
      for (var k in values) {
        if (!(k in this.values)) throw new Error("this explorer has no control " + k + "; its controls are " + Object.keys(this.values).join(", "));
        if (k === "chip" && !(values[k] in this.chips)) throw new Error("no chip " + values[k] + " in this explorer's menu");
        this.values[k] = values[k];
        this._changed(k);
      }
      this.render();
      return this.state();
    };
    Explorer.prototype.state = function () {
      var v = this.values, d = this.data, chip = this.chip();
      if (d.kind === "roofline") return model.roofline(chip, v.dtype, v.intensity);
      if (d.kind === "matmul") {
        var out = model.matmul(d, chip, v.dtype, v.weights, v.B, v.D, v.F);
        if (!isFinite(out.exact_critical_batch)) out.exact_critical_batch = "inf";
        return out;
      }
      return model.sharded(d, chip, v.n, v.B, v.D, v.F, v.link_bytes_per_s, v.slice);
    };
    Explorer.prototype.render = function () {
      var W = Math.round(Math.max(300, Math.min(660, this.figure.clientWidth || 640)));
      var H = Math.round(Math.max(260, Math.min(400, W * 0.62)));
      var text = this["draw_" + this.data.kind](W, H), f = this._frame;
      f.title.textContent = text.alt;
      f.svg.setAttribute("aria-label", text.alt);
      this.readout.textContent = text.readout;
    };
    Explorer.prototype.draw_roofline = function (W, H) {
      var s = this.state(), chip = this.chip();
      var r = rooflineRanges(this);
      var f = frame(this, W, H, r.x, r.y, Object.assign({title: "Roofline: " + chip.name + " (" + s.dtype + ", dense)",
        xtitle: "Arithmetic intensity (FLOPs/byte)", ytitle: "Attainable FLOP/s"}, decadeTicks));
      drawRoof(f, s.peak_flops_per_s, s.hbm_bytes_per_s, r.x);
      drawPoints(f, [{x: s.intensity, y: s.attainable_flops_per_s, colour: COLOURS.black,
                     lines: [fmtI(s.intensity), fmtRate(s.attainable_flops_per_s)]}]);
      return {readout: chip.name + ", " + s.dtype + ": an operation at " + fmtI(s.intensity) + "\nattainable " +
                fmtRate(s.attainable_flops_per_s) + " of " + fmtRate(s.peak_flops_per_s) + " peak; " + s.bound +
                "-bound (ridge point " + fmtI(s.ridge) + ")",
              alt: "Roofline of the " + chip.name + " in " + s.dtype + " with its ridge point at " + fmtI(s.ridge) +
                "; an operation at " + fmtI(s.intensity) + " reaches " + fmtRate(s.attainable_flops_per_s) +
                " and is " + s.bound + "-bound."};
    };
    Explorer.prototype.draw_matmul = function (W, H) {
      var s = this.state(), chip = this.chip();
      var r = rooflineRanges(this);
      var f = frame(this, W, H, r.x, r.y, Object.assign({title: "X[B, D] @ W[D, F] on the " + chip.name + " (" + s.dtype + ")",
        xtitle: "Arithmetic intensity (FLOPs/byte)", ytitle: "Attainable FLOP/s"}, decadeTicks));
      drawRoof(f, s.peak_flops_per_s, s.hbm_bytes_per_s, r.x);
      drawPoints(f, [{x: s.intensity, y: s.attainable_flops_per_s, colour: COLOURS.orange,
                     lines: ["B=" + fmtInt(s.B) + ": " + fmtI(s.intensity), fmtRate(s.attainable_flops_per_s)]}]);
      var exact = s.exact_critical_batch === "inf" ? "never: memory-bound at every B for this D, F" : sig(s.exact_critical_batch, 4);
      var head = "B=" + s.B + ", D=" + s.D + ", F=" + s.F + ", " + s.dtype + " math, " + s.weights + " weights";
      return {readout: head + ": intensity " + fmtI(s.intensity) + ", " + s.bound + "-bound\ntime between " +
                fmtTime(s.t_lower) + " and " + fmtTime(s.t_upper) + "; attainable " + fmtRate(s.attainable_flops_per_s) +
                "\ncritical batch: approximate (B << D, F) " + sig(s.critical_batch, 4) + "; exact for this D, F " + exact,
              alt: "Roofline of the " + chip.name + " (" + s.dtype + "); a matmul with " + head.split(", " + s.dtype)[0] +
                " and " + s.weights + " weights sits at " + fmtI(s.intensity) + ", " + s.bound + "-bound. Critical batch about " +
                sig(s.critical_batch, 4) + " (exact " + exact + ")."};
    };
    Explorer.prototype.draw_sharded_matmul = function (W, H) {
      var s = this.state(), chip = this.chip(), d = this.data, v = this.values, self = this;
      var dr = d.controls.D, lo = Math.pow(2, dr.min), hi = Math.pow(2, dr.max);
      var ks = d.controls.link_bytes_per_s, key = v.B + "x" + v.F;
      if (!this._ranges || this._ranges.key !== key) {
        // one y range for every chip, n and link the controls allow (for this B and F): moving
        // them moves the curves against fixed axes
        var times = [];
        for (var name in this.chips) {
          var c = this.chips[name], byN = c.link.all_reduce;
          Object.keys(byN).forEach(function (n) {
            Object.keys(byN[n]).forEach(function (slice) {
              [Math.pow(10, ks.min), Math.pow(10, ks.max)].forEach(function (bw) {
                [lo, hi].forEach(function (D) {
                  var e = model.sharded(d, c, Number(n), v.B, D, v.F, bw, slice);
                  times.push(e.t_math, e.t_memory, e.t_link);
                });
              });
            });
          });
        }
        this._ranges = {key: key, y: [Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, times)))),
                                      Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, times))))]};
      }
      var y = this._ranges.y;
      var mem = chip.memory_kind;
      var series = [["math", COLOURS.blue, "", "t_math"], [mem, COLOURS.green, "8 3 2 3", "t_memory"],
                    ["link", COLOURS.red, "6 4", "t_link"]];
      var f = frame(this, W, H, [lo, hi], y, {title: s.n + " \u00d7 " + chip.name + ", bf16, " + s.where,
        xtitle: "Contraction size D (split over n chips)", ytitle: "Time per chip",
        xticks: function (a, b) { var out = []; for (var k = Math.ceil(Math.log2(a)); k <= Math.log2(b); k += 2) out.push(Math.pow(2, k)); return out; },
        xlabel: function (x) { return x < 1e5 ? String(x) : sup(Math.round(Math.log2(x)), "2"); },
        ylabel: function (t) { return fmtTime(t).replace(" ", "\u2009"); }});
      var legend = el("g", {"font-size": 11}, f.g);
      series.forEach(function (sr, i) {
        var ly = f.m.t + 14 + 15 * i;
        el("line", {x1: f.m.l + 8, x2: f.m.l + 30, y1: ly - 4, y2: ly - 4, stroke: sr[1], "stroke-width": 2.2, "stroke-dasharray": sr[2]}, legend);
        el("text", {x: f.m.l + 34, y: ly, fill: "#000"}, legend, sr[0] + " per chip");
      });
      // math and HBM times are affine in D (t = t0 + slope * D): two evaluations give each curve
      var e1 = model.sharded(d, chip, s.n, s.B, 1, s.F, s.link_bytes_per_s, s.slice);
      var e2 = model.sharded(d, chip, s.n, s.B, 2, s.F, s.link_bytes_per_s, s.slice);
      series.forEach(function (sr) {
        var slope = e2[sr[3]] - e1[sr[3]], t0 = e1[sr[3]] - slope, pts = [];
        for (var k = Math.log2(lo); k <= Math.log2(hi) + 1e-9; k += 0.25) {
          var D = Math.pow(2, k);
          pts.push(f.sx(D).toFixed(1) + "," + f.sy(t0 + slope * D).toFixed(1));
        }
        el("polyline", {points: pts.join(" "), fill: "none", stroke: sr[1], "stroke-width": 2.2,
                        "stroke-dasharray": sr[2], "class": "rx-curve"}, f.g);
      });
      if (s.threshold_D >= lo && s.threshold_D <= hi) {
        var tx = f.sx(s.threshold_D);
        el("line", {x1: tx, x2: tx, y1: f.m.t, y2: f.H - f.m.b, stroke: "#000", "stroke-dasharray": "2 3"}, f.g);
      }
      el("text", {x: clampPx(f, s.threshold_D) + (s.threshold_D > Math.sqrt(lo * hi) ? -4 : 4), y: f.H - f.m.b - 6,
                  "font-size": 11, fill: "#000", "text-anchor": s.threshold_D > Math.sqrt(lo * hi) ? "end" : "start"},
         f.g, "math = link at D = " + fmtInt(s.threshold_D));
      var markers = [["t_math", COLOURS.blue, "circle"], ["t_memory", COLOURS.green, "diamond"], ["t_link", COLOURS.red, "square"]];
      markers.forEach(function (mk) {
        var px = f.sx(s.D), py = f.sy(s[mk[0]]);
        if (mk[2] === "circle") el("circle", {cx: px, cy: py, r: 5.5, fill: mk[1], stroke: "#000", "class": "rx-point"}, f.g);
        else if (mk[2] === "square") el("rect", {x: px - 5, y: py - 5, width: 10, height: 10, fill: mk[1], stroke: "#000", "class": "rx-point"}, f.g);
        else el("path", {d: "M" + px + " " + (py - 6) + "l6 6l-6 6l-6 -6z", fill: mk[1], stroke: "#000", "class": "rx-point"}, f.g);
      });
      var head = s.n + " \u00d7 " + chip.name + ", bf16, B=" + s.B + ", D=" + s.D + ", F=" + s.F + ", one link " +
                 fmtBw(s.link_bytes_per_s) + " one way, " + s.where;
      var times3 = "math " + fmtTime(s.t_math) + ", " + mem + " " + fmtTime(s.t_memory) + ", link " + fmtTime(s.t_link);
      return {readout: head + "\nper chip: " + times3 + " -> " + s.bound + "-bound\nlink threshold: math outlasts the link when D > " +
                fmtInt(s.threshold_D) + " (B and F cancel)",
              alt: "Time per chip against D for a matmul split over " + s.n + " " + chip.name + " chips (" + s.where + "): math, " + mem +
                " and link; math and link cross at D = " + fmtInt(s.threshold_D) + ". At D=" + s.D + ": " + times3 + ", " +
                s.bound + "-bound."};
    };

    window.RooflineExplorer = Explorer;
    window.RooflineExplorer.model = model;
    window.rooflineExplorers = window.rooflineExplorers || [];
  }
  function boot() {
    Array.prototype.forEach.call(document.querySelectorAll(".roofline-explorer"), function (root) {
      if (root.rooflineExplorer) return;
      var script = root.querySelector("script.rx-data");
      if (!script) return;
      root.rooflineExplorer = new window.RooflineExplorer(root, JSON.parse(script.textContent));
      window.rooflineExplorers.push(root.rooflineExplorer);
    });
  }
  window.RooflineWeb.onReady(boot);
})();
