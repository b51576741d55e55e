"""SHA-256 of the shipped ``vectors/index.json``; written by ``posenc-ref golden generate``.

``index.json`` lists the SHA-256 of every golden file, so this one digest pins the whole
shipped set: :func:`posenc_ref_conformance.golden.verify` refuses vectors that differ.
"""

INDEX_SHA256 = "5d93d91c299546197c33cd3152cc9df79203640efe7fe7fbc78931accc858fa7"
