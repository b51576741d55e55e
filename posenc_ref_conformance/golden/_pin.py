"""SHA-256 of the shipped ``vectors/index.json``; written by ``posenc-ref golden generate``.

``index.json`` lists the SHA-256 of every golden file, so this one digest pins the whole
shipped set: :func:`posenc_ref_conformance.golden.verify` refuses vectors that differ.
"""

INDEX_SHA256 = "835a71089e6c3d24536578d60f1430707226705a1942f1434579d4f4f4dcd294"
