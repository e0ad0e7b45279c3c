"""Your own function on the roofline: `place(fn, *args)`.

Three paths, picked from the arguments (or `backend=`):

- **JAX** (`pip install 'roofline[jax]'`): FLOPs, bytes and transcendentals from XLA's cost
  analysis of the compiled function, ``jax.jit(fn).lower(*args).compile().cost_analysis()``
  (source "compiler"). It is best-effort: some ops report no count (None) or -1; it analyses the
  optimized program, adding every remaining operation's FLOPs as if unfused while counting bytes
  only at fusion boundaries.
- **NumPy** (or any Python function): FLOPs and bytes from a formula you pass, `cost=` a
  `roofline.Cost` such as ``rl.matmul(512, 512, 512, "fp32")`` or `flops=` and `bytes=`
  (source "formula").
- **PyTorch** (where torch is installed): FLOPs from ``torch.utils.flop_counter.
  FlopCounterMode`` (source "counter"; ops it does not know count 0), bytes from a dispatch mode
  that adds up every op's input and output sizes (source "counter": it counts no reuse in
  caches and no fusion, so it is the unfused traffic).

Then the time: one warm-up call (which also compiles), then the median of repeated calls, each
waited for (`block_until_ready`, CUDA events on a GPU) (source "measured"). FLOP/s, bytes/s
and intensity follow from these, and the result is placed on the roofline of the device that
ran it: its catalog chip when the device's name is in the catalog
(`roofline.catalog.chip_for_device`), else roofs you pass (`roofs=` a `Chip`, a
`roofline.measure` result or the word "measure" to measure this machine now). A count the tool
could not make is None, shown as "missing" and never plotted.

    >>> import roofline as rl
    >>> r = rl.place(lambda a, b: a * b, 3.0, 4.0, flops=1, bytes=12, repeats=3)
    >>> r.flops, r.bytes, r.sources["flops"]
    (1.0, 12.0, 'formula')
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Placement", "place", "time_calls", "roofs_for", "fusion_time_text"]

#: Where a figure can come from (`Placement.sources`).
SOURCES = ("compiler", "counter", "formula", "measured")

JAX_CAVEAT = (
    "XLA's cost analysis is best-effort: an op it cannot count reports none or -1 (shown as "
    "missing); its FLOPs are every operation's of the optimized program, as if unfused, while "
    "its bytes are only those read and written at fusion boundaries"
)
TORCH_FLOPS_CAVEAT = (
    "FlopCounterMode counts ops it does not know (elementwise ops among them) as 0 FLOPs"
)
TORCH_BYTES_CAVEAT = (
    "bytes are every op's inputs plus outputs: no reuse in caches and no fusion, so the "
    "unfused traffic"
)
FORMULA_CAVEAT = "FLOPs and bytes are the formula you passed, not a count of what ran"
TIME_CAVEAT = (
    "time is the median of repeated calls after a warm-up, each waited for; it includes the "
    "call's dispatch overhead, which dominates for tiny inputs"
)


# ---------------------------------------------------------------- the result


@dataclass(frozen=True)
class Placement:
    """One function placed on the roofline. Counts are None where they are missing.

    flops: floating-point operations of one call (a multiply-add counts 2).
    bytes: bytes moved to and from memory in one call.
    seconds: the measured median time of one call.
    sources: figure name -> where it came from ("compiler", "counter", "formula", "measured";
        "roofs" names the chip or measurement the roofs come from).
    caveats: what the sources above do not count, in words.
    """

    name: str
    flops: float | None
    bytes: float | None
    seconds: float | None
    sources: dict = field(default_factory=dict)
    caveats: tuple[str, ...] = ()
    transcendentals: float | None = None
    device: str = ""
    dtype: str | None = None
    chip: Any = None  # a roofline.Chip, or None when no roofs are known
    roofs_missing: str = ""  # why there are no roofs, and how to pass them
    timings: tuple[float, ...] = ()

    @property
    def flops_per_s(self) -> float | None:
        """Achieved FLOP/s: flops / seconds (None if either is missing)."""
        return _ratio(self.flops, self.seconds)

    @property
    def bytes_per_s(self) -> float | None:
        """Achieved bytes/s: bytes / seconds (None if either is missing)."""
        return _ratio(self.bytes, self.seconds)

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity, FLOPs per byte (None if either count is missing)."""
        return _ratio(self.flops, self.bytes)

    @property
    def ridge(self) -> float | None:
        """The roofs' ridge point in FLOPs/byte for this dtype (None without roofs)."""
        peak = self.peak_flops_per_s
        return None if peak is None else peak / self.chip.hbm_bytes_per_s

    @property
    def peak_flops_per_s(self) -> float | None:
        """The roofs' peak for this dtype (None without roofs or without a figure for it)."""
        if self.chip is None or self.dtype is None or not self.chip.has_peak(self.dtype):
            return None
        return self.chip.peak_flops_per_s(self.dtype)

    @property
    def bound(self) -> str | None:
        """ "compute" when the intensity is at or above the ridge, else "memory"; None when
        the intensity or the roofs are missing."""
        if self.intensity is None or self.ridge is None:
            return None
        return "compute" if self.intensity >= self.ridge else "memory"

    @property
    def roof_flops_per_s(self) -> float | None:
        """The roof at this intensity: min(peak, bandwidth x intensity)."""
        if self.intensity is None or self.peak_flops_per_s is None:
            return None
        return min(self.peak_flops_per_s, self.chip.hbm_bytes_per_s * self.intensity)

    @property
    def fraction_of_roof(self) -> float | None:
        """Achieved FLOP/s over the roof at this intensity."""
        return _ratio(self.flops_per_s, self.roof_flops_per_s)

    def rows(self) -> list[tuple[str, str, str]]:
        """(figure, value, source) rows of the table."""
        from .units import (
            format_bandwidth,
            format_bytes,
            format_flops,
            format_flops_rate,
            format_intensity,
            format_si,
            format_time,
        )

        src = self.sources
        rows = [
            ("FLOPs", _show(self.flops, format_flops), src.get("flops", "")),
            ("bytes", _show(self.bytes, format_bytes), src.get("bytes", "")),
            ("time (median)", _show(self.seconds, format_time), src.get("seconds", "")),
            ("FLOP/s", _show(self.flops_per_s, format_flops_rate), "FLOPs / time"),
            ("bytes/s", _show(self.bytes_per_s, format_bandwidth), "bytes / time"),
            ("intensity", _show(self.intensity, format_intensity), "FLOPs / bytes"),
        ]
        if self.transcendentals is not None:
            count = format_si(self.transcendentals, "ops")
            rows.insert(2, ("transcendentals", count, src.get("transcendentals", "")))
        if self.chip is not None:
            roofs = src.get("roofs", "")
            rows.append(("roof: peak", _show(self.peak_flops_per_s, format_flops_rate), roofs))
            rows.append(("roof: memory", format_bandwidth(self.chip.hbm_bytes_per_s), roofs))
            rows.append(("ridge", _show(self.ridge, format_intensity), "peak / memory"))
            rows.append(("share of the roof", _percent(self.fraction_of_roof), "FLOP/s / roof"))
        rows.append(("bound", self.bound or "unknown", "intensity vs ridge"))
        return rows

    def table(self) -> str:
        """A short plain-text table: each figure, its value and where it came from."""
        rows = self.rows()
        width = max(len(r[0]) for r in rows)
        value_width = max(len(r[1]) for r in rows)
        head = f"{self.name} on {self.device or 'this machine'}"
        if self.dtype:
            head += f" ({self.dtype})"
        lines = [head]
        lines += [f"  {a:<{width}}  {b:>{value_width}}  {c}".rstrip() for a, b, c in rows]
        notes = ((self.roofs_missing,) if self.roofs_missing else ()) + self.caveats
        lines += [f"  note: {c}" for c in notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return self.table()

    def point(self):
        """This result as a `roofline.plots.Point`, or None when a count or the time is missing
        (a missing figure is never plotted as a number)."""
        from .plots import Point

        if self.intensity is None or self.flops_per_s is None:
            return None
        if self.intensity <= 0 or self.flops_per_s <= 0:
            return None
        return Point(self.name, self.intensity, self.flops_per_s)

    def plot(self, roofs=None, **kwargs):
        """This point on the roofline of `roofs` (default: the roofs found by `place`).

        Other keyword arguments go to `roofline.plots.roofline_figure`."""
        from .plots import roofline_figure

        chip = roofs_for(roofs, self.device)[0] if roofs is not None else self.chip
        if chip is None:
            raise ValueError(self.roofs_missing or "no roofs: pass roofs=")
        dtype = self.dtype if self.dtype and chip.has_peak(self.dtype) else None
        if dtype is None:
            raise ValueError(
                f"{chip.name} has no peak for {self.dtype or 'this dtype'} (it has "
                f"{', '.join(chip.dtypes)}); pass roofs= a chip with that figure"
            )
        point = self.point()
        if point is None:
            missing = [n for n in ("flops", "bytes", "seconds") if getattr(self, n) is None]
            raise ValueError(
                f"{self.name}: cannot place it, {', '.join(missing) or 'a count'} missing "
                "(or not positive); pass flops= and bytes= from a formula"
            )
        return roofline_figure(chip, dtype, operations=[point], **kwargs)


#: Below this ratio of two measured times (either way) the book calls them within noise.
NOISE_RATIO = 1.2


def fusion_time_text(fused_seconds: float, unfused_seconds: float) -> str:
    """Chapter 14's sentences on the measured times of a chain jitted (fused) and op by op.

    The measured order can come out either way on a busy machine, so the words follow the
    ratio: fusion helped (unfused / fused >= NOISE_RATIO), the two were within noise, or the
    order came out reversed. No sentence explains a gap the numbers do not show."""
    ratio = unfused_seconds / fused_seconds
    if ratio >= NOISE_RATIO:
        return (
            f"When this page was built the unfused chain took {ratio:.1f} times as long as the "
            "fused one: fusion helped. The unfused chain writes and reads back every "
            "intermediate array, and it dispatches four programs instead of one, a cost that "
            "weighs most on small arrays like these."
        )
    quiet = (
        "On a quiet machine expect the unfused chain to take longer: it moves more bytes "
        "and dispatches four programs instead of one. Run the two cells again to see how "
        "much the times move from run to run."
    )
    if ratio > 1 / NOISE_RATIO:
        return (
            f"When this page was built the two times were within {NOISE_RATIO:.1f} times of "
            f"each other (unfused / fused = {ratio:.2f}): within the noise of timing a few "
            "milliseconds on a machine that runs other programs too. " + quiet
        )
    return (
        f"When this page was built the unfused chain came out faster ({ratio:.1f} times "
        "the fused chain's time), the reverse of what its extra bytes predict: the machine "
        "was running other programs, and a few milliseconds of timing is at their mercy. " + quiet
    )


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def _percent(fraction) -> str:
    """A share as a percentage with 2 significant digits ("missing" when None)."""
    return "missing" if fraction is None else f"{100 * fraction:.2g} %"


def _show(value, formatter) -> str:
    return "missing" if value is None else formatter(value)


def count_or_none(value):
    """A count as float, or None when it is missing, negative, NaN or infinite (XLA reports -1
    for what it cannot count)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return value


# ---------------------------------------------------------------- timing


def time_calls(
    call,
    repeats: int | None = None,
    *,
    warmup: int = 1,
    clock=time.perf_counter,
    budget_s: float = 0.2,
    max_repeats: int = 100,
    progress=None,
    timer=None,
) -> list[float]:
    """Seconds of each timed call of `call()` (which must wait for its own result).

    `warmup` untimed calls first (compilation, caches, lazy allocation). Then `repeats` timed
    calls, or with repeats=None, calls until `budget_s` seconds are spent (at least 3, at most
    `max_repeats`). `clock` returns seconds (tests pass a fake one). `progress`: a stream to
    print progress to when a call is slow (None: stderr once calls take over a second).
    `timer`: instead of the clock, a function that times one call and returns its seconds
    (CUDA events on a GPU).
    """
    if repeats is not None and (
        isinstance(repeats, bool) or int(repeats) != repeats or repeats < 1
    ):
        raise ValueError(f"repeats must be a whole number >= 1, got {repeats!r}")
    if isinstance(warmup, bool) or int(warmup) != warmup or warmup < 0:
        raise ValueError(f"warmup must be a whole number >= 0, got {warmup!r}")
    for _ in range(int(warmup)):
        call()
    times: list[float] = []
    target = int(repeats) if repeats is not None else max_repeats
    while len(times) < target:
        if timer is not None:
            times.append(float(timer(call)))
        else:
            start = clock()
            call()
            times.append(clock() - start)
        if repeats is None and len(times) >= 3 and sum(times) >= budget_s:
            break
        if times[-1] > 1.0:
            stream = progress if progress is not None else sys.stderr
            print(f"timed {len(times)} of {target} calls", file=stream, flush=True)
    return times


def _block(out):
    """Wait for an asynchronous result (JAX arrays, tuples and dicts of them)."""
    if hasattr(out, "block_until_ready"):
        out.block_until_ready()
    elif isinstance(out, (tuple, list)):
        for item in out:
            _block(item)
    elif isinstance(out, dict):
        for item in out.values():
            _block(item)
    return out


# ---------------------------------------------------------------- the roofs


def roofs_for(roofs, device: str):
    """(chip or None, source words, why missing) for `roofs` on `device`.

    roofs: None (the catalog chip named like `device`), a `Chip`, a catalog name, a
    `roofline.measure.MeasureResult` (its all-thread chip), a saved measurement's path, or
    "measure" (`roofline.measure.measure(quick=True)` of this machine now: seconds to a minute).
    """
    from .catalog import chip_for_device, get_chip
    from .hardware import Chip

    if roofs is None:
        chip = chip_for_device(device)
        if chip is not None:
            return chip, f"catalog: {chip.name}", ""
        why = (
            f"device {device!r} has no catalog entry, so its peak FLOP/s and memory bandwidth "
            "are missing: pass roofs= a Chip, a catalog name, a roofline.measure result, or "
            "roofs='measure' to measure this machine"
        )
        return None, "", why
    if isinstance(roofs, Chip):
        return roofs, f"given: {roofs.name}", ""
    if hasattr(roofs, "chip_all_threads"):
        chip = roofs.chip_all_threads
        return chip, f"measured: {chip.name}", ""
    if isinstance(roofs, str) and roofs == "measure":
        from .measure import measure

        chip = measure(quick=True, progress=False, accelerator=False).chip_all_threads
        return chip, f"measured now: {chip.name}", ""
    if isinstance(roofs, str) and roofs.endswith(".json"):
        from .measure import load_result

        chip = load_result(roofs).chip_all_threads
        return chip, f"measured: {chip.name}", ""
    if isinstance(roofs, str):
        chip = get_chip(roofs)
        return chip, f"catalog: {chip.name}", ""
    raise TypeError(
        f"roofs must be a Chip, a catalog name, a roofline.measure result, a saved "
        f"measurement (.json) or 'measure', got {type(roofs).__name__}"
    )


# ---------------------------------------------------------------- the backends


def _dtype_of(values) -> str | None:
    """The book's name for the dtype of the first floating-point array among `values`."""
    from .dtypes import canonical_dtype

    for value in values:
        dtype = getattr(value, "dtype", None)
        if dtype is None:
            continue
        name = str(dtype).replace("torch.", "")
        if "float" in name:
            try:
                return canonical_dtype(name)
            except (KeyError, ValueError):
                return None
    return None


def _missing_backend(name: str, extra: str) -> ImportError:
    return ImportError(
        f"{name} is not installed: pip install {extra} (or time a NumPy function with "
        "rl.place(fn, *args, cost=rl.matmul(...)) or flops= and bytes= from a formula)"
    )


def _jax_counts(fn, args, kwargs) -> dict:
    """Compile `fn` for `args` and read XLA's cost analysis."""
    try:
        import jax
    except ImportError:
        raise _missing_backend("JAX", "'roofline[jax]'") from None
    try:
        compiled = jax.jit(fn).lower(*args, **kwargs).compile()
    except Exception as exc:
        raise ValueError(
            f"JAX could not trace {_name(fn)} with these arguments ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}). Pass arrays or numbers "
            "(jnp.ones((512, 512))); fix sizes and flags with functools.partial"
        ) from exc
    analysis = cost_dict(compiled.cost_analysis())
    device = jax.devices()[0]
    kind = device.device_kind if device.platform != "cpu" else "cpu"
    return {
        "flops": count_or_none(analysis.get("flops")),
        "bytes": count_or_none(analysis.get("bytes accessed")),
        "transcendentals": count_or_none(analysis.get("transcendentals")),
        "call": lambda: _block(compiled(*args, **kwargs)),
        "device": kind,
        "source": "compiler",
        "caveats": (JAX_CAVEAT,),
        "timer": None,
    }


def cost_dict(analysis) -> dict:
    """XLA's cost analysis as one dict: older JAX versions returned a list with one dict
    per computation, later versions the dict itself; None or an empty list give {}."""
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else {}
    return dict(analysis) if analysis else {}


def _jax_op_counts(jax, eqn) -> dict:
    """XLA's cost analysis of one jaxpr equation compiled on its own (as eager JAX runs it)."""
    shapes = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in eqn.invars]

    def one_op(*xs):
        return eqn.primitive.bind(*xs, **eqn.params)

    return cost_dict(jax.jit(one_op).lower(*shapes).compile().cost_analysis())


def _jax_unjitted_counts(fn, args, kwargs) -> dict:
    """Op by op, as JAX runs `fn` without jit: each operation of its jaxpr compiled alone, its
    counts summed, so every intermediate array is written and read again (no fusion)."""
    counts = _jax_counts(fn, args, kwargs)  # checks that it traces, finds the device
    import jax

    jaxpr = jax.make_jaxpr(lambda *a: fn(*a, **kwargs))(*args).jaxpr
    totals = {"flops": 0.0, "bytes accessed": 0.0, "transcendentals": 0.0}
    uncounted: dict[str, list[str]] = {key: [] for key in totals}
    for eqn in jaxpr.eqns:
        analysis = _jax_op_counts(jax, eqn)
        for key in totals:
            value = count_or_none(analysis.get(key))
            if value is None:
                uncounted[key].append(str(eqn.primitive))
            else:
                totals[key] += value
    n = len(jaxpr.eqns)
    caveats = [JAX_CAVEAT, f"op by op: {n} operations, each compiled alone, counts summed"]
    if uncounted["flops"]:
        caveats.append(
            f"{', '.join(sorted(set(uncounted['flops'])))} reported no FLOP count (added as 0)"
        )
    counts.update(
        flops=None if len(uncounted["flops"]) == n else totals["flops"],
        bytes=None if len(uncounted["bytes accessed"]) == n else totals["bytes accessed"],
        transcendentals=totals["transcendentals"] or counts["transcendentals"],
        call=lambda: _block(fn(*args, **kwargs)),
        caveats=tuple(caveats),
    )
    return counts


def _torch_tensors(tree):
    import torch

    if isinstance(tree, torch.Tensor):
        yield tree
    elif isinstance(tree, (list, tuple)):
        for item in tree:
            yield from _torch_tensors(item)
    elif isinstance(tree, dict):
        for item in tree.values():
            yield from _torch_tensors(item)


def _torch_counts(fn, args, kwargs) -> dict:
    """FLOPs from FlopCounterMode, bytes from every op's inputs and outputs."""
    try:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        raise _missing_backend("PyTorch", "torch") from None

    class _ByteCounter(TorchDispatchMode):
        total = 0

        def __torch_dispatch__(self, func, types, f_args=(), f_kwargs=None):
            out = func(*f_args, **(f_kwargs or {}))
            seen = list(_torch_tensors((f_args, f_kwargs or {}, out)))
            self.total += sum(t.numel() * t.element_size() for t in seen)
            return out

    with torch.no_grad(), FlopCounterMode(display=False) as flop_mode, _ByteCounter() as byte_mode:
        fn(*args, **kwargs)
    tensors = list(_torch_tensors((args, kwargs)))
    cuda = any(t.is_cuda for t in tensors)
    device = torch.cuda.get_device_name(tensors[0].device) if cuda else "cpu"
    timer = _cuda_event_timer(torch) if cuda else None
    return {
        "flops": count_or_none(flop_mode.get_total_flops()),
        "bytes": count_or_none(byte_mode.total),
        "transcendentals": None,
        "call": lambda: fn(*args, **kwargs),
        "device": device,
        "source": "counter",
        "caveats": (TORCH_FLOPS_CAVEAT, TORCH_BYTES_CAVEAT),
        "timer": timer,
    }


def _cuda_event_timer(torch):
    """A timer of one call with CUDA events: (call) -> seconds on the GPU."""

    def timed(call) -> float:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3  # elapsed_time is in milliseconds

    return timed


def _formula_counts(fn, args, kwargs, cost, flops, nbytes) -> dict:
    if cost is not None:
        if callable(cost):
            cost = cost(*args, **kwargs)
        if not hasattr(cost, "flops") or not hasattr(cost, "bytes"):
            raise TypeError(
                "cost must be a roofline.Cost (rl.matmul(B, D, F, 'fp32'), ...) or a "
                "function of the arguments returning one"
            )
        flops, nbytes = cost.flops, cost.bytes
    dtype = getattr(cost, "dtype", None) or _dtype_of(list(args) + list(kwargs.values()))
    if flops is None or nbytes is None:
        raise ValueError("give both flops= and bytes= (or cost=)")
    return {
        "flops": count_or_none(flops),
        "bytes": count_or_none(nbytes),
        "transcendentals": None,
        "call": lambda: _block(fn(*args, **kwargs)),
        "device": "cpu",
        "source": "formula",
        "dtype": dtype,
        "caveats": (FORMULA_CAVEAT,),
        "timer": None,
    }


def _name(fn) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _pick_backend(backend, args, kwargs, formula: bool) -> str:
    if backend is not None:
        if backend not in ("jax", "numpy", "torch"):
            raise ValueError(f"backend must be 'jax', 'numpy' or 'torch', got {backend!r}")
        return backend
    if formula:
        return "numpy"
    torch = sys.modules.get("torch")
    values = list(args) + list(kwargs.values())
    if torch is not None and any(isinstance(v, torch.Tensor) for v in values):
        return "torch"
    return "jax"


# ---------------------------------------------------------------- place


def place(
    fn,
    *args,
    roofs=None,
    cost=None,
    flops=None,
    bytes=None,
    backend: str | None = None,
    repeats: int | None = None,
    warmup: int = 1,
    clock=time.perf_counter,
    name: str | None = None,
    jit: bool = True,
    **kwargs,
) -> Placement:
    """Count, time and place `fn(*args, **kwargs)` on the roofline (see the module's doc).

    roofs: see `roofs_for` (default: the catalog chip of the device that ran it).
    cost / flops, bytes: a formula (NumPy path); backend: "jax", "numpy" or "torch" (default:
    torch for torch tensors, NumPy when a formula is given, else JAX).
    repeats: timed calls (default: as many as fit in 0.2 s, 3 to 100); warmup: untimed calls
    first; clock: seconds (tests inject a fake one).
    jit: JAX only; False runs `fn` op by op as eager JAX does (each operation its own program,
    no fusion) and sums the compiler's counts of each operation.
    """
    if not callable(fn):
        raise TypeError(
            f"place() needs a function to call, got {type(fn).__name__}; for a profile "
            "trace use rl.place_trace(path)"
        )
    formula = cost is not None or flops is not None or bytes is not None
    chosen = _pick_backend(backend, args, kwargs, formula)
    if chosen == "jax":
        counts = (_jax_counts if jit else _jax_unjitted_counts)(fn, args, kwargs)
    elif chosen == "torch":
        counts = _torch_counts(fn, args, kwargs)
    else:
        counts = _formula_counts(fn, args, kwargs, cost, flops, bytes)
    times = time_calls(counts["call"], repeats, warmup=warmup, clock=clock, timer=counts["timer"])
    chip, roofs_source, missing = roofs_for(roofs, counts["device"])
    sources = {"flops": counts["source"], "bytes": counts["source"], "seconds": "measured"}
    if counts["transcendentals"] is not None:
        sources["transcendentals"] = counts["source"]
    if roofs_source:
        sources["roofs"] = roofs_source
    return Placement(
        name=name or _name(fn),
        flops=counts["flops"],
        bytes=counts["bytes"],
        seconds=statistics.median(times),
        sources=sources,
        caveats=tuple(counts["caveats"]) + (TIME_CAVEAT,),
        transcendentals=counts["transcendentals"],
        device=counts["device"],
        dtype=counts.get("dtype") or _dtype_of(list(args) + list(kwargs.values())),
        chip=chip,
        roofs_missing=missing,
        timings=tuple(times),
    )
