"""roofline.tiles (issue 16, item 6, the tile part), against hand derivations."""

import math

import pytest
import sympy

import roofline as rl
import roofline.tiles as tiles


def test_tile_intensity_by_hand_and_bk_cancels():
    # 512 x 512 output tiles in bf16: 2 * 512 * 512 * bk FLOPs over (512 + 512) * bk * 2 bytes = 256
    assert tiles.tile_intensity(512, 512) == 256
    assert tiles.tile_intensity(128, 256) == pytest.approx(2 * 128 * 256 / (384 * 2))  # 85.33
    assert tiles.tile_intensity(512, 512, "int8") == 512
    for bk in (1, 64, 4096):
        assert rl.tiled_matmul(512, bk, 512).intensity == pytest.approx(256)
    bm, bk, bn = sympy.symbols("b_m b_k b_n", positive=True)
    assert sympy.simplify(rl.tiled_matmul(bm, bk, bn).intensity - bm * bn / (bm + bn)) == 0
    assert sympy.simplify(tiles.tile_intensity(bm, bn) - bm * bn / (bm + bn)) == 0


def test_smallest_compute_bound_square_tile():
    # t / 2 = ridge: TPU v5e 2 * 197e12 / 819e9 = 481.07; H100 SXM 2 * 989.5e12 / 3.35e12 = 590.75
    assert tiles.min_square_tile("TPU v5e") == pytest.approx(2 * 197e12 / 819e9)
    assert tiles.min_square_tile("H100 SXM") == pytest.approx(590.746, abs=1e-3)
    t = tiles.min_square_tile("TPU v5e")
    assert rl.estimate(rl.tiled_matmul(0.99 * t, 512, 0.99 * t), "TPU v5e").bound == "memory"
    assert rl.estimate(rl.tiled_matmul(1.01 * t, 512, 1.01 * t), "TPU v5e").bound == "compute"


def test_tile_bytes_and_the_largest_tile_that_fits():
    # two buffers of two 512 x 512 bf16 input tiles (2 MiB) + a 512 x 512 fp32 accumulator (1 MiB)
    assert tiles.tile_bytes(512, 512, 512) == 2 * 2 * 512 * 512 * 2 + 512 * 512 * 4 == 3 * 2**20
    assert tiles.tile_bytes(512, 512, 512, buffers=1, accumulator="bf16") == 3 * 512 * 512 * 2
    # 128 MiB of VMEM, bk = 512: 4 t^2 + 4096 t <= 134,217,728 -> t = 5303.2
    by_hand = (-4096 + math.sqrt(4096**2 + 16 * 128 * 2**20)) / 8
    assert math.floor(by_hand) == 5303
    assert tiles.largest_square_tile("TPU v5e", 512) == 5303
    assert tiles.tile_bytes(5303, 512, 5303) <= 128 * 2**20 < tiles.tile_bytes(5304, 512, 5304)
    assert tiles.largest_square_tile(1000, 512) == 0  # not even a 1 x 1 tile fits 1000 bytes


def test_on_chip_memory_figures_have_sources_and_unknown_chips_say_what_to_do():
    vmem = tiles.on_chip_memory("TPU v5e")
    assert vmem.bytes_per_unit == 128 * 2**20 and "128 MiB" in vmem.source.says
    smem = tiles.on_chip_memory("H100 SXM")
    assert smem.bytes_per_unit == 228 * 1024 and smem.units == 132 and "228 KB" in smem.source.says
    assert smem.source.url.startswith("https://docs.nvidia.com/")
    with pytest.raises(ValueError, match="on_chip_bytes"):
        tiles.on_chip_memory("A100 SXM")


def test_tile_exercise_against_a_hand_derivation():
    from roofline.exercises import check

    # MI300X: "Peak BF16: 1307.4 TFLOPs" (dense), "peak memory bandwidth 5.3 TB/s"; t / 2 = ridge
    assert check("problems-min-square-tile", 2 * 1307.4e12 / 5.3e12).correct
    wrong = check("problems-min-square-tile", 1307.4e12 / 5.3e12)
    assert not wrong.correct and "ridge point itself" in wrong.diagnosis


def test_gpu_accumulator_in_registers_and_l2_as_a_level():
    # Issue 30: with the fp32 accumulator in shared memory and one SM's tile read from HBM, the
    # H100 came out at ~31 % of peak: 228 KiB = 233,472 B, bk = 64: 4 t^2 + 512 t <= 233,472
    # -> t = 185, intensity 92.5, roof 92.5 x 3.35e12 = 309.9 TFLOP/s = 31.3 % of 989.5
    old_t = tiles.largest_square_tile(228 * 1024, 64)
    assert old_t == 185
    old = rl.attainable_flops_per_s(tiles.tile_intensity(old_t, old_t), "H100 SXM")
    assert old / 989.5e12 == pytest.approx(0.313, abs=0.001)
    # accumulator in registers: half of 64K x 4 B = 131,072 B of fp32 -> t = isqrt(32,768) = 181;
    # shared memory holds 2 buffers x (t + t) x 64 x 2 B = 512 t = 92,672 B <= 233,472
    assert tiles.largest_square_tile("H100 SXM", 64) == 181
    levels = tiles.gpu_tile_levels("H100 SXM", 64)
    # 132 SMs: an 11 x 11 block of tiles, side 11 x 181 = 1991; its panels 4 x 1991 x 64 x 2 B
    # = 1.0 MB fit the 50 MB L2; HBM intensity 1991 / 2 = 995.5 FLOPs/B > ridge 295.4
    assert (levels.sm_tile, levels.sms_per_side, levels.block_tile) == (181, 11, 1991)
    assert levels.sm_intensity == pytest.approx(90.5)
    assert levels.hbm_intensity == pytest.approx(995.5)
    assert levels.fraction_of_peak == 1.0
    # an upper bound again: at or above the measured best-shape matmul (794.5 / 989.5 = 0.80)
    from roofline.achievable import matmul_efficiency

    assert levels.fraction_of_peak >= matmul_efficiency("H100 SXM") > 0.79
    with pytest.raises(ValueError, match="largest_square_tile"):
        tiles.gpu_tile_levels("TPU v5e")
    # a number still means the accumulator shares the memory (the TPU's VMEM case)
    assert tiles.largest_square_tile(128 * 2**20, 512) == 5303
