"""The cases of an export: what ``golden export`` writes for each RoPE layer type, ALiBi or T5 model.

Cases are the catalogue's :class:`~.cases.Case` records for the canonical functions
declared in ``golden/cases`` (same oracle, tolerances, phase records), with the
model's parameters: see :mod:`.export` for the list.  ``rope_cos_sin`` cases carry a
fast evaluation (:func:`..oracle._fast.rope_cos_sin_table`, the same float64 values
as the declared oracle) that the generator uses in place of the element-by-element one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import oracle
from ..oracle._fast import rope_cos_sin_table
from .cases import Case, F, I
from .hf_config import RopeLayer
from .notes import NOTES, add_note

__all__ = ["CHUNK", "FORMS", "LAYOUTS", "SAMPLE", "Builder", "bias_edges", "default_positions", "ranges"]

#: Positions per rope_cos_sin case (one adapter call): 16384 x 128 float64 is 16 MiB per output.
CHUNK = 16384
#: Positions per fast cos/sin table (shared by the chunks it covers): 8 chunks.
_TABLE_ROWS = 8 * CHUNK
#: Most positions in a rotation (rope, apply_rope) or ALiBi bias case.
SAMPLE = 64
LAYOUTS = ("half", "interleaved")
FORMS = ("symmetric", "causal")
_LAYOUT_FLAG = {"half": "HalfLayout", "interleaved": "InterleavedLayout"}
_FORM_FLAG = {"symmetric": "AlibiSymmetric", "causal": "AlibiCausalForm"}
_BASE_POSITIONS = (0, 1, 2, 3, 255, 256, 1023, 1024)


if "ModelExport" not in NOTES:
    add_note(
        "ModelExport",
        "Functionality",
        "Exported for one model by 'posenc-ref golden export': its config's parameters at the positions "
        "asked for and around its original and extended context edges (the file's provenance names the "
        "config's SHA-256 and the options).",
    )


def ranges(positions: Sequence[int]) -> str:
    """The shortest comma-separated form of sorted distinct positions (single values and ranges)."""
    out, start = [], 0
    values = list(positions)
    while start < len(values):
        end = start
        while end + 1 < len(values) and values[end + 1] == values[end] + 1:
            end += 1
        if end - start >= 2:
            out.append(f"{values[start]}:{values[end] + 1}")
        else:
            out.extend(str(v) for v in values[start : end + 1])
        start = end + 1
    return ",".join(out)


def default_positions(edges: Iterable[int]) -> list[int]:
    found = set(_BASE_POSITIONS)
    for edge in edges:
        found.update(p for p in (edge - 1, edge, edge + 1) if 0 <= p < 2**53)
    return sorted(found)


def _sample(positions: Sequence[int], edges: Sequence[int]) -> list[int]:
    """At most SAMPLE positions: all if few, else the defaults among them and an even spread."""
    if len(positions) <= SAMPLE:
        return list(positions)
    present = set(positions)
    keep = [p for p in default_positions(edges) if p in present][: SAMPLE // 2]
    rest = SAMPLE - len(keep)
    spread = [positions[round(k * (len(positions) - 1) / max(rest - 1, 1))] for k in range(rest)]
    return sorted(set(keep) | set(spread))


def _seeded(seed: str, shape: tuple[int, ...]) -> list[Any]:
    """Dyadic q/k values k/64, |k| <= 256: exact in float32 and float64 (as the shipped cases)."""
    rng = random.Random(seed)

    def build(dims: tuple[int, ...]) -> Any:
        return rng.randint(-256, 256) / 64 if not dims else [build(dims[1:]) for _ in range(dims[0])]

    return build(shape)


# --- the cases ------------------------------------------------------------------


def _rounded_frequencies(layer: RopeLayer, seq_len: int | None) -> tuple[list[float], float]:
    inv, factor = oracle.rope.rope_frequencies(
        layer.dim, base=layer.base, scaling=layer.scaling, seq_len=seq_len
    )
    return [oracle.round_float64(t) for t in inv], oracle.round_float64(factor)


def _regimes(layer: RopeLayer, positions: Sequence[int]) -> list[tuple[str, int | None, list[int]]]:
    """(name, seq_len, positions) for each set of frequencies the positions need.

    LongRoPE (``original_max``) and dynamic NTK (``max_position_embeddings``) change
    their frequencies with the sequence length: positions below the threshold are also
    exported with the short (unscaled) frequencies, and every position with those of a
    sequence that holds them all (``seq_len = max + 1``) when that crosses it.
    """
    key = {"longrope": "original_max_position_embeddings", "dynamic": "max_position_embeddings"}
    if layer.rope_type not in key:
        return [("seq-len-none", None, list(positions))]
    threshold = int(layer.scaling[key[layer.rope_type]])
    out = []
    short = [p for p in positions if p < threshold]
    if short:
        out.append(("seq-len-none", None, short))
    if positions[-1] + 1 > threshold:
        out.append((f"seq-len-{positions[-1] + 1}", positions[-1] + 1, list(positions)))
    return out


class Builder:
    """Collects the cases of an export and the fast evaluations of its cos/sin cases."""

    def __init__(self, layouts: Sequence[str], forms: Sequence[str], seed: int) -> None:
        self.layouts, self.forms, self.seed = tuple(layouts), tuple(forms), seed
        self.cases: list[Case] = []
        self.compute: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}

    def add(
        self, id: str, comment: str, flags: Sequence[str], compare: str | None = None, **inputs: Any
    ) -> None:
        self.cases.append(Case(id, comment, ("ModelExport", *flags), inputs, compare=compare))

    def rope_layer(self, layer: RopeLayer, positions: list[int], edges: list[int]) -> None:
        n = layer.name
        what = (
            f"{layer.rope_type} RoPE, base {layer.base:g}, {layer.dim} of {layer.head_dim} channels rotated"
        )
        seq_lens = {s for _, s, _ in _regimes(layer, positions)}
        if layer.rope_type == "longrope":
            original = int(layer.scaling["original_max_position_embeddings"])
            seq_lens |= {original, original + 1}
        elif layer.rope_type == "dynamic":
            limit = int(layer.scaling["max_position_embeddings"])
            seq_lens |= {limit, limit + 1}
        for seq_len in sorted(seq_lens, key=lambda s: -1 if s is None else s):
            self.add(
                f"rope_frequencies/{n}/seq-len-{'none' if seq_len is None else seq_len}",
                f"{what}; seq_len {seq_len}.",
                (),
                dim=layer.dim,
                base=layer.base,
                scaling=layer.scaling,
                seq_len=seq_len,
            )
        for regime, seq_len, selected in _regimes(layer, positions):
            inv, factor = _rounded_frequencies(layer, seq_len)
            large = ("LargePosition",) if selected[-1] >= 2**20 else ()
            for start in range(0, len(selected), CHUNK):
                chunk = selected[start : start + CHUNK]
                if start % _TABLE_ROWS == 0:
                    block = selected[start : start + _TABLE_ROWS]
                    uses = len(self.layouts) * -(-len(block) // CHUNK)
                    table = _LazyTable(block, inv, factor, uses)
                for layout in self.layouts:
                    id = f"rope_cos_sin/{n}/{layout}/{regime}/positions-{chunk[0]}-{chunk[-1]}"
                    self.add(
                        id,
                        f"{what}; {len(chunk)} positions {ranges(chunk)[:60]}; "
                        f"frequencies of seq_len {seq_len}.",
                        (_LAYOUT_FLAG[layout], *large),
                        positions=I(chunk),
                        inv_freq=F(inv),
                        attention_factor=F(factor),
                        layout=layout,
                    )
                    self.compute[id] = table.expanded(layout, start % _TABLE_ROWS, len(chunk))
            self._rotations(layer, regime, seq_len, _sample(selected, edges), inv, factor, what)

    def _rotations(
        self,
        layer: RopeLayer,
        regime: str,
        seq_len: int | None,
        sample: list[int],
        inv: list[float],
        factor: float,
        what: str,
    ) -> None:
        """A seeded q/k [2 heads, S, head_dim] rotated end to end (rope) and by given cos/sin (apply_rope)."""
        shape = (2, len(sample), layer.head_dim)
        large = ("LargePosition",) if sample[-1] >= 2**20 else ()
        cos, sin = rope_cos_sin_table(sample, inv, factor)  # only the inputs of apply_rope
        for layout in self.layouts:
            tail = f"{layer.name}/{layout}/{regime}/seed-{self.seed}"
            where = f"{what}; x {list(shape)} seeded {self.seed} at {len(sample)} positions"
            flags = (
                (_LAYOUT_FLAG[layout], "PartialRotary")
                if layer.dim < layer.head_dim
                else (_LAYOUT_FLAG[layout],)
            )
            self.add(
                f"rope/{tail}",
                f"{where}; exact cos/sin of seq_len {seq_len}'s frequencies.",
                (*flags, *large),
                x=F(_seeded(f"{self.seed}/rope/{tail}", shape)),
                positions=I(sample),
                inv_freq=F(inv),
                attention_factor=F(factor),
                layout=layout,
            )
            c32, s32 = (_expand(t, layout).astype(np.float32).astype(np.float64).tolist() for t in (cos, sin))
            self.add(
                f"apply_rope/{tail}",
                f"{where}; cos/sin of seq_len {seq_len} rounded to float32 (exact inputs in both dtypes).",
                flags,
                x=F(_seeded(f"{self.seed}/apply_rope/{tail}", shape)),
                cos=F(c32),
                sin=F(s32),
                layout=layout,
            )

    def alibi(self, num_heads: int, max_bias: float, positions: list[int], edges: list[int]) -> None:
        sample = _sample(positions, edges)
        self.add(
            f"alibi_slopes/model/heads-{num_heads}",
            f"{num_heads} heads, max_bias {max_bias:g}.",
            (),
            num_heads=num_heads,
            max_bias=max_bias,
        )
        slopes = [oracle.round_float32(s) for s in oracle.alibi.alibi_slopes(num_heads, max_bias=max_bias)]
        for form in self.forms:
            self.add(
                f"alibi_bias/model/{form}/positions-{sample[0]}-{sample[-1]}",
                f"{num_heads} heads (float32 slopes), queries and keys at {len(sample)} positions.",
                (_FORM_FLAG[form],),
                compare="causal_rowshift" if form == "causal" else None,
                q_positions=I(sample),
                k_positions=I(sample),
                slopes=F(slopes),
                form=form,
            )

    def t5(
        self,
        num_buckets: int,
        max_distance: int,
        directions: Sequence[bool],
        positions: list[int],
        edges: list[int],
    ) -> None:
        sample = _sample(positions, edges)
        relative = set(range(-2 * max_distance, 2 * max_distance + 1))
        relative |= {k - q for q in sample for k in sample}
        values = sorted(relative)
        for bidirectional in directions:
            kind = "bidirectional" if bidirectional else "causal"
            self.add(
                f"t5_bucket/model/{kind}/buckets-{num_buckets}-distance-{max_distance}",
                f"{num_buckets} buckets, max_distance {max_distance}, {len(values)} relative positions "
                f"(every key - query of the positions and -2D..2D).",
                ("T5Causal",) if not bidirectional else (),
                relative=I(values),
                bidirectional=bidirectional,
                num_buckets=num_buckets,
                max_distance=max_distance,
            )


def _expand(table: np.ndarray, layout: str) -> np.ndarray:
    """[S, n] -> [S, 2n] in the layout's channel order (as ``oracle.rope.rope_cos_sin``)."""
    return np.concatenate([table, table], axis=-1) if layout == "half" else np.repeat(table, 2, axis=-1)


class _LazyTable:
    """The fast cos/sin table of up to _TABLE_ROWS positions: computed at its first use, kept until its last.

    One table serves several chunks (its digit tables cost mpmath evaluations); rows are sliced per case.
    """

    def __init__(self, positions: list[int], inv: list[float], factor: float, uses: int) -> None:
        self.args = (positions, inv, factor)
        self.table: tuple[np.ndarray, np.ndarray] | None = None
        self.uses = uses

    def expanded(self, layout: str, start: int, count: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
        rows = slice(start, start + count)

        def compute(inputs: dict[str, Any]) -> dict[str, Any]:
            table = self.table if self.table is not None else rope_cos_sin_table(*self.args)
            self.uses -= 1
            self.table = table if self.uses > 0 else None
            return {"cos": _expand(table[0][rows], layout), "sin": _expand(table[1][rows], layout)}

        return compute


def bias_edges(config: Mapping[str, Any]) -> list[int]:
    keys = ("max_position_embeddings", "max_seq_len", "seq_length", "n_positions")
    return sorted({int(config[k]) for k in keys if isinstance(config.get(k), int) and config[k] > 0})
