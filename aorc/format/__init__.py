"""The ORC format itself: no I/O and no asyncio.

Everything below this package works on bytes already in memory and is synchronous, so it can
be tested, fuzzed and reused by any driver:

- :mod:`aorc.format.types` -- the ORC type tree and its mapping to and from Arrow types.
- :mod:`aorc.format.tail` -- the file tail (PostScript, Footer, Metadata) and its checks.
- :mod:`aorc.format.stripe` -- a stripe's structure: stream map keyed by column and kind.
- :mod:`aorc.format.rowgroups` -- row-index positions and row-group byte ranges.
- :mod:`aorc.format.statistics` -- typed views of column statistics.
- :mod:`aorc.format.codec` -- compression framing, RLE/varint kernels (Cython), bloom filters.
- :mod:`aorc.format.columns` -- streams to Arrow arrays (decoders) and back
  (:mod:`aorc.format.columns.encode`).
- ``aorc.format._proto`` -- generated protobuf code for ``proto/orc_proto.proto``.

Layering (checked by import-linter in CI): this package imports nothing from
:mod:`aorc.io`, :mod:`aorc.read`, :mod:`aorc.write`, :mod:`aorc.filters`, :mod:`aorc.sink`,
:mod:`aorc.spark` or :mod:`aorc.cli`.
"""

__all__: list[str] = []
