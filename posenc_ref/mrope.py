"""Multi-axis RoPE positions: 2-D axial RoPE for vision encoders and M-RoPE.

These helpers build the *position ids* and the *angles*; turning angles into
``cos``/``sin`` and rotating ``q``/``k`` is the job of the RoPE module (both
layouts apply: angles here are per frequency slot, before any duplication).

* 2-D axial RoPE (Qwen2-VL vision encoder, HF ``rope_type="axial"``): a patch at
  ``(row, col)`` gets angles ``[row * w | col * w]``; :func:`vision_position_ids`
  and :func:`axial_angles`.
* M-RoPE (Qwen2-VL language model, https://arxiv.org/abs/2409.12191): three ids
  ``(t, h, w)`` per token, text tokens with ``t = h = w``; each inverse
  frequency slot takes one of them.  Qwen2/2.5-VL assign contiguous *chunks* of
  slots (``mrope_section=[16, 24, 24]``); Qwen3-VL and keras-hub Qwen3.5
  *interleave* them (``[24, 20, 20]``); Ernie 4.5 VL alternates h and w over the
  first slots and gives the rest to t (``"ernie"``); HunYuan-VL's XD-RoPE is
  chunked over four components (sequence, w, h, t).  :func:`mrope_position_ids`,
  :func:`mrope_slot_components`, :func:`mrope_angles`.

Angles here are plain products ``p * w`` rounded once (float64 where available),
exactly what HF computes in float32 when ``inv_freq`` is float32.  For large
positions in float32, the RoPE module's reduced ``cos``/``sin`` of each
component's positions, combined slot by slot with
:func:`mrope_slot_components`, is the more accurate route.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import _compat
from ._validate import (
    ELEMENTS_REASON,
    MAX_CHANNELS,
    MAX_ELEMENTS,
    POSITION_LIMIT,
    POSITION_REASON,
    check_choice,
    check_device,
    check_finite_values,
    check_float_array,
    check_int,
    check_namespace,
    check_positions,
    check_real,
    check_sequence,
    namespace,
    text,
    value_error,
)

__all__ = [
    "MROPE_SECTION_ORDERS",
    "axial_angles",
    "mrope_angles",
    "mrope_position_ids",
    "mrope_slot_components",
    "vision_position_ids",
]

#: How :func:`mrope_slot_components` spreads the sections over frequency slots.
MROPE_SECTION_ORDERS = ("chunked", "interleaved", "ernie")

_SECTION_ORDER_ALIASES = {
    "qwen2_vl": "Qwen2-VL / Qwen2.5-VL use 'chunked'",
    "qwen3_vl": "Qwen3-VL uses 'interleaved'",
    "sections": "use 'chunked'",
    "ernie4_5_vl": "Ernie 4.5 VL uses 'ernie' (pass its [h, w, t] config section as [t, h, w])",
    "ernie4_5_vl_moe": "Ernie 4.5 VL uses 'ernie' (pass its [h, w, t] config section as [t, h, w])",
    "xdrope": "HunYuan-VL's XD-RoPE is 'chunked' over its four components",
    "hunyuan_vl": "HunYuan-VL's XD-RoPE is 'chunked' over its four components",
}


def _check_section(mrope_section: object) -> tuple[int, ...]:
    rule = "a non-empty sequence of non-negative integers"
    entries = check_sequence(mrope_section, "mrope_section", rule=rule, minimum=1, maximum=MAX_CHANNELS)
    section = tuple(
        check_int(s, f"mrope_section[{i}]", minimum=0, maximum=MAX_CHANNELS) for i, s in enumerate(entries)
    )
    if sum(section) > MAX_CHANNELS:
        raise value_error("mrope_section", f"a section of at most {MAX_CHANNELS} slots", section)
    return section


def mrope_slot_components(mrope_section: Sequence[int], *, section_order: str = "chunked") -> tuple[int, ...]:
    """Which position component (0 = t, 1 = h, 2 = w, ...) feeds each frequency slot.

    Parameters
    ----------
    mrope_section : sequence of int
        Slots per component, summing to the number of inverse frequencies
        (``head_dim // 2``): HF ``rope_scaling["mrope_section"]``.
    section_order : {"chunked", "interleaved", "ernie"}
        ``"chunked"`` (Qwen2-VL, Qwen2.5-VL; HF ``apply_multimodal_rotary_pos_emb``;
        HunYuan-VL's XD-RoPE with four components, Tencent's ``xdrope_section``
        and vLLM ``XDRotaryEmbedding``): the first ``section[0]`` slots use
        component 0, the next ``section[1]`` component 1, and so on.
        ``"interleaved"`` (Qwen3-VL ``apply_interleaved_mrope``, keras-hub
        Qwen3.5 ``_apply_mrope``): slot ``s`` uses component ``c = s % C`` if
        ``c >= 1`` and ``s < C * section[c]``, else component 0.  ``"ernie"``
        (Ernie 4.5 VL, HF ``ernie4_5_vl_moe/modeling_ernie4_5_vl_moe.py:99-131``:
        ``inv_freq`` re-ordered even | odd, then h and w stacked and flattened):
        components ``1 .. C-1`` take turns over the first ``(C - 1) n`` slots
        (slot ``s`` uses ``1 + s % (C - 1)``), component 0 the rest; every
        ``section[c]``, ``c >= 1``, must be the same ``n``.  HF's config lists
        Ernie's section as ``[h, w, t]`` (``[22, 22, 20]``); here it is slots per
        component ``(t, h, w)``: ``[20, 22, 22]``.

    Returns
    -------
    tuple of int, length ``sum(mrope_section)``

    Raises
    ------
    TypeError, ValueError
        For a malformed section or section order, or an interleaved section whose
        component ``c`` would need slots past the end.

    References
    ----------
    Wang et al., "Qwen2-VL", arXiv:2409.12191 (M-RoPE, chunked sections);
    Qwen3-VL's interleaved order as in HF ``qwen3_vl/modeling_qwen3_vl.py``.

    Examples
    --------
    Four slots, sections ``[2, 1, 1]`` for (t, h, w): chunked gives t, t, h, w;
    interleaved gives slots 1 and 2 to h and w (``s % 3``) and the rest to t.

    >>> mrope_slot_components([2, 1, 1])
    (0, 0, 1, 2)
    >>> mrope_slot_components([2, 1, 1], section_order="interleaved")
    (0, 1, 2, 0)

    Ernie's order with ``[t, h, w] = [2, 2, 2]``: h, w, h, w, then t, t.

    >>> mrope_slot_components([2, 2, 2], section_order="ernie")
    (1, 2, 1, 2, 0, 0)
    """
    section = _check_section(mrope_section)
    order = check_choice(section_order, "section_order", MROPE_SECTION_ORDERS, aliases=_SECTION_ORDER_ALIASES)
    total, count = sum(section), len(section)
    if order == "chunked":
        return tuple(c for c, n in enumerate(section) for _ in range(n))
    if order == "ernie":
        if count < 2 or len(set(section[1:])) != 1:
            rule = "for 'ernie', at least two components and the same slot count for every component c >= 1"
            raise value_error("mrope_section", rule, section)
        turns = total - section[0]
        return tuple(1 + s % (count - 1) if s < turns else 0 for s in range(total))
    for c in range(1, count):
        if section[c] and c + count * (section[c] - 1) >= total:
            raise value_error(
                "mrope_section", f"a section that leaves room for interleaving component {c}", section
            )
    return tuple(s % count if s % count and s < count * section[s % count] else 0 for s in range(total))


def _angles_from_components(position_ids: Any, inv_freq: Any, components: Sequence[int], xp: Any) -> Any:
    """``angles[..., l, s] = position_ids[components[s], ..., l] * inv_freq[s]``."""
    work = _compat.compute_dtype(xp, _compat.device(inv_freq))
    dev = _compat.device(position_ids)
    index = _compat.asarray(list(components), xp=xp, dtype=_compat.index_dtype(xp, dev), device=dev)
    chosen = _compat.astype(xp.take(position_ids, index, axis=0), work, xp=xp)  # [S, ..., L]
    nd = chosen.ndim
    chosen = xp.permute_dims(chosen, (*range(1, nd), 0))  # [..., L, S]
    return _compat.astype(chosen * xp.astype(inv_freq, work), inv_freq.dtype, xp=xp)


def _check_ids_and_freq(position_ids: Any, inv_freq: Any, xp: Any) -> Any:
    """``position_ids`` checked and widened (``[C, ..., L]``), ``inv_freq`` checked (1-D, finite)."""
    ids = check_positions(position_ids, "position_ids", xp, min_ndim=2)
    check_float_array(inv_freq, "inv_freq", xp, ndim=1)
    check_finite_values(inv_freq, "inv_freq", xp)
    return ids


def mrope_angles(
    position_ids: Any, inv_freq: Any, /, mrope_section: Sequence[int], *, section_order: str = "chunked"
) -> Any:
    r"""M-RoPE rotation angles: each frequency slot driven by one position component.

    Parameters
    ----------
    position_ids : array of an integer dtype, shape ``[C, ..., L]``
        One row per component (``C = 3``: t, h, w), as from :func:`mrope_position_ids`.
    inv_freq : array, shape ``[F]``, real floating
        Inverse frequencies, ``F = sum(mrope_section)`` (``head_dim // 2``).
    mrope_section : sequence of int, length ``C``
    section_order : {"chunked", "interleaved", "ernie"}
        See :func:`mrope_slot_components`.

    Returns
    -------
    array, shape ``[..., L, F]``, dtype of ``inv_freq``
        Angles per frequency slot; ``cos``/``sin`` of them, duplicated for the
        ``half`` layout (``cat([a, a], -1)``) or repeated pairwise for
        ``interleaved``, give HF's per-token cos/sin after the section selection.

    Raises
    ------
    TypeError, ValueError
        For bad dtypes, shapes, sections or section order.

    Notes
    -----
    .. math:: \phi_{l,s} = p_{c(s),\,l}\;\omega_s

    with :math:`c(s)` from :func:`mrope_slot_components`.  Each angle is one
    product rounded once (float64 where available), so text tokens (all
    components equal) get exactly the 1-D RoPE angles.

    Examples
    --------
    One token with ids :math:`(t, h, w) = (5, 1, 2)` and frequencies
    :math:`1, 1/2, 1/4, 1/8`: chunked slots t, t, h, w give
    :math:`5, 5/2, 1/4, 2/8`; interleaved slots t, h, w, t give
    :math:`5, 1/2, 2/4, 5/8`; Ernie's h, w, t, t (sections ``[2, 1, 1]``) give
    :math:`1, 2/2, 5/4, 5/8`.

    >>> import numpy as np
    >>> ids = np.asarray([[5], [1], [2]])
    >>> inv_freq = np.asarray([1.0, 0.5, 0.25, 0.125])
    >>> mrope_angles(ids, inv_freq, [2, 1, 1]).tolist()
    [[5.0, 2.5, 0.25, 0.25]]
    >>> mrope_angles(ids, inv_freq, [2, 1, 1], section_order="interleaved").tolist()
    [[5.0, 0.5, 0.5, 0.625]]
    >>> mrope_angles(ids, inv_freq, [2, 1, 1], section_order="ernie").tolist()
    [[1.0, 1.0, 1.25, 0.625]]

    HunYuan-VL's HF 5.24 ``HunYuanVLRotaryEmbedding.recomposition_frequencies``
    (``hunyuan_vl/modeling_hunyuan_vl.py:181-190``) splits ``cat(freqs, freqs)``
    into ``[2 s for s in section]``, so the two channels of a rotated pair can
    read different components: no per-slot angle expresses it, and it is not
    what Tencent's ``xdrope_section * 2`` (list repetition) computes; the
    latter is ``"chunked"`` (see ``docs/matrix/repro/transformers_hunyuan_vl_xdrope_pairs.py``).
    """
    xp = namespace(position_ids=position_ids, inv_freq=inv_freq)
    ids = _check_ids_and_freq(position_ids, inv_freq, xp)
    components = mrope_slot_components(mrope_section, section_order=section_order)
    section = _check_section(mrope_section)
    if len(components) != inv_freq.shape[0] or len(section) != ids.shape[0]:
        rule = (
            f"a section summing to inv_freq's length {inv_freq.shape[0]} with one entry per "
            f"component ({ids.shape[0]})"
        )
        raise value_error("mrope_section", rule, section)
    return _angles_from_components(ids, inv_freq, components, xp)


def axial_angles(position_ids: Any, inv_freq: Any, /) -> Any:
    r"""2-D (or N-D) axial RoPE angles: ``[row * w | col * w]`` per token.

    Parameters
    ----------
    position_ids : array of an integer dtype, shape ``[C, ..., L]``
        One row per axis, e.g. ``(row, col)`` from :func:`vision_position_ids`.
    inv_freq : array, shape ``[F]``, real floating
        Inverse frequencies shared by every axis.  Qwen2-VL's vision encoder uses
        ``theta ** (-arange(0, d, 2) / d)`` with ``d = head_dim // 2``.

    Returns
    -------
    array, shape ``[..., L, C * F]``, dtype of ``inv_freq``
        Axis blocks side by side, as HF's ``rotary_pos_emb_full[pos_ids].flatten(1)``.

    Raises
    ------
    TypeError, ValueError
        For bad dtypes or shapes.

    Notes
    -----
    .. math:: \phi_{l} = [\,p_{0,l}\,\omega \;|\; p_{1,l}\,\omega \;|\; \dots]

    Examples
    --------
    Two tokens at (row, col) = (1, 3) and (2, 0), frequencies :math:`1, 1/2`:

    >>> import numpy as np
    >>> ids = np.asarray([[1, 2], [3, 0]])
    >>> axial_angles(ids, np.asarray([1.0, 0.5])).tolist()
    [[1.0, 0.5, 3.0, 1.5], [2.0, 1.0, 0.0, 0.0]]
    """
    xp = namespace(position_ids=position_ids, inv_freq=inv_freq)
    ids = _check_ids_and_freq(position_ids, inv_freq, xp)
    count, freqs = ids.shape[0], inv_freq.shape[0]
    if count * freqs > MAX_CHANNELS:
        rule = f"at most {MAX_CHANNELS} axes x frequencies in all"
        raise value_error("position_ids", rule, text(f"{count} axes for {freqs} frequencies"))
    tiled = xp.concat([inv_freq] * count, axis=0)
    components = [c for c in range(count) for _ in range(freqs)]
    return _angles_from_components(ids, tiled, components, xp)


def _grid_ids(grid: tuple[int, ...], start: int, time_interval: float, xp: Any, dev: Any) -> Any:
    """``[3, t*h*w]`` ids of one vision block, row-major over (t, h, w), plus ``start``."""
    t, h, w = grid
    idx = _compat.index_dtype(xp, dev)
    flat = _compat.arange(t * h * w, xp=xp, dtype=idx, device=dev)
    frame_ids = _compat.asarray([int(f * time_interval) for f in range(t)], xp=xp, dtype=idx, device=dev)
    frame = xp.take(frame_ids, xp.floor_divide(flat, h * w), axis=0)
    rows = xp.remainder(xp.floor_divide(flat, w), h)
    cols = xp.remainder(flat, w)
    return xp.stack([frame, rows, cols], axis=0) + start


def mrope_position_ids(
    segments: Sequence[int | tuple[int, int, int]],
    *,
    time_interval: float = 1,
    xp: Any = None,
    device: Any = None,
) -> Any:
    r"""M-RoPE ``(t, h, w)`` position ids of a sequence of text runs and vision blocks.

    Parameters
    ----------
    segments : sequence of int or (int, int, int)
        In sequence order: an int ``n`` is a run of ``n`` text tokens; a triple
        ``(t, h, w)`` is a vision block of ``t * h * w`` tokens in the language
        model's grid (after spatial merging: HF's ``llm_grid_t, llm_grid_h,
        llm_grid_w``), ordered frame by frame, row by row.
    time_interval : float
        Temporal step per frame: 1 for Qwen2-VL; Qwen2.5-VL videos use
        ``second_per_grid_t * tokens_per_second`` and truncate ``t * interval``.
    xp, device : optional
        Namespace (NumPy when omitted) and device of the result.

    Returns
    -------
    array, shape ``[3, L]``, int64 (int32 on JAX without x64)

    Raises
    ------
    TypeError, ValueError
        For malformed segments, a negative ``time_interval``, more than
        ``2**30 / 3`` tokens in all (the ids would exceed 8 GiB), or ids
        reaching ``2**62``.

    Notes
    -----
    Every segment starts at ``s = max(previous ids) + 1`` (0 for the first).  A
    text run gets ``s, s+1, ...`` on all three rows; a vision block gets
    :math:`(s + \lfloor f\,\Delta t \rfloor,\; s + r,\; s + c)` for frame
    :math:`f`, row :math:`r`, column :math:`c` (HF ``Qwen2VLModel.get_rope_index``,
    Qwen2.5-VL, Qwen3-VL images).

    Examples
    --------
    Two text tokens, then a 1 x 2 x 2 image starting at :math:`s = 2`: the image
    tokens get :math:`t = 2`, rows :math:`2, 2, 3, 3` and columns :math:`2, 3, 2, 3`.

    >>> ids = mrope_position_ids([2, (1, 2, 2)])
    >>> ids.tolist()
    [[0, 1, 2, 2, 2, 2], [0, 1, 2, 2, 3, 3], [0, 1, 2, 3, 2, 3]]
    """
    time_interval = check_real(time_interval, "time_interval", minimum=0.0)
    plan = _segment_plan(segments, time_interval)
    xp = check_namespace(xp)
    device = check_device(device, xp)
    idx = _compat.index_dtype(xp, device)
    parts = []
    for segment, start in plan:
        if isinstance(segment, tuple):
            parts.append(_grid_ids(segment, start, time_interval, xp, device))
        else:
            ids = _compat.arange(start, start + segment, xp=xp, dtype=idx, device=device)
            parts.append(xp.stack([ids, ids, ids], axis=0))
    if not parts:
        return _compat.zeros((3, 0), xp=xp, dtype=idx, device=device)
    return xp.concat(parts, axis=1)


def _segment_plan(segments: object, time_interval: float) -> list[tuple[Any, int]]:
    """Each checked segment (int or (t, h, w)) with its start id; sizes bounded before any allocation."""
    rule = "a sequence of text lengths (int) and (t, h, w) vision triples"
    plan, start, tokens = [], 0, 0
    for i, segment in enumerate(check_sequence(segments, "segments", rule=rule)):
        name = f"segments[{i}]"
        if isinstance(segment, tuple):
            if len(segment) != 3:
                raise value_error(name, "an int (text) or a (t, h, w) triple", segment)
            grid = tuple(check_int(n, name, minimum=1, maximum=MAX_ELEMENTS) for n in segment)
            size = grid[0] * grid[1] * grid[2]
            span = max(int((grid[0] - 1) * time_interval), grid[1] - 1, grid[2] - 1)
            segment = grid
        else:
            size = check_int(segment, name, minimum=0, maximum=MAX_ELEMENTS, reason=ELEMENTS_REASON)
            span = size - 1
        tokens += size
        if 3 * tokens > MAX_ELEMENTS:
            raise value_error(
                "segments",
                f"at most {MAX_ELEMENTS // 3} tokens in all",
                text(f"{tokens} tokens"),
                hint=ELEMENTS_REASON,
            )
        if start + span >= POSITION_LIMIT:
            raise value_error(
                "time_interval" if isinstance(segment, tuple) else "segments",
                "small enough that every id is < 2**62",
                text(f"an id of {start + span}"),
                hint=POSITION_REASON,
            )
        plan.append((segment, start))
        start += span + 1
    return plan


def vision_position_ids(
    grid_t: int, grid_h: int, grid_w: int, *, merge_size: int = 1, xp: Any = None, device: Any = None
) -> Any:
    r"""``(row, col)`` ids of vision-encoder patches for 2-D axial RoPE.

    Parameters
    ----------
    grid_t, grid_h, grid_w : int
        Patch grid (frames, rows, columns) before merging.
    merge_size : int
        Qwen2-VL ``spatial_merge_size``: patches are ordered window by window
        (each ``merge_size x merge_size`` window contiguous, windows row-major),
        as HF ``rot_pos_emb``.  1 gives plain row-major order.
    xp, device : optional
        Namespace (NumPy when omitted) and device of the result.

    Returns
    -------
    array, shape ``[2, grid_t * grid_h * grid_w]``
        Row and column of each patch; frames repeat the same ids.

    Raises
    ------
    TypeError, ValueError
        For non-positive sizes, more than ``2**29`` patches, or a grid not
        divisible by ``merge_size``.

    References
    ----------
    Wang et al., "Qwen2-VL", arXiv:2409.12191; the patch order of HF
    ``Qwen2VisionTransformerPretrainedModel.rot_pos_emb``.

    Examples
    --------
    A 2 x 4 grid, row-major, then with 2 x 2 merge windows (the left window's
    four patches first):

    >>> vision_position_ids(1, 2, 4).tolist()
    [[0, 0, 0, 0, 1, 1, 1, 1], [0, 1, 2, 3, 0, 1, 2, 3]]
    >>> vision_position_ids(1, 2, 4, merge_size=2).tolist()
    [[0, 0, 1, 1, 0, 0, 1, 1], [0, 1, 0, 1, 2, 3, 2, 3]]
    """
    sizes = {"grid_t": grid_t, "grid_h": grid_h, "grid_w": grid_w}
    grid_t, grid_h, grid_w = (check_int(v, n, maximum=MAX_ELEMENTS) for n, v in sizes.items())
    if 2 * grid_t * grid_h * grid_w > MAX_ELEMENTS:
        rule = f"a grid of at most {MAX_ELEMENTS // 2} patches (grid_t * grid_h * grid_w)"
        got = text(f"{grid_t} x {grid_h} x {grid_w}")
        raise value_error("grid_t", rule, got, hint=ELEMENTS_REASON)
    merge_size = check_int(merge_size, "merge_size", maximum=MAX_ELEMENTS)
    if grid_h % merge_size or grid_w % merge_size:
        raise value_error("merge_size", f"a divisor of grid_h={grid_h} and grid_w={grid_w}", merge_size)
    xp = check_namespace(xp)
    device = check_device(device, xp)
    idx = _compat.index_dtype(xp, device)
    flat = _compat.arange(grid_h * grid_w, xp=xp, dtype=idx, device=device)
    m, windows_per_row = merge_size, grid_w // merge_size
    window, inner = xp.floor_divide(flat, m * m), xp.remainder(flat, m * m)
    rows = xp.floor_divide(window, windows_per_row) * m + xp.floor_divide(inner, m)
    cols = xp.remainder(window, windows_per_row) * m + xp.remainder(inner, m)
    ids = xp.stack([rows, cols], axis=0)
    return xp.concat([ids] * grid_t, axis=1)
