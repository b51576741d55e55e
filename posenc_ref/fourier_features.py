r"""Random Fourier features of 2-D coordinates (SAM, SAM 2, EdgeTAM, SAM-HQ, SAM 3 tracker).

Tancik et al. (2020) map a low-dimensional coordinate through a fixed random
Gaussian matrix ``G`` and take the sine and cosine of the result.  SAM's prompt
encoder and its image-wide positional grid use that map for 2-D points,
:math:`c' = 2 c - 1`, :math:`z = 2\pi\, c' G`, :math:`\mathrm{pe} = [\sin z \,|\, \cos z]`,
with ``c`` the point normalised to ``[0, 1]^2`` (x first).  The matrix ``G``
(``[2, F]``, ``scale * randn``) is the model's buffer or parameter, so it is an
input here, never drawn.

* :func:`fourier_features` encodes given points, with SAM's optional pixel
  shift (prompts: ``+0.5``, the pixel centre) and division by the image size
  (``x / W``, ``y / H``).
* :func:`fourier_grid` encodes the centres of an ``H x W`` grid,
  ``((j + 1/2) / W, (i + 1/2) / H)``, channels first, as
  ``SamModel.get_image_wide_positional_embeddings`` returns it.
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat
from ._mlx_float64 import cos_sin_small
from ._validate import (
    MAX_ELEMENTS,
    check_float_array,
    check_int,
    check_real,
    check_sequence,
    namespace,
    text,
    value_error,
)

__all__ = ["fourier_features", "fourier_grid"]

_SIDE_REASON = "sizes beyond 2**20 pixels are surely a mistake"


def _check_gaussian(gaussian: Any, xp: Any) -> int:
    check_float_array(gaussian, "gaussian", xp, ndim=2)
    if gaussian.shape[0] != 2 or gaussian.shape[1] < 1:
        rule = "of shape (2, F) with F >= 1 (SAM's positional_embedding)"
        raise value_error("gaussian", rule, text(f"shape {tuple(gaussian.shape)}"))
    return int(gaussian.shape[1])


def _check_shape(input_shape: Any) -> tuple[int, int] | None:
    if input_shape is None:
        return None
    shape = check_sequence(input_shape, "input_shape", rule="a pair (H, W)", minimum=2, maximum=2)
    h, w = (check_int(v, "input_shape", minimum=1, maximum=2**20, reason=_SIDE_REASON) for v in shape)
    return h, w


def _encode(coords: Any, gaussian: Any, xp: Any, work: Any) -> Any:
    """``[sin z | cos z]`` of ``z = 2 pi (2 c - 1) G`` for normalised ``c`` (``[..., 2]``, in ``work``).

    The angle is kept in turns ``t = (2c - 1) G`` and reduced by quarter turns,
    ``t = n/4 + f`` with ``|f| <= 1/8`` (exact: ``n/4`` is dyadic and close to
    ``t``), so only ``sin``/``cos`` of ``|2 pi f| <= pi/4`` are evaluated
    (:func:`._mlx_float64.cos_sin_small`, float64-accurate on MLX too) and
    quarter turns give exact zeros; the quadrant ``n mod 4`` rotates the result.
    """
    g = _compat.astype(gaussian, work, xp=xp)
    c = 2.0 * coords - 1.0
    turns = c[..., 0:1] * g[0, :] + c[..., 1:2] * g[1, :]
    quarters = xp.round(4.0 * turns)
    cos_f, sin_f = cos_sin_small((2.0 * math.pi) * (turns - quarters / 4.0), xp=xp)
    quadrant = quarters - 4.0 * xp.floor(quarters / 4.0)

    def pick(v0: Any, v1: Any, v2: Any, v3: Any) -> Any:
        return xp.where(quadrant == 0.0, v0, xp.where(quadrant == 1.0, v1, xp.where(quadrant == 2.0, v2, v3)))

    sin_z = pick(sin_f, cos_f, -sin_f, -cos_f)
    cos_z = pick(cos_f, -sin_f, -cos_f, sin_f)
    return xp.concat([sin_z, cos_z], axis=-1) + 0.0  # + 0.0: the exact zeros of -sin_f, -cos_f are +0


def fourier_features(coords: Any, gaussian: Any, /, *, input_shape: Any = None, offset: float = 0.0) -> Any:
    r"""SAM's random Fourier features of 2-D points: ``[sin z | cos z]``, ``z = 2 pi (2c - 1) G``.

    Parameters
    ----------
    coords : array of a real floating dtype, shape ``[..., 2]``
        Points ``(x, y)``: normalised to ``[0, 1]`` when ``input_shape`` is
        ``None``, else in pixels.
    gaussian : array of a real floating dtype, shape ``[2, F]``
        The random matrix ``G`` (HF ``positional_embedding``, ``scale * randn``).
    input_shape : (int, int), optional
        ``(H, W)``: divide ``x`` by ``W`` and ``y`` by ``H`` (SAM's
        ``input_shape[1]`` and ``input_shape[0]``).  ``None``: ``coords`` are
        already normalised.
    offset : float
        Added to both coordinates before the division: ``0.5`` for SAM's point
        and box prompts (``points + 0.5``, "shift to center of pixel"), 0 for
        coordinates given as they are.

    Returns
    -------
    array, shape ``[..., 2F]``
        ``sin`` in channels ``0 .. F-1``, ``cos`` in ``F .. 2F-1``; the promoted
        dtype of ``coords`` and ``gaussian``, computed in float64 where the
        backend has it.

    Raises
    ------
    TypeError
        Non-float ``coords`` or ``gaussian``; a non-integer ``input_shape``.
    ValueError
        ``coords`` whose last axis is not 2, ``gaussian`` not ``[2, F]``,
        sizes outside ``[1, 2**20]``, a non-finite ``offset``.

    Notes
    -----
    .. math::
        c_x = \frac{x + o}{W}, \quad c_y = \frac{y + o}{H},

        z_f = 2\pi\bigl((2c_x - 1) G_{0f} + (2c_y - 1) G_{1f}\bigr),

        \mathrm{pe} = [\sin z_0, \dots, \sin z_{F-1}, \cos z_0, \dots, \cos z_{F-1}]

    Matches ``SamPositionalEmbedding.forward``
    (``transformers/models/sam/modeling_sam.py:546-566``, 5.24) and its
    copies in SAM 2 (``sam2/modeling_sam2.py:726-748``), EdgeTAM, SAM-HQ and
    the SAM 3 tracker; ``offset=0.5`` with ``input_shape=(S, S)`` is
    ``SamPromptEncoder._embed_points``/``_embed_boxes`` (``:615``, ``:649``).
    Each ``(sin z_f, cos z_f)`` pair has unit norm.

    References
    ----------
    Tancik et al. (2020), "Fourier Features Let Networks Learn High Frequency
    Functions in Low Dimensional Domains", https://arxiv.org/abs/2006.10739;
    Kirillov et al. (2023), "Segment Anything", https://arxiv.org/abs/2304.02643.

    Examples
    --------
    The image centre ``(1/2, 1/2)`` maps to ``z = 0``: sines 0, cosines 1.

    >>> import numpy as np
    >>> g = np.asarray([[1.0, 0.5], [0.25, -2.0]])
    >>> fourier_features(np.asarray([[0.5, 0.5]]), g).tolist()
    [[0.0, 0.0, 1.0, 1.0]]

    The point ``(1, 1/2)`` has ``c' = (1, 0)``: ``z = 2 pi G[0] = (2 pi, pi)`` with this ``G``; with
    ``G[0] = (1/4, 1/8)`` it is ``(pi/2, pi/4)``:

    >>> g = np.asarray([[0.25, 0.125], [0.25, -2.0]])
    >>> np.round(fourier_features(np.asarray([[1.0, 0.5]]), g), 6).tolist()
    [[1.0, 0.707107, 0.0, 0.707107]]
    >>> np.round(fourier_features(np.asarray([[15.5, 7.5]]), g, input_shape=(16, 16), offset=0.5), 6).tolist()
    [[1.0, 0.707107, 0.0, 0.707107]]
    """
    xp = namespace(coords=coords, gaussian=gaussian)
    check_float_array(coords, "coords", xp, min_ndim=1)
    if coords.shape[-1] != 2:
        raise value_error("coords", "of shape [..., 2] (x, y)", text(f"shape {tuple(coords.shape)}"))
    _check_gaussian(gaussian, xp)
    shape = _check_shape(input_shape)
    offset = check_real(offset, "offset")
    out_dtype = xp.result_type(coords.dtype, gaussian.dtype)
    work = _compat.compute_dtype(xp, _compat.device(coords))
    c = _compat.astype(coords, work, xp=xp)
    if offset:
        c = c + offset
    if shape is not None:
        h, w = shape
        c = c / _compat.asarray([float(w), float(h)], xp=xp, dtype=work, device=_compat.device(coords))
    return _compat.astype(_encode(c, gaussian, xp, work), out_dtype, xp=xp)


def fourier_grid(gaussian: Any, /, *, height: int, width: int) -> Any:
    r"""SAM's image-wide positional embedding: Fourier features of the pixel centres, channels first.

    Parameters
    ----------
    gaussian : array of a real floating dtype, shape ``[2, F]``
        The random matrix ``G``.
    height, width : int
        Grid size ``H x W`` (SAM: ``image_embedding_size``, 64 x 64).

    Returns
    -------
    array, shape ``[2F, H, W]``, the dtype of ``gaussian``
        Channel ``f`` at ``(i, j)`` encodes ``((j + 1/2)/W, (i + 1/2)/H)``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fourier_features`; ``height``/``width`` outside ``[1, 2**20]``
        or an output above ``2**30`` elements.

    Notes
    -----
    ``SamModel.get_image_wide_positional_embeddings``
    (``sam/modeling_sam.py:1128-1139``): ``(cumsum(ones) - 0.5) / size`` per
    axis, stacked ``(x, y)``, encoded, ``permute(2, 0, 1)``.  SAM 2
    (``sam2/modeling_sam2.py:1338-1349``) divides by ``size[0]`` and
    ``size[1]`` for non-square grids.  The returned array is SAM's without its
    leading batch axis of 1.

    Examples
    --------
    A 1 x 2 grid: the centres ``x = 1/4, 3/4`` give ``c' = -1/2, 1/2``, so
    ``G = [[1/2], [0]]`` gives ``z = -pi/2, pi/2``.

    >>> import numpy as np
    >>> g = np.asarray([[0.5], [0.0]])
    >>> np.round(fourier_grid(g, height=1, width=2), 6).tolist()
    [[[-1.0, 1.0]], [[0.0, 0.0]]]
    """
    xp = namespace(gaussian=gaussian)
    feats = _check_gaussian(gaussian, xp)
    height = check_int(height, "height", maximum=2**20, reason=_SIDE_REASON)
    width = check_int(width, "width", maximum=2**20, reason=_SIDE_REASON)
    if 2 * feats * height * width > MAX_ELEMENTS:
        raise value_error("width", f"such that 2F H W <= {MAX_ELEMENTS}", width)
    dev = _compat.device(gaussian)
    work = _compat.compute_dtype(xp, dev)
    ys = (_compat.arange(0, height, xp=xp, dtype=work, device=dev) + 0.5) / height
    xs = (_compat.arange(0, width, xp=xp, dtype=work, device=dev) + 0.5) / width
    grid = xp.stack(
        [
            xp.broadcast_to(xs[None, :], (height, width)),
            xp.broadcast_to(ys[:, None], (height, width)),
        ],
        axis=-1,
    )
    pe = _encode(grid, gaussian, xp, work)
    return _compat.astype(xp.permute_dims(pe, (2, 0, 1)), gaussian.dtype, xp=xp)
