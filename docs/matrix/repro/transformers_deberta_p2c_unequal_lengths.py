"""DeBERTa's position-to-content (p2c) term is wrong when query and key lengths differ (5.24).

``DisentangledSelfAttention.disentangled_attention_bias`` gathers the p2c term key-major: key
``j`` of query ``i`` reads row ``clamp(-b(k_j - q_i) + S, 0, 2S - 1)`` of the projected relative
embeddings (``S = position_buckets`` or ``max_relative_positions``, ``b`` the log bucket).  With
``Lq != Lk`` (the module's public ``forward(hidden_states, attention_mask, query_states=...)``
with queries of another length) three things go wrong:

1. DeBERTa-v2 (``deberta_v2/modeling_deberta_v2.py:119-128`` vs ``:323-329``): ``build_rpos`` is
   declared ``(query, key, relative_pos, position_buckets, max_relative_positions)`` and called
   with ``(..., self.max_relative_positions, self.position_buckets)``: the key-key positions are
   bucketed with ``bucket_size=512, max_position=256`` instead of ``256, 512``.  At 4 queries over
   400 keys, 72,092 of the 160,000 rows of that table differ from the table with the parameters in
   order (``r = -300`` is bucket 10077 instead of -207, so p2c reads row 0 instead of 463: the swapped
   ``mid = 256`` leaves |r| <= 256 unbucketed and inverts the log beyond).  Older HF (4.x) and
   microsoft/DeBERTa pass them in order; SEW-D's copy (``sew_d/modeling_sew_d.py:813-824``) too.
2. DeBERTa-v2 and SEW-D return that key-key table, ``[Lk, Lk]``, as the p2c score: no row is
   picked for the real query positions (v1 and microsoft/DeBERTa gather rows
   ``relative_pos[:, :, :, 0]``), so ``c2p [Lq, Lk] + p2c [Lk, Lk]`` fails to broadcast in
   ``forward`` (or, for ``Lq = 1``, broadcasts into an ``[Lk, Lk]`` score).
3. DeBERTa v1 (``deberta/modeling_deberta.py:115-119``): ``build_rpos`` builds the p2c positions
   from ``(query_layer, key_layer)``, where 4.x built ``(key, key)``: ``p2c_dynamic_expand`` raises
   for ``Lq > 1``, and for ``Lq = 1`` every key reads row ``S`` (relative position 0) instead of
   ``S - j``.  (Its ``relative_pos=None`` path also calls the two-argument
   ``build_relative_position(query_layer, key_layer, device)``: a ``TypeError``.)

The models themselves always pass queries as long as the keys (``z_steps`` re-uses the sequence),
so only callers of the attention module with ``query_states`` of another length are affected.
Equal lengths are exact: every p2c row equals the c2p row (the bucket is odd).

Method: ``hidden_size = 1``, one head, the position projection the identity, query and key content
all ones and row ``s`` of ``rel_embeddings`` holding ``s``: each p2c score is the row it gathered.

Suggested upstream issue text: "DeBERTa / DeBERTa-v2 / SEW-D: the position-to-content term is
wrong when query and key lengths differ. DeBERTa-v2's build_rpos is called with
max_relative_positions and position_buckets swapped (modeling_deberta_v2.py:323-329 vs its
signature at :119), so the key-key relative positions are bucketed with bucket_size=512,
max_position=256; its result, and SEW-D's, is a [key_len, key_len] table that is never reduced to
the query rows (DeBERTa v1 does that with relative_pos[:, :, :, 0]), so c2p + p2c fails to
broadcast for query_len > 1. DeBERTa v1's build_rpos builds (query, key) positions where 4.x built
(key, key), so p2c_dynamic_expand raises for query_len > 1 and gives row att_span for every key
when query_len = 1. Passing the arguments in order and gathering the query rows (as 4.x v1 does)
fixes all three."

Run with torch and transformers installed: ``python transformers_deberta_p2c_unequal_lengths.py``.
Exits 1 while the bugs are present, 0 once fixed.  Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers import DebertaConfig, DebertaV2Config, SEWDConfig
from transformers.models.deberta import modeling_deberta as v1
from transformers.models.deberta_v2 import modeling_deberta_v2 as v2
from transformers.models.sew_d import modeling_sew_d as sewd


def attention(module, config_class, buckets, top, **extra):
    config = config_class(
        hidden_size=1,
        num_attention_heads=1,
        intermediate_size=4,
        relative_attention=True,
        max_relative_positions=top,
        pos_att_type=["p2c"],
        **({"position_buckets": buckets, "share_att_key": False} if buckets else {}),
        **extra,
    )
    att = module.DisentangledSelfAttention(config).eval()
    proj = att.pos_q_proj if module is v1 else att.pos_query_proj
    with torch.no_grad():
        proj.weight.fill_(1.0)
        proj.bias.zero_()
    return att


def expected(lq, lk, buckets, top):
    """Row clamp(-b(k_j - q_i) + S, 0, 2S - 1) for queries 0..lq-1, keys 0..lk-1 (HF's own bucket)."""
    rel = torch.arange(lk)[None, :] - torch.arange(lq)[:, None]  # k_j - q_i
    if buckets:
        rel = v2.make_log_bucket_position(rel, buckets, top).long()
    span = buckets or top
    return torch.clamp(-rel + span, 0, 2 * span - 1)


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
wrong = 0

# 1 + 2: DeBERTa-v2, 256 buckets, max_relative_positions 512, 4 queries over 400 keys
LQ, LK, B, M = 4, 400, 256, 512
att = attention(v2, DebertaV2Config, B, M)
rows = torch.arange(2 * B, dtype=torch.float32)[:, None]  # row s of rel_embeddings holds s
with torch.no_grad():
    p2c = att.disentangled_attention_bias(torch.ones(1, LQ, 1), torch.ones(1, LK, 1), None, rows, 1)[
        0
    ].round()
key_key = expected(LK, LK, B, M)  # the [Lk, Lk] table build_rpos meant to build
swapped = (p2c.long() != key_key).sum().item()
print(f"DeBERTa-v2 p2c of {LQ} queries over {LK} keys: shape {tuple(p2c.shape)} (expected ({LQ}, {LK}))")
print(
    f"  its key-key table vs the one with the bucket parameters in order: {swapped} of {LK * LK} rows differ"
)
r = v2.build_relative_position(torch.ones(LK, 1), torch.ones(LK, 1), bucket_size=M, max_position=B)[0]
print(
    f"  swapped bucket of r = -300: {int(r[0, 300])}; "
    f"in order: {int(v2.make_log_bucket_position(torch.tensor(-300), B, M))}"
)
wrong += swapped > 0 or tuple(p2c.shape) != (LQ, LK)
try:
    att.forward(
        torch.ones(1, LK, 1), torch.ones(1, 1, LQ, LK), query_states=torch.ones(1, LQ, 1), rel_embeddings=rows
    )
    print("  forward(query_states of 4 tokens): ran")
except RuntimeError as exc:
    print(f"  forward(query_states of 4 tokens): RuntimeError: {str(exc)[:90]}")
    wrong += 1

# 2: SEW-D (bucket parameters in order, the same [Lk, Lk] shape)
att = attention(sewd, SEWDConfig, B, M)
with torch.no_grad():
    p2c = att.disentangled_attention_bias(torch.ones(1, LQ, 1), torch.ones(1, LK, 1), None, rows, 1)[
        0
    ].round()
same = (p2c.long() == key_key).all().item()
print(f"SEW-D p2c: shape {tuple(p2c.shape)}; equal to the key-key table in order: {same}")
wrong += tuple(p2c.shape) != (LQ, LK)

# 3: DeBERTa v1 (no buckets), max_relative_positions 16: 1 query over 6 keys, 5 over 3
att = attention(v1, DebertaConfig, 0, 16)
table = torch.arange(32, dtype=torch.float32)[:, None]
for lq, lk in ((1, 6), (5, 3)):
    q, k = torch.ones(1, 1, lq, 1), torch.ones(1, 1, lk, 1)
    try:
        with torch.no_grad():
            p2c = (
                att.disentangled_att_bias(q, k, v1.build_relative_position(q, k), table, 1)[0, 0]
                .round()
                .long()
            )
        ok = p2c.shape == (lq, lk) and bool((p2c == expected(lq, lk, 0, 16)).all())
        print(
            f"DeBERTa v1 p2c, {lq} x {lk}: rows {p2c.tolist()}; expected {expected(lq, lk, 0, 16).tolist()}"
        )
    except RuntimeError as exc:
        ok = False
        print(f"DeBERTa v1 p2c, {lq} x {lk}: RuntimeError: {str(exc)[:90]}")
    wrong += not ok
sys.exit(1 if wrong else 0)
