"""Chapter 9 on Colab says what each runtime measures (issue 35, section 3): a CPU runtime (where
PyTorch and JAX are installed and see only the CPU) is told how to switch to a GPU or TPU; a T4
(no bf16 tensor cores) is timed and reported in fp16; a GPU runtime is measured once."""

from __future__ import annotations

import re
import sys
import types

import notebooks

import roofline as rl
from roofline.measure import accelerator

CH09 = notebooks.ROOT / "chapters" / "09_measuring_a_roofline.md"


def _fake_modules(monkeypatch):
    """Colab's CPU runtime: torch without CUDA, jax with a CPU device only."""
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    jax = types.ModuleType("jax")
    jax.devices = lambda: [types.SimpleNamespace(platform="cpu", device_kind="cpu")]
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setattr(accelerator, "_have", lambda name: name in ("torch", "jax"))


def test_a_cpu_runtime_is_told_how_to_measure_a_gpu_or_tpu(monkeypatch):
    _fake_modules(monkeypatch)
    library, message = accelerator.detect_accelerator()
    assert library is None
    assert "PyTorch is installed but sees no GPU" in message and "JAX is installed" in message
    assert "Runtime > Change runtime type" in message and "GPU" in message and "TPU" in message


def test_no_library_at_all_is_told_too(monkeypatch):
    monkeypatch.setattr(accelerator, "_have", lambda name: False)
    library, message = accelerator.detect_accelerator()
    assert library is None and "neither PyTorch nor JAX" in message
    assert "Runtime > Change runtime type" in message


def test_a_t4_is_timed_in_fp16_and_a_tpu_in_bf16():
    # the T4's spec sheet lists FP16 and INT8 tensor-core rates, no BF16
    t4 = rl.catalog.chip_for_device("Tesla T4")
    assert t4 is not None and "bf16" not in t4.dtypes
    assert accelerator._pick_dtype(t4, library_supports_bf16=False) == "fp16"
    assert accelerator._pick_dtype(rl.get_chip("TPU v5e"), library_supports_bf16=True) == "bf16"


def test_chapter_9_measures_the_accelerator_once_and_does_not_claim_bf16_everywhere():
    text = CH09.read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S))
    assert "measure(quick=True" in code  # measure() times the accelerator by default ...
    assert "measure_accelerator(" not in code  # ... so the page does not time it again
    assert "result.accelerator" in code
    section = text[text.index("## Measuring a GPU or TPU in Colab") :]
    section = section[: section.index("```{admonition} Takeaway")]
    for runtime in ("CPU runtime", "GPU runtime", "TPU runtime"):
        assert runtime in section
    assert "T4" in section and "fp16" in section
    assert "times a bf16 matmul" not in section
