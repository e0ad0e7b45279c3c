"""Every figure of the book, over the chips, dtypes and sizes the chapters and explorers use:
no two pieces of text (titles, axis and tick labels, labels on the plot, legend entries)
overlap, and no text falls outside the figure. Boxes are the renderer's own extents
(`artist.get_window_extent(renderer)`), so what is checked is what is drawn."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import roofline as rl  # noqa: E402
from roofline import plots, widgets  # noqa: E402

ALL_CHIPS = rl.list_chips()


def _problems(fig):
    """Overlapping pairs and text outside the figure, as readable strings (empty: fine)."""
    fig.canvas.draw()  # final layout and ticks, as on the page
    boxes = plots.text_boxes(fig)
    frame = fig.bbox
    problems = [
        f"outside the figure: {name}"
        for name, box in boxes
        if box.x0 < frame.x0 - 1
        or box.y0 < frame.y0 - 1
        or box.x1 > frame.x1 + 1
        or box.y1 > frame.y1 + 1
    ]
    for i, (name_a, a) in enumerate(boxes):
        for name_b, b in boxes[i + 1 :]:
            if plots.boxes_overlap(a, b):
                problems.append(f"overlap: {name_a} / {name_b}")
    # a legend's frame hides whatever text lies under it (its own entries excepted)
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends) + [
        ax.get_legend() for ax in fig.axes if ax.get_legend() is not None
    ]
    for legend in legends:
        frame = legend.get_window_extent(renderer)
        own = {id(t) for t in legend.get_texts()} | {id(legend.get_title())}
        for kind, artist in plots.text_artists(fig):
            if id(artist) not in own and plots.boxes_overlap(
                frame, artist.get_window_extent(renderer)
            ):
                problems.append(f"under the legend: {kind} {artist.get_text()!r}")
    return problems


def _check(fig):
    problems = _problems(fig)
    assert not problems, "\n".join(problems)


def _dtype(chip):
    return "bf16" if "bf16" in rl.get_chip(chip).dtypes else rl.get_chip(chip).dtypes[0]


# ------------------------------------------------------------------ the detector itself


def test_the_check_sees_an_overlap_and_text_outside():
    fig, ax = plots.new_figure()
    ax.text(0.5, 0.5, "one label", transform=ax.transAxes)
    ax.text(0.5, 0.5, "another label", transform=ax.transAxes)
    ax.text(1.5, 0.5, "far right", transform=ax.transAxes)
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(loc="center")
    problems = _problems(fig)
    assert any("overlap" in p and "one label" in p and "another label" in p for p in problems)
    assert any("outside the figure" in p and "far right" in p for p in problems)
    assert any("under the legend" in p and "one label" in p for p in problems)


def test_place_labels_moves_a_label_off_another():
    fig, ax = plots.new_figure()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    first = ax.annotate(
        "first point", xy=(5, 5), xytext=(6, -6), textcoords="offset points", va="top"
    )
    second = ax.annotate(
        "second point", xy=(5, 5), xytext=(6, -6), textcoords="offset points", va="top"
    )
    plots.place_labels(fig, [first, second])
    _check(fig)


# ------------------------------------------------------------------ figure functions


@pytest.mark.parametrize("chip", ALL_CHIPS)
@pytest.mark.parametrize("bandwidths", [None, "all"])
def test_roofline_figure_of_every_chip(chip, bandwidths):
    _check(plots.roofline_figure(chip, _dtype(chip), bandwidths=bandwidths))


def _ch4_points():
    b = round(rl.critical_batch_size("TPU v5e"))
    return [
        rl.Cost(f"D = F = {s}", rl.matmul(b, s, s).flops, rl.matmul(b, s, s).bytes, "bf16")
        for s in (256, 1024, 16384)
    ]


def _ch7_points():
    from roofline import transformer as tf

    shape = tf.LLAMA_8B
    out = []
    for mode, B in (("prefill", 1), ("decode", 16)):
        for op in tf.layer_costs(shape, B=B, T=4096, mode=mode):
            if op.name in ("MLP up", "attention Q K^T"):
                out.append(rl.Cost(f"{mode} {op.name}", op.flops, op.bytes, op.dtype))
    return out


CHAPTER_ROOFLINES = {
    "ch3 H100": lambda: plots.roofline_figure("H100 SXM", "bf16"),
    "ch3 three chips": lambda: plots.roofline_figure(["TPU v5e", "TPU v6e", "A100 SXM"], "bf16"),
    "ch3 two bandwidths": lambda: plots.roofline_figure(
        "TPU v5e",
        "bf16",
        bandwidths={
            "HBM": rl.get_chip("TPU v5e").hbm_bytes_per_s,
            "ICI link (one way)": rl.get_chip("TPU v5e").link_bytes_per_s,
        },
    ),
    "ch3 H100 all": lambda: plots.roofline_figure("H100 SXM", bandwidths="all"),
    "ch4 approach": lambda: plots.roofline_figure(
        "TPU v5e",
        "bf16",
        operations=_ch4_points(),
        intensity_range=(20, 2000),
        title="bf16 matmuls at B = 240 on a TPU v5e",
    ),
    "ch5 claimed": lambda: plots.roofline_figure(
        "H100 SXM",
        "bf16",
        operations=[
            plots.Point(
                "claimed: 70% of the sparse peak",
                rl.matmul(8192, 8192, 8192).intensity,
                0.7 * rl.get_chip("H100 SXM").peak_flops_per_s("bf16", sparse=True),
            )
        ],
    ),
    "ch6 all": lambda: plots.roofline_figure(
        "TPU v5e", "bf16", bandwidths="all", shade_regions=False
    ),
    "ch7 two chips": lambda: plots.roofline_figure(
        ["H100 SXM", "TPU v5e"], "bf16", operations=_ch7_points(), intensity_range=(1, 1e4)
    ),
    "sparse": lambda: plots.roofline_figure("H100 SXM", sparse=True),
    "two dtypes": lambda: plots.roofline_figure("H100 SXM", ["bf16", "fp8"]),
    "points": lambda: plots.roofline_figure(
        "H100 SXM",
        operations=[
            plots.Point("too fast", 10, 2 * 3.35e12 * 10),
            plots.Point("fine", 10, 0.5 * 3.35e12 * 10),
            plots.Point("at the peak", 1000, 989.5e12),
        ],
    ),
}


@pytest.mark.parametrize("name", list(CHAPTER_ROOFLINES))
def test_chapter_rooflines(name):
    _check(CHAPTER_ROOFLINES[name]())


def test_chapter_2_matrix_and_vector_roofs():
    h100 = rl.get_chip("H100 SXM")

    def one_unit(unit):
        return rl.Chip(
            name=f"H100 SXM {unit} units",
            vendor=h100.vendor,
            peaks=(h100.peak("bf16", unit=unit),),
            hbm_bytes=h100.hbm_bytes,
            hbm_bytes_per_s=h100.hbm_bytes_per_s,
            memory_source=h100.memory_source,
            memory_kind=h100.memory_kind,
        )

    _check(
        plots.roofline_figure(
            [one_unit("matrix"), one_unit("vector")],
            "bf16",
            title="H100 SXM, bf16: matrix and vector roofs",
        )
    )


@pytest.mark.parametrize("chip", ["H100 SXM", "TPU v5e", "T4", "MI300X"])
def test_linear_and_log_figure(chip):
    _check(plots.linear_and_log_figure(chip, _dtype(chip)))


RESOURCE_SHAPES = [
    ("B=128, D=F=16384", 128, 16384, 16384),
    ("B=4096, D=65536, F=8192", 4096, 65536, 8192),
    ("B=8192, D=4096, F=16384", 8192, 4096, 16384),
]


@pytest.mark.parametrize(
    "chip, n", [("TPU v5e", 2), ("TPU v5e", 8), ("H100 SXM", 8), ("TPU v4", 4)]
)
def test_resource_figure(chip, n):
    _check(plots.resource_figure(chip, n=n, operations=RESOURCE_SHAPES))


@pytest.mark.parametrize(
    "chip, n_chips, contexts",
    [
        ("H100 SXM", 1, (4096, 1024)),
        ("H200", 1, (4096, 1024)),
        ("H100 SXM", 4, (4096,)),
        ("TPU v5e", 1, (4096, 1024)),
    ],
)
def test_decode_throughput_figure(chip, n_chips, contexts):
    _check(plots.decode_throughput_figure(None, chip, contexts=contexts, n_chips=n_chips))


def test_measured_figures():
    from test_measure import synthetic_result

    from roofline.measure.figures import measured_roofline_figure, sweep_figure

    result = synthetic_result()
    _check(sweep_figure(result))
    _check(measured_roofline_figure(result, dtype="fp64"))


# ------------------------------------------------------------------ explorers


@pytest.mark.parametrize("chip", ALL_CHIPS)
def test_roofline_explorer_over_its_slider(chip):
    dtype = _dtype(chip)
    explorer = widgets.roofline_explorer(chip, dtype, intensity=1.0)
    ridge = rl.critical_intensity(chip, dtype)
    for x in (0.01, 0.3, 1.0, 10.0, ridge * 0.8, ridge, ridge * 1.3, 1e3, 1e4, 1e5):
        explorer.set(intensity=x)
        problems = _problems(explorer.figure)
        assert not problems, f"intensity {x:g}: " + "\n".join(problems)


@pytest.mark.parametrize(
    "chip, weights", [("TPU v5e", None), ("TPU v5e", "int8"), ("H100 SXM", None)]
)
def test_matmul_explorer_over_its_sliders(chip, weights):
    explorer = widgets.matmul_explorer(chip, B=128, D=4096, F=4096, dtype="bf16", weights=weights)
    for B in (1, 16, 128, 256, 1024, 8192, 65536):
        for D in (64, 4096, 65536):
            explorer.set(B=B, D=D, F=D)
            problems = _problems(explorer.figure)
            assert not problems, f"B={B}, D=F={D}: " + "\n".join(problems)


@pytest.mark.parametrize("chip", ["TPU v5e", "H100 SXM"])
def test_sharded_explorer_over_its_sliders(chip):
    explorer = widgets.sharded_matmul_explorer(chip, n=2, B=1024, D=8192, F=8192)
    for n in explorer.controls["n"].options:
        for D in (256, 8192, 2**20):
            for link in (1e9, 1e13):
                explorer.set(n=n, D=D, link_bytes_per_s=link)
                problems = _problems(explorer.figure)
                assert not problems, f"n={n}, D={D}, link={link:g}: " + "\n".join(problems)


def test_figures_share_one_width_and_text_size():
    figs = [
        plots.roofline_figure("H100 SXM"),
        plots.linear_and_log_figure(),
        plots.resource_figure("TPU v5e", n=2, operations=RESOURCE_SHAPES),
        plots.decode_throughput_figure(),
        widgets.roofline_explorer().figure,
    ]
    widths = {round(float(f.get_size_inches()[0]), 3) for f in figs}
    assert widths == {plots.FIG_WIDTH_IN}
    # at a phone's width (360 CSS px for the figure) the smallest text is at least 8.5 px tall
    for fig in figs:
        fig.canvas.draw()
        sizes = [artist.get_fontsize() for _, artist in plots.text_artists(fig)]
        px_on_phone = min(sizes) * (96 / 72) * 360 / (plots.FIG_WIDTH_IN * 96)
        assert px_on_phone >= 8.5, (fig, min(sizes))


# ------------------------------------------------------------------ chapters' own figure cells


def _chapter_figures(stem):
    """Run a chapter's code cells in order; return the figures its figure cells show."""
    import ast
    from pathlib import Path

    import jupytext

    path = Path(__file__).resolve().parent.parent / "chapters" / f"{stem}.md"
    namespace, figures = {}, []
    for cell in jupytext.read(path).cells:
        if cell.cell_type != "code" or "pip" in cell.source:
            continue
        tree = ast.parse(cell.source)
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            *body, last = tree.body
            exec(compile(ast.Module(body=body, type_ignores=[]), "<cell>", "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
            if "figure" in cell.metadata.get("mystnb", {}):
                figures.append((cell.metadata["mystnb"]["figure"]["name"], value))
        else:
            exec(compile(tree, "<cell>", "exec"), namespace)
    return figures


def test_chapter_8_figure_cells():
    figures = _chapter_figures("08_problems")
    assert [name for name, _ in figures] == ["fig-ch08-throughput-knees", "fig-ch08-tile-roofline"]
    for name, fig in figures:
        assert float(fig.get_size_inches()[0]) == plots.FIG_WIDTH_IN, name
        problems = _problems(fig)
        assert not problems, name + ": " + "\n".join(problems)


# ------------------------------------------------------------------ chapters 12 and 13


def test_published_measurement_figures():
    from roofline import published

    figs = [
        published.measured_vs_bound_figure(),
        published.ratio_figure(),
        published.nim_latency_figure(),
    ]
    for fig in figs:
        _check(fig)
        assert round(float(fig.get_size_inches()[0]), 3) == plots.FIG_WIDTH_IN
        fig.canvas.draw()
        sizes = [artist.get_fontsize() for _, artist in plots.text_artists(fig)]
        px_on_phone = min(sizes) * (96 / 72) * 360 / (plots.FIG_WIDTH_IN * 96)
        assert px_on_phone >= 8.5, (fig, min(sizes))
