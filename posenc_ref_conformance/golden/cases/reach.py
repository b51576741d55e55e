"""Reach sweeps: the positions at which an implementation's accuracy is measured, per dtype.

The cos/sin tables and the sinusoidal table (functions whose accuracy depends
on position and that take positions as an array) get two cases flagged
``Reach``: ``<function>/<group>/reach-sweep`` at positions
:data:`._common.REACH_SWEEP` (0, 1, ``2**k - 1, 2**k, 2**k + 1`` for k = 1 .. 24:
positions an int32 holds, run in both dtypes) and ``.../reach-sweep-f64`` at
:data:`._common.REACH_SWEEP_F64` (k = 25 .. 40), for float64 runs only (the
case's ``dtypes``; a float32 run skips it, and an adapter holding positions as
int32 raises ``Unsupported`` for it, as for any position it cannot hold).  Both
are judged at the accuracy claim (``LargePosition``), with a model's frequencies
(the 8 fastest of head dim 128) or width 16: the runner records, per swept
position, the worst error and whether it is within the exact class's tolerance (:mod:`...reach`).
The end-to-end ``rope`` has none: its large positions come as small contiguous
blocks (``PositionBlock``), since kernels take a scalar offset and libraries
precompute tables up to the largest position.  This module only adds cases.
"""

from __future__ import annotations

from ._common import REACH_SWEEP, REACH_SWEEP_F64, F, I, _freqs, case

_SWEEPS = (
    ("reach-sweep", REACH_SWEEP, None, ("Reach", "LargePosition", "Float32PositionRounding")),
    ("reach-sweep-f64", REACH_SWEEP_F64, ("float64",), ("Reach", "LargePosition")),
)
_WHERE = {
    "reach-sweep": "0, 1 and 2**k - 1, 2**k, 2**k + 1 for k = 1 .. 24",
    "reach-sweep-f64": "2**k - 1, 2**k, 2**k + 1 for k = 25 .. 40, float64 only",
}
#: The 8 fastest frequencies of a head-dim-128 model (base 10000), theta_0 = 1 .. theta_7: where the error
#: of a product grows fastest, in 16 columns rather than 128 (the whole golden set stays small).
_D128_FASTEST = _freqs(128)[0][:8]

for _name, _positions, _dtypes, _flags in _SWEEPS:
    case(
        f"rope_cos_sin/half/{_name}",
        f"Reach sweep of cos/sin tables, the 8 fastest frequencies of head dim 128 (base 10000), "
        f"at positions {_WHERE[_name]}.",
        (*_flags, "HalfLayout"),
        dtypes=_dtypes,
        positions=I(_positions),
        inv_freq=F(_D128_FASTEST),
        attention_factor=F(1.0),
        layout="half",
    )
    case(
        f"sinusoidal/vaswani/{_name}",
        f"Reach sweep of the paper's table, width 16, at positions {_WHERE[_name]}.",
        (*_flags, "VaswaniFrequencies", "InterleavedLayout"),
        dtypes=_dtypes,
        positions=I(_positions),
        dim=16,
        convention="vaswani",
        options={},
    )
