"""Take chapter 9's stored example measurement: `make reference-measurement`.

Run it on a quiet machine (nothing else running: the script refuses when the load average
says other programs share the cores, unless --force). It runs the full measurement
(`roofline.measure.measure()`, no accelerator) and saves it as
roofline/measure/reference_run.json, with a description of the machine; chapter 9 quotes
its figures as those of that machine, beside the reader's own run. Rebuild the book and
regenerate the twins afterwards (`make book notebooks`).

    python tools/measure_reference.py [--quick] [--force] [--machine "a laptop, 8 cores"]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "roofline" / "measure" / "reference_run.json"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="quick mode (for trying the script)")
    p.add_argument("--force", action="store_true", help="measure even on a busy machine")
    p.add_argument("--machine", default="", help="how the page names the machine")
    p.add_argument("--out", default=str(OUT), help="where to save (default: %(default)s)")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from roofline.measure import measure
    from roofline.measure.runner import busy_note, load_average

    cores = os.cpu_count() or 1
    busy = busy_note(load_average(), cores)
    if busy and not args.force:
        print(f"refusing: {busy}. Stop the other programs, or pass --force.", file=sys.stderr)
        return 2
    result = measure(mode="quick" if args.quick else "full", accelerator=False)
    # quiet means quiet when it started: the run's own threads raise the load average while it
    # runs, so a reading taken after it says nothing about other programs
    data = result.to_dict()
    data["host"] = "reference machine"
    data["reference"] = {
        "machine": args.machine or f"{result.cpu}, {cores} cores",
        "quiet": not busy,
    }
    Path(args.out).write_text(json.dumps(data, indent=1), encoding="utf-8")
    print(result.table())
    print(f"saved to {args.out}; now run `make book notebooks`")
    if busy:
        print(f"warning: {busy}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
