"""Exercises of chapter 6, "Communication rooflines" (ids start with "comms-")."""

from .. import exact_critical_batch_size, get_chip, sharded_critical_D, sharded_estimate
from .core import Exercise, Mistake, register
from .links import chip_link, vendor_link_answers


def _one_way(chip):
    return get_chip(chip).link_bytes_per_s


def _time_per_chip(p):
    return sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=2).t_lower


def _torus_critical_d(p):
    """D above which 8 chips on a line (an axis without wraparound) outlast their all-reduce."""
    return sharded_critical_D(p["chip"], n=p["n"], topology="line")


def _latency_crossover(p):
    """V where (n-1) latency steps equal (n-1)/n V / W on a line: V = n W latency."""
    return p["n"] * _one_way(p["chip"]) * p["latency_s"]


register(
    Exercise(
        id="comms-critical-d-v4",
        twice=("bidirectional",),
        title="Two TPU v4 chips (chapter 6)",
        question="Two TPU v4 chips split X[B, D] @ W[D, F] (bf16) along D and add their partial sums "
        "over one ICI link. Above which D does each chip's math outlast the link transfer?",
        answer=lambda p: sharded_critical_D(p["chip"], n=2, dtype="bf16"),
        kind="number",
        params={"chip": "TPU v4"},
        hints=(
            "Per chip: t_math = (2BDF/2) / peak FLOP/s and t_link = 2BF bytes / one-way link "
            "bandwidth. Set them equal: B and F cancel.",
        ),
        mistakes=lambda p: [
            Mistake(
                sharded_critical_D(p["chip"], n=2, link_bytes_per_s=2 * _one_way(p["chip"])),
                "Half the answer. Either you used the bidirectional link figure (each chip's partial "
                "sum travels one way, while the other chip's comes back the other way), or you "
                "counted 1 byte per element (bf16 has 2), or all 2BDF FLOPs on each chip (each "
                "does half).",
            ),
            Mistake(
                2 * sharded_critical_D(p["chip"], n=2),
                "You charged 4BF bytes: both partial sums on one direction. Links are full duplex, "
                "so each direction carries only 2BF bytes.",
            ),
        ],
    )
)

register(
    Exercise(
        id="comms-time-per-chip",
        twice=("sparse", "bidirectional"),
        byte_units=True,
        title="Time per chip (chapter 6)",
        question="B = 1024, D = 16384, F = 8192 in bf16, D split over 2 TPU v5e chips. How long does each "
        "chip need at best (math, HBM traffic and link transfer perfectly overlapped)?",
        answer=_time_per_chip,
        kind="time",
        params={"B": 1024, "D": 16384, "F": 8192, "chip": "TPU v5e"},
        hints=(
            "Per chip: the largest of t_math = (2BDF/2) / peak, t_HBM = its shards and partial sum "
            "/ HBM bandwidth, and t_link = 2BF / link.",
        ),
        mistakes=lambda p: [
            *vendor_link_answers(_time_per_chip, p, "time"),
            Mistake(
                sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=2).t_math * 2,
                "That is the time for all 2BDF FLOPs on one chip: each chip does only half of them.",
            ),
            Mistake(
                2 * sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=2).t_link,
                "That charges 4BF bytes to the link: both partial sums in one direction. Links "
                "are full duplex, so each direction carries one 2BF-byte partial sum.",
            ),
            Mistake(
                sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=2).t_upper,
                "That is the sum of the three times, the bound with no overlap; the question asks for "
                "the best case, the largest of them.",
            ),
        ],
    )
)


def _slice_critical_batch(p) -> float:
    """The batch above which one chip's slice X[B, D/2] @ W[D/2, F] is compute-bound on HBM."""
    return exact_critical_batch_size(p["chip"], p["D"] / 2, p["F"])


register(
    Exercise(
        id="comms-which-regime",
        title="Which resource? (chapter 6)",
        question="Two TPU v6e chips, bf16, D split in two: B = 512, D = 32768, F = 8192. Which "
        "resource sets each chip's pace: 'compute', 'memory' (its HBM) or 'link'? Assume the three "
        "overlap perfectly (the lower bound: the slowest resource sets the pace) and leave out the "
        "all-reduce's own HBM traffic.",
        answer=lambda p: sharded_estimate(p["B"], p["D"], p["F"], p["chip"], n=2).bound,
        kind="choice",
        choices=("compute", "memory", "link"),
        params={"B": 512, "D": 32768, "F": 8192, "chip": "TPU v6e"},
        hints=(
            "Work out each chip's three times (its math, its HBM traffic, its partial sum over the "
            "link) from the FLOPs and bytes of its slice, or compare D with the link's critical D "
            "(the chip's peak over the link's one-way bandwidth, as derived in this chapter) and "
            "B with the HBM critical batch of one chip's slice.",
        ),
        mistakes=lambda p: [
            Mistake(
                "link",
                f"D = {p['D']} is above this chip's link threshold 2P/BW_link "
                f"({sharded_critical_D(p['chip'], n=2):,.0f}): the partial sum crosses the link "
                "faster than the math runs. Check the other condition too.",
            ),
            Mistake(
                "compute",
                "The link keeps up (D is above its threshold), but that is one condition of two: "
                "each chip's slice must also have B above its HBM critical batch "
                f"({_slice_critical_batch(p):.0f} for X[B, D/2] @ W[D/2, F] on this chip), and "
                f"B = {p['B']} is below it.",
            ),
        ],
    )
)

register(
    Exercise(
        id="comms-hbm-bytes-per-chip",
        factor_words={"n": "the number of chips"},
        title="Memory bytes per chip, split the other way (chapter 6)",
        question="A bf16 matmul X[B, D] @ W[D, F] is split along F over n chips: W by columns, "
        "each chip holding all of X. Each chip reads X and its columns of W from its own memory "
        "once and writes its slice of Y once. Write the bytes each chip moves to and from its own "
        "memory, in terms of B, D, F, n.",
        answer=lambda p: "2*B*D + 2*D*F/n + 2*B*F/n",
        kind="symbolic",
        symbols=("B", "D", "F", "n"),
        hints=(
            "Chip i holds X[B, D] whole and W_i[D, F/n], and computes Y_i[B, F/n]: its own "
            "columns of Y, finished, with no partial sum to add. Every element is 2 bytes in bf16.",
        ),
        mistakes=lambda p: [
            Mistake(
                "2*B*D/n + 2*D*F/n + 2*B*F",
                "That is the split along D, the chapter's: there each chip reads D/n of X and "
                "writes a whole [B, F] partial sum. Split along F, each chip reads all of X and "
                "writes only its [B, F/n] slice of Y.",
            ),
            Mistake(
                "2*B*D/n + 2*D*F/n + 2*B*F/n",
                "X is not split here: with W split by columns, every chip needs all of X[B, D] "
                "(2BD bytes).",
            ),
            Mistake(
                "2*B*D + 2*D*F + 2*B*F",
                "That is one chip doing the whole matmul; each chip holds only F/n of the "
                "columns of W and writes F/n of the columns of Y.",
            ),
            Mistake("B*D + D*F/n + B*F/n", "bf16 is 2 bytes per element."),
        ],
    )
)

register(
    Exercise(
        id="comms-ring-bytes-fp32",
        factor_words={
            "n": "the number of chips",
            "(n-1)/n": "each chip already holds 1/n of the data, so it sends (and receives) only (n-1)/n of it",
            "4": "bytes per fp32 element",
        },
        title="fp32 partial sums on a ring (chapter 6)",
        question="The n chips of a matmul split along D keep their partial sums of Y[B, F] in fp32 "
        "(4 bytes per element) and add them with an all-reduce on a one-way ring. How many bytes "
        "does each chip send over its link in one direction? (an expression in B, F, n)",
        answer=lambda p: "8*B*F*(n - 1)/n",
        kind="symbolic",
        symbols=("B", "F", "n"),
        hints=(
            "An all-reduce is a reduce-scatter then an all-gather; on a ring each sends (n-1)/n of "
            "the array out of every chip. One partial sum is B*F elements of 4 bytes.",
        ),
        mistakes=lambda p: [
            Mistake(
                "4*B*F*(n - 1)/n",
                "That counts 2 bytes per element (bf16 partial sums), or only "
                "one half of the all-reduce; fp32 sums of both halves are twice "
                "this.",
            ),
            Mistake(
                "16*B*F*(n - 1)/n",
                "That counts both directions; links are full duplex, so only one "
                "direction's bytes cost time.",
            ),
            Mistake(
                "4*B*F",
                "That is one fp32 partial sum: the n = 2 answer would be 4BF, but for n "
                "chips a ring sends 2(n-1)/n partial sums.",
            ),
        ],
    )
)

register(
    Exercise(
        id="comms-allgather-mesh",
        factor_words={"n": "the number of chips"},
        title="An all-gather on a full mesh (chapter 6)",
        question="n chips are joined as a full mesh: every chip has its own link, BW bytes/s each way, "
        "to every other chip. Write the time of an all-gather of an array of V bytes (each chip "
        "starts with V/n of it) over the n chips, bandwidth term only, in V, n and BW.",
        answer=lambda p: "V/(n*BW)",
        kind="symbolic",
        symbols=("V", "n", "BW"),
        symbol_aliases={"W": "BW"},  # the spelling before BW (W is the weights in the book)
        hints=(
            "Each chip needs the V/n bytes of every other chip, and each of those pieces arrives "
            "over its own link, all at the same time.",
        ),
        mistakes=lambda p: [
            Mistake(
                "(n - 1)*V/(n*BW)",
                "That sends every piece over one link, as on a one-way ring; on "
                "a mesh the n - 1 pieces arrive over n - 1 links at once.",
            ),
            Mistake(
                "(n - 1)*V/(2*n*BW)",
                "That is a bidirectional ring (two links per chip); a mesh has "
                "n - 1 links per chip.",
            ),
            Mistake(
                "V/BW",
                "That moves the whole array over one link; each link carries only one chip's V/n.",
            ),
        ],
    )
)

register(
    Exercise(
        id="comms-torus-critical-d",
        twice=("bidirectional", "all-reduce"),
        title="A TPU v6e axis without wraparound (chapter 6)",
        question="Eight TPU v6e chips along one axis of an 8x8 slice split a bf16 matmul along D. "
        "A v6e axis wraps around only at its full length of 16, so these 8 chips form a line. "
        "Above which D does each chip's math outlast the all-reduce of the partial sums, run as "
        "a reduce-scatter then an all-gather?",
        answer=_torus_critical_d,
        kind="number",
        params={"chip": "TPU v6e", "n": 8},
        hints=(
            "On a line the link next to an end carries the partial sums of the other n - 1 chips: "
            "a reduce-scatter and an all-gather each move (n-1)/n of a partial sum over it, one "
            "way. Set 2BDF/(n P) equal to 2(n-1)/n x 2BF / W.",
        ),
        mistakes=lambda p: [
            *vendor_link_answers(_torus_critical_d, p, "number"),
            Mistake(
                sharded_critical_D(p["chip"], n=p["n"], topology="bidirectional-ring"),
                "That assumes a wraparound link (a bidirectional ring, half the bytes per link); "
                "a v6e axis of 8 has none.",
            ),
            Mistake(
                sharded_critical_D(p["chip"], n=2),
                "That is the two-chip answer; with n chips the threshold grows like n - 1.",
            ),
            Mistake(
                _torus_critical_d(p) * p["n"] / (2 * (p["n"] - 1)),
                "That is the running-sums all-reduce (V / W per link, also reachable on a line); the "
                "question runs it as a reduce-scatter then an all-gather, 2(n-1)/n V / W.",
            ),
        ],
    )
)

register(
    Exercise(
        id="comms-nvswitch-critical-d",
        twice=("bidirectional", "all-reduce"),
        title="Eight B200s on NVSwitch (chapter 6)",
        question="Eight B200 GPUs on NVSwitch split a bf16 matmul along D; each GPU sends over all its "
        "NVLink 5 links at once. Above which D does each GPU's math outlast the all-reduce?",
        answer=lambda p: sharded_critical_D(p["chip"], n=p["n"]),
        kind="number",
        params={"chip": "B200", "n": 8},
        hints=(
            "Through a switch the all-reduce sends 2(n-1)/n of a partial sum out of each GPU, over "
            "all its links together (links x one-way bandwidth per link).",
        ),
        mistakes=lambda p: [
            Mistake(
                sharded_critical_D(p["chip"], n=p["n"], topology="ring"),
                "That sends everything over one link, as in a ring of single links; through "
                "NVSwitch every GPU uses all of its links at once.",
            ),
            Mistake(
                sharded_critical_D(
                    p["chip"],
                    n=p["n"],
                    link_bytes_per_s=2 * chip_link(p["chip"]).one_way_bytes_per_s,
                ),
                "You used the bidirectional figure (1.8 TB/s per GPU counts both directions).",
            ),
        ],
    )
)

register(
    Exercise(
        id="comms-latency-crossover",
        twice=("bidirectional",),
        title="When latency wins (chapter 6)",
        question="An all-gather over 8 TPU v5e chips along one axis of a slice (a line: a v5e axis "
        "wraps only at 16), with 1 µs of latency per step. Below which array size V does the "
        "latency term exceed the bandwidth term? Answer in bytes (a size, e.g. '1 MB').",
        answer=_latency_crossover,
        kind="size",
        params={"chip": "TPU v5e", "n": 8, "latency_s": 1e-6},
        hints=(
            "On a line the far end is n - 1 hops away: latency (n - 1) x 1 µs. Bandwidth: the "
            "link next to an end carries (n-1)/n x V one way. Set them equal; n - 1 cancels.",
        ),
        mistakes=lambda p: [
            *vendor_link_answers(_latency_crossover, p, "size"),
            Mistake(
                2 * p["n"] * _one_way(p["chip"]) * p["latency_s"],
                "That assumes a wraparound ring with n - 1 steps of half the bytes; an axis of 8 "
                "v5e chips is a line.",
            ),
            Mistake(
                (p["n"] - 1) * _one_way(p["chip"]) * p["latency_s"],
                "Check the bandwidth term: it is (n-1)/n x V / W, so n (not n - 1) survives.",
            ),
        ],
    )
)


def _megatron_f_star(p, matmuls=3, links=None):
    """F where a Megatron MLP's math (matmuls x 2BDF/n) equals its [B, D] all-reduce, bf16."""
    chip = get_chip(p["chip"])
    n, peak = p["n"], chip.peak_flops_per_s("bf16")
    total = (links or chip.link_count) * chip.link_bytes_per_s
    # matmuls * 2BDF / (n P) = 2(n-1)/n * 2BD / W_total  ->  F = 2 (n-1) P / (matmuls W_total)
    return 2 * (n - 1) * peak / (matmuls * total)


register(
    Exercise(
        id="comms-megatron-threshold",
        twice=("bidirectional", "all-reduce"),
        title="A tensor-parallel MLP on eight B200s (chapter 6)",
        question="Eight B200 GPUs on NVSwitch run a gated MLP (three matmuls: gate, up, down) split "
        "Megatron's way: the gate and up matrices by columns, the down matrix by rows, one "
        "all-reduce of the [B, D] output per MLP, all in bf16. Above which hidden size F does each "
        "GPU's math outlast the all-reduce?",
        answer=_megatron_f_star,
        kind="number",
        params={"chip": "B200", "n": 8},
        hints=(
            "Math per GPU: 3 x 2BDF/n FLOPs at the dense bf16 peak. All-reduce through the "
            "switch: 2(n-1)/n x 2BD bytes over all the GPU's links together. B and D cancel.",
        ),
        mistakes=lambda p: [
            Mistake(
                _megatron_f_star(p, matmuls=2),
                "That is a plain MLP with two matmuls; a gated MLP has three (gate, up, down).",
            ),
            Mistake(
                _megatron_f_star(p, links=1),
                "That sends everything over one NVLink link; through NVSwitch each GPU uses all "
                "of its links at once.",
            ),
            Mistake(
                _megatron_f_star(p) / 2,
                "You used the bidirectional figure (both directions added); the all-reduce's "
                "bytes leave each GPU in one direction.",
            ),
        ],
    )
)
