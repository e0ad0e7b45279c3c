"""The serving explorer (roofline.serving_explorer): in a kernel it shows the package's
numbers; on the page its JavaScript mirror of the serving formulas must write the very same
readout as the package for every combination it offers (checked on a sample in Chromium)."""

from __future__ import annotations

import random

import pytest

import roofline as rl
from roofline import serving_explorer as sx


def test_kernel_explorer_reads_the_package():
    ex = sx.serving_explorer("Llama 3 70B", "H100 SXM", tp=8, batch=16, context=4096)
    est = rl.serving_estimate("Llama 3 70B", "H100 SXM", 8, tp=8, batch=16, context_len=4096)
    assert rl.format_time(est.t_decode_step) in ex.text
    assert rl.format_time(est.ttft_s) in ex.text
    assert f"largest batch that fits: {est.max_batch:,}" in ex.text
    ex.set(batch=1024, context=32768)
    assert "does NOT fit" in ex.text
    before = dict(ex.work)
    ex.set(batch=2)  # same scene: a blit, no full redraw
    assert ex.work["full draws"] == before["full draws"] and ex.work["blits"] > before["blits"]
    with pytest.raises(ValueError, match="choose one of"):
        sx.serving_explorer(chip="RTX 4090")


def test_weights_read_at_batch_one_by_hand():
    """Llama 3 8B, one H100, batch 1, bf16: every weight but the input embedding table read once,
    (8,030,261,248 - 128,256 x 4,096) x 2 bytes / 3.35e12 B/s."""
    ex = sx.serving_explorer("Llama 3 8B", "H100 SXM", tp=1, batch=1, context=512)
    seconds = (8_030_261_248 - 128_256 * 4_096) * 2 / 3.35e12
    assert f"weights {rl.format_time(seconds)}" in ex.text


def test_page_version_fits_its_budget_and_names_its_controls():
    html = sx.serving_explorer()._repr_mimebundle_()["text/html"]
    assert len(html.encode()) < 150_000
    for name in ("model", "chip", "tp", "batch", "context", "weights"):
        assert f'data-control="{name}"' in html
    assert 'aria-valuetext="16 sequences"' in html and 'aria-live="polite"' in html


@pytest.mark.browser
def test_page_mirror_writes_the_package_readout(tmp_path):
    from test_browser import _make_driver

    ex = sx.serving_explorer()
    page = tmp_path / "serving.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>serving</title></head><body>"
        + ex._repr_mimebundle_()["text/html"]
        + "</body></html>",
        encoding="utf-8",
    )
    combos = [
        (m, c, t, b, ctx, w)
        for m in sx.MODELS
        for c in sx.CHIPS
        for t in sx.TP_DEGREES
        for b in sx.BATCHES
        for ctx in sx.contexts_for(m)
        for w in sx.WEIGHT_DTYPES
    ]
    driver = _make_driver()
    try:
        driver.get(page.as_uri())
        problems = []
        for combo in random.Random(11).sample(combos, 120):
            values = dict(zip(("model", "chip", "tp", "batch", "context", "weights"), combo))
            got = driver.execute_script(
                "const e = window.rooflineServingExplorers[0];"
                "e.set(arguments[0]); return [e.state().text,"
                " e.controls.batch.getAttribute('aria-valuetext'),"
                " !!e.figure.querySelector('svg title')];",
                values,
            )
            want = sx.readout(sx.numbers(sx.estimate(*combo)), sx.title(*combo))
            if got[0] != want:
                problems.append(f"{combo}:\n{got[0]}\n!=\n{want}")
            if got[1] != f"{combo[3]:,} sequences" or not got[2]:
                problems.append(f"{combo}: aria-valuetext {got[1]!r} or no svg title")
        assert not problems, "\n\n".join(problems[:3])
        assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        driver.quit()


def test_sliding_window_caps_cache_and_attention_by_hand():
    """Mistral 7B (config.json: 32 layers, 32 heads of 4096 / 32 = 128, 8 KV heads,
    sliding_window 4096) at a context of 16,384 tokens, 2-byte cache: every layer keeps only
    the last 4096 tokens, so one sequence's cache is
    32 layers x 2 (K, V) x 8 heads x 128 x 2 B x 4096 = 536,870,912 B, not x 16,384.
    Decode attention per token: 32 layers x 2 x 32 heads x (128 + 128) x 4096 keys =
    2,147,483,648 FLOPs; prefill (causal) meets 4096 - 4096^2 / (2 x 16,384) = 3584 keys
    per query on average: 32 x 16,384 x 3584 = 1,879,048,192 FLOPs per token.
    Matmul weights: per layer 2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14,336 = 218,103,808,
    x 32 + the output head 32,000 x 4096 = 7,110,393,856."""
    est = sx.estimate("Mistral 7B", "H100 SXM", 1, 1, 16_384, "bf16")
    assert est.memory["KV cache"] == 536_870_912
    assert est.hbm_parts["KV cache"] == pytest.approx(536_870_912 / 3.35e12, rel=1e-12)
    peak = rl.get_chip("H100 SXM").peak_flops_per_s("bf16")
    n = 7_110_393_856
    assert est.times["math"] == pytest.approx((2 * n + 2_147_483_648) / peak, rel=1e-12)
    prefill = (2 * n + 1_879_048_192) * 16_384 / peak
    assert est.prefill_times["math"] == pytest.approx(prefill, rel=1e-12)
    ex = sx.serving_explorer("Mistral 7B", "H100 SXM", tp=1, batch=1, context=16_384)
    assert f"KV cache {rl.format_bytes(536_870_912)}, reserve" in ex.text


def test_the_context_slider_stops_at_the_trained_context():
    """Gemma 2 27B was trained for 8,192 tokens (config.json max_position_embeddings), so the
    slider offers it 512 ... 8,192; moving to it from 32,768 tokens lands on 8,192, and a
    model without that limit gets the whole range back, the reader's context kept."""
    assert sx.contexts_for("Gemma 2 27B") == (512, 1024, 2048, 4096, 8192)
    assert sx.contexts_for("Llama 3 8B")[-1] == 32_768
    ex = sx.serving_explorer("Llama 3 8B", "H100 SXM", tp=1, batch=1, context=32_768)
    ex.controls["model"].value = "Gemma 2 27B"
    assert ex.controls["context"].value == 8192
    assert "context 8,192" in ex.text
    ex.controls["context"].value = 2048
    ex.controls["model"].value = "Llama 3 8B"
    assert ex.controls["context"].options[-1] == 32_768 and ex.controls["context"].value == 2048
    with pytest.raises(ValueError, match="trained for at most 8,192 tokens"):
        sx.serving_explorer("Gemma 2 27B", "H100 SXM", tp=1, batch=1, context=16_384)
