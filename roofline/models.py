"""Whole models: a decoder-only transformer's sizes, its parameter count and a small catalog.

`ModelConfig` holds the sizes a roofline needs (layers, widths, heads, experts); from them
it counts parameters, the parameters a token actually uses (mixture of experts), the KV
cache per token and the shapes of every matmul in a layer. `get_model("Llama 3 70B")`
returns a published configuration with its source, like `get_chip` for hardware;
`ModelConfig.from_hf_config("config.json")` reads a Hugging Face configuration.

What `params` counts (every parameter of a Llama/Mistral/PaLM-style model):

- per layer, the matmul weights: Q [D, H d_h], K and V [D, H_kv d_h] each, O [H d_h, D];
  the MLP: up and down [D, F] and [F, D], plus a gate [D, F] when `gated_mlp` (SwiGLU);
  with `experts` > 1 every expert has its own MLP and a router [D, experts] picks
  `experts_per_token` of them for each token;
- per layer, two normalisation scale vectors of D (RMSNorm, as Llama; no biases), and one
  final norm of D;
- the token embedding [vocab, D] and the output head [D, vocab], one shared table when
  `tied_embeddings`.

Not counted: biases (Llama, Mistral and PaLM have none; GPT-3 has them, about 0.01 % of
its weights), LayerNorm shift vectors and learned position embeddings (GPT-3: 2048 x D,
0.01 %). So counts agree with published totals of models with biases to within a fraction
of a percent, and exactly with Llama's.
"""

from __future__ import annotations

import contextvars
import json
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import cast

from .dtypes import bytes_per_element
from .hardware import Source

__all__ = [
    "ModelConfig",
    "LayerMatmul",
    "MODELS",
    "get_model",
    "list_models",
    "register_model",
]


@dataclass(frozen=True)
class LayerMatmul:
    """One weight matrix of a layer, [d_in, d_out], multiplied by every token that uses it.

    `copies`: how many such matrices the layer holds (one per expert for an expert's MLP);
    `active`: how many of them each token goes through (experts_per_token for an expert's
    MLP). Per token the matmul costs 2 x d_in x d_out FLOPs per active copy.
    """

    name: str
    d_in: int
    d_out: int
    copies: int = 1
    active: int = 1

    @property
    def params(self) -> int:
        """Weights in all copies: copies x d_in x d_out."""
        return self.copies * self.d_in * self.d_out

    @property
    def active_params(self) -> int:
        """Weights one token multiplies by: active x d_in x d_out."""
        return self.active * self.d_in * self.d_out


def _whole(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


@dataclass(frozen=True)
class ModelConfig:
    """A decoder-only transformer, sizes only (the module docstring says what is counted).

    layers: decoder layers (L). d_model: width of the residual stream (D). heads: query
    heads (H). d_ff: hidden width of the MLP (F; of each expert's MLP in a mixture of
    experts). vocab: vocabulary size (V). kv_heads: key/value heads (H_kv; default `heads`:
    multi-head attention; 1: multi-query; in between: grouped-query). head_dim: d_h, default
    d_model / heads. gated_mlp: three MLP matrices (SwiGLU: up, gate, down) instead of two.
    experts / experts_per_token: a mixture of experts (each token's MLP is `experts_per_token`
    of `experts` MLPs). tied_embeddings: the output head reuses the embedding table.
    name, source: for people (a catalog entry's `source` says where its sizes come from).
    """

    layers: int
    d_model: int
    heads: int
    d_ff: int
    vocab: int
    kv_heads: int | None = None
    head_dim: int | None = None
    gated_mlp: bool = False
    experts: int = 1
    experts_per_token: int = 1
    tied_embeddings: bool = False
    name: str | None = None
    source: Source | None = field(default=None, compare=False, repr=False)
    max_context: int | None = None
    """The longest context (prompt + generated tokens) the model was trained for (Hugging
    Face's max_position_embeddings); None: not stated, nothing is checked."""

    def __post_init__(self):
        for size in ("layers", "d_model", "heads", "d_ff", "vocab", "experts"):
            object.__setattr__(self, size, _whole(size, getattr(self, size)))
        epk = _whole("experts_per_token", self.experts_per_token)
        object.__setattr__(self, "experts_per_token", epk)
        if epk > self.experts:
            raise ValueError(
                f"experts_per_token ({epk}) cannot exceed experts ({self.experts}): "
                "a token is routed to some of the experts that exist"
            )
        kv = self.heads if self.kv_heads is None else _whole("kv_heads", self.kv_heads)
        if self.heads % kv:
            raise ValueError(
                f"kv_heads ({kv}) must divide heads ({self.heads}): each key/value head serves "
                "a whole group of query heads (1 = multi-query, heads = multi-head)"
            )
        object.__setattr__(self, "kv_heads", kv)
        if self.head_dim is None:
            if self.d_model % self.heads:
                raise ValueError(
                    f"heads ({self.heads}) does not divide d_model ({self.d_model}); "
                    "give head_dim explicitly (e.g. head_dim=128)"
                )
            object.__setattr__(self, "head_dim", self.d_model // self.heads)
        else:
            object.__setattr__(self, "head_dim", _whole("head_dim", self.head_dim))
        for flag in ("gated_mlp", "tied_embeddings"):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{flag} must be True or False, got {getattr(self, flag)!r}")
        if self.max_context is not None:
            object.__setattr__(self, "max_context", _whole("max_context", self.max_context))
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f"name must be text, got {self.name!r}")

    # -- sizes derived from the configuration
    @property
    def attention_width(self) -> int:
        """H x d_h: the width of the queries (PaLM's "attention width"; 12288 for PaLM 540B,
        whose d_model is 18432)."""
        return self.heads * cast(int, self.head_dim)  # __post_init__ fills head_dim

    @property
    def kv_width(self) -> int:
        """H_kv x d_h: the width of the keys (and of the values) of one token in one layer."""
        return cast(int, self.kv_heads) * cast(int, self.head_dim)  # both filled by __post_init__

    @property
    def is_moe(self) -> bool:
        """True for a mixture of experts (more than one expert MLP per layer)."""
        return self.experts > 1

    @property
    def label(self) -> str:
        """The name, or the sizes when the configuration has no name."""
        return self.name or (
            f"model (L={self.layers}, D={self.d_model}, H={self.heads}, F={self.d_ff})"
        )

    def layer_matmuls(self) -> tuple[LayerMatmul, ...]:
        """Every weight matrix of one layer, in the order a token meets them."""
        D, F, E, k = self.d_model, self.d_ff, self.experts, self.experts_per_token
        mats = [
            LayerMatmul("Q projection", D, self.attention_width),
            LayerMatmul("K projection", D, self.kv_width),
            LayerMatmul("V projection", D, self.kv_width),
            LayerMatmul("O projection", self.attention_width, D),
        ]
        if self.is_moe:
            mats.append(LayerMatmul("router", D, E))
        mats.append(LayerMatmul("MLP up", D, F, E, k))
        if self.gated_mlp:
            mats.append(LayerMatmul("MLP gate", D, F, E, k))
        mats.append(LayerMatmul("MLP down", F, D, E, k))
        return tuple(mats)

    @property
    def layer_params(self) -> int:
        """Matmul weights of one layer (all experts), norms excluded."""
        return sum(m.params for m in self.layer_matmuls())

    @property
    def expert_params(self) -> int:
        """Weights of every expert MLP in all layers (0 for a dense model): what expert
        parallelism splits."""
        if not self.is_moe:
            return 0
        return self.layers * sum(m.params for m in self.layer_matmuls() if m.copies > 1)

    @property
    def embedding_params(self) -> int:
        """The embedding table and the output head (one table when tied): V x D each."""
        return (1 if self.tied_embeddings else 2) * self.vocab * self.d_model

    @property
    def norm_params(self) -> int:
        """Normalisation scales: two of D per layer and a final one (RMSNorm, no biases)."""
        return (2 * self.layers + 1) * self.d_model

    @property
    def params(self) -> int:
        """Every parameter: all layers' matmul weights (every expert), the norms, the
        embedding and the output head (counted once when tied)."""
        return self.layers * self.layer_params + self.norm_params + self.embedding_params

    @property
    def active_params(self) -> int:
        """Parameters one token uses: as `params`, with only `experts_per_token` of the expert
        MLPs (equal to `params` for a dense model)."""
        per_layer = sum(m.active_params for m in self.layer_matmuls())
        return self.layers * per_layer + self.norm_params + self.embedding_params

    @property
    def matmul_params(self) -> int:
        """Weights a token is multiplied by (the N of "6N FLOPs per token"): every layer's
        active matmul weights plus the output head [D, V]. The embedding lookup is a gather,
        not a matmul, so an untied input table is left out; norms are elementwise."""
        per_layer = sum(m.active_params for m in self.layer_matmuls())
        return self.layers * per_layer + self.vocab * self.d_model

    def weight_bytes(self, dtype="bf16") -> float:
        """Bytes of every parameter in `dtype` (bf16: 2 bytes each)."""
        return self.params * bytes_per_element(dtype)

    def kv_cache_bytes_per_token(self, dtype="bf16") -> float:
        """KV-cache bytes one token of context holds, all layers together:
        2 (K and V) x layers x kv_heads x head_dim x bytes per element of `dtype`.
        Grouped-query and multi-query attention store kv_heads, not heads."""
        return 2 * self.layers * self.kv_width * bytes_per_element(dtype)

    def with_changes(self, **changes) -> ModelConfig:
        """A copy with some fields changed (validated again), e.g. `.with_changes(layers=40)`."""
        return replace(self, **changes)

    # -- display
    def summary(self):
        """The sizes and counts, as a `roofline.display.Summary`."""
        from .display import Summary

        attention = (
            "multi-head"
            if self.kv_heads == self.heads
            else ("multi-query" if self.kv_heads == 1 else "grouped-query")
        )
        rows = [
            ("layers", str(self.layers)),
            ("d_model", str(self.d_model)),
            (
                "attention",
                f"{self.heads} heads of {self.head_dim}, {self.kv_heads} KV heads ({attention})",
            ),
            ("d_ff", f"{self.d_ff} ({'gated, 3 matrices' if self.gated_mlp else '2 matrices'})"),
            ("vocab", f"{self.vocab}{' (tied embeddings)' if self.tied_embeddings else ''}"),
        ]
        if self.is_moe:
            rows.append(("experts", f"{self.experts_per_token} of {self.experts} per token"))
        rows.append(("parameters", f"{self.params / 1e9:.4g} billion"))
        if self.is_moe:
            rows.append(("active per token", f"{self.active_params / 1e9:.4g} billion"))
        if self.max_context is not None:
            rows.append(("context", f"up to {self.max_context:,} tokens"))
        if self.source is not None:
            rows.append(("source", f"{self.source.url}: {self.source.says}"))
        return Summary(f"Model {self.label}", rows)

    def __str__(self) -> str:
        return self.label

    def _repr_html_(self) -> str:
        return self.summary().html()

    def to_dict(self) -> dict:
        """The configuration's fields (without the source), e.g. for JSON."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "source"}

    @classmethod
    def from_dict(cls, data: dict) -> ModelConfig:
        """The inverse of `to_dict` (unknown keys are an error naming them)."""
        names = {f.name for f in fields(cls)} - {"source"}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(
                f"unknown ModelConfig field(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}"
                ". For a Hugging Face config.json use ModelConfig.from_hf_config."
            )
        return cls(**data)

    @classmethod
    def from_hf_config(cls, path_or_dict, name=None) -> ModelConfig:
        """Read a Hugging Face `config.json` (a path, a folder holding one, or its dict).

        Llama / Mistral / Mixtral / Qwen keys: num_hidden_layers, hidden_size,
        num_attention_heads, intermediate_size, vocab_size; optional num_key_value_heads,
        head_dim, tie_word_embeddings, num_local_experts or num_experts, num_experts_per_tok
        (with moe_intermediate_size as the expert width where given). These families (and
        Gemma's GeGLU) use a gated MLP; another model_type with hidden_act "gelu"/"relu" reads
        as an ungated one. A missing tie_word_embeddings takes transformers' default for the
        family (tied for Gemma, untied for the others).
        """
        data, default_name = _read_hf(path_or_dict)
        return _from_hf(cls, data, name or default_name)


# ---------------------------------------------------------------- Hugging Face config.json

_GATED_FAMILIES = ("llama", "mistral", "mixtral", "qwen", "gemma")
_HF_REQUIRED = {
    "layers": "num_hidden_layers",
    "d_model": "hidden_size",
    "heads": "num_attention_heads",
    "vocab": "vocab_size",
}


def _read_hf(path_or_dict):
    if isinstance(path_or_dict, dict):
        return path_or_dict, None
    if not isinstance(path_or_dict, (str, Path)):
        raise TypeError(
            f"from_hf_config takes a path to config.json or its dict, got {path_or_dict!r}"
        )
    path = Path(path_or_dict)
    if path.is_dir():
        path = path / "config.json"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds {type(data).__name__}, not a JSON object of settings")
    default = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
    return data, default


def _from_hf(cls, data: dict, name):
    def need(key):
        if key not in data or data[key] is None:
            kind = data.get("model_type", "unknown model_type")
            raise ValueError(
                f"config.json ({kind}) has no {key!r}; expected Llama/Mistral/Mixtral/Qwen-style "
                f"keys ({', '.join(_HF_REQUIRED.values())}, intermediate_size)"
            )
        return data[key]

    kwargs = {ours: need(theirs) for ours, theirs in _HF_REQUIRED.items()}
    experts = data.get("num_local_experts") or data.get("num_experts") or 1
    if experts > 1:
        if data.get("shared_expert_intermediate_size") or data.get("n_shared_experts"):
            raise ValueError(
                "config.json describes shared experts next to the routed ones; ModelConfig "
                "models routed experts only (Mixtral / Qwen3-MoE style)"
            )
        kwargs["experts"] = experts
        kwargs["experts_per_token"] = need("num_experts_per_tok")
        kwargs["d_ff"] = data.get("moe_intermediate_size") or need("intermediate_size")
    else:
        kwargs["d_ff"] = need("intermediate_size")
    if data.get("num_key_value_heads") is not None:
        kwargs["kv_heads"] = data["num_key_value_heads"]
    if data.get("head_dim") is not None:
        kwargs["head_dim"] = data["head_dim"]
    kind = str(data.get("model_type", "")).lower()
    act = str(data.get("hidden_act", data.get("hidden_activation", "silu"))).lower()
    # Llama, Mistral, Mixtral, Qwen and Gemma (GeGLU: gelu, gated) all gate their MLP
    kwargs["gated_mlp"] = kind.startswith(_GATED_FAMILIES) or not act.startswith(("gelu", "relu"))
    # transformers' own defaults when the key is absent: Gemma ties, the others do not
    tied_default = kind.startswith("gemma")
    kwargs["tied_embeddings"] = bool(data.get("tie_word_embeddings", tied_default))
    if data.get("max_position_embeddings") is not None:
        kwargs["max_context"] = data["max_position_embeddings"]
    return cls(**kwargs, name=name or data.get("_name_or_path") or data.get("model_type"))


# ---------------------------------------------------------------- the catalog

_PALM = "https://arxiv.org/abs/2204.02311"
_MEGATRON = "https://arxiv.org/abs/2104.04473"
_GPT3 = "https://arxiv.org/abs/2005.14165"
_LLAMA3 = "https://arxiv.org/abs/2407.21783"


def _hf(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


_MODELS = [
    ModelConfig(
        32,
        4096,
        32,
        14336,
        128256,
        kv_heads=8,
        gated_mlp=True,
        name="Llama 3 8B",
        source=Source(
            _hf("meta-llama/Meta-Llama-3-8B"),
            "num_hidden_layers 32, hidden_size 4096, num_attention_heads 32, num_key_value_heads "
            "8, intermediate_size 14336, vocab_size 128256, tie_word_embeddings false; "
            "8.03B parameters",
        ),
    ),
    ModelConfig(
        80,
        8192,
        64,
        28672,
        128256,
        kv_heads=8,
        gated_mlp=True,
        name="Llama 3 70B",
        source=Source(
            _hf("meta-llama/Meta-Llama-3-70B"),
            "num_hidden_layers 80, hidden_size 8192, num_attention_heads 64, num_key_value_heads "
            "8, intermediate_size 28672, vocab_size 128256, tie_word_embeddings false; "
            "70.6B parameters",
        ),
    ),
    ModelConfig(
        80,
        8192,
        64,
        28672,
        32000,
        kv_heads=8,
        gated_mlp=True,
        name="Llama 2 70B",
        max_context=4096,
        source=Source(
            _hf("meta-llama/Llama-2-70b-hf"),
            "num_hidden_layers 80, hidden_size 8192, num_attention_heads 64, num_key_value_heads "
            "8, intermediate_size 28672, vocab_size 32000, max_position_embeddings 4096, "
            "tie_word_embeddings false; 69B parameters (MLPerf Inference's llama2-70b)",
        ),
    ),
    ModelConfig(
        126,
        16384,
        128,
        53248,
        128256,
        kv_heads=8,
        gated_mlp=True,
        name="Llama 3.1 405B",
        max_context=131072,
        source=Source(
            _hf("meta-llama/Llama-3.1-405B"),
            "num_hidden_layers 126, hidden_size 16384, num_attention_heads 128, "
            "num_key_value_heads 8, intermediate_size 53248, vocab_size 128256, "
            "max_position_embeddings 131072 (Llama 3 paper, "
            f"{_LLAMA3}, Table 3: 126 layers, model dimension 16,384, FFN dimension 53,248, "
            "128 attention heads, 8 key/value heads); 405B parameters",
        ),
    ),
    ModelConfig(
        32,
        4096,
        32,
        14336,
        32000,
        kv_heads=8,
        gated_mlp=True,
        experts=8,
        experts_per_token=2,
        name="Mixtral 8x7B",
        max_context=32768,
        source=Source(
            _hf("mistralai/Mixtral-8x7B-v0.1"),
            "num_hidden_layers 32, hidden_size 4096, num_attention_heads 32, num_key_value_heads "
            "8, intermediate_size 14336, vocab_size 32000, num_local_experts 8, "
            "num_experts_per_tok 2, max_position_embeddings 32768; Mistral AI: 46.7B total "
            "parameters, 12.9B used per token",
        ),
    ),
    ModelConfig(
        96,
        12288,
        96,
        4 * 12288,
        50257,
        tied_embeddings=True,
        name="GPT-3 175B",
        max_context=2048,
        source=Source(
            _GPT3,
            "Brown et al., Table 2.1: GPT-3 175B, n_params 175.0B, n_layers 96, d_model 12288, "
            "n_heads 96, d_head 128; context window n_ctx = 2048 tokens (section 2.1); "
            "d_ff = 4 d_model; GPT-2's 50257-token vocabulary with the "
            "output head tied to the embedding",
        ),
    ),
    ModelConfig(
        118,
        18432,
        48,
        4 * 18432,
        256000,
        kv_heads=1,
        head_dim=256,
        gated_mlp=True,
        tied_embeddings=True,
        name="PaLM 540B",
        max_context=2048,
        source=Source(
            _PALM,
            "Chowdhery et al., Table 1 and section 2: 118 layers, d_model 18432, 48 heads of "
            "256 (attention width 12288), multi-query attention, SwiGLU with d_ff = 4 d_model, "
            "shared input-output embeddings, 256k vocabulary, no biases, sequence length 2048; "
            "540.35B parameters",
        ),
    ),
    ModelConfig(
        128,
        25600,
        160,
        4 * 25600,
        51200,
        tied_embeddings=True,
        name="Megatron 1T",
        source=Source(
            _MEGATRON,
            "Narayanan et al., Table 1: 1008B parameters, 160 attention heads, hidden size "
            "25600, 128 layers; vocabulary 51,200; d_ff = 4 h, output layer sharing the embedding "
            "(section 5.1: parameters 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)))",
        ),
    ),
    ModelConfig(
        80,
        12288,
        96,
        4 * 12288,
        51200,
        tied_embeddings=True,
        name="Megatron 145.6B",
        source=Source(
            _MEGATRON,
            "Narayanan et al., Table 1: 145.6B parameters, 96 attention heads, hidden size "
            "12288, 80 layers; vocabulary 51,200; d_ff = 4 h, output layer sharing the embedding",
        ),
    ),
]


def _name(model: ModelConfig) -> str:
    """The name of a catalog or registered model (`register_model` refuses one without)."""
    assert model.name is not None, "catalog and registered models are named"
    return model.name


#: name -> ModelConfig, in the order the book lists them.
MODELS: dict[str, ModelConfig] = {_name(m): m for m in _MODELS}
_ALIASES = {
    "Llama 3 8B": ("Meta-Llama-3-8B", "Llama 3.1 8B", "llama3-8b"),
    "Llama 3 70B": ("Meta-Llama-3-70B", "Llama 3.1 70B", "llama3-70b"),
    "Llama 2 70B": ("Llama-2-70b-hf", "llama2-70b"),
    "Llama 3.1 405B": ("Llama 3 405B", "Meta-Llama-3.1-405B", "llama3-405b"),
    "Mixtral 8x7B": ("Mixtral-8x7B-v0.1", "mixtral"),
    "GPT-3 175B": ("GPT-3", "gpt3", "davinci"),
    "PaLM 540B": ("PaLM",),
    "Megatron 1T": ("Megatron 1008B",),
    "Megatron 145.6B": ("Megatron 146B",),
}
_USER_MODELS: dict[str, ModelConfig] = {}


#: While set, `get_model` looks names up here, not in the catalog: {_key(name): ModelConfig} of a
#: homework edition's frozen figures (roofline.exercises.editions). None: the catalog.
FROZEN_MODELS: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "frozen_models", default=None
)


def _key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name.lower())


def _index() -> dict[str, ModelConfig]:
    index = {}
    for model in list(MODELS.values()) + list(_USER_MODELS.values()):
        index[_key(_name(model))] = model
        for alias in _ALIASES.get(_name(model), ()):
            index.setdefault(_key(alias), model)
    return index


def list_models() -> list[str]:
    """Names of every model in the catalog (and any you registered), in book order."""
    return list(MODELS) + list(_USER_MODELS)


def get_model(name) -> ModelConfig:
    """Look a model up by name or alias, ignoring case, spaces, dashes and underscores.

    get_model("Llama 3 70B") and get_model("llama-3-70b") are the same. A `ModelConfig`
    passed in is returned as it is. An unknown name raises ValueError naming the closest.
    """
    if isinstance(name, ModelConfig):
        return name
    if not isinstance(name, str):
        raise TypeError(f"model name must be text such as 'Llama 3 70B', got {name!r}")
    frozen = FROZEN_MODELS.get()  # a homework edition's frozen figures, while one is read
    index = _index() if frozen is None else frozen
    key = _key(name)
    if key in index:
        return index[key]
    from .catalog import closest_names

    hint = closest_names(key, {k: m.name for k, m in index.items()}, list_models())
    raise ValueError(
        f"unknown model {name!r}.{hint} Or describe it: "
        "ModelConfig(layers, d_model, heads, d_ff, vocab, ...) or ModelConfig.from_hf_config(path)."
    )


def register_model(model: ModelConfig) -> ModelConfig:
    """Make your own named `ModelConfig` findable by `get_model` (for this Python session)."""
    if not isinstance(model, ModelConfig):
        raise TypeError("register_model takes a roofline.ModelConfig")
    if not model.name:
        raise ValueError("give the model a name= to register it")
    if model.name in MODELS:
        raise ValueError(f"{model.name!r} is a catalog model; give yours another name")
    _USER_MODELS[model.name] = model
    return model
