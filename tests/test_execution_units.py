"""Matrix vs vector units and achievable peak: the catalog, the costs and `estimate`, checked
against the vendors' figures typed in here by hand (not read from the code under test)."""

import pytest
import sympy

import roofline as rl

H100_TENSOR_BF16, H100_CUDA_BF16, H100_CUDA_FP32, H100_HBM = 1979e12 / 2, 133.8e12, 67e12, 3.35e12


def test_h100_has_two_bf16_peaks_and_two_ridges():
    h100 = rl.get_chip("H100 SXM")
    assert h100.peak_flops_per_s("bf16") == pytest.approx(H100_TENSOR_BF16)
    assert h100.peak_flops_per_s("bf16", unit="vector") == pytest.approx(H100_CUDA_BF16)
    assert h100.peak("fp32").unit == "vector"  # NVIDIA's FP32 is a CUDA-core figure
    assert rl.critical_intensity(h100, "bf16", unit="vector") == pytest.approx(
        H100_CUDA_BF16 / H100_HBM
    )
    assert rl.critical_intensity(h100, "fp32") == pytest.approx(20, rel=0.01)  # "a ridge near 20"
    assert "non-Tensor" in h100.peak("bf16", unit="vector").source.says


def test_costs_know_their_unit_and_estimate_takes_its_peak():
    assert rl.matmul(8, 8, 8).unit == "matrix" and rl.dot(8).unit == "vector"
    assert rl.elementwise(8).unit == "vector" and rl.Cost("x", 1, 1).unit is None
    N = 10**9
    est = rl.estimate(rl.dot(N), "H100 SXM")
    assert est.peak_unit == "vector"
    assert est.t_math == pytest.approx((2 * N - 1) / H100_CUDA_BF16)
    assert est.t_comms == pytest.approx((2 * N + 1) * 2 / H100_HBM)
    mm = rl.estimate(rl.matmul(256, 8192, 8192), "H100 SXM")
    assert mm.peak_unit == "matrix" and mm.t_math == pytest.approx(
        2 * 256 * 8192**2 / H100_TENSOR_BF16
    )


def test_no_vector_figure_for_a_dtype_falls_back_to_the_matrix_peak_and_says_so():
    # NVIDIA prints no fp8 figure for the CUDA cores: an fp8 elementwise op gets the tensor
    # peak (1,979 TFLOP/s dense, half of the printed 3,958 with sparsity), a looser bound
    est = rl.estimate(rl.elementwise(10**6, "fp8"), "H100 SXM")
    assert est.peak_flops_per_s == pytest.approx(3958e12 / 2)
    assert est.peak_unit.startswith("matrix") and "no vector figure" in est.peak_unit
    with pytest.raises(ValueError, match="no vector fp8 figure"):
        rl.get_chip("H100").peak("fp8", unit="vector")
    with pytest.raises(ValueError, match="unit must be one of"):
        rl.get_chip("H100").peak("bf16", unit="tensor")


def test_tpu_dot_product_uses_the_scaling_books_vpu_estimate():
    # "The TPU v5p VPU can do roughly 7e12 FLOPs / second" (scaling book, roofline.md)
    est = rl.estimate(rl.dot(10**6), "TPU v5p")
    assert est.peak_flops_per_s == pytest.approx(7e12) and est.peak_unit == "vector"
    assert rl.get_chip("TPU v5p").peak("bf16", unit="vector").source.secondary


def test_elementwise_activation_needs_about_160_flops_per_element_on_h100():
    k = sympy.symbols("k", positive=True)
    act = rl.elementwise(
        sympy.Symbol("N", positive=True), "bf16", flops_per_element=k, inputs=1, outputs=1
    )
    needed = sympy.solve(
        sympy.Eq(act.intensity, rl.critical_intensity("H100 SXM", "bf16", unit="vector")), k
    )[0]
    assert float(needed) == pytest.approx(4 * H100_CUDA_BF16 / H100_HBM)  # 2 bytes in + 2 bytes out
    assert 150 < float(needed) < 170


def test_rtx_3090_vector_ridge_is_half_its_tensor_ridge():
    chip = rl.get_chip("RTX 3090")
    assert rl.critical_intensity(chip, "bf16", unit="vector") == pytest.approx(35.6e12 / 936e9)
    assert rl.critical_intensity(chip, "bf16") == pytest.approx(71e12 / 936e9)


def test_efficiency_scales_the_peak_only():
    op = rl.matmul(4096, 8192, 8192)
    full, real = rl.estimate(op, "H100 SXM"), rl.estimate(op, "H100 SXM", efficiency=0.8)
    assert real.t_math == pytest.approx(full.t_math / 0.8) and real.t_comms == full.t_comms
    for bad in (0, 1.5, -0.1, True, "80%"):
        with pytest.raises(ValueError, match="fraction of the datasheet rate"):
            rl.estimate(op, "H100 SXM", efficiency=bad)
