"""Time the serving explorer: a slider change in a kernel (target: median < 50 ms) and in the
browser, the page's formula mirror (target: one frame, median < 16.7 ms per change).

    .venv/bin/python benchmarks/bench_serving_explorer.py [--repeats 30] [--no-browser]

Kernel: `Explorer.set` of batch and context (blits of one scene) and of model / chip (a new
scene, drawn in full once, a blit when seen again). Browser (headless Chromium, skipped when it
is missing): `performance.now()` around the page's own `set` (state, readout, SVG).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from roofline import serving_explorer as sx  # noqa: E402

FRAME_MS = 1000 / 60


def _kernel(repeats: int) -> float:
    explorer = sx.serving_explorer()
    cases = [
        ("batch", [1, 4, 16, 64, 256, 1024]),
        ("context", [512, 2048, 8192, 32768]),
        ("model", ["Llama 3 8B", "Llama 3 70B"]),
        ("chip", ["H100 SXM", "B200", "TPU v5p"]),
    ]
    worst = 0.0
    print(f"{'kernel: change of':24s} {'median':>8s} {'min':>7s} {'max':>7s}  (ms)")
    for key, values in cases:
        times = []
        for i in range(repeats):
            start = time.perf_counter()
            explorer.set(**{key: values[i % len(values)]})
            times.append((time.perf_counter() - start) * 1e3)
        median = statistics.median(times)
        worst = max(worst, median)
        print(f"{key:24s} {median:8.1f} {min(times):7.1f} {max(times):7.1f}")
    print(f"work: {dict(explorer.work)}")
    return worst


def _browser(repeats: int) -> float | None:
    root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(root / "tests"), str(root / "tools")]  # as tests/conftest.py does
    try:
        from test_browser import _make_driver

        driver = _make_driver()
    except BaseException as error:  # pytest.skip raises its own exception type
        print(f"browser: skipped ({error})")
        return None
    html = sx.serving_explorer()._repr_mimebundle_()["text/html"]
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "serving.html"
        page.write_text(
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>b</title></head><body>"
            + html
            + "</body></html>",
            encoding="utf-8",
        )
        try:
            driver.get(page.as_uri())
            times = driver.execute_script(
                "const e = window.rooflineServingExplorers[0], d = e.data.controls, out = [];"
                "for (let i = 0; i < arguments[0]; i++) {"
                "  const t = performance.now();"
                "  e.set({batch: d.batch[i % d.batch.length],"
                "         context: d.context[(3 * i) % d.context.length],"
                "         model: d.model[i % d.model.length]});"
                "  out.push(performance.now() - t); }"
                "return out;",
                max(repeats, 30),
            )
        finally:
            driver.quit()
    median = statistics.median(times)
    print(
        f"browser: set + readout + SVG: median {median:.2f} ms, max {max(times):.2f} ms "
        f"(one frame: {FRAME_MS:.1f} ms)"
    )
    return median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    kernel = _kernel(args.repeats)
    browser = None if args.no_browser else _browser(args.repeats)
    ok = kernel < 50 and (browser is None or browser < FRAME_MS)
    print(
        f"target: kernel median < 50 ms, browser median < {FRAME_MS:.1f} ms: "
        f"{'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
