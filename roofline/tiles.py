"""Tiles in on-chip memory: the intensity of a blocked matmul and whether its tiles fit.

A matmul too big for on-chip memory (VMEM on a TPU, shared memory on a GPU) is done
tile by tile: an output tile [bm, bn] stays on chip, accumulated in fp32, while
[bm, bk] and [bk, bn] input tiles stream in from HBM. Per step that is
2*bm*bk*bn FLOPs for (bm*bk + bk*bn) elements loaded, an intensity of

    2*bm*bn / ((bm + bn) * bytes per element)      (bm*bn / (bm + bn) in bf16),

which does not depend on bk (`roofline.tiled_matmul` counts one step). The tile loop
is compute-bound from HBM only when that exceeds the chip's ridge point, so a
square tile needs a side of at least (bytes per element) * ridge; and the tiles must
fit in on-chip memory (`tile_bytes`, `largest_square_tile`).

A GPU tiles at three levels. The output tile's fp32 **accumulator lives in registers** (on
Hopper the tensor cores' wgmma instructions accumulate there), so shared memory holds only the
streaming input tiles, and the register file bounds the output tile of one SM. The SMs then
work on neighbouring output tiles at once, and the input panels they share are read from HBM
once and served from the **L2 cache** to each SM: what HBM sees is the intensity of that whole
block of tiles, not of one SM's tile (`gpu_tile_levels`). Counting one SM's tile against HBM,
with its accumulator in shared memory, put the H100 at about 31 % of its bf16 peak, against
the ~80 % a best-shape matmul measures.

    >>> import roofline.tiles as tiles
    >>> round(tiles.min_square_tile("TPU v5e"))                  # 2 x 240.5
    481
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .catalog import get_chip
from .dtypes import bytes_per_element
from .estimate import critical_intensity
from .hardware import Source
from .validate import check_size, is_symbolic

__all__ = [
    "OnChipMemory",
    "ON_CHIP_MEMORY",
    "on_chip_memory",
    "tile_intensity",
    "min_square_tile",
    "tile_bytes",
    "largest_square_tile",
    "ACCUMULATOR_REGISTER_SHARE",
    "GpuTileLevels",
    "gpu_tile_levels",
]


@dataclass(frozen=True)
class OnChipMemory:
    """A chip's on-chip memory for tiles: `bytes_per_unit` in each of `units` cores or SMs."""

    chip: str
    name: str
    bytes_per_unit: float
    units: int
    source: Source
    bandwidth_vs_hbm: float | None = None
    """How many times HBM bandwidth this memory feeds the matrix units, where published."""
    register_bytes_per_unit: float | None = None
    """GPUs: the register file of one SM (bytes), where the matmul accumulator lives."""
    cache_bytes: float | None = None
    """GPUs: the L2 cache shared by all SMs (bytes), through which SMs share input panels."""
    level_source: Source | None = None
    """Where the register-file and L2 figures come from."""

    @property
    def total_bytes(self) -> float:
        return self.bytes_per_unit * self.units


_KiB, _MiB = 2**10, 2**20
_SCALING_BOOK = "https://jax-ml.github.io/scaling-book/tpus/"
_HOPPER_TUNING = "https://docs.nvidia.com/cuda/hopper-tuning-guide/index.html"

#: On-chip memory of the chips whose figures are published, by catalog name.
ON_CHIP_MEMORY = {
    "TPU v5e": OnChipMemory(
        "TPU v5e",
        "VMEM",
        128 * _MiB,
        1,
        Source(
            _SCALING_BOOK,
            "VMEM (Vector Memory) is an on-chip scratchpad ... much smaller than HBM "
            "(for example, 128 MiB on TPU v5e); VMEM bandwidth is around 22x higher "
            "than HBM bandwidth (Google DeepMind, How to Scale Your Model, part 2)",
        ),
        bandwidth_vs_hbm=22,
    ),
    "H100 SXM": OnChipMemory(
        "H100 SXM",
        "shared memory",
        228 * _KiB,
        132,
        Source(
            _HOPPER_TUNING,
            "The NVIDIA H100 GPU supports shared memory capacities of 0, 8, 16, 32, 64, "
            "100, 132, 164, 196 and 228 KB per SM (KB = 1024 bytes); the H100 SXM5 has "
            "132 SMs (NVIDIA H100 Tensor Core GPU Architecture whitepaper)",
        ),
        register_bytes_per_unit=65536 * 4,
        cache_bytes=50 * 10**6,
        level_source=Source(
            _HOPPER_TUNING,
            "The register file size is 64K 32-bit registers per SM. (Hopper tuning guide); "
            "H100 SXM5: 50 MB L2 cache (NVIDIA H100 Tensor Core GPU Architecture whitepaper)",
            derivation="registers: 65,536 x 4 bytes = 256 KiB per SM; L2 taken as 50e6 bytes",
        ),
    ),
}

#: The share of an SM's register file a matmul's fp32 accumulator may take: an **assumption**.
#: CUTLASS's Hopper bf16 GEMMs keep a 128 x 256 fp32 accumulator per SM (two consumer warp
#: groups), 128 KiB, half the 256 KiB register file; the other half holds addresses, operand
#: fragments and the epilogue.
ACCUMULATOR_REGISTER_SHARE = 0.5


def on_chip_memory(chip) -> OnChipMemory:
    """The `OnChipMemory` record of a chip (a name or `Chip`); ValueError naming those known."""
    name = get_chip(chip).name
    if name not in ON_CHIP_MEMORY:
        raise ValueError(
            f"no on-chip memory figure for {name}; the book has one for "
            f"{', '.join(ON_CHIP_MEMORY)}. Pass the size yourself (bytes) where a "
            "function takes on_chip_bytes."
        )
    return ON_CHIP_MEMORY[name]


def tile_intensity(bm, bn, dtype="bf16"):
    """FLOPs per byte loaded from HBM by a tile loop with [bm, bn] output tiles.

    2*bm*bn / ((bm + bn) * bytes per element); bk cancels. bf16: bm*bn / (bm + bn).
    """
    check_size("bm", bm)
    check_size("bn", bn)
    return 2 * bm * bn / ((bm + bn) * bytes_per_element(dtype))


def min_square_tile(chip, dtype="bf16"):
    """The side t of the smallest square output tile whose loop is compute-bound from HBM.

    A square tile's intensity is t / (bytes per element); it must reach the ridge point,
    so t = (bytes per element) * ridge. bf16 on TPU v5e: 2 x 240.5 = 481.
    """
    return bytes_per_element(dtype) * critical_intensity(chip, dtype)


def tile_bytes(bm, bk, bn, dtype="bf16", accumulator="fp32", buffers=2):
    """On-chip bytes of one tile step: `buffers` copies of both input tiles and the accumulator.

    buffers * (bm*bk + bk*bn) * bytes per element + bm*bn * accumulator bytes. Two buffers
    (the default) let the next input tiles load while this step computes.
    """
    for name, value in (("bm", bm), ("bk", bk), ("bn", bn), ("buffers", buffers)):
        check_size(name, value)
    return buffers * (bm * bk + bk * bn) * bytes_per_element(dtype) + bm * bn * bytes_per_element(
        accumulator
    )


def largest_square_tile(
    on_chip_bytes, bk, dtype="bf16", accumulator="fp32", buffers=2, register_bytes=None
) -> int:
    """The largest square output tile side t that one core or SM can hold (0 if none fits).

    Without `register_bytes` the accumulator shares the memory with the input tiles (a TPU's
    VMEM): the largest t with tile_bytes(t, bk, t) <= on_chip_bytes, i.e. acc*t^2 +
    2*buffers*bk*(bytes per element)*t <= on_chip_bytes. With `register_bytes` (a GPU: the fp32
    accumulator lives in registers) shared memory holds only the input tiles,
    2*buffers*bk*(bytes per element)*t <= on_chip_bytes, and the accumulator must fit its share
    of the registers, acc*t^2 <= register_bytes. `on_chip_bytes` may be a chip name: its
    on-chip memory per core or SM, and on a GPU its register share
    (`ACCUMULATOR_REGISTER_SHARE` of the register file).
    """
    if isinstance(on_chip_bytes, str) or hasattr(on_chip_bytes, "peaks"):
        memory = on_chip_memory(on_chip_bytes)
        on_chip_bytes = memory.bytes_per_unit
        if register_bytes is None and memory.register_bytes_per_unit is not None:
            register_bytes = ACCUMULATOR_REGISTER_SHARE * memory.register_bytes_per_unit
    check_size("on_chip_bytes", on_chip_bytes)
    check_size("bk", bk)
    if is_symbolic(on_chip_bytes) or is_symbolic(bk):
        raise TypeError("largest_square_tile needs numbers (it rounds down to a whole tile side)")
    a = bytes_per_element(accumulator)
    b = 2 * buffers * bk * bytes_per_element(dtype)
    if register_bytes is not None:
        check_size("register_bytes", register_bytes)
        return max(0, min(int(on_chip_bytes // b), math.isqrt(int(register_bytes // a))))
    t = int(math.floor((-b + math.sqrt(b * b + 4 * a * on_chip_bytes)) / (2 * a)))
    while t > 0 and tile_bytes(t, bk, t, dtype, accumulator, buffers) > on_chip_bytes:
        t -= 1  # guard against rounding in the square root
    return max(t, 0)


@dataclass(frozen=True)
class GpuTileLevels:
    """A GPU matmul's tiles at each level (`gpu_tile_levels`): sides in elements, intensities
    in FLOPs per byte, the fraction of the dense peak the HBM roof allows."""

    sm_tile: int
    """Side of one SM's square output tile (accumulator in registers, inputs in shared memory)."""
    sms_per_side: int
    """SMs along each side of the square block of tiles computed at once."""
    block_tile: int
    """Side of that block: its input panels come from HBM once and reach each SM through L2."""
    sm_intensity: float
    """FLOPs per byte one SM loads (from L2 or HBM): tile_intensity(sm_tile, sm_tile)."""
    hbm_intensity: float
    """FLOPs per byte read from HBM: tile_intensity(block_tile, block_tile)."""
    fraction_of_peak: float
    """min(1, HBM roof at hbm_intensity / dense peak): an upper bound, not a prediction."""


def gpu_tile_levels(chip, bk=64, dtype="bf16") -> GpuTileLevels:
    """Registers, shared memory and L2 of a GPU matmul, and the HBM roof they leave.

    Assumptions: one square output tile per SM, its fp32 accumulator in
    `ACCUMULATOR_REGISTER_SHARE` of the register file and two buffers of [t, bk] input tiles in
    shared memory (`largest_square_tile`); the SMs run a square block of
    floor(sqrt(SMs)) x floor(sqrt(SMs)) neighbouring tiles at once (a swizzled launch order),
    whose shared input panels are read from HBM once and served to the SMs from L2 (the
    panels, two buffers of [block, bk] each for the inputs, must fit in L2). The L2-to-SM
    bandwidth is not published, so the SM level's own roof is not checked.

    >>> levels = gpu_tile_levels("H100 SXM")
    >>> levels.sm_tile, levels.block_tile, round(levels.fraction_of_peak, 2)
    (181, 1991, 1.0)
    """
    from .estimate import attainable_flops_per_s

    memory = on_chip_memory(chip)
    if memory.register_bytes_per_unit is None or memory.cache_bytes is None:
        raise ValueError(
            f"{memory.chip} has no register-file and L2 figures in tiles.ON_CHIP_MEMORY; "
            "gpu_tile_levels is for GPUs (use largest_square_tile for a TPU's VMEM)"
        )
    t = largest_square_tile(chip, bk, dtype)
    per_side = math.isqrt(memory.units)
    panels = 2 * 2 * bk * bytes_per_element(dtype)  # two buffers of two panels, per element
    while per_side > 1 and panels * per_side * t > memory.cache_bytes:
        per_side -= 1
    block = per_side * t
    hbm_intensity = tile_intensity(block, block, dtype)
    peak = get_chip(chip).peak_flops_per_s(dtype)
    roof = attainable_flops_per_s(hbm_intensity, chip, dtype)
    return GpuTileLevels(
        sm_tile=t,
        sms_per_side=per_side,
        block_tile=block,
        sm_intensity=tile_intensity(t, t, dtype),
        hbm_intensity=hbm_intensity,
        fraction_of_peak=min(1.0, roof / peak),
    )
