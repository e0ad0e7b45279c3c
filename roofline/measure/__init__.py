"""Measure your own roofline: this machine's memory bandwidths and peak FLOP/s.

    >>> from roofline.measure import measure
    >>> result = measure(quick=True)      # a few tens of seconds  # doctest: +SKIP
    >>> print(result.table())                                # doctest: +SKIP
    >>> chip = result.chip    # a roofline.Chip: use it like a catalog chip  # doctest: +SKIP

The same from a shell: ``python -m roofline measure --quick``. Parts:
`bandwidth` (STREAM-style numpy kernels), `matmul` (BLAS peak), `analysis`
(plateau detection, pure), `accelerator` (GPU/TPU through PyTorch or JAX, where
present), `runner` (the run and its result), `cli`.
"""

from .accelerator import (
    AcceleratorResult,
    catalog_chip_for,
    detect_accelerator,
    measure_accelerator,
)
from .analysis import Levels, Plateau, combine_best, find_plateaus, memory_levels
from .bandwidth import (
    KERNELS,
    BandwidthSample,
    bytes_counted,
    measure_kernel,
    sweep_sizes,
    working_set_bytes,
)
from .matmul import MatmulSample, measure_matmul
from .runner import (
    IncompleteMeasurement,
    InsufficientMemoryError,
    MeasureResult,
    OperationSample,
    available_memory_bytes,
    check_memory,
    last_level_cache_bytes,
    load_chip,
    load_result,
    measure,
    settings_for,
)

__all__ = [
    "measure",
    "MeasureResult",
    "OperationSample",
    "load_result",
    "load_chip",
    "IncompleteMeasurement",
    "InsufficientMemoryError",
    "check_memory",
    "available_memory_bytes",
    "last_level_cache_bytes",
    "settings_for",
    "KERNELS",
    "BandwidthSample",
    "bytes_counted",
    "working_set_bytes",
    "measure_kernel",
    "sweep_sizes",
    "MatmulSample",
    "measure_matmul",
    "Plateau",
    "Levels",
    "find_plateaus",
    "memory_levels",
    "combine_best",
    "AcceleratorResult",
    "catalog_chip_for",
    "detect_accelerator",
    "measure_accelerator",
]
