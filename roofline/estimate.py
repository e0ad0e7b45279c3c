"""Time estimates on the roofline, ridge points and critical batch sizes."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Any

from .catalog import get_chip
from .costs import Cost, ShardedMatmul, sharded_matmul
from .dtypes import bytes_per_element, canonical_dtype
from .validate import check_size, is_symbolic

__all__ = [
    "Estimate",
    "estimate",
    "critical_intensity",
    "critical_batch_size",
    "exact_critical_batch_size",
    "attainable_flops_per_s",
    "sharded_estimate",
    "sharded_critical_D",
    "sharded_topology",
    "all_reduce_time",
    "check_below_roof",
    "Term",
    "BOUNDS",
]


def _bandwidth(chip, bandwidth_bytes_per_s):
    if bandwidth_bytes_per_s is None:
        return chip.hbm_bytes_per_s
    check_size("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    return bandwidth_bytes_per_s


def critical_intensity(
    chip,
    dtype="bf16",
    sparse=False,
    bandwidth_bytes_per_s=None,
    accumulate=None,
    unit=None,
    efficiency=1.0,
    bandwidth_efficiency=1.0,
):
    """The ridge point in FLOPs/byte: peak FLOP/s divided by memory bandwidth (bytes/s).

    With `efficiency` and `bandwidth_efficiency` (fractions of peak FLOP/s and of nominal
    bandwidth that real kernels reach, see `roofline.achievable`) it is the **achieved-rate
    ridge**: (efficiency x peak) / (bandwidth_efficiency x bandwidth). The defaults (1) give
    the spec ridge.

    An operation whose intensity is above it is compute-bound on this chip, below it
    memory-bound. Pass `bandwidth_bytes_per_s` for another memory level or link,
    `accumulate="fp16"` for a consumer card's fp16-accumulate rate, and `unit="vector"` for
    the ridge of the vector units (dot products, elementwise ops); the default is the matrix
    units' (matmuls) where the chip has them.
    """
    chip = get_chip(chip)
    _check_fraction("efficiency", efficiency)
    _check_fraction("bandwidth_efficiency", bandwidth_efficiency)
    peak = chip.peak_flops_per_s(dtype, sparse=sparse, accumulate=accumulate, unit=unit)
    return (efficiency * peak) / (bandwidth_efficiency * _bandwidth(chip, bandwidth_bytes_per_s))


def _check_fraction(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ValueError(
            f"{name} is the fraction of the datasheet rate a real kernel reaches, 0 < e <= 1 "
            f"(e.g. 0.8 for 80 %), got {value!r}"
        )


def attainable_flops_per_s(
    intensity, chip, dtype="bf16", sparse=False, bandwidth_bytes_per_s=None, unit=None
):
    """The roofline itself: min(peak FLOP/s, bandwidth x intensity) (`unit` as in
    `critical_intensity`)."""
    chip = get_chip(chip)
    check_size("intensity", intensity)
    peak = chip.peak_flops_per_s(dtype, sparse=sparse, unit=unit)
    slope = _bandwidth(chip, bandwidth_bytes_per_s) * intensity
    if is_symbolic(intensity):
        import sympy

        return sympy.Min(peak, slope)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(slope, np.ndarray):
        return np.minimum(peak, slope)
    return min(peak, slope)


@dataclass(frozen=True)
class Term:
    """One resource's share of an estimate: `amount` of work at `rate` per second.

    `kind` is "compute" (amount in FLOPs, rate in FLOP/s), "memory" (bytes from a memory
    level such as HBM, bytes/s) or "link" (bytes sent one way over a chip-to-chip link,
    one-way bytes/s). `resource` names it for people ("HBM", "ICI (ring)").
    """

    resource: str
    kind: str
    amount: object
    rate: object
    fixed_s: object = 0
    """Time that does not scale with the amount (latency per step x steps), seconds."""

    def __post_init__(self):
        if self.kind not in BOUNDS:
            raise ValueError(f"a Term's kind is one of {', '.join(BOUNDS)}, got {self.kind!r}")

    @property
    def seconds(self):
        """amount / rate (+ fixed_s), in seconds."""
        return self.amount / self.rate + self.fixed_s


#: What an estimate can be bound by, in the order ties are broken (compute wins a tie).
#: "overhead": a fixed per-kernel cost (launch latency) outlasts every roof.
BOUNDS = ("compute", "memory", "link", "overhead")


@dataclass(frozen=True)
class Estimate:
    """Roofline time bounds for one operation on one chip, in seconds, one time per resource.

    The math (`t_math` = FLOPs / peak FLOP/s) and the main memory (`t_comms` = bytes /
    memory bandwidth, the book's T_comms; also `t_memory`) are always there; `extra`
    holds further terms: each link the operation uses, other memory levels. All bounds
    assume the datasheet peak rates: real kernels run slower.
    """

    cost: Cost
    chip_name: str
    peak_flops_per_s: Any  # number, numpy array or sympy expression
    bandwidth_bytes_per_s: Any  # number, numpy array or sympy expression
    t_math: Any  # number, numpy array or sympy expression
    t_comms: Any  # number, numpy array or sympy expression
    extra: tuple = ()
    memory_name: str = "memory"
    peak_unit: str = "matrix"
    """Which execution unit's peak `peak_flops_per_s` is ("matrix" or "vector")."""
    data_kind: str = "memory"
    """What `t_comms` waits for: "memory" (the chip's own memory, the default) or "link"
    (an estimate whose bytes all come over a link)."""
    overhead_s: object = 0
    """A fixed time per kernel that no roof covers (launch latency), seconds; added to both
    bounds. 0 unless `estimate(..., overhead_s=...)` was given one."""

    @property
    def terms(self) -> tuple:
        """Every resource as a `Term`: math, main memory, then the extra ones."""
        return (
            Term("math", "compute", self.cost.flops, self.peak_flops_per_s),
            Term(self.memory_name, self.data_kind, self.cost.bytes, self.bandwidth_bytes_per_s),
        ) + tuple(self.extra)

    @property
    def times(self) -> dict:
        """resource name -> seconds, for every resource (and "overhead" when there is one)."""
        out = {"math": self.t_math, self.memory_name: self.t_comms}
        for term in self.extra:
            out[term.resource] = term.seconds
        if self._has_overhead():
            out["overhead"] = self.overhead_s
        return out

    def _has_overhead(self) -> bool:
        return not (isinstance(self.overhead_s, (int, float)) and self.overhead_s == 0)

    @property
    def t_memory(self):
        """Time to move the bytes through the main memory (same as `t_comms`)."""
        return self.t_comms

    @property
    def t_link(self):
        """The slowest link's time (0 when the operation uses no link)."""
        links = [t.seconds for t in self.extra if t.kind == "link"]
        return _max_all(links) if links else 0

    def _all_times(self):
        return [self.t_math, self.t_comms] + [t.seconds for t in self.extra]

    @property
    def t_lower(self):
        """Perfect overlap of every resource: the largest time (plus the fixed overhead)."""
        return _max_all(self._all_times()) + self.overhead_s

    @property
    def t_upper(self):
        """No overlap at all: the sum of every resource's time (at most k times t_lower for k
        resources), plus the fixed overhead. Both are bounds of the model at the rates given
        (datasheet peaks unless efficiencies were passed), not of real kernels."""
        total = self.overhead_s
        for t in self._all_times():
            total = total + t
        return total

    @property
    def slowest(self):
        """Name of the resource with the largest time ("math", "HBM", "ICI (ring)", ...)."""
        names = ["math", self.memory_name] + [t.resource for t in self.extra]
        return self._argmax(names + ["overhead"])

    @property
    def bound(self):
        """ "compute", "memory" or "link": the kind of the slowest resource (ties go to compute,
        then memory); "overhead" when the fixed per-kernel overhead outlasts every roof (a tiny
        operation: neither roof binds). Numpy arrays give an array of these words."""
        kinds = ["compute", self.data_kind] + [t.kind for t in self.extra]
        return self._argmax(kinds + ["overhead"])

    def _argmax(self, labels):
        times = self._all_times() + [self.overhead_s]
        if any(is_symbolic(t) for t in times):
            raise TypeError(
                "the bound of a symbolic estimate depends on the symbols' values; "
                "substitute numbers first"
            )
        np = sys.modules.get("numpy")
        if np is not None and any(isinstance(t, np.ndarray) for t in times):
            stacked = np.broadcast_arrays(*[np.asarray(t, dtype=float) for t in times])
            index = np.argmax(np.stack(stacked), axis=0)  # first maximum: ties keep order
            return np.asarray(labels, dtype=object)[index].astype(str)
        best = 0
        for i, t in enumerate(times):
            if t > times[best]:
                best = i
        return labels[best]

    @property
    def achieved_flops_per_s(self):
        """FLOP/s at the lower-bound time: the operation's point on the roofline."""
        return self.cost.flops / self.t_lower

    def __str__(self) -> str:
        from .units import format_time

        try:
            parts = ", ".join(f"{name} {format_time(t)}" for name, t in self.times.items())
            return (
                f"{self.cost.name} on {self.chip_name}: {parts}; between "
                f"{format_time(self.t_lower)} and {format_time(self.t_upper)}, "
                f"{self.bound}-bound"
            )
        except TypeError:
            return repr(self)

    def summary(self):
        """Each resource's time (amount at rate), both bounds and the bound, with units, as a
        `roofline.display.Summary` (what a notebook shows for an Estimate)."""
        from .display import Summary, quantity
        from .units import (
            format_bandwidth,
            format_bytes,
            format_flops,
            format_flops_rate,
            format_time,
        )

        rows = []
        for term, seconds in zip(
            self.terms, [self.t_math, self.t_comms] + [t.seconds for t in self.extra]
        ):
            amount, rate = (
                (format_flops, format_flops_rate)
                if term.kind == "compute"
                else (format_bytes, format_bandwidth)
            )
            text = (
                f"{quantity(seconds, format_time)} ({quantity(term.amount, amount)} at "
                f"{quantity(term.rate, rate)}"
            )
            if not (isinstance(term.fixed_s, (int, float)) and term.fixed_s == 0):
                text += f", {quantity(term.fixed_s, format_time)} of it latency"
            label = (
                f"math ({self.peak_unit} units)"
                if term.kind == "compute"
                else f"{term.resource} ({term.kind})"
            )
            rows.append((label, text + ")"))
        if self._has_overhead():
            rows.append(("fixed overhead (per kernel)", quantity(self.overhead_s, format_time)))
        rows.append(("lower bound (overlap)", quantity(self.t_lower, format_time)))
        rows.append(("upper bound (no overlap)", quantity(self.t_upper, format_time)))
        try:
            bound, slowest = self.bound, self.slowest
            verdict = (
                f"{bound}-bound ({slowest} takes longest)"
                if isinstance(bound, str)
                else "by value: " + ", ".join(sorted({f"{b}-bound" for b in bound.ravel()}))
            )
        except TypeError:
            verdict = "depends on the symbols' values"
        rows.append(("bound", verdict))
        return Summary(f"Estimate: {self.cost.name} on {self.chip_name} ({self.cost.dtype})", rows)

    def __repr__(self) -> str:
        return self.summary().text()

    def _repr_html_(self) -> str:
        return self.summary().html()


def _max(a, b):
    if is_symbolic(a) or is_symbolic(b):
        import sympy

        return sympy.Max(a, b)
    np = sys.modules.get("numpy")
    if np is not None and (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
        return np.maximum(a, b)
    return max(a, b)


def _max_all(values):
    out = values[0]
    for v in values[1:]:
        out = _max(out, v)
    return out


def _peak_for(chip, dtype, sparse, unit, accumulate=None):
    """(peak FLOP/s, what it is) for a cost on `unit` ("matrix", "vector" or None)."""
    if unit == "vector" and not chip.has_peak(dtype, "vector"):
        # No vector figure for this dtype (e.g. fp8 on a GPU, a chip you defined): the matrix
        # peak is higher, so times stay lower bounds.
        return (
            chip.peak_flops_per_s(dtype, sparse=sparse, accumulate=accumulate),
            "matrix (no vector figure for this dtype: a looser bound)",
        )
    peak = chip.peak(dtype, accumulate, unit)
    return chip.peak_flops_per_s(
        dtype, sparse=sparse, accumulate=accumulate, unit=peak.unit
    ), peak.unit


def estimate(
    cost: Cost,
    chip,
    dtype=None,
    sparse=False,
    bandwidth_bytes_per_s=None,
    bandwidth_kind="memory",
    unit=None,
    efficiency=1.0,
    bandwidth_efficiency=1.0,
    overhead_s=0.0,
) -> Estimate:
    """Time bounds for `cost` on `chip`: t_math = FLOPs / peak, t_comms = bytes / bandwidth.

    `dtype` picks the peak (defaults to the dtype the cost's math runs in); the dense peak
    is used unless `sparse=True`. The peak is that of the execution unit the cost runs on
    (`unit`, default `cost.unit`: matmuls on the matrix units, dot products and elementwise
    ops on the vector units, whose figure may be derived or, on TPUs, a secondary estimate:
    `peak_unit` and the catalog's `Source` say so), with the cost's accumulate precision
    (`cost.accumulate`; None: the fp32-accumulate figure).
    `bandwidth_bytes_per_s` replaces the chip's memory bandwidth (for another memory level or
    a link); say which with `bandwidth_kind` ("memory" or "link").
    Peak and achievable: `efficiency` (0 < e <= 1) is the fraction of the peak FLOP/s a real
    kernel reaches (its MFU), `bandwidth_efficiency` the fraction of the nominal bandwidth
    (published values in `roofline.achievable`); 1 = datasheet rates. `overhead_s` is a
    fixed time per kernel (launch latency, e.g. `roofline.achievable.KERNEL_LAUNCH_S`) added
    to both bounds: it keeps a tiny operation from being predicted to take nanoseconds.
    """
    if not isinstance(cost, Cost):
        raise TypeError(f"estimate needs a Cost from roofline.matmul, dot, ... got {cost!r}")
    if bandwidth_kind not in ("memory", "link"):
        raise ValueError(f"bandwidth_kind is 'memory' or 'link', got {bandwidth_kind!r}")
    _check_fraction("efficiency", efficiency)
    _check_fraction("bandwidth_efficiency", bandwidth_efficiency)
    if isinstance(overhead_s, bool) or not isinstance(overhead_s, (int, float)) or overhead_s < 0:
        raise ValueError(f"overhead_s is a time in seconds, 0 or more, got {overhead_s!r}")
    chip = get_chip(chip)
    dtype = canonical_dtype(dtype if dtype is not None else cost.dtype)
    peak, peak_unit = _peak_for(
        chip,
        dtype,
        sparse,
        unit if unit is not None else cost.unit,
        getattr(cost, "accumulate", None),
    )
    peak = peak * efficiency
    bandwidth = _bandwidth(chip, bandwidth_bytes_per_s) * bandwidth_efficiency
    memory_name = chip.memory_kind if bandwidth_bytes_per_s is None else bandwidth_kind
    return Estimate(
        cost,
        chip.name,
        peak,
        bandwidth,
        cost.flops / peak,
        cost.bytes / bandwidth,
        memory_name=memory_name,
        data_kind=bandwidth_kind,
        peak_unit=peak_unit,
        overhead_s=overhead_s,
    )


def critical_batch_size(chip, dtype="bf16", weights=None, sparse=False, accumulate=None):
    """The batch above which a matmul is compute-bound, assuming B << D, F.

    Then bytes ~ (bytes per weight) * D * F and intensity ~ 2B / (bytes per weight),
    so B_crit = ridge point * (bytes per weight) / 2. With bf16 weights this is the
    ridge point itself (240 on TPU v5e); int8 weights with bf16 math halve it.
    """
    w = bytes_per_element(weights if weights is not None else dtype)
    return critical_intensity(chip, dtype, sparse=sparse, accumulate=accumulate) * w / 2


def exact_critical_batch_size(
    chip,
    D,
    F,
    dtype="bf16",
    activations=None,
    weights=None,
    output=None,
    sparse=False,
    accumulate=None,
):
    """The exact batch where t_math = t_comms for X[B, D] @ W[D, F], without B << D, F.

    Solves 2BDF / peak = (a*B*D + w*D*F + o*B*F) / bandwidth for B:
        B = ridge * w * D * F / (2*D*F - ridge * (a*D + o*F)).
    Returns infinity when the denominator is not positive: then the matmul is
    bandwidth-bound at every batch size.
    """
    check_size("D", D)
    check_size("F", F)
    ridge = critical_intensity(chip, dtype, sparse=sparse, accumulate=accumulate)
    a = bytes_per_element(activations if activations is not None else dtype)
    w = bytes_per_element(weights if weights is not None else dtype)
    o = bytes_per_element(output if output is not None else dtype)
    denominator = 2 * D * F - ridge * (a * D + o * F)
    numerator = ridge * w * D * F
    if is_symbolic(denominator):
        return numerator / denominator
    np = sys.modules.get("numpy")
    if np is not None and isinstance(denominator, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.inf
            )
    return numerator / denominator if denominator > 0 else float("inf")


def _link(chip, link_bytes_per_s):
    if link_bytes_per_s is not None:
        check_size("link_bytes_per_s", link_bytes_per_s)
        return link_bytes_per_s
    if chip.link_bytes_per_s is None:
        raise ValueError(
            f"{chip.name} has no chip-to-chip link in the catalog; "
            "pass link_bytes_per_s (one way, per link)"
        )
    return chip.link_bytes_per_s


def sharded_topology(chip, n=2, topology=None, slice_shape=None) -> str:
    """The collective topology a D-split matmul on `n` chips of `chip` uses by default: one
    layout axis of n chips, as `roofline.topology.axis_topology` places it.

    TPU ICI ("torus"): two chips share one link ("ring"); n >= 3 chips along one torus axis
    form a "bidirectional-ring" only where that axis has a wraparound link (the catalog's
    `wraparound_multiple`: on v5e/v6e only the full axis of 16; on v5p a multiple of 4 in a
    slice of whole 4x4x4 cubes (v5p and v4), which this assumes: pass topology="line" for a
    2x2x4 slice);
    otherwise a "line". n above one axis's length raises (see `multi_axis_collective_time`).
    NVLink with NVSwitch or a bridge: "switch" (all the chip's links at once). AMD Infinity
    Fabric: "mesh". No chip-to-chip link: a "ring" over PCIe. Pass `topology` to choose another.
    slice_shape: the TPU slice the n chips sit in (e.g. "8x16x48"): the topology of the one
    slice axis `roofline.topology.route` gives them, the one `all_reduce_time(...,
    slice_shape=)` uses (8 v5p chips of 8x16x48: "bidirectional-ring"); chips spread over
    several slice axes (2x2x2) raise: `sharded_estimate(..., slice_shape=)` times them.
    """
    from .collectives import canonical_topology
    from .topology import axis_topology

    if topology is not None:
        _one_of(topology, slice_shape)
        return canonical_topology(topology)
    return axis_topology(get_chip(chip), n, slice_shape)


def _one_of(topology, slice_shape, link_bytes_per_s=None):
    """A slice shape decides the links itself: it takes no topology or link figure too."""
    if slice_shape is not None and (topology is not None or link_bytes_per_s is not None):
        raise ValueError(
            "slice_shape places the chips on the slice's own links: pass slice_shape, or "
            "topology / link_bytes_per_s, not both"
        )


def all_reduce_time(
    chip, nbytes, n, latency_s=0.0, network_latency_s=0.0, slice_shape=None
) -> float:
    """Seconds to all-reduce `nbytes` (e.g. a model's gradients) held by each of n chips.

    The n chips are one group of `roofline.topology.route`: inside one NVLink/ICI domain on
    its links (NVSwitch: all the chip's links at once; a TPU slice of n chips in the shape
    Google sells, on all its axes at once: on v5e 4 chips are a 2x2, 64 an 8x8 of lines, 256
    the wrapped 16 x 16 pod; on v5p 16 chips a 2x2x4 without wraparound, 64 a wrapped 4x4x4
    cube, 6144 a wrapped 16x16x24); beyond one domain (more than 8 GPUs, more than a v5e pod)
    the two-level all-reduce of `roofline.collectives.hierarchical_all_reduce_time`, across
    domains on `chip.network_bytes_per_s`. Bandwidth terms at line rate (no in-switch
    reduction); `latency_s` per hop inside a domain, `network_latency_s` per network step.
    slice_shape: the TPU slice the n chips run in, when it is not the shape Google sells for
    n (e.g. "8x16x48", `roofline.topology.parse_slice_shape`): the group takes whole slice
    axes whose lengths multiply to n where it can (8 chips of an 8x16x48 v5p slice: its axis
    of 8, a wrapped ring of 8, not the 2x2x2 of an 8-chip slice), else the shortest-first
    share; n above the slice's chips runs as several such slices over the network.
    """
    from .topology import collective_seconds, route

    check_size("n", n)
    chip = get_chip(chip)
    if n == 1:
        return 0.0
    r = route(chip, n, slice_shape=slice_shape)
    return collective_seconds("all-reduce", nbytes, r, latency_s, network_latency_s)


def _link_term(chip, plan, n, link_bytes_per_s, topology, latency_s, slice_shape=None):
    from .collectives import collective_bytes_per_link, collective_steps

    if slice_shape is not None:
        from .topology import group_link_load

        _one_of(topology, slice_shape, link_bytes_per_s)
        share, rate, fixed_s, where = group_link_load(chip, n, slice_shape, "all-reduce", latency_s)
        name = chip.interconnect.name
        return Term(
            f"{name} all-reduce ({where})", "link", plan.partial_sum_bytes * share, rate, fixed_s
        )
    link = _link(chip, link_bytes_per_s)
    chosen = sharded_topology(chip, n, topology)
    links = chip.link_count or 1
    per_link = collective_bytes_per_link("all-reduce", plan.partial_sum_bytes, n, chosen, links)
    name = chip.interconnect.name if chip.interconnect is not None else "link"
    return Term(
        f"{name} all-reduce ({chosen})",
        "link",
        per_link,
        link,
        collective_steps("all-reduce", n, chosen) * latency_s,
    )


def sharded_estimate(
    B,
    D,
    F,
    chip,
    n=2,
    dtype="bf16",
    link_bytes_per_s=None,
    topology=None,
    latency_s=0.0,
    slice_shape=None,
) -> Estimate:
    """Time on each chip for X[B, D] @ W[D, F] with D split over n chips: math, HBM and link.

    Per chip: t_math = (2BDF/n) / peak; t_memory = the chip's own HBM traffic (its X and W
    shards read once, its [B, F] partial sum written once) / HBM bandwidth; t_link = the
    all-reduce of the partial sums (B*F elements) on `topology` (default:
    `sharded_topology(chip, n)`): bytes on the busiest link, one way, / one-way bandwidth of
    one link (`link_bytes_per_s` replaces the catalog's per-link figure), plus
    steps x `latency_s`. The all-reduce's own HBM reads and writes are not counted.
    slice_shape: the TPU slice the n chips sit in (e.g. "2x2x2", "8x16x48"): the all-reduce
    runs where `roofline.topology.route` places them, on one slice axis or several (the array
    split by bandwidth, `roofline.topology.group_link_load`): the same time as
    `all_reduce_time(chip, partial-sum bytes, n, slice_shape=slice_shape)`.
    """
    chip = get_chip(chip)
    plan: ShardedMatmul = sharded_matmul(B, D, F, n=n, dtype=dtype)
    est = estimate(plan.per_chip, chip, dtype=dtype)
    single = not is_symbolic(n) and n == 1
    if single:
        return replace(est, extra=())
    link = _link_term(chip, plan, n, link_bytes_per_s, topology, latency_s, slice_shape)
    return replace(est, extra=(link,))


def sharded_critical_D(
    chip, n=2, dtype="bf16", link_bytes_per_s=None, topology=None, slice_shape=None
):
    """The contraction size D above which each chip's math outlasts its all-reduce (link only).

    Solves 2BDF/(n * peak) = (bytes on the busiest link) / link for D; B and F cancel. On a
    one-way ring, a line (a TPU axis without wraparound) and two chips on one link
    D* = (n - 1) * bytes per element * peak / link; on a bidirectional ring (a wrapped axis)
    half that; on a switch the link is all the chip's links together.
    This is the **link** condition only: each chip is compute-bound only if its math also
    outlasts its HBM traffic (B above `exact_critical_batch_size(chip, D/n, F)`).
    slice_shape: the TPU slice the n chips sit in, as in `sharded_estimate`: the bytes on the
    busiest link per element and that link's bandwidth come from
    `roofline.topology.group_link_load`.
    """
    from .collectives import collective_bytes_per_link

    chip = get_chip(chip)
    check_size("n", n)
    if slice_shape is not None:
        from .topology import group_link_load

        _one_of(topology, slice_shape, link_bytes_per_s)
        share, rate, _, _ = group_link_load(chip, n, slice_shape)
        peak = chip.peak_flops_per_s(dtype)
        return n * bytes_per_element(dtype) * share * peak / (2 * rate)
    link = _link(chip, link_bytes_per_s)
    chosen = sharded_topology(chip, n, topology)
    per_element = collective_bytes_per_link(
        "all-reduce", bytes_per_element(dtype), n, chosen, chip.link_count or 1
    )
    return n * per_element * chip.peak_flops_per_s(dtype) / (2 * link)


def check_below_roof(
    flops_per_s, intensity, chip, dtype="bf16", bandwidth_bytes_per_s=None, tolerance=1.02
):
    """Raise ValueError if a (intensity, FLOP/s) point lies above the roofline.

    A point above the roof of the memory its bytes really crossed cannot be real: something
    inflates its rate or deflates its intensity. A 2:4-sparse kernel's dense-equivalent FLOPs
    held against the dense peak, a time in the wrong unit, FLOPs counted for work not done, or
    bytes over-counted (the point moves left, under a lower slanted roof). A FLOP convention
    cannot: counting one FLOP per multiply-add instead of two halves the FLOPs, so it halves the
    intensity and the rate alike; the point moves down along a line of slope 1, parallel to the
    slanted roof, and stays below the roof (it only makes the kernel look half as fast). One
    exception is legitimate: bytes counted as if they came from HBM while the data sat in
    on-chip memory (L2, VMEM) are checked against the wrong roof; pass that level's bandwidth
    as `bandwidth_bytes_per_s`. `tolerance` allows for rounding in spec figures.
    """
    roof = attainable_flops_per_s(
        intensity, chip, dtype, bandwidth_bytes_per_s=bandwidth_bytes_per_s
    )
    if flops_per_s > roof * tolerance:
        from .units import format_flops_rate

        raise ValueError(
            f"{format_flops_rate(flops_per_s)} at intensity {intensity:.3g} FLOPs/B is above the "
            f"roofline ({format_flops_rate(roof)}) of {get_chip(chip).name}: check units "
            "(bytes, seconds), sparse vs dense peaks, and bytes counted twice; if the data sat in "
            "on-chip memory (L2, VMEM), compare with that level's bandwidth"
        )
    return roof
