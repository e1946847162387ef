"""The sans-I/O parts of Hive ACID reads: folder names, write-id lists, directory selection
(as Hive 3's AcidUtils.getAcidState chooses), bucket properties, flush lengths."""

from __future__ import annotations

import struct

import pytest

from aorc.dataset.acid.layout import (
    AcidDir,
    WriteIdList,
    bucket_key,
    original_bucket,
    parse_bucket_file,
    parse_dir,
    select,
)
from aorc.dataset.acid.listing import flushed_length
from aorc.errors import CorruptFileError, SchemaError


def d(name: str) -> AcidDir:
    parsed = parse_dir(name)
    assert parsed is not None
    return parsed


def test_folder_and_file_names() -> None:
    assert d("base_0000005") == AcidDir("base", 5, 5, -1, 0, "base_0000005")
    assert d("base_0000005_v0000123").visibility_txn == 123
    assert d("delta_0000001_0000003") == AcidDir("delta", 1, 3, -1, 0, "delta_0000001_0000003")
    assert d("delta_0000007_0000007_0002").statement_id == 2
    assert d("delete_delta_0000007_0000007_0002_v0000044").kind == "delete_delta"
    assert parse_dir("deltas_1_2") is None and parse_dir("base_x") is None
    assert parse_bucket_file("bucket_00003") == 3
    assert parse_bucket_file("bucket_00003_2") == 3
    assert parse_bucket_file("bucket_00003_flush_length") is None
    assert original_bucket("000012_0") == 12
    assert original_bucket("000012_0_copy_3") == 12
    assert original_bucket("part-0001.orc") is None


def test_write_id_lists() -> None:
    ids = WriteIdList.parse("default.t:10:4:4,7:5")
    assert ids.table == "default.t" and ids.high_watermark == 10
    assert [ids.is_valid(i) for i in (3, 4, 5, 6, 7, 10, 11)] == [
        True, False, False, True, False, True, False]
    assert ids.range_validity(4, 5) == "none"
    assert ids.range_validity(3, 5) == "some"
    assert ids.range_validity(8, 10) == "all"
    assert ids.range_validity(11, 12) == "none"
    assert not ids.is_valid_base(4) and ids.is_valid_base(3)
    hive2 = WriteIdList.parse("10:9223372036854775807::")
    assert hive2.table is None and hive2.is_valid(10) and hive2.is_valid_base(10)
    assert WriteIdList.parse("db.t:5:9223372036854775807") == WriteIdList(
        5, frozenset(), frozenset(), (1 << 63) - 1, "db.t")
    for bad in ("", "db.t", "db.t:x:1::", "1:2:3:4:5"):
        with pytest.raises(SchemaError, match="valid_write_ids"):
            WriteIdList.parse(bad)


def names(folders: list[AcidDir]) -> list[str]:
    return [f.name for f in folders]


def test_selection_prefers_newest_valid_base_and_compacted_deltas() -> None:
    folders = [d(n) for n in (
        "base_0000005", "base_0000010", "delta_0000001_0000001_0000",
        "delta_0000006_0000010", "delta_0000006_0000006_0000", "delta_0000011_0000015",
        "delta_0000011_0000011_0000", "delta_0000012_0000012_0000",
        "delete_delta_0000011_0000015", "delta_0000016_0000016_0000",
        "delta_0000016_0000016_0001", "delete_delta_0000016_0000016_0001")]
    snap = select(folders, None)
    assert snap.base == d("base_0000010") and not snap.originals
    assert names(snap.deltas) == ["delta_0000011_0000015", "delta_0000016_0000016_0000",
                                  "delta_0000016_0000016_0001"]
    assert names(snap.delete_deltas) == ["delete_delta_0000011_0000015",
                                         "delete_delta_0000016_0000016_0001"]
    assert set(names(snap.obsolete)) == {
        "base_0000005", "delta_0000001_0000001_0000", "delta_0000006_0000010",
        "delta_0000006_0000006_0000", "delta_0000011_0000011_0000",
        "delta_0000012_0000012_0000"}
    # write 7 still open: base_10 cannot be read, base_5 can; the deltas above 5 with a
    # visible write id are read
    snap = select(folders, WriteIdList.parse("db.t:16:7:7:"))
    assert snap.base == d("base_0000005")
    assert names(snap.deltas)[:1] == ["delta_0000006_0000010"]


def test_selection_without_a_valid_base() -> None:
    with pytest.raises(SchemaError, match="not enough history"):
        select([d("base_0000009")], WriteIdList.parse("db.t:5:9223372036854775807::"))
    snap = select([d("delta_0000001_0000001")], None)
    assert snap.originals and snap.base is None


def test_bucket_keys() -> None:
    # Hive 3's BucketCodec V1: version 1 in bits 29-31, bucket in 16-27, statement in 0-11
    assert bucket_key((1 << 29) | (3 << 16) | 2) == 3 * 4096 + 2
    assert bucket_key(536870912) == 0  # bucket 0, statement 0
    assert bucket_key(3) == 3 * 4096  # Hive 2: the bucket id itself
    assert bucket_key((1 << 29) | (3 << 16)) == bucket_key(3)


def test_flush_lengths() -> None:
    data = struct.pack(">qq", 100, 853)
    assert flushed_length(data, "x") == 853
    assert flushed_length(data + b"\x00\x01", "x") == 853  # a partial last record
    with pytest.raises(CorruptFileError, match="no length"):
        flushed_length(b"\x00" * 7, "x")
    with pytest.raises(CorruptFileError, match="negative"):
        flushed_length(struct.pack(">q", -1), "x")
