"""SHA-256 of the shipped ``vectors/index.json``; written by ``posenc-ref golden generate``.

``index.json`` lists the SHA-256 of every golden file, so this one digest pins the whole
shipped set: :func:`posenc_ref_conformance.golden.verify` refuses vectors that differ.
"""

INDEX_SHA256 = "ed349a2b6405ddb83f806e527bc3ed23bfc63c208924fa54966e56f41188f804"
