"""The conformance suite as pytest items: ``pytest --pyargs conformance.pytest_suite``."""
