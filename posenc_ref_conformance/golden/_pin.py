"""SHA-256 of the shipped ``vectors/index.json``; written by ``posenc-ref golden generate``.

``index.json`` lists the SHA-256 of every golden file, so this one digest pins the whole
shipped set: :func:`posenc_ref_conformance.golden.verify` refuses vectors that differ.
"""

INDEX_SHA256 = "ead71323a6af180b549030da2ebf056e35886378b2253f030e2bd8949d98d43f"
