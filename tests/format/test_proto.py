"""The checked-in protobuf module must match proto/orc_proto.proto and Apache ORC's numbering."""

from __future__ import annotations

import pathlib
import sys

import pytest

from aorc.format._proto import orc_proto_pb2 as pb

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_generated_code_is_fresh(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("grpc_tools")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_proto
    finally:
        sys.path.pop(0)
    for generated in gen_proto.generate(tmp_path):
        checked_in = ROOT / "aorc" / "format" / "_proto" / generated.name
        assert checked_in.read_text() == generated.read_text(), (
            f"{checked_in} is stale: run `python scripts/gen_proto.py`"
        )


# Field numbers of Apache ORC's orc_proto.proto that files in the wild depend on.
EXPECTED_FIELDS = {
    "PostScript": {"footerLength": 1, "compression": 2, "compressionBlockSize": 3, "version": 4,
                   "metadataLength": 5, "writerVersion": 6, "stripeStatisticsLength": 7,
                   "magic": 8000},
    "Footer": {"headerLength": 1, "contentLength": 2, "stripes": 3, "types": 4, "metadata": 5,
               "numberOfRows": 6, "statistics": 7, "rowIndexStride": 8, "writer": 9,
               "encryption": 10, "calendar": 11, "softwareVersion": 12},
    "StripeFooter": {"streams": 1, "columns": 2, "writerTimezone": 3, "encryption": 4},
    "ColumnEncoding": {"kind": 1, "dictionarySize": 2, "bloomEncoding": 3},
    "StringStatistics": {"minimum": 1, "maximum": 2, "sum": 3, "lowerBound": 4, "upperBound": 5},
    "TimestampStatistics": {"minimum": 1, "maximum": 2, "minimumUtc": 3, "maximumUtc": 4,
                            "minimumNanos": 5, "maximumNanos": 6},
    "ColumnStatistics": {"numberOfValues": 1, "intStatistics": 2, "doubleStatistics": 3,
                         "stringStatistics": 4, "bucketStatistics": 5, "decimalStatistics": 6,
                         "dateStatistics": 7, "binaryStatistics": 8, "timestampStatistics": 9,
                         "hasNull": 10, "bytesOnDisk": 11, "collectionStatistics": 12},
    "BloomFilter": {"numHashFunctions": 1, "bitset": 2, "utf8bitset": 3},
    "Type": {"kind": 1, "subtypes": 2, "fieldNames": 3, "maximumLength": 4, "precision": 5,
             "scale": 6, "attributes": 7},
    "StripeInformation": {"offset": 1, "indexLength": 2, "dataLength": 3, "footerLength": 4,
                          "numberOfRows": 5, "encryptStripeId": 6, "encryptedLocalKeys": 7},
}


@pytest.mark.parametrize("message", sorted(EXPECTED_FIELDS))
def test_field_numbers_match_apache_orc(message: str) -> None:
    descriptor = getattr(pb, message).DESCRIPTOR
    actual = {f.name: f.number for f in descriptor.fields}
    for name, number in EXPECTED_FIELDS[message].items():
        assert actual.get(name) == number, f"{message}.{name}"


def test_enum_values_match_apache_orc() -> None:
    assert pb.Stream.BLOOM_FILTER_UTF8 == 8
    assert pb.Stream.ENCRYPTED_DATA == 10
    assert pb.Type.TIMESTAMP_INSTANT == 18
    assert pb.CalendarKind.Value("PROLEPTIC_GREGORIAN") == 2
    assert pb.CompressionKind.Value("ZSTD") == 5
    assert pb.ColumnEncoding.DICTIONARY_V2 == 3
