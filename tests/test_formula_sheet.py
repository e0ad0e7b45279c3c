"""The formula sheet (formula_sheet.md) is written from roofline.formula_sheet.FORMULAS: the page
is up to date, every function it names exists, and for several formulas the expression the sheet
prints and the package function give the same number, checked against arithmetic done by hand."""

import re
from pathlib import Path

import pytest

import roofline as rl
from roofline import formula_sheet as sheet

ROOT = Path(__file__).resolve().parent.parent


def _formula(what):
    (found,) = [f for f in sheet.FORMULAS if f.what == what]
    return found


def _value(what, **numbers):
    """The sheet's own expression for `what`, evaluated at `numbers`."""
    expr = sheet.expression(_formula(what))
    return float(expr.subs({s: numbers[s.name] for s in expr.free_symbols}))


def test_page_is_written_from_the_list():
    assert (ROOT / "formula_sheet.md").read_text(encoding="utf-8") == sheet.page(), (
        "formula_sheet.md is out of date: run .venv/bin/python -m roofline.formula_sheet"
    )
    assert sheet.main(["--check"]) == 0


def test_sheet_is_in_the_reference_part_after_the_glossary():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    reference = toc[toc.index('caption: "Reference"') :]
    assert reference.index("file: glossary") < reference.index("file: formula_sheet")


@pytest.mark.parametrize("formula", sheet.FORMULAS, ids=lambda f: f.what)
def test_every_named_function_exists_as_a_reader_types_it(formula):
    obj = rl  # `rl.x.y` on the page: walk the attributes from the package
    for part in formula.function.split(".")[1:]:
        obj = getattr(obj, part)
    assert callable(obj) or isinstance(obj, property)
    assert (ROOT / f"{formula.chapter}.md").exists()
    assert bool(formula.rhs) != bool(formula.latex)  # one right-hand side, never two
    assert set(map(str, sheet.expression(formula).free_symbols if formula.rhs else ())) <= set(
        sheet.SYMBOLS
    )


def test_every_chapter_with_display_formulas_is_on_the_sheet():
    listed = {f.chapter for f in sheet.FORMULAS}
    for number in (1, 2, 3, 4, 6, 7, 10, 11, 12):
        assert any(c.split("/")[-1].startswith(f"{number:02d}_") for c in listed), number


def test_ridge_point_h100():
    # H100 SXM: 989.5 TFLOP/s bf16 dense over 3.35 TB/s -> 989.5e12 / 3.35e12 = 295.37 FLOPs/B
    by_hand = 989.5e12 / 3.35e12
    sheet_value = _value("critical intensity (ridge point)", P=989.5e12, BW_mem=3.35e12)
    assert sheet_value == pytest.approx(by_hand)
    assert rl.critical_intensity("H100 SXM") == pytest.approx(by_hand)


def test_matmul_counts_and_intensity():
    # B = 16, D = 4096, F = 14336: FLOPs 2*16*4096*14336 = 1,879,048,192; bytes in bf16
    # 2*(16*4096 + 4096*14336 + 16*14336) = 2*(65,536 + 58,720,256 + 229,376) = 118,030,336
    sizes = dict(B=16, D=4096, F=14336)
    cost = rl.costs.matmul(16, 4096, 14336)
    assert _value("matmul [B, D] x [D, F], FLOPs", **sizes) == cost.flops == 1_879_048_192
    what = "matmul in bf16, bytes: read X and W, write Y"
    assert _value(what, **sizes) == cost.bytes == 118_030_336
    intensity = _value("matmul in bf16, intensity", **sizes)
    assert intensity == pytest.approx(1_879_048_192 / 118_030_336)  # 15.92 FLOPs/B
    assert cost.intensity == pytest.approx(intensity)


def test_dot_product_intensity():
    # N = 1000: 2N - 1 = 1999 FLOPs over 2 bytes x (2N + 1) = 4002 bytes
    assert _value("dot product of two bf16 vectors of N", N=1000) == pytest.approx(1999 / 4002)
    assert rl.costs.dot(1000).intensity == pytest.approx(1999 / 4002)


def test_exact_critical_batch_h100():
    # D = F = 4096: I* D^2 / (D^2 - 2 I* D) = I* D / (D - 2 I*)
    # = 295.373 * 4096 / (4096 - 590.746) = 345.15
    ridge = 989.5e12 / 3.35e12
    by_hand = ridge * 4096 / (4096 - 2 * ridge)
    assert by_hand == pytest.approx(345.15, abs=0.01)
    what = "critical batch size, exact (bf16)"
    assert _value(what, I_star=ridge, D=4096, F=4096) == pytest.approx(by_hand)
    assert rl.exact_critical_batch_size("H100 SXM", 4096, 4096) == pytest.approx(by_hand)


def test_two_chip_threshold_tpu_v4():
    # 2 x 275e12 FLOP/s / 45e9 B/s = 12,222.2 (chapter 6's own hand derivation)
    what = "two chips split D: math equals the link (bf16)"
    assert _value(what, P=275e12, BW_link=45e9) == pytest.approx(12_222.22, abs=0.01)
    assert rl.sharded_critical_D("TPU v4") == pytest.approx(12_222.22, abs=0.01)


def test_ring_collectives():
    # 1 GB over 8 chips at 100 GB/s one way, 1 us a step: all-gather 7 us + 7/8 x 10 ms
    # = 8.757 ms; all-reduce twice that, 17.514 ms
    numbers = dict(n=8, V=1e9, BW_link=100e9, alpha=1e-6)
    gather = _value("ring all-gather or reduce-scatter of V bytes over n chips", **numbers)
    reduce = _value("ring all-reduce (reduce-scatter, then all-gather)", **numbers)
    assert gather == pytest.approx(8.757e-3) and reduce == pytest.approx(17.514e-3)
    ct = rl.collectives.collective_time
    assert ct("all-gather", 1e9, 8, 100e9, "ring", latency_s=1e-6) == pytest.approx(gather)
    assert ct("all-reduce", 1e9, 8, 100e9, "ring", latency_s=1e-6) == pytest.approx(reduce)


def test_kv_cache_per_token_llama3_8b():
    # Llama 3 8B (config.json: 32 layers, 8 KV heads of 128): 2 x 32 x 8 x 128 x 2 = 131,072 B
    what = "KV cache per token (w bytes per number)"
    assert _value(what, L=32, H_kv=8, d_h=128, w=2) == 131_072
    assert rl.transformer.kv_cache_bytes("Llama 3 8B", 1) == 131_072
    assert rl.transformer.kv_cache_bytes("Llama 3 8B", 1, "fp8") == 65_536


def test_training_flops_and_state():
    # Llama 3 8B at T = 4096: Psi = the matmul weights, 7,504,658,432: 8,030,261,248 less the
    # input embedding table (128,256 x 4096 = 525,336,576, looked up, not multiplied) and the
    # 65 RMSNorm weight vectors of 4096 (2 per layer + the final one: 266,240);
    # 6 Psi = 45,027,950,592 and 12 L H d_h T = 12 x 32 x 32 x 128 x 4096 = 6,442,450,944
    psi = 8_030_261_248 - 128_256 * 4096 - 65 * 4096
    assert 6 * psi == 45_027_950_592
    by_hand = 45_027_950_592 + 6_442_450_944
    numbers = dict(Psi=psi, L=32, H=32, d_h=128, T=4096)
    assert _value("training FLOPs per token", **numbers) == by_hand
    assert rl.training_flops_per_token("Llama 3 8B", 4096) == by_hand
    # 16 bytes per parameter: 1e9 parameters keep 2 GB + 2 GB + 12 GB
    assert _value("weights, gradients and Adam state per parameter") == 16
    assert sum(rl.training_state_bytes(1e9, zero_stage=0).values()) == 16e9
    # MFU: 1000 tokens/s on one H100 is 51.47e12 FLOP/s of 989.5e12: 5.2016 %
    mfu = _value(
        "model FLOPs utilisation at R tokens/s on n chips", R=1000, n=1, P=989.5e12, **numbers
    )
    assert mfu == pytest.approx(by_hand * 1000 / 989.5e12)
    assert rl.mfu("Llama 3 8B", 1000, "H100 SXM", 1, 4096) == pytest.approx(mfu)


def test_activations_and_adam_traffic():
    # Llama 3 8B, one sequence of 8192 tokens: 34 x 8192 x 1 x 4096 = 1,140,850,688 bytes a layer
    what = "activations a layer keeps, b sequences of s tokens (fused attention)"
    assert _value(what, s=8192, b=1, D=4096) == 1_140_850_688
    assert rl.training.activation_bytes_per_layer("Llama 3 8B", 8192, 1) == 1_140_850_688
    # Adam reads 4 + 4 + 4 + 2 and writes 4 + 4 + 4 + 2 bytes a parameter: 28. The package's
    # step on one H100 (one micro-batch) moves 2 + 2 bytes of weight reads, 2 of gradient
    # writes, the activations twice (written, read) and the optimizer's bytes per parameter
    (adam,) = [f for f in sheet.FORMULAS if f.what.startswith("Adam per parameter")]
    assert float(sheet.expression(adam)) == 28
    model, chip = rl.get_model("Llama 3 8B"), rl.get_chip("H100 SXM")
    step = rl.training_step(model, chip, 1, 8192, 8192, "", microbatches=1)
    moved = step.times["HBM"] * chip.hbm_bytes_per_s
    # ... and the output layer's activations, also written then read: the final norm's and
    # the head's bf16 inputs (2 + 2 bytes x 8192 x 4096) and the fp32 logits (4 bytes x 8192
    # x 128,256 words): 4 x 8192 x (4096 + 128,256) = 4,336,910,336 bytes
    others = 6 * model.params + 2 * 1_140_850_688 * 32 + 2 * 4_336_910_336
    assert (moved - others) / model.params == pytest.approx(28)


def test_pipeline_bubble():
    # 16 stages, 32 micro-batches: 15 / 47 of the step
    what = "pipeline bubble, share of the step (1F1B, M micro-batches)"
    assert _value(what, n_pp=16, M=32) == pytest.approx(15 / 47)


def test_page_prints_no_python_syntax():
    text = (ROOT / "formula_sheet.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("| $"):
            formula = line.split("$")[1]
            assert "**" not in formula and "*" not in re.sub(r"\^\{\*\}", "", formula)
            assert not re.search(r"(?<!\\)\b(Psi|BW_mem|I_star)\b", formula)
