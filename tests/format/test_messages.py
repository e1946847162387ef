"""aorc.format.messages: the write path's protobuf messages made without an arena apiece
must be the bytes protobuf itself writes."""

from __future__ import annotations

import random
import threading

import pytest

from aorc.format import messages
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns.encode.statistics import IntegerStats, protos_of
from aorc.format.types import TypeKind, make_type, to_proto


@pytest.mark.parametrize("n", [0, 1, 127, 128, 300, 2**32, 2**63 - 1, 2**64 - 1])
def test_varint_is_protobufs(n: int) -> None:
    # a RowIndexEntry of one position is the packed field: tag, length, varint
    expected = pb.RowIndexEntry(positions=[n]).SerializeToString()[2:]
    assert messages.varint(n) == expected


def _stats(rng: random.Random) -> pb.ColumnStatistics:
    p = pb.ColumnStatistics(numberOfValues=rng.randrange(10**6), hasNull=rng.random() < 0.5)
    if rng.random() < 0.5:
        p.intStatistics.minimum = rng.randrange(-(2**40), 2**40)
        p.intStatistics.maximum = rng.randrange(2**40)
    else:
        p.stringStatistics.minimum = "a" * rng.randrange(200)
        p.stringStatistics.sum = rng.randrange(2**20)
    return p


def test_row_index_bytes_is_the_row_index_protobuf_writes() -> None:
    rng = random.Random(31)
    entries = [([rng.randrange(2**rng.randrange(1, 60)) for _ in range(rng.randrange(12))],
                _stats(rng)) for _ in range(300)]
    expected = pb.RowIndex()
    for positions, stats in entries:
        e = expected.entry.add()
        e.positions.extend(positions)
        e.statistics.CopyFrom(stats)
    got = messages.row_index_bytes((p, s.SerializeToString()) for p, s in entries)
    assert got == expected.SerializeToString()
    assert pb.RowIndex.FromString(got) == expected


def test_parsed_statistics_keeps_order_and_content() -> None:
    rng = random.Random(7)
    stats = [_stats(rng) for _ in range(50)]
    assert messages.parsed_statistics([s.SerializeToString() for s in stats]) == stats
    assert messages.parsed_statistics([]) == []


def test_the_scratch_message_is_replaced_and_stays_right(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(messages, "SCRATCH_USES", 3)
    seen: list[object] = []  # kept alive, so that no two share an id
    for i in range(10):
        s = IntegerStats()
        s.count, s.has_null, s.minimum, s.maximum, s.sum = i, bool(i % 2), -i, i, i * 3
        s.has_minimum = True
        direct = pb.ColumnStatistics()
        s.fill_proto(direct)
        assert direct.intStatistics.maximum == i
        assert s.serialized() == direct.SerializeToString()
        seen.append(messages._local.kept[pb.ColumnStatistics][0])
    assert len({id(m) for m in seen}) == 4  # replaced after every 3 uses


def test_each_thread_has_its_own_scratch() -> None:
    barrier = threading.Barrier(4)
    results: dict[int, list[bytes]] = {}

    def work(k: int) -> None:
        barrier.wait()
        out = []
        for i in range(200):
            s = IntegerStats()
            s.count, s.has_null, s.has_minimum = i, False, True
            s.minimum = s.maximum = s.sum = k * 1000 + i
            out.append(s.serialized())
        results[k] = out

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, out in results.items():
        for i, b in enumerate(out):
            p = pb.ColumnStatistics.FromString(b)
            assert p.numberOfValues == i and p.intStatistics.minimum == k * 1000 + i


def test_protos_of_and_types_match_the_messages_made_one_by_one() -> None:
    stats = []
    for i in range(5):
        s = IntegerStats()
        s.count, s.has_null, s.minimum, s.maximum, s.sum = i + 1, False, i, i + 9, 2 * i + 9
        s.has_minimum = True
        stats.append(s)
    one_by_one = []
    for s in stats:
        p = pb.ColumnStatistics()
        s.fill_proto(p)
        one_by_one.append(p)
    assert protos_of(stats) == one_by_one
    root = make_type(TypeKind.STRUCT, [
        make_type(TypeKind.DECIMAL, precision=12, scale=3),
        make_type(TypeKind.VARCHAR, max_length=20),
        make_type(TypeKind.LIST, [make_type(TypeKind.INT)])], ["d", "v", "l"],
        attributes=[("k", "v")])
    made = to_proto(root)
    assert [p.kind for p in made] == [pb.Type.STRUCT, pb.Type.DECIMAL, pb.Type.VARCHAR,
                                      pb.Type.LIST, pb.Type.INT]
    assert list(made[0].subtypes) == [1, 2, 3] and list(made[0].fieldNames) == ["d", "v", "l"]
    assert (made[1].precision, made[1].scale, made[2].maximumLength) == (12, 3, 20)
    assert list(made[3].subtypes) == [4]
    assert [(a.key, a.value) for a in made[0].attributes] == [("k", "v")]
