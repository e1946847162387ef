"""Column statistics views: against values computed from the data (read by pyarrow.orc),
against pyorc's statistics, and on hand-built protobuf messages."""

from __future__ import annotations

import datetime
import decimal
import json
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pytest
from helpers.corpus import CORPUS_ABSENT, CorpusFile, corpus_params, corpus_root, load_manifest
from hypothesis import given, settings
from hypothesis import strategies as st

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.statistics import ColumnStatistics, column_statistics_from_proto
from aorc.format.tail import FileTail, parse_tail
from aorc.format.types import OrcType, TypeKind, parse_type_string

pyorc = pytest.importorskip("pyorc")

K = TypeKind
_EPOCH = datetime.datetime(1970, 1, 1)
_MS = 1_000_000


def _entry(name: str) -> CorpusFile:
    if corpus_root() is None:
        pytest.skip(CORPUS_ABSENT)
    return next(e for e in load_manifest() if e.name == name)


def _tail(entry: CorpusFile) -> FileTail:
    data = entry.path.read_bytes()
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    return tail


# --------------------------------------------------------------------------- from the data

def column_arrays(t: OrcType, arr: pa.Array, out: dict[int, pa.Array]) -> None:
    """Each column's values as ORC stores them: children only under non-null parents."""
    out[t.column_id] = arr
    present = arr.filter(pc.is_valid(arr))
    if t.kind == K.STRUCT:
        for i, child in enumerate(t.children):
            column_arrays(child, present.field(i), out)
    elif t.kind == K.LIST:
        column_arrays(t.children[0], present.flatten(), out)
    elif t.kind == K.MAP:
        column_arrays(t.children[0], present.keys, out)
        column_arrays(t.children[1], present.items, out)
    elif t.kind == K.UNION:  # pyarrow's null unions are not ORC's: not compared
        del out[t.column_id]


def expected_stats(t: OrcType, arr: pa.Array) -> dict[str, Any]:
    """Statistics computed independently from the column's values."""
    valid = arr.filter(pc.is_valid(arr))
    out: dict[str, Any] = {"num_values": len(valid), "has_null": arr.null_count > 0}
    if t.kind in (K.STRUCT, K.UNION) or not len(valid):
        return out
    if t.kind == K.BOOLEAN:
        true_count = pc.sum(valid.cast(pa.int64())).as_py()
        return out | {"true_count": true_count, "false_count": len(valid) - true_count}
    if t.kind in (K.LIST, K.MAP):
        offsets = valid.offsets.to_numpy()
        lengths = pa.array(offsets[1:] - offsets[:-1])
        return out | {"min_children": pc.min(lengths).as_py(),
                      "max_children": pc.max(lengths).as_py(),
                      "total_children": pc.sum(lengths).as_py()}
    if t.kind == K.BINARY:
        return out | {"sum": sum(len(v) for v in valid.to_pylist())}
    if t.kind in (K.STRING, K.CHAR, K.VARCHAR):
        values = [v.encode() for v in valid.to_pylist()]
        return out | {"minimum": min(values).decode(), "maximum": max(values).decode(),
                      "sum": sum(map(len, values))}
    if t.kind in (K.TIMESTAMP, K.TIMESTAMP_INSTANT):
        nanos = valid.cast(pa.int64())
        return out | {"minimum": pc.min(nanos).as_py(), "maximum": pc.max(nanos).as_py()}
    values = valid.to_pylist()
    out |= {"minimum": min(values), "maximum": max(values)}
    if t.kind in (K.BYTE, K.SHORT, K.INT, K.LONG):
        total = sum(values)
        out["sum"] = total if -2**63 <= total < 2**63 else None
    elif t.kind in (K.FLOAT, K.DOUBLE):
        out["sum"] = pytest.approx(math.fsum(values), rel=1e-9)
    elif t.kind == K.DECIMAL:
        with decimal.localcontext() as context:
            context.prec = 100  # exact
            out["sum"] = sum(values, Decimal(0))
    return out


_STATS_FIELD = {
    K.BOOLEAN: "bucketStatistics", K.BYTE: "intStatistics", K.SHORT: "intStatistics",
    K.INT: "intStatistics", K.LONG: "intStatistics", K.FLOAT: "doubleStatistics",
    K.DOUBLE: "doubleStatistics", K.STRING: "stringStatistics", K.CHAR: "stringStatistics",
    K.VARCHAR: "stringStatistics", K.BINARY: "binaryStatistics",
    K.DECIMAL: "decimalStatistics", K.DATE: "dateStatistics",
    K.TIMESTAMP: "timestampStatistics", K.TIMESTAMP_INSTANT: "timestampStatistics",
    K.LIST: "collectionStatistics", K.MAP: "collectionStatistics",
}

# Statistics stored wrongly by their writers (our views report what is stored, as pyorc does):
_STORED_WRONG = {
    # ORC Java 1.8.0-SNAPSHOT added a repeated double once per batch, not once per value
    ("orc_split_elim_new.orc", 3, "sum"),
}


def assert_stats_match(ours: ColumnStatistics, expected: dict[str, Any], t: OrcType,
                       raw: pb.ColumnStatistics, where: str) -> None:
    for key, value in expected.items():
        actual = getattr(ours, key)
        if (where.split()[0], t.column_id, key) in _STORED_WRONG:
            continue
        if key == "has_null" and not raw.HasField("hasNull"):
            assert actual is True  # unrecorded: Java and C++ assume nulls
            continue
        if key not in ("num_values", "has_null") and not raw.HasField(_STATS_FIELD[t.kind]):
            assert actual is None  # the writer did not record this kind of statistics
            continue
        if t.kind in (K.TIMESTAMP, K.TIMESTAMP_INSTANT) and key in ("minimum", "maximum"):
            actual = getattr(ours, f"{key}_nanos")
            # old writers truncate to milliseconds: the statistics bound the values
            if key == "minimum":
                assert actual <= value < actual + _MS, (where, key, actual, value)
            else:
                assert actual - _MS < value <= actual, (where, key, actual, value)
            continue
        if key == "sum" and t.kind == K.DECIMAL and actual is None:
            continue  # writers drop decimal sums that overflow 38 digits
        if key in ("minimum", "maximum") and t.kind == K.DECIMAL and actual is None:
            assert where.startswith("decimal64_v2.orc")  # ORC-517: see its own test
            continue
        assert actual == value, (where, t.column_id, key, actual, value)


def _compare_file(entry: CorpusFile, stripes: bool) -> int:
    tail = _tail(entry)
    orc = po.ORCFile(str(entry.path))
    compared = 0
    scopes: list[tuple[str, list[ColumnStatistics], Any, pa.Table]] = [
        ("file", tail.column_statistics, tail.footer.statistics, orc.read())]
    if stripes:
        assert tail.metadata is not None
        with open(entry.path, "rb") as fh:
            zones = [pyorc.Reader(fh).read_stripe(i).writer_timezone
                     for i in range(len(tail.stripes))]
        scopes += [(f"stripe {i}", tail.stripe_column_statistics(i, zones[i] or None),
                    tail.metadata.stripeStats[i].colStats,
                    pa.Table.from_batches([orc.read_stripe(i)]))
                   for i in range(len(tail.stripes))]
    for where, stats, raw, table in scopes:
        arrays: dict[int, pa.Array] = {}
        root = pa.StructArray.from_arrays(
            [c.combine_chunks() for c in table.columns], names=table.column_names)
        column_arrays(tail.schema, root, arrays)
        for t in tail.schema.walk():
            if t.column_id not in arrays:
                continue
            ours = stats[t.column_id]
            if t.kind in (K.TIMESTAMP, K.TIMESTAMP_INSTANT) and not ours.timestamp_utc:
                continue  # writer-local values without a zone: see test_local_timestamps
            assert_stats_match(ours, expected_stats(t, arrays[t.column_id]), t,
                               raw[t.column_id], f"{entry.name} {where}")
            compared += 1
    return compared


_DATA_FILES = [
    "TestOrcFile.test1.orc",  # all primitive types, nested struct/list/map, booleans, binary
    "TestOrcFile.testStringAndBinaryStatistics.orc",  # nulls in string and binary
    "TestOrcFile.testStripeLevelStats.orc",  # per-stripe statistics
    "orc_index_int_string.orc",  # int and varchar(4)
    "over1k_bloom.orc",  # every primitive type with nulls, decimals, local timestamps
    "orc_split_elim_new.orc",  # UTC timestamp statistics, decimal(16,6)
    "orc_split_elim_cpp.orc",  # C++ writer
    "TestOrcFile.testDate1900.orc",  # dates, pre-1970 local timestamps converted by zone
    "TestOrcFile.testUnionAndTimestamp.orc",  # decimal(38,18), timestamps, union
    "decimal64_v2.orc",  # UNSTABLE-PRE-2.0 decimal64
    "TestOrcFile.testSeek.orc",  # random values in all types, 7 stripes
]


@pytest.mark.parametrize("name", _DATA_FILES)
def test_statistics_match_the_data(name: str) -> None:
    assert _compare_file(_entry(name), stripes=True) > 0


def test_local_timestamps_are_converted_with_the_stripe_zone() -> None:
    """Before ORC-135 only writer-local values exist: file statistics keep them as they are,
    stripe statistics convert them with the stripe footer's zone (US/Pacific here)."""
    tail = _tail(_entry("TestOrcFile.testDate1900.orc"))
    assert not tail.column_statistics[1].timestamp_utc
    for i in range(len(tail.stripes)):
        local = tail.stripe_column_statistics(i)[1]
        wall = tail.stripe_column_statistics(i, "US/Pacific")[1]
        assert not local.timestamp_utc and wall.timestamp_utc
        # Pacific Standard Time, or War Time (UTC-7) in 1942-1945
        assert wall.minimum_nanos - local.minimum_nanos in (-8 * 3600 * 10**9, -7 * 3600 * 10**9)
        assert wall.minimum - local.minimum in (datetime.timedelta(hours=-8),
                                                datetime.timedelta(hours=-7))
    assert _compare_file(_entry("TestOrcFile.testDate1900.orc"), stripes=True) > 0


def test_decimal64_statistics_of_orc_135_are_dropped() -> None:
    """ORC 1.5.0-1.5.5 (Java writer version ORC-135) wrote wrong decimal64 minimum/maximum
    (ORC-517): decimal64_v2.orc says 0 where the data's minimum is 2."""
    tail = _tail(_entry("decimal64_v2.orc"))
    assert (tail.writer, tail.writer_version) == (0, 6)
    raw = tail.footer.statistics[2].decimalStatistics
    assert Decimal(raw.minimum) == 0
    b = tail.column_statistics[2]
    assert (b.minimum, b.maximum, b.sum) == (None, None, Decimal(275))
    cpp = _tail(_entry("decimal64_v2_cplusplus.orc"))  # C++ writer version 6: fine
    assert cpp.column_statistics[2].minimum == Decimal("164.16")


# --------------------------------------------------------------------------- pyorc

def _pyorc_value(value: Any) -> Any:
    if isinstance(value, datetime.datetime):  # UTC-aware: to nanoseconds (microsecond grain)
        return (value.replace(tzinfo=None) - _EPOCH) // datetime.timedelta(microseconds=1)
    return value


_NOT_PYORC = ("zero.orc", "version1999.orc")


@pytest.mark.parametrize("entry", corpus_params(
    lambda e: e.pyorc_ok and e.name.rpartition("/")[2] not in _NOT_PYORC))
def test_file_statistics_match_pyorc(entry: CorpusFile) -> None:
    tail = _tail(entry)
    with open(entry.path, "rb") as fh:
        reader = pyorc.Reader(fh)
        for t, ours in zip(tail.schema.walk(), tail.column_statistics, strict=False):
            if tail.writer_version == 0 and t.kind in (K.BINARY, K.DECIMAL, K.TIMESTAMP):
                # pyorc 0.12 crashes (segmentation fault) on some of these statistics, which
                # ORC C++ ignores for writer version 0 (orc-file-11-format.orc, orc_split_elim.orc)
                assert ours.minimum is None and ours.sum is None
                continue
            theirs = reader[t.column_id].statistics
            assert ours.num_values == theirs["number_of_values"]
            assert ours.has_null == theirs["has_null"]
            assert ours.true_count == theirs.get("true_count")
            assert ours.false_count == theirs.get("false_count")
            total = "total_length" if t.kind in (K.STRING, K.VARCHAR, K.CHAR, K.BINARY) else "sum"
            if t.kind != K.DECIMAL:  # pyorc rounds decimal sums to 38 digits
                assert ours.sum == theirs.get(total), (t.column_id, ours.sum, theirs)
            for key in ("minimum", "maximum"):
                mine = getattr(ours, key)
                if t.kind == K.DECIMAL and mine is None and tail.writer_version == 6:
                    continue  # dropped as ORC Java does (ORC-517); ORC C++ keeps them
                if t.kind in (K.TIMESTAMP, K.TIMESTAMP_INSTANT):
                    if not ours.timestamp_utc:  # ORC C++ has no minimum without a zone
                        assert theirs.get(key) is None
                        continue
                    mine = getattr(ours, f"{key}_nanos")
                    mine = mine // 1000 if mine is not None else None
                assert mine == _pyorc_value(theirs.get(key)), (t.column_id, key, theirs)


def test_original_writer_string_statistics_are_dropped() -> None:
    """Files from writer version 0 (before HIVE-8732): only int/double statistics count."""
    tail = _tail(_entry("orc-file-11-format.orc"))
    assert tail.writer_version == 0
    raw = tail.footer.statistics
    by_kind = {t.kind: (t.column_id, s) for t, s in zip(tail.schema.walk(),
                                                         tail.column_statistics, strict=False)}
    cid, string1 = by_kind[K.STRING]
    assert raw[cid].HasField("stringStatistics") and string1.minimum is None
    assert string1.num_values == raw[cid].numberOfValues
    cid, int1 = by_kind[K.INT]
    assert int1.minimum == raw[cid].intStatistics.minimum


# --------------------------------------------------------------------------- built messages

def _stats(orc_type: str | None = None, *, writer_version: int | None = None,
           writer_timezone: str | None = None, **fields: Any) -> ColumnStatistics:
    p = pb.ColumnStatistics(**fields)
    t = parse_type_string(orc_type) if orc_type else None
    return column_statistics_from_proto(p, t, writer_version=writer_version,
                                        writer_timezone=writer_timezone)


def test_defaults_follow_java() -> None:
    s = _stats("int")
    assert (s.num_values, s.has_null, s.bytes_on_disk, s.minimum, s.sum) == (0, True, None,
                                                                             None, None)
    s = _stats("int", numberOfValues=3, hasNull=False, bytesOnDisk=9,
               intStatistics=pb.IntegerStatistics(minimum=-2, maximum=7))
    assert (s.num_values, s.has_null, s.bytes_on_disk, s.minimum, s.maximum, s.sum) == (
        3, False, 9, -2, 7, None)


def test_timestamp_nanos_are_stored_plus_one() -> None:
    ts = pb.TimestampStatistics(minimumUtc=1000, maximumUtc=2000, minimumNanos=5,
                                maximumNanos=1)
    s = _stats("timestamp", timestampStatistics=ts)
    assert (s.minimum_nanos, s.maximum_nanos, s.timestamp_utc) == (1000 * _MS + 4, 2000 * _MS,
                                                                    True)
    assert s.minimum == datetime.datetime(1970, 1, 1, 0, 0, 1)  # naive: wall clock
    assert s.maximum == datetime.datetime(1970, 1, 1, 0, 0, 2)
    bare = _stats("timestamp", timestampStatistics=pb.TimestampStatistics(minimumUtc=-1,
                                                                          maximumUtc=-1))
    assert (bare.minimum_nanos, bare.maximum_nanos) == (-_MS, -_MS + 999_999)


def test_timestamp_local_fields() -> None:
    ts = pb.TimestampStatistics(minimum=0, maximum=3_600_000)
    as_is = _stats("timestamp", timestampStatistics=ts)
    assert (as_is.minimum_nanos, as_is.maximum_nanos, as_is.timestamp_utc) == (
        0, 3_600_000 * _MS + 999_999, False)
    # 1970-01-01 00:00 UTC is 1969-12-31 16:00 wall clock in Los Angeles (UTC-8)
    la = _stats("timestamp", timestampStatistics=ts, writer_timezone="America/Los_Angeles")
    assert la.timestamp_utc and la.minimum_nanos == -8 * 3_600_000 * _MS
    # an unknown zone leaves the values as they are
    odd = _stats("timestamp", timestampStatistics=ts, writer_timezone="Not/AZone")
    assert (odd.minimum_nanos, odd.timestamp_utc) == (0, False)


def test_dates() -> None:
    s = _stats("date", dateStatistics=pb.DateStatistics(minimum=-25567, maximum=19000))
    assert (s.minimum, s.maximum) == (datetime.date(1900, 1, 1), datetime.date(2022, 1, 8))
    huge = _stats("date", dateStatistics=pb.DateStatistics(minimum=-2**31, maximum=2**31 - 1))
    assert (huge.minimum, huge.maximum) == (None, None)


def test_decimals() -> None:
    s = _stats("decimal(10,2)", decimalStatistics=pb.DecimalStatistics(
        minimum="-1.5", maximum="12345678.25", sum="99"))
    assert (s.minimum, s.maximum, s.sum) == (Decimal("-1.5"), Decimal("12345678.25"),
                                             Decimal(99))
    for bad in ("abc", "NaN", "Infinity", ""):
        with pytest.raises(CorruptFileError, match="decimal"):
            _stats("decimal(10,2)", decimalStatistics=pb.DecimalStatistics(minimum=bad))


def test_strings_and_bounds() -> None:
    s = _stats("string", stringStatistics=pb.StringStatistics(
        lowerBound="a" * 5, upperBound="b", sum=5000))
    assert (s.minimum, s.maximum, s.lower_bound, s.upper_bound, s.sum) == (
        None, None, "aaaaa", "b", 5000)
    # invalid UTF-8 (python-protobuf hands it over as bytes): unknown, not an error
    raw = pb.ColumnStatistics(stringStatistics=pb.StringStatistics(maximum="z")).SerializeToString()
    raw += b"\x22\x04\x0a\x02\xff\xfe"  # stringStatistics { minimum: "\xff\xfe" } (merged)
    bad = column_statistics_from_proto(pb.ColumnStatistics.FromString(raw),
                                       parse_type_string("string"))
    assert (bad.minimum, bad.maximum) == (None, "z")


def test_booleans_binary_collections() -> None:
    b = _stats("boolean", numberOfValues=10, bucketStatistics=pb.BucketStatistics(count=[4]))
    assert (b.true_count, b.false_count) == (4, 6)
    assert _stats("binary", binaryStatistics=pb.BinaryStatistics(sum=77)).sum == 77
    c = _stats("array<int>", collectionStatistics=pb.CollectionStatistics(
        minChildren=0, maxChildren=9, totalChildren=12))
    assert (c.min_children, c.max_children, c.total_children) == (0, 9, 12)


def test_original_writer_drops_unreliable_kinds() -> None:
    fields = {"stringStatistics": pb.StringStatistics(minimum="a", maximum="b")}
    assert _stats("string", writer_version=0, **fields).minimum is None
    assert _stats("string", writer_version=1, **fields).minimum == "a"
    ints = {"intStatistics": pb.IntegerStatistics(minimum=1)}
    assert _stats("int", writer_version=0, **ints).minimum == 1


def test_kind_inferred_without_a_type() -> None:
    assert _stats(intStatistics=pb.IntegerStatistics(minimum=1)).kind == K.LONG
    assert _stats(dateStatistics=pb.DateStatistics(minimum=0)).minimum == datetime.date(
        1970, 1, 1)
    assert _stats().kind is None
    # statistics of another kind than the column's are ignored
    assert _stats("string", intStatistics=pb.IntegerStatistics(minimum=1)).minimum is None


def test_to_dict_is_json() -> None:
    s = _stats("timestamp", numberOfValues=2, hasNull=False,
               timestampStatistics=pb.TimestampStatistics(minimumUtc=1, maximumUtc=86_400_000,
                                                          minimumNanos=1000))
    d = s.to_dict()
    assert d == {"kind": "timestamp", "num_values": 2, "has_null": False,
                 "minimum": "1970-01-01 00:00:00.001000999Z",
                 "maximum": "1970-01-02 00:00:00.000999999Z", "timestamp_utc": True}
    dec = _stats("decimal(5,2)", decimalStatistics=pb.DecimalStatistics(minimum="1.25")).to_dict()
    assert json.loads(json.dumps(dec))["minimum"] == "1.25"
    assert _stats("date", dateStatistics=pb.DateStatistics(minimum=1)).to_dict()[
        "minimum"] == "1970-01-02"


_ALL_TYPES = ["boolean", "tinyint", "int", "bigint", "float", "double", "string", "varchar(3)",
              "binary", "timestamp", "timestamp with local time zone", "date", "decimal(10,2)",
              "array<int>", "map<int,int>", "struct<a:int>", "uniontype<int>"]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.sampled_from(_ALL_TYPES + [None]),
       st.sampled_from([None, 0, 9]), st.sampled_from([None, "UTC", "Asia/Kolkata", "../x"]))
def test_fuzz_statistics(blob: bytes, orc_type: str | None, writer_version: int | None,
                         zone: str | None) -> None:
    try:
        p = pb.ColumnStatistics.FromString(blob)
    except Exception:  # noqa: BLE001 - protobuf's own errors: not what is tested here
        return
    t = parse_type_string(orc_type) if orc_type else None
    try:
        s = column_statistics_from_proto(p, t, writer_version=writer_version,
                                         writer_timezone=zone)
    except CorruptFileError:
        return
    json.dumps(s.to_dict())
