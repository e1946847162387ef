"""Writing: stripe and file assembly (synchronous, sans-I/O) and the async driver
:class:`aorc.write.writer.OrcWriter` that streams the encoded bytes to a store's output."""

__all__: list[str] = []
