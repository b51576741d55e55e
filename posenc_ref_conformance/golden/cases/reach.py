"""Reach sweeps: the positions at which an implementation's accuracy is measured, per dtype.

Each function whose accuracy depends on position (its cases carry phase data)
gets two cases flagged ``Reach``: ``<function>/<group>/reach-sweep`` at positions
:data:`._common.REACH_SWEEP` (0, 1, ``2**k - 1, 2**k, 2**k + 1`` for k = 1 .. 24:
positions an int32 holds, run in both dtypes) and ``.../reach-sweep-f64`` at
:data:`._common.REACH_SWEEP_F64` (k = 25 .. 40), for float64 runs only (the
case's ``dtypes``; a float32 run skips it, and an adapter holding positions as
int32 raises ``Unsupported`` for it, as for any position it cannot hold).  Both
are judged at the accuracy claim (``LargePosition``), with a model's frequencies
(head dim 128): the runner records, per swept position, the worst error and
whether it is within the exact class's tolerance (:mod:`...reach`).
This module only adds cases: the functions are declared in their family modules.
"""

from __future__ import annotations

from ._common import REACH_SWEEP, REACH_SWEEP_F64, F, I, _dyadic, _freqs, case

_SWEEPS = (
    ("reach-sweep", REACH_SWEEP, None, ("Reach", "LargePosition", "Float32PositionRounding")),
    ("reach-sweep-f64", REACH_SWEEP_F64, ("float64",), ("Reach", "LargePosition")),
)
_WHERE = {
    "reach-sweep": "0, 1 and 2**k - 1, 2**k, 2**k + 1 for k = 1 .. 24",
    "reach-sweep-f64": "2**k - 1, 2**k, 2**k + 1 for k = 25 .. 40, float64 only",
}
_D128 = _freqs(128)
_D128_BASE_5E5 = _freqs(128, 500000.0)

for _name, _positions, _dtypes, _flags in _SWEEPS:
    case(
        f"rope_cos_sin/half/{_name}",
        f"Reach sweep of cos/sin tables, head dim 128, base 10000, at positions {_WHERE[_name]}.",
        (*_flags, "HalfLayout"),
        dtypes=_dtypes,
        positions=I(_positions),
        inv_freq=F(_D128[0]),
        attention_factor=F(1.0),
        layout="half",
    )
    case(
        f"sinusoidal/vaswani/{_name}",
        f"Reach sweep of the paper's table, width 128, at positions {_WHERE[_name]}.",
        (*_flags, "VaswaniFrequencies", "InterleavedLayout"),
        dtypes=_dtypes,
        positions=I(_positions),
        dim=128,
        convention="vaswani",
        options={},
    )
    case(
        f"rope/half/{_name}",
        f"Reach sweep of the end-to-end rotation, head dim 128, base 500000 (Llama 3 without scaling), "
        f"at positions {_WHERE[_name]}.",
        (*_flags, "HalfLayout"),
        dtypes=_dtypes,
        x=F(_dyadic(90 + len(_positions), (len(_positions), 128))),
        positions=I(_positions),
        inv_freq=F(_D128_BASE_5E5[0]),
        attention_factor=F(1.0),
        layout="half",
    )
