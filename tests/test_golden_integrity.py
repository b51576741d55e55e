"""``check`` refuses golden vectors that were edited, truncated, thinned or duplicated.

Each test copies the shipped vectors, damages the copy the way a hand edit
would (sometimes recomputing the checksums, as a careful editor would), and
shows that :func:`posenc_ref_conformance.golden.verify` names the file and the
problem, and that ``posenc-ref check`` exits 4 (golden set damaged) without running anything.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import shutil
from typing import Any

import pytest

from posenc_ref_conformance import golden
from posenc_ref_conformance.cli import main
from posenc_ref_conformance.golden import GoldenError, _format
from posenc_ref_conformance.runner import run


@pytest.fixture
def vectors(tmp_path: pathlib.Path) -> pathlib.Path:
    target = tmp_path / "vectors"
    shutil.copytree(golden.VECTORS_DIR, target)
    return target


def _edit(path: pathlib.Path, change: Any, *, checksum: bool = True) -> None:
    """Apply ``change`` to the parsed file and write it back canonically (checksum recomputed or not)."""
    doc = json.loads(path.read_text())
    change(doc)
    data = _format.dumps(doc)
    if not checksum:  # keep the old recorded checksum: what a hand edit of the JSON leaves behind
        fresh = json.loads(data)["checksum"]["value"]
        data = data.replace(fresh.encode(), doc["checksum"]["value"].encode())
    path.write_bytes(data)


def _reindex(directory: pathlib.Path, **overrides: Any) -> None:
    """Recompute index.json's hashes (and counts unless overridden), as a careful editor would."""
    index = json.loads((directory / "index.json").read_text())
    index["casesPerScheme"] = {}
    for entry in index["files"]:
        data = (directory / entry["file"]).read_bytes()
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["numberOfCases"] = overrides.get("numberOfCases", len(json.loads(data)["cases"]))
        scheme = index["casesPerScheme"].get(entry["scheme"], 0)
        index["casesPerScheme"][entry["scheme"]] = scheme + entry["numberOfCases"]
    index["totalCases"] = sum(e["numberOfCases"] for e in index["files"])
    (directory / "index.json").write_bytes(_format.dumps(index))


def _loosen(doc: dict[str, Any]) -> None:
    doc["tolerances"]["float64"]["atol"] = 1.0


def _first_value(doc: dict[str, Any]) -> None:
    table = doc["cases"][0]["expected"]["table"]
    table["hex"][0], table["decimal"][0] = float.hex(0.5), 0.5


class TestVerify:
    def test_the_shipped_set_verifies(self) -> None:
        docs = golden.verify()
        assert len(docs) == len(golden.load_index()["files"]) and sum(len(d["cases"]) for d in docs) > 200

    def test_a_copy_verifies(self, vectors: pathlib.Path) -> None:
        assert len(golden.verify(vectors)) == len(golden.load_index()["files"])

    @pytest.mark.parametrize(
        ("damage", "message"),
        [
            (lambda d: _edit(d / "sinusoidal.json", _first_value, checksum=False), "its SHA-256 differs"),
            (lambda d: _edit(d / "sinusoidal.json", _loosen, checksum=False), "its SHA-256 differs"),
            (
                lambda d: (_edit(d / "sinusoidal.json", _loosen, checksum=False), _reindex(d)),
                "own checksum is wrong",
            ),
            (lambda d: _edit(d / "sinusoidal.json", _loosen), "its SHA-256 differs"),
            (
                lambda d: (d / "rope.json").write_bytes((d / "rope.json").read_bytes()[:5000]),
                "not a valid golden JSON file",
            ),
            (lambda d: (d / "t5_bucket.json").unlink(), "cannot be read"),
            (lambda d: (d / "index.json").write_text("{"), "index.json: not a valid golden JSON file"),
            (lambda d: shutil.copy(d / "rope.json", d / "rope_copy.json"), "which index.json does not list"),
        ],
        ids=[
            "value",
            "tolerance",
            "tolerance+index",
            "tolerance+checksum",
            "truncated",
            "deleted-file",
            "index",
            "extra",
        ],
    )
    def test_damage_is_named(self, vectors: pathlib.Path, damage: Any, message: str) -> None:
        damage(vectors)
        with pytest.raises(GoldenError, match=message):
            golden.verify(vectors)

    def test_a_deleted_case(self, vectors: pathlib.Path) -> None:
        _edit(vectors / "alibi_slopes.json", lambda d: d["cases"].pop(3))  # numberOfCases left at 19
        _reindex(vectors)
        with pytest.raises(GoldenError, match=r"alibi_slopes\.json: function or number of cases differs"):
            golden.verify(vectors)

    def test_a_deleted_case_with_every_count_fixed(self, vectors: pathlib.Path) -> None:
        def drop(doc: dict[str, Any]) -> None:
            doc["cases"].pop(3)
            doc["numberOfCases"] -= 1

        _edit(vectors / "alibi_slopes.json", drop)
        _reindex(vectors)
        golden.verify(vectors)  # a consistent smaller set is valid data ...
        pinned = vectors.parent / "pinned"
        shutil.move(str(vectors), pinned)
        with pytest.raises(GoldenError, match="differs from the index this version of posenc-ref shipped"):
            _verify_as_shipped(pinned)  # ... but not as the shipped one

    def test_a_duplicate_id(self, vectors: pathlib.Path) -> None:
        def duplicate(doc: dict[str, Any]) -> None:
            doc["cases"][1]["id"] = doc["cases"][0]["id"]

        _edit(vectors / "learned.json", duplicate)
        _reindex(vectors)
        with pytest.raises(GoldenError, match="is duplicated"):
            golden.verify(vectors)


def _verify_as_shipped(directory: pathlib.Path) -> None:
    original = golden.VECTORS_DIR
    golden.VECTORS_DIR = directory
    try:
        golden.verify(directory)
    finally:
        golden.VECTORS_DIR = original


def test_check_refuses_tampered_vectors(
    vectors: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI (shipped vectors edited in place): exit 4, one line naming the file, nothing run."""
    _edit(vectors / "sinusoidal.json", _loosen)
    _reindex(vectors)
    monkeypatch.setattr(golden, "VECTORS_DIR", vectors)
    assert main(["check", "posenc_ref"]) == 4  # GOLDEN SET DAMAGED
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "golden vectors failed verification" in captured.err and "index.json" in captured.err
    with pytest.raises(GoldenError):
        run("posenc_ref", golden_dir=vectors)
