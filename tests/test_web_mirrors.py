"""Every JavaScript mirror of a package formula, held to the package in the fast tier.

node (no browser) loads the page scripts exactly as they are inlined (roofline.web.page_script:
common.js then the explorer's script) with a stand-in for the page (no cards on it, so nothing
boots), calls the pure functions each script exposes on the data the package exports, and
the results are compared with the package's: the serving explorer's readout with
roofline.serving_explorer.readout, the training-step explorer's with
roofline.step_explorer.readout, the kernel explorers' numbers with roofline.estimate & co.
(tests/test_browser_explorers.py drives the same scripts in Chromium: events, SVG, layout.)
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
import shutil
import subprocess

import pytest

import roofline as rl
from roofline import serving_explorer as sx
from roofline import step_explorer as stx
from roofline.web import explorer_data, page_script

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (apt install nodejs)")

#: A page without cards: the scripts define their globals and boot nothing.
_PAGE = """
globalThis.window = globalThis;
globalThis.document = {readyState: "complete", querySelectorAll: function () { return []; },
                       addEventListener: function () {}};
"""
#: Reads {calls: [[function path, args...], ...]} on stdin, writes the results as JSON.
_RUN = """
let input = "";
process.stdin.on("data", (c) => { input += c; });
process.stdin.on("end", () => {
  const calls = JSON.parse(input);
  const out = calls.map(([path, ...args]) => {
    const f = path.split(".").reduce((o, k) => o[k], globalThis);
    const r = f(...args);
    return JSON.parse(JSON.stringify(r, (k, v) => (v === Infinity ? "inf" : v)));
  });
  process.stdout.write(JSON.stringify(out));
});
"""


def _node(script: str, calls: list) -> list:
    """Run `calls` in node after loading `script` (a roofline/web file, with common.js)."""
    code = _PAGE + page_script(script).replace("<\\/", "</") + _RUN
    result = subprocess.run(
        [NODE, "-e", code], input=json.dumps(calls), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def _close(a, b, rel=1e-9):
    if b == math.inf:
        return a == "inf"
    return math.isclose(float(a), float(b), rel_tol=rel)


def test_common_formats_equal_roofline_units():
    """The shared number formats write what roofline.units writes (3 significant digits for
    times and sizes; 4 for rates, RATE_DIGITS)."""
    times = [1.234e-9, 4.5e-6, 0.000999, 0.01, 0.5, 1.0, 12.3456, 999.9]
    sizes = [1.0, 999.0, 1000.0, 1.5e9, 80e9, 141e9, 2.5e12]
    rates = [9.895e14, 1.97e14, 2.25e15, 1e12, 3.35e12]
    calls = (
        [["RooflineWeb.fmtTime", t] for t in times]
        + [["RooflineWeb.fmtBytes", b] for b in sizes]
        + [["RooflineWeb.si", r, "FLOP/s", 4] for r in rates]
        + [["RooflineWeb.fmtCount", n] for n in (0, 999, 1000, 1234567)]
    )
    got = _node("step_explorer.js", calls)
    want = (
        [rl.format_time(t) for t in times]
        + [rl.format_bytes(b) for b in sizes]
        + [rl.format_flops_rate(r) for r in rates]
        + ["0", "999", "1,000", "1,234,567"]
    )
    assert got == want


def test_changed_lines_name_only_what_changed():
    """The announcement after a pause lists the readout lines that differ, in order."""
    got = _node(
        "serving_explorer.js",
        [
            ["RooflineWeb.changedLines", "a\nb\nc", "a\nB\nc\nd"],
            ["RooflineWeb.changedLines", "a", "a"],
        ],
    )
    assert got == [["B", "d"], []]


def test_serving_mirror_writes_the_package_readout():
    """serving_explorer.js's formula (roofline.serving.serving_estimate for one replica) on the
    exported constants writes the package's readout, character for character, on a sample of
    every combination the card offers (all models, chips and TP degrees appear)."""
    names = ("model", "chip", "tp", "batch", "context", "weights")
    offered = (sx.MODELS, sx.CHIPS, sx.TP_DEGREES, sx.BATCHES, sx.CONTEXTS, sx.WEIGHT_DTYPES)
    data = {"controls": {n: list(o) for n, o in zip(names, offered)}, **sx.web_constants()}
    rng = random.Random(11)
    combos = [
        (
            m,
            c,
            t,
            rng.choice(sx.BATCHES),
            rng.choice(sx.contexts_for(m)),
            rng.choice(sx.WEIGHT_DTYPES),
        )
        for m in sx.MODELS
        for c in sx.CHIPS
        for t in sx.TP_DEGREES
    ]
    # models with sliding-window layers at every context, below and beyond their window
    windowed = [m for m in sx.MODELS if rl.get_model(m).sliding_window is not None]
    combos += [
        (m, sx.CHIPS[0], t, b, ctx, "bf16")
        for m in windowed
        for t in (1, 8)
        for b in (1, 64)
        for ctx in sx.contexts_for(m)
    ]
    calls = [["RooflineServingExplorer.compute", data, dict(zip(names, c))] for c in combos]
    got = _node("serving_explorer.js", calls)
    problems = []
    for combo, state in zip(combos, got):
        want = sx.readout(sx.numbers(sx.estimate(*combo)), sx.title(*combo))
        if state["text"] != want:
            problems.append(f"{combo}:\n  page    {state['text']!r}\n  package {want!r}")
    assert len(combos) >= 20 and windowed and not problems, "\n".join(problems[:5])


def test_serving_mirror_caps_windowed_layers_by_hand():
    """Mistral 7B at 16,384 tokens of context on one H100 SXM: the page keeps
    32 layers x 2 (K, V) x 8 KV heads x 128 x 2 B x 4096 (its window) = 536,870,912 B per
    sequence, not x 16,384 (config.json: sliding_window 4096); at 2048 tokens, inside the
    window, 32 x 2 x 8 x 128 x 2 B x 2048 = 268,435,456 B."""
    data = {"controls": {}, **sx.web_constants()}
    values = {"model": "Mistral 7B", "chip": "H100 SXM", "tp": 1, "weights": "bf16"}
    calls = [
        ["RooflineServingExplorer.compute", data, {**values, "batch": 1, "context": ctx}]
        for ctx in (16_384, 2_048)
    ]
    long, short = _node("serving_explorer.js", calls)
    assert long["memory"]["KV cache"] == 536_870_912
    assert short["memory"]["KV cache"] == 268_435_456


def test_serving_mirror_counts_gemma_2s_alternating_windows_by_hand():
    """Gemma 2 27B (config.json: 46 layers, every other one windowed to 4096 tokens, 16 KV
    heads of 128, max_position_embeddings 8192) at 8,192 tokens on one H100 SXM: per token and
    layer 2 (K, V) x 16 x 128 x 2 B = 8,192 B; 23 global layers x 8,192 tokens + 23 windowed
    layers x 4,096 tokens = 23 x 8,192 x 12,288 = 2,315,255,808 B per sequence. Its trained
    context is the longest the page offers it."""
    data = {"controls": {}, **sx.web_constants()}
    assert data["models"]["Gemma 2 27B"]["max_context"] == 8192
    values = {"model": "Gemma 2 27B", "chip": "H100 SXM", "tp": 1, "weights": "bf16"}
    (state,) = _node(
        "serving_explorer.js",
        [["RooflineServingExplorer.compute", data, {**values, "batch": 1, "context": 8192}]],
    )
    assert state["memory"]["KV cache"] == 2_315_255_808


def test_step_mirror_writes_the_package_readout():
    """step_explorer.js looks up the package's training_step results and writes
    roofline.step_explorer.readout's text, for possible and refused combinations."""
    names = ("model", "chip", "n_chips", "layout", "recompute")
    offered = tuple(
        list(o)
        for o in (stx.MODELS, stx.CHIPS, stx.CHIP_COUNTS, stx.LAYOUTS, stx.RECOMPUTE_CHOICES)
    )
    data = {"controls": {n: list(o) for n, o in zip(names, offered)}, **stx.web_table()}
    rng = random.Random(7)
    combos = [tuple(rng.choice(o) for o in offered) for _ in range(60)]
    calls = [["RooflineStepExplorer.compute", data, dict(zip(names, c))] for c in combos]
    got = _node("step_explorer.js", calls)
    problems, possible = [], set()
    for (m, ch, n, lay, rc), state in zip(combos, got):
        step, reason = stx.step_or_reason(m, ch, n, lay, rc)
        numbers = None if step is None else stx._numbers(step)
        want = stx.readout(numbers, reason, f"{m} on {n} × {ch}, {lay}")
        possible.add(step is not None)
        if state["text"] != want:
            problems.append(
                f"{(m, ch, n, lay, rc)}:\n  page    {state['text']!r}\n  package {want!r}"
            )
    assert possible == {True, False}, "the sample should hold possible and refused layouts"
    assert not problems, "\n".join(problems[:5])


def test_kernel_explorer_formulas_equal_the_package():
    """explorer.js's model (roofline, matmul, sharded matmul) on explorer_data's export equals
    roofline.attainable_flops_per_s, estimate, exact_critical_batch_size and sharded_estimate."""
    calls, want = [], []
    data = explorer_data("roofline", "H100 SXM", dtype="bf16", intensity=10.0)
    for name in ("H100 SXM", "TPU v5e", "MI300X", "T4"):
        chip = rl.get_chip(name)
        for dtype in chip.dtypes:
            for intensity in (0.05, 37.5, 1e4):
                calls.append(
                    ["RooflineExplorer.model.roofline", data["chips"][name], dtype, intensity]
                )
                want.append(
                    {
                        "ridge": rl.critical_intensity(chip, dtype),
                        "attainable_flops_per_s": rl.attainable_flops_per_s(intensity, chip, dtype),
                    }
                )
    data = explorer_data("matmul", "H100 SXM", dtype="bf16", weights=None, B=1, D=64, F=64)
    for name in ("H100 SXM", "TPU v5e", "B200"):
        chip = rl.get_chip(name)
        for weights in (None, "int8"):
            for B, D, F in ((1, 4096, 4096), (240, 8192, 2048), (7, 64, 64)):
                calls.append(
                    [
                        "RooflineExplorer.model.matmul",
                        data,
                        data["chips"][name],
                        "bf16",
                        weights,
                        B,
                        D,
                        F,
                    ]
                )
                cost = rl.matmul(B, D, F, dtype="bf16", weights=weights)
                est = rl.estimate(cost, chip, dtype="bf16")
                want.append(
                    {
                        "flops": cost.flops,
                        "bytes": cost.bytes,
                        "t_math": est.t_math,
                        "t_memory": est.t_memory,
                        "exact_critical_batch": rl.exact_critical_batch_size(
                            chip, D, F, dtype="bf16", weights=weights
                        ),
                    }
                )
    data = explorer_data(
        "sharded_matmul", "TPU v5e", n=4, B=1024, D=8192, F=8192, link_bytes_per_s=4.5e10
    )
    for name in ("TPU v5e", "TPU v5p", "TPU7x", "H100 SXM", "MI300X"):
        chip = rl.get_chip(name)
        torus = chip.interconnect.topology == "torus"
        for n, slice, link in itertools.product((2, 4, 8, 16), ("axis", "alone"), (None, 1e11)):
            if n > rl.topology.most_chips_on_one_axis(chip):
                continue
            bw = link or chip.link_bytes_per_s
            calls.append(
                ["RooflineExplorer.model.sharded", data, data["chips"][name], n, 1024, 8192, 8192]
                + [bw, slice]
            )
            if slice == "alone" and torus:
                # the n chips' own slice (Google's shape for n), every link at bw one way
                own = dataclasses.replace(
                    chip,
                    interconnect=dataclasses.replace(chip.interconnect, one_way_bytes_per_s=bw),
                )
                shape = rl.slice_shape(chip, n)
                est = rl.sharded_estimate(1024, 8192, 8192, own, n=n, slice_shape=shape)
                threshold = rl.sharded_critical_D(own, n=n, slice_shape=shape)
            else:  # one axis of a larger slice; off a torus "alone" is the same switch or mesh
                est = rl.sharded_estimate(1024, 8192, 8192, chip, n=n, link_bytes_per_s=bw)
                threshold = rl.sharded_critical_D(chip, n=n, link_bytes_per_s=bw)
            want.append(
                {
                    "t_math": est.t_math,
                    "t_memory": est.t_memory,
                    "t_link": est.t_link,
                    "bound": est.bound,
                    "threshold_D": threshold,
                }
            )
    got = _node("explorer.js", calls)
    problems = []
    for call, have, expected in zip(calls, got, want):
        for key, value in expected.items():
            ok = have[key] == value if isinstance(value, str) else _close(have[key], value)
            if not ok:
                problems.append(
                    f"{call[0]} {call[2:] if len(call) > 2 else ''}: {key} {have[key]!r} vs {value!r}"
                )
    assert not problems, "\n".join(problems[:10])


@pytest.mark.parametrize("script", ["explorer.js", "step_explorer.js", "serving_explorer.js"])
def test_every_page_script_holds_no_markup(script):
    """Each explorer's inline script (common.js, then its own) holds no tag, even in a comment:
    it would end the script early or be taken for an element by tools that read the page."""
    import re

    code = page_script(script)
    assert "window.RooflineWeb" in code
    found = re.search(r".{0,30}<[A-Za-z/!].{0,30}", code)
    assert found is None, found.group(0)
