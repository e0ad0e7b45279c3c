"""Exercises of chapter 11, "Spreading a model over many chips" (ids start with "parallel-").

Each answer is computed from the catalog and the package's collective model
(`roofline.collectives`, routed by `roofline.topology`), on a chip, model or layout the chapter did not work through.
"""

from .. import all_reduce_time, get_chip
from .core import Exercise, Mistake, register

#: Bytes per parameter of mixed-precision training with Adam (bf16 weight and gradient, fp32
#: master weight and two fp32 moments).
_STATE_BYTES_PER_PARAM = 16


def _dp_tokens(chip, n):
    """Tokens per replica above which the backward pass, 4 Psi b / P, outlasts the all-reduce
    of 2 Psi bytes through the chip's switch (all its links at once): the gradients exist
    only once the backward pass makes them (chapter 4). Psi cancels; 1 is used."""
    chip = get_chip(chip)
    t_allreduce = all_reduce_time(chip, 2.0, n)  # routed by roofline.topology: the switch
    return t_allreduce * chip.peak_flops_per_s("bf16") / 4.0


register(
    Exercise(
        id="parallel-dp-tokens-b200",
        twice=("bidirectional", "all-reduce", "sparse"),
        title="Data parallelism on eight B200s (chapter 11)",
        question="Eight B200 GPUs on one NVSwitch board, plain data parallelism, bf16 gradients "
        "all-reduced through the switch over all of each GPU's links: at least how many tokens "
        "per GPU per step for the backward pass (4 Psi per token at the dense bf16 peak), which "
        "the all-reduce runs beside, to outlast it?",
        answer=lambda p: _dp_tokens(p["chip"], p["n"]),
        kind="number",
        params={"chip": "B200", "n": 8},
        hints=(
            "Backward math: 4 Psi b / P. All-reduce of 2 Psi bytes through a switch: "
            "2 (n-1)/n x 2 Psi / (links x one-way link bandwidth). Psi cancels.",
        ),
        mistakes=lambda p: [
            Mistake(
                _dp_tokens(p["chip"], p["n"]) * get_chip(p["chip"]).link_count,
                "That sends everything over a single NVLink link; through the switch each GPU "
                "uses all its links at once.",
            ),
            Mistake(
                _dp_tokens(p["chip"], p["n"]) * 2 / 3,
                "That compares the all-reduce with the whole step's math (6 Psi per token); "
                "the gradients exist only during the backward pass, 4 Psi per token.",
            ),
            Mistake(
                _dp_tokens(p["chip"], p["n"]) / 2,
                "That all-reduces 1 byte per parameter; bf16 gradients are 2 bytes each.",
            ),
        ],
    )
)


def _tp_mesh_f(chip):
    """Megatron MLP on a full mesh: two all-reduces of 2BD bytes against 12 B D F / n FLOPs per
    chip; n cancels: F* = (2/3) P / link."""
    chip = get_chip(chip)
    n = chip.link_count + 1
    t_two = 2 * all_reduce_time(chip, 2.0, n)  # routed by roofline.topology: the mesh
    return t_two * chip.peak_flops_per_s("bf16") * n / 12.0


register(
    Exercise(
        id="parallel-tp-critical-f-mi300x",
        twice=("bidirectional", "sparse"),
        title="Tensor parallelism on a full mesh (chapter 11)",
        question="Eight MI300X GPUs on a full mesh (one Infinity Fabric link to each other GPU) run "
        "a Megatron MLP with 8-way tensor parallelism in bf16. Above which MLP width F does the "
        "math (forward and backward) outlast the two all-reduces of 2BD bytes?",
        answer=lambda p: _tp_mesh_f(p["chip"]),
        kind="number",
        params={"chip": "MI300X"},
        hints=(
            "Per chip: 12 B D F / n FLOPs (two matmuls, forward and backward). On a mesh an "
            "all-reduce of V bytes puts 2 V / n on every link, all links at once.",
        ),
        mistakes=lambda p: [
            Mistake(
                _tp_mesh_f(p["chip"]) * 7,
                "That sends all the bytes over one link, as on a ring; on a mesh each chip uses "
                "its links to all the others at once.",
            ),
            Mistake(
                _tp_mesh_f(p["chip"]) / 2,
                "That counts one all-reduce; Megatron's MLP needs one forward and one backward.",
            ),
        ],
    )
)

register(
    Exercise(
        id="parallel-bubble-16-stages",
        title="A bubble (chapter 11)",
        question="16 pipeline stages, 8-way data parallelism, a global batch of 1536 sequences in "
        "micro-batches of one sequence: what fraction of each step does a stage sit idle (plain "
        "schedule)?",
        answer=lambda p: (
            (p["stages"] - 1) / (p["batch"] // p["dp"] // p["micro"] + p["stages"] - 1)
        ),
        kind="number",
        params={"stages": 16, "dp": 8, "batch": 1536, "micro": 1},
        hints=(
            "Micro-batches per pipeline: M = batch / data-parallel degree / micro-batch size. "
            "Bubble: (stages - 1) / (M + stages - 1).",
        ),
        mistakes=lambda p: [
            Mistake(
                (p["stages"] - 1) / (p["batch"] // p["micro"] + p["stages"] - 1),
                "Each of the 8 data-parallel pipelines gets only 1/8 of the batch.",
            ),
            Mistake(
                (p["stages"] - 1) / (p["batch"] // p["dp"] // p["micro"]),
                "That is the bubble relative to the useful time, (n_pp - 1)/M; the question asks "
                "for the fraction of the whole step, (n_pp - 1)/(M + n_pp - 1).",
            ),
        ],
    )
)


def _ep_critical_f(chip, n):
    """Expert width F above which gated experts' math, 18 E_tok b D F / P per chip (forward and
    backward, three matrices), outlasts four all-to-alls of each chip's E_tok b x 2D bytes, on
    the route `roofline.topology` gives n chips: inside a node through the switch; beyond one
    node through the network cards alone (the package's all-to-all across nodes: the NIC is
    the narrowest step). E_tok, b and D cancel; 1 is used for each."""
    from ..topology import collective_seconds, route

    chip = get_chip(chip)
    t_four = 4 * collective_seconds("all-to-all", n * 2.0, route(chip, n))
    return t_four * chip.peak_flops_per_s("bf16") / 18.0


register(
    Exercise(
        id="parallel-ep-network-h100",
        twice=("bidirectional", "sparse"),
        title="Experts across nodes (chapter 11)",
        question="64 H100 GPUs on 8 nodes hold the experts of a mixture-of-experts layer "
        "(gated experts, bf16, expert parallelism 64). Each all-to-all goes through the network "
        "cards, at each GPU's one-way share of them (the catalog's network_bytes_per_s), as "
        "through a switch of 64 chips. Above which expert width F does the experts' math "
        "(forward and backward) outlast the four all-to-alls?",
        answer=lambda p: _ep_critical_f(p["chip"], p["n"]),
        kind="number",
        params={"chip": "H100 SXM", "n": 64},
        hints=(
            "Per chip and routed token: 18 D F FLOPs (3 for forward + backward, 2 per "
            "multiply-add, 3 D F weights of a gated expert) against 4 all-to-alls of 2 D bytes, "
            "of which (n-1)/n leaves the chip.",
            "F > 4/9 x (n-1)/n x P / BW, with BW the GPU's share of the network, not NVLink's.",
        ),
        mistakes=lambda p: [
            Mistake(
                _ep_critical_f(p["chip"], 8),  # one node: the all-to-all through NVSwitch
                "That is the threshold of eight GPUs inside one node, on NVLink; across nodes "
                "every all-to-all leaves through the network cards.",
            ),
            Mistake(
                _ep_critical_f(p["chip"], p["n"]) * (p["n"] - 8) / (p["n"] - 1),
                "That keeps the 7 shares bound for the same node on NVLink, as a real machine "
                "would; this exercise counts all (n-1)/n of them through the network cards, as "
                "the package does.",
            ),
            Mistake(
                _ep_critical_f(p["chip"], p["n"]) / 2,
                "That counts two all-to-alls (out to the experts and back); the backward pass "
                "sends the gradients out and back too: four per layer and step.",
            ),
            Mistake(
                _ep_critical_f(p["chip"], p["n"]) * 3 / 2,
                "That counts a plain expert of two matrices; these experts are gated: gate, up "
                "and down, 3 D F weights.",
            ),
        ],
    )
)


def _llama405_params():
    from .. import models

    return models.get_model("Llama 3.1 405B").params


register(
    Exercise(
        id="parallel-fsdp-bytes-llama405",
        title="FSDP memory per chip (chapter 11)",
        question="Llama 3.1 405B trained with FSDP over 512 chips (bf16 weights and gradients, Adam "
        "in fp32 with fp32 master weights): how many bytes of weights, gradients and optimizer "
        "state does each chip hold?",
        answer=lambda p: _STATE_BYTES_PER_PARAM * _llama405_params() / p["n"],
        kind="size",
        params={"n": 512},
        hints=("16 bytes per parameter (2 + 2 + 4 + 4 + 4), divided over the FSDP group.",),
        mistakes=lambda p: [
            Mistake(
                4 * _llama405_params() / p["n"],
                "That holds only bf16 weights and gradients; the fp32 master weights and Adam's "
                "two moments add 12 bytes per parameter.",
            ),
            Mistake(
                _STATE_BYTES_PER_PARAM * _llama405_params(),
                "That is the whole model's state; FSDP keeps 1/n of it on each chip.",
            ),
        ],
    )
)

register(
    Exercise(
        id="parallel-fsdp-ring-symbolic",
        factor_words={
            "n": "the number of chips",
            "(n-1)/n": "each chip already holds 1/n of the data, so it sends (and receives) only (n-1)/n of it",
            "3": "three collectives: two all-gathers and a reduce-scatter",
        },
        title="FSDP on a one-way ring, symbolically (chapter 11)",
        question="n chips in a one-way ring (one link of W bytes/s each) train with FSDP: per step an "
        "all-gather of the 2 Psi bytes of weights forward, another backward and a reduce-scatter "
        "of the gradients. Tokens per chip b above which the math 6 Psi b / P outlasts them, in "
        "n, P, W?",
        answer=lambda p: "(n - 1)*P/(n*W)",
        kind="symbolic",
        symbols=("n", "P", "W"),
        hints=(
            "On a one-way ring an all-gather or a reduce-scatter of V bytes takes (n-1)/n V / W.",
            "Three of them with V = 2 Psi; Psi cancels against the math.",
        ),
        mistakes=lambda p: [
            Mistake(
                "2*(n - 1)*P/(3*n*W)",
                "That is plain data parallelism (one all-reduce, two collectives' worth); FSDP "
                "does three: two all-gathers and a reduce-scatter.",
            ),
            Mistake(
                "P/W",
                "Close: that drops the (n-1)/n of the ring collectives, which matters for small n.",
            ),
        ],
    )
)
