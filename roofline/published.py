"""Published measurements, each held against the book's bound at the published configuration.

Every entry of `MEASUREMENTS` is a figure someone else measured and published (the source
names the paper and table, or the repository, file and commit), the configuration it was
measured at, and a function that computes the roofline's bound for that configuration with
this package. All figures are throughputs (higher is better) in SI units: a published time
is turned into the rate it implies (a time per output token of 18.58 ms is 53.8 tokens/s
for that sequence; a time to first token of 109 ms for 2048 prompt tokens is 18,790 prompt
tokens/s), so the bound is an upper bound and `ratio = measured / bound` is at most 1.

A ratio above 1 would mean a counting, units, sparsity or dtype error in the bound or in
reading the source: the tests fail on it, and the fix is never to change the published
figure. Status: "V" read in the primary source; "V-img" read off a chart in a primary
repository (approximate).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from .achievable import MATMUL_MEASURED
from .catalog import get_chip
from .collectives import collective_time, in_switch_reduction_available
from .hardware import Source
from .parallelism import training_step
from .serving import offline_tokens_per_s, serving_estimate
from .training import recompute_for_ratio, training_flops_per_token

__all__ = ["CATEGORIES", "MEASUREMENTS", "Measurement", "held_against"]

CATEGORIES = ("training", "matmul", "attention", "HBM", "collective", "serving")

_PALM = "https://arxiv.org/abs/2204.02311"
_DEEPSEEK_V3 = "https://arxiv.org/abs/2412.19437"
_MEGATRON = "https://arxiv.org/abs/2104.04473"
_MLPERF_T = "https://github.com/mlcommons/training_results_v4.0/tree/62f111b7"
_MLPERF_I = "https://github.com/mlcommons/inference_results_v4.1/tree/a2f5d66d"
_STAS = "https://github.com/stas00/ml-engineering/blob/7bc7c305/compute/accelerator/README.md"
_STAS_NET = "https://github.com/stas00/ml-engineering/blob/29c6b708/network/README.md"
_AZURE = "https://github.com/Azure/AI-benchmarking-guide/blob/{commit}/Azure_Results/{file}"
_FA = "https://github.com/Dao-AILab/flash-attention/blob/{commit}/assets/{file}"
_NIM = "https://docs.nvidia.com/nim/large-language-models/latest/performance.html"
_TRTLLM = "https://github.com/NVIDIA/TensorRT-LLM/blob/138f96d4/docs/source/performance.md"
_SCALING = "https://github.com/jax-ml/scaling-book/blob/0819a7d8/sharding.md"


@dataclass(frozen=True)
class Measurement:
    """One published figure. `measured`: SI throughput (tokens/s, FLOP/s, bytes/s);
    `unit`: what it counts; `bound`: a function returning the roofline's upper bound on the
    same quantity; `gap`: what explains the distance; `stated_mfu` and `mfu`: the paper's own
    utilisation and a function recomputing it from the paper's throughput under the paper's
    FLOP convention (None when the source states none)."""

    key: str
    category: str
    what: str
    unit: str
    measured: float
    bound: Callable[[], float]
    source: Source
    gap: str
    status: str = "V"
    stated_mfu: float | None = None
    mfu: Callable[[], float] | None = None
    bound_config: str = ""
    """The configuration the bound was computed at, in words, to read beside the source's
    (empty for a kernel, whose configuration is its name)."""


def _tokens_bound_training(*args, **kwargs) -> float:
    return training_step(*args, **kwargs).tokens_per_s


def _tokens_bound_no_bubble(*args, **kwargs) -> float:
    """Tokens/s of `training_step` with no pipeline bubble at all: the bound for a schedule
    (DeepSeek's DualPipe) whose bubble is smaller than 1F1B's and not modelled here."""
    step = training_step(*args, **kwargs)
    return step.tokens_per_step / (step.t_lower - step.times.get("bubble", 0.0))


def _matmul_bound(chip, n, dtype) -> float:
    """FLOP/s bound of an n x n x n matmul: 2n^3 over the larger of the math time and the
    time to move A, B and C once through HBM."""
    from .costs import matmul
    from .estimate import estimate

    est = estimate(matmul(n, n, n, dtype), chip, dtype=dtype)
    return est.cost.flops / est.t_lower


def _peak(chip, dtype) -> float:
    return get_chip(chip).peak_flops_per_s(dtype)


def _hbm(chip) -> float:
    return get_chip(chip).hbm_bytes_per_s


def _bus_bw_bound(chip, nbytes, in_switch) -> float:
    """nccl-tests bus bandwidth bound of an 8-GPU all-reduce over the chip's switch:
    algorithm bandwidth V / t times 2(n-1)/n."""
    link = get_chip(chip).interconnect
    if link is None:
        raise ValueError(f"{chip} has no chip-to-chip link in the catalog")
    if in_switch and not in_switch_reduction_available(chip, 8):
        raise ValueError(f"NCCL has no in-switch reduction (NVLS) on 8 x {chip}")
    t = collective_time(
        "all-reduce",
        nbytes,
        8,
        link.one_way_bytes_per_s,
        "switch",
        links=link.count,
        in_switch_reduction=in_switch,
    )
    return nbytes / t * 2 * 7 / 8


def _decode_tokens(*args, **kwargs) -> float:
    return serving_estimate(*args, **kwargs).tokens_per_s


#: MLCommons' Llama 2 70B benchmark: mean tokens per sample of its reference fp16 run
#: (language/llama2-70b/README.md, "Accuracy Target": "Tokens per sample: 294.45"); prompts
#: are kept below 1,024 tokens (processorca.py, --seqlen_limit 1024); no mean prompt length
#: is published
MLPERF_LLAMA2_OUTPUT_TOKENS = 294.45
MLPERF_LLAMA2_PROMPT_CAP = 1024
#: NVIDIA's offline configuration on 8 H200 (configs/llama2-70b/Offline/__init__.py)
MLPERF_LLAMA2_KW = dict(tp=1, batch=806, dtype="fp8", output_len=MLPERF_LLAMA2_OUTPUT_TOKENS)


def _offline_no_prefill(chip) -> float:
    """Output tokens/s of MLPerf's Llama 2 70B offline run on 8 `chip` with no prefill
    counted (`offline_tokens_per_s` at prompts of 0 tokens: the mean prompt is unpublished)."""
    return offline_tokens_per_s("Llama 2 70B", chip, 8, prompt_len=0, **MLPERF_LLAMA2_KW)


_NIM_ARGS = ("Llama 3 70B", "H100", 2)
_NIM_KW = dict(tp=2, context_len=5250, dtype="fp8")


def _nim_fits() -> int:
    """Requests of 5250 tokens whose KV caches fit beside Llama 3 70B fp8 on 2 H100."""
    return serving_estimate(*_NIM_ARGS, batch=1, **_NIM_KW).max_batch


def _nim_bound(requests) -> float:
    """Decode tokens/s of Llama 3 70B fp8 on 2 H100 (TP2) at a 5250-token context with as
    many of `requests` in flight as their KV caches allow (`ServingEstimate.max_batch`): the
    rest queue, and tokens/s grows with the batch, so this bounds the served throughput."""
    return _decode_tokens(*_NIM_ARGS, batch=min(requests, _nim_fits()), **_NIM_KW)


def _prefill_tokens(prompt, model, chip, n_chips=1, **kwargs) -> float:
    """Prompt tokens per second of the first token's time (`serving_estimate`'s ttft_s, s)."""
    return prompt / serving_estimate(model, chip, n_chips, prompt_len=prompt, **kwargs).ttft_s


#: PaLM's share of layers rematerialised, from its own HFU / MFU (Table 3: 57.8 / 46.2)
_PALM_RECOMPUTE = recompute_for_ratio("PaLM 540B", 2048, 57.8 / 46.2)
#: TPU v5e all-gather of bf16[2048, 8192] over a 4-chip axis without wraparound
_V5E_GATHER_BYTES = 2 * 2048 * 8192
#: Megatron 1T: 163 TFLOP/s per GPU by Eq. 3 (recomputation counted) on 3072 GPUs
_MEGATRON_TOKENS = 163e12 * 3072 / training_flops_per_token("Megatron 1T", 2048, "full")


MEASUREMENTS: tuple[Measurement, ...] = (
    Measurement(
        "palm-540b",
        "training",
        "PaLM 540B, 6144 TPU v4",
        "tokens/s",
        238.3e3,
        lambda: _tokens_bound_training(
            "PaLM 540B",
            "TPU v4",
            6144,
            2048 * 2048,
            2048,
            "dp=2,fsdp=256,tp=12",
            recompute=_PALM_RECOMPUTE,
        ),
        Source(
            _PALM,
            "Chowdhery et al., section 4.1 and Table 3: 238.3K tokens/s, MFU 46.2 %, HFU 57.8 % "
            "(its partial rematerialisation: HFU / MFU = 1.25, not full recomputation's 1.33)",
        ),
        "rematerialisation of about three layers in four repeats forward work the MFU does "
        "not count (the bound pays it, at PaLM's own HFU / MFU), and the 12-way "
        "tensor-parallel all-reduces (one per layer and pass: PaLM's parallel block) are not "
        "all hidden behind the math",
        stated_mfu=0.462,
        mfu=lambda: _mfu("PaLM 540B", 238.3e3, "TPU v4", 6144, 2048),
        bound_config=f"dp 2 x fsdp 256 x tp 12, bf16, {_PALM_RECOMPUTE:.0%} of layers rematerialised (PaLM's HFU / MFU), parallel block",
    ),
    Measurement(
        "megatron-1t",
        "training",
        "Megatron 1T, 3072 A100",
        "tokens/s",
        _MEGATRON_TOKENS,
        lambda: _tokens_bound_training(
            "Megatron 1T",
            "A100",
            3072,
            3072 * 2048,
            2048,
            "tp=8,pp=64,dp=6",
            recompute="full",
            network_bytes_per_s=25e9,  # 8 x 200 Gb/s HDR InfiniBand per 8-GPU node
        ),
        Source(
            _MEGATRON,
            "Narayanan et al., Table 1: 163 TFLOP/s per GPU (52 % of 312), FLOPs by Eq. 3 "
            "(recomputation included); tokens/s here = 163e12 x 3072 / Eq. 3 per token",
        ),
        "the bound already pays the 1F1B bubble; the rest is pipeline sends and "
        "all-reduces not overlapped, and kernels below the A100's peak",
        stated_mfu=0.52,
        mfu=lambda: _hfu_megatron(),
        bound_config="tp 8 x pp 64 x dp 6, bf16, full recomputation, 1F1B with one sequence per micro-batch, 25 GB/s of network per GPU",
    ),
    Measurement(
        "mlperf-gpt3-h100",
        "training",
        "MLPerf GPT-3, 512 H100, fp8",
        "tokens/s",
        2304 * 2048 / (119.86 / 11),
        lambda: _tokens_bound_training(
            "GPT-3 175B",
            "H100",
            512,
            2304 * 2048,
            2048,
            "tp=4,pp=8,dp=16",
            dtype="fp8",
            microbatches=72,
            zero_stage=1,  # Megatron's distributed optimizer: without it 128 GB per GPU
            virtual_stages=4,
        ),
        Source(
            _MLPERF_T,
            "NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3/result_0.txt: 11 steps in 119.86 s of "
            "2304 sequences of 2048; config_DGXH100_64x8x128x4x8_mbs2.sh: TP4 PP8, "
            "virtual pipeline 4, mbs 2",
        ),
        "fp8 matmuls run well below 1979 TFLOP/s, and attention, norms and the optimizer run "
        "in bf16 or fp32; the bound already pays the interleaved schedule's small bubble "
        "(7 / (4 x 72) of the math) and the distributed optimizer's gathers; memory counts "
        "Korthikanti's dropout masks (the catalog's GPT-3), while MLPerf's reference trains with "
        "dropout 0.0 (about 3 GB less per GPU; it fits either way)",
        bound_config="tp 4 x pp 8 x dp 16, fp8, 72 micro-batches of 2, interleaved (4 chunks per stage), ZeRO-1",
    ),
    Measurement(
        "mlperf-gpt3-v5p",
        "training",
        "MLPerf GPT-3, 6144 v5p, int8",
        "tokens/s",
        343.5 * 6144,
        lambda: _tokens_bound_training(
            "GPT-3 175B",
            "TPU v5p",
            6144,
            6144 * 2048,
            2048,
            "dp=16,fsdp=48,tp=8",
            dtype="int8",  # one slice of 6144 (the run set only ICI axes; NUM_SLICES=1)
            slice_shape="8x16x48",  # the run's own topology, as its system file prints it
        ),
        Source(
            _MLPERF_T,
            "Google/results/cloud-tpu-v5p-12288-maxtext/gpt3/result_0.txt: 4 steps in "
            "23.85 s, 343.5 tokens/s per chip; MaxText int8, data 16 x FSDP 48 x tensor 8 "
            "(benchmarks/gpt3/implementations/maxtext/v5p-12288.sh: ici_data_parallelism=16 "
            "ici_fsdp_parallelism=48 ici_tensor_parallelism=8, no DCN axis); "
            "Google/systems/cloud-tpu-v5p-12288-maxtext.json: accelerator_interconnect_topology "
            "8x16x48",
        ),
        "one slice of 6144 chips, all three axes on ICI, as the run's flags set them, on the "
        "run's own 8 x 16 x 48 topology: tensor 8, data 16 and FSDP 48 each get a whole "
        "wrapped axis, and the bound is the int8 math; the 16 x 16 x 24 shape Google's v5p "
        "table lists for 6144 chips has no axis of 8, and mapped onto it the 8-way tensor group is half of a "
        "wrapped axis, one link's rate, and its all-reduces would outlast the math (a lower "
        "bound, a higher ratio). The rest is kernels below the int8 peak (only the matmuls "
        "run in int8), not split by any measurement here",
        bound_config="dp 16 x fsdp 48 x tp 8, one ICI slice of 8 x 16 x 48 (the run's "
        "topology), int8 peak for every FLOP",
    ),
    Measurement(
        "deepseek-v3-h800",
        "training",
        "DeepSeek-V3, 2048 H800, fp8",
        "tokens/s",
        1e12 / (180e3 * 3600) * 2048,
        lambda: _tokens_bound_no_bubble(
            "DeepSeek-V3",
            "H100",  # the H800's SMs, peak and HBM; its NVLink is slower (the bound is higher)
            2048,
            15360 * 4096,
            4096,
            "pp=16,ep=64,dp=2",
            dtype="fp8",
            zero_stage=1,
            causal=True,
            expert_nodes_per_token=4,
        ),
        Source(
            _DEEPSEEK_V3,
            "DeepSeek-AI, DeepSeek-V3 Technical Report, Table 1: 180K H800 GPU hours per "
            "trillion tokens (1e12 / (180e3 x 3600) = 1,543 tokens/s per GPU); section 3.1-3.2: "
            "2048 H800, PP16 (DualPipe), EP64 over 8 nodes, ZeRO-1, no TP, fp8, each token "
            "sent to at most 4 nodes; batch 15360 sequences of 4096",
        ),
        "the bound is link-bound on the expert all-to-alls through each GPU's 50 GB/s NIC, "
        "even with each token crossing the network once per node and fully overlapped with "
        "the math; it leaves out DualPipe's small bubble, and the H800's NVLink (400 GB/s "
        "against the H100's 900, both directions together) is not the limit: with the 160 GB/s per GPU DeepSeek's "
        "report gives for its cluster the all-to-alls take as long and the bound moves by "
        "under 1 %; the all-to-alls are counted on the MoE "
        "layers only (the 3 dense first layers route nothing). In this model the model state "
        "fits (10.9 GB on the busiest stage, which holds 4 MoE layers: ZeRO-1 is taken to "
        "spread the dense part's optimizer state over all 128 GPUs that replicate it, dp 2 "
        "x ep 64, the group its gradients are reduced over; an inference: the report says only 'ZeRO-1') but the memory does not: activations "
        "counted block by block, 16-bit and none recomputed (no dropout masks: DeepSeek-V3 "
        "trains without dropout), take 112 GB on the busiest stage, which overstates "
        "DeepSeek's (it recomputes norms and up-projections and stores fp8 activations). "
        "Memory is counted for a 1F1B schedule (a stage keeps up to pp micro-batches); "
        "DualPipe, which the run used, keeps two copies of the parameters and pp + 1 "
        "micro-batches (the report's Table 2), and state at 16 bytes a parameter, while "
        "DeepSeek keeps bf16 Adam moments and fp32 master weights and gradients",
        bound_config="H100 stand-in for H800, pp 16 x ep 64 x dp 2, fp8, ZeRO-1 (dense part "
        "over dp x ep, experts over dp), 120 micro-batches, each token to at most 4 nodes, no "
        "pipeline bubble counted",
    ),
    Measurement(
        "matmul-h100-bf16",
        "matmul",
        "matmul bf16, H100",
        "FLOP/s",
        MATMUL_MEASURED["H100 SXM"].value,
        lambda: _matmul_bound("H100 SXM", 8192, "bf16"),
        Source(_STAS, "maximum achievable matmul FLOPS table: H100 SXM bf16 794.5 TFLOP/s"),
        "a large square matmul is compute-bound; clocks drop under a full tensor-core load "
        "and the tiles' prologue and epilogue idle the tensor cores",
    ),
    Measurement(
        "matmul-a100-bf16",
        "matmul",
        "matmul bf16, A100",
        "FLOP/s",
        MATMUL_MEASURED["A100 SXM"].value,
        lambda: _matmul_bound("A100 SXM", 8192, "bf16"),
        Source(_STAS, "maximum achievable matmul FLOPS table: A100 SXM bf16 271.2 TFLOP/s"),
        "the same kernel overheads on an older chip, whose peak is easier to approach",
    ),
    Measurement(
        "matmul-mi300x-bf16",
        "matmul",
        "matmul bf16, MI300X",
        "FLOP/s",
        MATMUL_MEASURED["MI300X"].value,
        lambda: _matmul_bound("MI300X", 8192, "bf16"),
        Source(_STAS, "maximum achievable matmul FLOPS table: MI300X bf16 668.4 TFLOP/s"),
        "half the datasheet peak: the peak assumes clocks and a software stack the "
        "measured kernel does not reach",
    ),
    Measurement(
        "gemm-h100-fp8-16k",
        "matmul",
        "GEMM fp8 16384³, H100",
        "FLOP/s",
        1377.3e12,
        lambda: _matmul_bound("H100 SXM", 16384, "fp8"),
        Source(
            _AZURE.format(commit="ae0b6a7f", file="ND_H100_v5_results.md"),
            "superbench cublaslt_gemm fp8, 16384 x 16384 x 16384: 1377.3 TFLOP/s",
        ),
        "fp8 tensor cores are even harder to keep fed than bf16 ones: 70 % of the peak",
    ),
    Measurement(
        "gemm-h100-fp8-1k",
        "matmul",
        "GEMM fp8 1024³, H100",
        "FLOP/s",
        274.1e12,
        lambda: _matmul_bound("H100 SXM", 1024, "fp8"),
        Source(
            _AZURE.format(commit="ae0b6a7f", file="ND_H100_v5_results.md"),
            "superbench cublaslt_gemm fp8, 1024 x 1024 x 1024: 274.1 TFLOP/s",
        ),
        "a 2 GFLOP matmul lasts about a microsecond at peak: launch and tail effects (too "
        "few tiles for 132 SMs) dominate, which the roofline does not see",
    ),
    Measurement(
        "flash2-a100",
        "attention",
        "FlashAttention-2, A100",
        "FLOP/s",
        203e12,
        lambda: _peak("A100 SXM", "fp16"),
        Source(
            _FA.format(commit="4f285b35", file="flash2_a100_fwd_bwd_benchmark.png"),
            "head dim 128, non-causal, seq 16k: about 203 TFLOP/s (read off the chart); FLOPs "
            "as benchmarks/benchmark_flash_attention.py counts them (4 b s^2 h d forward, "
            "backward 2.5 x)",
        ),
        "attention at 16k tokens is compute-bound, but softmax and its exponentials run on "
        "the vector units, and the backward pass's five matmuls are harder to pipeline",
        status="V-img",
    ),
    Measurement(
        "flash3-h100",
        "attention",
        "FlashAttention-3 fwd, H100",
        "FLOP/s",
        648e12,
        lambda: _peak("H100 SXM", "fp16"),
        Source(
            _FA.format(commit="7ef24848", file="flash3_fp16_fwd.png"),
            "head dim 128, seq 16k: about 648 TFLOP/s (read off the chart); Shah et al., "
            "arXiv 2407.08608: up to 740 TFLOP/s (75 % utilisation)",
        ),
        "asynchronous warp groups overlap the softmax with the matmuls, but its exponentials "
        "run on special-function units hundreds of times slower than the tensor cores",
        status="V-img",
    ),
    Measurement(
        "stream-h100",
        "HBM",
        "triad stream, H100",
        "B/s",
        2.97e12,
        lambda: _hbm("H100 SXM"),
        Source(
            _AZURE.format(commit="ae0b6a7f", file="ND_H100_v5_results.md"),
            "cuda-stream triad 2.97 TB/s (copy 2.90, dot 3.18)",
        ),
        "DRAM refresh, page and bank conflicts and read/write turnarounds: a stream kernel "
        "reaches 85-90 % of the pins' rate",
    ),
    Measurement(
        "stream-h200",
        "HBM",
        "triad stream, H200",
        "B/s",
        4.15e12,
        lambda: _hbm("H200"),
        Source(
            _AZURE.format(commit="7f20e5fa", file="ND_H200_v5_results.md"),
            "cuda-stream triad 4.15 TB/s (copy 4.01)",
        ),
        "the same DRAM overheads on HBM3e",
    ),
    Measurement(
        "stream-a100",
        "HBM",
        "triad stream, A100",
        "B/s",
        1.70e12,
        lambda: _hbm("A100 SXM"),
        Source(
            _AZURE.format(commit="3bb66cac", file="ND_A100_v4_results.md"),
            "cuda-stream triad 1.70 TB/s (copy 1.61)",
        ),
        "the same DRAM overheads on HBM2e",
    ),
    Measurement(
        "nvls-allreduce-h100",
        "collective",
        "all-reduce NVLS, 8 H100 (bus)",
        "B/s",
        478.87e9,
        lambda: _bus_bw_bound("H100 SXM", 8e9, True),
        Source(
            _AZURE.format(commit="ae0b6a7f", file="ND_H100_v5_results.md"),
            "NCCL 2.18.5 all-reduce bus bandwidth at 8 GB: 478.87 GB/s",
        ),
        "in-switch reduction cuts each GPU's traffic from 2(n-1)/n V to (n+1)/n V (ideal bus "
        "bandwidth 2(n-1)/(n+1) x 450 = 700 GB/s); protocol overheads keep the measured one "
        "at 69 % of that",
    ),
    Measurement(
        "ring-allreduce-h200",
        "collective",
        "all-reduce ring, 8 H200 (bus)",
        "B/s",
        367.2e9,
        lambda: _bus_bw_bound("H200", 16 * 2**30, False),
        Source(
            _STAS_NET,
            "nccl-tests -b 16G -e 16G -g 8, NCCL 2.27.7: ring all-reduce 367.2 GB/s; NVIDIA's "
            "answer in NVIDIA/nccl-tests issue 212 (2024-05-06): 450 GB/s line rate, about 20 % "
            "protocol overhead, 370 GB/s effective",
        ),
        "NCCL's protocol overhead (about 20 %, its maintainers say) on every NVLink packet",
    ),
    Measurement(
        "allreduce-a100",
        "collective",
        "all-reduce, 8 A100 (bus)",
        "B/s",
        231.58e9,
        lambda: _bus_bw_bound("A100 SXM", 8e9, False),
        Source(
            _AZURE.format(commit="3bb66cac", file="ND_A100_v4_results.md"),
            "all-reduce bus bandwidth at 8 GB: 231.58 GB/s (NVLink 3, no NVLS)",
        ),
        "the same protocol overheads on NVLink 3",
    ),
    Measurement(
        "allgather-v5e",
        "collective",
        "all-gather 32 MiB, 4 v5e",
        "B/s",
        _V5E_GATHER_BYTES / 680e-6,
        lambda: (
            _V5E_GATHER_BYTES
            / collective_time(
                "all-gather",
                _V5E_GATHER_BYTES,
                4,
                get_chip("TPU v5e").link_bytes_per_s,
                "line",
            )
        ),
        Source(
            _SCALING,
            "pop quiz 2: predicted about 560 us, measured about 680 us (axis without "
            "wraparound, 4.5e10 B/s per link one way)",
        ),
        "per-hop latency and the collective's start-up, which the bandwidth term leaves out",
    ),
    Measurement(
        "mlperf-llama2-h200",
        "serving",
        "MLPerf Llama 2 70B, 8 H200",
        "tokens/s",
        31302.7,
        lambda: _offline_no_prefill("H200"),
        Source(
            _MLPERF_I,
            "closed/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99: offline 31,302.7 "
            "output tokens/s; configs/llama2-70b/Offline/__init__.py: TP1 x 8, batch 806 per GPU",
        ),
        "the bound counts only the decode matmuls (context taken as one token): MLCommons "
        "publishes no mean prompt length, so no prefill is counted. The same GPUs also prefill "
        "every prompt (at prompts of the benchmark's 1,024-token cap the bound would fall "
        "below the published rate: `rl.longest_mean_prompt`), attend over the cache and run "
        "below the fp8 peak",
        bound_config="8 x TP1, batch 806 per GPU, fp8, 294.45 output tokens per request, "
        "prompts of 0 tokens (no prefill counted), context of 1 token",
    ),
    Measurement(
        "mlperf-llama2-mi300x",
        "serving",
        "MLPerf Llama 2 70B, 8 MI300X",
        "tokens/s",
        23514.8,
        lambda: _offline_no_prefill("MI300X"),
        Source(_MLPERF_I, "closed/AMD/results/8xMI300X_2xEPYC-9374F: offline 23,514.8 tokens/s"),
        "as for the H200, with a higher fp8 peak that the software reaches less of",
        bound_config="NVIDIA's H200 configuration reused: 8 x TP1, batch 806 per GPU, fp8, "
        "294.45 output tokens per request, prompts of 0 tokens, context of 1 token",
    ),
    Measurement(
        "nim-tpot-1",
        "serving",
        "NIM 70B, 2 H100, 1 request",
        "tokens/s",
        1 / 18.58e-3,
        lambda: _decode_tokens(
            "Llama 3 70B", "H100", 2, tp=2, batch=1, context_len=5250, dtype="fp8"
        ),
        Source(
            _NIM, "inter-token latency 18.58 ms at 1 concurrent request, TP2, 5000 in / 500 out"
        ),
        "batch-1 decode streams the fp8 weights once per token; kernel launches, the "
        "all-reduces' latency and sampling add to every step",
        bound_config="TP2, batch 1, context 5250, fp8",
    ),
    Measurement(
        "nim-tpot-100",
        "serving",
        "NIM 70B, 2 H100, 100 requests",
        "tokens/s",
        917.26,
        lambda: _nim_bound(100),
        Source(
            _NIM,
            "NIM 1.8.0, Llama 3.3 70B fp8 TP2 on 2 x H100 80G, 5000 input / 500 output tokens, "
            "concurrency 100: inter-token latency 92.91 ms, throughput 917.26 tokens/s (so "
            "917.26 x 0.09291 = 85 requests decode at once, not 100)",
        ),
        "the caches of 100 requests of 5000 tokens do not all fit beside the weights, so "
        "requests queue (the bound decodes the most that fit); the KV-cache reads dominate, "
        "and prefills of arriving requests interrupt the decode steps",
        bound_config=f"TP2, the {_nim_fits()} requests whose caches fit (of 100), context 5250, fp8",
    ),
    Measurement(
        "trtllm-ttft-h100",
        "serving",
        "TRT-LLM 70B prefill, 4 H100",
        "tokens/s",
        2048 / 109e-3,
        lambda: _prefill_tokens(
            2048, "Llama 2 70B", "H100", 4, tp=4, context_len=2048, dtype="fp8"
        ),
        Source(
            _TRTLLM, "batch-1 time to first token, 70B, TP4, 2048 input tokens: 109 ms (H100, fp8)"
        ),
        "prefill is compute-bound; attention, the all-reduces of 2048 x 8192 activations and "
        "the scheduler's first step add to the fp8 matmuls",
        bound_config="TP4, prefill of 2048 tokens, fp8",
    ),
    Measurement(
        "trtllm-ttft-a100",
        "serving",
        "TRT-LLM 70B prefill, 4 A100",
        "tokens/s",
        2048 / 377e-3,
        lambda: _prefill_tokens(
            2048, "Llama 2 70B", "A100", 4, tp=4, context_len=2048, dtype="fp16"
        ),
        Source(
            _TRTLLM, "batch-1 time to first token, 70B, TP4, 2048 input tokens: 377 ms (A100, fp16)"
        ),
        "as on the H100, at a lower peak that fp16 kernels approach more closely",
        bound_config="TP4, prefill of 2048 tokens, fp16",
    ),
)


def _mfu(model, tokens_per_s, chip, n_chips, seq_len) -> float:
    from .training import mfu

    return mfu(model, tokens_per_s, chip, n_chips, seq_len)


def _hfu_megatron() -> float:
    from .training import hfu

    return hfu("Megatron 1T", _MEGATRON_TOKENS, "A100", 3072, 2048, recompute="full")


#: A ratio (measured / bound) below this marks a loose bound: more than 1 / 0.3 = 3.3 times the
#: measurement, it names the resource to look at first, not how fast the work could run; the
#: row's `gap` (and chapter 13) says what the bound leaves out.
LOOSE_BELOW = 0.3


@cache
def held_against() -> tuple[dict, ...]:
    """Every measurement with its bound and ratio: dicts with key, category, what, unit,
    measured, bound, ratio (measured / bound), loose (ratio below `LOOSE_BELOW`), source,
    gap, status, stated_mfu, mfu, bound_config."""
    rows = []
    for m in MEASUREMENTS:
        bound = float(m.bound())
        rows.append(
            {
                "key": m.key,
                "category": m.category,
                "what": m.what,
                "unit": m.unit,
                "measured": m.measured,
                "bound": bound,
                "ratio": m.measured / bound,
                "loose": m.measured / bound < LOOSE_BELOW,
                "source": m.source,
                "gap": m.gap,
                "status": m.status,
                "stated_mfu": m.stated_mfu,
                "mfu": None if m.mfu is None else float(m.mfu()),
                "bound_config": m.bound_config,
            }
        )
    return tuple(rows)


_UNIT_FORMAT = {"FLOP/s": "flops_rate", "B/s": "bandwidth"}


def format_measurement(value, unit) -> str:
    """A measured or bound figure with its unit: FLOP/s and bytes/s by `roofline.units`,
    token rates with 4 significant digits and thousands separators."""
    from .units import format_bandwidth, format_flops_rate

    kind = _UNIT_FORMAT.get(unit)
    if kind == "flops_rate":
        return format_flops_rate(value)
    if kind == "bandwidth":
        return format_bandwidth(value)
    digits = max(0, 3 - int(f"{value:e}".split("e")[1]))
    return f"{value:,.{digits}f} {unit}"


_MARKERS = {
    "training": "o",
    "matmul": "s",
    "attention": "D",
    "HBM": "^",
    "collective": "v",
    "serving": "P",
}


def measured_vs_bound_figure():
    """Log-log: each published figure (y) against the roofline's bound at its configuration
    (x), each in its own unit, one marker per kind of source; the line y = x is the bound,
    so every point sits on or under it, and the vertical distance is the gap."""
    from .drawing import PALETTE, SERIES_COLOURS, format_axis, new_figure

    rows = held_against()
    fig, ax = new_figure(4.4)
    lo = 10 ** math.floor(math.log10(min(r["measured"] for r in rows)) - 0.5)
    hi = 10 ** math.ceil(math.log10(max(r["bound"] for r in rows)) + 0.5)
    ax.plot([lo, hi], [lo, hi], color=PALETTE["black"], linewidth=1.2, label="bound (y = x)")
    ax.plot(
        [lo, hi],
        [lo / 2, hi / 2],
        color=PALETTE["black"],
        linewidth=0.8,
        linestyle=":",
        label="half the bound",
    )
    for index, category in enumerate(CATEGORIES):
        pts = [r for r in rows if r["category"] == category]
        colour = PALETTE[SERIES_COLOURS[index % len(SERIES_COLOURS)]]
        ax.scatter(
            [r["bound"] for r in pts],
            [r["measured"] for r in pts],
            marker=_MARKERS[category],
            color=colour,
            s=28,
            zorder=3,
            label=f"{category} ({len(pts)})",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    format_axis(ax.xaxis, "count")
    format_axis(ax.yaxis, "count")
    ax.set_xlabel("Roofline bound (each figure's own unit: tokens/s, FLOP/s, B/s)")
    ax.set_ylabel("Measured (same unit)")
    from .drawing import finish

    return finish(fig, ncol=3)


def ratio_figure():
    """Each published figure as a fraction of its bound (measured / bound, linear 0 to 1),
    one row per measurement grouped by kind of source, the markers as in
    `measured_vs_bound_figure`."""
    from .drawing import PALETTE, SERIES_COLOURS, font_pt, new_figure

    rows = held_against()
    order = [r for c in CATEGORIES for r in rows if r["category"] == c]
    fig, ax = new_figure(0.9 + 0.2 * len(order))
    for index, category in enumerate(CATEGORIES):
        colour = PALETTE[SERIES_COLOURS[index % len(SERIES_COLOURS)]]
        ys = [i for i, r in enumerate(order) if r["category"] == category]
        ax.scatter(
            [order[i]["ratio"] for i in ys],
            ys,
            marker=_MARKERS[category],
            color=colour,
            s=26,
            zorder=3,
            label=category,
        )
    ax.axvline(1.0, color=PALETTE["black"], linewidth=1.2)
    ax.set_yticks(range(len(order)), [r["what"] for r in order])
    ax.tick_params(axis="y", labelsize=font_pt("small"))
    ax.invert_yaxis()
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("Measured / roofline bound")
    from .drawing import finish

    return finish(fig, ncol=3)


#: NVIDIA NIM 1.8.0, Llama 3.3 70B fp8, tensor parallel 2 on 2 x H100-80GB, 5000 input and
#: 500 output tokens: concurrent requests -> mean inter-token latency (s).
NIM_INTER_TOKEN_S = {1: 18.58e-3, 5: 21.83e-3, 25: 38.75e-3, 50: 59.73e-3, 100: 92.9e-3}
NIM_SOURCE = Source(
    _NIM,
    "NIM LLM benchmarking, performance page: Llama 3.3 70B fp8, TP2 on 2 x H100-80GB, 5000 in "
    "/ 500 out: inter-token latency 18.58 ms at 1 request, 21.83 at 5, 38.75 at 25, 59.73 at "
    "50, 92.9 at 100",
)
#: The configuration the NIM curve is held against: Llama 3.3 70B has Llama 3 70B's sizes;
#: the context is mid-generation, 5000 prompt + 250 of the 500 output tokens; fp8 weights
#: and KV cache (the smaller of the two KV dtypes NIM may use, so the bound holds either way).
NIM_CONFIG = {
    "model": "Llama 3 70B",
    "chip": "H100 SXM",
    "n_chips": 2,
    "tp": 2,
    "context_len": 5250,
    "dtype": "fp8",
}


def nim_latency_figure(batch_max=256):
    """Time per output token against concurrent requests: the roofline bound of
    `serving_estimate` at NIM's configuration (solid while the KV caches fit, dotted beyond)
    and NIM's published inter-token latencies as points. Log-log."""
    import numpy as np

    from .drawing import PALETTE, SERIES_COLOURS, finish, format_axis, new_figure

    batches = np.unique(np.round(np.logspace(0, math.log10(batch_max), 80)).astype(int))
    ests = [serving_estimate(**NIM_CONFIG, batch=int(b)) for b in batches]
    t = np.array([e.t_decode_step for e in ests])
    fits = np.array([e.fits for e in ests])
    fig, ax = new_figure(3.8)
    blue, red = (PALETTE[SERIES_COLOURS[i]] for i in (0, 1))
    ax.plot(batches[fits], t[fits], color=blue, linewidth=1.6, label="roofline bound (fits)")
    last = max(np.flatnonzero(fits), default=0)
    ax.plot(
        batches[last:],
        t[last:],
        color=blue,
        linewidth=1.6,
        linestyle=":",
        label="bound, KV caches beyond memory",
    )
    conc = list(NIM_INTER_TOKEN_S)
    ax.scatter(
        conc,
        [NIM_INTER_TOKEN_S[c] for c in conc],
        color=red,
        marker="o",
        s=30,
        zorder=3,
        label="NIM measured (inter-token latency)",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1, batch_max)
    ax.set_ylim(5e-3, 0.2)
    format_axis(ax.xaxis, "count")
    format_axis(ax.yaxis, "time")
    ax.set_xlabel("Concurrent requests (batch)")
    ax.set_ylabel("Time per output token")
    return finish(fig)
