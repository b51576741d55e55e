"""The side-by-side harness ``scripts/peer_bench.py``: its steps, at tiny sizes, without timing claims.

What is checked: every peer is looked up in its installed library (none is defined in
the script); a peer or backend that does not import is reported as skipped with the
reason; the float64 references behind the error column agree with the mpmath oracle;
the error column and the ratio are computed from the outputs and times measured; the
rows of each backend run and print; the command line runs a worker process per
backend.  No assertion depends on how fast anything is (speed is asv's).
"""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from posenc_ref_conformance.oracle import rope as oracle_rope
from posenc_ref_conformance.oracle import sinusoidal as oracle_sinusoidal
from tests.helpers import load_script

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: The libraries whose functions the harness compares with (distribution import names).
PEER_LIBRARIES = {"transformers", "torchtune", "rotary_embedding_torch", "mlx"}


pb = load_script("peer_bench")


@pytest.fixture
def one_torch_thread_restored():
    """The torch worker sets one thread; give the test process its own setting back."""
    torch = pytest.importorskip("torch", reason="torch is not installed", exc_type=ImportError)
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_every_peer_is_an_installed_library_function():
    for name, (module, attr) in pb.PEERS.items():
        assert module.split(".")[0] in PEER_LIBRARIES, name
        assert attr.isidentifier(), name


def test_a_missing_peer_is_skipped_with_the_reason(monkeypatch):
    monkeypatch.setitem(pb.PEERS, "absent", ("no_such_library.sub", "thing"))
    reason = pb.load_peer("absent")
    assert reason.startswith("skipped: no_such_library not importable (ModuleNotFoundError")
    assert pb.bind("absent", lambda peer: pytest.fail("make() called for an absent peer")) == reason


def test_cos_sin_reference_matches_the_oracle():
    positions, frequencies = [0, 1, 7, 63], 4
    cos, sin = pb.cos_sin_reference(64, frequencies)
    inv_freq, _ = oracle_rope.rope_frequencies(2 * frequencies)
    want_cos, want_sin = oracle_rope.rope_cos_sin(positions, inv_freq, layout="half")
    np.testing.assert_allclose(cos[positions], np.array(want_cos, dtype=np.float64), rtol=0, atol=1e-13)
    np.testing.assert_allclose(sin[positions], np.array(want_sin, dtype=np.float64), rtol=0, atol=1e-13)


def test_vaswani_reference_matches_the_oracle():
    positions = [0, 3, 15]
    want = np.array(oracle_sinusoidal.vaswani(positions, 8), dtype=np.float64)
    np.testing.assert_allclose(pb.vaswani_reference(16, 8)[positions], want, rtol=0, atol=1e-13)


def test_max_error_is_the_largest_absolute_difference():
    ref = (np.zeros((2, 3)), np.ones(4))
    out = (np.array([[0.0, -0.25, 0.0], [0.0, 0.0, 0.125]], dtype=np.float32), np.ones(4, dtype=np.float32))
    assert pb.max_error(out, ref) == 0.25
    assert pb.max_error(np.full(3, 1.5), (np.ones(3),)) == 0.5
    with pytest.raises(ValueError, match=r"^expected 2 outputs; got 1"):
        pb.max_error(np.ones(3), ref)


def _check_rows(rows, backend):
    assert rows, backend
    for row in rows:
        assert row["backend"] == backend
        assert row["ours_s"] > 0 and math.isfinite(row["ours_s"])
        if row["skipped"]:
            assert row["skipped"].startswith("skipped: ") and row["peer_s"] is None and row["ratio"] is None
        else:
            assert row["ratio"] == row["ours_s"] / row["peer_s"]


@pytest.mark.parametrize("backend", ["numpy", "torch", "mlx"])
def test_every_row_runs_at_tiny_sizes(backend, request):
    pytest.importorskip(
        {"numpy": "numpy", "torch": "torch", "mlx": "mlx.core"}[backend],
        reason=f"{backend} is not installed",
        exc_type=ImportError,
    )
    if backend == "torch":
        request.getfixturevalue("one_torch_thread_restored")
    result = pb.worker(backend, pb.QUICK, samples=1, clock="cpu")
    assert result["skipped"] == ""
    _check_rows(result["rows"], backend)
    works = {row["work"] for row in result["rows"]}
    assert any(w.startswith("apply_rope") for w in works)
    # posenc-ref's float32 tables are within about an ulp of the float64 reference
    for row in result["rows"]:
        if row["ours_error"] is not None:
            assert row["ours_error"] < 2.0**-22, row["work"]
            assert row["peer_error"] is not None


def test_torch_rows_name_the_peers_of_the_issue(one_torch_thread_restored):
    pytest.importorskip("torch", reason="torch is not installed", exc_type=ImportError)
    peers = {peer for case in pb.cases_for("torch", pb.QUICK) for peer in case.peers}
    for name in [
        "HF llama apply_rotary_pos_emb",
        "torchtune RotaryPositionalEmbeddings",
        "rotary-embedding-torch apply_rotary_emb",
        "HF T5Attention._relative_position_bucket",
        "HF M2M100 get_embedding",
        "HF Whisper sinusoids",
        "HF BLOOM build_alibi_tensor",
        "HF MPT build_mpt_alibi_tensor",
        pb.NAIVE,
    ]:
        assert name in peers


def test_a_backend_that_does_not_import_is_one_skipped_line(monkeypatch):
    def no_backend(name, sizes):
        msg = "No module named 'mlx'"
        raise ModuleNotFoundError(msg)

    monkeypatch.setattr(pb, "cases_for", no_backend)
    result = pb.worker("mlx", pb.QUICK, samples=1, clock="cpu")
    assert result == {"backend": "mlx", "skipped": "mlx not importable: No module named 'mlx'", "rows": []}
    assert "| (every row) | mlx | | | mlx not importable: No module named 'mlx' |" in pb.table([result])


def test_table_shows_times_ratio_errors_and_skip_reasons():
    rows = [
        {
            "work": "w",
            "backend": "numpy",
            "ours_s": 0.25,
            "peer": "p",
            "peer_s": 0.5,
            "ratio": 0.5,
            "ours_error": 3e-8,
            "peer_error": 6.2e-2,
            "skipped": "",
        },
        {
            "work": "w",
            "backend": "numpy",
            "ours_s": 4e-5,
            "peer": "q",
            "peer_s": None,
            "ratio": None,
            "ours_error": None,
            "peer_error": None,
            "skipped": "skipped: q not importable (ModuleNotFoundError: x)",
        },
    ]
    lines = pb.table([{"backend": "numpy", "skipped": "", "rows": rows}]).splitlines()
    assert lines[2] == "| w | numpy | 250.0 ms | p | 500.0 ms | 0.50 | 3.0e-08 | 6.2e-02 |"
    assert (
        lines[3] == "| w | numpy | 40 us | q | skipped: q not importable (ModuleNotFoundError: x) |  |  |  |"
    )


def test_command_line_runs_one_worker_per_backend(tmp_path):
    out = tmp_path / "rows.json"
    cmd = [sys.executable, str(ROOT / "scripts" / "peer_bench.py"), "--quick", "--samples", "1"]
    done = subprocess.run(
        [*cmd, "--backends", "numpy", "--json", str(out)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first == "command: python scripts/peer_bench.py --backends numpy --samples 1 --clock cpu --quick"
    assert "| work | backend | posenc-ref | peer |" in done.stdout
    results = json.loads(out.read_text())
    assert [r["backend"] for r in results] == ["numpy"]
    _check_rows(results[0]["rows"], "numpy")
    bad = subprocess.run([*cmd, "--backends", "numpy,cuda"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--backends must be among numpy,torch,mlx; got cuda" in bad.stderr
