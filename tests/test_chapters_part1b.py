"""Claims of chapters 4 (matmul, critical batch) and 5 (reading a spec sheet).

Each test recomputes a claim the chapters make from an independent route: the vendor's
words stored in the catalog (`Source.says`, parsed here), a hand derivation written
differently from the package's, or sympy against plain numbers.
"""

import math
import re
from pathlib import Path

import pytest
import sympy

import roofline as rl
from roofline.exercises import check

ROOT = Path(__file__).resolve().parent.parent
CHAPTER_4 = ROOT / "chapters" / "04_matmul_critical_batch.md"
CHAPTER_5 = ROOT / "chapters" / "05_reading_a_spec_sheet.md"

B, D, F = sympy.symbols("B D F", positive=True)


# ---------------------------------------------------------------- helpers: read the vendor's words
def _number(text: str) -> float:
    return float(text.replace(",", ""))


def dense_from_says(chip_name: str, dtype: str, accumulate: str | None = None) -> float:
    """Dense FLOP/s as the vendor's own sentence gives it (halving a sparse-only figure)."""
    peak = rl.get_chip(chip_name).peak(dtype, accumulate)
    says = peak.source.says
    table_cell = re.search(r"\| (\d(?:\.\d+)?e\d+)$", says)  # "... | FLOPs/s/chip (int8) | 3.94e14"
    if table_cell:
        return float(table_cell.group(1))
    pair = re.search(r"([\d.,]+)/([\d.,]+) \(dense/sparse\)", says)
    if pair:
        return _number(pair.group(1)) * 1e12
    starred = re.search(r"([\d.,]+) (teraFLOPS|TFLOPS|TOPS|PFLOPS|POPS)\*", says)
    if starred and "1/2 lower without sparsity" in says:
        scale = 1e15 if starred.group(2).startswith("P") else 1e12
        return _number(starred.group(1)) * scale / 2 / _gpus_in_system(says)
    plain = re.search(r":\s*([\d.,]+) (?:TFLOPs|TOPs|TFLOPS|teraFLOPS)", says)
    assert plain, f"cannot read a figure from {says!r}"
    return _number(plain.group(1)) * 1e12


def _gpus_in_system(says: str) -> int:
    """A system sheet ("HGX B200 (8 GPUs)", "GB200 NVL72 (72 GPUs)") gives totals: per GPU
    is the total over this count (1 for a single-GPU sheet)."""
    system = re.search(r"\((\d+) GPUs\)", says)
    return int(system.group(1)) if system else 1


def bandwidth_from_says(chip_name: str) -> float:
    chip = rl.get_chip(chip_name)
    says = chip.memory_source.says
    # a table row quoted with its cells: "HBM bandwidth per chip (GBps) | 2765 | 1638 | 7380";
    # the derivation names the column ("1638 GBps = 1638e9 bytes/s")
    if "HBM bandwidth per chip (GBps) |" in says:
        cell = re.search(r"([\d.]+) GBps = ", chip.memory_source.derivation)
        assert cell and cell.group(1) in says, says
        return _number(cell.group(1)) * 1e9
    if "Total Memory" in says:  # a system total: the derivation divides it ("62 TB/s / 8")
        total = re.search(r"Memory Bandwidth ([\d.]+)TB/s", says)
        assert total, says
        return _number(total.group(1)) * 1e12 / _gpus_in_system(says)
    # per-GPU figure where the sheet quotes a whole system ("62TB/s (7.7 TB/s each)")
    match = re.search(r"([\d.,]+) ?(GBps|GB/s|GB/sec|TB/s) each", says) or re.search(
        r"([\d.,]+) ?(GBps|GB/s|GB/sec|TB/s)", says
    )
    assert match, f"cannot read a bandwidth from {says!r}"
    scale = 1e12 if match.group(2) == "TB/s" else 1e9
    per_gpu = 1 if "each" in match.group(0) else _gpus_in_system(says)
    return _number(match.group(1)) * scale / per_gpu


# ---------------------------------------------------------------- chapter 4: formulas
def test_flops_relative_difference_is_one_over_2d_symbolically_and_numerically():
    relative = sympy.simplify(
        (rl.matmul(B, D, F).flops - rl.matmul_exact_flops(B, D, F)) / rl.matmul(B, D, F).flops
    )
    assert sympy.simplify(relative - 1 / (2 * D)) == 0
    for b, d, f in ((1, 1, 1), (3, 7, 5), (128, 4096, 1024)):
        # count the adds and multiplies by hand: b*f outputs, d multiplies, d-1 adds each
        by_hand = b * f * (d + (d - 1))
        assert rl.matmul_exact_flops(b, d, f) == by_hand
        assert (2 * b * d * f - by_hand) / (2 * b * d * f) == pytest.approx(1 / (2 * d))


def test_bf16_intensity_reciprocal_is_sum_of_reciprocals_and_tends_to_b():
    intensity = rl.matmul(B, D, F).intensity
    assert sympy.simplify(1 / intensity - (1 / B + 1 / D + 1 / F)) == 0
    assert sympy.limit(sympy.limit(intensity, D, sympy.oo), F, sympy.oo) == B
    # numbers: huge D, F give intensity ~ B
    assert rl.matmul(128, 10**8, 10**8).intensity == pytest.approx(128, rel=1e-5)
    # int8 weights with bf16 activations/output: the limit is 2B
    mixed = rl.matmul(B, D, F, dtype="bf16", weights="int8")
    assert sympy.expand(mixed.bytes - (2 * B * D + D * F + 2 * B * F)) == 0
    assert sympy.limit(sympy.limit(mixed.intensity, D, sympy.oo), F, sympy.oo) == 2 * B


@pytest.mark.parametrize("chip", ["TPU v5e", "H100 SXM", "RTX 3090", "MI300X"])
@pytest.mark.parametrize("size", [2048, 4096, 16384])
def test_exact_crossover_sympy_matches_package_and_balances_times(chip, size):
    ridge = sympy.Symbol("r", positive=True)
    solution = sympy.solve(sympy.Eq(rl.matmul(B, D, F).intensity, ridge), B)
    assert len(solution) == 1
    ridge_value = rl.critical_intensity(chip, "bf16")
    by_sympy = float(solution[0].subs({ridge: ridge_value, D: size, F: size}))
    by_package = rl.exact_critical_batch_size(chip, size, size, "bf16")
    if 2 * size <= 2 * ridge_value:  # no crossover: D <= 2 I*
        assert math.isinf(by_package)
        return
    assert by_package == pytest.approx(by_sympy, rel=1e-9)
    est = rl.estimate(rl.matmul(by_package, size, size), chip)
    assert est.t_math == pytest.approx(est.t_comms, rel=1e-9)
    assert by_package > rl.critical_batch_size(chip, "bf16")


def test_exact_approaches_approximation_as_d_grows():
    approx = rl.critical_batch_size("TPU v5e", "bf16")
    gaps = [
        rl.exact_critical_batch_size("TPU v5e", d, d) - approx for d in (1024, 4096, 16384, 65536)
    ]
    assert all(g > 0 for g in gaps)
    assert gaps == sorted(gaps, reverse=True)
    assert gaps[-1] / approx < 0.02


def test_v6e_d1024_is_bandwidth_bound_at_every_batch():
    assert math.isinf(rl.exact_critical_batch_size("TPU v6e", 1024, 1024))
    for batch in (256, 4096, 10**7):
        assert rl.estimate(rl.matmul(batch, 1024, 1024), "TPU v6e").bound == "memory"
    # the threshold D = 2 I*: just above it a crossover exists
    d = math.ceil(2 * rl.critical_intensity("TPU v6e", "bf16")) + 1
    assert math.isfinite(rl.exact_critical_batch_size("TPU v6e", d, d))


def test_int8_weights_approx_is_about_120_but_exact_at_1024_is_much_higher():
    peak = dense_from_says("TPU v5e", "bf16")
    bw = bandwidth_from_says("TPU v5e")
    approx = rl.critical_batch_size("TPU v5e", "bf16", weights="int8")
    assert approx == pytest.approx(peak / bw / 2, rel=1e-9)
    assert round(approx / 10) * 10 == 120
    exact = rl.exact_critical_batch_size("TPU v5e", 1024, 1024, "bf16", weights="int8")
    # hand derivation: 2BDF/P = (2BD + DF + 2BF)/W  =>  B = DF / (2DF W/P - 2D - 2F)
    d = f = 1024
    by_hand = d * f / (2 * d * f * bw / peak - 2 * d - 2 * f)
    assert exact == pytest.approx(by_hand, rel=1e-9)
    assert exact > 1.8 * approx
    # full int8 (math on the int8 peak, 1-byte operands): back to ~240
    assert rl.critical_batch_size("TPU v5e", "int8") == pytest.approx(
        dense_from_says("TPU v5e", "int8") / bw / 2, rel=1e-9
    )


# ---------------------------------------------------------------- Q3 and the "240 / 300" slips
def test_q3_rtx3090_dense_fp32_accumulate_is_about_76_and_fp16_accumulate_about_152():
    bw = bandwidth_from_says("RTX 3090")
    train = rl.critical_batch_size("RTX 3090", "bf16")
    assert train == pytest.approx(dense_from_says("RTX 3090", "bf16") / bw, rel=1e-9)
    assert round(train) == 76
    chip = rl.get_chip("RTX 3090")
    fp16_acc = chip.peak_flops_per_s("fp16", accumulate="fp16") / chip.hbm_bytes_per_s
    assert fp16_acc == pytest.approx(dense_from_says("RTX 3090", "fp16", "fp16") / bw, rel=1e-9)
    assert round(fp16_acc) == 152
    assert fp16_acc == pytest.approx(2 * train, rel=1e-9)


def test_q3_the_quoted_286_overstates_it():
    chip = rl.get_chip("RTX 3090")
    quoted = 268e12
    assert round(quoted / bandwidth_from_says("RTX 3090")) == 286
    sparse_fp16_acc = chip.peak_flops_per_s("fp16", sparse=True, accumulate="fp16")
    says = chip.peak("fp16", "fp16").source.says
    assert sparse_fp16_acc == pytest.approx(
        _number(re.search(r"/([\d.]+) \(dense/sparse\)", says).group(1)) * 1e12
    )
    assert abs(quoted / sparse_fp16_acc - 1) < 0.06  # "close to the sparse FP16-accumulate figure"
    ratio = quoted / chip.peak_flops_per_s("bf16")
    assert 2 < ratio < 4  # "2x to 4x the dense rate a bf16 matmul gets"
    # the exercise transfers it to the RTX 4090 (D = F = 8192, exact crossover) and diagnoses
    # the FP32-accumulate slip: ridge 165.2e12 / 1008e9 instead of 330.3e12 / 1008e9
    slow = 165.2e12 / 1008e9
    feedback = check("matmul-exact-critical-rtx4090-fp16acc", slow / (1 - 2 * slow / 8192))
    assert not feedback.correct and "accumulate" in feedback.message


@pytest.mark.parametrize(
    "chip,expected",
    [
        ("TPU v5e", 240),
        ("TPU v5p", 166),
        ("TPU v6e", 560),
        ("H100 SXM", 295),
        ("B200", 292),
        ("H200", 206),
        ("A100 SXM", 153),
    ],
)
def test_critical_batch_slips_240_is_v5e_and_300_is_h100_b200(chip, expected):
    by_says = dense_from_says(chip, "bf16") / bandwidth_from_says(chip)
    value = rl.critical_batch_size(chip, "bf16")
    assert value == pytest.approx(by_says, rel=2e-3)
    assert value == pytest.approx(expected, rel=0.01)


def test_every_catalog_chip_has_a_critical_batch_in_its_main_dtype():
    for name in rl.list_chips():
        chip = rl.get_chip(name)
        dtype = "bf16" if "bf16" in chip.dtypes else "fp16"
        value = rl.critical_batch_size(chip, dtype)
        assert value == pytest.approx(chip.peak(dtype).dense_flops_per_s / chip.hbm_bytes_per_s)
        assert 20 < value < 2000
    assert "bf16" not in rl.get_chip("T4").dtypes


@pytest.mark.parametrize(
    "exercise,value",
    [
        # 1/(2D) <= 0.0002  =>  D >= 2500
        ("matmul-flops-error-threshold", 2500),
        # fp8 X and W (1 byte), bf16 Y (2 bytes), fp32 accumulator never written
        ("matmul-intensity-fp8-bf16-out", 2 * B * D * F / (B * D + D * F + 2 * B * F)),
        # int8 weights, bf16 math: ridge / 2 (H200: 989.5 TFLOP/s dense, 4.8 TB/s)
        ("matmul-critical-batch-h200-int8w", 989.5e12 / 4.8e12 / 2),
        ("matmul-regime-v5e", "memory"),
        # 2BDF = I*(2BD + DF + 2BF) with D = F = 4096, I* = 989.5e12 / 3.35e12
        (
            "matmul-exact-critical-int8-h100",
            (989.5e12 / 3.35e12) * 4096**2 / (2 * 4096**2 - 2 * (989.5e12 / 3.35e12) * 8192),
        ),
        # RTX 4090: "Peak FP16 Tensor TFLOPS with FP16 Accumulate: 330.3" over 1008 GB/s, then
        # BDF = I*(BD + DF + BF) at D = F = 8192: B = I* / (1 - 2 I*/8192)
        (
            "matmul-exact-critical-rtx4090-fp16acc",
            (330.3e12 / 1008e9) / (1 - 2 * (330.3e12 / 1008e9) / 8192),
        ),
        # 2 bytes x (2048*8192 + 8192*1024 + 2048*1024)
        ("matmul-bytes-bf16-writeback", "54.5 MB"),
        # TPU v4: 275 TOPS int8 / 1200 GB/s, halved for 1-byte weights
        ("matmul-critical-batch-int8-v4", 275e12 / 1200e9 / 2),
        # 256 x 4096 tokens / (459 TFLOP/s / 2765 GB/s)
        ("matmul-max-replicas-v5p", 256 * 4096 / (459e12 / 2765e9)),
        ("spec-h100-dense-tf32", "494.5 TFLOP/s"),
        ("spec-ici-one-way-per-port-v6e", "100 GB/s"),  # 800 GBps / 4 ports / 2 directions
        ("spec-checkpoint-gib-bytes", "150.3 GB"),  # 140 x 2**30 bytes
        ("spec-fictional-ridge", 1.8e15 / 2 / (4800 * 2**30)),  # 9e14 / 5.154e12 = 174.6
        ("spec-above-roof", "impossible"),
        # L4: "FP8 Tensor Core: 485 teraFLOPS*" (sparse) -> 242.5 dense, over 300 GB/s
        ("spec-ridge-l4-fp8", 242.5e12 / 300e9),
        ("spec-flops-in-1ms", 989.5e12 * 1e-3),
    ],
)
def test_chapter_exercises_accept_hand_worked_answers(exercise, value):
    assert check(exercise, value).correct, check(exercise, value).message


def test_exercise_int8_exact_rejects_the_approximation():
    # the B << D, F approximation for int8 weights on an H100: ridge / 2, about 148
    feedback = check("matmul-exact-critical-int8-h100", round(989.5e12 / 3.35e12 / 2))
    assert not feedback.correct and "approximation" in feedback.message


def test_new_exercises_diagnose_their_slips():
    # Y counted as fp32: 2*(2048*8192 + 8192*1024) + 4*2048*1024 bytes
    fp32_out = 2 * (2048 * 8192 + 8192 * 1024) + 4 * 2048 * 1024
    assert "fp32" in check("matmul-bytes-bf16-writeback", fp32_out).message
    # the int8 ridge itself (275e12 / 1200e9) instead of half of it
    assert "ridge" in check("matmul-critical-batch-int8-v4", 275e12 / 1200e9).message
    # sequences instead of tokens
    assert "tokens" in check("matmul-max-replicas-v5p", 256 / (459e12 / 2765e9)).message


def test_fp32_accumulate_adds_no_bytes_and_picks_the_fp32_accumulate_peak():
    # bytes by hand: 2 bytes for each of X[64, 128], W[128, 32], Y[64, 32]
    cost = rl.matmul(64, 128, 32, dtype="bf16", accumulate="fp32")
    assert cost.bytes == 2 * (64 * 128 + 128 * 32 + 64 * 32)
    assert cost.accumulate == "fp32"
    # RTX 3090 fp16: 71 TFLOP/s with FP32 accumulate, 142 with FP16 accumulate (whitepaper)
    fp16_acc = rl.matmul(4096, 4096, 4096, dtype="fp16", accumulate="fp16")
    fp32_acc = rl.matmul(4096, 4096, 4096, dtype="fp16", accumulate="fp32")
    assert fp16_acc.bytes == fp32_acc.bytes == 2 * 3 * 4096**2
    flops = 2 * 4096**3
    assert rl.estimate(fp16_acc, "RTX 3090").t_math == pytest.approx(flops / 142e12)
    assert rl.estimate(fp32_acc, "RTX 3090").t_math == pytest.approx(flops / 71e12)
    assert rl.estimate(
        rl.matmul(4096, 4096, 4096, dtype="fp16"), "RTX 3090"
    ).t_math == pytest.approx(flops / 71e12)
    with pytest.raises(ValueError, match="accumulate"):
        rl.estimate(rl.matmul(8, 8, 8, accumulate="fp16"), "H100 SXM")
    with pytest.raises(ValueError, match="dtype"):
        rl.matmul(8, 8, 8, accumulate="fp99")


def test_int8_variants_on_v5e_halve_then_restore_the_critical_batch():
    # v5e: 197 TFLOP/s bf16, 394 TOPS int8, 819 GB/s
    assert rl.critical_batch_size("TPU v5e", "bf16", weights="int8") == pytest.approx(
        197e12 / 819e9 / 2
    )
    assert rl.critical_batch_size("TPU v5e", "int8") == pytest.approx(394e12 / 819e9 / 2)
    assert rl.critical_batch_size("TPU v5e", "int8") == pytest.approx(
        rl.critical_batch_size("TPU v5e", "bf16")
    )
    # v4: int8 peak = bf16 peak, so int8 math halves the critical batch
    assert rl.critical_batch_size("TPU v4", "int8") == pytest.approx(275e12 / 1200e9 / 2)


# ---------------------------------------------------------------- chapter 5: spec sheets
def test_q5_h100_198e15_is_the_sparse_figure_and_dense_is_half():
    chip = rl.get_chip("H100 SXM")
    peak = chip.peak("bf16")
    assert "1/2 lower without sparsity" in peak.source.says
    assert "1,979" in peak.source.says
    assert peak.sparse_flops_per_s == pytest.approx(1.979e15, rel=1e-3)
    assert chip.peak_flops_per_s("bf16") == pytest.approx(peak.sparse_flops_per_s / 2)
    assert chip.peak_flops_per_s("bf16") == pytest.approx(9.89e14, rel=1e-3)


def test_link_one_way_vs_bidirectional_matches_the_vendor_total():
    link = rl.get_chip("H100 SXM").interconnect
    assert "900GB/s" in link.source.says.replace(" ", "")
    assert link.bidirectional_total_bytes_per_s == pytest.approx(900e9)
    assert link.one_way_bytes_per_s * link.count == pytest.approx(450e9)


def test_gib_vs_gb_for_tpu_v4():
    chip = rl.get_chip("TPU v4")
    assert "32 GiB" in chip.memory_source.says
    assert chip.hbm_bytes == 32 * 1024**3
    assert rl.format_bytes(chip.hbm_bytes, binary=True) == "32 GiB"
    assert rl.format_bytes(chip.hbm_bytes) == "34.4 GB"


def test_sparse_peak_used_as_a_measurement_is_caught_above_the_roof():
    chip = rl.get_chip("H100 SXM")
    intensity = 2 * rl.critical_intensity(chip, "bf16")
    mistaken = chip.peak_flops_per_s("bf16", sparse=True)
    with pytest.raises(ValueError, match="above the roofline"):
        rl.check_below_roof(mistaken, intensity, chip, "bf16")
    assert rl.check_below_roof(chip.peak_flops_per_s("bf16"), intensity, chip, "bf16")


def test_unknown_chip_names_close_matches():
    with pytest.raises(ValueError, match="H100"):
        rl.get_chip("H10")


@pytest.mark.parametrize(
    "chip,dtype,catalog_value,rounded_other",
    [
        ("TPU v6e", "bf16", 918e12, ("9.1e14", "9.2e14")),
    ],
)
def test_v6e_bf16_one_value_and_the_notes_name_the_others(
    chip, dtype, catalog_value, rounded_other
):
    c = rl.get_chip(chip)
    assert c.peak_flops_per_s(dtype) == dense_from_says(chip, dtype) == catalog_value
    for text in rounded_other:
        assert text in c.notes
    # 9.18e14 to two significant digits is 9.2e14; 9.1e14 is a truncation
    assert f"{catalog_value:.1e}" == "9.2e+14"


def test_v5e_hbm_one_value_and_the_notes_name_the_others():
    chip = rl.get_chip("TPU v5e")
    assert chip.hbm_bytes_per_s == bandwidth_from_says("TPU v5e") == 819e9
    assert "8.1e11" in chip.notes and "8.2e11" in chip.notes
    assert f"{chip.hbm_bytes_per_s:.1e}" == "8.2e+11"


# ---------------------------------------------------------------- Q6: notation
BOLD_SIZE = re.compile(
    r"\\(?:mathbf|boldsymbol|bm|mathbfit|pmb|textbf)\s*\{\s*[BDFN]\s*\}"  # \mathbf{B}
    r"|\\(?:mathbf|boldsymbol|bm)\s+[BDFN](?![A-Za-z])"  # \mathbf B
    r"|\\bf\s+[BDFN](?![A-Za-z])"  # {\bf B}
    r"|(?<![\w*])\*\*[BDFN]\*\*(?![\w*])"  # **B**
    r"|(?<![\w_])__[BDFN]__(?![\w_])"  # __B__
)


def bold_size_letters(text: str) -> list[str]:
    return [m.group(0) for m in BOLD_SIZE.finditer(text)]


def test_bold_size_scanner_finds_what_it_should():
    assert bold_size_letters(r"the matrix $\mathbf{B}$ of shape") == [r"\mathbf{B}"]
    assert sorted(bold_size_letters(r"$\boldsymbol{ N }$ and **D** and {\bf F}")) == sorted(
        [r"\boldsymbol{ N }", r"\bf F", "**D**"]
    )
    assert bold_size_letters(r"$\mathbf{X}\mathbf{W}$ is $[B, D]$, **Bold text**") == []


def test_q6_no_chapter_uses_a_size_letter_as_a_matrix():
    pages = sorted((ROOT / "chapters").glob("*.md")) + sorted((ROOT / "exercises").glob("*.md"))
    pages.append(ROOT / "intro.md")
    offenders = {p.name: bold_size_letters(p.read_text(encoding="utf-8")) for p in pages}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"B, D, F, N are sizes, never matrices (intro.md's table): {offenders}"


# ---------------------------------------------------------------- numbers are glued, not typed
def _prose(path: Path) -> str:
    """The page text outside code cells (where a typed number would be a hand-typed one) and
    outside exercise questions (which quote the figures they give, e.g. a spec sheet's line)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"```\{exercise\}.*?\n```", "", text, flags=re.S)
    return re.sub(r"```\{code-cell\}.*?\n```", "", text, flags=re.S)


@pytest.mark.parametrize(
    "path,computed",
    [
        (
            CHAPTER_4,
            ["240", "166", "560", "295", "292", "206", "153", "286", "76", "152", "227", "120"],
        ),
        (CHAPTER_5, ["989", "1.98e15", "9.89e14", "450", "34.4", "295"]),
    ],
)
def test_computed_figures_are_glued_not_typed(path, computed):
    prose = _prose(path)
    typed = [n for n in computed if re.search(rf"(?<![\w.]){re.escape(n)}(?![\w.])", prose)]
    assert not typed, f"{path.name} types computed figures {typed} into its prose; glue them"
