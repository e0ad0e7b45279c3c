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
        for ctx in sx.CONTEXTS
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
