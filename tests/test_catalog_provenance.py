"""Figures as printed (issue 24 item 4), vector roofs on every chip (item 1) and achievable
rates (item 2). Expected values are the vendors' and the publications' figures typed here by
hand, or arithmetic done here, never read from the code under test."""

import pytest

import roofline as rl
from roofline.hardware import Source

CHIPS = rl.list_chips()


def _sources(chip):
    out = [p.source for p in chip.peaks] + [chip.memory_source]
    out += [link.source for link in (chip.interconnect, chip.host_link) if link is not None]
    return out


@pytest.mark.parametrize("name", CHIPS)
def test_no_shipped_chip_holds_a_placeholder(name):
    for source in _sources(rl.get_chip(name)):
        assert source.verified, f"{name}: unverified placeholder {source}"


@pytest.mark.parametrize("name", CHIPS)
def test_says_holds_no_arithmetic_of_the_books_own(name):
    # the per-GPU division and "=" working belong in `derivation`, not in the quote
    for p in rl.get_chip(name).peaks:
        assert ", i.e. " not in p.source.says and " = " not in p.source.says, p.source


def test_amd_sparse_figures_are_stored_as_printed():
    # AMD prints 1,307.4 dense and 2,614.9 with structured sparsity (not 2 x 1,307.4 = 2,614.8)
    for name in ("MI300X", "MI325X"):
        peak = rl.get_chip(name).peak("bf16")
        assert peak.dense_flops_per_s == 1307.4e12
        assert peak.sparse_flops_per_s == 2614.9e12
        assert peak.source.derivation == ""  # both printed: nothing derived
        assert "Structured Sparsity" in peak.source.says and "2x" not in peak.source.says


def test_derived_figures_say_how():
    h100 = rl.get_chip("H100 SXM").peak("bf16")
    # NVIDIA prints only 1,979 "with sparsity": the dense 989.5 is derived
    assert h100.dense_flops_per_s == 1979e12 / 2 and "/ 2" in h100.source.derivation
    b200 = rl.get_chip("B200").peak("bf16")
    # HGX B200 prints 36 PFLOPS for 8 GPUs, with sparsity: 36 / 8 / 2 = 2.25 PFLOP/s dense
    assert b200.dense_flops_per_s == pytest.approx(36e15 / 8 / 2)
    assert "/ 8" in b200.source.derivation and "/ 2" in b200.source.derivation
    a100 = rl.get_chip("A100 SXM").peak("bf16")  # the datasheet prints "312 TFLOPS | 624"
    assert a100.source.derivation == ""


def test_a_placeholder_is_marked_and_derived_reads_the_derivation():
    assert not Source("https://example.org", "to check", verified=False).verified
    assert Source("https://example.org", "x", derivation="x / 2").derived
    assert not Source("https://example.org", "x").derived


# the bf16 (fp16 on the T4) vector peak of every chip, TFLOP/s, and how it follows
VECTOR_TFLOPS = {
    "A100 SXM": 39,  # Ampere whitepaper: "Peak BF16 (non-Tensor) 39"
    "A100 SXM 40GB": 39,  # the same GA100 at the same clocks as the 80GB
    "L40S": 91.6,  # Ada: bf16 non-Tensor = FP32 91.6
    "H100 SXM": 133.8,  # Hopper whitepaper: "Peak BF16 (non-Tensor) 133.8"
    "H200": 133.8,  # the H100 SXM's die at the same clocks
    "H100 PCIe": 2 * 51,  # twice its FP32 51 TFLOPS, as 133.8 = 2 x 66.9 on the SXM5
    # Blackwell runs bf16 as packed pairs on its CUDA cores, twice fp32, as Hopper does
    # (133.8 = 2 x 66.9): 2 x FP32 600 TFLOPS / 8 GPUs and 2 x 5,760 / 72
    "B200": 2 * 600 / 8,
    "GB200": 2 * 5760 / 72,
    "MI300X": 163.4,  # FP32 vector
    "MI325X": 163.4,
    "MI355X": 157.3,
    "RTX 3090": 35.6,
    "RTX 4090": 82.6,
    "RTX 5090": 104.8,  # GeForce: bf16 non-Tensor = FP32
    "T4": 2 * 8.1,  # fp16: Turing runs packed fp16 pairs (HFMA2), twice its fp32 8.1
    "L4": 30.3,  # Ada: bf16 non-Tensor = FP32
    "TPU v5p": 7,  # the scaling book's "roughly 7e12"
    "TPU v4": 7 * 275 / 459,  # scaled by the MXU peaks
    "TPU v5e": 7 * 197 / 459,
    "TPU v6e": 7 * 918 / 459,
    "TPU7x": 7 * 2307 / 459,
}


#: Chips whose vendor prints no vector-unit rate at all (AWS prints Trainium2's tensor-engine
#: figures only): estimates of vector work fall back to the matrix roof and say so.
NO_VECTOR_FIGURE = {"Trainium2"}


def test_every_chip_has_a_vector_roof():
    assert set(VECTOR_TFLOPS) == set(CHIPS) - NO_VECTOR_FIGURE
    for name, tflops in VECTOR_TFLOPS.items():
        chip = rl.get_chip(name)
        peak = chip.peak(chip.main_dtype, unit="vector")
        assert peak.dense_flops_per_s == pytest.approx(tflops * 1e12), name
        assert peak.source.secondary == name.startswith("TPU"), name


def test_a_dot_product_is_memory_bound_on_every_chip_on_its_vector_roof():
    # intensity of a long bf16 dot: 2N FLOPs / 4N bytes = 1/2; every vector ridge is above it
    for name in CHIPS:
        chip = rl.get_chip(name)
        est = rl.estimate(rl.dot(10**9, chip.main_dtype), chip)
        assert est.bound == "memory", name
        assert est.peak_unit == "vector" or name in NO_VECTOR_FIGURE, name


def test_ten_flops_per_element_is_vector_bound_on_tpu_v5p():
    # elementwise bf16, 1 input and 1 output: 4 bytes per element. 10 FLOPs/element is an
    # intensity of 2.5 FLOPs/B; the v5p VPU ridge is 7e12 / 2.765e12 = 2.53 FLOPs/B: just below
    # it (memory-bound by a hair); 12 FLOPs/element (3 FLOPs/B) is VPU-bound.
    assert 7e12 / 2.765e12 == pytest.approx(2.53, abs=0.01)
    one_in_one_out = {"inputs": 1, "outputs": 1}
    ten = rl.estimate(rl.elementwise(10**8, flops_per_element=10, **one_in_one_out), "TPU v5p")
    twelve = rl.estimate(rl.elementwise(10**8, flops_per_element=12, **one_in_one_out), "TPU v5p")
    assert ten.t_math == pytest.approx(10 * 1e8 / 7e12)
    assert ten.t_math / ten.t_comms == pytest.approx(2.5 / (7e12 / 2.765e12))  # 0.99: balanced
    assert twelve.bound == "compute"
    # against the matrix peak (the old fallback) it would look 66x further from compute-bound
    assert rl.critical_intensity("TPU v5p", "bf16") / rl.critical_intensity(
        "TPU v5p", "bf16", unit="vector"
    ) == pytest.approx(459 / 7)


def test_block_scaled_fp4_carries_its_scales():
    # NVFP4: 16 four-bit values share one 8-bit scale; MXFP4: 32 share one
    assert rl.bytes_per_element("nvfp4") == (16 * 4 + 8) / 8 / 16 == 0.5625
    assert rl.bytes_per_element("mxfp4") == (32 * 4 + 8) / 8 / 32 == 0.53125
    assert rl.bytes_per_element("fp4") == 0.5
    # their math runs at the fp4 tensor rate: B200 FP4 144 PFLOPS* for 8 GPUs, halved
    assert rl.get_chip("B200").peak_flops_per_s("nvfp4") == pytest.approx(144e15 / 8 / 2)


def test_tpu_pcie_as_the_scaling_book_prints_it():
    assert rl.get_chip("TPU v4").host_bytes_per_s == 16e9  # "16GB / second each way"
    assert rl.get_chip("TPU v5e").host_bytes_per_s == 1.5e10  # "around `1.5e10`"
    assert rl.get_chip("TPU v6e").host_bytes_per_s == 32e9  # "32GB/s"


def test_tpu7x_memory_is_192_gib():
    assert rl.get_chip("TPU7x").hbm_bytes == 192 * 2**30
    assert "GiB" in rl.get_chip("TPU7x").memory_source.says


def test_mi355x_links_are_faster_than_mi300x():
    # AMD: 153.6 GB/s per Infinity Fabric link on MI355X, 128 GB/s on MI300X (both directions)
    assert rl.get_chip("MI355X").link_bytes_per_s == pytest.approx(153.6e9 / 2)
    assert rl.get_chip("MI300X").link_bytes_per_s == pytest.approx(128e9 / 2)


# -- peak and achievable ------------------------------------------------------------
def test_efficiencies_scale_their_own_roof():
    op = rl.matmul(4096, 8192, 8192)
    full = rl.estimate(op, "H100 SXM")
    real = rl.estimate(op, "H100 SXM", efficiency=0.8, bandwidth_efficiency=0.5)
    assert real.t_math == pytest.approx(full.t_math / 0.8)
    assert real.t_comms == pytest.approx(full.t_comms / 0.5)
    with pytest.raises(ValueError, match="fraction"):
        rl.estimate(op, "H100 SXM", bandwidth_efficiency=1.2)


def test_published_fractions_and_achieved_ridges():
    ach = rl.achievable
    # stas00: 794.5 TFLOP/s of 989.5 on H100; 271.2 of 312 on A100
    assert ach.matmul_efficiency("H100") == pytest.approx(0.803, abs=0.001)
    assert ach.matmul_efficiency("A100") == pytest.approx(0.869, abs=0.001)
    # BabelStream triad 2.97 TB/s of 3.35 on H100
    assert ach.hbm_efficiency("H100") == pytest.approx(0.887, abs=0.001)
    # achieved ridge = 794.5e12 / 2.97e12 = 267.5 FLOPs/B, beside the spec 295.4
    assert ach.achieved_ridge("H100") == pytest.approx(794.5 / 2.97)
    assert rl.critical_intensity("H100", efficiency=0.5, bandwidth_efficiency=0.25) == (
        pytest.approx(2 * 989.5e12 / 3.35e12)
    )
    with pytest.raises(ValueError, match="no published"):
        ach.matmul_efficiency("TPU v5e")


def test_a_tiny_kernel_is_overhead_bound():
    # 1,000 bf16 elements, 2 in and 1 out: 6 kB from HBM is 1.8 ns on an H100; a 5 µs launch dominates
    est = rl.estimate(rl.elementwise(1000), "H100", overhead_s=5e-6)
    assert est.bound == "overhead" and est.slowest == "overhead"
    assert est.t_lower == pytest.approx(5e-6 + 6000 / 3.35e12)
    big = rl.estimate(rl.elementwise(10**9), "H100", overhead_s=5e-6)
    assert big.bound == "memory"
    assert rl.estimate(rl.elementwise(1000), "H100").bound == "memory"  # no overhead by default
    with pytest.raises(ValueError, match="overhead_s"):
        rl.estimate(rl.elementwise(10), "H100", overhead_s=-1)
