"""Measure a GPU or TPU, where PyTorch or JAX can see one (Colab, a cloud machine).

Two compiled kernels, each timed after a warm-up and with the device synchronised
before the clock stops:

* a square matmul in bf16 (fp16 on chips without bf16 tensor cores, e.g. T4):
  FLOPs = 2 n^3;
* a copy of a large buffer (``dst.copy_(src)`` in PyTorch, ``x * 2`` in JAX):
  bytes = 2 x buffer size (read once, written once).

The device name is matched to the catalog (`catalog_chip_for`) and the achieved
rates are divided by the catalog's dense peak and memory bandwidth. PyTorch and
JAX are imported only here, only when asked, and nothing is installed: without
either library (or without a device) the measurement is skipped with a message.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass, field

__all__ = ["AcceleratorResult", "catalog_chip_for", "detect_accelerator", "measure_accelerator"]


@dataclass
class AcceleratorResult:
    library: str  # "torch" or "jax"
    device_name: str
    dtype: str  # dtype of the matmul
    matmul_n: int
    matmul_times: list = field(default_factory=list)
    copy_bytes: int = 0  # bytes counted per copy (2 x buffer)
    copy_times: list = field(default_factory=list)
    catalog_name: str | None = None

    @property
    def matmul_flops(self) -> float:
        return 2.0 * self.matmul_n**3

    @property
    def flops_per_s(self) -> float | None:
        return self.matmul_flops / min(self.matmul_times) if self.matmul_times else None

    @property
    def median_flops_per_s(self) -> float | None:
        if not self.matmul_times:
            return None
        s = sorted(self.matmul_times)
        return self.matmul_flops / s[len(s) // 2]

    @property
    def bytes_per_s(self) -> float | None:
        return self.copy_bytes / min(self.copy_times) if self.copy_times else None

    @property
    def catalog_chip(self):
        if self.catalog_name is None:
            return None
        from ..catalog import get_chip

        return get_chip(self.catalog_name)

    def fraction_of_peak(self) -> float | None:
        """Achieved matmul FLOP/s / the catalog's dense peak for this dtype."""
        chip = self.catalog_chip
        if chip is None or self.flops_per_s is None or self.dtype not in chip.dtypes:
            return None
        return self.flops_per_s / chip.peak_flops_per_s(self.dtype)

    def fraction_of_bandwidth(self) -> float | None:
        """Achieved copy bandwidth / the catalog's memory bandwidth."""
        chip = self.catalog_chip
        if chip is None or self.bytes_per_s is None:
            return None
        return self.bytes_per_s / chip.hbm_bytes_per_s

    def report(self) -> str:
        from ..units import format_bandwidth, format_flops_rate

        chip = self.catalog_chip
        lines = [
            f"{self.device_name} (via {self.library}); catalog entry: "
            f"{chip.name if chip else 'none (achieved figures only)'}"
        ]
        if self.flops_per_s is not None:
            line = (
                f"  {self.dtype} matmul n={self.matmul_n}: {format_flops_rate(self.flops_per_s)} best, "
                f"{format_flops_rate(self.median_flops_per_s)} median"
            )
            frac = self.fraction_of_peak()
            if frac is not None:
                line += (
                    f"; catalog dense peak {format_flops_rate(chip.peak_flops_per_s(self.dtype))}"
                    f" -> {100 * frac:.0f} % of peak"
                )
            lines.append(line)
        if self.bytes_per_s is not None:
            line = f"  copy bandwidth: {format_bandwidth(self.bytes_per_s)} best"
            frac = self.fraction_of_bandwidth()
            if frac is not None:
                line += (
                    f"; catalog {chip.memory_kind} {format_bandwidth(chip.hbm_bytes_per_s)}"
                    f" -> {100 * frac:.0f} % of spec"
                )
            lines.append(line)
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "library": self.library,
            "device_name": self.device_name,
            "dtype": self.dtype,
            "matmul_n": self.matmul_n,
            "matmul_times": list(self.matmul_times),
            "copy_bytes": self.copy_bytes,
            "copy_times": list(self.copy_times),
            "catalog_name": self.catalog_name,
        }

    @classmethod
    def from_dict(cls, d: dict) -> AcceleratorResult:
        return cls(**d)


# ------------------------------------------------------------ catalog matching
def catalog_chip_for(device_name: str | None):
    """The catalog `Chip` a device name denotes, or None when the catalog has no entry for it.

    Names as PyTorch (``torch.cuda.get_device_name()``) and JAX (``device_kind``) print
    them, looked up in each chip's `device_names` (`roofline.catalog.chip_for_device`):
    "NVIDIA H100 80GB HBM3" -> H100 SXM, "NVIDIA H100 PCIe" -> H100 PCIe, "Tesla T4" -> T4,
    "TPU v5 lite" -> TPU v5e. Variants whose figures differ from the catalog's entry
    (A100 80GB PCIe, H100 NVL, H200 NVL) and unlisted devices give None rather than a wrong
    peak; the A100 40GB (Colab's) has its own entry.
    """
    from ..catalog import chip_for_device

    return chip_for_device(device_name)


# ------------------------------------------------------------ detection
def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def detect_accelerator():
    """(library, device name), or (None, message saying why nothing is measured)."""
    reasons = []
    if _have("torch"):
        try:
            import torch

            if torch.cuda.is_available():
                return "torch", torch.cuda.get_device_name(0)
            reasons.append(
                "PyTorch is installed but sees no GPU (torch.cuda.is_available() is False)"
            )
        except Exception as error:  # a broken install must not stop the CPU measurement
            reasons.append(f"PyTorch failed to start: {error}")
    if _have("jax"):
        try:
            import jax

            devices = [d for d in jax.devices() if d.platform in ("gpu", "tpu")]
            if devices:
                return "jax", devices[0].device_kind
            reasons.append("JAX is installed but sees only a CPU")
        except Exception as error:
            reasons.append(f"JAX failed to start: {error}")
    if not reasons:
        reasons.append(
            "neither PyTorch nor JAX is installed (in Colab, pick a GPU or TPU runtime, "
            "where both are)"
        )
    return None, "accelerator skipped: " + "; ".join(reasons)


def _pick_dtype(chip, library_supports_bf16: bool) -> str:
    if chip is not None:
        return "bf16" if "bf16" in chip.dtypes else "fp16"
    return "bf16" if library_supports_bf16 else "fp16"


def _time(fn, sync, repeats, inner, timer):
    fn()
    sync()  # warm-up: compile, allocate, clock up
    times = []
    for _ in range(repeats):
        sync()
        start = timer()
        for _ in range(inner):
            fn()
        sync()
        times.append((timer() - start) / inner)
    return times


def _measure_torch(device_name, n, copy_bytes, repeats, inner, timer, catalog):
    import torch

    dtype = _pick_dtype(catalog, torch.cuda.is_bf16_supported())
    tdtype = torch.bfloat16 if dtype == "bf16" else torch.float16
    dev = torch.device("cuda")
    result = AcceleratorResult(
        "torch", device_name, dtype, n, catalog_name=catalog.name if catalog else None
    )
    result.matmul_times = _torch_matmul_times(torch, dev, tdtype, n, repeats, inner, timer)
    elements = copy_bytes // 2 // 4
    result.copy_bytes = 2 * elements * 4
    result.copy_times = _torch_copy_times(torch, dev, elements, repeats, inner, timer)
    torch.cuda.empty_cache()
    return result


def _torch_matmul_times(torch, dev, tdtype, n, repeats, inner, timer) -> list[float]:
    """Seconds per n x n matmul on the GPU; its three matrices are freed when this returns
    (before the copy allocates its own)."""
    a = torch.randn(n, n, device=dev, dtype=tdtype)
    b = torch.randn(n, n, device=dev, dtype=tdtype)
    c = torch.empty(n, n, device=dev, dtype=tdtype)
    return _time(lambda: torch.matmul(a, b, out=c), torch.cuda.synchronize, repeats, inner, timer)


def _torch_copy_times(torch, dev, elements, repeats, inner, timer) -> list[float]:
    """Seconds per device-to-device copy of `elements` fp32 values (read once, written once);
    both buffers are freed when this returns."""
    src = torch.ones(elements, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    return _time(lambda: dst.copy_(src), torch.cuda.synchronize, repeats, inner, timer)


def _measure_jax(device_name, n, copy_bytes, repeats, inner, timer, catalog):
    import jax
    import jax.numpy as jnp

    dtype = _pick_dtype(catalog, True)
    jdtype = jnp.bfloat16 if dtype == "bf16" else jnp.float16
    result = AcceleratorResult(
        "jax", device_name, dtype, n, catalog_name=catalog.name if catalog else None
    )
    key = jax.random.PRNGKey(0)
    a = jax.random.normal(key, (n, n), dtype=jdtype)
    b = jax.random.normal(key, (n, n), dtype=jdtype)
    matmul = jax.jit(jnp.matmul)
    out = {}

    def run_matmul():
        out["y"] = matmul(a, b)

    result.matmul_times = _time(
        run_matmul,
        lambda: out.get("y") is not None and out["y"].block_until_ready(),
        repeats,
        inner,
        timer,
    )
    elements = copy_bytes // 2 // 4
    x = jnp.ones((elements,), dtype=jnp.float32)
    scale = jax.jit(lambda v: v * 2.0)

    def run_copy():
        out["z"] = scale(x)

    result.copy_bytes = 2 * elements * 4
    result.copy_times = _time(
        run_copy,
        lambda: out.get("z") is not None and out["z"].block_until_ready(),
        repeats,
        inner,
        timer,
    )
    return result


def measure_accelerator(
    quick: bool = True,
    timer=time.perf_counter,
    library: str | None = None,
    device_name: str | None = None,
    matmul_n: int | None = None,
    copy_bytes: int | None = None,
    repeats: int | None = None,
):
    """Measure the GPU/TPU that PyTorch or JAX sees: (AcceleratorResult or None, message).

    Never raises for a missing library or device: the result is None and the
    message says why. `library`/`device_name` skip detection (for tests).
    """
    if library is None:
        library, found = detect_accelerator()
        if library is None:
            return None, found
        device_name = found
    catalog = catalog_chip_for(device_name)
    n = matmul_n or (4096 if quick else 8192)
    nbytes = copy_bytes or (2**28 if quick else 2**30)
    reps = repeats or (5 if quick else 10)
    inner = 3 if quick else 10
    runner = {"torch": _measure_torch, "jax": _measure_jax}.get(library)
    if runner is None:
        raise ValueError(f"library must be 'torch' or 'jax', got {library!r}")
    try:
        result = runner(device_name, n, nbytes, reps, inner, timer, catalog)
    except KeyboardInterrupt:
        raise
    except Exception as error:  # out of memory, driver trouble: report, keep the CPU results
        return None, f"accelerator measurement failed on {device_name} via {library}: {error}"
    note = "" if catalog else " (not in the catalog: no comparison with a spec figure)"
    return result, f"measured {device_name} via {library}{note}"
