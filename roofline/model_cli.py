"""`python -m roofline model ...`: a whole model's sizes, one training step on many chips, or
serving it (one decode step, the time to first token, memory per chip).

    python -m roofline model "Llama 3 70B"
    python -m roofline model "Llama 3 70B" --chip H100 --chips 8192 --train \\
        --tokens-per-step 16M --seq-len 8192 --layout dp=64,tp=8,pp=16 [--json step.json]
    python -m roofline model "Llama 3 70B" --chip H100 --serve --batch 64 --context 4096 \\
        [--chips 8 --tp 8] [--prompt 2048] [--weights fp8 --kv-dtype fp8] [--json serve.json]
    python -m roofline model "GPT-3 175B" --chip v5p --chips 6144 --train \
        --tokens-per-step 1536x2048 --seq-len 2048 --layout dp=16,fsdp=48,tp=8 \
        --slice-shape 8x16x48

MODEL is a catalog name (`roofline.list_models()`), a Hugging Face config.json (or the
folder holding one), or a JSON file of `ModelConfig` fields. Bad input prints one line that
says what to change and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

#: Token counts as papers write batch sizes: "16M" tokens = 16 x 2^20 (Llama 3's 16M-token
#: batch is 2048 sequences of 8192).
_TOKEN_SUFFIX = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "b": 2**30}


def parse_tokens(text: str) -> int:
    """'16M' -> 16,777,216 (binary prefixes, as papers count batch tokens), '2048x8192' ->
    16,777,216, '16777216' or '1.6e7' as written."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    product = re.fullmatch(r"(\d+)\s*[x*]\s*(\d+)", cleaned)
    if product:
        return int(product.group(1)) * int(product.group(2))
    match = re.fullmatch(r"(\d+(?:\.\d+)?(?:e\d+)?)\s*([kKmMgGbB]?)(?:i)?", cleaned)
    if not match:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a token count; write e.g. 16M (= 16 x 2^20), 2048x8192 or 16777216"
        )
    value = float(match.group(1)) * _TOKEN_SUFFIX[match.group(2).lower()]
    if not value.is_integer() or value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole, positive number of tokens")
    return int(value)


def _bandwidth(text: str) -> float:
    from .units import parse_quantity

    try:
        value, kind = parse_quantity(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if kind not in (None, "bandwidth") or not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a bandwidth such as '50 GB/s'")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m roofline model",
        description="A whole model on the roofline: its sizes, (with --train) the time, "
        "bound, memory per chip and MFU ceiling of one training step, or (with --serve) the "
        "decode-step bound, tokens/s, time to first token and what fits.",
    )
    p.add_argument("model", metavar="MODEL", help="catalog name, config.json or ModelConfig JSON")
    p.add_argument("--chip", help="chip name (roofline.list_chips()), e.g. H100")
    p.add_argument("--chips", type=int, default=1, help="number of chips (default 1)")
    p.add_argument("--train", action="store_true", help="estimate one training step")
    p.add_argument(
        "--tokens-per-step",
        type=parse_tokens,
        help="global batch in tokens: 16M (= 16 x 2^20), 2048x8192 or 16777216",
    )
    p.add_argument("--seq-len", type=int, help="tokens per sequence, e.g. 8192")
    p.add_argument("--layout", default="", help="parallel degrees, e.g. dp=64,tp=8,pp=16")
    p.add_argument("--dtype", default="bf16", help="dtype the matmuls run in (default bf16)")
    p.add_argument(
        "--recompute",
        default="none",
        type=_recompute_arg,
        help="recomputation: none, selective, full, or the share of layers recomputed in full "
        "(0 to 1, e.g. 0.76 for PaLM's partial rematerialisation)",
    )
    p.add_argument("--microbatches", type=int, help="micro-batches per replica and step")
    p.add_argument(
        "--zero-stage",
        type=int,
        default=0,
        choices=(0, 1, 2),
        help="--train: shard the optimizer state (1) and gradients (2) over dp (default 0)",
    )
    p.add_argument(
        "--virtual-stages",
        type=int,
        default=1,
        help="--train: model chunks per pipeline stage, interleaved 1F1B (default 1)",
    )
    p.add_argument(
        "--grad-dtype",
        default="bf16",
        choices=("bf16", "fp32"),
        help="--train: gradients kept and reduced in (default bf16)",
    )
    p.add_argument(
        "--causal", action="store_true", help="count half the attention FLOPs (causal mask)"
    )
    p.add_argument("--serve", action="store_true", help="estimate serving (decode and prefill)")
    p.add_argument("--batch", type=int, default=1, help="--serve: sequences per replica")
    p.add_argument("--context", type=int, default=4096, help="--serve: tokens of context")
    p.add_argument("--prompt", type=int, help="--serve: prompt tokens for TTFT (default --context)")
    p.add_argument("--tp", type=int, help="--serve: chips per replica (default --chips)")
    p.add_argument("--weights", help="--serve: weight dtype (default --dtype), e.g. int8, fp8")
    p.add_argument("--kv-dtype", help="--serve: KV-cache dtype (default --dtype), e.g. fp8")
    p.add_argument("--network", type=_bandwidth, help="network per chip, one way, e.g. '50 GB/s'")
    p.add_argument(
        "--slice-shape",
        help="TPU only: one slice's shape when not the one Google sells for --chips, e.g. "
        "8x16x48 (--train: the job's slice; --serve: the slice each replica runs in)",
    )
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")
    return p


def _recompute_arg(text: str):
    """--recompute: "none", "selective", "full" or a share of layers from 0 to 1."""
    if text in ("none", "selective", "full"):
        return text
    try:
        share = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: use none, selective, full or a share of layers from 0 to 1"
        ) from None
    if not 0 <= share <= 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a share of layers is from 0 to 1")
    return share


def load_model(text: str):
    """A catalog name, or a JSON file (Hugging Face config.json or ModelConfig fields)."""
    from .models import ModelConfig, get_model

    path = Path(text)
    if path.suffix.lower() == ".json" or path.is_dir():
        if path.is_dir():
            path = path / "config.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON ({error})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path} holds no JSON object of model settings")
        if "d_model" in data:
            return ModelConfig.from_dict({"name": path.stem, **data})
        return ModelConfig.from_hf_config(path)
    return get_model(text)


def _train(args, model):
    from .parallelism import training_step

    missing = [
        flag
        for flag, value in (
            ("--chip", args.chip),
            ("--tokens-per-step", args.tokens_per_step),
            ("--seq-len", args.seq_len),
        )
        if value is None
    ]
    if missing:
        raise ValueError(f"--train needs {', '.join(missing)}")
    return training_step(
        model,
        args.chip,
        args.chips,
        args.tokens_per_step,
        args.seq_len,
        args.layout,
        dtype=args.dtype,
        recompute=args.recompute,
        microbatches=args.microbatches,
        network_bytes_per_s=args.network,
        causal=args.causal,
        zero_stage=args.zero_stage,
        virtual_stages=args.virtual_stages,
        grad_dtype=args.grad_dtype,
        slice_shape=args.slice_shape,
    )


def _serve(args, model):
    from .serving import serving_estimate

    if args.chip is None:
        raise ValueError("--serve needs --chip")
    if args.train:
        raise ValueError("choose --train or --serve, not both")
    return serving_estimate(
        model,
        args.chip,
        args.chips,
        args.tp,
        args.batch,
        args.context,
        args.prompt,
        args.dtype,
        args.weights,
        args.kv_dtype,
        slice_shape=args.slice_shape,
    )


def _model_figures(model, context) -> dict:
    """The model's counts; the KV cache per token while every layer holds it (a context
    within every sliding window) and of one sequence of `context` tokens (windows capped)."""
    return {
        "model": model.label,
        "model_config": model.to_dict(),
        "blocks": [
            {"layers": g.count, "block": type(g.block).__name__, "kind": g.block.kind}
            for g in model.blocks()
        ],
        "params": model.params,
        "active_params": model.active_params,
        "matmul_params": model.matmul_params,
        "kv_cache_bytes_per_token_bf16": model.kv_cache_bytes(1, "bf16"),
        "context": context,
        "kv_cache_bytes_per_sequence_bf16": model.kv_cache_bytes(context, "bf16"),
        "source": None if model.source is None else model.source.url,
    }


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        model = load_model(args.model)
        if args.serve:
            est = _serve(args, model)
            print(est.summary().text())
            print("assumptions:\n  " + "\n  ".join(est.assumptions))
            figures = {**_model_figures(model, args.context), **est.to_dict()}
        elif args.train:
            step = _train(args, model)
            print(step.summary().text())
            print("assumptions:\n  " + "\n  ".join(step.assumptions))
            figures = {**_model_figures(model, args.context), **step.to_dict()}
        else:
            print(model.summary().text())
            if args.chip is not None:
                print(
                    "(add --train --tokens-per-step ... --seq-len ... for a training step, "
                    "or --serve --batch ... --context ... for serving)"
                )
            figures = _model_figures(model, args.context)
    except (ValueError, TypeError) as error:
        print(f"python -m roofline model: error: {error}", file=sys.stderr)
        return 2
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            print(f"cannot write {args.json}: {error.strerror or error}", file=sys.stderr)
            return 2
    return 0
