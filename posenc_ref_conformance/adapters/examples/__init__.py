"""Example third-party adapters.

Run one with ``posenc-ref check posenc_ref_conformance.adapters.examples.NAME``.
"""
