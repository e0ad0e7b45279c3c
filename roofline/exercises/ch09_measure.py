"""Exercises of chapter 9, "Measuring a roofline": reading a measured result.

The default parameters describe an example machine; the chapter's check cells
pass the reader's own measured figures as parameters, so the answer is checked
against their machine.
"""

from .. import critical_intensity, dot, get_chip
from ..hardware import Chip, Peak, Source
from ..measure.bandwidth import bytes_counted
from .core import Exercise, Mistake, register


def _machine(p) -> Chip:
    src = Source("exercise", "a measured machine")
    return Chip(name="measured machine", vendor="measured", peaks=(Peak("fp64", p["peak"], src),),
                hbm_bytes=1e9, hbm_bytes_per_s=p["bandwidth"], memory_source=src, memory_kind="DRAM")


register(Exercise(
    id="measure-add-bytes",
    question=("The add kernel np.add(b, c, out=a) runs on fp64 arrays of N elements each. "
              "How many bytes does STREAM's rule count for one call?"),
    answer=lambda p: bytes_counted("add", p["N"]),
    kind="size",
    params={"N": 10_000_000},
    hints=("It reads b and c and writes a: three arrays, each touched once.",
           "An fp64 element is 8 bytes."),
    mistakes=lambda p: [
        Mistake(2 * 8 * p["N"], "That counts two arrays: add reads two (b and c) and writes one (a)."),
        Mistake(4 * 8 * p["N"], "That adds the cache's write-allocate read of a; STREAM does not count it."),
        Mistake(3 * p["N"], "That counts elements, not bytes: an fp64 element is 8 bytes."),
    ],
))

register(Exercise(
    id="measure-copy-bandwidth",
    question=("np.copyto(a, b) on fp64 arrays of N elements takes t seconds. What bandwidth does "
              "the STREAM convention report?"),
    answer=lambda p: bytes_counted("copy", p["N"]) / p["t"],
    kind="bandwidth",
    params={"N": 2**24, "t": 0.01},
    hints=("Count b read once and a written once: 2 x 8N bytes.", "Divide bytes by seconds."),
    mistakes=lambda p: [
        Mistake(8 * p["N"] / p["t"], "That counts the bytes copied once, as mbw does; STREAM counts "
                                     "the read and the write (2 x 8N)."),
        Mistake(8 * p["N"] / p["t"] / 2**20, "That is mbw's MiB/s figure counted once; convert units "
                                             "and count read and write."),
    ],
))

register(Exercise(
    id="measure-ridge-point",
    question=("A machine measures a peak of `peak` FLOP/s (fp64 matmul) and a main-memory "
              "bandwidth of `bandwidth` bytes/s. Where is its fp64 ridge point, in FLOPs/byte?"),
    answer=lambda p: critical_intensity(_machine(p), "fp64"),
    kind="intensity",
    params={"peak": 1e11, "bandwidth": 2e10},
    hints=("The ridge point is peak FLOP/s divided by bandwidth (bytes/s).",),
))

register(Exercise(
    id="measure-dot-regime",
    question=("On that machine, is an fp64 dot product of two long vectors bandwidth-bound or "
              "compute-bound?"),
    answer=lambda p: ("bandwidth-bound" if dot(p["N"], "fp64").intensity < critical_intensity(_machine(p), "fp64")
                      else "compute-bound"),
    kind="choice",
    choices=("bandwidth-bound", "compute-bound"),
    params={"peak": 1e11, "bandwidth": 2e10, "N": 10_000_000},
    hints=("A dot product does about 2N FLOPs and reads 2N fp64 numbers (16N bytes).",
           "Compare its intensity (about 1/8 FLOP per byte) with the ridge point."),
))

register(Exercise(
    id="measure-gpu-fraction",
    question=("In Colab, a bf16 matmul on an H100 SXM reaches `achieved` FLOP/s. What fraction of "
              "the catalog's peak is that (a number between 0 and 1)?"),
    answer=lambda p: p["achieved"] / get_chip(p["chip"]).peak_flops_per_s("bf16"),
    kind="number",
    params={"achieved": 6.5e14, "chip": "H100 SXM"},
    hints=("Divide by the dense bf16 peak: rl.get_chip('H100 SXM').peak_flops_per_s('bf16').",
           "The 1,979 TFLOPS on the spec sheet is the 2:4-sparse figure."),
    mistakes=lambda p: [
        Mistake(p["achieved"] / get_chip(p["chip"]).peak_flops_per_s("bf16", sparse=True),
                "That divides by the sparse peak; a dense matmul is measured against the dense one."),
    ],
))
