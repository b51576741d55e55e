r"""Transformer-XL relative attention: the distances, their sinusoid table, the shift, the score.

Transformer-XL (Dai et al. 2019, section 3.3) splits the attention logit of
query ``i`` and key ``j`` into four terms,

``A_ij = q_i.k_j (a) + q_i.R_(i-j) (b) + u.k_j (c) + v.R_(i-j) (d) = (q_i + u).k_j + (q_i + v).R_(i-j)``,

``R_d`` the (projected) sinusoid of the relative distance ``d = i - j``
(query minus key, in absolute positions) and ``u``, ``v`` two learned
per-head biases (HF ``pos_bias_u`` / ``pos_bias_v``, ``r_w_bias`` /
``r_r_bias``, ``bias_u`` / ``bias_v``).  Real code computes term (b + d) for
every *row* of a table of distances, ``BD[i, p] = (q_i + v) . R[p]``, and
moves row ``p`` of query ``i`` under key ``j`` with a pad-and-reshape trick
(appendix B), the *relative shift*.  This module gives each piece:

* :func:`rel_sinusoid_positions`: the distances the table's rows stand for
  (``klen - 1 .. -(klen - 1)`` for the Conformers, ``klen .. -(qlen - 1)`` for
  XLNet), with XLNet's ``clamp_len`` and ``bi_data``;
* :func:`rel_sinusoid_table`: the sinusoid of those distances (XLNet ``[sin |
  cos]``, the Conformers interleaved), :func:`posenc_ref.sinusoidal` at
  negative positions;
* :func:`rel_shift`: the shift, as the exact index map each implementation's
  reshape realises, including what it leaves in the entries that are no valid
  distance;
* :func:`rel_attention_scores`: the whole logit ``(q + u) k + shift((q + v) R)``.
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat
from ._validate import (
    ELEMENTS_REASON,
    MAX_ELEMENTS,
    broadcast_shapes,
    check_bool,
    check_choice,
    check_device,
    check_float_array,
    check_int,
    check_namespace,
    check_real,
    namespace,
    text,
    value_error,
)
from .sinusoidal import sinusoidal

__all__ = [
    "REL_SHIFT_CONVENTIONS",
    "REL_SINUSOID_CONVENTIONS",
    "rel_attention_scores",
    "rel_shift",
    "rel_sinusoid_positions",
    "rel_sinusoid_table",
]

#: Which distances the rows of a relative sinusoid table stand for (:func:`rel_sinusoid_positions`):
#: ``"conformer"`` ``klen - 1 .. -(klen - 1)`` (ESPnet, NeMo, the HF Conformers, Parakeet);
#: ``"transformer_xl"`` ``klen - 1 .. 0`` (the paper); ``"xlnet"`` ``klen .. -(qlen - 1)``
#: (XLNet ``attn_type="bi"``, Funnel); ``"xlnet_uni"`` ``klen .. 0`` (XLNet ``attn_type="uni"``).
REL_SINUSOID_CONVENTIONS = ("conformer", "transformer_xl", "xlnet", "xlnet_uni")

#: The pad-and-reshape tricks of :func:`rel_shift`: ``"transformer_xl"`` (a zero column on the left,
#: drop one row of the reshaped view; the paper's appendix B, ESPnet, NeMo, every HF Conformer),
#: ``"xlnet"`` (no padding, drop ``shift`` rows; XLNet's ``rel_shift_bnij``, Funnel's
#: ``_relative_shift_gather``), ``"gemma3n"`` (zero columns on the right up to ``klen + 1``, keep the
#: first ``Q klen`` elements; Gemma 3n and Gemma 4 audio, from Lingvo/JAX).
REL_SHIFT_CONVENTIONS = ("transformer_xl", "xlnet", "gemma3n")

#: The sinusoid layout of each table convention (a :func:`posenc_ref.sinusoidal` convention).
_TABLE_LAYOUT = {"conformer": "vaswani", "transformer_xl": "marian", "xlnet": "marian", "xlnet_uni": "marian"}
_MAX_LEN = 2**28


def _lengths(qlen: object, klen: object) -> tuple[int, int]:
    q = check_int(qlen, "qlen", maximum=_MAX_LEN, reason=ELEMENTS_REASON)
    k = q if klen is None else check_int(klen, "klen", maximum=_MAX_LEN, reason=ELEMENTS_REASON)
    if k < q:
        raise value_error("klen", f"an integer >= qlen = {q} (klen counts the memory and the queries)", k)
    return q, k


def _clamp(clamp_len: object) -> int | None:
    if clamp_len is None:
        return None
    hint = "XLNet's clamp_len <= 0 (its default -1) means no clamp: pass None"
    if isinstance(clamp_len, int) and not isinstance(clamp_len, bool) and clamp_len <= 0:
        raise value_error("clamp_len", "None or a positive integer", clamp_len, hint=hint)
    return check_int(clamp_len, "clamp_len", maximum=2**62)


def _sequence(q: int, k: int, convention: str) -> tuple[int, int]:
    """(first distance, number of rows); rows run down by one."""
    return {
        "conformer": (k - 1, 2 * k - 1),
        "transformer_xl": (k - 1, k),
        "xlnet": (k, k + q),
        "xlnet_uni": (k, k + 1),
    }[convention]


def rel_sinusoid_positions(
    qlen: int,
    /,
    klen: int | None = None,
    *,
    convention: str = "conformer",
    clamp_len: int | None = None,
    bi_data: bool = False,
    xp: Any = None,
    device: Any = None,
) -> Any:
    r"""The relative distances the rows of a Transformer-XL style table stand for, largest first.

    Row ``p`` of the table holds the distance ``start - p`` (query minus key):

    * ``"conformer"``: ``klen - 1, ..., 0, ..., -(klen - 1)`` (``2 klen - 1``
      rows).  ESPnet ``RelPositionalEncoding`` / NeMo and transformers 5.24
      ``Wav2Vec2ConformerRelPositionalEmbedding``
      (``models/wav2vec2_conformer/modeling_wav2vec2_conformer.py:166-212``;
      Wav2Vec2-BERT, SeamlessM4T and FastSpeech2-Conformer copy it), Parakeet
      ``arange(L - 1, -L, -1)`` (``models/parakeet/modeling_parakeet.py:84``) and
      Nemotron-ASR streaming with ``klen = qlen + cached_frames``.
    * ``"transformer_xl"``: ``klen - 1, ..., 0`` (``klen`` rows): the paper's
      ``pos_seq = arange(klen - 1, -1, -1)``; future keys are masked.
    * ``"xlnet"``: ``klen, ..., -(qlen - 1)`` (``klen + qlen`` rows): XLNet's
      ``arange(klen, -qlen, -1)`` for ``attn_type="bi"``
      (``models/xlnet/modeling_xlnet.py:938-974``); Funnel's first block
      (``klen = qlen``).
    * ``"xlnet_uni"``: ``klen, ..., 0`` (``klen + 1`` rows): XLNet ``attn_type="uni"``.

    Parameters
    ----------
    qlen : int
        Queries (the current segment), in ``[1, 2**28]``.
    klen : int, optional
        Keys: memory plus queries (XLNet's ``mlen + qlen``, Nemotron's
        ``cached_frames + qlen``), at least ``qlen``.  Default: ``qlen``.
    convention : str
        One of :data:`REL_SINUSOID_CONVENTIONS`.
    clamp_len : int, optional
        XLNet's ``clamp_len``: distances clipped to ``[-clamp_len, clamp_len]``.
        Default: no clamp (HF's ``clamp_len <= 0``).
    bi_data : bool
        XLNet's ``bi_data``: also the backward sequence ``-(start - p)``, for the
        second half of the batch.
    xp, device : array namespace and device, optional
        Where to create the result (default NumPy, its default device).

    Returns
    -------
    array of the index dtype (int64 where available), shape ``[P]``
        With ``bi_data``, ``[2, P]``: forward, then backward.

    Raises
    ------
    TypeError
        Lengths or ``clamp_len`` not integers; ``bi_data`` not a bool.
    ValueError
        A length outside ``[1, 2**28]``; ``klen < qlen``; ``clamp_len <= 0``;
        an unknown ``convention``.

    Notes
    -----
    With :func:`rel_shift` of the matching convention (``"transformer_xl"``
    for ``conformer`` and ``transformer_xl``, ``"xlnet"`` for the XLNet ones),
    query ``i`` (absolute position ``klen - qlen + i``) meets key ``j`` at row
    ``start - (klen - qlen + i - j)``, i.e. the row of its distance.

    References
    ----------
    Dai et al. (2019), "Transformer-XL", https://arxiv.org/abs/1901.02860, section 3.3;
    Yang et al. (2019), "XLNet", https://arxiv.org/abs/1906.08237.

    Examples
    --------
    >>> rel_sinusoid_positions(2, 3, convention="xlnet").tolist()
    [3, 2, 1, 0, -1]
    >>> rel_sinusoid_positions(3).tolist()
    [2, 1, 0, -1, -2]
    """
    xp = check_namespace(xp)
    device = check_device(device, xp)
    q, k = _lengths(qlen, klen)
    convention = check_choice(convention, "convention", REL_SINUSOID_CONVENTIONS)
    clamp = _clamp(clamp_len)
    check_bool(bi_data, "bi_data")
    start, rows = _sequence(q, k, convention)
    idx = _compat.index_dtype(xp, device)
    forward = start - _compat.arange(rows, xp=xp, dtype=idx, device=device)
    if bi_data:
        forward = xp.stack([forward, -forward], axis=0)
    return forward if clamp is None else _compat.clip(forward, -clamp, clamp, xp=xp)


def rel_sinusoid_table(
    qlen: int,
    dim: int,
    /,
    *,
    klen: int | None = None,
    convention: str = "conformer",
    clamp_len: int | None = None,
    bi_data: bool = False,
    dtype: Any = None,
    xp: Any = None,
    device: Any = None,
) -> Any:
    r"""The relative sinusoid table of Transformer-XL, XLNet and the Conformers: one row per distance.

    ``sinusoidal(rel_sinusoid_positions(qlen, klen, ...), dim, convention=L)``
    with the layout ``L`` of the implementation: ``"conformer"`` interleaved
    (``sin, cos`` pairs, :func:`posenc_ref.sinusoidal` ``"vaswani"``), the others
    ``[sin | cos]`` (``"marian"``); both with ``w_k = 10000**(-2k/dim)``.

    Parameters
    ----------
    qlen, dim : int
        Queries and the table width (XLNet's ``d_model``; the Conformers'
        ``hidden_size``, before ``linear_pos``).
    klen, convention, clamp_len, bi_data
        As :func:`rel_sinusoid_positions`.
    dtype : real floating dtype, optional
        Default: float64 where the backend/device has it, else float32.
    xp, device : array namespace and device, optional
        Where to create the result.

    Returns
    -------
    array, shape ``[P, dim]`` (``[2, P, dim]`` with ``bi_data``)

    Raises
    ------
    TypeError, ValueError
        As :func:`rel_sinusoid_positions` and :func:`posenc_ref.sinusoidal`.

    Notes
    -----
    .. math::
        \mathrm{conformer:}\; T[p, 2k] = \sin(d_p w_k),\; T[p, 2k+1] = \cos(d_p w_k)

        \mathrm{xlnet:}\; T[p] = [\sin(d_p w) \,|\, \cos(d_p w)]

    Matches transformers 5.24 ``XLNetModel.relative_positional_encoding``
    (``models/xlnet/modeling_xlnet.py:928-974``), ``Wav2Vec2ConformerRelPositionalEmbedding``
    (``pe_positive`` flipped and ``pe_negative[1:]``, ``:166-212``), Parakeet and
    Nemotron-ASR's ``RelPositionalEncoding.forward``, FastSpeech2-Conformer's
    ``RelPositionalEncoding`` and Funnel's ``get_position_embeds`` (first block,
    ``attention_type="relative_shift"``).  HF computes in float32 products.

    Examples
    --------
    >>> t = rel_sinusoid_table(2, 2, convention="xlnet")
    >>> [round(float(x), 4) for x in t[:, 0]]  # sin(d) for d = 2, 1, 0, -1
    [0.9093, 0.8415, 0.0, -0.8415]
    """
    q, k = _lengths(qlen, klen)
    convention = check_choice(convention, "convention", REL_SINUSOID_CONVENTIONS)
    positions = rel_sinusoid_positions(
        q, k, convention=convention, clamp_len=clamp_len, bi_data=bi_data, xp=xp, device=device
    )
    return sinusoidal(positions, dim, convention=_TABLE_LAYOUT[convention], dtype=dtype)


def _shift_index(q: int, p: int, klen: int, convention: str, shift: int, *, xp: Any, device: Any) -> Any:
    """Flat source index into ``x`` (``[Q * P]``, then one zero at ``Q * P``) of every output entry."""
    idx = _compat.index_dtype(xp, device)
    i = _compat.arange(q, xp=xp, dtype=idx, device=device)[:, None]
    j = _compat.arange(klen, xp=xp, dtype=idx, device=device)[None, :]
    zero = _compat.full((q, klen), q * p, xp=xp, dtype=idx, device=device)
    if convention == "xlnet":  # f = shift Q + i (P - shift) + j, always inside x
        return shift * q + i * (p - shift) + j
    if convention == "transformer_xl":  # flat f into the padded [Q, P + 1]; column 0 is the pad
        f = q + i * p + j
        r, c = f // (p + 1), f % (p + 1)
        return xp.where(c == 0, zero, r * p + c - 1)
    f = i * klen + j  # gemma3n: flat f into [Q, klen + 1], columns >= P are the pad
    r, c = f // (klen + 1), f % (klen + 1)
    return xp.where(c < p, r * p + c, zero)


def _check_shift(convention: object, shift: object, q: int, p: int, name: str) -> tuple[str, int]:
    if q < 1 or p < 1:
        rule = "non-empty in its last two axes (Q >= 1 queries, P >= 1 table rows)"
        raise value_error(name, rule, text(f"Q = {q}, P = {p}"))
    convention = check_choice(convention, "convention", REL_SHIFT_CONVENTIONS)
    s = check_int(shift, "shift", minimum=1, maximum=MAX_ELEMENTS)
    if convention != "xlnet" and s != 1:
        raise value_error("shift", f"1 for convention {convention!r} (only 'xlnet' drops more rows)", s)
    if convention == "xlnet" and s >= p:
        raise value_error("shift", f"an integer < P = {p} (the rows of the table)", s)
    return convention, s


def _check_klen(klen: object, p: int, convention: str, shift: int) -> int:
    if convention == "gemma3n":
        if klen is None:
            return p - 1 if p > 1 else 1
        k = check_int(klen, "klen", maximum=MAX_ELEMENTS, reason=ELEMENTS_REASON)
        if k + 1 < p:
            raise value_error("klen", f"an integer >= P - 1 = {p - 1} (the pad width klen + 1 - P >= 0)", k)
        return k
    width = p if convention == "transformer_xl" else p - shift
    if klen is None:
        return width
    k = check_int(klen, "klen", maximum=MAX_ELEMENTS, reason=ELEMENTS_REASON)
    if k > width:
        rule = f"an integer <= {width} (P{'' if convention == 'transformer_xl' else ' - shift'})"
        raise value_error("klen", rule, k)
    return k


def rel_shift(
    x: Any, /, *, klen: int | None = None, convention: str = "transformer_xl", shift: int = 1
) -> Any:
    r"""The relative shift of Transformer-XL (appendix B): move row ``p`` of query ``i`` under key ``j``.

    ``x[..., i, p]`` is a term of query ``i`` and table row ``p``
    (:func:`rel_sinusoid_table`); the result ``[..., i, j]`` is what each
    implementation's pad-and-reshape trick puts under key ``j``, given here as
    the exact index map, garbage included.  With ``Q`` queries, ``P`` rows and
    ``K = klen`` kept keys:

    * ``"transformer_xl"``: pad one zero column on the left (``[Q, P + 1]``),
      view as ``[P + 1, Q]``, drop the first row, view as ``[Q, P]``, keep ``K``
      columns.  The paper, ESPnet/NeMo ``rel_shift``, and transformers 5.24
      ``_apply_relative_position_encoding`` (Wav2Vec2-Conformer, Wav2Vec2-BERT,
      SeamlessM4T), ``FastSpeech2ConformerAttention.shift_relative_position_tensor``,
      Parakeet's and Nemotron-ASR's ``_rel_shift`` (``models/parakeet/modeling_parakeet.py:342-348``).
    * ``"xlnet"``: no pad; view as ``[P, Q]``, drop the first ``shift`` rows,
      view as ``[Q, P - shift]``, keep ``K`` columns.  XLNet's
      ``rel_shift_bnij`` (``models/xlnet/modeling_xlnet.py:82-94``; ``shift = 1``),
      Funnel's ``_relative_shift_gather`` (``models/funnel/modeling_funnel.py:327-340``;
      ``shift`` 2 for pooled queries).
    * ``"gemma3n"``: pad zero columns on the right to ``K + 1``, flatten, keep
      the first ``Q K`` elements, view as ``[Q, K]``.  Gemma 3n's
      ``Gemma3nAudioRelativePositionEmbedding._relative_shift``
      (``models/gemma3n/modeling_gemma3n.py:168-227``) and Gemma 4's
      ``Gemma4AudioAttention._rel_shift``; ``K`` is the key context of a block.

    Parameters
    ----------
    x : array of a real floating dtype, shape ``[..., Q, P]``
        Position terms ``BD`` (leading axes: batch, heads, blocks).
    klen : int, optional
        Keys kept, ``K``: at most ``P`` (``transformer_xl``), ``P - shift``
        (``xlnet``); at least ``P - 1`` (``gemma3n``).  Default: the untrimmed
        width (``P``, ``P - shift``, ``P - 1``).
    convention : str
        One of :data:`REL_SHIFT_CONVENTIONS`.
    shift : int
        Rows dropped by ``"xlnet"`` (Funnel's ``shift``); 1 for the others.

    Returns
    -------
    array, shape ``[..., Q, K]``
        The dtype, namespace and device of ``x``; every value one of ``x``'s
        or 0.

    Raises
    ------
    TypeError
        ``x`` not a real floating array; ``klen`` or ``shift`` not integers.
    ValueError
        ``x`` below 2 dimensions; ``klen`` or ``shift`` out of range; an
        unknown ``convention``; an output above ``2**30`` elements.

    Notes
    -----
    Flat index ``f`` of output ``(i, j)`` and where it reads (``x`` padded as each
    trick pads it, read row-major):

    .. math::
        \mathrm{transformer\_xl:}\; f = Q + iP + j,\;
            (r, c) = (\lfloor f/(P+1) \rfloor,\, f \bmod (P+1))

        \mathrm{out} = \begin{cases} 0 & c = 0 \\ x[r, c - 1] & c > 0 \end{cases}

        \mathrm{xlnet:}\; f = sQ + i(P - s) + j,\; \mathrm{out} = x[\lfloor f/P \rfloor, f \bmod P]

        \mathrm{gemma3n:}\; f = iK + j,\;
            (r, c) = (\lfloor f/(K+1) \rfloor,\, f \bmod (K+1))

        \mathrm{out} = \begin{cases} x[r, c] & c < P \\ 0 & c \ge P \end{cases}

    In words: ``transformer_xl`` reads ``x[i, j + Q - 1 - i]`` while
    ``j <= P - Q + i``, then 0 at ``j = P - Q + i + 1``, then the next query's
    row, ``x[i + 1, j - (P - Q + i) - 2]``: the paper's "garbage" in the
    upper right (``P = klen``: the future keys, masked).  With the Conformer
    table (``P = 2K - 1``) every kept entry is valid.  ``xlnet`` reads
    ``x[i, j + s(Q - i)]`` (valid for every kept ``j``; past the row, the next
    row's first entries).  ``gemma3n`` reads ``x[i, j - i]`` for ``0 <= j - i
    < P``, 0 for ``j - i >= P``, and the previous query's row
    ``x[i - 1, K + 1 + j - i]`` for ``j < i`` where that column is ``< P``
    (otherwise 0): Gemma's blocks (``K = W + P - 1``) only ever see zeros there.

    References
    ----------
    Dai et al. (2019), "Transformer-XL", https://arxiv.org/abs/1901.02860, appendix B.

    Examples
    --------
    Two queries over a Conformer table of 3 rows (distances 1, 0, -1):

    >>> import numpy as np
    >>> x = np.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> rel_shift(x, klen=2).tolist()  # query 0: rows 1, 2; query 1: rows 0, 1
    [[2.0, 3.0], [4.0, 5.0]]
    >>> rel_shift(x).tolist()  # untrimmed: the pad, then query 1's row, after each valid run
    [[2.0, 3.0, 0.0], [4.0, 5.0, 6.0]]
    """
    xp = namespace(x=x)
    check_float_array(x, "x", xp, min_ndim=2)
    q, p = int(x.shape[-2]), int(x.shape[-1])
    convention, shift = _check_shift(convention, shift, q, p, "x")
    k = _check_klen(klen, p, convention, shift)
    lead = tuple(int(n) for n in x.shape[:-2])
    if math.prod(lead) * q * k > MAX_ELEMENTS:
        raise value_error("klen", f"at most {MAX_ELEMENTS} output elements", k, hint=ELEMENTS_REASON)
    device = _compat.device(x)
    index = _shift_index(q, p, k, convention, shift, xp=xp, device=device)
    flat = xp.reshape(x, (*lead, q * p))
    padded = xp.concat([flat, _compat.zeros((*lead, 1), xp=xp, dtype=x.dtype, device=device)], axis=-1)
    return _compat.take_table(padded, index, xp=xp)


def rel_attention_scores(
    q: Any,
    k: Any,
    r: Any,
    /,
    *,
    u: Any = None,
    v: Any = None,
    convention: str = "transformer_xl",
    shift: int = 1,
    scale: float | None = None,
) -> Any:
    r"""Transformer-XL's attention logits: ``scale ((q + u) k + rel_shift((q + v) R))``.

    Parameters
    ----------
    q : array of a real floating dtype, shape ``[..., Q, D]``
        Queries (e.g. ``[B, H, Q, D]``).
    k : array, shape ``[..., K, D]``
        Keys (memory and current segment).
    r : array, shape ``[..., P, D]``
        The projected relative table ``W_R T`` per head (e.g. ``[H, P, D]`` or
        ``[B, H, P, D]``), rows as :func:`rel_sinusoid_table` orders them.
    u, v : arrays, shape ``[..., D]``, optional
        The content and position biases (HF ``pos_bias_u``/``pos_bias_v``,
        ``r_w_bias``/``r_r_bias``, ``bias_u``/``bias_v``), e.g. ``[H, D]``; their
        leading axes broadcast against ``q``'s without ``Q``.  Default: none.
    convention, shift
        The shift (:func:`rel_shift`), applied with ``klen = K``.
    scale : float, optional
        The logit scale; default ``D**-0.5`` (XLNet's ``scale``, the
        Conformers' ``scaling``).  Gemma's audio attention pre-scales ``q``: pass 1.

    Returns
    -------
    array, shape ``[..., Q, K]``
        The promoted dtype of the inputs; add the mask, then softmax.

    Raises
    ------
    TypeError
        Arrays that are not real floating, of different libraries.
    ValueError
        Mismatched shapes (``D``, leading axes), a shift that ``P`` and ``K`` do
        not allow (as :func:`rel_shift`), a non-finite ``scale``.

    Notes
    -----
    .. math::
        A_{ij} = s \Bigl( (q_i + u)^\top k_j + \mathrm{shift}\bigl[(q + v) R^\top\bigr]_{ij} \Bigr)

    Computed in float64 where the backend has it and rounded once.  Matches
    transformers 5.24 ``XLNetRelativeAttention.rel_attn_core`` without segment
    term (``ac + bd``, ``:96-123``), ``_apply_relative_position_encoding`` plus
    the eager ``q k`` of Wav2Vec2-Conformer, Wav2Vec2-BERT and SeamlessM4T
    (``:461-494``), ``FastSpeech2ConformerAttention.forward``, Parakeet's and
    Nemotron-ASR's attention (``matrix_bd`` as the additive mask), and (``u = v =
    None``, ``convention="gemma3n"``, ``scale=1``) ``Gemma3nAudioRelativePositionEmbedding.forward``.

    References
    ----------
    Dai et al. (2019), "Transformer-XL", https://arxiv.org/abs/1901.02860, section 3.3;
    Gulati et al. (2020), "Conformer", https://arxiv.org/abs/2005.08100.

    Examples
    --------
    One query over one key with the Conformer table of a single row:

    >>> import numpy as np
    >>> q, k, r = np.asarray([[1.0, 0.0]]), np.asarray([[2.0, 0.0]]), np.asarray([[0.0, 3.0]])
    >>> rel_attention_scores(q, k, r, v=np.asarray([0.0, 1.0]), scale=1.0).tolist()
    [[5.0]]
    """
    xp = namespace(q=q, k=k, r=r, u=u, v=v)
    named = {"q": q, "k": k, "r": r, "u": u, "v": v}
    for name, a in named.items():
        if a is not None or name in ("q", "k", "r"):
            check_float_array(a, name, xp, min_ndim=1 if name in ("u", "v") else 2)
    width = int(q.shape[-1])
    for name, a in named.items():
        if a is not None and int(a.shape[-1]) != width:
            raise value_error(name, f"of last axis D = {width} (q's)", text(f"shape {tuple(a.shape)}"))
    leads = {"q": q.shape[:-2], "k": k.shape[:-2], "r": r.shape[:-2]}
    leads.update({name: named[name].shape[:-1] for name in ("u", "v") if named[name] is not None})
    lead = broadcast_shapes(**leads)
    s = width**-0.5 if scale is None else check_real(scale, "scale")
    qn, kn, pn = int(q.shape[-2]), int(k.shape[-2]), int(r.shape[-2])
    convention, shift = _check_shift(convention, shift, qn, pn, "r")
    try:
        _check_klen(kn, pn, convention, shift)
    except ValueError as exc:
        rule = f"of a key count K the shift of P = {pn} rows allows ({exc})"
        raise value_error("k", rule, text(f"K = {kn}")) from None
    if math.prod(lead) * qn * max(kn, pn) > MAX_ELEMENTS:
        raise value_error("k", f"at most {MAX_ELEMENTS} score elements", kn, hint=ELEMENTS_REASON)
    out_dtype = xp.result_type(*(a.dtype for a in named.values() if a is not None))
    work = _compat.compute_dtype(xp, _compat.device(q))
    qw = _compat.astype(q, work, xp=xp)

    def term(bias: Any, other: Any) -> Any:  # (q + bias) @ other^T in the work dtype
        left = qw if bias is None else qw + _compat.astype(bias, work, xp=xp)[..., None, :]
        other = _compat.astype(other, work, xp=xp)
        return xp.matmul(
            left, xp.permute_dims(other, (*range(other.ndim - 2), other.ndim - 1, other.ndim - 2))
        )

    ac = term(u, k)
    bd = rel_shift(term(v, r), klen=kn, convention=convention, shift=shift)
    return _compat.astype((ac + bd) * s, out_dtype, xp=xp)
