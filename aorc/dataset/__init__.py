"""Many ORC files read and written as one table: datasets and Hive ACID tables."""

__all__: list[str] = []
