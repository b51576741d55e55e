"""Out-of-range parameters give silent results in transformers 5.24 (only a logged warning, or nothing).

Each case below is rejected by the reference (posenc-ref raises ValueError naming the
parameter); transformers computes a result instead:

* RoPE config validation (``RotaryEmbeddingConfigMixin.validate_rope``) only *logs*
  ``factor < 1``, ``beta_fast < beta_slow`` and ``high_freq_factor < low_freq_factor``, and
  does not check ``rope_theta > 1``.  Swapped YaRN betas invert the ramp: the
  high-frequency pairs get interpolated and the low-frequency ones kept, the opposite
  of YaRN.
* ``T5Attention._relative_position_bucket`` with ``max_distance == max_exact``
  (``num_buckets=32``, bidirectional, ``max_distance=8``) divides by ``log(1) = 0`` and
  casts inf/NaN to int64: buckets of -2**63.
* ``masking_utils.sliding_window_causal_mask_function(0)`` masks every key (softmax rows
  of NaN downstream).
* ``mpt.build_mpt_alibi_tensor(..., alibi_bias_max=0)`` gives every head slope 1.
* ``xlm.create_sinusoidal_embeddings(n, 0, out)`` returns an empty table.
* ``RobertaEmbeddings.create_position_ids_from_input_ids(..., cache_length=-1)``
  numbers the first real token ``padding_idx`` itself, the padding row.
* ``T5Attention(T5Config(relative_attention_max_distance=8))`` (``== max_exact``) is
  built and its ``compute_bias`` answers for near keys; from ``|k - q| = 9`` on the
  -2**63 buckets above make the embedding raise ``IndexError``.

Run with torch and transformers installed.  Exits 1 while any case returns silently.
"""

import sys

import torch
import transformers
from transformers import LlamaConfig, T5Config
from transformers.masking_utils import sliding_window_causal_mask_function
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor
from transformers.models.roberta.modeling_roberta import RobertaEmbeddings
from transformers.models.t5.modeling_t5 import T5Attention
from transformers.models.xlm.modeling_xlm import create_sinusoidal_embeddings


def rope(dim: int, params: dict, max_positions: int = 16384) -> torch.Tensor:
    config = LlamaConfig(
        head_dim=dim,
        hidden_size=dim,
        num_attention_heads=1,
        num_key_value_heads=1,
        max_position_embeddings=max_positions,
        rope_parameters=params,
    )
    if params["rope_type"] == "default":
        return LlamaRotaryEmbedding.compute_default_rope_parameters(config)[0]
    return ROPE_INIT_FUNCTIONS[params["rope_type"]](config)[0]


def buckets(relative: list[int]) -> torch.Tensor:
    return T5Attention._relative_position_bucket(
        torch.tensor(relative), bidirectional=True, num_buckets=32, max_distance=8
    )


def t5_bias(keys: int) -> list[float]:
    """compute_bias for one query at 0 over keys 0 .. keys-1 (table row r holds the value r)."""
    config = T5Config(
        d_model=1, d_kv=1, num_heads=1, relative_attention_num_buckets=32, relative_attention_max_distance=8
    )
    attention = T5Attention(config, has_relative_attention_bias=True)
    with torch.no_grad():
        attention.relative_attention_bias.weight.copy_(torch.arange(32.0)[:, None])
        return attention.compute_bias(1, keys)[0, 0, 0].tolist()


def unscaled(dim: int, base: float) -> torch.Tensor:
    return 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float) / dim)


cases = {
    "rope_theta=1 (every frequency 1)": lambda: rope(8, {"rope_type": "default", "rope_theta": 1.0}),
    "linear factor=0.5 (frequencies doubled)": lambda: rope(
        8, {"rope_type": "linear", "factor": 0.5, "rope_theta": 10000.0}
    ),
    "yarn beta_fast=1 < beta_slow=32 (ramp inverted; ratio to unscaled)": lambda: (
        rope(
            64,
            {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 4096,
                "beta_fast": 1.0,
                "beta_slow": 32.0,
                "rope_theta": 10000.0,
            },
        )[::8]
        / unscaled(64, 10000.0)[::8]
    ),
    "llama3 high_freq_factor=0.5 < low_freq_factor=1 (ratio to unscaled)": lambda: (
        rope(
            64,
            {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 0.5,
                "original_max_position_embeddings": 8192,
                "rope_theta": 500000.0,
            },
            max_positions=65536,
        )[::8]
        / unscaled(64, 500000.0)[::8]
    ),
    "T5 buckets, num_buckets=32, max_distance=8, relative [-9, 0, 9]": lambda: buckets([-9, 0, 9]),
    "T5 compute_bias, max_distance=8, keys 0, 1 (rows read)": lambda: t5_bias(2),
    "T5 compute_bias, max_distance=8, keys 0 .. 9": lambda: t5_bias(10),
    "create_position_ids_from_input_ids(cache_length=-1), padding_idx 1, no padding": lambda: (
        RobertaEmbeddings.create_position_ids_from_input_ids(torch.tensor([[5, 6, 7]]), 1, cache_length=-1)
    ),
    "sliding_window=0 mask, 3 x 3": lambda: sliding_window_causal_mask_function(0)(
        torch.tensor(0), torch.tensor(0), torch.arange(3)[:, None], torch.arange(3)[None, :]
    ),
    "MPT alibi_bias_max=0 slopes": lambda: -build_mpt_alibi_tensor(4, 2, alibi_bias_max=0)[:, 0, 0],
    "XLM dim=0 table shape": lambda: create_sinusoidal_embeddings(3, 0, torch.empty(3, 0)).shape,
}

print(f"transformers {transformers.__version__}, torch {torch.__version__}")
silent = 0
for label, make in cases.items():
    try:
        value = make()
    except Exception as exc:  # a raised error is what the reference does
        print(f"ok   {label}: raised {type(exc).__name__}: {exc}")
    else:
        silent += 1
        shown = value.tolist() if isinstance(value, torch.Tensor) else value
        print(f"BUG  {label}: returned {shown}")
print(f"{silent} of {len(cases)} out-of-range inputs returned a value")
sys.exit(1 if silent else 0)
