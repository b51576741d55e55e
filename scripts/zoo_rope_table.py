"""Print, update or check the table of transformers' 1-D RoPE families (the RoPE zoo).

    python scripts/zoo_rope_table.py            # print the rows read off the installed transformers
    python scripts/zoo_rope_table.py --write    # rewrite the rows in the table module
    python scripts/zoo_rope_table.py --check    # exit 1: rows stale, or a family in neither table

Run it with the transformers venv (``/work/mvenvs/transformers/bin/python``) and the repository on
``PYTHONPATH``.  The table is ``posenc_ref_conformance/adapters/_transformers_rope_families.py``:
``ROPE_FAMILIES`` (one row per family whose own rotary module is a 1-D table, run by the transformers
adapter as the variant of that name) and ``ROPE_NOT_RUN`` (hand-written: every other family with
rotary code, and why).  Each row is read from the family's source, never from its output:

* the rotary class: the module's own ``*RotaryEmbedding`` class (the text one of a multimodal
  family: names with Vision, DiT, Talker, Code2Wav, SaProt are left out unless they say Text), its
  config class from the ``__init__`` annotation (a composite config without ``rope_parameters``: its
  text / decoder / audio / encoder sub-config, which is what the model hands the module);
* ``table``: what ``forward`` returns: ``half`` (``cat(freqs, freqs)``), ``interleaved``
  (``repeat_interleave``), ``halfwidth`` (``freqs`` only), ``complex`` (``torch.polar``) or ``sincos``
  (GPT-J's fixed ``embed_positions`` table, ``(sin, cos)``);
* the apply function: ``apply_rotary_pos_emb_interleave`` when the config's ``rope_interleave``
  defaults to true, else ``apply_rotary_pos_emb``, else ``apply_rotary_emb``; ``call``: how it is called
  (``qk``: ``(q, k, cos, sin, unsqueeze_dim)``; ``x``: ``(x, cos, sin, unsqueeze_dim)``; ``gptj``:
  ``(tensor, sin, cos)``; ``complex``: ``(xq, xk, freqs_cis)``; ``deinterleave``: the ``_interleave``
  function, which returns the rotated pairs de-interleaved);
* ``layout``: the pairs it rotates (``rotate_half`` on ``x[..., ::2]``, ``repeat_interleave`` of the
  table, a complex view, ``rotate_every_two``: interleaved; otherwise half);
* ``partial``: ``apply`` when the apply function rotates the first ``cos.shape[-1]`` channels itself,
  ``last`` when it rotates the last ones, ``caller`` when the attention forward splits
  ``[..., :rotary_ndims]`` before calling it, ``""`` when every channel rotates;
* ``float32_apply``: the apply function casts to float32 (``.float()``);
* ``dim_keys``: the config attributes that set the rotary width (``head_dim`` and ``hidden_size``,
  plus ``qk_rope_head_dim`` / ``rotary_dim`` / ``global_head_dim`` where the config has them; not a
  read-only property), checked by building the module at two widths; ``layer_type``: the layer type
  whose buffers a per-layer-type module's ``forward`` reads (``full_attention`` where it has one).

Hand-set fields (config keyword arguments a tiny config needs) live in :data:`OVERRIDES`.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import pkgutil
import re
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import zoo_table_cli  # noqa: E402  (the shared --write / --check driver, beside this script)

LINE = 110  # pyproject.toml's line-length: the rows are written as ruff formats them
TABLE = ROOT / "posenc_ref_conformance" / "adapters" / "_transformers_rope_families.py"

#: Rotary classes that are not a family's 1-D text table.
_NOT_TEXT = re.compile(r"Vision|DiT|Talker|Code2Wav|Token2Wav|SaProt")
#: Config attributes that, where a config has them, carry the rotary width.
_WIDTH_KEYS = ("qk_rope_head_dim", "rotary_dim", "rotary_emb_dim", "global_head_dim")
#: Sub-configs a composite config hands its rotary module, in order of preference.
_SUB_CONFIGS = ("text_config", "decoder_config", "decoder", "audio_config", "encoder_config", "encoder")
#: Attention code that splits off the rotated channels before calling the apply function.
_CALLER_SPLIT = re.compile(
    r"\[\s*\.\.\.\s*,\s*:\s*self\.(rotary_ndims|rotary_dim|rotary_emb_dim|rope_dim)\s*\]"
)

#: Hand-set fields per family (merged over what is read from the source).
OVERRIDES: dict[str, dict[str, Any]] = {
    # Mamba layers: the heads must divide mamba_expand * hidden_size (2 * the rotary width)
    "bamba": {"kwargs": {"mamba_n_heads": 1}},
    "granitemoehybrid": {"kwargs": {"mamba_n_heads": 1}},
    # the flow head's condition_dim must equal hidden_size: keep the default width
    "gradium_phonon_tts": {"dim_keys": ("head_dim",)},
    "pocket_tts": {"dim_keys": ("head_dim",)},
    # GPTJAttention / CodeGenAttention split [:, :, :, : self.rotary_dim] off before the apply
    "gptj": {"partial": "caller"},
    "codegen": {"partial": "caller"},
    # full-attention layers take global_head_dim (and proportional RoPE): the sliding layers' table
    **{
        family: {"layer_type": "sliding_attention"}
        for family in ("diffusion_gemma", "embedding_gemma2", "gemma4", "gemma4_unified")
    },
    # interleaved pairs from a half table: stack_freqs' 2 x 2 matrices (PE) / x[..., ::2] (privacy filter)
    **{family: {"layout": "interleaved"} for family in ("pe_audio", "pe_audio_video", "pe_video")},
    "openai_privacy_filter": {"layout": "interleaved"},
    # EsmConfig's default is absolute positions; its rotary option is the RoPE family
    "esm": {"config": "EsmConfig", "kwargs": {"position_embedding_type": "rotary"}},
}


def _families() -> list[str]:
    import transformers.models

    return sorted(m.name for m in pkgutil.iter_modules(transformers.models.__path__) if m.ispkg)


def _module(family: str) -> Any:
    try:
        return importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    except Exception:  # no modeling module, or one that needs an optional dependency
        return None


def _own(module: Any, predicate: Any) -> dict[str, Any]:
    return {
        n: o
        for n, o in vars(module).items()
        if predicate(o) and getattr(o, "__module__", "") == module.__name__
    }


def rotary_code(family: str) -> tuple[Any, list[str]] | None:
    """The family's module and its own rotary class names (None when it has no rotary code)."""
    module = _module(family)
    if module is None:
        return None
    classes = sorted(_own(module, inspect.isclass))
    rotary = [n for n in classes if re.search(r"Rotary|Rope", n) and "Attention" not in n]
    functions = [n for n in _own(module, inspect.isfunction) if re.search(r"rotary|rotate", n)]
    return (module, rotary) if rotary or functions else None


def _source(obj: Any) -> str:
    """``obj``'s source without comments and docstrings (what the checks below read)."""
    if obj is None:
        return ""
    text = re.sub(r'"""[\s\S]*?"""', "", inspect.getsource(obj))
    return re.sub(r"#[^\n]*", "", text)


def _text_rotary(module: Any, names: list[str]) -> str | None:
    embeddings = [n for n in names if n.endswith("RotaryEmbedding")]
    text = [n for n in embeddings if "Text" in n or not _NOT_TEXT.search(n)]
    preferred = [n for n in text if "Text" in n] or text
    return preferred[0] if len(preferred) == 1 else (preferred[-1] if preferred else None)


def _not_one_d(forward: str) -> str | None:
    if "recomposition_frequencies" in forward or re.search(r"expand\(\s*(3|2|len\()", forward):
        return "M-RoPE / multi-axis recomposition"
    return None


def _has(obj: Any, name: str) -> bool:
    try:
        return hasattr(obj, name)
    except Exception:  # a per-layer attribute that refuses a global read: it exists
        return True


def read_row(family: str) -> tuple[dict[str, Any] | None, str]:
    """The row read off ``family``'s source, or None and why not."""
    found = rotary_code(family)
    if found is None:
        return None, "no rotary code"
    module, names = found
    rotary_name = _text_rotary(module, names)
    if rotary_name is None:
        return None, f"no text *RotaryEmbedding class ({', '.join(names) or 'functions only'})"
    rotary = getattr(module, rotary_name)
    forward = _source(rotary.forward)
    params = list(inspect.signature(rotary.forward).parameters)[1:]
    if params[:2] != ["x", "position_ids"]:
        return None, f"{rotary_name}.forward{tuple(params)} is not (x, position_ids)"
    why = _not_one_d(forward)
    if why:
        return None, why
    annotation = inspect.signature(rotary.__init__).parameters.get("config")
    config = getattr(annotation, "annotation", None)
    if config is None or isinstance(config, str) or config is inspect.Parameter.empty:
        return None, f"{rotary_name} takes no annotated config"
    if "torch.polar" in forward:
        table = "complex"
    elif "embed_positions" in forward:
        table = "sincos"
    elif "repeat_interleave" in forward:
        table = "interleaved"
    elif re.search(r"cat\(\s*\(\s*freqs\s*,\s*freqs\s*\)", forward):
        table = "half"
    else:
        table = "halfwidth"
    defaults = config()
    subs = getattr(config, "sub_configs", None) or {}
    subs = {k: v for k, v in subs.items() if v.__name__ != "AutoConfig"}
    if subs and not getattr(defaults, "rope_parameters", None):  # a composite: the rotary gets a sub-config
        key = next((k for k in _SUB_CONFIGS if k in subs), next(iter(subs)))
        config = subs[key]
        defaults = config()
    interleave = getattr(module, "apply_rotary_pos_emb_interleave", None)
    if interleave is not None and (
        getattr(defaults, "rope_interleave", False) or not hasattr(module, "apply_rotary_pos_emb")
    ):
        apply_name = "apply_rotary_pos_emb_interleave"
    elif hasattr(module, "apply_rotary_pos_emb"):
        apply_name = "apply_rotary_pos_emb"
    elif hasattr(module, "apply_rotary_emb"):
        apply_name = "apply_rotary_emb"
    else:
        return None, "no apply function"
    apply = getattr(module, apply_name)
    apply_src = _source(apply)
    names_in = list(inspect.signature(apply).parameters)
    rotate = _source(getattr(module, "rotate_half", None) or getattr(module, "rotate_every_two", None))
    if apply_name.endswith("_interleave"):
        call, layout = "deinterleave", "interleaved"
    elif names_in[:3] == ["xq", "xk", "freqs_cis"]:
        call, layout = "complex", "interleaved"
    elif names_in[:3] == ["tensor", "sin", "cos"]:
        call, layout = "gptj", "interleaved"
    else:
        call = "qk" if names_in[:2] == ["q", "k"] else ("x" if names_in[:3] == ["x", "cos", "sin"] else None)
        if call is None:
            return None, f"{apply_name}{tuple(names_in)}: no known call"
        interleaved = "::2]" in rotate.replace("0::2]", "::2]") or "repeat_interleave" in apply_src
        layout = "interleaved" if interleaved or table == "interleaved" else "half"
    if re.search(r"x\[\.\.\.,\s*-\w+:\]", apply_src):
        partial = "last"
    elif re.search(r"(rotary_dim|rot_dim|rope_dim)\s*=\s*cos\.shape\[-1\]", apply_src):
        partial = "apply"
    elif _CALLER_SPLIT.search(inspect.getsource(module)):
        partial = "caller"
    else:
        partial = ""
    params_default = getattr(defaults, "rope_parameters", None) or {}
    layer_type = ""
    if "{layer_type}_inv_freq" in forward:
        layer_types = sorted(k for k, v in params_default.items() if isinstance(v, dict))
        if not layer_types:
            return None, f"{rotary_name} reads per-layer-type buffers; its config has no per-layer parameters"
        layer_type = "full_attention" if "full_attention" in layer_types else layer_types[0]
    row: dict[str, Any] = {
        "rotary": rotary_name,
        "config": config.__name__,
        "apply": apply_name,
        "layout": layout,
        "table": table,
        "call": call,
        "partial": partial,
        "float32_apply": ".float()" in apply_src,
        "layer_type": layer_type,
        "dim_keys": tuple(
            k
            for k in ("head_dim", "hidden_size", *_WIDTH_KEYS)
            if (k in ("head_dim", "hidden_size") or _has(defaults, k))
            and not isinstance(getattr(config, k, None), property)
        ),
        "kwargs": {},
        "reads_inv_freq": bool(re.search(r"self\.inv_freq|_inv_freq\"|\"inv_freq\"", forward))
        or table == "sincos",
        "x_layout": "bhsd" if call not in ("gptj", "complex") or "unsqueeze(1)" in apply_src else "bshd",
        "own_defaults": "compute_default_rope_parameters" in vars(rotary),
    }
    row.update(OVERRIDES.get(family, {}))
    return row, ""


def probe(family: str, row: dict[str, Any]) -> str | None:
    """Why the family's rotary module does not build at widths 8 and 16 from the row (None: it does)."""
    from posenc_ref_conformance.adapters import _transformers_rope_families as table
    from posenc_ref_conformance.adapters.transformers import TransformersAdapter

    family_row = table.RopeFamily(**row)
    saved = table.ROPE_FAMILIES.get(family)
    table.ROPE_FAMILIES[family] = family_row
    adapter = TransformersAdapter()
    try:
        for dim in (8, 16):
            try:
                module = adapter._family_rotary(family, dim, 10000.0, None, 4)
            except Exception as exc:  # any failure to build is the reason
                return f"{type(exc).__name__}: {exc}"[:200]
            try:
                if family_row.table == "sincos":
                    width = module.embed_positions.shape[-1]
                else:
                    width = getattr(module, adapter._buffer(family_row, "inv_freq")).numel() * 2
            except AttributeError as exc:
                return f"{type(exc).__name__}: {exc}"[:200]
            if width != dim:
                return f"width {dim}: its table is {width} wide"
    finally:
        if saved is None:
            del table.ROPE_FAMILIES[family]
        else:
            table.ROPE_FAMILIES[family] = saved
    return None


def _lit(value: Any) -> str:
    """``value`` as ruff formats a literal (double quotes)."""
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, tuple):
        items = ", ".join(_lit(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_lit(k)}: {_lit(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _literal(family: str, row: dict[str, Any]) -> str:
    """The row as ``ruff format`` writes it (one line, three lines, or one argument a line)."""
    from posenc_ref_conformance.adapters._transformers_rope_families import RopeFamily

    defaults = RopeFamily("", "")
    fields = [_lit(row["rotary"]), _lit(row["config"])]
    fields += [f"{n}={_lit(row[n])}" for n in RopeFamily._fields[2:] if row[n] != getattr(defaults, n)]
    one = f"    {_lit(family)}: RopeFamily({', '.join(fields)}),"
    if len(one) <= LINE:
        return one
    inner = f"        {', '.join(fields)}"
    if len(inner) <= LINE:
        return f"    {_lit(family)}: RopeFamily(\n{inner}\n    ),"
    return f"    {_lit(family)}: RopeFamily(\n" + "".join(f"        {f},\n" for f in fields) + "    ),"


def rows() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Every family's row (built and probed), and why each other family with rotary code has none."""
    found: dict[str, dict[str, Any]] = {}
    without: dict[str, str] = {}
    for family in _families():
        if rotary_code(family) is None:
            continue
        row, why = read_row(family)
        if row is not None:
            why = probe(family, row) or ""
        if why:
            without[family] = why
        else:
            found[family] = row
    return found, without


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from posenc_ref_conformance.adapters import _transformers_rope_families as table

    return zoo_table_cli.main(
        argv,
        description=__doc__.split("\n\n")[0],
        script="zoo_rope_table.py",
        table=TABLE,
        rows=rows,
        literal=_literal,
        not_run=lambda: table.ROPE_NOT_RUN,
        not_run_name="ROPE_NOT_RUN",
        expected=(),
    )


if __name__ == "__main__":
    raise SystemExit(main())
