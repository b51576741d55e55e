"""Six configs accept an odd RoPE width that LlamaConfig rejects, and build a wider table (5.24).

``LlamaConfig(head_dim=7)`` is refused by ``validate_rope`` ("RoPE requires an even rotary
dimension").  The text configs of Gemma 4 (and Gemma 4 Unified, DiffusionGemma,
EmbeddingGemma 2, which share its per-layer ``rope_parameters``), Step3p7 and Dots3-Note accept
``head_dim=7``; their rotary embedding then computes ``inv_freq`` over ``arange(0, 7, 2)`` (four
frequencies) and returns a cos/sin table 8 channels wide for a 7-channel head (the layer type read
here: Gemma's sliding layers, Step3p7's full ones, Dots3-Note's indexed ones): the mismatch
surfaces later as a shape error in ``apply_rotary_pos_emb``, or, with a head that is sliced, as
a silently wrong rotation.

Suggested upstream issue text: "validate_rope's even-dimension check does not run for the per-layer
RoPE configs of Gemma 4 / Gemma 4 Unified / DiffusionGemma / EmbeddingGemma 2, nor for Step3p7 and
Dots3-Note: head_dim=7 is accepted and the rotary embedding returns an 8-channel table. LlamaConfig
rejects the same config with 'RoPE requires an even rotary dimension'. Running the same check for
every layer type's rope_parameters would reject it."

Run with torch and transformers installed: ``python transformers_odd_head_dim_accepted.py``.
Exits 1 while any of the six accepts the odd width, 0 once all reject it.  Plain torch, no posenc-ref.
"""

import importlib
import sys
import warnings

import torch

warnings.filterwarnings("ignore")

FAMILIES = {  # family -> (config class, rotary class, the layer type whose table is read)
    "gemma4": ("Gemma4TextConfig", "Gemma4TextRotaryEmbedding", "sliding_attention"),
    "gemma4_unified": ("Gemma4UnifiedTextConfig", "Gemma4UnifiedTextRotaryEmbedding", "sliding_attention"),
    "diffusion_gemma": ("DiffusionGemmaTextConfig", "DiffusionGemmaTextRotaryEmbedding", "sliding_attention"),
    "embedding_gemma2": ("EmbeddingGemma2TextConfig", "EmbeddingGemma2RotaryEmbedding", "sliding_attention"),
    "step3p7": ("Step3p7TextConfig", "Step3p7RotaryEmbedding", "full_attention"),
    "dots3_note": ("Dots3NoteTextConfig", "Dots3NoteTextRotaryEmbedding", "indexed_attention"),
}

from transformers import LlamaConfig  # noqa: E402

try:
    LlamaConfig(head_dim=7, hidden_size=7, num_attention_heads=1)
    print("LlamaConfig(head_dim=7): accepted")
except Exception as exc:  # StrictDataclassClassValidationError wrapping the ValueError
    print(f"LlamaConfig(head_dim=7): rejected ({type(exc).__name__})")

accepted = []
for family, (config_name, rotary_name, layer_type) in FAMILIES.items():
    configs = importlib.import_module(f"transformers.models.{family}.configuration_{family}")
    modeling = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    try:
        widths = {"head_dim": 7, "hidden_size": 7}
        if family == "dots3_note":  # its rotary width is qk_rope_head_dim
            widths["qk_rope_head_dim"] = 7
        config = getattr(configs, config_name)(**widths, num_attention_heads=1, num_key_value_heads=1)
        rotary = getattr(modeling, rotary_name)(config)
        cos, _ = rotary(torch.empty(0), torch.arange(3)[None], layer_type)
    except Exception as exc:
        print(f"{config_name}(head_dim=7): rejected ({type(exc).__name__})")
        continue
    accepted.append(family)
    print(f"{config_name}(head_dim=7): accepted; {rotary_name} returns a table {cos.shape[-1]} channels wide")
sys.exit(1 if accepted else 0)
