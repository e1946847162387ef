"""Reading: the read plan (which byte ranges a read needs, and decoding the bytes pushed back)
and the async driver :class:`aorc.read.reader.OrcReader` that fetches those ranges from a
store."""

__all__: list[str] = []
