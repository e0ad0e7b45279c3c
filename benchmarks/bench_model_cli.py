"""How long `python -m roofline model ... --train` takes from the shell (target: well under 1 s).

Each run is a fresh Python process (start-up and `import roofline` included); prints the
median of several runs, and the in-process time of `training_step` alone.
"""

import statistics
import subprocess
import sys
import time

RUNS = 7
COMMAND = [
    sys.executable,
    "-m",
    "roofline",
    "model",
    "Llama 3 70B",
    "--chip",
    "H100",
    "--chips",
    "8192",
    "--train",
    "--tokens-per-step",
    "16M",
    "--seq-len",
    "8192",
    "--layout",
    "dp=64,tp=8,pp=16",
]


def main() -> dict:
    runs = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(COMMAND, capture_output=True, check=True)
        runs.append(time.perf_counter() - start)
    import roofline as rl

    start = time.perf_counter()
    for _ in range(100):
        rl.training_step("Llama 3 70B", "H100", 8192, 2**24, 8192, "dp=64,tp=8,pp=16")
    in_process = (time.perf_counter() - start) / 100
    result = {"cli_median_s": statistics.median(runs), "training_step_s": in_process}
    print(
        f"python -m roofline model ... --train: median {result['cli_median_s'] * 1e3:.0f} ms "
        f"(min {min(runs) * 1e3:.0f}, max {max(runs) * 1e3:.0f}) over {RUNS} runs (target < 1 s); "
        f"training_step in process {in_process * 1e6:.0f} us"
    )
    return result


if __name__ == "__main__":
    main()
