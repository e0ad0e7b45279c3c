"""GPU/TPU check: measure the accelerator PyTorch or JAX sees and compare with the catalog.

    python benchmarks/gpu_check.py            # full sizes (bf16 matmul n=8192, 1 GiB copy)
    python benchmarks/gpu_check.py --quick    # smaller sizes

Self-contained (only this repository, numpy and whatever of PyTorch/JAX is already
installed); installs nothing. Exit status: 0 measured, 2 nothing to measure (the reason is
printed), 1 the measurement failed. Runs well under 3 minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    try:
        from roofline.measure.accelerator import measure_accelerator
    except ImportError as error:
        print(
            f"gpu_check: cannot import roofline ({error}); run from the repository with numpy installed"
        )
        return 2
    start = time.perf_counter()
    result, message = measure_accelerator(quick=args.quick)
    print(message)
    if result is None:
        return 2 if "skipped" in message else 1
    print(result.report())
    frac_f, frac_b = result.fraction_of_peak(), result.fraction_of_bandwidth()
    print(
        f"achieved/peak FLOP/s: {frac_f if frac_f is None else round(frac_f, 3)}; "
        f"achieved/spec bandwidth: {frac_b if frac_b is None else round(frac_b, 3)}; "
        f"{time.perf_counter() - start:.1f} s"
    )
    for frac, what in ((frac_f, "FLOP/s"), (frac_b, "bandwidth")):
        if frac is not None and frac > 1.02:
            print(
                f"WARNING: achieved {what} is above the catalog figure: check the catalog entry "
                "or the byte/FLOP counting"
            )
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
