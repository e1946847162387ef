"""Type stub of the Avro columns kernel (``_avro.pyx``). The kernel releases the GIL."""

from typing import Any

KIND_NULL: int
KIND_BOOLEAN: int
KIND_INT: int
KIND_LONG: int
KIND_FLOAT: int
KIND_DOUBLE: int
KIND_STRING: int
KIND_BYTES: int
KIND_FIXED: int
KIND_ENUM: int
KIND_DATE: int
KIND_TIMESTAMP_MILLIS: int
KIND_TIMESTAMP_MICROS: int

def decode_columns(values: list[Any], header: bytes, kinds: list[int],
                   null_indexes: list[int], sizes: list[int]
                   ) -> tuple[int, list[tuple[Any, Any, Any, Any, bool]] | None]:
    """The columns of ``values``, or the index of the first one to decode the slow way
    (see ``_avro.pyx``)."""
