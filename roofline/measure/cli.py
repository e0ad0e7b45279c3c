"""``python -m roofline measure``: this machine's roofline as a table, a plot and a JSON file."""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m roofline measure",
        description="Measure this machine's roofline: memory bandwidth of each cache level and "
        "of main memory (STREAM-style numpy kernels), peak fp64/fp32 matmul FLOP/s "
        "(numpy BLAS), a few operations placed on it, and a GPU/TPU where PyTorch or "
        "JAX sees one. Ctrl-C stops early and keeps what was measured.",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a short run (a few tens of seconds) with smaller sizes",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        default="roofline-measured.png",
        help="save the roofline figure here (default: %(default)s)",
    )
    p.add_argument("--no-plot", action="store_true", help="do not make a figure")
    p.add_argument(
        "--json",
        metavar="FILE",
        help="save the full result (raw timings) as JSON; "
        "roofline.measure.load_chip(FILE) builds the Chip back",
    )
    p.add_argument("--max-bytes", metavar="SIZE", help="cap the sweep's working set, e.g. 512MiB")
    p.add_argument("--no-accelerator", action="store_true", help="skip the GPU/TPU measurement")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--tiny", action="store_true", help=argparse.SUPPRESS)  # tests: tiny sizes
    return p


def _size(text: str) -> float:
    from ..units import parse_quantity

    try:
        value, kind = parse_quantity(text if any(c.isalpha() for c in text) else text + " B")
    except ValueError as error:
        raise SystemExit(f"--max-bytes: {error}") from None
    if kind != "size":
        raise SystemExit(f"--max-bytes takes a size such as 512MiB or 2GB, got {text!r}")
    return value


def main(argv=None) -> int:
    """Run the measurement from the command line; returns the exit status."""
    from .runner import IncompleteMeasurement, InsufficientMemoryError, measure

    args = build_parser().parse_args(argv)
    mode = (
        "tiny"
        if args.tiny or os.environ.get("ROOFLINE_MEASURE_TINY") == "1"
        else ("quick" if args.quick else "full")
    )
    try:
        result = measure(
            mode=mode,
            accelerator=not args.no_accelerator,
            max_bytes=_size(args.max_bytes) if args.max_bytes else None,
            progress=False if args.no_progress else None,
        )
    except (InsufficientMemoryError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(result.table())
    if args.json:
        result.save_json(args.json)
        print(
            f"saved the measurement to {args.json} (roofline.measure.load_chip({args.json!r}) "
            "gives the Chip)"
        )
    if not args.no_plot:
        try:
            _ = result.chip  # raises when the run measured no peak or no bandwidth
        except IncompleteMeasurement as error:
            print(f"no plot: {error}", file=sys.stderr)
        else:
            import matplotlib

            matplotlib.use("Agg")
            from .figures import measured_roofline_figure

            fig = measured_roofline_figure(result, dtype="fp64")
            fig.savefig(args.plot, dpi=120, bbox_inches="tight")
            print(f"saved the roofline plot to {args.plot}")
    if result.partial:
        print(
            f"interrupted during {result.interrupted_during}: the result above is partial",
            file=sys.stderr,
        )
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
