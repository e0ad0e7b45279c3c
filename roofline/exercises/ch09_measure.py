"""Exercises of chapter 9, "Measuring a roofline": reading a measured result.

The default parameters describe an example machine; the chapter's check cells
pass the reader's own measured figures as parameters, so the answer is checked
against their machine.
"""

from .. import critical_intensity, dot, get_chip
from ..hardware import Chip, Peak, Source
from .core import Exercise, Mistake, register


def bytes_counted(kernel, n_elements, itemsize=8):
    """STREAM's byte count for `kernel` (imported on first use: roofline.measure loads numpy,
    and the grader imports every exercise module into every student's kernel)."""
    from ..measure.bandwidth import bytes_counted as count

    return count(kernel, n_elements, itemsize)


def _machine(p) -> Chip:
    src = Source("exercise", "a measured machine")
    dtype = p.get("dtype", "fp64")
    return Chip(
        name="measured machine",
        vendor="measured",
        peaks=(Peak(dtype, p["peak"], src),),
        hbm_bytes=1e9,
        hbm_bytes_per_s=p["bandwidth"],
        memory_source=src,
        memory_kind="DRAM",
    )


register(
    Exercise(
        id="measure-add-bytes",
        twice=("dtype",),
        title="Bytes of the add kernel in fp32 (chapter 9)",
        question=(
            "The add kernel np.add(b, c, out=a) runs on fp32 arrays of N = 5,000,000 elements each. "
            "How many bytes does STREAM's rule count for one call?"
        ),
        answer=lambda p: bytes_counted("add", p["N"], 4),
        kind="size",
        params={"N": 5_000_000},
        hints=(
            "It reads b and c and writes a: three arrays, each touched once.",
            "An fp32 element is 4 bytes.",
        ),
        mistakes=lambda p: [
            Mistake(
                2 * 4 * p["N"],
                "That counts two arrays: add reads two (b and c) and writes one (a).",
            ),
            Mistake(
                4 * 4 * p["N"],
                "That adds the cache's write-allocate read of a; STREAM does not count it.",
            ),
            Mistake(3 * p["N"], "That counts elements, not bytes: an fp32 element is 4 bytes."),
            Mistake(
                3 * 8 * p["N"],
                "That uses 8 bytes per element (fp64, as in the chapter's sweep); "
                "these arrays are fp32, 4 bytes each.",
            ),
        ],
    )
)


def _stream_copy(p):
    return bytes_counted("copy", p["N"]) / p["t"]


def _mbw_copy(p):
    return 8 * p["N"] / p["t"]


register(
    Exercise(
        id="measure-copy-bandwidth",
        title="From a copy time to a bandwidth (chapter 9)",
        question=(
            "np.copyto(a, b) on fp64 arrays of N elements takes t seconds. What bandwidth does "
            "the STREAM convention report, and what does mbw (which counts the bytes copied "
            "once) report? Answer both, as (STREAM, mbw)."
        ),
        answer=lambda p: (_stream_copy(p), _mbw_copy(p)),
        kind="parts",
        params={"N": 2**24, "t": 0.1},
        parts=(
            Exercise(
                id="measure-copy-bandwidth/stream",
                title="STREAM",
                question="STREAM's figure",
                answer=_stream_copy,
                kind="bandwidth",
                hints=(
                    "Count b read once and a written once: 2 x 8N bytes.",
                    "Divide bytes by seconds.",
                ),
                mistakes=lambda p: [
                    Mistake(
                        _mbw_copy(p),
                        "That counts the bytes copied once, as mbw does; STREAM "
                        "counts the read and the write (2 x 8N).",
                    ),
                    Mistake(
                        _mbw_copy(p) / 2**20,
                        "That is mbw's MiB/s figure, a number of MiB; "
                        "convert units and count read and write.",
                    ),
                ],
            ),
            Exercise(
                id="measure-copy-bandwidth/mbw",
                title="mbw",
                question="mbw's figure",
                answer=_mbw_copy,
                kind="bandwidth",
                hints=("mbw counts the 8N bytes copied once.",),
                mistakes=lambda p: [
                    Mistake(
                        _stream_copy(p),
                        "That is STREAM's figure, which counts the read and the "
                        "write; mbw counts the bytes copied once.",
                    ),
                    Mistake(
                        _mbw_copy(p) / 2**20,
                        "That is the number mbw prints, in MiB/s; give it "
                        "with its unit (e.g. '1.6 GB/s' or '1600 MiB/s').",
                    ),
                ],
            ),
        ),
        hints=("STREAM counts the read and the write: 2 x 8N bytes; mbw counts 8N bytes once.",),
    )
)

register(
    Exercise(
        id="measure-ridge-point",
        title="Your fp32 ridge point (chapter 9)",
        question=(
            "A machine measures an fp32 matmul peak of `peak` FLOP/s and a bandwidth of "
            "`bandwidth` bytes/s from one of its memory levels (chapter 9: its fastest cache), "
            "both on one thread. Where is its fp32 ridge point against that level, in "
            "FLOPs/byte? (The check cell passes the measured figures and prints them.)"
        ),
        answer=lambda p: critical_intensity(_machine(p), p["dtype"]),
        kind="intensity",
        params={"peak": 1.6e11, "bandwidth": 2e10, "dtype": "fp32"},
        hints=(
            "The ridge point is peak FLOP/s divided by the bandwidth (bytes/s) of the level the "
            "data comes from.",
            "Use the fp32 peak, not the fp64 one: the ridge point belongs to one dtype.",
        ),
    )
)

register(
    Exercise(
        id="measure-dot-regime",
        title="Which regime is a long dot product? (chapter 9)",
        question=(
            "On that machine, is an fp64 dot product of two long vectors bandwidth-bound or "
            "compute-bound?"
        ),
        answer=lambda p: (
            "bandwidth-bound"
            if dot(p["N"], "fp64").intensity < critical_intensity(_machine(p), "fp64")
            else "compute-bound"
        ),
        kind="choice",
        choices=("bandwidth-bound", "compute-bound"),
        params={"peak": 1e11, "bandwidth": 2e10, "N": 10_000_000},
        hints=(
            "A dot product does about 2N FLOPs and reads 2N fp64 numbers (16N bytes).",
            "Compare its intensity (about 1/8 FLOP per byte) with the ridge point.",
        ),
    )
)

register(
    Exercise(
        id="measure-gpu-fraction",
        twice=("sparse",),
        title="Fraction of peak on a GPU (chapter 9)",
        question=(
            "In Colab, a bf16 matmul on an H100 SXM reaches `achieved` FLOP/s. What fraction of "
            "the catalog's dense bf16 peak is that (a number between 0 and 1)?"
        ),
        answer=lambda p: p["achieved"] / get_chip(p["chip"]).peak_flops_per_s("bf16"),
        kind="number",
        params={"achieved": 6.5e14, "chip": "H100 SXM"},
        hints=(
            "Divide by the dense bf16 peak: rl.get_chip('H100 SXM').peak_flops_per_s('bf16').",
            "The 1,979 TFLOPS on the spec sheet is the 2:4-sparse figure.",
        ),
        mistakes=lambda p: [
            Mistake(
                p["achieved"] / get_chip(p["chip"]).peak_flops_per_s("bf16", sparse=True),
                "That divides by the sparse peak; a dense matmul is measured against the dense one.",
            ),
        ],
    )
)


register(
    Exercise(
        id="measure-triad-formula",
        factor_words={"8": "bytes per fp64 element"},
        title="Write the triad's bandwidth (chapter 9)",
        question=(
            "STREAM's triad, a = b + s*c, runs on fp64 arrays of N elements and takes t "
            "seconds. Write the bandwidth STREAM reports, in bytes per second, as a formula in "
            "N and t."
        ),
        answer=lambda p: "24*N/t",
        kind="symbolic",
        symbols=("N", "t"),
        hints=(
            "Triad reads b and c and writes a: three arrays, each touched once.",
            "An fp64 element is 8 bytes.",
        ),
        mistakes=lambda p: [
            Mistake(
                "16*N/t", "That counts two arrays; triad reads two (b and c) and writes one (a)."
            ),
            Mistake(
                "32*N/t",
                "That adds the cache's write-allocate read of a; STREAM does not count it.",
            ),
            Mistake("3*N/t", "That counts elements, not bytes: an fp64 element is 8 bytes."),
            Mistake("t/(24*N)", "That is seconds per byte, the reciprocal of a bandwidth."),
        ],
    )
)
