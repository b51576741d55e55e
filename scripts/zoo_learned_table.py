"""Print, update or check the table of transformers' learned-absolute families (the learned zoo).

    python scripts/zoo_learned_table.py            # print the rows read off the installed transformers
    python scripts/zoo_learned_table.py --write    # rewrite the rows in the table module
    python scripts/zoo_learned_table.py --check    # exit 1: rows stale, or a family in neither table

Run it with the transformers venv (``/work/mvenvs/transformers/bin/python``) and the repository on
``PYTHONPATH``.  The table is ``posenc_ref_conformance/adapters/_transformers_learned_families.py``:
``LEARNED_FAMILIES`` (one row per family whose own learned position code runs, each the variant of
that name) and ``LEARNED_NOT_RUN`` (hand-written: every other family of :data:`FAMILIES`, and why).
Each row is read from the family's module source (``transformers.models.<family>.modeling_<family>``):

* ``learned``: the family's ``*LearnedPositionalEmbedding(num_embeddings, embedding_dim)`` (kind
  ``positional``; offset ``opt`` when it sets ``self.offset = 2``, which its ``forward`` adds to
  given ids), else its text ``*Embeddings(config)`` holding a position ``nn.Embedding`` (kind
  ``embeddings``; offset ``roberta`` when it calls ``create_position_ids_from_input_ids``, ``opt``
  when its ``position_ids`` buffer is ``arange(...) + 2``; ``identity``: its ``nn.LayerNorm``
  attributes), else the base ``*Model`` holding one (kind ``model``, GPT-2's ``wpe``); the config
  class is the ``__init__`` annotation, else the config class of that name the module imports;
* ``token_positions``: the module's ``create_position_ids_from_input_ids`` (a function, or the
  method of the class that defines it);
* ``patch``: the class defining ``interpolate_pos_encoding(self, embeddings, height, width)``;
  ``mode``, ``antialias``, ``float32`` read off that method's ``F.interpolate`` call; ``prefix``:
  the rows of its table beyond the patches, measured on a built 3 x 3 grid.

Hand-set fields (a tiny config's arguments, a module that is not ``modeling_<family>``) live in
:data:`OVERRIDES`.  Every row is built by the adapter once (a table of 6 x 4, a 3 x 3 grid); a row
that does not build is left out, with the reason printed.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import zoo_table_cli  # noqa: E402  (the shared --write / --check driver, beside this script)

LINE = 110
TABLE = ROOT / "posenc_ref_conformance" / "adapters" / "_transformers_learned_families.py"

#: The census's learned-absolute families (primary scheme; transformers 5.24, census.csv), and the
#: rows the default column reads that are not among them.
FAMILIES = (
    "aimv2",
    "albert",
    "align",
    "altclip",
    "audio_spectrogram_transformer",
    "audioflamingo3",
    "bark",
    "bart",
    "bert",
    "bert_generation",
    "big_bird",
    "bigbird_pegasus",
    "biogpt",
    "blenderbot",
    "blenderbot_small",
    "blip",
    "blip_2",
    "bridgetower",
    "bros",
    "camembert",
    "canine",
    "chinese_clip",
    "clap",
    "clip",
    "clipseg",
    "cohere_asr",
    "convbert",
    "data2vec",
    "decision_transformer",
    "deit",
    "dinov2",
    "dinov2_with_registers",
    "distilbert",
    "dpt",
    "electra",
    "eomt",
    "ernie",
    "flaubert",
    "flava",
    "florence2",
    "fnet",
    "git",
    "got_ocr2",
    "gpt2",
    "gpt_bigcode",
    "gpt_neo",
    "groupvit",
    "hiera",
    "ibert",
    "idefics2",
    "idefics3",
    "ijepa",
    "imagegpt",
    "instructblip",
    "instructblipvideo",
    "internvl",
    "janus",
    "kimi_k25",
    "kosmos2",
    "kosmos2_5",
    "layoutlm",
    "layoutlmv2",
    "layoutlmv3",
    "led",
    "lilt",
    "longformer",
    "luke",
    "lw_detr",
    "lxmert",
    "markuplm",
    "mbart",
    "megatron_bert",
    "metaclip_2",
    "mgp_str",
    "minicpm_ocr",
    "minicpmv4_6",
    "minicpmv4_7",
    "mobilebert",
    "moss_transcribe_diarize",
    "mpnet",
    "mra",
    "mvp",
    "nystromformer",
    "openai",
    "opt",
    "ovis2",
    "owlv2",
    "owlvit",
    "pix2struct",
    "pixio",
    "plbart",
    "pp_formulanet",
    "pvt",
    "qianfan_ocr",
    "qwen2_audio",
    "radio",
    "rembert",
    "rf_detr",
    "roberta",
    "roberta_prelayernorm",
    "roc_bert",
    "sam",
    "sam2",
    "sam3_lite_text",
    "sam_hq",
    "seggpt",
    "siglip",
    "siglip2",
    "slanext",
    "smolvlm",
    "splinter",
    "squeezebert",
    "tapas",
    "timesformer",
    "tipsv2",
    "trocr",
    "tvp",
    "videomt",
    "videoprism",
    "vilt",
    "visual_bert",
    "vit",
    "vit_msn",
    "vitdet",
    "vitpose_backbone",
    "vivit",
    "voxtral",
    "x_clip",
    "xlm",
    "xlm_roberta",
    "xlm_roberta_xl",
    "xmod",
    "yolos",
    "yoso",
)
DEFAULT_ROWS = ("idefics",)

#: Classes that are not a text position table.
_NOT_TEXT = re.compile(
    r"Vision|Patch|Image|Bbox|Layout|Entity|XPath|Spatial|Temporal|Tubelet|Sinusoidal|Bros"
)
_TABLES = ("position_embeddings", "position_embedding", "char_position_embeddings")
_MODEL_TABLES = ("wpe", "positions_embed", "position_embeddings", "position_embeds_layer")

#: Hand-set fields per family (merged over what is read from the source).
OVERRIDES: dict[str, dict[str, Any]] = {
    "bark": {"rows_key": "block_size"},
    # a GPT-2 for inputs_embeds: its default vocabulary is one token
    "decision_transformer": {"kwargs": {"num_attention_heads": 1, "num_hidden_layers": 1, "vocab_size": 8}},
    # the word table's width is input_embedding_size (projected to hidden_size)
    "rembert": {"dim_keys": ("hidden_size", "input_embedding_size")},
    # the character table has num_hash_buckets rows (its position ids run to max_position_embeddings)
    "canine": {"rows_key": "num_hash_buckets", "kwargs": {"num_attention_heads": 1, "num_hash_functions": 1}},
    # FNet projects the summed embeddings (Linear) after its LayerNorm
    "fnet": {"identity": ("LayerNorm", "projection")},
    "gpt_neo": {"kwargs": {"num_layers": 1, "attention_types": [[["global"], 1]], "num_heads": 1}},
    "data2vec": {"module": "transformers.models.data2vec.modeling_data2vec_text"},
    "idefics": {
        "module": "transformers.models.idefics.vision",
        "patch_dim_key": "embed_dim",
        "scale_factor": True,
        "patch_kwargs": {},
    },
    # one class token (its default 8 is no case's prefix); ViViT: one frame of 1 x 2 x 2 tubelets
    "pixio": {"patch_kwargs": {"num_attention_heads": 1, "n_cls_tokens": 1}},
    "vivit": {"patch_kwargs": {"num_attention_heads": 1, "num_frames": 1, "tubelet_size": [1, 2, 2]}},
    "timesformer": {
        "patch": "TimesformerEmbeddings",
        "patch_config": "TimesformerConfig",
        "patch_call": "forward",
        "mode": "nearest",
        "patch_kwargs": {"num_frames": 1, "attention_type": "space_only", "num_attention_heads": 1},
    },
}


def _classes(module: Any) -> list[tuple[str, type]]:
    import torch

    return [
        (name, obj)
        for name, obj in vars(module).items()
        if inspect.isclass(obj) and obj.__module__ == module.__name__ and issubclass(obj, torch.nn.Module)
    ]


def _config_name(module: Any, cls: type, hint: str) -> str:
    """The config class ``cls`` takes: its annotation, else the one the module imports named like it."""
    annotation = inspect.signature(cls.__init__).parameters.get("config")
    annotation = getattr(annotation, "annotation", inspect.Parameter.empty)
    if isinstance(annotation, type) and annotation is not inspect.Parameter.empty:
        return annotation.__name__
    if isinstance(annotation, str) and annotation.endswith("Config"):
        return annotation
    configs = sorted(n for n, o in vars(module).items() if inspect.isclass(o) and n.endswith("Config"))
    text = hint != "Vision"
    for key in (hint, "Text", "QFormer", ""):
        named = [n for n in configs if key in n and (key or not re.search("Vision|Text|Audio|QFormer", n))]
        named = [n for n in named if not text or _has(getattr(module, n), "vocab_size")]
        if named:
            return named[0]
    return configs[0] if configs else ""


def _has(config_class: Any, name: str) -> bool:
    """Whether ``config_class()`` has attribute ``name`` (False when it needs arguments)."""
    try:
        return hasattr(config_class(), name)
    except Exception:
        return False


def _tiny(config_class: Any) -> dict[str, Any]:
    """Arguments a tiny config needs: one head (and one layer) where the config has them."""
    return {k: 1 for k in ("num_attention_heads", "num_hidden_layers") if _has(config_class, k)}


def _hint(name: str) -> str:
    for key in ("QFormer", "Text", "Vision"):
        if key in name:
            return key
    return ""


def read_row(family: str) -> tuple[dict[str, Any] | None, str]:
    """The family's row read from its source, or None and why."""

    over = OVERRIDES.get(family, {})
    path = over.get("module") or f"transformers.models.{family}.modeling_{family}"
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        return None, f"{path} does not import: {exc}"
    row: dict[str, Any] = {}
    classes = _classes(module)
    for name, cls in classes:  # a standalone learned table with its own position ids
        params = list(inspect.signature(cls.__init__).parameters)[1:3]
        if name.endswith("LearnedPositionalEmbedding") and params == ["num_embeddings", "embedding_dim"]:
            offset = "opt" if re.search(r"self\.offset = 2", inspect.getsource(cls)) else "plain"
            row.update(
                learned=name, kind="positional", table="", offset=offset, adds_offset=offset != "plain"
            )
            break
    else:
        for name, cls in classes:
            src = inspect.getsource(cls)
            table = next((t for t in _TABLES if re.search(rf"self\.{t} = nn\.Embedding\(", src)), None)
            fwd = inspect.signature(cls.forward).parameters
            if (
                not name.endswith("Embeddings")
                or _NOT_TEXT.search(name)
                or table is None
                or "input_ids" not in fwd
            ):
                continue
            offset = "plain"
            if "create_position_ids_from_input_ids" in src:
                offset = "roberta"
            elif re.search(r"arange\([^)]*\)\.expand\(\(1, -1\)\)\)?\s*\+\s*2", src):
                offset = "opt"
            identity = tuple(re.findall(r"self\.(\w+) = (?:nn\.LayerNorm|NORM2FN\[[^]]+\])\(", src))
            row.update(learned=name, kind="embeddings", table=table, offset=offset, identity=identity)
            row["config"] = _config_name(module, cls, _hint(name))
            break
        else:
            for name, cls in classes:
                src = inspect.getsource(cls.__init__)
                table = next(
                    (t for t in _MODEL_TABLES if re.search(rf"self\.{t} = nn\.Embedding\(", src)), None
                )
                if name.endswith("Model") and table:
                    identity = tuple(re.findall(r"self\.(\w*emb\w*) = nn\.LayerNorm\(", src))
                    row.update(learned=name, kind="model", table=table, config=_config_name(module, cls, ""))
                    row["identity"] = identity
                    break
    if row.get("config"):
        config_class = getattr(module, row["config"], None) or getattr(
            importlib.import_module("transformers"), row["config"], None
        )
        row["kwargs"] = _tiny(config_class) if config_class else {}
        if config_class and _has(config_class, "embedding_size"):  # ALBERT, ELECTRA: the table's width
            row["dim_keys"] = ("hidden_size", "embedding_size")
    function = getattr(module, "create_position_ids_from_input_ids", None)
    if inspect.isfunction(function) and function.__module__ == module.__name__:
        row["token_positions"] = "create_position_ids_from_input_ids"
    else:
        for name, cls in classes:
            if "create_position_ids_from_input_ids" in vars(cls):
                row["token_positions"] = f"{name}.create_position_ids_from_input_ids"
                break
    for name, cls in classes:
        method = vars(cls).get("interpolate_pos_encoding")
        if method is None or list(inspect.signature(method).parameters) != [
            "self",
            "embeddings",
            "height",
            "width",
        ]:
            continue
        src = inspect.getsource(method)
        mode = re.search(r'mode="(\w+)"', src)
        row.update(
            patch=name, patch_config=_config_name(module, cls, "Vision"), mode=mode.group(1) if mode else ""
        )
        row.update(
            antialias="antialias=True" in src, float32=bool(re.search(r"torch\.float32|\.float\(\)", src))
        )
        row["patch_kwargs"] = {"num_attention_heads": 1}
        break
    row.update(over)
    if not any(row.get(k) for k in ("learned", "token_positions", "patch")):
        return None, "no learned table class, create_position_ids_from_input_ids or interpolate_pos_encoding"
    return row, ""


def probe(family: str, row: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The row with what does not build removed (and its measured prefix), and why."""
    import numpy as np

    from posenc_ref_conformance.adapters import _transformers_learned_families as table
    from posenc_ref_conformance.adapters.transformers import TransformersAdapter

    why: list[str] = []
    adapter = TransformersAdapter()
    saved = table.LEARNED_FAMILIES.get(family)
    try:
        if row.get("learned"):
            table.LEARNED_FAMILIES[family] = table.LearnedFamily(**row)
            adapter.learned_source = family
            pad = 1 if row.get("offset") == "roberta" else None
            try:
                out = adapter.learned(
                    np.arange(24.0).reshape(6, 4),
                    np.array([0, 1, 2]),
                    offset=row.get("offset", "plain"),
                    padding_idx=pad,
                )
                shift = {"plain": 0, "opt": 2, "roberta": 2}[row.get("offset", "plain")]
                if not np.array_equal(out.numpy(), np.arange(24.0).reshape(6, 4)[shift : shift + 3]):
                    msg = "its output is not the table's rows"
                    raise ValueError(msg)
            except Exception as exc:
                why.append(f"learned {row['learned']}: {type(exc).__name__}: {exc}"[:160])
                for k in (
                    "learned",
                    "kind",
                    "config",
                    "table",
                    "offset",
                    "adds_offset",
                    "identity",
                    "kwargs",
                ):
                    row.pop(k, None)
        if row.get("patch"):
            table.LEARNED_FAMILIES[family] = table.LearnedFamily(**row)
            try:
                _, weight = adapter._vision_module(family, 3, 4, __import__("torch").float64)
                row["prefix"] = weight.numel() // 4 - 9
                if row["prefix"] < 0:
                    msg = "its table is not sized by image_size / patch_size"
                    raise ValueError(msg)
                if row.get("patch_call", "interpolate") == "interpolate" and not row.get("mode"):
                    msg = "no F.interpolate mode in interpolate_pos_encoding"
                    raise ValueError(msg)
            except Exception as exc:
                why.append(f"patch {row['patch']}: {type(exc).__name__}: {exc}"[:160])
                for k in ("patch", "patch_config", "patch_kwargs", "mode", "antialias", "float32", "prefix"):
                    row.pop(k, None)
    finally:
        if saved is None:
            table.LEARNED_FAMILIES.pop(family, None)
        else:
            table.LEARNED_FAMILIES[family] = saved
    return row, why


def _lit(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, tuple):
        items = ", ".join(_lit(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_lit(k)}: {_lit(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_lit(v) for v in value) + "]"
    return repr(value)


def _literal(family: str, row: dict[str, Any]) -> str:
    """The row as ``ruff format`` writes it (one line, three lines, or one argument a line)."""
    from posenc_ref_conformance.adapters._transformers_learned_families import LearnedFamily

    defaults = LearnedFamily()
    fields = [
        f"{n}={_lit(row[n])}" for n in LearnedFamily._fields if n in row and row[n] != getattr(defaults, n)
    ]
    one = f"    {_lit(family)}: LearnedFamily({', '.join(fields)}),"
    if len(one) <= LINE:
        return one
    inner = f"        {', '.join(fields)}"
    if len(inner) <= LINE:
        return f"    {_lit(family)}: LearnedFamily(\n{inner}\n    ),"
    return f"    {_lit(family)}: LearnedFamily(\n" + "".join(f"        {f},\n" for f in fields) + "    ),"


def rows() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Every family's row (built and probed), and why each other family has none or lost a part."""
    found: dict[str, dict[str, Any]] = {}
    without: dict[str, str] = {}
    for family in sorted({*FAMILIES, *DEFAULT_ROWS}):
        row, why = read_row(family)
        if row is not None:
            row, reasons = probe(family, row)
            why = "; ".join(reasons)
            if not any(row.get(k) for k in ("learned", "token_positions", "patch")):
                row = None
        if row is not None:
            found[family] = row
        elif why:
            without[family] = why
        if row is not None and why:
            print(f"# partly: {family}: {why}", file=sys.stderr)
    return found, without


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from posenc_ref_conformance.adapters import _transformers_learned_families as table

    return zoo_table_cli.main(
        argv,
        description=__doc__.split("\n\n")[0],
        script="zoo_learned_table.py",
        table=TABLE,
        rows=rows,
        literal=_literal,
        not_run=lambda: table.LEARNED_NOT_RUN,
        not_run_name="LEARNED_NOT_RUN",
        expected=FAMILIES,
    )


if __name__ == "__main__":
    raise SystemExit(main())
