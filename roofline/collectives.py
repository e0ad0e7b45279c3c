"""Collectives on real topologies: how long moving an array between n chips takes.

`collective_time(kind, nbytes, n, one_way_bytes_per_s, topology)` returns seconds for

- "all-gather": every chip holds 1/n of an array of `nbytes` and ends with all of it;
- "reduce-scatter": every chip holds a whole array of `nbytes` (a partial sum) and ends with
  1/n of the sum;
- "all-reduce": every chip holds a whole partial sum and ends with the whole sum
  (= reduce-scatter followed by all-gather);
- "all-to-all": every chip holds 1/n of the array and sends a different 1/n of its share to
  each chip (the n^2 blocks are transposed).

`nbytes` is always the size of the **full** array (V). `one_way_bytes_per_s` (W) is the
bandwidth of **one link in one direction**; links are full duplex. The topologies, and the
algorithm each cost assumes:

- "ring": a one-way ring; each chip sends over one link to its next neighbour
  (the other direction of that link idles). Two chips joined by one link are this case.
  All-gather: each shard is passed on n - 1 times round the ring (n - 1 steps).
- "bidirectional-ring": each chip has a link to each of its two neighbours and a closing
  (wraparound) link joins the two ends. All-gather: each shard travels the shorter way round,
  and for even n the shard opposite is split in halves, one each way; every link then carries
  (n-1)/(2n) V in each direction in ceil((n-1)/2) = floor(n/2) steps. A TPU torus axis *with
  wraparound* is this case (`"torus"` is an alias). With n = 2 it assumes two links between
  the pair.
- "line": the same chips and links without the closing link (a TPU torus axis shorter than
  the length that wraps: under 16 chips on v5e/v6e, outside full 4x4x4 cubes on v4/v5p).
  All-gather: every chip sends its shard both ways and each shard is passed on to the ends
  (n - 1 steps); the link next to an end carries the shards of the other n - 1 chips into it,
  (n-1)/n V one way: the cost of a one-way ring, twice the bidirectional ring's. Reduce-scatter
  is the same pattern reversed; all-reduce = reduce-scatter + all-gather (the scaling book's
  and XLA's decomposition). All-to-all: the middle link carries every block from the left
  half to the right half, floor(n^2/4) blocks of V/n^2. (An all-reduce that passes whole
  running sums both ways along the line would need only V/W; the book keeps the standard
  reduce-scatter + all-gather, so the line figure is that algorithm's, not a lower bound.)
- "switch": each chip sends over all its `links` at once into a crossbar (NVLink + NVSwitch):
  one "link" of `links * W` to every other chip. `in_switch_reduction=True` (NVLink SHARP,
  NCCL's NVLS) lets the switch add the partial sums. Traffic per GPU, each way: (n+1)/n V.
  Out: the whole partial sum V (the switch reads every GPU's copy of each slice and adds
  them) plus the GPU's 1/n slice of the sum (written once, the switch copies it to all n);
  in: its summed slice V/n plus the n - 1 other slices and its own back, V. Time
  (n+1)/n V / W_total instead of 2(n-1)/n V / W_total. At that ideal the algorithm bandwidth
  V/t is n/(n+1) W_total and nccl-tests' bus bandwidth (2(n-1)/n V/t) is 2(n-1)/(n+1)
  W_total (700 GB/s on 8 x H100, W_total = 450 GB/s); measured, 8 x H100/H200 reach about 480 GB/s,
  69 % of it. Only where NCCL uses it: NVSwitch systems with multicast (HGX/DGX H100, H200,
  B200, GB200: `in_switch_reduction_available`), more than 2 GPUs (NCCL's `ncclNvlsInit`
  turns NVLS off at 2 or fewer); never A100 (its NVSwitch has no SHARP) or PCIe bridges.
- "mesh": a direct link from every chip to every other (AMD Infinity Fabric in an 8-GPU
  platform): chip-to-chip traffic runs on n - 1 links at once.

Bandwidth terms are the standard results (NCCL's bus-bandwidth factors; Patarasuk and Yuan,
J. Parallel Distrib. Comput. 69(2), 2009, for the all-reduce lower bound 2(n-1)/n V/W):

| collective     | ring / line     | bidirectional-ring | switch (W_total = links W) |
|----------------|-----------------|--------------------|----------------------------|
| all-gather     | (n-1)/n V/W     | (n-1)/n V/(2W)     | (n-1)/n V/W_total          |
| reduce-scatter | (n-1)/n V/W     | (n-1)/n V/(2W)     | (n-1)/n V/W_total          |
| all-reduce     | 2(n-1)/n V/W    | (n-1)/n V/W        | 2(n-1)/n V/W_total         |
| all-to-all     | ring (n-1)/(2n) V/W, line floor(n^2/4)/n^2 V/W | floor(n^2/4)/(2n^2) V/W | (n-1)/n^2 V/W_total |

The latency term adds `latency_s` per step (`collective_steps`): n - 1 steps for
all-gather / reduce-scatter / all-to-all on a one-way ring or a line (a shard must reach the
far end), ceil((n-1)/2) = floor(n/2) on a bidirectional ring (the shorter way round); twice
that for all-reduce. One step through a switch or mesh (two for all-reduce). The latency term
dominates for small arrays; bandwidth and latency are added (no overlap between them).

A collective over several torus axes at once (a 2D or 3D slice) is
`multi_axis_collective_time`; one that spans nodes (NVLink inside, the data-centre network
between) is `hierarchical_all_reduce_time`.

Every function works on numbers, numpy arrays and sympy symbols (symbolic n included).
"""

from __future__ import annotations

from .validate import check_size, is_symbolic

__all__ = [
    "COLLECTIVES",
    "TOPOLOGIES",
    "collective_time",
    "collective_bytes_per_link",
    "collective_steps",
    "canonical_topology",
    "multi_axis_collective_time",
    "hierarchical_all_reduce_time",
    "hierarchical_all_reduce_terms",
    "megatron_mlp_times",
    "fit_latency_bandwidth",
    "in_switch_reduction_available",
    "hierarchical_all_reduce_floor",
    "IN_SWITCH_REDUCTION_CHIPS",
    "NVLS_MIN_CHIPS",
    "NVSWITCH_ALL_REDUCE_LATENCY_S",
    "NCCL_ALL_REDUCE_8X_H100",
    "NCCL_16GIB_8X_H200",
]

COLLECTIVES = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all")
#: NCCL turns NVLS (in-switch reduction) off for this many GPUs or fewer (`ncclNvlsInit` in
#: NVIDIA/nccl src/transport/nvls.cc: `gpuCount <= 2` returns without NVLS support).
NVLS_MIN_CHIPS = 2
#: Catalog chips whose NVSwitch adds partial sums (NVLink SHARP: third-generation NVSwitch and
#: later, in HGX/DGX H100, H200, B200 and GB200 NVL72). Not A100 (second-generation NVSwitch,
#: no SHARP), not the H100 PCIe (a two-GPU NVLink bridge, no switch).
IN_SWITCH_REDUCTION_CHIPS = ("H100 SXM", "H200", "B200", "GB200")
TOPOLOGIES = ("ring", "bidirectional-ring", "line", "switch", "mesh")
_TOPOLOGY_ALIASES = {
    "ring": "ring",
    "onewayring": "ring",
    "unidirectionalring": "ring",
    "link": "ring",
    "bidirectionalring": "bidirectional-ring",
    "biring": "bidirectional-ring",
    "torus": "bidirectional-ring",
    "torusaxis": "bidirectional-ring",
    "wrappedaxis": "bidirectional-ring",
    "line": "line",
    "chain": "line",
    "lineararray": "line",
    "nowraparound": "line",
    "toruslinenowrap": "line",
    "switch": "switch",
    "nvswitch": "switch",
    "crossbar": "switch",
    "mesh": "mesh",
    "fullmesh": "mesh",
    "fullyconnected": "mesh",
}
_KIND_ALIASES = {
    "allgather": "all-gather",
    "ag": "all-gather",
    "reducescatter": "reduce-scatter",
    "rs": "reduce-scatter",
    "allreduce": "all-reduce",
    "ar": "all-reduce",
    "alltoall": "all-to-all",
    "a2a": "all-to-all",
}


def _key(text) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected a name such as 'all-reduce' or 'ring', got {text!r}")
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _suggest(key: str, names) -> str:
    import difflib

    close = difflib.get_close_matches(key, [_key(x) for x in names], n=1, cutoff=0.5)
    match = [x for x in names if close and _key(x) == close[0]]
    return f" Did you mean {match[0]!r}?" if match else ""


def canonical_kind(kind) -> str:
    """'AllReduce', 'all_reduce', 'all-reduce' -> 'all-reduce'."""
    key = _key(kind)
    if key in _KIND_ALIASES:
        return _KIND_ALIASES[key]
    raise ValueError(
        f"unknown collective {kind!r}; use one of {', '.join(COLLECTIVES)}."
        + _suggest(key, COLLECTIVES)
    )


def canonical_topology(topology) -> str:
    """'torus' -> 'bidirectional-ring', 'NVSwitch' -> 'switch', 'chain' -> 'line', ..."""
    key = _key(topology)
    if key in _TOPOLOGY_ALIASES:
        return _TOPOLOGY_ALIASES[key]
    raise ValueError(
        f"unknown topology {topology!r}; use one of {', '.join(TOPOLOGIES)} "
        "('torus' for one axis of a TPU torus with wraparound, 'line' for one without)."
        + _suggest(key, TOPOLOGIES)
    )


def _check_n(n):
    check_size("n", n)
    if not is_symbolic(n):
        if n < 2 or int(n) != n:
            raise ValueError(f"a collective needs a whole number of chips n >= 2, got n = {n!r}")
    return n


def _floor(x):
    if is_symbolic(x):
        import sympy

        return sympy.floor(x)
    import math

    return math.floor(x)


def _floor_half(n):
    """floor(n/2) (= ceil((n-1)/2) for whole n): works on numbers, numpy arrays and sympy."""
    if is_symbolic(n):
        import sympy

        return sympy.floor(n / 2)
    return n // 2


def collective_bytes_per_link(kind, nbytes, n, topology="ring", links=1, in_switch_reduction=False):
    """Bytes the busiest link carries in one direction (summed over all steps).

    For "switch" this is per link of a chip with `links` links into the switch; for "mesh"
    per chip-to-chip link. Divide by the one-way bandwidth of one link to get the time.
    `in_switch_reduction` (switch only) lets the switch add an all-reduce's partial sums.
    """
    kind, topology = canonical_kind(kind), canonical_topology(topology)
    check_size("nbytes", nbytes)
    n = _check_n(n)
    if topology == "switch":
        check_size("links", links)
    if in_switch_reduction and topology != "switch":
        raise ValueError(
            "in_switch_reduction (NVLink SHARP) needs topology='switch'; "
            f"a {topology} has no switch to add the partial sums"
        )
    V = nbytes
    if kind == "all-to-all":
        return {
            "ring": (n - 1) * V / (2 * n),
            "bidirectional-ring": _floor(n * n / 4) * V / (2 * n * n),
            "line": _floor(n * n / 4) * V / (n * n),
            "switch": (n - 1) * V / (n * n) / links,
            "mesh": V / (n * n),
        }[topology]
    if kind == "all-reduce" and in_switch_reduction:
        if not is_symbolic(n) and n <= NVLS_MIN_CHIPS:
            raise ValueError(
                f"in_switch_reduction needs more than {NVLS_MIN_CHIPS} GPUs (NCCL turns NVLS "
                f"off at {NVLS_MIN_CHIPS} or fewer), got n = {n}; use the plain switch model"
            )
        # out: the whole partial sum V + one summed slice V/n; in: V/n + V (module docstring)
        return (n + 1) * V / n / links
    rounds = 2 if kind == "all-reduce" else 1  # reduce-scatter, then all-gather
    one_round = {
        "ring": (n - 1) * V / n,
        "bidirectional-ring": (n - 1) * V / (2 * n),
        "line": (n - 1) * V / n,
        "switch": (n - 1) * V / n / links,
        "mesh": V / n,
    }[topology]
    return rounds * one_round


def collective_steps(kind, n, topology="ring"):
    """How many latency-bearing steps (hops) the collective takes.

    One-way ring and line: n - 1 (a shard must reach the chip n - 1 hops away; on a line,
    from one end to the other). Bidirectional ring: ceil((n-1)/2) = floor(n/2) (each shard
    goes the shorter way round). All-reduce: twice that (reduce-scatter, then all-gather).
    Switch and mesh: 1 (2 for all-reduce).
    """
    kind, topology = canonical_kind(kind), canonical_topology(topology)
    n = _check_n(n)
    if topology in ("switch", "mesh"):
        one = 1
    elif topology == "bidirectional-ring":
        one = _floor_half(n)
    else:  # ring, line
        one = n - 1
    return 2 * one if kind == "all-reduce" else one


def collective_time(
    kind,
    nbytes,
    n,
    one_way_bytes_per_s,
    topology="ring",
    latency_s=0.0,
    links=1,
    in_switch_reduction=False,
):
    """Seconds for a collective over n chips: bandwidth term + steps x per-step latency.

    kind: "all-gather", "reduce-scatter", "all-reduce" or "all-to-all".
    nbytes: size of the full array in bytes (V). n: number of chips (>= 2).
    one_way_bytes_per_s: one link, one direction (W). topology: "ring",
    "bidirectional-ring" (alias "torus": one torus axis with wraparound), "line" (a torus
    axis without wraparound), "switch" (pass `links`, the number of links each chip has into
    the switch; `in_switch_reduction=True` for NVLink SHARP) or "mesh".
    latency_s: time per step (a hop), e.g. ~1e-6 s for one ICI hop.
    """
    check_size("one_way_bytes_per_s", one_way_bytes_per_s)
    check_size("latency_s", latency_s, allow_zero=True)
    per_link = collective_bytes_per_link(kind, nbytes, n, topology, links, in_switch_reduction)
    return per_link / one_way_bytes_per_s + collective_steps(kind, n, topology) * latency_s


def in_switch_reduction_available(chip, n) -> bool:
    """Whether NCCL would run an all-reduce over n GPUs of `chip` (a name or `Chip`) with
    in-switch reduction (NVLS): the chip's NVSwitch adds partial sums
    (`IN_SWITCH_REDUCTION_CHIPS`), n is more than `NVLS_MIN_CHIPS` and no more than one
    NVSwitch domain holds. NCCL also picks its algorithm per size: in nccl-tests' curve on
    8 x H100 (`NCCL_ALL_REDUCE_8X_H100`) only the large sizes, whose bus bandwidth exceeds the
    line rate, show NVLS at work; which algorithm ran at the small sizes is not published.

    >>> in_switch_reduction_available("H100 SXM", 8), in_switch_reduction_available("A100", 8)
    (True, False)
    """
    from .catalog import get_chip

    chip = get_chip(chip)
    link = chip.interconnect
    if chip.name not in IN_SWITCH_REDUCTION_CHIPS or link is None:
        return False
    return NVLS_MIN_CHIPS < n <= (link.domain_chips or n)


def _max_of(values):
    """Largest of several times: numbers, numpy arrays or sympy expressions."""
    import sys

    values = list(values)
    if any(is_symbolic(v) for v in values):
        import sympy

        return sympy.Max(*values)
    np = sys.modules.get("numpy")
    if np is not None and any(isinstance(v, np.ndarray) for v in values):
        return np.maximum.reduce(values)
    return max(values)


def multi_axis_collective_time(
    kind, nbytes, axes, one_way_bytes_per_s, topology="bidirectional-ring", latency_s=0.0
):
    """Seconds for an all-gather, reduce-scatter or all-reduce over several torus axes at once.

    axes: the number of chips on each axis of the slice, e.g. (4, 4) for a 4x4 slice (the
    collective runs over all N = 4 x 4 = 16 chips). topology: one name for every axis, or one
    per axis ("bidirectional-ring" for an axis with wraparound, "line" without, "ring" for two
    chips on one link). one_way_bytes_per_s: one link, one way; a number for every axis or
    one per axis (a link shared by interleaved groups counts its share).

    Algorithm: every chip must receive (N-1)/N V in an all-gather. Over axis i alone it
    receives at a rate R_i, the one-axis collective's own: an all-gather of V over that
    axis's a_i chips takes `collective_time` = (a_i-1)/a_i V / R_i, so R_i = W for a line or
    a ring of two (one link into the busiest chip) and 2W for a bidirectional ring. The
    array is split in proportion to the axes' rates, a fraction R_i / sum R over axis i
    first (the scaling book's "AllGather over several axes", every axis busy at once), so
    every axis finishes together:
    t = (N-1)/N V / sum R_i (all-gather, reduce-scatter), twice that for all-reduce
    (reduce-scatter then all-gather). With k equal wrapped axes this is (N-1)/N V / (2 k W);
    with unequal axes it is the bandwidth bound a pipelined implementation approaches (an
    equal split would wait for the slowest axis). On an unwrapped line longer than 2 it is
    the time of reduce-scatter + all-gather at one link's rate, not a bound: a pipelined
    reduce then broadcast using both directions of each full-duplex link needs about V/W
    (1.5x less on a line of 4). One axis: exactly `collective_time`.
    Latency: `latency_s` per step, the steps of every axis added (`collective_steps`).
    """
    kind = canonical_kind(kind)
    if kind == "all-to-all":
        raise ValueError(
            "multi_axis_collective_time models all-gather, reduce-scatter and "
            "all-reduce; run an all-to-all on one axis with collective_time"
        )
    axes = tuple(axes)
    if not axes or any(isinstance(a, bool) or not isinstance(a, int) or a < 1 for a in axes):
        raise ValueError(f"axes are whole numbers of chips per axis, e.g. (4, 4); got {axes!r}")
    k = len(axes)
    topologies = (topology,) * k if isinstance(topology, str) else tuple(topology)
    rates = (
        tuple(one_way_bytes_per_s)
        if isinstance(one_way_bytes_per_s, (tuple, list))
        else (one_way_bytes_per_s,) * k
    )
    if len(topologies) != k or len(rates) != k:
        raise ValueError(
            f"give one topology and one bandwidth, or one per axis ({k}); got "
            f"{topology!r}, {one_way_bytes_per_s!r}"
        )
    check_size("nbytes", nbytes)
    total_rate, steps, n = 0, 0, 1
    for a, top, w in zip(axes, topologies, rates):
        check_size("one_way_bytes_per_s", w)
        if a == 1:
            continue
        n *= a
        # R_i: the rate at which a chip of this axis receives in a one-axis all-gather
        total_rate = total_rate + (a - 1) / a * w / collective_bytes_per_link(
            "all-gather", 1, a, top
        )
        steps = steps + collective_steps("all-gather", a, top)
    if n == 1:
        return 0.0
    one = (n - 1) / n * nbytes / total_rate + steps * latency_s
    return 2 * one if kind == "all-reduce" else one


def hierarchical_all_reduce_terms(
    nbytes,
    chips_per_node,
    nodes,
    link_bytes_per_s,
    network_bytes_per_s,
    topology="switch",
    links=1,
    latency_s=0.0,
    network_latency_s=0.0,
    axes=None,
):
    """The three phases of a two-level all-reduce, in seconds, as a dict (see below).

    nbytes: the full array every chip holds (V, e.g. the bf16 gradients). chips_per_node (m):
    chips joined by NVLink/ICI (8 GPUs under one NVSwitch; a TPU slice). nodes (N): how many
    such groups the network joins. link_bytes_per_s: one NVLink/ICI link, one way (with
    `topology`, `links` as in `collective_time`; or `axes=(16, 16)` for a TPU slice, run with
    `multi_axis_collective_time` and `topology` per axis). network_bytes_per_s: one chip's
    share of the data-centre network, one way (`chip.network_bytes_per_s`: one 400 Gb/s NIC
    per H100 in a DGX H100; a TPU host's DCN / chips per host).

    Algorithm (the usual two-level scheme; NCCL's own ring and tree instead cross nodes inside
    one pipelined ring or tree): (1) reduce-scatter inside each node, so each chip holds the
    node's sum of 1/m of the array; (2) all-reduce that 1/m across the
    N nodes, each chip with the chips of the same rank in the other nodes, over its own NIC
    (a ring through the network: 2(N-1)/N (V/m) / W_net); (3) all-gather inside the node.
    The phases run one after another (no pipelining between them), so their sum is an
    upper-side estimate. Pipelined chunk by chunk, the network phase can overlap the in-node
    phases, but the in-node reduce-scatter and all-gather share the same NVLink/ICI links and
    cannot overlap each other: the floor is max(network phase, in-node RS + in-node AG)
    (`hierarchical_all_reduce_floor`), not the largest single phase. All m NICs of a node
    work at once, each carrying 2(N-1)/N (V/m) one way: the least an all-reduce between N
    nodes can send through them unless the network switches add the sums (InfiniBand SHARP). For comparison, NCCL's flat ring over all m N chips (NVLink inside,
    one ring per NIC) carries 2(mN-1)/(mN) (V/m) per NIC.
    """
    check_size("chips_per_node", chips_per_node)
    check_size("nodes", nodes)
    check_size("network_bytes_per_s", network_bytes_per_s)
    m, N = chips_per_node, nodes
    if axes is not None:
        inside = multi_axis_collective_time(
            "reduce-scatter", nbytes, axes, link_bytes_per_s, topology, latency_s
        )
    elif not is_symbolic(m) and m == 1:
        inside = 0
    else:
        inside = collective_time(
            "reduce-scatter", nbytes, m, link_bytes_per_s, topology, latency_s, links
        )
    across = 0
    if is_symbolic(N) or N > 1:
        across = collective_time(
            "all-reduce", nbytes / m, N, network_bytes_per_s, "ring", network_latency_s
        )
    return {
        "reduce-scatter in the node": inside,
        "all-reduce across nodes": across,
        "all-gather in the node": inside,
    }


def hierarchical_all_reduce_time(
    nbytes,
    chips_per_node,
    nodes,
    link_bytes_per_s,
    network_bytes_per_s,
    topology="switch",
    links=1,
    latency_s=0.0,
    network_latency_s=0.0,
    axes=None,
):
    """Seconds for an all-reduce over `nodes` x `chips_per_node` chips: NVLink/ICI inside each
    node, the data-centre network between them (`hierarchical_all_reduce_terms` has the
    algorithm and the phases). Example, gradients of an 8B-parameter model in bf16 over 4
    DGX H100 nodes: ``hierarchical_all_reduce_time(2 * 8e9, 8, 4, 25e9, 50e9, "switch",
    links=18)``."""
    terms = hierarchical_all_reduce_terms(
        nbytes,
        chips_per_node,
        nodes,
        link_bytes_per_s,
        network_bytes_per_s,
        topology,
        links,
        latency_s,
        network_latency_s,
        axes,
    )
    return sum(terms.values())


def hierarchical_all_reduce_floor(*args, **kwargs):
    """Seconds for the two-level all-reduce pipelined chunk by chunk: the larger of the
    network phase and the two in-node phases together, max(across, RS + AG). The in-node
    reduce-scatter and all-gather use the same NVLink/ICI links (each link's direction is
    busy in both), so they add; the network phase runs on the NICs beside them. Arguments as
    `hierarchical_all_reduce_time` (the sequential sum, an upper-side estimate)."""
    terms = hierarchical_all_reduce_terms(*args, **kwargs)
    inside = terms["reduce-scatter in the node"] + terms["all-gather in the node"]
    return _max_of([terms["all-reduce across nodes"], inside])


def megatron_mlp_times(
    B,
    D,
    F,
    n,
    peak_flops_per_s,
    link_bytes_per_s,
    topology="switch",
    links=1,
    bytes_per_element=2,
    gated=True,
    latency_s=0.0,
    in_switch_reduction=False,
    step="forward",
):
    """(t_math, t_all_reduce) in seconds per chip for a Megatron tensor-parallel MLP.

    The MLP's first matmul(s) X[B, D] @ W_in[D, F] are split by columns (each chip holds
    F/n columns; a gated MLP has two, W_gate and W_up), the second W_out[F, D] by rows, so the
    hidden [B, F/n] never leaves the chip and one all-reduce of the [B, D] output (partial
    sums) ends the MLP (Shoeybi et al., "Megatron-LM", arXiv 1909.08053, section 3).
    t_math = (2 or 3 matmuls) x 2 B D F / n / peak; t_all_reduce = `collective_time` of
    B D bytes_per_element on `topology`. Naively they add (the all-reduce needs the finished
    partial sums); overlapped, chunk by chunk, the step approaches the larger one.
    B: tokens (batch x sequence); peak_flops_per_s: one chip's dense peak; link_bytes_per_s:
    one link, one way (with `links`, e.g. 18 NVLink links into NVSwitch). With
    F > (2/3)(n-1) P / W_total (gated, bf16, switch) the math outlasts the all-reduce. HBM
    traffic is not included: estimate each matmul, e.g. `roofline.estimate(roofline.matmul(B,
    D, F // n), chip)`, as chapter 6 does.

    step: "forward" (the above), "backward" (twice the forward's FLOPs: the gradients of the
    input and of the weights; one all-reduce, of the gradient of the MLP's input [B, D],
    Megatron's "f" operator) or "training" (forward + backward: 3x the forward's FLOPs, two
    all-reduces). Per pass, the backward hides its all-reduce once F > (1/3)(n-1) P / W_total;
    over the whole step, F > (4/9)(n-1) P / W_total. With every pass's all-reduce chunked
    against its math, the forward is the strictest pass (Megatron-LM's own layers do not
    overlap the forward's all-reduce at all, and the backward's only with one weight-gradient
    matmul: F > (n-1) P / W_total).
    """
    passes = {"forward": (1, 1), "backward": (2, 1), "training": (3, 2)}
    if step not in passes:
        raise ValueError(f"step is 'forward', 'backward' or 'training', got {step!r}")
    flops_factor, all_reduces = passes[step]
    matmuls = 3 if gated else 2
    t_math = flops_factor * matmuls * 2 * B * D * F / n / peak_flops_per_s
    t_comm = all_reduces * collective_time(
        "all-reduce",
        B * D * bytes_per_element,
        n,
        link_bytes_per_s,
        topology,
        latency_s,
        links,
        in_switch_reduction,
    )
    return t_math, t_comm


#: Measured: nccl-tests `all_reduce_perf` bus bandwidth over 8 x H100 SXM (HGX board, NVSwitch,
#: "NCCL AllReduce (NVLS algorithm) tests in-place operations, varying from 1KB to 8GB"),
#: NCCL 2.18.5, Azure ND H100 v5. Source: Azure/AI-benchmarking-guide, Azure_Results/
#: ND_H100_v5_results.md (commit ae0b6a7f), table 6, all 24 rows, printed as "1K 0.07; 2K 0.14;
#: 4K 0.27; 8K 0.53; 16K 0.95; 32K 1.71; 65K 2.72; 132K 5.40; 256K 10.86; 524K 21.35; 1M 43.70;
#: 2M 81.93; 4M 128.73; 8M 172.13; 16M 234.45; 33M 295.53; 67M 361.78; 134M 400.61; 268M 423.38;
#: 536M 438.46; 1G 466.35; 2G 472.36; 4G 475.54; 8G 478.87" (GB/s). The sizes are read as the
#: powers of two nccl-tests steps through (2^10 ... 2^33 bytes: "65K" is 65,536, "1G" 2^30).
NCCL_ALL_REDUCE_8X_H100 = {
    "n": 8,
    "nbytes": tuple(2**k for k in range(10, 34)),
    "bus_bytes_per_s": tuple(
        x * 1e9
        for x in (
            0.07, 0.14, 0.27, 0.53, 0.95, 1.71, 2.72, 5.40, 10.86, 21.35, 43.70, 81.93,
            128.73, 172.13, 234.45, 295.53, 361.78, 400.61, 423.38, 438.46, 466.35, 472.36,
            475.54, 478.87,
        )
    ),
    "source": "Azure/AI-benchmarking-guide Azure_Results/ND_H100_v5_results.md (ae0b6a7f), "
    "table 6, nccl-tests all_reduce_perf, NCCL 2.18.5, 8 x H100 with NVLS, 1 KiB to 8 GiB",
}  # fmt: skip


def _smallest_all_reduce_s(data=NCCL_ALL_REDUCE_8X_H100) -> float:
    """Measured time of the smallest all-reduce in `data`: bus bandwidth back to seconds by
    nccl-tests' factor, t = 2(n-1)/n V / busbw."""
    n, V, bus = data["n"], data["nbytes"][0], data["bus_bytes_per_s"][0]
    return 2 * (n - 1) / n * V / bus


#: Fixed cost of one all-reduce through NVSwitch, seconds: the measured 1 KiB all-reduce over
#: 8 x H100 (NCCL_ALL_REDUCE_8X_H100: 2 x 7/8 x 1024 B / 0.07 GB/s = 25.6 us; 2 KiB to 8 KiB
#: measure 25.6-27.0 us). Pass `latency_s=NVSWITCH_ALL_REDUCE_LATENCY_S / 2` to
#: `collective_time` with topology "switch" (an all-reduce there counts 2 steps), not an ICI
#: hop's 1 us, which would predict 2 us. An all-gather or reduce-scatter (1 step) then costs
#: half of it: an assumption, not a measurement.
NVSWITCH_ALL_REDUCE_LATENCY_S = _smallest_all_reduce_s()


def fit_latency_bandwidth(nbytes, seconds):
    """Fit t = alpha + V / beta to measured (V bytes, t seconds) pairs; returns (alpha_s,
    beta_bytes_per_s). Least squares on the *relative* error (each point divided by its
    measured time), so small and large messages weigh alike. The "alpha-beta" (Hockney) model:
    one fixed cost per collective, then bytes at one rate."""
    import numpy as np

    V = np.asarray(nbytes, dtype=float)
    t = np.asarray(seconds, dtype=float)
    if V.shape != t.shape or V.size < 2 or np.any(V <= 0) or np.any(t <= 0):
        raise ValueError("give at least two positive (bytes, seconds) pairs of the same length")
    rows = np.column_stack([np.ones_like(V), V]) / t[:, None]
    (alpha, inv_beta), *_ = np.linalg.lstsq(rows, np.ones_like(V), rcond=None)
    return float(alpha), float(1 / inv_beta)


#: Measured: nccl-tests at 16 GiB over 8 x H200 (`-b 16G -e 16G -g 8`, NCCL 2.27.7), bus
#: bandwidth in bytes/s: all-reduce with NVLS (in-switch reduction) and with the ring algorithm,
#: all-gather and reduce-scatter. Source: stas00/ml-engineering network/README.md (commit
#: 29c6b708): "all-reduce NVLS 480.0 vs ring 367.2; all-gather 361.4; reduce-scatter 362.9 GB/s".
NCCL_16GIB_8X_H200 = {
    "all-reduce (NVLS)": 480.0e9,
    "all-reduce (ring)": 367.2e9,
    "all-gather": 361.4e9,
    "reduce-scatter": 362.9e9,
    "source": "stas00/ml-engineering network/README.md (29c6b708), nccl-tests, NCCL 2.27.7",
}
