"""Example third-party adapters (run them with ``posenc-ref check conformance.adapters.examples.NAME``)."""
