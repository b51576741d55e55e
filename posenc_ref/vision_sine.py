r"""Fixed sinusoidal encodings of 2-D images and boxes: DETR's sine, its query helper, 2-D sincos.

* :func:`detr_sine_2d`, DETR's ``DetrSinePositionEmbedding`` (Carion et al.
  2020, https://arxiv.org/abs/2005.12872) and its copies: mask-aware
  cumulative row/column positions, normalised to :math:`(0, 2\pi]`, each axis
  a Vaswani-style interleaved sin/cos table, ``[y | x]`` channels first.
* :func:`detr_coord_sine`, the same sinusoid of real-valued coordinates:
  Conditional DETR's ``encode_sinusoidal_position_embedding`` (DAB-DETR,
  Grounding DINO, LW-DETR, RF-DETR) and Deformable DETR's
  ``get_proposal_pos_embed``.
* :func:`sincos_2d`, the MAE / RT-DETR 2-D sincos table of a patch grid
  (``build_2d_sinusoidal_position_embedding``), with the block and row
  orders of ViT-MAE and OmDet-Turbo as named conventions.

Line numbers are HF transformers 5.24.0, ``transformers/models/<family>/modeling_<family>.py``.
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat, _mlx_float64
from ._angles import _rotate
from ._validate import (
    ELEMENTS_REASON,
    MAX_ELEMENTS,
    check_bool,
    check_choice,
    check_device,
    check_dim,
    check_float_array,
    check_int,
    check_mask_array,
    check_namespace,
    check_positions,
    check_real,
    check_sequence,
    namespace,
    output_dtype,
    text,
    value_error,
)

__all__ = [
    "DETR_COORD_CONVENTIONS",
    "DETR_SINE_CONVENTIONS",
    "SINCOS_2D_CONVENTIONS",
    "detr_coord_sine",
    "detr_sine_2d",
    "sincos_2d",
]

#: Normalisations of :func:`detr_sine_2d`: DETR's ``c / (c_last + eps)``, Deformable DETR's
#: ``(c - 0.5) / (c_last + eps)``.
DETR_SINE_CONVENTIONS = ("detr", "deformable_detr")
#: Coordinate handling of :func:`detr_coord_sine`: Conditional DETR's (y first), Deformable DETR's
#: proposals (sigmoid, in the given order).
DETR_COORD_CONVENTIONS = ("conditional_detr", "deformable_detr")
#: Block and row orders of :func:`sincos_2d`.
SINCOS_2D_CONVENTIONS = ("rt_detr", "vit_mae", "omdet_turbo")

#: DETR's normalisation epsilon (``eps = 1e-6`` in every copy).
EPS = 1e-6
_TWO_PI = 2 * math.pi


# pi/2 in three parts (fdlibm's pio2_1, pio2_2, pio2_2t): the first two have 33 significant bits, so
# n * part is exact for |n| < 2**20.
_PIO2 = (1.57079632673412561417e00, 6.07710050630396597660e-11, 2.02226624879595063154e-21)


def _sin_cos(angles: Any, xp: Any) -> tuple[Any, Any]:
    """``sin``, ``cos`` of ``angles``: the backend's, or on MLX float64 (whose own are float32-accurate)
    a Cody-Waite reduction by pi/2 (exact for ``|a| < 1.6e6``) and Taylor sums of the remainder."""
    if angles.dtype != xp.float64 or _mlx_float64.has_accurate_float64_math(xp):
        return xp.sin(angles), xp.cos(angles)
    n = xp.round(angles * (2 / math.pi))
    r = ((angles - n * _PIO2[0]) - n * _PIO2[1]) - n * _PIO2[2]
    k = n - 4.0 * xp.floor((n + 2.0) / 4.0)  # n mod 4 in {-2, -1, 0, 1}
    c, s = _rotate(*_mlx_float64.cos_sin_small(r, xp=xp), k, xp)
    return s, c


def _interleaved(angles: Any, xp: Any) -> Any:
    """``[..., F/2]`` angles -> ``[..., F]`` as ``sin a0, cos a0, sin a1, cos a1, ...``."""
    both = xp.stack(_sin_cos(angles, xp), axis=-1)
    return xp.reshape(both, (*angles.shape[:-1], 2 * angles.shape[-1]))


def _dim_t(num_feats: int, temperature: float, *, xp: Any, dtype: Any, device: Any) -> Any:
    """DETR's ``dim_t[2k] = dim_t[2k+1] = T**(2k/F)``, one value per pair (``k < F/2``)."""
    values = [temperature ** (2 * k / num_feats) for k in range(num_feats // 2)]
    return _compat.asarray(values, xp=xp, dtype=dtype, device=device)


def detr_sine_2d(
    mask: Any,
    /,
    num_position_features: int = 64,
    *,
    temperature: float = 10000.0,
    temperature_height: float | None = None,
    temperature_width: float | None = None,
    normalize: bool = True,
    scale: float = _TWO_PI,
    convention: str = "detr",
    shape: Any = None,
    xp: Any = None,
    device: Any = None,
    dtype: Any = None,
) -> Any:
    r"""DETR's 2-D sine position embedding of a padded image batch, ``[B, 2F, H, W]``.

    Parameters
    ----------
    mask : array of a bool or integer dtype, shape ``[B, H, W]``, or None
        The pixel mask: non-zero = a real pixel, zero = padding.  ``None``
        (HF's ``mask=None``): every pixel real, a batch of the given ``shape``.
    num_position_features : int
        ``F``, the even number of channels per axis (HF: ``d_model // 2``).
    temperature : float
        ``T`` of both axes (10000).
    temperature_height, temperature_width : float, optional
        DAB-DETR's separate temperatures of the y and x axes (``None``: ``temperature``).
    normalize : bool
        Divide by the last cumulative position (plus ``1e-6``) and multiply by
        ``scale`` (every HF model does); ``False``: the raw counts 1, 2, ...
    scale : float
        Range of the normalised positions, :math:`2\pi`.
    convention : {"detr", "deformable_detr"}
        ``"detr"``: :math:`c / (c_{last} + 10^{-6})`; ``"deformable_detr"``:
        :math:`(c - 0.5) / (c_{last} + 10^{-6})` (with ``normalize`` only).
    shape : sequence of 3 ints, optional
        ``(B, H, W)`` when ``mask`` is None (ignored otherwise).
    xp : namespace, optional
        Array namespace of the result when ``mask`` is None (NumPy when omitted).
    device : optional
        Device of the result when ``mask`` is None (ignored on MLX).
    dtype : real floating dtype, optional
        Default: float64 where the backend/device has it, else float32.

    Returns
    -------
    array, shape ``[B, 2F, H, W]``
        Channels ``0..F-1`` encode the row (y), ``F..2F-1`` the column (x).

    Raises
    ------
    TypeError
        For a mask that is not bool/integer, or options of the wrong type.
    ValueError
        For a mask that is not 3-D (or, without a mask, a ``shape`` that is not
        3 positive ints), an odd or non-positive ``F``, temperatures ``<= 0``, a
        ``scale <= 0`` or an unknown ``convention``.

    Notes
    -----
    With :math:`y_{b,i,j} = \sum_{i' \le i} m_{b,i',j}` and :math:`x_{b,i,j} = \sum_{j' \le j} m_{b,i,j'}`
    (counts start at 1), normalised as
    :math:`\hat y = (y - \delta) / (y_{b,H-1,j} + 10^{-6})\,s` (:math:`\delta` = 0 or 0.5),
    and :math:`\omega_k = T^{-2k/F}`:

    .. math::
        e_{b,\,2k,\,i,j} = \sin(\hat y\,\omega_k),\quad
        e_{b,\,2k+1,\,i,j} = \cos(\hat y\,\omega_k),

        e_{b,\,F+2k,\,i,j} = \sin(\hat x\,\omega_k),\quad
        e_{b,\,F+2k+1,\,i,j} = \cos(\hat x\,\omega_k)

    HF ``DetrSinePositionEmbedding.build_sine_position_embedding`` (``detr:317-357``;
    ``normalize=True`` at ``:1120``), copied by Conditional DETR (``:294``), Table
    Transformer, MaskFormer, Mask2Former, OneFormer: ``convention="detr"``.
    Deformable DETR (``deformable_detr:365-405``): ``"deformable_detr"``.  DAB-DETR
    (``dab_detr:289-333``): ``"detr"`` with ``temperature_height`` /
    ``temperature_width``.  Grounding DINO (``grounding_dino:457-484``): ``"detr"``.
    Precision variants of the same formula: DETR and its copies compute in the
    model dtype (``detr:1211``; cumsum, normalisation and ``T**(...)`` in
    fp16/bf16 for half-precision models), DAB-DETR and Grounding DINO take the
    cumsum and frequencies in float32.  Here the cumsum is exact (integers)
    and the rest float64 where available, then cast.  A padded row or column
    has :math:`c_{last}` of the real extent; padding pixels repeat the last
    real count (their values are not masked).

    References
    ----------
    Carion et al. (2020), "End-to-End Object Detection with Transformers",
    https://arxiv.org/abs/2005.12872.

    Examples
    --------
    One 1 x 2 image, ``F = 2``, ``T = 1``, ``normalize=False``: rows count 1,
    columns 1 and 2, so channel 0 is :math:`\sin 1`, channel 2 :math:`\sin x`.

    >>> import numpy as np
    >>> e = detr_sine_2d(np.ones((1, 1, 2), dtype=bool), 2, temperature=1.0, normalize=False)
    >>> np.round(e[0, :, 0, :], 6).tolist()
    [[0.841471, 0.841471], [0.540302, 0.540302], [0.841471, 0.909297], [0.540302, -0.416147]]
    >>> bool((detr_sine_2d(None, 2, shape=(1, 1, 2), temperature=1.0, normalize=False) == e).all())
    True
    """
    if mask is None:
        rule = "a sequence (B, H, W) of 3 positive integers when mask is None"
        dims = check_sequence(shape, "shape", rule=rule, minimum=3, maximum=3)
        dims = [check_int(n, "shape", minimum=1, maximum=MAX_ELEMENTS, reason=ELEMENTS_REASON) for n in dims]
        if dims[0] * dims[1] * dims[2] > MAX_ELEMENTS:
            raise value_error("shape", "of at most 2**30 elements", tuple(dims), hint=ELEMENTS_REASON)
        xp = check_namespace(xp)
        device = check_device(device, xp)
        mask = _compat.full(tuple(dims), 1, xp=xp, dtype=_compat.index_dtype(xp, device), device=device)
    xp = namespace(mask=mask)
    check_mask_array(mask, "mask", xp, min_ndim=0)
    if mask.ndim != 3:
        raise value_error("mask", "3-dimensional [B, H, W]", text(f"shape {tuple(mask.shape)}"))
    feats = check_dim(num_position_features, "num_position_features", even=True)
    temp = check_real(temperature, "temperature", exclusive_minimum=0.0)
    t_h = (
        temp
        if temperature_height is None
        else check_real(temperature_height, "temperature_height", exclusive_minimum=0.0)
    )
    t_w = (
        temp
        if temperature_width is None
        else check_real(temperature_width, "temperature_width", exclusive_minimum=0.0)
    )
    normalize = check_bool(normalize, "normalize")
    scale = check_real(scale, "scale", exclusive_minimum=0.0)
    convention = check_choice(convention, "convention", DETR_SINE_CONVENTIONS)
    device = _compat.device(mask)
    dtype = output_dtype(dtype, "dtype", xp, device)
    work = _compat.compute_dtype(xp, device)
    idx = _compat.index_dtype(xp, device)
    real = (
        _compat.astype(mask != 0, idx, xp=xp)
        if xp.isdtype(mask.dtype, "integral")
        else _compat.astype(mask, idx, xp=xp)
    )
    y = _compat.astype(xp.cumulative_sum(real, axis=1, dtype=idx), work, xp=xp)
    x = _compat.astype(xp.cumulative_sum(real, axis=2, dtype=idx), work, xp=xp)
    if normalize:
        offset = 0.5 if convention == "deformable_detr" else 0.0
        y = (y - offset) / (y[:, -1:, :] + EPS) * scale
        x = (x - offset) / (x[:, :, -1:] + EPS) * scale
    pos_y = _interleaved(y[..., None] / _dim_t(feats, t_h, xp=xp, dtype=work, device=device), xp)
    pos_x = _interleaved(x[..., None] / _dim_t(feats, t_w, xp=xp, dtype=work, device=device), xp)
    pos = xp.permute_dims(xp.concat((pos_y, pos_x), axis=-1), (0, 3, 1, 2))
    return _compat.astype(pos, dtype, xp=xp)


def detr_coord_sine(
    coords: Any,
    /,
    num_pos_feats: int = 128,
    *,
    temperature: float = 10000.0,
    scale: float = _TWO_PI,
    convention: str = "conditional_detr",
) -> Any:
    r"""DETR's sinusoid of real-valued coordinates (anchor points, boxes): ``[..., n * F]``.

    Parameters
    ----------
    coords : array of a real floating dtype, shape ``[..., n]``
        ``"conditional_detr"``: coordinates, normally in ``[0, 1]`` (``x, y`` or
        ``x, y, w, h``; Grounding DINO also passes integer text positions as
        floats).  ``"deformable_detr"``: proposal logits, passed through the
        sigmoid first.
    num_pos_feats : int
        ``F``, the even number of channels per coordinate (128).
    temperature : float
        ``T`` (10000).
    scale : float
        Factor of the coordinates, :math:`2\pi`.
    convention : {"conditional_detr", "deformable_detr"}
        ``"conditional_detr"``: the first two coordinates swapped (``y`` block
        first); ``"deformable_detr"``: ``sigmoid(coords)``, in the given order.

    Returns
    -------
    array, shape ``[..., n * F]``, the dtype of ``coords``

    Raises
    ------
    TypeError
        For non-float coordinates or options of the wrong type.
    ValueError
        For 0-d coordinates, an odd or non-positive ``F``, ``T <= 0``,
        ``scale <= 0`` or an unknown ``convention``.

    Notes
    -----
    Coordinate :math:`c_j` (after the swap) with :math:`\omega_k = T^{-2k/F}` fills
    channels :math:`jF + 2k` with :math:`\sin(s c_j \omega_k)` and :math:`jF + 2k + 1`
    with :math:`\cos(s c_j \omega_k)`.  HF ``encode_sinusoidal_position_embedding``
    (``conditional_detr:1146-1179``, verbatim in DAB-DETR, Grounding DINO,
    MM-Grounding-DINO, LW-DETR, RF-DETR): ``"conditional_detr"``; its
    ``dim_t`` is float32 whatever the input dtype.  Deformable DETR's
    ``get_proposal_pos_embed`` (``deformable_detr:1237-1255``, two-stage; also
    LW-DETR): ``"deformable_detr"``, computed in float32 and cast back.
    Here everything is float64 where available, then cast.

    References
    ----------
    Meng et al. (2021), "Conditional DETR for Fast Training Convergence",
    https://arxiv.org/abs/2108.06152; Zhu et al. (2021), "Deformable DETR",
    https://arxiv.org/abs/2010.04159.

    Examples
    --------
    A point ``(x, y) = (0.25, 0.5)``, ``F = 2``: the y block comes first,
    :math:`\sin(2\pi\cdot 0.5) = 0`, :math:`\cos \pi = -1`, then
    :math:`\sin(\pi/2) = 1`, :math:`\cos(\pi/2) = 0`.

    >>> import numpy as np
    >>> e = detr_coord_sine(np.asarray([0.25, 0.5]), 2)
    >>> np.round(e, 6).tolist()
    [0.0, -1.0, 1.0, 0.0]
    """
    xp = namespace(coords=coords)
    check_float_array(coords, "coords", xp, min_ndim=1)
    feats = check_dim(num_pos_feats, "num_pos_feats", even=True)
    temperature = check_real(temperature, "temperature", exclusive_minimum=0.0)
    scale = check_real(scale, "scale", exclusive_minimum=0.0)
    convention = check_choice(convention, "convention", DETR_COORD_CONVENTIONS)
    device = _compat.device(coords)
    work = _compat.compute_dtype(xp, device)
    c = _compat.astype(coords, work, xp=xp)
    if convention == "deformable_detr":
        c = 1.0 / (1.0 + _mlx_float64.exp(-c, xp=xp))
    elif c.shape[-1] >= 2:
        c = xp.concat((c[..., 1:2], c[..., 0:1], c[..., 2:]), axis=-1)
    angles = (c * scale)[..., None] / _dim_t(feats, temperature, xp=xp, dtype=work, device=device)
    out = _interleaved(angles, xp)
    out = xp.reshape(out, (*out.shape[:-2], out.shape[-2] * out.shape[-1]))
    return _compat.astype(out, coords.dtype, xp=xp)


def sincos_2d(
    h_positions: Any,
    w_positions: Any,
    /,
    dim: int,
    *,
    temperature: float = 10000.0,
    convention: str = "rt_detr",
    cls_token: bool = False,
    dtype: Any = None,
) -> Any:
    r"""The 2-D sincos table of a patch grid (MAE, RT-DETR): ``[(1 +) H W, D]``.

    Parameters
    ----------
    h_positions, w_positions : 1-D arrays of an integer dtype, shapes ``[H]``, ``[W]``
        Row and column positions of the grid (HF: ``arange(height)``,
        ``arange(width)``; any integers, e.g. a block of a larger grid).
    dim : int
        ``D``, a multiple of 4 (HF: ``embed_dim``).
    temperature : float
        ``T`` (10000).
    convention : {"rt_detr", "vit_mae", "omdet_turbo"}
        ``"rt_detr"``: rows h-major (row ``i W + j`` is ``(h_i, w_j)``), channels
        ``[sin h | cos h | sin w | cos w]``; ``"vit_mae"``: rows h-major,
        ``[sin w | cos w | sin h | cos h]``; ``"omdet_turbo"``: rows w-major
        (row ``j H + i``), ``[sin w | cos w | sin h | cos h]``.
    cls_token : bool
        Prepend a row of zeros (MAE's cls position).
    dtype : real floating dtype, optional
        Default: float64 where the backend/device has it, else float32.

    Returns
    -------
    array, shape ``[H W, D]`` (``[H W + 1, D]`` with ``cls_token``)

    Raises
    ------
    TypeError
        For non-integer positions or options of the wrong type.
    ValueError
        For positions that are not 1-D, a ``dim`` that is not a positive
        multiple of 4, ``T <= 0`` or an unknown ``convention``.

    Notes
    -----
    With :math:`q = D/4` and :math:`\omega_k = T^{-k/q}`, :math:`k < q`, each
    axis block is :math:`[\sin(p\,\omega_k)]_k` then :math:`[\cos(p\,\omega_k)]_k`
    (the ``"marian"`` layout of :func:`posenc_ref.sinusoidal`, width ``D/2``).
    HF ``build_2d_sinusoidal_position_embedding`` (``vit_mae:134-181``, copied
    in ``rt_detr:829-876``, RT-DETR-v2, D-FINE, DEIMv2, PP-DocLayout v2-v4,
    AIMv2): ``"rt_detr"``; ``grid_h, grid_w = meshgrid(grid_h, grid_w,
    "ij")`` names both outputs right, so rows are h-major.  ViT-MAE and AIMv2
    swap the two halves afterwards (``vit_mae:276-290``, the original's naming
    bug; Granite-Docling ``roll(D/2)``): ``"vit_mae"``.  OmDet-Turbo
    (``omdet_turbo:705-720``) keeps the original RT-DETR code,
    ``grid_w, grid_h = meshgrid(grid_w, grid_h, "ij")``: w-major rows, w block
    first (``"omdet_turbo"``); on a square grid all three agree with
    ``"vit_mae"`` or ``"rt_detr"`` up to the block order.  HF computes in
    float64 (float32 on MPS); OmDet-Turbo in the output dtype.

    References
    ----------
    He et al. (2022), "Masked Autoencoders Are Scalable Vision Learners",
    https://arxiv.org/abs/2111.06377; Zhao et al. (2024), "DETRs Beat YOLOs on
    Real-time Object Detection", https://arxiv.org/abs/2304.08069.

    Examples
    --------
    A 1 x 2 grid, ``D = 4`` (one frequency, 1): rows ``(0, 0)`` and ``(0, 1)``
    hold ``[sin 0, cos 0, sin w, cos w]``.

    >>> import numpy as np
    >>> np.round(sincos_2d(np.arange(1), np.arange(2), 4), 6).tolist()
    [[0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.841471, 0.540302]]
    """
    xp = namespace(h_positions=h_positions, w_positions=w_positions)
    h = check_positions(h_positions, "h_positions", xp, min_ndim=1)
    w = check_positions(w_positions, "w_positions", xp, min_ndim=1)
    for name, p in (("h_positions", h), ("w_positions", w)):
        if p.ndim != 1:
            raise value_error(name, "1-dimensional", text(f"shape {tuple(p.shape)}"))
    dim = check_dim(dim)
    if dim % 4:
        raise value_error("dim", "a positive multiple of 4", dim)
    temperature = check_real(temperature, "temperature", exclusive_minimum=0.0)
    convention = check_choice(convention, "convention", SINCOS_2D_CONVENTIONS)
    cls_token = check_bool(cls_token, "cls_token")
    device = _compat.device(h_positions)
    dtype = output_dtype(dtype, "dtype", xp, device)
    work = _compat.compute_dtype(xp, device)
    q = dim // 4
    omega = _compat.asarray(
        [1.0 / temperature ** (k / q) for k in range(q)], xp=xp, dtype=work, device=device
    )
    ah = _compat.astype(h, work, xp=xp)[:, None] * omega  # [H, q]
    aw = _compat.astype(w, work, xp=xp)[:, None] * omega  # [W, q]
    n_h, n_w = ah.shape[0], aw.shape[0]
    if convention == "omdet_turbo":  # row j H + i
        grid_h = xp.broadcast_to(ah[None, :, :], (n_w, n_h, q))
        grid_w = xp.broadcast_to(aw[:, None, :], (n_w, n_h, q))
    else:  # row i W + j
        grid_h = xp.broadcast_to(ah[:, None, :], (n_h, n_w, q))
        grid_w = xp.broadcast_to(aw[None, :, :], (n_h, n_w, q))
    grid_h = xp.reshape(grid_h, (n_h * n_w, q))
    grid_w = xp.reshape(grid_w, (n_h * n_w, q))
    blocks_h = _sin_cos(grid_h, xp)
    blocks_w = _sin_cos(grid_w, xp)
    blocks = (*blocks_h, *blocks_w) if convention == "rt_detr" else (*blocks_w, *blocks_h)
    table = xp.concat(blocks, axis=-1)
    if cls_token:
        table = xp.concat((_compat.zeros((1, dim), xp=xp, dtype=work, device=device), table), axis=0)
    return _compat.astype(table, dtype, xp=xp)
