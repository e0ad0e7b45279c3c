"""One model of the machine: which chips a group occupies, which links it uses, and where the
data-centre network starts. Every multi-chip estimate in the package asks this module.

A **group** is the chips that run one collective together: all n chips of
`roofline.all_reduce_time`, one axis of a training layout (`roofline.training_step`: its
`size` chips sit `stride` apart, the product of the layout's inner degrees), the tp chips of a
serving replica. `route(chip, size, stride, slice_chips)` says what the group occupies:

- **TPU (ICI, a torus)**: the job's chips form one slice of the shape Google sells
  (`slice_shape`): on a 2D torus (v5e, v6e: 4 ICI ports) 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16
  (the v5e page's topologies); on a 3D torus (v4, v5p: 6 ports) 2x2x1, 2x2x2, 2x2x4, 2x4x4 and
  above 64 chips whole 4x4x4 cubes, as cubic as they come (4x4x4, 4x4x8, 4x8x8, 8x8x8,
  8x8x16 for 1024 chips, ..., 16x16x24 = 6144: Google's v5p table, and for v4 the shapes
  Google's cluster tool xpk lists, up to 8x16x16). The layout's axes take the slice's axes innermost first
  (the shortest physical axis first), as a mesh maps onto devices: an axis of the group that
  spans a whole slice axis wraps round (a **bidirectional ring**) when the catalog's rule says
  that axis has wraparound links (v5e/v6e: only an axis of 16; v4/v5p/TPU7x: only a slice of
  whole cubes, every axis a multiple of 4; Google: "smaller topologies ... without wraps on
  dims <16" and "all 4x4x4 and larger slices have full 3D torus connectivity"; v4's
  2A=B=C / 2A=2B=C shapes may *also* be wired as twisted tori, not modelled); otherwise the
  group's chips along it are a **line** (two chips: one link, a "ring" of two). A group whose
  chips sit `step` apart along an axis (an outer layout axis) shares each link with the `step`
  groups interleaved with it: each gets 1/step of the link (all of them run at once).
  So 4 v5e chips are a 2x2 (two axes of one link each), not a line of 4: Google sells no 1x4
  v5e slice. A run may ask for another shape of the same chips (`slice_shape=`, e.g. MLPerf's
  GPT-3 on 6144 v5p: "8x16x48", checked by `parse_slice_shape`): then each layout axis, in
  turn, takes whole free slice axes whose lengths multiply to its degree, three axes before
  two before one, as `jax.experimental.mesh_utils` places a mesh axis on a torus; else the
  shortest-first share above.
- **NVLink through NVSwitch** (H100/H200/B200: 8 per HGX board, 72 in an NVL72 rack): one
  "switch" of all the chip's links at once. **AMD Infinity Fabric** (MI300X, 8 per platform):
  a "mesh", one direct link to every other chip. **No chip-to-chip link** (PCIe cards): a
  "ring" over PCIe (`host_link`, one link each way) inside one host of `PCIE_HOST_CHIPS` chips.
- **Beyond one domain** (more than the NVSwitch's 8 GPUs; beyond one TPU slice, a pod by
  default or `slice_chips` when the job runs as several slices, e.g. MaxText's `dcn_*`
  axes): the data-centre network (DCN, InfiniBand, Ethernet), one NIC share per chip
  (`chip.network_bytes_per_s`, one way) into a non-blocking fabric, costed as a "switch" with
  one link per chip. A group with several members in each domain runs in two levels (inside
  each domain, then across: `roofline.collectives.hierarchical_all_reduce_time`).

`collective_seconds(kind, nbytes, route)` then times one collective on that route with the
formulas of `roofline.collectives` (one-way bandwidth per link, links full duplex; a ring
reduce-scatter + all-gather for all-reduce; a torus axis with wraparound as a bidirectional
ring; bandwidth at line rate, no in-switch reduction; per-hop `latency_s` and a fixed
`collective_latency_s` per collective when given). A group over several torus axes at once
uses them all, the array split in proportion to each axis's bandwidth
(`roofline.collectives.multi_axis_collective_time`). `group_link_load` gives the same
collective as the load on the group's busiest link (a D-split matmul's link term:
`roofline.sharded_estimate(..., slice_shape=)`), and `axis_topology` the topology of one layout
axis, alone or in an explicit slice shape: every caller asks `route`, so one collective on the
same chips has one answer.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from .catalog import get_chip
from .validate import is_symbolic

__all__ = [
    "PCIE_HOST_CHIPS",
    "Axis",
    "Route",
    "slice_shape",
    "parse_slice_shape",
    "route",
    "job_slice_chips",
    "collective_seconds",
    "group_all_reduce_seconds",
    "group_link_load",
    "axis_topology",
    "most_chips_on_one_axis",
]

#: Chips one host joins over PCIe where the catalog gives no chip-to-chip link (an 8-GPU
#: PCIe server; an assumption, not a vendor figure).
PCIE_HOST_CHIPS = 8


@dataclass(frozen=True)
class Axis:
    """One ring, line, switch or mesh a group's collective runs on.

    chips: chips along it; topology: "ring", "bidirectional-ring", "line", "switch" or
    "mesh" (as `roofline.collectives.collective_time` takes it); one_way_bytes_per_s: one
    link, one direction, as this group gets it (a link shared by `step` interleaved groups
    counts 1/step); links: links per chip into a switch."""

    chips: int
    topology: str
    one_way_bytes_per_s: float
    links: int = 1


@dataclass(frozen=True)
class Route:
    """Where a group of `size` chips runs its collectives.

    kind "link": all on the chips' own interconnect, over `axes`; "network": every member in
    another domain, one NIC share each (`network_bytes_per_s`, one way); "two-level":
    `per_node` members in each domain (over `axes`) and `size / per_node` domains joined by
    the network. `name` says which links, for people."""

    name: str
    kind: str
    size: int
    axes: tuple = ()
    network_bytes_per_s: float = 0.0
    per_node: int = 1

    def describe(self) -> str:
        """In words: "switch", "2 x 2 x 4: ring, ring, line", "network",
        "8 per node (switch) + network"."""
        inside = " x ".join(str(a.chips) for a in self.axes)
        tops = ", ".join(a.topology for a in self.axes)
        here = tops if len(self.axes) == 1 else f"{inside}: {tops}"
        if self.kind == "link":
            return here or "-"
        if self.kind == "network":
            return "network"
        return f"{self.per_node} per node ({here}) + network"

    @property
    def nodes(self) -> int:
        """Domains the network joins (1 when the group stays inside one)."""
        return self.size // self.per_node if self.kind == "two-level" else 1

    @property
    def p2p_bytes_per_s(self) -> float:
        """One chip to one other, one way: the NIC once the pair is in different domains,
        else all the chip's links into a switch, or one torus/PCIe link."""
        if self.kind != "link":
            return self.network_bytes_per_s
        a = self.axes[0]
        return a.one_way_bytes_per_s * (a.links if a.topology == "switch" else 1)


def is_torus(chip) -> bool:
    """Whether `chip`'s links form a TPU torus (the only links with slice shapes)."""
    link = chip.interconnect
    return link is not None and link.topology == "torus"


def _torus_dims(chip) -> int:
    """2 for a 2D torus (4 ICI ports), 3 for a 3D torus (6 ports)."""
    return 3 if chip.interconnect.count >= 6 else 2


def _cube_shape(n) -> tuple | None:
    """Whole 4x4x4 cubes, as cubic as possible: the shortest longest axis, and among shapes
    that tie on it the longest shortest axis (Google's v5p table: 4x4x8, 4x8x8, 8x8x8,
    8x8x16 for 1024 chips, 8x16x16, 16x16x16, 16x16x24; xpk's v4 list: 8x8x12, 8x8x16,
    8x16x16; never 4x16x16, which ties 8x8x16 on its longest axis); None when n is not a
    multiple of 64."""
    if n % 64:
        return None
    cubes, best = n // 64, None
    for a in range(1, cubes + 1):
        for b in range(a, cubes // a + 1):
            c, rest = divmod(cubes, a * b)
            if rest == 0 and c >= b and (best is None or (c, -a) < (best[2], -best[0])):
                best = (a, b, c)
    return tuple(4 * x for x in best) if best else None


def slice_shape(chip, n) -> tuple:
    """The axes (chips per axis, shortest first) of a TPU slice of `n` chips (see the module
    docstring); a power of two takes Google's shapes, a 3D torus above 64 chips whole cubes.
    Another n: one axis (up to the longest axis), else whole axes of that length (not a shape
    Google sells: an approximation). Not a torus: (n,)."""
    chip = get_chip(chip)
    if not is_torus(chip) or n <= 2:
        return (n,)
    link = chip.interconnect
    most, dims = link.axis_chips or n, _torus_dims(chip)
    shape = None
    if dims == 3 and n >= 64:
        shape = _cube_shape(n)
    if shape is None and n & (n - 1) == 0:
        k = n.bit_length() - 1
        shape = tuple(sorted(2 ** (k // dims + (i < k % dims)) for i in range(dims)))
        shape = tuple(a for a in shape if a > 1)
    if shape is not None and max(shape) <= most:
        return shape
    if n <= most:
        return (n,)
    if n % most or n // most > most:
        raise ValueError(
            f"n = {n} {chip.name} chips make no slice shape the book knows: pick a power of "
            f"two, a multiple of 64 on a 3D torus, or two whole axes of {most}"
        )
    return tuple(sorted((most, n // most)))


def parse_slice_shape(chip, shape, n_chips=None) -> tuple:
    """An explicit TPU slice shape, e.g. (8, 16, 48) or "8x16x48" (the topology string a
    run asks for), checked against the chip's torus and returned shortest axis first, axes
    of 1 dropped. Each axis wraps round by the catalog's rule (`_wraps`: v5e/v6e only an
    axis of 16; v5p/TPU7x every axis when all three are multiples of 4, whole cubes, else
    none; v4 likewise).

    Raises ValueError, saying what to pass, when the chip is not a torus, the shape has more
    axes than its torus (2 on v5e/v6e, 3 on v4/v5p), a 3D slice above one 4x4x4 cube is not
    whole cubes, an axis is longer than the catalog's `axis_chips` (not applied to whole
    cubes: pods are built of 4 x 4 x 4 cubes joined by reconfigurable optical links;
    MLPerf's GPT-3 run on 6144 v5p printed the topology 8x16x48, an axis of 48 beyond a
    pod's 28, and Google's xpk lists v5p and TPU7x topologies of whole cubes with axes up to
    256), its product is not `n_chips` (when given) or exceeds one slice, or a shape that is
    not whole cubes is not the one Google sells for its chips (`slice_shape`: v5e/v6e 2x2 ...
    16x16; v4/v5p/TPU7x 2x2x1, 2x2x2, 2x2x4, 2x4x4)."""
    chip = get_chip(chip)
    if not is_torus(chip):
        raise ValueError(
            f"a slice shape is for TPU tori; {chip.name}'s chips are joined by "
            f"{_domain(chip)[2] or 'no chip-to-chip link'}: leave slice_shape out"
        )
    dims = _torus_dims(chip)
    try:
        text = shape.lower().replace("×", "x").replace(" ", "") if isinstance(shape, str) else None
        axes = [int(a) for a in text.split("x")] if text is not None else list(shape)
    except (TypeError, ValueError):
        axes = None
    if not axes or any(isinstance(a, bool) or not isinstance(a, int) or a < 1 for a in axes):
        raise ValueError(
            f"slice_shape is whole numbers of chips per axis, e.g. (8, 16, 48) or "
            f"'8x16x48'; got {shape!r}"
        )
    axes = sorted(a for a in axes if a > 1) or [1]
    chips, cap = math.prod(axes), _domain(chip)[0]
    m = chip.interconnect.wraparound_multiple
    cubes = dims == 3 and m is not None and all(a % m == 0 for a in axes) and len(axes) == 3
    if len(axes) > dims:
        raise ValueError(
            f"a {chip.name} slice has at most {dims} axes (a {dims}D torus); got {shape!r}"
        )
    if dims == 3 and m is not None and chips > m**3 and not cubes:
        raise ValueError(
            f"a {chip.name} slice of more than {m**3} chips is made of whole {m}x{m}x{m} cubes: "
            f"make every axis of {shape!r} a multiple of {m}"
        )
    # whole cubes are joined by optical links in any arrangement (MLPerf's v5p run: 8x16x48),
    # so the pod's longest axis caps only slices smaller than a cube and 2D tori
    most = None if cubes else chip.interconnect.axis_chips
    if most is not None and max(axes) > most:
        raise ValueError(
            f"one axis of a {chip.name} slice holds at most {most} chips; {shape!r} has "
            f"{max(axes)}: run the job as several slices (slice_chips=) instead"
        )
    if n_chips is not None and chips != n_chips:
        raise ValueError(
            f"slice_shape {'x'.join(map(str, axes))} holds {chips} chips, not the {n_chips} of "
            "the slice: make the axes multiply to the chips in one slice"
        )
    if chips > cap:
        raise ValueError(
            f"slice_shape {'x'.join(map(str, axes))} holds {chips} chips; one {chip.name} "
            f"slice holds at most {cap}"
        )
    if not cubes and chips > 1 and tuple(axes) != _sold_or_none(chip, chips):
        # a 2D torus, or a 3D one below a cube: only the shapes Google sells (2x2x1 ... 2x4x4)
        sold = _sold_or_none(chip, chips)
        offer = f"nor any other of {chips} chips"
        if sold is not None:
            offer = f"for {chips} chips it sells {'x'.join(map(str, sold))}"
        raise ValueError(
            f"Google sells no {chip.name} slice of shape {'x'.join(map(str, axes))} ({offer}); "
            "pass one of the shapes its page lists, or leave slice_shape out"
        )
    return tuple(axes)


def _sold_or_none(chip, n) -> tuple | None:
    """Google's shape for a slice of n chips below one cube or on a 2D torus (a power of two,
    `slice_shape`); None for any other n (no such slice is sold)."""
    if n & (n - 1):
        return None
    try:
        return slice_shape(chip, n)
    except ValueError:
        return None


def _wraps(chip, shape, length) -> bool:
    """Whether a whole slice axis of `length` chips in a slice of `shape` has wraparound."""
    m = chip.interconnect.wraparound_multiple
    if not m:
        return True
    if _torus_dims(chip) == 3:
        return all(a % m == 0 for a in shape)  # whole cubes: every axis wraps
    return length % m == 0


def _place(shape, free, used, g, whole_first=False) -> tuple:
    """Give a layout axis of `g` chips its place in a slice of `shape` (`free`: chips left on
    each slice axis; `used`: chips the inner layout axes took there, updated in place).

    Each slice axis, shortest first, gives the largest share of what is left of g that
    divides it. With `whole_first` (an explicit slice shape, asked for a layout), whole slice
    axes that no inner axis touched and whose lengths multiply to g are taken first, three
    axes before two before one, as `jax.experimental.mesh_utils` places a logical axis on a
    torus ("map to more physical axes first for higher bandwidth"): tp = 16 on a 4x4x16 takes
    the 4x4 plane, tp = 8 on 8x16x48 the axis of 8.
    Returns ((slice axis, chips t, chips `step` apart), ...) and what is left of g (1 when
    it fits)."""
    whole = _whole_axes(shape, used, g) if whole_first and g > 1 else ()
    for i in whole:
        free[i], used[i] = 1, shape[i]
    if whole:
        return tuple((i, shape[i], 1) for i in whole), 1
    parts = []
    for i in range(len(shape)):
        t = math.gcd(g, free[i])
        if t > 1:
            parts.append((i, t, used[i]))
            free[i], used[i], g = free[i] // t, used[i] * t, g // t
    return tuple(parts), g


def _whole_axes(shape, used, g) -> tuple:
    """Untouched slice axes whose lengths multiply to g: the first such set of three, else
    two, else one (in axis order), as mesh_utils tries them; () when none does."""
    untouched = [i for i, d in enumerate(shape) if used[i] == 1 and d > 1]
    for k in (3, 2, 1):
        for combo in itertools.combinations(untouched, k):
            if math.prod(shape[i] for i in combo) == g:
                return combo
    return ()


def _torus_axes(chip, shape, size, stride, inner=None, whole_first=False) -> tuple:
    """The group's axes: `size` chips `stride` apart in a slice of `shape`.

    The inner layout axes (`inner`, their degrees innermost first; default one axis of
    `stride` chips) take their places first, then the group (`_place`; `whole_first` for an
    explicit slice shape). On each slice axis
    the group has t chips, `step` apart (the inner axes' share of that axis): a wrapped ring
    when it spans the whole wrapped axis, else a line (two chips: one link); each link is
    shared by the `step` interleaved groups, so it counts W / step."""
    link, free, used = chip.interconnect, list(shape), [1] * len(shape)
    inner = tuple(d for d in (inner if inner is not None else (stride,)) if d > 1)
    if math.prod(inner) != stride:
        raise ValueError(f"inner degrees {inner} multiply to {math.prod(inner)}, not {stride}")
    left = 1
    for d in inner:
        _, rest = _place(shape, free, used, d, whole_first)
        left *= rest
    parts, g = _place(shape, free, used, size, whole_first) if left == 1 else ((), 0)
    axes = []
    for i, t, step in parts:
        d = shape[i]
        wrapped = step * t == d and d > 2 and _wraps(chip, shape, d)
        top = "bidirectional-ring" if wrapped else ("ring" if t == 2 else "line")
        axes.append(Axis(t, top, link.one_way_bytes_per_s / step))
    if g != 1:
        raise ValueError(
            f"a group of {size} {chip.name} chips {stride} apart does not fit the axes of a "
            f"{'x'.join(map(str, shape))} slice: use parallel degrees that divide its axes"
        )
    return tuple(axes)


def _domain(chip) -> tuple:
    """(chips one domain joins, the link inside it, its topology name, links per chip)."""
    link = chip.interconnect
    if link is not None and link.topology is not None:
        top = link.topology
        return link.slice_chips or link.domain_chips or math.inf, link, top, link.count
    if chip.host_link is not None:
        return PCIE_HOST_CHIPS, chip.host_link, "ring", 1
    return 1, None, None, 1


def _inside(chip, size, stride, slice_chips, shape=None, inner=None) -> tuple:
    """The axes of `size` chips `stride` apart inside one domain (`shape`: an explicit,
    checked slice shape, else Google's sold shape for `slice_chips`)."""
    _, link, top, links = _domain(chip)
    if top == "torus":
        if shape is not None:
            return _torus_axes(chip, shape, size, stride, inner, whole_first=True)
        return _torus_axes(chip, slice_shape(chip, slice_chips), size, stride, inner)
    return (Axis(size, top, link.one_way_bytes_per_s, links),)


def _network(chip, network_bytes_per_s):
    if network_bytes_per_s is not None:
        return network_bytes_per_s
    if chip.network_bytes_per_s is None:
        raise ValueError(
            f"this group leaves one {chip.name} interconnect domain and the catalog has no "
            "data-centre network figure for this chip: pass network_bytes_per_s (one way, "
            "per chip; e.g. 50e9 for one 400 Gb/s NIC per GPU; CLI: --network '50 GB/s')"
        )
    return chip.network_bytes_per_s


def route(
    chip, size, stride=1, slice_chips=None, network_bytes_per_s=None, slice_shape=None, inner=None
) -> Route:
    """The links a group of `size` chips, `stride` apart, uses (see the module docstring).

    slice_chips: chips in one ICI slice / NVLink domain of the job (default: the catalog's
    domain, a TPU pod or an 8-GPU board; pass the slice size when a TPU job runs as several
    slices over the data-centre network). The group stays on the interconnect while
    size x stride <= slice_chips; beyond, its members in different slices talk over the
    network (two levels when several share a slice).
    slice_shape: an explicit TPU slice shape instead of Google's sold shape for slice_chips
    (`parse_slice_shape`: (8, 16, 48) or "8x16x48"; its product is the slice's chips). A
    layout axis takes whole free slice axes whose lengths multiply to its degree (three
    before two before one, as jax's mesh_utils), else the shortest-first share.
    inner: the degrees of the layout axes inside this one, innermost first (their product
    is `stride`; default one axis of `stride` chips): each takes its place in turn."""
    chip = get_chip(chip)
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"a group is a whole number of chips, 1 or more; got {size!r}")
    shape = None
    if slice_shape is not None:
        shape = parse_slice_shape(chip, slice_shape, slice_chips)
        slice_chips = math.prod(shape)
    domain, link, _, _ = _domain(chip)
    if slice_chips is not None:
        if slice_chips > domain:
            raise ValueError(
                f"slice_chips = {slice_chips} is more than one {chip.name} domain ({domain})"
            )
        domain = slice_chips
    if slice_chips is None and size * stride > domain:
        # a job larger than one domain runs as equal slices (6144 TPU v4: two of 3072)
        domain = job_slice_chips(chip, size * stride)
    slice_n = slice_chips or min(size * stride, domain)
    if size * stride <= domain:
        axes = _inside(chip, size, stride, slice_n, shape, inner) if size > 1 else ()
        return Route(link.name if link is not None else "-", "link", size, axes)
    net = _network(chip, network_bytes_per_s)
    net_name = chip.network.name if chip.network is not None else "network"
    per_node = max(
        (d for d in range(1, size + 1) if size % d == 0 and d * stride <= domain), default=1
    )
    if per_node == 1:
        return Route(net_name, "network", size, (), net)
    axes = _inside(chip, per_node, stride, slice_n, shape, inner)
    return Route(f"{link.name} + {net_name}", "two-level", size, axes, net, per_node)


def job_slice_chips(chip, n_chips, slice_chips=None) -> int:
    """Chips in one slice (one domain) of a job of `n_chips`: `slice_chips` when given, else
    all of them up to one domain (a TPU pod, an 8-GPU board), else the largest whole share
    of the job one domain holds (6144 TPU v4 chips: two slices of 3072, as PaLM ran)."""
    if slice_chips is not None:
        return slice_chips
    domain = _domain(get_chip(chip))[0]
    if n_chips <= domain:
        return n_chips
    return max(d for d in range(1, int(domain) + 1) if n_chips % d == 0)


def _on_axes(kind, nbytes, axes, latency_s) -> float:
    from .collectives import collective_time, multi_axis_collective_time

    if len(axes) == 1:
        a = axes[0]
        return collective_time(
            kind, nbytes, a.chips, a.one_way_bytes_per_s, a.topology, latency_s, a.links
        )
    if kind == "all-to-all":
        # dimension-ordered: one all-to-all per axis, each moving every chip's whole share
        n = math.prod(a.chips for a in axes)
        return sum(_on_axes(kind, nbytes * a.chips / n, (a,), latency_s) for a in axes)
    return multi_axis_collective_time(
        kind,
        nbytes,
        tuple(a.chips for a in axes),
        tuple(a.one_way_bytes_per_s for a in axes),
        tuple(a.topology for a in axes),
        latency_s,
    )


def collective_seconds(
    kind,
    nbytes,
    r: Route,
    latency_s=0.0,
    network_latency_s=0.0,
    collective_latency_s=0.0,
) -> float:
    """Seconds for one collective of a `nbytes` array (the full array, V) on route `r`.

    latency_s: per hop inside a domain (steps from `roofline.collectives.collective_steps`);
    network_latency_s: per step across the network; collective_latency_s: a fixed cost per
    collective (launch and synchronisation: a small NCCL all-reduce on 8 x H100 measures
    `collectives.NVSWITCH_ALL_REDUCE_LATENCY_S`, 25.6 us).
    Link: `_on_axes`. Network: a "switch" of one NIC per chip. Two-level: all-reduce by
    `hierarchical_all_reduce_time`; all-gather / reduce-scatter as the same two phases
    (inside on the full array, across on its 1/per_node); all-to-all over the network alone
    (its NIC is the narrowest step)."""
    from .collectives import collective_time, hierarchical_all_reduce_time

    if r.size < 2 or (not hasattr(nbytes, "shape") and nbytes == 0):
        return 0.0  # nothing to send: no collective
    fixed = collective_latency_s
    if r.kind == "link":
        return _on_axes(kind, nbytes, r.axes, latency_s) + fixed
    net = r.network_bytes_per_s
    if r.kind == "network" or kind == "all-to-all":
        return collective_time(kind, nbytes, r.size, net, "switch", network_latency_s) + fixed
    m, nodes = r.per_node, r.nodes
    if kind == "all-reduce":
        if len(r.axes) == 1:
            a = r.axes[0]
            inner = {"topology": a.topology, "links": a.links}
            w = a.one_way_bytes_per_s
        else:
            inner = {"axes": tuple(a.chips for a in r.axes)}
            inner["topology"] = tuple(a.topology for a in r.axes)
            w = tuple(a.one_way_bytes_per_s for a in r.axes)
        t = hierarchical_all_reduce_time(
            nbytes,
            m,
            nodes,
            w,
            net,
            latency_s=latency_s,
            network_latency_s=network_latency_s,
            **inner,
        )
        return t + fixed
    inside = _on_axes(kind, nbytes, r.axes, latency_s)
    across = collective_time(kind, nbytes / m, nodes, net, "switch", network_latency_s)
    return inside + across + fixed


def group_all_reduce_seconds(chip, nbytes, n, latency_s=0.0, network_latency_s=0.0) -> float:
    """All-reduce of `nbytes` over a job of `n` chips (one group, the whole job)."""
    return collective_seconds("all-reduce", nbytes, route(chip, n), latency_s, network_latency_s)


def group_link_load(chip, n, slice_shape, kind="all-reduce", latency_s=0.0) -> tuple:
    """One collective of a group of `n` chips in a TPU slice of `slice_shape` (e.g. "2x2x2",
    "8x16x48"; `parse_slice_shape`), placed by `route` (whole slice axes whose lengths multiply
    to n first, as jax's mesh_utils places a mesh axis), as the load on one link.

    Returns (share, one_way_bytes_per_s, fixed_s, name): `share` is what the group's busiest
    link carries one way per byte of the array (V), `one_way_bytes_per_s` that link's one-way
    bandwidth as the group gets it, `fixed_s` the latency (`latency_s` per step, the steps of
    every axis), `name` the route in words ("2 x 2 x 2: ring, ring, ring"). Over several axes
    the array is split in proportion to each axis's bandwidth, so every axis's links are busy
    for the whole collective and V x share / one_way_bytes_per_s + fixed_s is exactly
    `collective_seconds(kind, V, route(chip, n, slice_shape=slice_shape), latency_s)`: one
    answer, whoever asks. Raises where the group is not on the slice's links (n of 1, or more
    chips than the slice holds)."""
    chip = get_chip(chip)
    r = route(chip, n, slice_shape=slice_shape)
    if r.kind != "link" or not r.axes:
        raise ValueError(
            f"a group of {n} {chip.name} chips is not one collective on the links of a "
            f"{slice_shape!r} slice: give n from 2 up to the slice's chips"
        )
    rate = max(a.one_way_bytes_per_s for a in r.axes)
    per_byte_s = collective_seconds(kind, 1.0, r)
    fixed_s = collective_seconds(kind, 1.0, r, latency_s) - per_byte_s
    return per_byte_s * rate, rate, fixed_s, r.describe()


def axis_topology(chip, n, slice_shape=None) -> str:
    """The topology of one layout axis of `n` chips on its own (a D-split matmul's group,
    `roofline.sharded_topology`): one torus axis of n chips (a ring of two, a bidirectional
    ring where an axis of n wraps round, else a line), the switch or mesh of a domain, a
    PCIe ring. Raises where n is more than one axis or domain holds.

    Without `slice_shape` the axis is one of a slice large enough to hold it, wrapped by the
    catalog's rule for an axis of n (v5e/v6e: only 16; v4/v5p/TPU7x: a multiple of 4, as in
    a slice of whole cubes). With `slice_shape` (a TPU slice the n chips sit in, e.g.
    "8x16x48") `route` places them, as `roofline.all_reduce_time(..., slice_shape=)` does, and
    this is the topology of the one slice axis they take (8 v5p chips of 8x16x48: its wrapped
    axis of 8, "bidirectional-ring"); chips spread over several slice axes (8 chips as 2x2x2)
    have no one topology: ValueError, naming `group_link_load`, which times them."""
    chip = get_chip(chip)
    if slice_shape is not None:
        r = route(chip, n, slice_shape=slice_shape)
        if r.kind == "link" and len(r.axes) == 1:
            return r.axes[0].topology
        raise ValueError(
            f"{n} {chip.name} chips of a {slice_shape!r} slice are not one axis "
            f"({r.describe()}): time them with roofline.sharded_estimate(..., slice_shape=) "
            "or roofline.all_reduce_time(..., slice_shape=) (roofline.topology.group_link_load)"
        )
    domain, link, top, _ = _domain(chip)
    most = most_chips_on_one_axis(chip)
    if most is not None and not is_symbolic(n) and n > most:
        if top == "torus":
            raise ValueError(
                f"one axis of a {chip.name} slice holds at most {most} chips; n = {n} spans "
                f"several axes: use roofline.multi_axis_collective_time (e.g. axes=(16, "
                f"{max(n // 16, 1)})) or roofline.all_reduce_time"
            )
        raise ValueError(
            f"{link.name if link else 'PCIe'} joins at most {most} {chip.name} chips; n = {n} "
            "needs the data-centre network between groups: see "
            "roofline.collectives.hierarchical_all_reduce_time (chapter 6, 'Beyond one node')"
        )
    if top != "torus":
        return top or "ring"
    if is_symbolic(n):  # a general n has no wraparound where only some lengths wrap
        return "line" if link.wraparound_multiple else "bidirectional-ring"
    if n == 2:
        return "ring"
    m = link.wraparound_multiple
    return "line" if m and n % m else "bidirectional-ring"


def most_chips_on_one_axis(chip) -> int | None:
    """The most chips one layout axis may span on its own: a torus axis (`axis_chips`) on a
    TPU, the switch or mesh domain elsewhere (a PCIe host without a chip link); None where
    the catalog sets no cap."""
    chip = get_chip(chip)
    domain, link, top, _ = _domain(chip)
    if top == "torus":
        return link.axis_chips
    return None if domain == math.inf else int(domain)
