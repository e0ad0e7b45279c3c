"""Worked problems of chapter 8, "Problems" (ids start with "problems-")."""

from .. import (
    critical_batch_size,
    critical_intensity,
    estimate,
    exact_critical_batch_size,
    format_bandwidth,
    get_chip,
    matmul,
    per_example_matmul,
    sharded_critical_D,
)
from .ch02_intensity import FOLKLORE_GPU_RIDGE
from .core import Exercise, Mistake, register
from .links import chip_link, vendor_link_answers

register(
    Exercise(
        id="problems-int8-critical-batch",
        twice=("dtype",),
        question="An all-int8 matmul (int8 activations, weights and output, int8 math) on a TPU v5e: above "
        "which batch B is it compute-bound, with B << D, F?",
        answer=lambda p: critical_batch_size(p["chip"], "int8"),
        kind="number",
        params={"chip": "TPU v5e"},
        hints=(
            "The int8 peak is twice the bf16 one, and every element is 1 byte: intensity ~ 2B "
            "(2BDF FLOPs over DF bytes of weights).",
        ),
        mistakes=lambda p: [
            Mistake(
                critical_intensity(p["chip"], "int8"),
                "That is the int8 ridge point (FLOPs per byte); with 1-byte weights "
                "the intensity is 2B, so B_crit is half of it.",
            )
        ],
    )
)

register(
    Exercise(
        id="problems-int8-weights-approx",
        twice=("dtype", "sparse"),
        title="The approximate critical batch on an H100 (chapter 8)",
        question="bf16 activations times int8 weights, math in bf16, on an H100 SXM: the critical batch "
        "with B << D, F?",
        answer=lambda p: critical_batch_size(p["chip"], "bf16", weights="int8"),
        kind="number",
        params={"chip": "H100 SXM"},
        tolerance=0.01,
        hints=("Bytes ~ 1 * D * F (int8 weights), FLOPs 2BDF, peak is the bf16 one.",),
        mistakes=lambda p: [
            Mistake(
                critical_batch_size(p["chip"], "bf16"),
                "That is the all-bf16 answer (on this chip the all-int8 one too): "
                "int8 weights halve the bytes, and with bf16 activations the math "
                "runs at the bf16 peak.",
            )
        ],
    )
)


def _exact_part(size):
    return Exercise(
        id=f"problems-int8-weights-exact/{size}",
        title=f"D = F = {size}",
        question=f"the exact crossover batch at D = F = {size}",
        answer=lambda p: exact_critical_batch_size(p["chip"], size, size, "bf16", weights="int8"),
        kind="number",
        tolerance=0.01,
        hints=("Solve 2BDF / peak = (2BD + DF + 2BF) / bandwidth for B.",),
        mistakes=lambda p: [
            Mistake(
                critical_batch_size(p["chip"], "bf16", weights="int8"),
                "That is the B << D, F approximation; at this size the "
                "activation and output bytes are not negligible.",
            )
        ],
    )


register(
    Exercise(
        id="problems-int8-weights-exact",
        title="The exact crossovers on an H100 (chapter 8)",
        question="The same bf16 x int8 matmul on an H100 SXM: the exact batch where t_math = t_comms, "
        "for D = F = 4096 and for D = F = 1024? Answer both, as (B at 4096, B at 1024).",
        answer=lambda p: tuple(part.answer(p) for part in (_exact_part(4096), _exact_part(1024))),
        kind="parts",
        params={"chip": "H100 SXM"},
        parts=(_exact_part(4096), _exact_part(1024)),
        hints=("Solve 2BDF / peak = (2BD + DF + 2BF) / bandwidth for B, once per size.",),
    )
)


register(
    Exercise(
        id="problems-throughput-small-batch",
        twice=("dtype",),
        question="X[B, D] @ W[D, F] in bf16 on a TPU v5e with B = 32, D = F = 8192: what FLOP/s does it "
        "reach at best (math and memory perfectly overlapped)?",
        answer=lambda p: estimate(matmul(p["B"], p["D"], p["F"]), p["chip"]).achieved_flops_per_s,
        kind="rate",
        params={"chip": "TPU v5e", "B": 32, "D": 8192, "F": 8192},
        hints=("FLOPs / max(t_math, t_comms): below the ridge that is bandwidth x intensity.",),
        mistakes=lambda p: [
            Mistake(
                get_chip(p["chip"]).peak_flops_per_s("bf16"),
                "That is the peak: this batch is far below the ridge, so the matmul "
                "waits for memory.",
            )
        ],
    )
)

register(
    Exercise(
        id="problems-per-example-intensity",
        twice=("dtype", "multiply-add"),
        title="Intensity of a small per-example matmul in fp32 (chapter 8)",
        question="A per-example matmul (every example has its own W[D, F]) with B = 512, D = F = 64, all in "
        "fp32: its arithmetic intensity in FLOPs per byte?",
        answer=lambda p: per_example_matmul(p["B"], p["D"], p["F"], dtype=p["dtype"]).intensity,
        kind="intensity",
        params={"B": 512, "D": 64, "F": 64, "dtype": "fp32"},
        tolerance=0.01,
        hints=(
            "The weights are now B*D*F elements: bytes grow with B exactly as the FLOPs do.",
            "fp32 is 4 bytes: 2BDF FLOPs over 4(BD + BDF + BF) bytes; B cancels.",
        ),
        mistakes=lambda p: [
            Mistake(
                matmul(p["B"], p["D"], p["F"], dtype=p["dtype"]).intensity,
                "That is a shared-weight matmul; here every example reads its own matrix.",
            ),
            Mistake(
                per_example_matmul(p["B"], p["D"], p["F"]).intensity,
                "That counts 2 bytes per number (bf16); fp32 is 4.",
            ),
            Mistake(
                0.5,
                "That is the limit for large D and F (2 FLOPs per 4-byte weight); "
                "at D = F = 64 the activations and outputs add bytes too.",
            ),
        ],
    )
)

register(
    Exercise(
        id="problems-h100-critical-batch",
        twice=("sparse", "dtype"),
        question="From the H100 PCIe spec sheet's BFLOAT16 Tensor Core and memory bandwidth "
        "lines: the critical batch of a bf16 matmul with B << D, F?",
        answer=lambda p: critical_batch_size(p["chip"], "bf16"),
        kind="number",
        params={"chip": "H100 PCIe"},
        hints=("The asterisk means 'with sparsity'; a dense matmul gets half of it.",),
        tolerance=0.01,
        mistakes=lambda p: [
            Mistake(
                critical_batch_size(p["chip"], "bf16", sparse=True),
                "You used the 2:4-sparse figure; dense is half of it.",
            ),
            Mistake(
                FOLKLORE_GPU_RIDGE,
                f"{FOLKLORE_GPU_RIDGE} is the round figure often quoted for GPUs; "
                "this question asks for this chip's value, to within 1%.",
            ),
        ],
    )
)


def _two_chip_critical_d(p):
    return sharded_critical_D(p["chip"], n=2)


register(
    Exercise(
        id="problems-v5p-critical-d",
        twice=("bidirectional",),
        question="Two TPU v5p chips split a bf16 matmul along D over one ICI link. Above which D does each "
        "chip's math outlast the exchange of partial sums?",
        answer=_two_chip_critical_d,
        kind="number",
        params={"chip": "TPU v5p"},
        hints=("D > 2 x peak / one-way link bandwidth (bf16, n = 2).",),
        mistakes=lambda p: [
            *vendor_link_answers(_two_chip_critical_d, p, "number"),
            Mistake(
                sharded_critical_D(
                    p["chip"], n=2, link_bytes_per_s=2 * chip_link(p["chip"]).one_way_bytes_per_s
                ),
                "You used the bidirectional figure for one direction.",
            ),
        ],
    )
)

register(
    Exercise(
        id="problems-h100-nvlink-critical-d",
        twice=("bidirectional",),
        question="Two H100 SXM GPUs on NVSwitch split a bf16 matmul along D; each sends its partial sum "
        "over all 18 NVLink links at once. Above which D does each GPU's math outlast the exchange?",
        answer=lambda p: sharded_critical_D(p["chip"], n=2),
        kind="number",
        params={"chip": "H100 SXM"},
        hints=(
            f"{chip_link('H100 SXM').count} links x "
            f"{format_bandwidth(get_chip('H100 SXM').link_bytes_per_s)} each way = the one-way total; "
            f"the spec sheet's {format_bandwidth(chip_link('H100 SXM').bidirectional_total_bytes_per_s)} "
            "counts both ways.",
        ),
        mistakes=lambda p: [
            Mistake(
                sharded_critical_D(
                    p["chip"], n=2, link_bytes_per_s=2 * chip_link(p["chip"]).one_way_bytes_per_s
                ),
                "You used 900 GB/s, both directions together; one direction carries half.",
            ),
            Mistake(
                sharded_critical_D(p["chip"], n=2, topology="ring"),
                "That is over a single 25 GB/s link; through NVSwitch a GPU uses all 18 at once.",
            ),
        ],
    )
)

register(
    Exercise(
        id="problems-a100-regime",
        question="bf16 matmul, B = 128, D = F = 8192, on an A100 SXM: 'compute'-bound or 'bandwidth'-bound?",
        answer=lambda p: estimate(matmul(p["B"], p["D"], p["F"]), p["chip"]).bound,
        kind="choice",
        choices=("compute", "bandwidth"),
        params={"chip": "A100 SXM", "B": 128, "D": 8192, "F": 8192},
        hints=("Compare the intensity (about B for B << D, F) with the A100's ridge point.",),
        mistakes=lambda p: [
            Mistake("compute", "128 is below the A100's ridge point in bf16 (dense).")
        ],
    )
)

register(
    Exercise(
        id="problems-min-square-tile",
        twice=("dtype", "sparse"),
        title="The smallest compute-bound tile on an MI300X (chapter 8)",
        question="A bf16 matmul on an MI300X runs with square t x t output tiles whose inputs stream from "
        "HBM. What is the smallest t for which the tile loop is compute-bound?",
        answer=lambda p: 2 * critical_intensity(p["chip"]),
        kind="number",
        params={"chip": "MI300X"},
        tolerance=0.01,
        hints=(
            "One step loads a [t, b_k] and a [b_k, t] tile (2 bytes per number) and does 2 t^2 b_k FLOPs: "
            "the intensity is t / 2, whatever b_k.",
            "Set t / 2 equal to the ridge point.",
        ),
        mistakes=lambda p: [
            Mistake(
                critical_intensity(p["chip"]),
                "That is the ridge point itself; a t x t tile's intensity is t / 2 in bf16, so t must be "
                "twice the ridge.",
            ),
            Mistake(
                4 * critical_intensity(p["chip"]),
                "The intensity of a t x t tile is t / 2 (2 t^2 b_k FLOPs for 2 t b_k numbers of 2 bytes), "
                "not t / 4.",
            ),
        ],
    )
)
