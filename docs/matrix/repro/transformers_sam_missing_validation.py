"""SAM's positional embedding accepts image sizes it cannot use (transformers 5.24, silent results).

The reference (posenc-ref ``fourier_features`` / ``fourier_grid``) raises ValueError naming
``input_shape`` or ``height``; transformers computes a value instead:

* ``SamPositionalEmbedding.forward(coords, input_shape=(0, 4))`` divides y by 0: the
  features of every point are NaN (``inf * G``, then sin/cos of inf).
* ``SamPositionalEmbedding.forward(coords, input_shape=(4, 4, 4))`` reads ``input_shape[1]``
  and ``input_shape[0]`` and ignores the rest: a three-entry shape is taken for (H, W).
* ``SamModel.get_image_wide_positional_embeddings`` with ``image_embedding_size = 0``
  returns an empty ``[1, 2F, 0, 0]`` grid.

The same code is copied into SAM 2 (``Sam2PositionalEmbedding``, which also holds the
dead statement ``coordinates.to(torch.float32)`` whose result is never assigned),
EdgeTAM, SAM-HQ and the SAM 3 tracker.

Upstream issue text: "SamPositionalEmbedding.forward divides the coordinates by
input_shape without checking it: a zero side gives NaN features and extra entries are
ignored; get_image_wide_positional_embeddings returns an empty grid for size 0.
Suggested: raise ValueError for sides < 1 or a shape that is not (H, W)."

Run with torch and transformers installed.  Exits 1 while any case returns silently.
"""

import sys
import types

import torch
import transformers
from transformers.models.sam.modeling_sam import SamModel, SamPositionalEmbedding


def embedding() -> SamPositionalEmbedding:
    module = SamPositionalEmbedding(types.SimpleNamespace(scale=1.0, num_pos_feats=1))
    module.positional_embedding = torch.nn.Parameter(torch.tensor([[1.0], [0.5]]), requires_grad=False)
    return module


def features(shape: tuple) -> torch.Tensor:
    with torch.no_grad():
        return embedding()(torch.tensor([[[[0.5, 0.5]]]]), shape)


def grid(size: int) -> torch.Size:
    config = types.SimpleNamespace(prompt_encoder_config=types.SimpleNamespace(image_embedding_size=size))
    model = types.SimpleNamespace(config=config, shared_image_embedding=embedding())
    with torch.no_grad():
        return SamModel.get_image_wide_positional_embeddings(model).shape


cases = {
    "SamPositionalEmbedding, input_shape=(0, 4)": lambda: features((0, 4)),
    "SamPositionalEmbedding, input_shape=(4, 4, 4)": lambda: features((4, 4, 4)),
    "get_image_wide_positional_embeddings, image_embedding_size=0 (shape)": lambda: grid(0),
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
        shown = value.tolist() if isinstance(value, torch.Tensor) else list(value)
        print(f"BUG  {label}: returned {shown}")
print(f"{silent} of {len(cases)} out-of-range inputs returned a value")
sys.exit(1 if silent else 0)
