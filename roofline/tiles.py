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
    ),
}


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


def largest_square_tile(on_chip_bytes, bk, dtype="bf16", accumulator="fp32", buffers=2) -> int:
    """The largest side t with tile_bytes(t, bk, t) <= on_chip_bytes (0 if none fits).

    Solves acc*t^2 + 2*buffers*bk*(bytes per element)*t = on_chip_bytes for t, rounds down.
    `on_chip_bytes` may be a chip name: its on-chip memory per core or SM.
    """
    if isinstance(on_chip_bytes, str) or hasattr(on_chip_bytes, "peaks"):
        on_chip_bytes = on_chip_memory(on_chip_bytes).bytes_per_unit
    check_size("on_chip_bytes", on_chip_bytes)
    check_size("bk", bk)
    if is_symbolic(on_chip_bytes) or is_symbolic(bk):
        raise TypeError("largest_square_tile needs numbers (it rounds down to a whole tile side)")
    a = bytes_per_element(accumulator)
    b = 2 * buffers * bk * bytes_per_element(dtype)
    t = int(math.floor((-b + math.sqrt(b * b + 4 * a * on_chip_bytes)) / (2 * a)))
    while t > 0 and tile_bytes(t, bk, t, dtype, accumulator, buffers) > on_chip_bytes:
        t -= 1  # guard against rounding in the square root
    return max(t, 0)
