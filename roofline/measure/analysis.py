"""Pure analysis of a bandwidth sweep: find the plateaus (cache levels, main memory).

Everything here takes plain numbers (working-set sizes in bytes, bandwidths in
bytes/s) and does no timing, so tests can feed it any curve they like.

How the plateaus are found (`find_plateaus`):

1. Smooth the curve with a running median of three points, so that one noisy
   point (another process woke up) does not split a plateau.
2. Drop the *overhead ramp*: in a memory hierarchy bandwidth never rises as the
   working set grows, so the small sizes that stay more than the tolerance below
   the highest (smoothed) bandwidth are limited by the fixed cost of each numpy
   call, not by memory.
3. Cut the rest into runs, left to right, extending a run while its largest and
   smallest bandwidths stay within a factor ``1 + tolerance`` of each other.
4. A run of at least ``min_points`` points is a plateau; shorter runs are the
   slopes between levels. Neighbouring plateaus whose medians are within the
   tolerance are merged, and a short last run within the tolerance of the plateau
   just before it continues that plateau. A plateau's bandwidth is the median of its
   raw points.

The plateau at the largest sizes is main memory, if the last run is long enough
to be a plateau (otherwise the sweep stopped before the caches ran out and
`Levels.main_memory_reached` is False).

5. A plateau no faster than a level further out (a larger working set) is not a
   memory level: data further from the core never moves faster. It is kept apart,
   in `Levels.dips`, so that a table can show it and say why it is not counted.
   (Chapter 9's reference run has one: copy, scale and add all slow to about
   13 GB/s at 108-181 MiB, then copy alone speeds up again to 22 GB/s beyond.)
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

__all__ = [
    "TimedSample",
    "Plateau",
    "Levels",
    "find_plateaus",
    "memory_levels",
    "running_median3",
    "combine_best",
]


class TimedSample:
    """For a sample with `times` (seconds per repeat): its best and median time."""

    times: list

    @property
    def best_time(self) -> float:
        return min(self.times)

    @property
    def median_time(self) -> float:
        return float(statistics.median(self.times))


@dataclass(frozen=True)
class Plateau:
    """A flat stretch of the bandwidth curve: a memory level."""

    bytes_per_s: float  # median bandwidth of the points on it
    min_working_set: float  # smallest working set (bytes) on it
    max_working_set: float  # largest working set (bytes) on it
    points: int

    def to_dict(self) -> dict:
        return {
            "bytes_per_s": self.bytes_per_s,
            "min_working_set": self.min_working_set,
            "max_working_set": self.max_working_set,
            "points": self.points,
        }


@dataclass(frozen=True)
class Levels:
    """What a sweep says about the memory hierarchy."""

    caches: tuple  # Plateau per cache level, fastest (smallest) first
    main_memory: Plateau  # the last plateau, or the sweep's last run when it never levelled off
    main_memory_reached: bool
    overhead_points: int  # points dropped as call-overhead-bound at small sizes
    dips: tuple = ()  # plateaus no faster than a level further out: not levels (step 5)

    @property
    def plateaus(self) -> tuple:
        return self.caches + ((self.main_memory,) if self.main_memory is not None else ())

    def named(self) -> list[tuple[str, float]]:
        """(name, bytes/s) for each cache level, named by the working sets it held."""
        from ..units import format_bytes

        return [
            (f"cache (≤ {format_bytes(p.max_working_set, binary=True)})", p.bytes_per_s)
            for p in self.caches
        ]


def _median(values) -> float:
    s = sorted(values)
    m = len(s) // 2
    return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])


def running_median3(values) -> list[float]:
    """Median of each point and its two neighbours (end points: of the two there are)."""
    v = [float(x) for x in values]
    if len(v) < 3:
        return v
    out = [_median(v[:2])]
    out += [_median(v[i - 1 : i + 2]) for i in range(1, len(v) - 1)]
    out.append(_median(v[-2:]))
    return out


def combine_best(curves: dict, same_size: float = 0.01) -> tuple[list[float], list[float]]:
    """One curve from several kernels: at each working set, the highest bandwidth any reached.

    `curves` maps a kernel name to (working sets, bandwidths). Sizes within a
    relative `same_size` of each other (arrays rounded to whole elements) count as
    one size, named by the smallest of them.
    """
    points = sorted(
        (float(ws), float(bw)) for sizes, bws in curves.values() for ws, bw in zip(sizes, bws)
    )
    out_sizes: list[float] = []
    out_bw: list[float] = []
    for ws, bw in points:
        if out_sizes and ws <= out_sizes[-1] * (1 + same_size):
            out_bw[-1] = max(out_bw[-1], bw)
        else:
            out_sizes.append(ws)
            out_bw.append(bw)
    return out_sizes, out_bw


def _check_curve(sizes, bandwidths):
    sizes = [float(s) for s in sizes]
    bandwidths = [float(b) for b in bandwidths]
    if len(sizes) != len(bandwidths):
        raise ValueError(
            f"{len(sizes)} sizes but {len(bandwidths)} bandwidths; give one of each per point"
        )
    if not sizes:
        raise ValueError("the sweep is empty: measure at least one size")
    for x in sizes + bandwidths:
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"sizes and bandwidths must be positive and finite, got {x!r}")
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError("working-set sizes must be strictly increasing")
    return sizes, bandwidths


def find_plateaus(sizes, bandwidths, tolerance: float = 0.25, min_points: int = 3) -> list[Plateau]:
    """The plateaus of a bandwidth-vs-working-set curve, smallest working set first.

    `sizes`: working sets in bytes, strictly increasing; `bandwidths`: bytes/s.
    See the module docstring for the method.
    """
    return list(memory_levels(sizes, bandwidths, tolerance, min_points).plateaus)


def _runs(smooth, start, tolerance):
    runs = []
    i = start
    while i < len(smooth):
        lo = hi = smooth[i]
        j = i + 1
        while j < len(smooth):
            lo2, hi2 = min(lo, smooth[j]), max(hi, smooth[j])
            if hi2 > lo2 * (1 + tolerance):
                break
            lo, hi = lo2, hi2
            j += 1
        runs.append((i, j))
        i = j
    return runs


def memory_levels(sizes, bandwidths, tolerance: float = 0.25, min_points: int = 3) -> Levels:
    """Cache plateaus and the main-memory plateau of a sweep (see the module docstring)."""
    sizes, bandwidths = _check_curve(sizes, bandwidths)
    if not tolerance > 0:
        raise ValueError("tolerance must be positive, e.g. 0.25 for 25 %")
    if min_points < 1:
        raise ValueError("min_points must be at least 1")
    smooth = running_median3(bandwidths)
    peak = max(smooth)
    top = next(i for i, v in enumerate(smooth) if v * (1 + tolerance) >= peak)
    runs = _runs(smooth, top, tolerance)
    kept = [r for r in runs if r[1] - r[0] >= min_points]
    # merge neighbouring plateaus at (nearly) the same level: a noisy point split them
    merged: list[list[int]] = []
    for i, j in kept:
        if merged:
            pi, pj = merged[-1]
            a = _median(bandwidths[pi:pj])
            b = _median(bandwidths[i:j])
            if max(a, b) <= min(a, b) * (1 + tolerance):
                merged[-1] = [pi, j]
                continue
        merged.append([i, j])
    _extend_to_the_end(merged, runs, bandwidths, tolerance)
    plateaus = [Plateau(_median(bandwidths[i:j]), sizes[i], sizes[j - 1], j - i) for i, j in merged]
    last_run = runs[-1]
    reached = bool(merged) and merged[-1][1] == len(sizes)
    if reached:
        caches, main = plateaus[:-1], plateaus[-1]
    else:  # the sweep ended on a slope: the caches had not run out yet
        caches, main = (
            plateaus,
            Plateau(
                _median(bandwidths[last_run[0] : last_run[1]]),
                sizes[last_run[0]],
                sizes[last_run[1] - 1],
                last_run[1] - last_run[0],
            ),
        )
    levels, dips = _split_dips(caches, main)
    return Levels(levels, main, reached, top, dips)


def _extend_to_the_end(merged: list, runs: list, bandwidths, tolerance: float) -> None:
    """A last run too short to be a plateau, right after the last plateau and within the
    tolerance of it, continues that plateau: the sweep's largest sizes are still on it (a
    noisy point cut the run), so main memory was reached."""
    if not merged or merged[-1][1] == len(bandwidths):
        return
    i, j = runs[-1]
    if merged[-1][1] != i:
        return
    a, b = _median(bandwidths[merged[-1][0] : merged[-1][1]]), _median(bandwidths[i:j])
    if max(a, b) <= min(a, b) * (1 + tolerance):
        merged[-1][1] = j


def _split_dips(caches, main: Plateau) -> tuple[tuple, tuple]:
    """(levels, dips): the cache plateaus faster than every plateau further out, and the
    others (step 5 of the module docstring), each smallest working set first."""
    levels: list[Plateau] = []
    dips: list[Plateau] = []
    floor = main.bytes_per_s  # the fastest level further out than the plateau looked at
    for p in reversed(caches):
        if p.bytes_per_s > floor:
            levels.insert(0, p)
            floor = p.bytes_per_s
        else:
            dips.insert(0, p)
    return tuple(levels), tuple(dips)
