"""The training-step explorer (roofline.step_explorer): in a kernel, and on the page in
headless Chromium, where it must show the package's own numbers for every combination."""

from __future__ import annotations

import random

import pytest

import roofline as rl
from roofline import step_explorer as se


def test_layout_presets_multiply_to_the_chip_count():
    for preset in se.LAYOUTS:
        for n in se.CHIP_COUNTS:
            try:
                layout = se.layout_for(preset, n)
            except ValueError as error:
                assert "multiple of" in str(error)
                continue
            product = 1
            for degree in layout.values():
                product *= degree
            assert product == n


def test_kernel_explorer_reads_the_package():
    ex = se.training_step_explorer("Llama 3 70B", "H100 SXM", 4096, "TP 8 × PP 8 × DP")
    step = rl.training_step(
        "Llama 3 70B",
        "H100 SXM",
        4096,
        se.TOKENS_PER_STEP,
        se.SEQ_LEN,
        {"tp": 8, "pp": 8, "dp": 64},
        recompute="selective",
    )
    assert rl.format_time(step.t_lower) in ex.text
    assert f"{step.bound}-bound" in ex.text
    assert rl.format_bytes(step.memory_bytes) in ex.text
    ex.set(model="Llama 3 8B", layout="EP 8 × FSDP (mixture of experts)")
    assert "not possible" in ex.text and "mixture of experts" in ex.text
    with pytest.raises(ValueError, match="choose one of"):
        se.training_step_explorer(chip="RTX 4090")


def test_page_version_fits_its_budget_and_names_its_controls():
    html = se.training_step_explorer()._repr_mimebundle_()["text/html"]
    assert len(html.encode()) < 150_000
    for name in ("model", "chip", "n_chips", "layout", "recompute"):
        assert f'data-control="{name}"' in html
    assert 'aria-valuetext="4,096 chips"' in html  # thousands separated, as the serving card


@pytest.mark.browser
def test_page_explorer_shows_the_package_numbers(tmp_path):
    from test_browser import _make_driver

    ex = se.training_step_explorer()
    page = tmp_path / "step.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>step</title></head><body>"
        + ex._repr_mimebundle_()["text/html"]
        + "</body></html>",
        encoding="utf-8",
    )
    driver = _make_driver()
    try:
        driver.get(page.as_uri())
        combos = [
            (m, c, n, lay, rc)
            for m in se.MODELS
            for c in se.CHIPS
            for n in se.CHIP_COUNTS
            for lay in se.LAYOUTS
            for rc in se.RECOMPUTE_CHOICES
        ]
        problems = []
        for m, c, n, lay, rc in random.Random(7).sample(combos, 40):
            got = driver.execute_script(
                "const e = window.rooflineStepExplorers[0];"
                "e.set(arguments[0]); return [e.state().text,"
                " e.controls.n_chips.getAttribute('aria-valuetext'),"
                " !!e.figure.querySelector('svg title')];",
                {"model": m, "chip": c, "n_chips": n, "layout": lay, "recompute": rc},
            )
            step, reason = se.step_or_reason(m, c, n, lay, rc)
            numbers = None if step is None else se._numbers(step)
            want = se.readout(numbers, reason, f"{m} on {n} × {c}, {lay}")
            if got[0] != want:
                problems.append(f"{m}, {c}, {n}, {lay}, {rc}:\n{got[0]}\n!=\n{want}")
            if got[1] != f"{n:,} chips" or not got[2]:  # thousands separated, as the page
                problems.append(f"{n}: aria-valuetext {got[1]!r} or no svg title")
        assert not problems, "\n\n".join(problems[:3])
        assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        driver.quit()
