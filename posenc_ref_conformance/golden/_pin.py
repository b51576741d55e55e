"""SHA-256 of the shipped ``vectors/index.json``; written by ``posenc-ref golden generate``.

``index.json`` lists the SHA-256 of every golden file, so this one digest pins the whole
shipped set: :func:`posenc_ref_conformance.golden.verify` refuses vectors that differ.
"""

INDEX_SHA256 = "3b192b89f99cd80961f4776380bfde277afe98cd8699bab4032641c9063c2c6a"
