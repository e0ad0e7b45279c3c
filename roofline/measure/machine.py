"""The machine a measurement runs on: its memory (available, physical), last-level cache,
CPU model, how busy it is (load average) and the largest matmul that fits.

Part of `roofline.measure` (the run is in `runner`, which re-exports these names).
"""

from __future__ import annotations

import os
import platform

from ..units import format_bytes


class InsufficientMemoryError(MemoryError):
    """The requested sizes need more memory than this machine has free."""


def available_memory_bytes() -> int:
    """Memory free for new allocations: MemAvailable from /proc/meminfo, else SC_AVPHYS_PAGES."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**34  # unknown (macOS, Windows): assume 16 GiB and let the OS object


def physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 2**34


def last_level_cache_bytes(default: int = 32 * 2**20) -> int:
    """The largest CPU cache the OS reports (a VM may report the host's). `default` if unknown."""
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in os.listdir(base):
            try:
                with open(os.path.join(base, entry, "size"), encoding="ascii") as f:
                    text = f.read().strip()
            except OSError:
                continue
            mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:].upper(), 1)
            digits = text[:-1] if mult != 1 else text
            if digits.isdigit():
                best = max(best, int(digits) * mult)
    except OSError:
        pass
    if not best:
        try:
            best = max(0, os.sysconf("SC_LEVEL3_CACHE_SIZE"))
        except (ValueError, OSError, AttributeError):
            best = 0
    return best or default


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def check_memory(
    needed_bytes: float,
    available: float | None = None,
    what: str = "this run",
    fraction: float = 0.8,
) -> None:
    """Raise InsufficientMemoryError, before anything is allocated, if `needed_bytes` will not fit."""
    available = available_memory_bytes() if available is None else available
    if needed_bytes > fraction * available:
        raise InsufficientMemoryError(
            f"{what} needs {format_bytes(needed_bytes, binary=True)} of arrays at once, but only "
            f"{format_bytes(available, binary=True)} of memory is free (and {int(100 * fraction)} % "
            "of that is the most this tool will use). Use the quick mode (--quick, quick=True) or a "
            "smaller sweep (--max-bytes, max_bytes=...), or close other programs."
        )


def load_average() -> float | None:
    """The 1-minute load average when the run starts (None where the OS has none): near 0
    on a quiet machine; near the core count or above, other programs share the cores."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def busy_note(load: float | None, cores: int) -> str:
    """A sentence on how busy the machine was, from its load average ('' when quiet/unknown)."""
    if load is None or load < 0.5 * max(cores, 1):
        return ""
    return (
        f"the load average was {load:.1f} on {cores} core{'s' if cores > 1 else ''} when it "
        "started: other programs were running, so the figures are lower and noisier than a "
        "quiet run's"
    )


def largest_matmul_n(available_bytes: float | None = None) -> int:
    """The largest power-of-two n whose three fp64 n x n matrices take at most a quarter of
    the available memory (at least 64)."""
    available = available_memory_bytes() if available_bytes is None else available_bytes
    n = 64
    while 3 * 8 * (2 * n) ** 2 <= available / 4 and n < 2**15:
        n *= 2
    return n
