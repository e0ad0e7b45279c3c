"""roofline: the shared package behind the book *Rooflines*.

One source of truth for hardware figures (`get_chip`), cost formulas (`matmul`,
`dot`, ...), time estimates (`estimate`), unit formatting (`format_time`, ...),
plots (`roofline.plots`), widgets (`roofline.widgets`; their web version: `roofline.web`) and exercise checking
(`roofline.exercises`). Heavy libraries (matplotlib, sympy, ipywidgets) are
imported only when a function that needs them is first called.
"""

from .catalog import CATALOG, get_chip, list_chips, register_chip
from .collectives import (
    COLLECTIVES,
    TOPOLOGIES,
    collective_bytes_per_link,
    collective_steps,
    collective_time,
    hierarchical_all_reduce_floor,
    hierarchical_all_reduce_terms,
    hierarchical_all_reduce_time,
    in_switch_reduction_available,
    megatron_mlp_times,
    multi_axis_collective_time,
)
from .costs import (
    Cost,
    ShardedMatmul,
    dot,
    elementwise,
    matmul,
    matmul_exact_flops,
    per_example_matmul,
    sharded_matmul,
    tiled_matmul,
)
from .dtypes import DTYPE_BYTES, bytes_per_element, canonical_dtype
from .estimate import (
    BOUNDS,
    Estimate,
    Term,
    all_reduce_time,
    attainable_flops_per_s,
    check_below_roof,
    critical_batch_size,
    critical_intensity,
    estimate,
    exact_critical_batch_size,
    sharded_critical_D,
    sharded_estimate,
    sharded_topology,
)
from .hardware import Chip, Link, Peak, Source
from .models import LayerMatmul, ModelConfig, get_model, list_models, register_model
from .parallelism import LAYOUT_AXES, TrainingStep, parse_layout, training_step
from .serving import (
    ServingEstimate,
    expected_distinct_experts,
    longest_mean_prompt,
    offline_tokens_per_s,
    serving_estimate,
    speculative_decoding,
)
from .topology import slice_shape
from .training import (
    RECOMPUTE,
    STATE_BYTES_PER_PARAM,
    activation_bytes_per_layer,
    hfu,
    mfu,
    mtp_training_flops_per_token,
    recompute_for_ratio,
    training_flops_per_token,
    training_state_bytes,
)
from .units import (
    format_bandwidth,
    format_bytes,
    format_flops,
    format_flops_rate,
    format_intensity,
    format_si,
    format_time,
    parse_quantity,
)

__version__ = "0.4.0"

_LAZY_SUBMODULES = (
    "plots",
    "widgets",
    "exercises",
    "measure",
    "book",
    "transformer",
    "tiles",
    "published",
    "achievable",
)


#: Functions whose modules import heavy libraries (JAX, PyTorch) only when called.
_LAZY_FUNCTIONS = {"place": "placement", "place_trace": "trace"}


def __getattr__(name):
    if name in _LAZY_FUNCTIONS:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY_FUNCTIONS[name]}"), name)
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'roofline' has no attribute {name!r}")


__all__ = [
    "CATALOG",
    "get_chip",
    "list_chips",
    "register_chip",
    "COLLECTIVES",
    "TOPOLOGIES",
    "collective_bytes_per_link",
    "collective_steps",
    "collective_time",
    "hierarchical_all_reduce_floor",
    "hierarchical_all_reduce_terms",
    "hierarchical_all_reduce_time",
    "in_switch_reduction_available",
    "megatron_mlp_times",
    "multi_axis_collective_time",
    "Cost",
    "ShardedMatmul",
    "dot",
    "elementwise",
    "matmul",
    "matmul_exact_flops",
    "per_example_matmul",
    "sharded_matmul",
    "tiled_matmul",
    "DTYPE_BYTES",
    "bytes_per_element",
    "canonical_dtype",
    "Estimate",
    "all_reduce_time",
    "attainable_flops_per_s",
    "check_below_roof",
    "critical_batch_size",
    "critical_intensity",
    "estimate",
    "exact_critical_batch_size",
    "sharded_critical_D",
    "sharded_estimate",
    "sharded_topology",
    "Term",
    "BOUNDS",
    "ModelConfig",
    "LayerMatmul",
    "get_model",
    "list_models",
    "register_model",
    "RECOMPUTE",
    "STATE_BYTES_PER_PARAM",
    "activation_bytes_per_layer",
    "hfu",
    "mfu",
    "training_flops_per_token",
    "mtp_training_flops_per_token",
    "training_state_bytes",
    "recompute_for_ratio",
    "LAYOUT_AXES",
    "TrainingStep",
    "parse_layout",
    "training_step",
    "slice_shape",
    "ServingEstimate",
    "expected_distinct_experts",
    "serving_estimate",
    "offline_tokens_per_s",
    "longest_mean_prompt",
    "speculative_decoding",
    "Chip",
    "Link",
    "Peak",
    "Source",
    "format_bandwidth",
    "format_bytes",
    "format_flops",
    "format_flops_rate",
    "format_intensity",
    "format_si",
    "format_time",
    "parse_quantity",
    "place",
    "place_trace",
]
