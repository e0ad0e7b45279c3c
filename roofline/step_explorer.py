"""The training-step explorer: pick a model, a chip, a chip count and a layout; see each
resource's time per step, the bound and the memory per chip (`roofline.training_step`).

    >>> import roofline as rl
    >>> rl.step_explorer.training_step_explorer("Llama 3 70B", "H100 SXM", 1024)  # doctest: +SKIP

In a kernel (Jupyter, Colab) it is a live `roofline.widgets.Explorer`. On the web page it shows
its first frame (the figure and the readout) and, where JavaScript runs, the same controls over
results the package computed for every combination the page offers (`web_table`): a page has
no Python, and mirroring the whole step model in JavaScript would be a second copy of
`roofline.parallelism` to keep in step, so the page looks the package's own numbers up.

The layouts are presets of tensor (tp), pipeline (pp) and expert (ep) degrees; data or fully
sharded data parallelism takes the remaining factor of the chip count. Steps are of
`TOKENS_PER_STEP` tokens in sequences of `SEQ_LEN` (a combination whose replicas outnumber the
sequences is refused, and the readout says why).
"""

from __future__ import annotations

import math

from .catalog import chips_shown_in
from .models import models_shown_in

__all__ = [
    "CHIPS",
    "CHIP_COUNTS",
    "LAYOUTS",
    "MODELS",
    "RECOMPUTE_CHOICES",
    "SEQ_LEN",
    "TOKENS_PER_STEP",
    "layout_for",
    "step_or_reason",
    "training_step_explorer",
    "web_table",
]

#: Layout presets: name -> (fixed degrees, the axis that takes the remaining chips).
LAYOUTS = {
    "data parallel": ({}, "dp"),
    "FSDP": ({}, "fsdp"),
    "TP 8 × DP": ({"tp": 8}, "dp"),
    "TP 8 × FSDP": ({"tp": 8}, "fsdp"),
    "TP 8 × PP 8 × DP": ({"tp": 8, "pp": 8}, "dp"),
    "EP 8 × FSDP (mixture of experts)": ({"ep": 8}, "fsdp"),
}
#: The choices offered: catalog entries whose `explorers` field names "step", in book order.
MODELS = models_shown_in("step")
CHIPS = chips_shown_in("step")
CHIP_COUNTS = (8, 64, 512, 4096)
RECOMPUTE_CHOICES = ("none", "selective", "full")
TOKENS_PER_STEP = 2**22
SEQ_LEN = 4096
_RESOURCE_ORDER = ("math", "HBM", "TP", "EP", "FSDP", "DP", "PP", "bubble")


def layout_for(preset: str, n_chips: int) -> dict:
    """The degrees of preset `preset` on `n_chips` chips (ValueError if they do not divide)."""
    if preset not in LAYOUTS:
        raise ValueError(f"unknown layout {preset!r}; choose one of {', '.join(LAYOUTS)}")
    fixed, rest = LAYOUTS[preset]
    used = math.prod(fixed.values())
    if n_chips % used or n_chips < used:
        raise ValueError(f"{preset} needs a multiple of {used} chips, not {n_chips}")
    return {**fixed, rest: n_chips // used}


def step_or_reason(model, chip, n_chips, preset, recompute="none"):
    """(TrainingStep, None) or (None, the reason in words) for one combination."""
    from .parallelism import training_step

    try:
        layout = layout_for(preset, n_chips)
        step = training_step(
            model, chip, n_chips, TOKENS_PER_STEP, SEQ_LEN, layout, recompute=recompute
        )
    except ValueError as error:
        return None, str(error)
    return step, None


def _numbers(step) -> dict:
    """What the figure and readout need, rounded as they are shown (3 significant digits for
    times and sizes, whole per cent for the MFU ceiling), so that the page, which gets these
    numbers, and the kernel write the same readout."""

    def r(x):
        return float(f"{x:.3g}")

    times = [[k, r(step.times[k]), step.kinds[k], step.labels[k]] for k in _order(step.times)]
    return {
        "times": times,
        "t_lower": r(step.t_lower),
        "t_upper": r(step.t_upper),
        "bound": step.bound,
        "slowest": step.labels[step.slowest],
        "memory": [[k, r(v)] for k, v in step.memory.items()],
        "memory_total": r(step.memory_bytes),
        "capacity": r(step.memory_capacity_bytes),
        "mfu_percent": round(100 * step.mfu_ceiling),
        "layout": {a: d for a, d in step.layout.items() if d > 1},
    }


def _order(times):
    return [k for k in _RESOURCE_ORDER if k in times] + [
        k for k in times if k not in _RESOURCE_ORDER
    ]


def readout(numbers: dict | None, reason: str | None, title: str) -> str:
    """The plain-text readout under the figure (the page's script writes the same)."""
    from .units import format_bytes, format_time

    if numbers is None:
        return f"{title}\nnot possible: {reason}"
    lines = [title, "layout " + " × ".join(f"{a}={d}" for a, d in numbers["layout"].items())]
    lines.append(
        "per step: " + ", ".join(f"{label} {format_time(t)}" for _, t, _, label in numbers["times"])
    )
    lines.append(
        f"best case {format_time(numbers['t_lower'])} ({numbers['bound']}-bound: "
        f"{numbers['slowest']}); no overlap {format_time(numbers['t_upper'])}; "
        f"MFU ceiling {numbers['mfu_percent']}%"
    )
    total = numbers["memory_total"]
    verdict = "fits" if total <= numbers["capacity"] else "does NOT fit"
    lines.append(
        "memory per chip: "
        + ", ".join(f"{k} {format_bytes(v)}" for k, v in numbers["memory"])
        + f"; total {format_bytes(total)} of {format_bytes(numbers['capacity'])} ({verdict})"
    )
    return "\n".join(lines)


_COLOURS = {"compute": "blue", "memory": "bluish green", "link": "orange", "bubble": "vermillion"}
_MEMORY_COLOURS = ("blue", "sky blue", "orange", "reddish purple")


def _draw(fig, numbers, reason, title):
    """Bars of each resource's time (left) and the memory per chip against capacity (right)."""
    from .drawing import PALETTE, font_pt, format_axis, style_axes

    fig.clear()
    if numbers is None:
        ax = fig.add_subplot(1, 1, 1)
        ax.set_axis_off()
        ax.text(
            0.5,
            0.5,
            "not possible:\n" + reason,
            ha="center",
            va="center",
            wrap=True,
            fontsize=font_pt("normal"),
            transform=ax.transAxes,
        )
        fig.suptitle(title, fontsize=font_pt("title"))
        return f"{title}: not possible ({reason})."
    grid = fig.add_gridspec(
        1, 2, width_ratios=(3, 1), left=0.11, right=0.78, bottom=0.16, top=0.88, wspace=0.5
    )
    ax, mem = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
    for a in (ax, mem):
        style_axes(a)
    names = [label for _, _, _, label in numbers["times"]][::-1]
    keys = [key for key, _, _, _ in numbers["times"]][::-1]
    values = [t for _, t, _, _ in numbers["times"]][::-1]
    colours = [PALETTE[_COLOURS[kind]] for _, _, kind, _ in numbers["times"]][::-1]
    ax.barh(range(len(values)), values, color=colours)
    ax.set_yticks(range(len(values)), keys, fontsize=font_pt("small"))
    ax.set_xscale("log")
    low = min(values) / 2
    ax.set_xlim(low, max(numbers["t_upper"], max(values)) * 1.5)
    format_axis(ax.xaxis, "time")
    ax.axvline(numbers["t_lower"], color=PALETTE["black"], lw=1, ls="--")
    ax.set_xlabel("time per step (dashed: best case)", fontsize=font_pt("normal"))
    bottom = 0.0
    for (part, value), colour in zip(numbers["memory"], _MEMORY_COLOURS):
        mem.bar([0], [value / 1e9], bottom=bottom / 1e9, color=PALETTE[colour], label=part)
        bottom += value
    mem.axhline(numbers["capacity"] / 1e9, color=PALETTE["black"], lw=1.5)
    mem.set_xticks([])
    mem.set_ylabel("memory per chip (GB)", fontsize=font_pt("small"))
    mem.set_title("line: capacity", fontsize=font_pt("small"))
    mem.legend(
        fontsize=font_pt("small") * 0.8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False
    )
    fig.suptitle(title, fontsize=font_pt("title"))
    total = numbers["memory_total"]
    return (
        f"{title}. Bars of time per step for "
        + ", ".join(f"{n}" for n in names[::-1])
        + f"; best case {numbers['t_lower']:.3g} s, {numbers['bound']}-bound. Memory per chip "
        f"{total / 1e9:.3g} GB against {numbers['capacity'] / 1e9:.3g} GB."
    )


def training_step_explorer(
    model="Llama 3 70B",
    chip="H100 SXM",
    n_chips=4096,
    layout="TP 8 × PP 8 × DP",
    recompute="selective",
):
    """A live explorer of `roofline.training_step` (see the module docstring)."""
    from .widgets import enable_colab_widgets, load_ipywidgets

    widgets = load_ipywidgets()
    enable_colab_widgets()
    for name, value, options in (
        ("model", model, MODELS),
        ("chip", chip, CHIPS),
        ("n_chips", n_chips, CHIP_COUNTS),
        ("layout", layout, tuple(LAYOUTS)),
        ("recompute", recompute, RECOMPUTE_CHOICES),
    ):
        if value not in options:
            raise ValueError(f"{name}={value!r}: choose one of {', '.join(map(str, options))}")
    controls = {
        "model": widgets.Dropdown(options=list(MODELS), value=model, description="model"),
        "chip": widgets.Dropdown(options=list(CHIPS), value=chip, description="chip"),
        "n_chips": widgets.SelectionSlider(
            options=list(CHIP_COUNTS), value=n_chips, description="chips"
        ),
        "layout": widgets.Dropdown(options=list(LAYOUTS), value=layout, description="layout"),
        "recompute": widgets.Dropdown(
            options=list(RECOMPUTE_CHOICES), value=recompute, description="recompute"
        ),
    }

    def current(ex):
        c = ex.controls
        return (
            c["model"].value,
            c["chip"].value,
            c["n_chips"].value,
            c["layout"].value,
            c["recompute"].value,
        )

    def render(ex, changed):
        m, ch, n, lay, rc = current(ex)
        step, reason = step_or_reason(m, ch, n, lay, rc)
        numbers = None if step is None else _numbers(step)
        title = f"{m} on {n} × {ch}, {lay}"
        alt = _draw(ex.figure, numbers, reason, title)
        ex._moving = []
        return readout(numbers, reason, title), alt, True

    explorer = _step_explorer_class()(
        "training_step",
        "Training-step explorer: model, chips and layout",
        controls,
        render,
        lambda ex: (
            None,
            dict(zip(("model", "chip", "n_chips", "layout", "recompute"), current(ex))),
        ),
    )
    return explorer


def web_table() -> dict:
    """Every combination the page offers, computed by the package and looked up by the page.

    {"results": [entry for each model, chip, chip count, layout and recompute choice, in the
    order of MODELS, CHIPS, CHIP_COUNTS, LAYOUTS, RECOMPUTE_CHOICES, the last varying fastest],
    "order": resources, "labels":
    [words naming a resource and its link], "kinds": {resource: kind}, "reasons": [text], "memory_parts":
    [...], "capacity": {chip: bytes}}. An entry is [t_lower, index of the slowest resource in
    "order", MFU ceiling, t_upper, [seconds per resource in "order", null where unused],
    [index into "labels" per resource], [GB (1e9 bytes) of each memory part], total GB], or the index of
    the reason the combination is refused.
    """
    results: list[int | list] = []  # an entry, or the index of the reason it is refused
    labels, kinds, reasons, capacity = [], {}, [], {}
    parts = None
    for m in MODELS:
        for ch in CHIPS:
            for n in CHIP_COUNTS:
                for lay in LAYOUTS:
                    for rc in RECOMPUTE_CHOICES:
                        step, reason = step_or_reason(m, ch, n, lay, rc)
                        if step is None:
                            if reason not in reasons:
                                reasons.append(reason)
                            results.append(reasons.index(reason))
                            continue
                        x = _numbers(step)
                        kinds.update({k: kind for k, _, kind, _ in x["times"]})
                        parts = [k for k, _ in x["memory"]]
                        capacity[ch] = x["capacity"]
                        seconds = {k: t for k, t, _, _ in x["times"]}
                        words = {k: w for k, _, _, w in x["times"]}
                        for w in words.values():
                            if w not in labels:
                                labels.append(w)
                        results.append(
                            [
                                x["t_lower"],
                                _RESOURCE_ORDER.index(step.slowest),
                                x["mfu_percent"],
                                x["t_upper"],
                                [seconds.get(k) for k in _RESOURCE_ORDER],
                                [
                                    labels.index(words[k]) if k in words else None
                                    for k in _RESOURCE_ORDER
                                ],
                                [float(f"{v / 1e9:.3g}") for _, v in x["memory"]],
                                float(f"{x['memory_total'] / 1e9:.3g}"),
                            ]
                        )
    return {
        "results": results,
        "order": list(_RESOURCE_ORDER),
        "labels": labels,
        "kinds": kinds,
        "reasons": reasons,
        "memory_parts": parts,
        "capacity": capacity,
    }


def _lazy_explorer_base():
    from .widgets import Explorer

    return Explorer


def _static_html(explorer) -> str:
    """The page's version: the controls, the first frame, the looked-up results and the script."""
    from .web import explorer_card, index_slider_html, select_html
    from .widgets import COLAB_NOTE, encode_png

    start = dict(
        zip(
            ("model", "chip", "n_chips", "layout", "recompute"),
            (c.value for c in explorer.controls.values()),
        )
    )
    data = {
        "controls": {
            "model": list(MODELS),
            "chip": list(CHIPS),
            "n_chips": list(CHIP_COUNTS),
            "layout": list(LAYOUTS),
            "recompute": list(RECOMPUTE_CHOICES),
        },
        "start": start,
        **_cached_web_table(),
    }
    controls = [
        index_slider_html(name, "chips", options, start[name], "chips")
        if name == "n_chips"
        else select_html(name, name, [(o, o) for o in options], start[name])
        for name, options in data["controls"].items()
    ]
    return explorer_card(
        kind="training_step",
        card_class="roofline-step-explorer",
        title=explorer.title,
        controls=controls,
        png=encode_png(explorer.figure.canvas, quantize=True),
        alt=explorer._alt,
        text=explorer.text,
        note=COLAB_NOTE,
        data=data,
        data_class="rx-step-data",
        script="step_explorer.js",
    )


_WEB_TABLE = None


def _cached_web_table() -> dict:
    global _WEB_TABLE
    if _WEB_TABLE is None:
        _WEB_TABLE = web_table()
    return _WEB_TABLE


def _step_explorer_class():
    """`roofline.widgets.Explorer` with this explorer's own web page version (made lazily:
    importing this module does not import ipywidgets or matplotlib)."""
    global _STEP_EXPLORER
    if _STEP_EXPLORER is None:
        Explorer = _lazy_explorer_base()

        class StepExplorer(Explorer):
            def static_html(self) -> str:
                return _static_html(self)

        _STEP_EXPLORER = StepExplorer
    return _STEP_EXPLORER


_STEP_EXPLORER = None
