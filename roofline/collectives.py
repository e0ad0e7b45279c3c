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
bandwidth of **one link in one direction**; links are full duplex. The topologies:

- "ring": a one-way ring; each chip sends over one link to its next neighbour
  (the other direction of that link idles). Two chips joined by one link are this case.
- "bidirectional-ring": each chip has a link to each of its two neighbours and the array is
  split in halves that go round in opposite directions: half the bytes per link, so half the
  time. A TPU torus axis of k chips with wraparound is this case (`"torus"` is an alias).
  With n = 2 it assumes two links between the pair.
- "switch": each chip sends over all its `links` at once into a crossbar (NVLink + NVSwitch):
  one "link" of `links * W` to every other chip.
- "mesh": a direct link from every chip to every other (AMD Infinity Fabric in an 8-GPU
  platform): chip-to-chip traffic runs on n - 1 links at once.

Bandwidth terms are the standard results (NCCL's bus-bandwidth factors; Patarasuk and Yuan,
J. Parallel Distrib. Comput. 69(2), 2009, for the all-reduce lower bound 2(n-1)/n V/W):

| collective     | ring            | bidirectional-ring | switch (W_total = links W) |
|----------------|-----------------|--------------------|----------------------------|
| all-gather     | (n-1)/n V/W     | (n-1)/n V/(2W)     | (n-1)/n V/W_total          |
| reduce-scatter | (n-1)/n V/W     | (n-1)/n V/(2W)     | (n-1)/n V/W_total          |
| all-reduce     | 2(n-1)/n V/W    | (n-1)/n V/W        | 2(n-1)/n V/W_total         |
| all-to-all     | (n-1)/(2n) V/W  | floor(n^2/4)/(2n^2) V/W | (n-1)/n^2 V/W_total   |

The latency term adds `latency_s` per step: n - 1 steps for all-gather / reduce-scatter on a
ring (both directions run their n - 1 steps at the same time), twice that for all-reduce,
n - 1 for all-to-all on a one-way ring, floor(n/2) on a bidirectional one; one step through
a switch or mesh (two for all-reduce). It dominates for small arrays.
In-switch reduction (NVLink SHARP) is not modelled.

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
]

COLLECTIVES = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all")
TOPOLOGIES = ("ring", "bidirectional-ring", "switch", "mesh")
_TOPOLOGY_ALIASES = {
    "ring": "ring",
    "onewayring": "ring",
    "unidirectionalring": "ring",
    "link": "ring",
    "bidirectionalring": "bidirectional-ring",
    "biring": "bidirectional-ring",
    "torus": "bidirectional-ring",
    "torusaxis": "bidirectional-ring",
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
    """'torus' -> 'bidirectional-ring', 'NVSwitch' -> 'switch', ..."""
    key = _key(topology)
    if key in _TOPOLOGY_ALIASES:
        return _TOPOLOGY_ALIASES[key]
    raise ValueError(
        f"unknown topology {topology!r}; use one of {', '.join(TOPOLOGIES)} "
        "(or 'torus' for one axis of a TPU torus)." + _suggest(key, TOPOLOGIES)
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


def collective_bytes_per_link(kind, nbytes, n, topology="ring", links=1):
    """Bytes the busiest link carries in one direction (summed over all steps).

    For "switch" this is per link of a chip with `links` links into the switch; for "mesh"
    per chip-to-chip link. Divide by the one-way bandwidth of one link to get the time.
    """
    kind, topology = canonical_kind(kind), canonical_topology(topology)
    check_size("nbytes", nbytes)
    n = _check_n(n)
    if topology == "switch":
        check_size("links", links)
    V = nbytes
    if kind == "all-to-all":
        per_link = {
            "ring": (n - 1) * V / (2 * n),
            "bidirectional-ring": _floor(n * n / 4) * V / (2 * n * n),
            "switch": (n - 1) * V / (n * n) / links,
            "mesh": V / (n * n),
        }[topology]
        return per_link
    rounds = 2 if kind == "all-reduce" else 1  # reduce-scatter, then all-gather
    one_round = {
        "ring": (n - 1) * V / n,
        "bidirectional-ring": (n - 1) * V / (2 * n),
        "switch": (n - 1) * V / n / links,
        "mesh": V / n,
    }[topology]
    return rounds * one_round


def collective_steps(kind, n, topology="ring"):
    """How many latency-bearing steps the collective takes (see the module docstring)."""
    kind, topology = canonical_kind(kind), canonical_topology(topology)
    n = _check_n(n)
    if topology in ("switch", "mesh"):
        return 2 if kind == "all-reduce" else 1
    if kind == "all-to-all":
        return n - 1 if topology == "ring" else _floor(n / 2)
    return 2 * (n - 1) if kind == "all-reduce" else n - 1


def collective_time(kind, nbytes, n, one_way_bytes_per_s, topology="ring", latency_s=0.0, links=1):
    """Seconds for a collective over n chips: bandwidth term + steps x per-step latency.

    kind: "all-gather", "reduce-scatter", "all-reduce" or "all-to-all".
    nbytes: size of the full array in bytes (V). n: number of chips (>= 2).
    one_way_bytes_per_s: one link, one direction (W). topology: "ring",
    "bidirectional-ring" (alias "torus": one torus axis), "switch" (pass `links`, the
    number of links each chip has into the switch) or "mesh".
    latency_s: time per step (a hop), e.g. ~1e-6 s for one ICI hop.
    """
    check_size("one_way_bytes_per_s", one_way_bytes_per_s)
    check_size("latency_s", latency_s, allow_zero=True)
    per_link = collective_bytes_per_link(kind, nbytes, n, topology, links)
    return per_link / one_way_bytes_per_s + collective_steps(kind, n, topology) * latency_s
