"""Speed of Part 5's tools (targets from issue 32, printed, never asserted).

- `rl.place` on a small JAX function, compilation included, in a fresh process: target < 2 s
  (this includes `import jax`). Printed with its parts: `import jax`, `import roofline`, the
  first array (JAX starts its CPU backend) and the `rl.place` call itself.
- `rl.place_trace` on a synthetic 10 MB Chrome trace (nested linear/addmm, elementwise and
  unknown operators): target < 2 s.
"""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Run in a fresh process; prints the seconds of each step, then of all of them.
PLACE = (
    "import time; c = [time.perf_counter()]; import jax, jax.numpy as jnp; "
    "c.append(time.perf_counter()); import roofline as rl; c.append(time.perf_counter()); "
    "x = jnp.ones((256, 256)).block_until_ready(); c.append(time.perf_counter()); "
    "rl.place(lambda a: jnp.tanh(a @ a), x, repeats=5); c.append(time.perf_counter()); "
    "print(*[b - a for a, b in zip(c, c[1:])], c[-1] - c[0])"
)
PLACE_STEPS = (
    "import jax",
    "import roofline",
    "first array (JAX's backend starts)",
    "rl.place call",
)


def place_in_fresh_process() -> dict:
    """Seconds of each step of PLACE (PLACE_STEPS), their total ("total") and the process's
    wall time from start to exit, interpreter start-up included ("process")."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", PLACE], capture_output=True, text=True, check=True)
    process_s = time.perf_counter() - start
    *steps, total = map(float, out.stdout.strip().splitlines()[-1].split())
    return dict(zip(PLACE_STEPS, steps), total=total, process=process_s)


def _event(name, ts, dur, dims, types):
    return {
        "ph": "X",
        "cat": "cpu_op",
        "name": name,
        "pid": 1,
        "tid": 1,
        "ts": ts,
        "dur": dur,
        "args": {"Input Dims": dims, "Input type": types},
    }


def synthetic_trace(target_bytes: int = 10_000_000) -> dict:
    """A trace of about `target_bytes` of JSON: repeated linear (with addmm inside), gelu and
    dropout events on one thread."""
    events, ts = [], 0
    block = [
        ("aten::linear", 100, [[64, 128], [256, 128], [256]], ["float"] * 3),
        ("aten::addmm", 90, [[256], [64, 128], [128, 256], [], []], ["float"] * 3 + [""] * 2),
        ("aten::gelu", 10, [[64, 256]], ["float"]),
        ("aten::dropout", 10, [[64, 256], [], []], ["float", "Scalar", "Scalar"]),
    ]
    size = len(json.dumps([_event(n, 0, d, dims, t) for n, d, dims, t in block]))
    for _ in range(target_bytes // size):
        for i, (name, dur, dims, types) in enumerate(block):
            start = ts + (5 if i == 1 else 0)
            events.append(_event(name, start, dur, dims, types))
            if i != 0:
                ts = start + dur + 1
        ts += 1
    return {"traceEvents": events}


def main() -> dict:
    place = place_in_fresh_process()
    import roofline as rl

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        path.write_text(json.dumps(synthetic_trace()))
        mb = path.stat().st_size / 1e6
        start = time.perf_counter()
        result = rl.place_trace(path)
        trace_s = time.perf_counter() - start
    print(
        f"rl.place, small JAX function, fresh process incl. import jax: {place['total']:.2f} s "
        f"(target < 2 s; {place['process']:.2f} s with the interpreter's start and exit)"
    )
    for step in PLACE_STEPS:
        print(f"    {place[step]:5.2f} s  {step}")
    print(
        f"rl.place_trace, {mb:.1f} MB trace, {len(result)} operators: {trace_s:.2f} s "
        "(target < 2 s)"
    )
    return {"place_s": place["total"], "place_trace_s": trace_s, "trace_mb": mb, "place": place}


if __name__ == "__main__":
    main()
