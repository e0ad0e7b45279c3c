"""Peak and achievable: what real kernels reach of the datasheet rates, as people measured it.

A roofline drawn from datasheet figures is an upper bound no real kernel reaches. Published
measurements put numbers on the gap: the best-shape bf16 matmul reaches about 80 % of the
dense peak on an H100 SXM and 87 % on an A100; a streaming kernel moves 83-89 % of the nominal
HBM bandwidth (BabelStream's triad: 83 % on an A100, 86 % on an H200, 89 % on an H100 SXM). Dividing the one by the other gives the **achieved-rate ridge**, the
intensity where a real kernel turns compute-bound (`achieved_ridge`).

A tiny operation meets a third limit that neither roof shows: every kernel launch costs a
fixed time (`KERNEL_LAUNCH_S`), so `roofline.estimate(..., overhead_s=KERNEL_LAUNCH_S)` never
predicts a few nanoseconds for a kernel that takes microseconds to start.
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalog import get_chip

__all__ = [
    "KERNEL_LAUNCH_S",
    "Measured",
    "MATMUL_MEASURED",
    "HBM_MEASURED",
    "matmul_efficiency",
    "hbm_efficiency",
    "achieved_ridge",
]

#: Fixed cost of one GPU kernel launch, seconds. An **assumption** of the book, not a sourced
#: figure: launching a CUDA kernel from a framework takes a few microseconds (it varies with
#: the driver, the framework and whether kernels are queued or captured in a CUDA graph); the
#: book takes 5 µs. Measure your own (an empty kernel timed in a loop) before relying on it.
KERNEL_LAUNCH_S = 5e-6

_STAS = (
    "https://github.com/stas00/ml-engineering/blob/7bc7c305/compute/accelerator/README.md "
    '("maximum achievable matmul FLOPS" table)'
)
_AZURE_H100 = (
    "https://github.com/Azure/AI-benchmarking-guide/blob/ae0b6a7f/Azure_Results/"
    "ND_H100_v5_results.md (BabelStream cuda-stream)"
)
_AZURE_A100 = (
    "https://github.com/Azure/AI-benchmarking-guide/blob/3bb66cac/Azure_Results/"
    "ND_A100_v4_results.md (BabelStream cuda-stream)"
)
_AZURE_H200 = (
    "https://github.com/Azure/AI-benchmarking-guide/blob/7f20e5fa/Azure_Results/"
    "ND_H200_v5_results.md (BabelStream cuda-stream)"
)


@dataclass(frozen=True)
class Measured:
    """One published measurement: `value` (FLOP/s or bytes/s) of `what`, and where."""

    what: str
    value: float
    source: str


#: Best-shape bf16 `torch.matmul`, mean of 100 iterations after 50 warm-up (FLOP/s).
MATMUL_MEASURED = {
    "H100 SXM": Measured("bf16 matmul, best shape", 794.5e12, _STAS),
    "A100 SXM": Measured("bf16 matmul, best shape", 271.2e12, _STAS),
    "MI300X": Measured("bf16 matmul, best shape", 668.4e12, _STAS),
    "B200": Measured("bf16 matmul, best shape", 1745e12, _STAS),
}

#: HBM bandwidth a streaming kernel reaches (bytes/s): BabelStream's triad, default size.
HBM_MEASURED = {
    "H100 SXM": Measured("BabelStream triad", 2.97e12, _AZURE_H100),
    "H200": Measured("BabelStream triad", 4.15e12, _AZURE_H200),
    "A100 SXM": Measured("BabelStream triad", 1.70e12, _AZURE_A100),
}


def _measured(table, chip, what):
    chip = get_chip(chip)
    if chip.name not in table:
        have = ", ".join(table)
        raise ValueError(
            f"no published {what} measurement for {chip.name} in the book (it has {have}); "
            "pass your own fraction, e.g. efficiency=0.8"
        )
    return chip, table[chip.name]


def matmul_efficiency(chip) -> float:
    """Measured best-shape bf16 matmul FLOP/s / the catalog's dense bf16 peak (0.80 on H100)."""
    chip, m = _measured(MATMUL_MEASURED, chip, "matmul")
    return m.value / chip.peak_flops_per_s("bf16")


def hbm_efficiency(chip) -> float:
    """Measured streaming (triad) bandwidth / the catalog's nominal HBM bandwidth."""
    chip, m = _measured(HBM_MEASURED, chip, "HBM bandwidth")
    return m.value / chip.hbm_bytes_per_s


def achieved_ridge(chip, efficiency=None, bandwidth_efficiency=None) -> float:
    """The bf16 ridge from achieved rates: (efficiency x peak) / (bw. efficiency x bandwidth).

    Defaults are the published fractions above (`matmul_efficiency`, `hbm_efficiency`),
    in FLOPs/byte. On an H100 SXM the two fractions are close (0.80 and 0.89), so the
    achieved ridge sits about 10 % below the spec ridge: the spec ridge is a good first guess.
    """
    from .estimate import critical_intensity

    eff = matmul_efficiency(chip) if efficiency is None else efficiency
    bw = hbm_efficiency(chip) if bandwidth_efficiency is None else bandwidth_efficiency
    return critical_intensity(chip, "bf16", efficiency=eff, bandwidth_efficiency=bw)
