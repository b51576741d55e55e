"""asv benchmarks for posenc-ref (see ../README.md)."""
