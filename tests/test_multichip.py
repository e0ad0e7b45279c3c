"""The multi-chip model: collectives on topologies checked against a step-by-step simulation
that moves real numbers, and the book's multi-chip figures pinned by hand derivations
(independent of the functions under test)."""

from collections import defaultdict

import numpy as np
import pytest
import sympy

import roofline as rl
from roofline.collectives import collective_bytes_per_link, collective_steps


# ----------------------------------------------------------------- a small network simulator
class Network:
    """n chips; every transfer names the directed links it crosses. A step's time is set by
    its busiest link (each link carries `one_way` bytes/s per direction) plus one latency."""

    def __init__(self, n, topology, links_per_chip=1):
        self.n, self.topology, self.links = n, topology, links_per_chip
        self.steps = []

    def step(self):
        self.steps.append(defaultdict(float))

    def path(self, src, dst, direction=+1):
        n = self.n
        if self.topology in ("ring", "bidirectional-ring"):
            hops, here = [], src
            while here != dst:
                nxt = (here + direction) % n
                hops.append((here, nxt, direction))  # n = 2: two links between the pair
                here = nxt
            return hops
        if self.topology == "mesh":
            return [(src, dst)]
        return [("up", src), ("down", dst)]  # switch: the chip's links in and out

    def send(self, src, dst, nbytes, direction=+1):
        for link in self.path(src, dst, direction):
            self.steps[-1][link] += nbytes

    def busiest_bytes(self):
        """Sum over steps of the busiest link's bytes (switch: per link of the chip's group)."""
        per_link = 1 / self.links if self.topology == "switch" else 1
        return sum(max(step.values()) * per_link for step in self.steps if step)

    def time(self, one_way, latency):
        return self.busiest_bytes() / one_way + len(self.steps) * latency


def ring_all_gather(net, shards, direction=+1):
    """Chip i starts with shards[i]; each step passes the newest piece to the next chip."""
    n = len(shards)
    have = [{i: shards[i]} for i in range(n)]
    for s in range(n - 1):
        net.step()
        moves = []
        for i in range(n):
            piece = (i - direction * s) % n
            moves.append(((i + direction) % n, piece, have[i][piece]))
            net.send(i, (i + direction) % n, have[i][piece].nbytes, direction)
        for dst, piece, data in moves:
            have[dst][piece] = data
    return [np.concatenate([h[k] for k in range(n)]) for h in have]


def ring_reduce_scatter(net, arrays, direction=+1):
    """Chip i starts with a whole array; after n-1 steps chip i holds the sum of chunk i."""
    n = len(arrays)
    chunks = [np.array_split(a, n) for a in arrays]
    acc = [[c.copy() for c in ch] for ch in chunks]
    for s in range(n - 1):
        net.step()
        moves = []
        for i in range(n):
            piece = (i - direction * (s + 1)) % n
            moves.append(((i + direction) % n, piece, acc[i][piece]))
            net.send(i, (i + direction) % n, acc[i][piece].nbytes, direction)
        for dst, piece, data in moves:
            acc[dst][piece] = chunks[dst][piece] + data if s == 0 else acc[dst][piece] + data
        # after a receive the chip adds its own contribution once (done at s == 0 above)
    return [acc[i][i] for i in range(n)]


def simulate(kind, n, topology, elements, links=1):
    """Run `kind` on random float64 data; return (network, per-chip results, inputs)."""
    rng = np.random.default_rng(n * 7 + len(topology))
    net = Network(n, topology, links)
    if kind == "all-gather":
        shards = [rng.standard_normal(elements // n) for _ in range(n)]
        return net, _all_gather(net, shards, topology), shards
    if kind == "reduce-scatter":
        arrays = [rng.standard_normal(elements) for _ in range(n)]
        return net, _reduce_scatter(net, arrays, topology), arrays
    if kind == "all-reduce":
        arrays = [rng.standard_normal(elements) for _ in range(n)]
        parts = _reduce_scatter(net, arrays, topology)
        return net, _all_gather(net, parts, topology), arrays
    blocks = [[rng.standard_normal(elements // (n * n)) for _ in range(n)] for _ in range(n)]
    return net, _all_to_all(net, blocks, topology), blocks


def _all_gather(net, shards, topology):
    n = len(shards)
    if topology == "ring":
        return ring_all_gather(net, shards)
    if topology == "bidirectional-ring":  # two half-size rings in opposite directions, same steps
        halves = [np.array_split(s, 2) for s in shards]
        first, second = Network(n, topology), Network(n, topology)
        a = ring_all_gather(first, [h[0] for h in halves], +1)
        b = ring_all_gather(second, [h[1] for h in halves], -1)
        for s1, s2 in zip(first.steps, second.steps):
            net.step()
            for link, v in list(s1.items()) + list(s2.items()):
                net.steps[-1][link] += v
        size = len(shards[0])
        return [
            np.concatenate(
                [
                    np.concatenate(
                        [
                            x[k * (size // 2) : (k + 1) * (size // 2)],
                            y[k * (size - size // 2) : (k + 1) * (size - size // 2)],
                        ]
                    )
                    for k in range(n)
                ]
            )
            for x, y in zip(a, b)
        ]
    net.step()  # switch or mesh: everyone sends to everyone at once
    for i in range(n):
        for j in range(n):
            if i != j:
                net.send(i, j, shards[i].nbytes)
    return [np.concatenate(shards) for _ in range(n)]


def _reduce_scatter(net, arrays, topology):
    n = len(arrays)
    if topology == "ring":
        return ring_reduce_scatter(net, arrays)
    if topology == "bidirectional-ring":
        first, second = Network(n, topology), Network(n, topology)
        halves = [[c[: len(c) // 2] for c in np.array_split(a, n)] for a in arrays]
        others = [[c[len(c) // 2 :] for c in np.array_split(a, n)] for a in arrays]
        a = ring_reduce_scatter(first, [np.concatenate(h) for h in halves], +1)
        b = ring_reduce_scatter(second, [np.concatenate(h) for h in others], -1)
        for s1, s2 in zip(first.steps, second.steps):
            net.step()
            for link, v in list(s1.items()) + list(s2.items()):
                net.steps[-1][link] += v
        return [np.concatenate([x, y]) for x, y in zip(a, b)]
    net.step()
    chunks = [np.array_split(a, n) for a in arrays]
    for i in range(n):
        for j in range(n):
            if i != j:
                net.send(i, j, chunks[i][j].nbytes)
    return [sum(chunks[i][j] for i in range(n)) for j in range(n)]


def _all_to_all(net, blocks, topology):
    n = len(blocks)
    net.step()
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            size = blocks[i][j].nbytes
            if topology == "bidirectional-ring":
                forward = (j - i) % n
                if forward < n - forward:
                    net.send(i, j, size, +1)
                elif forward > n - forward:
                    net.send(i, j, size, -1)
                else:  # exactly opposite: half each way
                    net.send(i, j, size / 2, +1)
                    net.send(i, j, size / 2, -1)
            else:
                net.send(i, j, size)
    return [[blocks[i][j] for i in range(n)] for j in range(n)]


def _ring_steps(kind, n, topology):
    """The latency steps each algorithm above takes (all-to-all is routed in one step here)."""
    if topology in ("switch", "mesh"):
        return 2 if kind == "all-reduce" else 1
    return {"all-gather": n - 1, "reduce-scatter": n - 1, "all-reduce": 2 * (n - 1)}.get(kind)


CASES = [
    (kind, n, topology)
    for kind in rl.COLLECTIVES
    for n in (2, 3, 4, 5, 8)
    for topology in ("ring", "bidirectional-ring", "switch", "mesh")
]


@pytest.mark.parametrize("kind,n,topology", CASES)
def test_collective_bandwidth_term_matches_simulation(kind, n, topology):
    elements = n * n * 2 * 6  # divisible into n chunks, halves and n^2 blocks
    links = 18 if topology == "switch" else 1
    net, results, inputs = simulate(kind, n, topology, elements, links)
    nbytes = elements * 8  # float64
    assert collective_bytes_per_link(kind, nbytes, n, topology, links) == pytest.approx(
        net.busiest_bytes(), rel=1e-12
    )
    # the data really arrived (and was really added)
    if kind == "all-reduce":
        total = sum(inputs)
        assert all(np.allclose(r, total) for r in results)
    elif kind == "all-gather":
        assert all(np.array_equal(r, np.concatenate(inputs)) for r in results)
    elif kind == "reduce-scatter":
        total = sum(inputs)
        assert np.allclose(np.concatenate(results), total)
    else:
        assert all(results[j][i] is inputs[i][j] for i in range(n) for j in range(n))
    steps = _ring_steps(kind, n, topology)
    if steps is not None:
        assert collective_steps(kind, n, topology) == steps == len(net.steps)
        W, latency = 4.5e10, 1e-6
        assert rl.collective_time(
            kind, nbytes, n, W, topology, latency_s=latency, links=links
        ) == pytest.approx(net.time(W, latency), rel=1e-12)


def test_standard_bandwidth_terms_by_hand():
    V, W, n = 1e9, 5e10, 8
    assert rl.collective_time("all-gather", V, n, W, "ring") == pytest.approx(7 / 8 * V / W)
    assert rl.collective_time("all-gather", V, n, W, "bidirectional-ring") == pytest.approx(
        7 / 8 * V / W / 2
    )
    assert rl.collective_time("all-reduce", V, n, W, "ring") == pytest.approx(2 * 7 / 8 * V / W)
    assert rl.collective_time("all-reduce", V, n, W, "torus") == pytest.approx(7 / 8 * V / W)
    assert rl.collective_time("all-reduce", V, n, W, "switch", links=18) == pytest.approx(
        2 * 7 / 8 * V / (18 * W)
    )
    # all-reduce = reduce-scatter + all-gather, on every topology, latency included
    for topology in ("ring", "bidirectional-ring", "switch", "mesh"):
        parts = sum(
            rl.collective_time(k, V, n, W, topology, latency_s=1e-6, links=4)
            for k in ("reduce-scatter", "all-gather")
        )
        assert rl.collective_time(
            "all-reduce", V, n, W, topology, latency_s=1e-6, links=4
        ) == pytest.approx(parts)
    # all-to-all on a bidirectional ring is a quarter of an all-gather for large even n
    big = 1024
    ratio = rl.collective_time("all-to-all", V, big, W, "bidirectional-ring") / rl.collective_time(
        "all-gather", V, big, W, "bidirectional-ring"
    )
    assert ratio == pytest.approx(0.25, rel=2e-3)


def test_symbolic_collectives():
    n, V, W = sympy.symbols("n V W", positive=True)
    t = rl.collective_time("all-reduce", V, n, W, "bidirectional-ring")
    assert sympy.simplify(t - (n - 1) * V / (n * W)) == 0
    t = rl.collective_time("all-gather", V, n, W, "ring")
    assert sympy.limit(t, n, sympy.oo) == V / W


def test_small_messages_are_latency_bound():
    # 8 KB over 8 v5e chips in a bidirectional ring: 7 hops of 1 us dwarf the bytes
    t = rl.collective_time("all-gather", 8e3, 8, 4.5e10, "bidirectional-ring", latency_s=1e-6)
    assert t == pytest.approx(7e-6 + 7 / 8 * 8e3 / 9e10)
    assert 7e-6 / t > 0.98


@pytest.mark.parametrize(
    "bad,match",
    [
        (dict(kind="allreduse"), "Did you mean 'all-reduce'"),
        (dict(topology="rign"), "Did you mean 'ring'"),
        (dict(n=1), "n >= 2"),
        (dict(n=2.5), "whole number"),
        (dict(nbytes=-1), "positive"),
        (dict(one_way_bytes_per_s=0), "positive"),
    ],
)
def test_collective_errors_say_what_to_do(bad, match):
    args = dict(kind="all-reduce", nbytes=1e6, n=4, one_way_bytes_per_s=1e10, topology="ring")
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        rl.collective_time(**args)


# ----------------------------------------------------------------- the book's figures, by hand
V5E_PEAK, V5E_HBM, V5E_LINK = 197e12, 819e9, 4.5e10
H100_PEAK, NVLINK_ONE_WAY = 1979e12 / 2, 25e9


def test_v5e_pair_is_hbm_bound_at_batch_128():
    B, D, F = 128, 16384, 16384
    est = rl.sharded_estimate(B, D, F, "TPU v5e", n=2)
    t_math = 2 * B * D * F / 2 / V5E_PEAK  # 174 us
    t_hbm = 2 * (B * D / 2 + D / 2 * F + B * F) / V5E_HBM  # 335 us
    t_link = 2 * B * F / V5E_LINK  # 93 us
    assert est.t_math == pytest.approx(t_math) and est.t_memory == pytest.approx(t_hbm)
    assert est.t_link == pytest.approx(t_link)
    assert 334e-6 < t_hbm < 336e-6 and 174e-6 < t_math < 175e-6
    assert est.bound == "memory" and est.t_lower == pytest.approx(t_hbm)
    assert est.t_upper == pytest.approx(t_math + t_hbm + t_link)
    assert D > rl.sharded_critical_D("TPU v5e", n=2)  # the link condition alone says "compute"


def test_critical_D_on_each_topology_by_hand():
    assert rl.sharded_critical_D("TPU v5e", n=2) == pytest.approx(2 * V5E_PEAK / V5E_LINK)  # 8756
    for n, expected in ((4, 13133), (8, 30644), (16, 65667)):  # torus axis: (n-1) P / W
        assert rl.sharded_critical_D("TPU v5e", n=n) == pytest.approx((n - 1) * V5E_PEAK / V5E_LINK)
        assert round(rl.sharded_critical_D("TPU v5e", n=n)) == expected
    # one-way ring (the book's first model) doubles it
    assert rl.sharded_critical_D("TPU v5e", n=8, topology="ring") == pytest.approx(
        7 * 2 * V5E_PEAK / V5E_LINK
    )
    # 8 H100s on NVSwitch: every GPU sends over all 18 links (450 GB/s one way)
    nvswitch = rl.sharded_critical_D("H100 SXM", n=8)
    assert nvswitch == pytest.approx(7 * 2 * H100_PEAK / (18 * NVLINK_ONE_WAY))
    assert round(nvswitch) == 30784
    assert rl.sharded_critical_D("H100 SXM", n=8, topology="ring") / nvswitch == pytest.approx(18)


def test_symbolic_sharded_estimate_derives_the_thresholds():
    B, D, F, n = sympy.symbols("B D F n", positive=True)
    est = rl.sharded_estimate(B, D, F, "TPU v5e", n=n)  # torus axis: bidirectional ring
    d_star = sympy.solve(sympy.Eq(est.t_math, est.t_link), D)[0]
    assert d_star.free_symbols == {n}  # B and F cancel
    for k in (3, 8, 16):
        assert float(d_star.subs(n, k)) == pytest.approx((k - 1) * V5E_PEAK / V5E_LINK, rel=1e-12)


def test_switch_domain_and_link_errors():
    with pytest.raises(ValueError, match="at most 8"):
        rl.sharded_estimate(128, 8192, 8192, "H100 SXM", n=16)
    with pytest.raises(ValueError, match="at most 2"):
        rl.sharded_estimate(128, 8192, 8192, "H100 PCIe", n=4)
    with pytest.raises(ValueError, match="no chip-to-chip link"):
        rl.sharded_estimate(128, 8192, 8192, "RTX 4090", n=2)


def test_estimate_names_every_resource_and_the_link_is_not_memory():
    est = rl.sharded_estimate(128, 16384, 16384, "TPU v5e", n=2)
    text = str(est)
    assert "math" in text and "HBM2" in text and "ICI" in text and "memory-bound" in text
    kinds = {t.kind for t in est.terms}
    assert kinds == {"compute", "memory", "link"}
    link = rl.sharded_estimate(64, 2048, 8192, "TPU v5e", n=8)
    assert link.bound == "link" and link.slowest.startswith("ICI")
    assert rl.sharded_estimate(4096, 65536, 8192, "TPU v5e", n=2).bound == "compute"
    # single-chip estimates keep two resources and their old times
    one = rl.estimate(rl.matmul(128, 8192, 8192), "H100 SXM")
    assert [t.kind for t in one.terms] == ["compute", "memory"] and one.t_link == 0
    assert one.t_upper == pytest.approx(one.t_math + one.t_comms)


def test_catalog_links_quote_the_vendor():
    v5e = rl.get_chip("TPU v5e").interconnect
    assert "400 GBps" in v5e.vendor.says and "ICI ports per chip: 4" in v5e.vendor.says
    assert v5e.vendor_one_way_bytes_per_s == pytest.approx(400e9 / 4 / 2)
    assert v5e.one_way_bytes_per_s == 4.5e10 and v5e.topology == "torus"
    assert "1200 GBps" in rl.get_chip("TPU v5p").interconnect.vendor.says
    h100 = rl.get_chip("H100 SXM").interconnect
    assert h100.topology == "switch" and h100.domain_chips == 8
    assert h100.one_way_total_bytes_per_s == pytest.approx(450e9)
    for name in rl.list_chips():
        link = rl.get_chip(name).interconnect
        if link is not None:
            assert link.topology in ("torus", "switch", "mesh") and link.domain_chips
            if link.vendor is not None:
                assert link.vendor.url.startswith("https://cloud.google.com/tpu/")


# homework part 2 by hand: tests/test_homework_draws.py


@pytest.mark.slow
def test_chapter6_page_prints_the_package_figures(book_html):
    text = (book_html / "chapters" / "06_communication_rooflines.html").read_text(encoding="utf-8")
    for figure in ("8,756", "13,133", "30,644", "65,667", "30,784"):
        assert figure in text, figure
    for old in ("554,120", "26,267", "61,289", "131,333"):  # the one-way-ring-of-single-links model
        assert f"D &gt; {old}" not in text and f"D > {old}" not in text


def test_resource_figure_places_each_shape_in_its_region():
    import matplotlib.figure

    shapes = [
        ("memory", 128, 16384, 16384),
        ("compute", 4096, 65536, 8192),
        ("link", 8192, 4096, 16384),
    ]
    fig = rl.plots.resource_figure("TPU v5e", n=2, operations=shapes)
    assert isinstance(fig, matplotlib.figure.Figure)
    for (label, x, y, bound), (expected, B, D, F) in zip(fig.roofline_points, shapes):
        assert bound == expected == label
        # by hand: FLOPs per HBM byte and per byte on the one link (2BF bytes), bf16
        flops = 2 * B * D * F / 2
        assert x == pytest.approx(flops / (2 * (B * D / 2 + D / 2 * F + B * F)))
        assert y == pytest.approx(flops / (2 * B * F))
    ridges = {r["resource"]: r["intensity"] for r in fig.roofline_ridges}
    assert ridges == {
        "memory": pytest.approx(V5E_PEAK / V5E_HBM),
        "link": pytest.approx(V5E_PEAK / V5E_LINK),
    }
    assert "memory-bound" in rl.plots.alt_text(fig) and "link-bound" in rl.plots.alt_text(fig)


@pytest.mark.slow
def test_every_figure_cell_shows_its_figure_on_the_page(book_html):
    """A cell that declares alt text must put an image with that alt text on its page (a plotting
    function that returns None leaves the page without the figure and without an error)."""
    import html
    from pathlib import Path

    import jupytext

    root = Path(__file__).resolve().parent.parent
    import re

    def norm(text):
        return " ".join(html.unescape(text).split())

    missing = []
    for md in sorted((root / "chapters").glob("*.md")):
        page = (book_html / "chapters" / f"{md.stem}.html").read_text(encoding="utf-8")
        shown = {norm(alt) for alt in re.findall(r'<img[^>]*\balt="([^"]*)"', page)}
        for cell in jupytext.read(md).cells:
            alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
            if cell.cell_type == "code" and alt and "explorer(" not in cell.source:
                if norm(alt) not in shown:
                    missing.append(f"{md.name}: {alt[:60]}")
    assert not missing, missing
