"""The conformance suite as pytest items: ``pytest --pyargs posenc_ref_conformance.pytest_suite``."""
