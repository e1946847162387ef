"""Many ORC files as one dataset: listing, partitions, schema evolution, plans."""

__all__: list[str] = []
