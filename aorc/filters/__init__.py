"""Row filters: pyarrow-style filter lists (DNF) and pyarrow.compute expressions; evaluated on
rows, used to prune stripes and row groups on statistics and bloom filters. Synchronous, no I/O."""

__all__: list[str] = []
