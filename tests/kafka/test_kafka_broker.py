"""aorc.kafka against a real Kafka-protocol broker (Tansu, tests/helpers/kafka_broker.py):
3 partitions, dead letters to files and to a topic, two consumers of a group with a rebalance
in the middle, a consumer process SIGKILLed after some batches and restarted, the CLI stopped
by SIGTERM. Every test proves exactly once: every (partition, offset) produced is in exactly
one file (rows or dead letters), read back by pyarrow.orc, and the group's committed offsets
are the topic's end offsets."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest
from helpers.kafka_broker import (
    GROUP_OPTIONS,
    Broker,
    create_topic,
    produce,
    read_rows,
    stored_once,
    topic_name,
)

from aorc.errors import AorcError
from aorc.kafka import KafkaToOrc

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = "struct<n:int,s:string>"


def messages(start: int, count: int, bad_every: int = 0) -> list[tuple[int, bytes]]:
    """``(partition, value)``: JSON objects, every ``bad_every``-th one not valid JSON."""
    out = []
    for i in range(start, start + count):
        value = json.dumps({"n": i, "s": f"s{i}"}).encode()
        if bad_every and i % bad_every == 7:
            value = b"{not json " + str(i).encode()
        out.append((i % 3, value))
    return out


def assert_exactly_once(sent: dict[tuple[int, int], bytes | None], data: pathlib.Path,
                        dead: pathlib.Path | None = None) -> tuple[int, int]:
    """Every sent record is once in the files: a row with its fields, or a dead letter with
    its bytes. Returns (rows, dead letters)."""
    rows, letters = stored_once(sent, data, dead)
    for r in rows:
        assert json.loads(sent[(r["kafka_partition"], r["kafka_offset"])]) == {
            "n": r["n"], "s": r["s"]}
    for r in letters:
        assert r["value"] == sent[(r["partition"], r["offset"])] and r["reason"]
    return len(rows), len(letters)


async def committed(bootstrap: str, topic: str, group: str) -> dict[int, int | None]:
    """The group's committed offsets of the topic's 3 partitions."""
    from aiokafka import AIOKafkaConsumer, TopicPartition
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                                enable_auto_commit=False)
    await consumer.start()
    try:
        return {p: await consumer.committed(TopicPartition(topic, p)) for p in range(3)}
    finally:
        await consumer.stop()


def ends(sent: dict[tuple[int, int], Any]) -> dict[int, int]:
    return {p: max(o for q, o in sent if q == p) + 1 for p in range(3)}


def pipe(broker: Broker, topic: str, group: str, dest: pathlib.Path, **kw: Any) -> KafkaToOrc:
    options: dict[str, Any] = {"schema": SCHEMA, "max_rows": 250, "poll_ms": 200,
                               "consumer_options": dict(GROUP_OPTIONS)}
    options.update(kw)
    return KafkaToOrc(bootstrap_servers=broker.bootstrap, topics=[topic], group=group,
                      dest=str(dest), **options)


async def covered(pipes: Sequence[KafkaToOrc], end: dict[int, int]) -> None:
    """Wait (an event: the pipes' positions) until the pipes' current partitions together
    reached the end offsets."""
    while True:
        at = {p.partition: p.consumed for x in pipes for p in x._progress.values()}
        if all(at.get(p) == e for p, e in end.items()):
            return
        await asyncio.sleep(0.05)


async def until(check: Any, state: Any, timeout: float = 60) -> None:
    """Wait (polling an event's condition) at most ``timeout`` seconds; fail with
    ``state()`` otherwise."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, f"timed out: {state()}"
        await asyncio.sleep(0.05)


async def test_json_with_dead_letter_files(kafka_broker: Broker, tmp_path: pathlib.Path
                                           ) -> None:
    topic = topic_name()
    group = topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    sent = await produce(kafka_broker.bootstrap, topic, messages(0, 1500, bad_every=41))
    async with pipe(kafka_broker, topic, group, tmp_path / "data",
                    dead_letter=str(tmp_path / "dead")) as p:
        task = asyncio.create_task(p.run())
        await covered([p], ends(sent))
        p.stop()
        await task
    rows, dead = assert_exactly_once(sent, tmp_path / "data", tmp_path / "dead")
    assert dead == sum(1 for v in sent.values() if v.startswith(b"{not")) > 30
    health = p.health()
    assert health["dead_letters"] == dead and health["rows_committed"] == rows
    assert sum(x["records"] for x in health["partitions"].values()) == rows
    assert sum(x["files"] for x in health["partitions"].values()) == health["files_written"]
    assert health["last_commit"] is not None
    assert all(x["lag"] == 0 for x in health["partitions"].values())
    assert await committed(kafka_broker.bootstrap, topic, group) == ends(sent)
    # the files of a partition folder are named from their first offsets
    names = sorted(f.name for f in (tmp_path / "data").rglob(f"{topic}+0+*.orc"))
    firsts = sorted(r["kafka_offset"] for r in read_rows(tmp_path / "data")
                    if r["kafka_partition"] == 0)
    assert names[0] == f"{topic}+0+{firsts[0]:020d}.orc"


async def test_dead_letter_topic(kafka_broker: Broker, tmp_path: pathlib.Path) -> None:
    from aiokafka import AIOKafkaConsumer
    topic, dead_topic, group = topic_name(), topic_name("dead"), topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    await create_topic(kafka_broker.bootstrap, dead_topic, 1)
    sent = await produce(kafka_broker.bootstrap, topic, messages(0, 300, bad_every=20))
    async with pipe(kafka_broker, topic, group, tmp_path / "data",
                    dead_letter=f"topic:{dead_topic}") as p:
        task = asyncio.create_task(p.run())
        await covered([p], ends(sent))
        p.stop()
        await task
    assert await committed(kafka_broker.bootstrap, topic, group) == ends(sent)
    bad = {k for k, v in sent.items() if v.startswith(b"{not")}
    reader = AIOKafkaConsumer(dead_topic, bootstrap_servers=kafka_broker.bootstrap,
                              auto_offset_reset="earliest", enable_auto_commit=False)
    await reader.start()
    letters = []
    try:
        while len(letters) < len(bad):
            for recs in (await reader.getmany(timeout_ms=500)).values():
                letters.extend(recs)
    finally:
        await reader.stop()
    got = set()
    for r in letters:
        headers = {k: v.decode() for k, v in r.headers}
        key = (int(headers["aorc.partition"]), int(headers["aorc.offset"]))
        assert headers["aorc.topic"] == topic and "not JSON" in headers["aorc.reason"]
        assert r.value == sent[key]
        got.add(key)
    assert got == bad and len(letters) == len(bad)
    rows = read_rows(tmp_path / "data")
    assert sorted((r["kafka_partition"], r["kafka_offset"]) for r in rows) == sorted(
        set(sent) - bad)


async def test_two_consumers_rebalance_in_the_middle(kafka_broker: Broker,
                                                     tmp_path: pathlib.Path) -> None:
    topic = topic_name()
    group = topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    sent = await produce(kafka_broker.bootstrap, topic, messages(0, 900))
    first_batches = asyncio.Event()
    a = pipe(kafka_broker, topic, group, tmp_path / "data", max_records=60)

    def after(p: KafkaToOrc) -> None:
        if p.batches >= 3 and len(p._progress) == 3:
            first_batches.set()
    a.on_batch = after
    b = pipe(kafka_broker, topic, group, tmp_path / "data", max_records=60)
    async with a:
        task_a = asyncio.create_task(a.run())
        await first_batches.wait()  # the event: a has written batches of all 3 alone
        async with b:
            task_b = asyncio.create_task(b.run())
            while not b.assigned:  # b got partitions: the rebalance happened
                await asyncio.sleep(0.05)
            sent.update(await produce(kafka_broker.bootstrap, topic, messages(900, 900)))
            await covered([a, b], ends(sent))
            a.stop()
            await task_a
            b.stop()
            await task_b
    assert a.rebalances >= 1 and b.sink.stats.rows_received > 0
    assert a.sink.stats.rows_received > 0 and a.lost_partitions == 0
    assert_exactly_once(sent, tmp_path / "data")
    assert await committed(kafka_broker.bootstrap, topic, group) == ends(sent)


async def test_consumer_killed_and_restarted(kafka_broker: Broker,
                                             tmp_path: pathlib.Path) -> None:
    topic = topic_name()
    group = topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    sent = await produce(kafka_broker.bootstrap, topic, messages(0, 3000, bad_every=97))
    dest = tmp_path / "data"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    child = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "tests" / "helpers" / "kafka_child.py"),
        kafka_broker.bootstrap, topic, group, str(dest), "12", env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await child.communicate()
    assert child.returncode == -signal.SIGKILL, (out, err[-3000:])
    assert b"killing after" in out
    before = await committed(kafka_broker.bootstrap, topic, group)
    assert any(before.values()) and before != ends(sent)  # part is committed, not all
    async with pipe(kafka_broker, topic, group, dest, max_rows=200,
                    dead_letter=str(dest) + "-dead") as p:
        task = asyncio.create_task(p.run())
        await covered([p], ends(sent))
        p.stop()
        await task
    assert_exactly_once(sent, dest, pathlib.Path(str(dest) + "-dead"))
    assert await committed(kafka_broker.bootstrap, topic, group) == ends(sent)


async def test_cli_until_sigterm(kafka_broker: Broker, tmp_path: pathlib.Path) -> None:
    topic = topic_name()
    group = topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    sent = await produce(kafka_broker.bootstrap, topic, messages(0, 600, bad_every=50))
    config = tmp_path / "kafka.toml"
    config.write_text(f'bootstrap-servers = "{kafka_broker.bootstrap}"\ntopic = ["{topic}"]\n'
                      f'group = "{group}"\nschema = "{SCHEMA}"\nmax-age = 0.5\n'
                      '[consumer-options]\nsession_timeout_ms = 2000\n'
                      'heartbeat_interval_ms = 500\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "aorc", "kafka", "--config", str(config), "--dest",
        str(tmp_path / "data"), "--dead-letter", str(tmp_path / "dead"),
        "--max-rows", "150", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        while await committed(kafka_broker.bootstrap, topic, group) != ends(sent):
            assert proc.returncode is None, (await proc.communicate())[1][-3000:]
            await asyncio.sleep(0.2)  # the event: everything committed (max-age cuts)
        proc.send_signal(signal.SIGTERM)
        out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err[-3000:]
    health = json.loads(out)
    rows, dead = assert_exactly_once(sent, tmp_path / "data", tmp_path / "dead")
    assert health["rows_committed"] == rows and health["dead_letters"] == dead == 12


def test_cli_needs_settings(tmp_path: pathlib.Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "aorc", "kafka", "--topic", "t"],
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "needs --bootstrap-servers, --group, --dest" in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_member_that_lost_its_group_completes_no_file(kafka_broker: Broker,
                                                            tmp_path: pathlib.Path) -> None:
    """A zombie: consumer a's heartbeats stall (an event pauses them) while its run loop is
    held in a hook; its session expires and b takes every partition, writes past a's files
    and commits. Released, a goes on writing the records it had fetched into the same file
    names (a's files hold 50 rows, b's 70: a completed file of a would replace b's and lose
    20 rows); its fence (a probe commit before completing a file) is refused, it drops its
    files and rejoins (its heartbeats come back once it fenced). Exactly once, a fenced at
    least once, b owned everything meanwhile."""
    topic = topic_name()
    group = topic_name("g")
    await create_topic(kafka_broker.bootstrap, topic)
    sent = await produce(kafka_broker.bootstrap, topic, messages(0, 870))
    first_end = ends(sent)
    a = pipe(kafka_broker, topic, group, tmp_path / "data", max_rows=50, max_records=60)
    b = pipe(kafka_broker, topic, group, tmp_path / "data", max_rows=70, max_age=1.0)
    blocked, release, beats_back = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def hold(p: KafkaToOrc) -> None:  # the event: a consumed the first records
        at = {x.partition: x.consumed for x in p._progress.values()}
        if at == first_end and not blocked.is_set():
            blocked.set()
            await release.wait()
    a.on_batch = hold

    def b_committed_all() -> bool:
        want = ends(sent)
        return len(b._progress) == 3 and all(
            x.committed == want[x.partition] for x in b._progress.values())

    async with a:
        coordinator = a.consumer._coordinator
        beat = coordinator._do_heartbeat

        async def stalled_heartbeat() -> bool:  # heartbeats pause while a is held
            if blocked.is_set():
                await beats_back.wait()
            return bool(await beat())
        coordinator._do_heartbeat = stalled_heartbeat
        task_a = asyncio.create_task(a.run())
        try:
            await asyncio.wait_for(blocked.wait(), 60)
            assert a.commits >= 1 and a.sink.stats.rows_pending > 0  # open, uncommitted
            async with b:
                task_b = asyncio.create_task(b.run())
                await until(lambda: len(b.assigned) == 3,  # a's session expired
                            lambda: f"b owns {b.assigned}")
                sent.update(await produce(kafka_broker.bootstrap, topic,
                                          messages(870, 600)))
                # b's files complete and committed (max_age), past a's open files
                await until(b_committed_all, lambda: f"b at {b.health()['partitions']}")
                assert b.rebalances == 0 and b.lost_partitions == 0  # a stayed out
                assert await committed(kafka_broker.bootstrap, topic, group) == ends(sent)
                release.set()  # a goes on with the records it fetched: a zombie
                await until(lambda: a.fenced, lambda: f"a fenced {a.fenced}, batches "
                            f"{a.batches}, rows {a.sink.stats.rows_received}")
                beats_back.set()
                await until(lambda: a.fenced and a.lost_partitions and a.assigned
                            and len(a.assigned | b.assigned) == 3,
                            lambda: f"a fenced {a.fenced}, lost {a.lost_partitions}, owns "
                                    f"{a.assigned}, b owns {b.assigned}")
                a.stop()
                b.stop()
                await asyncio.gather(task_a, task_b)
        finally:  # (a failed assertion must not leave a held: leaving a waits for run)
            release.set()
            beats_back.set()
            a.stop()
    assert_exactly_once(sent, tmp_path / "data")
    assert a.sink.stats.cuts_fenced >= 1 and a.health()["fenced"] == a.fenced
    assert b.lost_partitions == 0
    assert await committed(kafka_broker.bootstrap, topic, group) == ends(sent)


async def test_broker_restarted_between_runs(kafka_broker: Broker,
                                             tmp_path: pathlib.Path) -> None:
    """The broker restarts between two runs and forgets the topic and the group's offsets.
    Recreated empty, the topic ends before the files: the consumer refuses to overwrite
    them. Refilled as a durable broker would have kept it (the same records at the same
    offsets) plus new records, the consumer resumes after the files (their names and
    metadata), leaves the old files untouched and writes each new record once."""
    topic = topic_name()
    group = topic_name("g")
    dest = tmp_path / "data"
    await create_topic(kafka_broker.bootstrap, topic)
    first = messages(0, 600, bad_every=0)
    sent = await produce(kafka_broker.bootstrap, topic, first)
    async with pipe(kafka_broker, topic, group, dest, max_rows=70) as p:
        task = asyncio.create_task(p.run())
        await asyncio.wait_for(covered([p], ends(sent)), 60)
        p.stop()
        await task
    assert await committed(kafka_broker.bootstrap, topic, group) == ends(sent)
    before = {path: path.read_bytes() for path in dest.rglob("*.orc")}
    restarts = kafka_broker.restarts
    kafka_broker.restart()
    assert kafka_broker.restarts == restarts + 1
    await create_topic(kafka_broker.bootstrap, topic)
    assert await committed(kafka_broker.bootstrap, topic, group) == dict.fromkeys(range(3))
    async with pipe(kafka_broker, topic, group, dest) as empty:
        with pytest.raises(AorcError, match="the topic was recreated"):
            await asyncio.wait_for(empty.run(), 60)
    assert empty.sink.stats.rows_received == 0
    assert await produce(kafka_broker.bootstrap, topic, first) == sent
    sent.update(await produce(kafka_broker.bootstrap, topic, messages(600, 300)))
    async with pipe(kafka_broker, topic, group, dest, max_rows=70) as p:
        task = asyncio.create_task(p.run())
        await asyncio.wait_for(covered([p], ends(sent)), 60)
        p.stop()
        await task
    assert p.resumed_from_files == 3 and p.sink.stats.rows_received == 300
    assert {path: path.read_bytes() for path in before} == before  # untouched
    assert_exactly_once(sent, dest)
    assert await committed(kafka_broker.bootstrap, topic, group) == ends(sent)
