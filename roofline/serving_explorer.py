"""The serving explorer: pick a model, a chip, the chips of one replica (tensor parallel), the
batch, the context and the weights' dtype; see each resource's time per decode step, the
tokens per second, the time to first token and the memory per chip (`roofline.serving_estimate`).

    >>> from roofline.serving_explorer import serving_explorer
    >>> serving_explorer("Llama 3 70B", "H100 SXM", tp=8)  # doctest: +SKIP

In a kernel (Jupyter, Colab) it is a live `roofline.widgets.Explorer`: each (model, chip, tp,
weights) is a scene drawn once, and a batch or context slider only moves its bars (a blit). On
the web page, where there is no Python, a small mirror of the serving formulas in JavaScript
(roofline/web/serving_explorer.js) computes the same readout from constants the package
exports (`web_constants`: each model's counts, each chip's peak, bandwidth and capacity, and
each tensor-parallel all-reduce as seconds per byte plus a fixed latency); a browser test holds
the mirror to `serving_estimate` over many combinations.

One replica of `tp` chips serves the batch (tokens/s is the replica's); the matmuls and the KV
cache are bf16, the weights are stored in the chosen dtype (weight-only quantisation), and the
time to first token is the prefill of one prompt as long as the context.
"""

from __future__ import annotations

from .catalog import chips_shown_in
from .models import models_shown_in

__all__ = [
    "BATCHES",
    "CHIPS",
    "CONTEXTS",
    "MODELS",
    "TP_DEGREES",
    "WEIGHT_DTYPES",
    "contexts_for",
    "estimate",
    "numbers",
    "readout",
    "serving_explorer",
    "web_constants",
]

#: The choices offered: catalog entries whose `explorers` field names "serving", in book order.
MODELS = models_shown_in("serving")
CHIPS = chips_shown_in("serving")
TP_DEGREES = (1, 2, 4, 8)
BATCHES = tuple(2**k for k in range(11))  # 1 ... 1024 sequences
CONTEXTS = tuple(512 * 2**k for k in range(7))  # 512 ... 32,768 tokens
WEIGHT_DTYPES = ("bf16", "fp8", "int8", "int4")
_NAMES = ("model", "chip", "tp", "batch", "context", "weights")


def contexts_for(model) -> tuple:
    """The contexts the slider offers for `model` (a name): those of CONTEXTS up to the
    context it was trained for (`ModelConfig.max_context`; Gemma 2 27B: 512 ... 8,192), all of
    them when the entry gives none. `serving_estimate` refuses a longer context."""
    from .models import get_model

    limit = get_model(model).max_context
    offered = tuple(c for c in CONTEXTS if limit is None or c <= limit)
    if not offered:
        raise ValueError(
            f"{model}: trained for {limit:,} tokens, shorter than the page's shortest context "
            f"({CONTEXTS[0]:,}); take 'serving' out of its entry's explorers"
        )
    return offered


def estimate(model, chip, tp, batch, context, weights):
    """The package's serving estimate of one combination the explorer offers."""
    from .serving import serving_estimate

    return serving_estimate(
        model, chip, n_chips=tp, tp=tp, batch=batch, context_len=context, weights=weights
    )


def numbers(est) -> dict:
    """What the readout and the bars show, in SI base units."""
    return {
        "times": dict(est.times),
        "weights_s": est.hbm_parts["weights"],
        "kv_s": est.hbm_parts["KV cache"],
        "t_step": est.t_decode_step,
        "bound": est.bound,
        "slowest": est.slowest,
        "tokens_per_s": est.tokens_per_s,
        "ttft": est.ttft_s,
        "memory": dict(est.memory),
        "memory_total": est.memory_bytes,
        "capacity": est.memory_capacity_bytes,
        "max_batch": est.max_batch,
    }


def title(model, chip, tp, batch, context, weights) -> str:
    return f"{model} on {tp} × {chip}, batch {batch}, context {context:,}, {weights} weights"


def _per_s(x) -> str:
    """A rate with 3 significant digits and thousands separators (the page writes the same)."""
    value = float(f"{x:.3g}")
    return f"{value:,.0f}" if value >= 100 else f"{value:g}"


def readout(x: dict, heading: str) -> str:
    """The plain-text readout (the page's script writes the same, character for character)."""
    from .units import format_bytes, format_time

    t = x["times"]
    step = f"decode step: math {format_time(t['math'])}, HBM {format_time(t['HBM'])} (weights "
    step += f"{format_time(x['weights_s'])}, KV cache {format_time(x['kv_s'])})"
    if "TP" in t:
        step += f", TP all-reduces {format_time(t['TP'])}"
    verdict = "fits" if x["memory_total"] <= x["capacity"] else "does NOT fit"
    m = x["memory"]
    return "\n".join(
        [
            heading,
            step,
            f"time per output token ≥ {format_time(x['t_step'])} ({x['bound']}-bound: "
            f"{x['slowest']}); ≤ {_per_s(x['tokens_per_s'])} tokens/s; time to first token "
            f"≥ {format_time(x['ttft'])}",
            f"memory per chip: weights {format_bytes(m['weights'])}, KV cache "
            f"{format_bytes(m['KV cache'])}, reserve {format_bytes(m['reserve'])}; total "
            f"{format_bytes(x['memory_total'])} of {format_bytes(x['capacity'])} ({verdict}); "
            f"largest batch that fits: {x['max_batch']:,}",
        ]
    )


_BARS = ("math", "HBM", "TP")
_KIND_COLOURS = {"math": "blue", "HBM": "bluish green", "TP": "orange"}
_MEMORY_COLOURS = (("weights", "blue"), ("KV cache", "sky blue"), ("reserve", "yellow"))


def _build_scene(figure, model, chip, tp, weights):
    """Axes fixed for one (model, chip, tp, weights): the time axis spans every batch and
    context the sliders offer; the memory axis 1.6 x the capacity (taller bars are clipped)."""
    from matplotlib.ticker import LogLocator

    from .drawing import PALETTE, font_pt, format_axis, style_axes

    corners = [
        numbers(estimate(model, chip, tp, b, c, weights))
        for b, c in ((BATCHES[0], CONTEXTS[0]), (BATCHES[-1], contexts_for(model)[-1]))
    ]
    values = [v for x in corners for v in x["times"].values() if v > 0]
    capacity = corners[0]["capacity"]
    grid = figure.add_gridspec(
        1, 2, width_ratios=(3, 1), left=0.12, right=0.78, bottom=0.17, top=0.84, wspace=0.45
    )
    ax, mem = figure.add_subplot(grid[0]), figure.add_subplot(grid[1])
    for a in (ax, mem):
        style_axes(a)
    bars = [b for b in _BARS if b != "TP" or tp > 1]
    rects = ax.barh(
        range(len(bars)), [1] * len(bars), color=[PALETTE[_KIND_COLOURS[b]] for b in bars]
    )
    ax.set_yticks(range(len(bars)), bars, fontsize=font_pt("small"))
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(min(values) / 2, max(values) * 2)
    format_axis(ax.xaxis, "time")
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=4))
    ax.set_xlabel("time per decode step, per chip", fontsize=font_pt("normal"))
    stack = {}
    for part, colour in _MEMORY_COLOURS:
        (stack[part],) = mem.bar([0], [0], color=PALETTE[colour], label=part)
    capacity_line = mem.axhline(
        capacity / 1e9, color=PALETTE["black"], lw=2, zorder=5, label="capacity"
    )
    mem.set_ylim(0, 1.6 * capacity / 1e9)
    mem.set_xticks([])
    mem.set_ylabel("memory per chip (GB)", fontsize=font_pt("small"))
    mem.legend(
        fontsize=font_pt("small") * 0.8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False
    )
    heading = figure.suptitle(" ", fontsize=font_pt("small"))
    moving = list(rects) + list(stack.values()) + [capacity_line, heading]  # line on top
    return (dict(zip(bars, rects)), stack, heading), moving


def _move(state, x, heading):
    """Set the bars of one combination (a blit redraws only these)."""
    rects, stack, title_artist = state
    for name, rect in rects.items():
        rect.set_width(x["times"].get(name, 0.0))
    bottom = 0.0
    for part, rect in stack.items():
        rect.set_y(bottom / 1e9)
        rect.set_height(x["memory"][part] / 1e9)
        bottom += x["memory"][part]
    title_artist.set_text(heading)


def serving_explorer(
    model="Llama 3 70B", chip="H100 SXM", tp=8, batch=16, context=4096, weights="bf16"
):
    """A live explorer of `roofline.serving_estimate` (see the module docstring)."""
    from .widgets import enable_colab_widgets, load_ipywidgets

    widgets = load_ipywidgets()
    enable_colab_widgets()
    start = dict(zip(_NAMES, (model, chip, tp, batch, context, weights)))
    offered = dict(zip(_NAMES, (MODELS, CHIPS, TP_DEGREES, BATCHES, CONTEXTS, WEIGHT_DTYPES)))
    if model in MODELS:
        offered["context"] = contexts_for(model)
    for name, value in start.items():
        if value not in offered[name]:
            raise ValueError(
                f"{name}={value!r}: choose one of {', '.join(map(str, offered[name]))}"
                + (
                    f" ({model} was trained for at most {offered[name][-1]:,} tokens)"
                    if name == "context" and value in CONTEXTS
                    else ""
                )
            )
    controls = {
        "model": widgets.Dropdown(options=list(MODELS), value=model, description="model"),
        "chip": widgets.Dropdown(options=list(CHIPS), value=chip, description="chip"),
        "tp": widgets.SelectionSlider(options=list(TP_DEGREES), value=tp, description="chips (tp)"),
        "batch": widgets.SelectionSlider(options=list(BATCHES), value=batch, description="batch"),
        "context": widgets.SelectionSlider(
            options=list(offered["context"]), value=context, description="context"
        ),
        "weights": widgets.Dropdown(
            options=list(WEIGHT_DTYPES), value=weights, description="weights"
        ),
    }

    def current(ex):
        return tuple(ex.controls[n].value for n in _NAMES)

    def sync(ex, key):
        if key == "model":  # the context slider stops at the model's trained context
            slider, choices = ex.controls["context"], contexts_for(ex.controls["model"].value)
            old = slider.value
            slider.options = list(choices)
            slider.value = old if old in choices else choices[-1]

    def render(ex, changed):
        m, ch, t, b, c, w = current(ex)
        state = ex.scene((m, ch, t, w), lambda fig: _build_scene(fig, m, ch, t, w))
        x = numbers(estimate(m, ch, t, b, c, w))
        heading = title(m, ch, t, b, c, w)
        _move(state, x, heading.replace(", batch", "\nbatch", 1))
        alt = (
            f"{heading}: bars of the decode step's math, HBM and TP time per chip, "
            f"{x['bound']}-bound; memory per chip {x['memory_total'] / 1e9:.3g} GB against "
            f"{x['capacity'] / 1e9:.3g} GB."
        )
        return readout(x, heading), alt, False

    return _explorer_class()(
        "serving",
        "Serving explorer: model, chips, batch and context",
        controls,
        render,
        lambda ex: (None, dict(zip(_NAMES, current(ex)))),
        sync=sync,
    )


def _attention_groups(m) -> list:
    """The model's attention blocks as the page's mirror reads them (`web_constants`): per
    group of like layers, the FLOPs of one query against one key (decode from the cache,
    prefill from the fresh keys) and the bf16 cache bytes of one token in one layer; the
    page multiplies them by the keys a query meets, min(context, window)."""
    from .models import Attention

    return [
        {
            "layers": g.count,
            "window": g.block.window,
            "decode": g.block.core_flops_per_token(1, causal=False, from_cache=True),
            "prefill": g.block.core_flops_per_token(1, causal=False),
            "kv": g.block.kv_cache_bytes_per_token("bf16"),
        }
        for g in m.blocks()
        if isinstance(g.block, Attention)
    ]


def web_constants() -> dict:
    """What the page's formula mirror needs, computed by the package (SI base units).

    models: {name: {N: matmul weights per token, L, D: d_model, max_context: the longest
    context the slider offers it (`contexts_for`), attention: the model's
    attention blocks, one group per kind (`ModelConfig.blocks`), each {layers: how many,
    window: its sliding window in tokens or null, decode: FLOPs per query per key against
    the cache (latent attention: against its latent), prefill: FLOPs per query per key,
    kv: bf16 cache bytes per token per layer}; the page counts the keys a query meets as
    `_keys_per_query` does (at most the window: a windowed layer's math and cache stop
    growing there), kv_heads: cached heads TP splits, params, untied: the input embedding
    table's parameters when it is not tied (not read by a step), experts, k: experts per
    token, expert_params}}; chips: {name: {peak: dense bf16 FLOP/s, hbm: B/s, capacity:
    bytes, all_reduce: {tp: [seconds per byte, fixed seconds]}}}; dtype_bytes; hop and
    reserve: the package's defaults."""
    from .catalog import get_chip
    from .dtypes import bytes_per_element
    from .models import get_model
    from .serving import HOP_LATENCY_S, RESERVE_FRACTION, tp_all_reduce_seconds

    models = {}
    for name in MODELS:
        m = get_model(name)
        models[name] = {
            "N": m.matmul_params,
            "L": m.layers,
            "D": m.d_model,
            "max_context": contexts_for(name)[-1],
            "attention": _attention_groups(m),
            "kv_heads": m.kv_cache_heads,
            "params": m.params,
            "untied": 0 if m.tied_embeddings else m.vocab * m.d_model,
            "experts": m.experts,
            "k": m.experts_per_token,
            "expert_params": m.expert_params,
        }
    chips = {}
    for name in CHIPS:
        chip = get_chip(name)
        reduce = {}
        for tp in TP_DEGREES[1:]:
            # linear in the bytes; latency per step by the links (serving.hop_latency_for)
            one = tp_all_reduce_seconds(chip, tp, 1e9)
            per_byte = (tp_all_reduce_seconds(chip, tp, 2e9) - one) / 1e9
            fixed = one - 1e9 * per_byte
            reduce[str(tp)] = [per_byte, fixed]
        chips[name] = {
            "peak": chip.peak_flops_per_s("bf16"),
            "hbm": chip.hbm_bytes_per_s,
            "capacity": chip.hbm_bytes,
            "all_reduce": reduce,
        }
    return {
        "models": models,
        "chips": chips,
        "dtype_bytes": {d: bytes_per_element(d) for d in WEIGHT_DTYPES},
        "hop": HOP_LATENCY_S,
        "reserve": RESERVE_FRACTION,
    }


#: The sliders' units, as their aria-valuetext says them ("16 sequences").
_SLIDER_UNITS = {"tp": "chips", "batch": "sequences", "context": "tokens"}


def _control_html(name, options, value) -> str:
    from .web import index_slider_html, select_html

    label = {"tp": "chips (tp)"}.get(name, name)
    if name in _SLIDER_UNITS:
        return index_slider_html(name, label, options, value, _SLIDER_UNITS[name])
    return select_html(name, label, [(o, o) for o in options], value)


def _static_html(explorer) -> str:
    """The page's version: the controls, the first frame, the constants and the script."""
    from .web import explorer_card
    from .widgets import COLAB_NOTE, encode_png

    start = {n: explorer.controls[n].value for n in _NAMES}
    offered = dict(zip(_NAMES, (MODELS, CHIPS, TP_DEGREES, BATCHES, CONTEXTS, WEIGHT_DTYPES)))
    data = {"controls": {n: list(o) for n, o in offered.items()}, "start": start}
    data.update(web_constants())
    return explorer_card(
        kind="serving",
        card_class="roofline-serving-explorer",
        title=explorer.title,
        controls=[_control_html(n, list(offered[n]), start[n]) for n in _NAMES],
        png=encode_png(explorer.figure.canvas, quantize=True),
        alt=explorer._alt,
        text=explorer.text,
        note=COLAB_NOTE,
        data=data,
        data_class="rx-serving-data",
        script="serving_explorer.js",
    )


def _explorer_class():
    """`roofline.widgets.Explorer` with this explorer's web page version (made lazily, so that
    importing this module imports neither ipywidgets nor matplotlib)."""
    global _SERVING_EXPLORER
    if _SERVING_EXPLORER is None:
        from .widgets import Explorer

        class ServingExplorer(Explorer):
            def static_html(self) -> str:
                return _static_html(self)

        _SERVING_EXPLORER = ServingExplorer
    return _SERVING_EXPLORER


_SERVING_EXPLORER = None
