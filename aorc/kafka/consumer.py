"""Kafka topics to ORC files, exactly once: an aiokafka consumer group feeding a
:class:`~aorc.sink.RollingSink`.

::

    async with KafkaToOrc(bootstrap_servers="broker:9092", topics=["events"],
                          group="orc-sink", dest="s3://bucket/events", format="json",
                          schema="struct<user:string,amount:double>",
                          dead_letter="s3://bucket/events-dead") as pipe:
        await pipe.run()            # until pipe.stop(), SIGTERM or SIGINT

or ``await aorc.kafka.run(...)`` with the same arguments.

Exactly once. Offsets are committed to the consumer group only once every record before them
is durable: its row in a complete file (the sink's commit callback) or its dead letter in a
complete dead-letter file or acknowledged by the dead-letter topic. Files are named from the
offset of their first record (see :mod:`aorc.sink.rolling`), so after a crash the group
resumes from the committed offsets and the replay rewrites the same objects: no record is
lost, none is stored twice. (A dead-letter *topic* is at least once: a replay sends again the
dead letters past the last commit; their headers name topic, partition and offset.)

Rebalances. Before partitions are revoked, their files are flushed, their offsets committed
and their state dropped; assigned partitions resume from the group's committed offsets.
Records polled across a rebalance are not written: the positions of the partitions still
owned go back to the group's committed offsets and they are read again. A consumer that lost
its group (session expiry: a probe commit is refused) writes nothing more for the partitions
it had: their open files are dropped, uncommitted, and the new owner writes them. A member
may not know it was expired (its heartbeats stalled: a long pause of the process, a blocked
event loop) and go on reading and writing; but before any data file is completed it probes
the group (commits again its last committed offset), and when the group refuses, the file is
dropped, not made visible (``health()["fenced"]``): a zombie never completes a file the
partition's new owner may be writing.

Lost offsets. A partition the group has no committed offset for resumes after the files
already written (:mod:`aorc.kafka.resume`): a broker that forgot its offsets (or a new
group name) neither rewrites nor duplicates the files. If the partition now ends before
them (the topic was recreated), :meth:`KafkaToOrc.run` raises instead of overwriting them.

Dead letters. A record that is not valid for the format (not JSON, not an object, fields that
do not fit the schema, no value) goes to ``dead_letter``: ``"topic:NAME"`` (the original key
and value with headers ``aorc.topic``, ``aorc.partition``, ``aorc.offset`` and
``aorc.reason``) or a folder / object-store URL (ORC files of
:data:`~aorc.kafka.records.DEAD_LETTER_SCHEMA`, one per dead letter, named from its offset, so
that a replay rewrites it whatever the batches; meant for rare records, not for a topic of
garbage). Dead letters are durable before the records after them are written, and counted in
:meth:`KafkaToOrc.health`. The offset committed is never inside a complete data file (see
:mod:`aorc.kafka.progress`). Without ``dead_letter`` such a record stops the
consumer with a :class:`~aorc.errors.SchemaError` (nothing is dropped silently).

Schema versions (``avro``). A record written with a new compatible version of the subject's
schema that adds fields widens the reader schema: every partition's open files are cut and
committed first (:meth:`~aorc.sink.RollingSink.evolve`), and the files after have the new
columns; the old files keep theirs, and a dataset reads both with schema evolution (the new
columns null in old rows). Records of older versions read after that take the new fields'
defaults. Counted in ``health()["schema_changes"]``.

Stopping. :meth:`KafkaToOrc.stop` (and SIGTERM/SIGINT while :meth:`KafkaToOrc.run` runs with
``handle_signals``) ends the loop; leaving the ``async with`` block flushes every file,
commits and closes the consumer. An exception aborts the files instead (nothing partial
appears; a restart replays).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any

import pyarrow as pa

from aorc.errors import AorcError, SchemaError
from aorc.kafka.avro import AvroDecoder, SchemaRegistry, arrow_schema
from aorc.kafka.progress import PartitionProgress
from aorc.kafka.records import (
    DEAD_LETTER_SCHEMA,
    DeadLetter,
    RecordDecoder,
    dead_letter_batch,
    row_schema,
)
from aorc.kafka.resume import files_positions
from aorc.sink import RollingSink, SinkCommit
from aorc.sink.files import default_stripe_target

__all__ = ["KafkaToOrc", "run", "service_memory_pool"]

logger = logging.getLogger("aorc.kafka")

#: Consumer settings unless ``consumer_options`` says otherwise.
CONSUMER_DEFAULTS: Mapping[str, Any] = {"auto_offset_reset": "earliest",
                                        "max_partition_fetch_bytes": 4 << 20}
Key = tuple[str, int]
#: Encoded bytes per stripe unless ``sink_options`` give ``stripe_size`` (see KafkaToOrc).
STRIPE_SIZE = 4 << 20


def _avro_decoder(url: str, schema: Any, subject: str) -> AvroDecoder:
    try:
        import fastavro  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the kafka extra brings it
        raise AorcError("the avro format needs fastavro: pip install 'aorc[kafka]'") from exc
    registry = SchemaRegistry(url)
    if schema is None:
        reader = registry.latest(subject)
    elif isinstance(schema, str):
        try:
            reader = json.loads(schema)
        except ValueError as exc:
            raise SchemaError(f"the avro format's schema is Avro JSON: {exc}") from exc
    else:
        raise SchemaError("the avro format's schema is Avro JSON text")
    return AvroDecoder(registry, reader)


def _aiokafka() -> Any:
    try:
        import aiokafka
    except ImportError as exc:  # pragma: no cover - the kafka extra brings it
        raise AorcError("aorc.kafka needs aiokafka: pip install 'aorc[kafka]'") from exc
    return aiokafka


class KafkaToOrc:
    """A consumer group member writing its partitions' records into ORC files.

    Args:
        bootstrap_servers: ``host:port[,host:port]``.
        topics: the topics consumed.
        group: the consumer group id.
        dest: a local folder or an object-store URL (``s3://bucket/prefix``, ...).
        format: ``"json"``, ``"raw"`` or ``"avro"`` (see :mod:`aorc.kafka.records`).
        schema: the fields kept from JSON values, an ORC type string (``struct<...>``) or an
            Arrow schema; with ``avro``, the reader schema (Avro JSON text; default: the
            latest version of the subject ``<first topic>-value``, fetched when created).
        dead_letter: ``"topic:NAME"`` or a folder/URL for dead-letter ORC files; None: a
            record that does not decode stops the consumer.
        partition_by: columns naming partition folders (``country=DE``).
        event_time: the timestamp column of the hourly folders (default ``kafka_time``, the
            message timestamp); None: no time folders.
        max_rows: a file's most rows.
        max_bytes: a file's size on the store.
        max_age: seconds after which a quiet partition's files are completed and committed.
        storage_options: settings of the store (both ``dest`` and a dead-letter folder).
        consumer_options: more ``AIOKafkaConsumer`` arguments (``session_timeout_ms``, ...).
        producer_options: more ``AIOKafkaProducer`` arguments of the dead-letter topic.
        poll_ms: the longest wait of one poll.
        max_records: the most records one poll returns.
        sink_options: more :class:`~aorc.sink.RollingSink` arguments (``compression``,
            ``memory_budget``, ``stripe_size``, ...). The stripes are of 4 MiB (encoded)
            unless ``stripe_size`` says otherwise (or ``max_bytes`` / 16 when smaller): an
            open file holds its stripe's rows, up to four times the stripe's size when they
            compress well (as events do), one file per partition and folder.
        schema_registry: the Confluent schema registry's URL (``avro``).
        resume_from_files: a partition without a committed offset in the group resumes
            after the files already in ``dest`` (see :mod:`aorc.kafka.resume`); False: where
            ``auto_offset_reset`` says (rewriting the files of the offsets read again).

    Raises:
        SchemaError: a bad format, schema or option.
    """

    def __init__(self, *, bootstrap_servers: str, topics: Sequence[str], group: str,
                 dest: str, format: str = "json", schema: str | pa.Schema | None = None,
                 dead_letter: str | None = None, partition_by: Sequence[str] = (),
                 event_time: str | None = "kafka_time", max_rows: int | None = 1_000_000,
                 max_bytes: int | None = 128 << 20, max_age: float | None = 300.0,
                 storage_options: Mapping[str, Any] | None = None,
                 consumer_options: Mapping[str, Any] | None = None,
                 producer_options: Mapping[str, Any] | None = None,
                 poll_ms: int = 1000, max_records: int = 10_000,
                 sink_options: Mapping[str, Any] | None = None,
                 schema_registry: str | None = None,
                 resume_from_files: bool = True) -> None:
        if not topics:
            raise SchemaError("KafkaToOrc needs at least one topic")
        avro = None
        if format == "avro":
            if schema_registry is None:
                raise SchemaError("the avro format needs schema_registry (its URL)")
            avro = _avro_decoder(schema_registry, schema, f"{topics[0]}-value")
            schema = arrow_schema(avro.reader)
        self.bootstrap_servers = bootstrap_servers
        self.topics = list(topics)
        self.group = group
        self.dest = dest
        self.schema = row_schema(format, schema)
        self.decoder = RecordDecoder(format, self.schema, avro)
        self.poll_ms = poll_ms
        self.max_records = max_records
        self._consumer_options = {**CONSUMER_DEFAULTS, **(consumer_options or {})}
        self._producer_options = dict(producer_options or {})
        self._dead_topic: str | None = None
        self._dead_dest: str | None = None
        if dead_letter is not None:
            if dead_letter.startswith("topic:"):
                self._dead_topic = dead_letter[len("topic:"):]
                if not self._dead_topic:
                    raise SchemaError("dead_letter 'topic:' needs a topic name")
            else:
                self._dead_dest = dead_letter
        options = dict(sink_options or {})
        options.setdefault("on_old_offsets", "skip")
        options.setdefault("stripe_size", min(STRIPE_SIZE, default_stripe_target(max_bytes)))
        self._storage_options = dict(storage_options or {})
        time_options: dict[str, Any] = (
            {"event_time": event_time} if event_time is not None
            else {"time_partitioning": None})
        self.sink = RollingSink(dest, self.schema, partition_by=partition_by,
                                max_rows=max_rows, max_bytes=max_bytes, max_age=max_age,
                                storage_options=self._storage_options or None,
                                on_commit=self._data_durable,
                                before_complete=self._may_complete, **time_options, **options)
        self.dead_sink: RollingSink | None = None
        if self._dead_dest is not None:  # a file per dead letter: replays rewrite it
            self.dead_sink = RollingSink(
                self._dead_dest, DEAD_LETTER_SCHEMA, time_partitioning=None,
                max_rows=1, max_age=None,
                storage_options=self._storage_options or None,
                on_commit=self._dead_durable, on_old_offsets="skip",
                compression=options.get("compression", "zstd"))
        self.consumer: Any = None
        self.producer: Any = None
        self._progress: dict[Key, PartitionProgress] = {}
        self._lock = asyncio.Lock()  # handling a poll's records vs a rebalance
        self._commit_lock = asyncio.Lock()
        self._generation = 0  # bumped by every rebalance
        self._stop = asyncio.Event()
        self._running = False
        self._run_done = asyncio.Event()
        self._run_done.set()
        self._closed = False  # the sinks are closed or aborted: rebalances have no files
        self.polls = 0
        self.batches = 0
        self.commits = 0
        self.lost_partitions = 0
        self.schema_changes = 0  # Avro reader schemas widened by a new version
        self.fenced = 0  # cuts dropped because the group refused this member
        self.resumed_from_files = 0  # partitions without commits resumed after the files
        self.resume_from_files = resume_from_files
        self._failure: BaseException | None = None
        self._resumed: dict[Key, int] = {}  # positions taken from the files
        self.rebalances = 0  # revocations of partitions this member had
        self.assigned: set[Key] = set()  # the partitions this member owns now
        self.on_batch: Callable[[KafkaToOrc], Awaitable[None] | None] | None = None

    # ----------------------------------------------------------------- life cycle

    async def __aenter__(self) -> KafkaToOrc:
        aiokafka = _aiokafka()
        self._tp = aiokafka.TopicPartition
        self._kafka_errors = aiokafka.errors
        await self.sink.__aenter__()
        if self.dead_sink is not None:
            await self.dead_sink.__aenter__()
        if self._dead_topic is not None:
            self.producer = aiokafka.AIOKafkaProducer(
                bootstrap_servers=self.bootstrap_servers,
                **{"acks": "all", "enable_idempotence": False, **self._producer_options})
            await self.producer.start()
        self.consumer = aiokafka.AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap_servers, group_id=self.group,
            enable_auto_commit=False, **self._consumer_options)
        self.consumer.subscribe(self.topics, listener=_listener(self, aiokafka))
        try:
            await self.consumer.start()
        except BaseException:
            await self._abort()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()  # a run() in another task returns after its poll
        await self._run_done.wait()
        if exc_type is not None:
            await self._abort()
            return
        try:
            async with self._lock:
                self._closed = True
                await self.sink.close()
                if self.dead_sink is not None:
                    await self.dead_sink.close()
                await self._commit(list(self._progress))
        except BaseException:
            await self._abort()
            raise
        await self._stop_clients()

    async def _abort(self) -> None:
        self._closed = True
        await self.sink.abort()
        if self.dead_sink is not None:
            await self.dead_sink.abort()
        await self._stop_clients()

    async def _stop_clients(self) -> None:
        consumer, self.consumer = self.consumer, None
        producer, self.producer = self.producer, None
        if consumer is not None:
            # leaving the group revokes the partitions: nothing is left to flush
            self._stop.set()
            await consumer.stop()
        if producer is not None:
            await producer.stop()

    def stop(self) -> None:
        """Ask :meth:`run` to return after the poll under way."""
        self._stop.set()

    # ----------------------------------------------------------------- consuming

    async def run(self, *, idle_polls: int | None = None, max_batches: int | None = None,
                  handle_signals: bool = False) -> None:
        """Consume until :meth:`stop` (or SIGTERM/SIGINT with ``handle_signals``).

        Args:
            idle_polls: also return after this many empty polls in a row (batch mode).
            max_batches: also return after this many non-empty polls.
            handle_signals: stop on SIGTERM and SIGINT (when running in the main thread).

        Raises:
            SchemaError: a record that does not decode, without a dead-letter destination.
            StoreError: writing the files failed.
        """
        if self.consumer is None:
            raise AorcError("KafkaToOrc.run: use it inside 'async with KafkaToOrc(...)'")
        loop = asyncio.get_running_loop()
        signals = ((signal.SIGTERM, signal.SIGINT) if handle_signals
                   and threading.current_thread() is threading.main_thread() else ())
        for sig in signals:
            loop.add_signal_handler(sig, self.stop)
        self._running = True
        self._run_done.clear()
        idle = 0
        fetch: asyncio.Future[Any] | None = None
        try:
            while not self._stop.is_set():
                self._raise_failure()
                if fetch is None:
                    generation, fetch = self._fetch()
                stopping = asyncio.ensure_future(self._stop.wait())
                await asyncio.wait([fetch, stopping], return_when=asyncio.FIRST_COMPLETED)
                stopping.cancel()
                if not fetch.done():
                    break
                polled, fetched_in = fetch.result(), generation
                self.polls += 1
                async with self._lock:
                    stale = fetched_in != self._generation
                    if stale:  # a rebalance came between: read these again (the group's
                        await self._rewind(polled)  # commits are where they resume)
                    # the next poll runs while these records are written
                    generation, fetch = self._fetch()
                    if stale:
                        continue
                    if not any(polled.values()):
                        idle += 1
                        if idle_polls is not None and idle >= idle_polls:
                            break
                        continue
                    idle = 0
                    for tp, records in polled.items():
                        if records:
                            await self._handle(tp.topic, tp.partition, records)
                self.batches += 1
                if self.on_batch is not None:
                    result = self.on_batch(self)
                    if result is not None:
                        await result
                if max_batches is not None and self.batches >= max_batches:
                    break
            self._raise_failure()
        finally:
            if fetch is not None and not fetch.done():  # its records were not handled:
                fetch.cancel()  # the next owner (or run) reads them from the commits
                await asyncio.gather(fetch, return_exceptions=True)
            self._running = False
            self._run_done.set()
            for sig in signals:
                loop.remove_signal_handler(sig)

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    async def _rewind(self, polled: Mapping[Any, Sequence[Any]]) -> None:
        """Put the positions of partitions still owned back to the group's commits: records
        polled across a rebalance are read again, not skipped."""
        assigned = self.consumer.assignment()
        for tp, records in polled.items():
            if records and tp in assigned:
                committed = await self.consumer.committed(tp)
                if committed is None:  # where this member started it (after the files)
                    committed = self._resumed.get((tp.topic, tp.partition), records[0].offset)
                self.consumer.seek(tp, committed)

    def _fetch(self) -> tuple[int, asyncio.Future[Any]]:
        """Start a poll; returns the rebalance generation it started in and the poll."""
        return self._generation, asyncio.ensure_future(self.consumer.getmany(
            timeout_ms=self.poll_ms, max_records=self.max_records))

    async def _handle(self, topic: str, partition: int, records: Sequence[Any]) -> None:
        key = (topic, partition)
        progress = self._progress.get(key)
        if progress is None:
            progress = self._progress[key] = PartitionProgress(topic, partition)
        avro = self.decoder.avro
        if avro is not None:  # a new compatible schema version: new columns, new files
            reader = await asyncio.to_thread(avro.evolved, [r.value for r in records])
            if reader is not None:
                await self._evolve(reader)
        batch, offsets, dead = await asyncio.to_thread(self.decoder.decode, records)
        if dead:
            await self._dead_letters(progress, dead)
        if batch.num_rows:
            progress.handed("rows", offsets[0], offsets[-1])
            await self.sink.write(batch, topic=topic, partition=partition, offsets=offsets)
            progress.records += batch.num_rows
        progress.consumed_to(records[-1].offset)
        with contextlib.suppress(Exception):
            progress.highwater = self.consumer.highwater(self._tp(topic, partition))
        if not progress.pending:
            await self._commit([key])

    async def _evolve(self, reader: Any) -> None:
        """Read Avro with a widened reader schema: every partition's files are cut (and
        committed) and the next ones have the new columns."""
        schema = row_schema("avro", arrow_schema(reader))
        added = [n for n in schema.names if n not in self.schema.names]
        logger.info("a new Avro schema version adds %s: rolling the files", added)
        await self.sink.evolve(schema)
        self.decoder.avro.use(reader)
        self.schema = schema
        self.decoder = RecordDecoder("avro", schema, self.decoder.avro)
        self.schema_changes += 1

    async def _dead_letters(self, progress: PartitionProgress, dead: list[DeadLetter]
                            ) -> None:
        for letter in dead[:3]:
            logger.warning("dead letter %s-%d@%d: %s", letter.topic, letter.partition,
                           letter.offset, letter.reason)
        if self._dead_topic is not None:
            sends = [await self.producer.send(
                self._dead_topic, value=d.value, key=d.key,
                headers=[("aorc.topic", d.topic.encode()),
                         ("aorc.partition", str(d.partition).encode()),
                         ("aorc.offset", str(d.offset).encode()),
                         ("aorc.reason", d.reason.encode())]) for d in dead]
            await asyncio.gather(*sends)  # acknowledged (acks=all): durable
        elif self.dead_sink is not None:
            key = (progress.topic, progress.partition)
            progress.handed("dead", dead[0].offset, dead[-1].offset)
            await self.dead_sink.write(dead_letter_batch(dead), topic=key[0],
                                       partition=key[1], offsets=[d.offset for d in dead])
            await self.dead_sink.flush([key])  # durable before any record after them
        else:
            first = dead[0]
            raise SchemaError(
                f"{first.topic}-{first.partition}@{first.offset}: {first.reason} (pass a "
                f"dead_letter topic or folder to keep such records apart)")
        progress.dead_letters += len(dead)

    # ----------------------------------------------------------------- committing

    async def _data_durable(self, commit: SinkCommit) -> None:
        progress = self._progress.get((commit.topic, commit.partition))
        if progress is None:
            return
        progress.files += len(commit.files)
        progress.bytes += sum(f.num_bytes for f in commit.files)
        progress.durable("rows", commit.offset)
        await self._commit([(commit.topic, commit.partition)])

    async def _may_complete(self, topic: str, partition: int) -> bool:
        """The fence before a data file is completed (made visible): the group must still
        take this member's commits (it commits again what it committed, or where it
        started). A member whose session expired unseen (its heartbeats stalled) learns it
        here, before writing a file the partition's new owner may be writing too."""
        key = (topic, partition)
        async with self._commit_lock:
            progress = self._progress.get(key)
            if progress is None or self.consumer is None:
                return False  # discarded: not ours any more
            offset = progress.committed if progress.committed is not None else progress.start
            if offset is None:
                return False
            try:
                await self.consumer.commit({self._tp(*key): offset})
            except (self._kafka_errors.KafkaError, AssertionError) as exc:
                self.fenced += 1
                logger.warning("%s-%d: the group refused this member (%r): its files are "
                               "dropped, the partition's owner writes them", topic, partition,
                               exc)
                return False
            return True

    async def _dead_durable(self, commit: SinkCommit) -> None:
        progress = self._progress.get((commit.topic, commit.partition))
        if progress is None:
            return
        progress.durable("dead", commit.offset, spans=False)
        await self._commit([(commit.topic, commit.partition)])

    async def _commit(self, keys: Sequence[Key]) -> bool:
        """Commit what is durable of ``keys``; False when the group refused."""
        async with self._commit_lock:
            offsets = {}
            for key in keys:
                progress = self._progress.get(key)
                target = progress.commit_offset() if progress is not None else None
                if target is not None:
                    offsets[key] = target
            if not offsets or self.consumer is None:
                return True
            try:
                await self.consumer.commit({self._tp(*key): off
                                            for key, off in offsets.items()})
            except (self._kafka_errors.KafkaError, AssertionError) as exc:
                # a rebalance under way or the group lost: the next commit (or the new
                # owner, replaying into the same file names) covers these records
                logger.warning("commit of %s refused: %r", sorted(offsets), exc)
                return False
            for key, off in offsets.items():
                self._progress[key].did_commit(off)
            self.commits += 1
            return True

    # ----------------------------------------------------------------- rebalances

    async def _revoked(self, tps: Sequence[Any]) -> None:
        keys = [(tp.topic, tp.partition) for tp in tps]
        async with self._lock:
            self._generation += 1
            self.assigned.difference_update(keys)
            owned = [k for k in keys if k in self._progress]
            if not owned or self._closed:
                return
            self.rebalances += 1
            if await self._still_member(owned):
                await self.sink.flush(owned)
                if self.dead_sink is not None:
                    await self.dead_sink.flush(owned)
                if not await self._commit(owned):
                    self.lost_partitions += len(owned)
            else:
                logger.warning("group lost: dropping the open files of %s", owned)
                self.lost_partitions += len(owned)
            await self.sink.discard(owned)
            if self.dead_sink is not None:
                await self.dead_sink.discard(owned)
            for key in owned:
                del self._progress[key]

    async def _still_member(self, keys: Sequence[Key]) -> bool:
        """Whether the group still takes our commits: commit again what was committed."""
        offsets = {self._tp(*k): self._progress[k].committed for k in keys
                   if self._progress[k].committed is not None}
        if not offsets:
            return True  # nothing committed yet: a replay rewrites the files anyway
        try:
            await self.consumer.commit(offsets)
        except self._kafka_errors.KafkaError:
            return False
        return True

    async def _assigned(self, tps: Sequence[Any]) -> None:
        async with self._lock:
            self.assigned.update((tp.topic, tp.partition) for tp in tps)
            if self.resume_from_files and tps:
                await self._resume_from_files(tps)
            # polls started before this point may hold records from before the seeks
            self._generation += 1

    async def _resume_from_files(self, tps: Sequence[Any]) -> None:
        """Partitions without a committed offset resume after the files already written
        (see :mod:`aorc.kafka.resume`); a partition that ends before them (the topic was
        recreated) stops :meth:`run` with an error rather than overwrite them."""
        fresh = [tp for tp in tps if await self.consumer.committed(tp) is None]
        if not fresh:
            return
        positions = await files_positions(self.dest, self._storage_options or None,
                                          [(tp.topic, tp.partition) for tp in fresh])
        found = [tp for tp in fresh if (tp.topic, tp.partition) in positions]
        if not found:
            return
        ends = await self.consumer.end_offsets(found)
        for tp in found:
            position = positions[(tp.topic, tp.partition)]
            if ends[tp] < position:
                self._failure = AorcError(
                    f"{tp.topic}-{tp.partition} ends at offset {ends[tp]} but the files in "
                    f"{self.dest} hold offsets up to {position - 1}: the topic was recreated "
                    f"or truncated; move the files away (or write elsewhere) before "
                    f"consuming it again, or pass resume_from_files=False to overwrite them")
                self._stop.set()
                continue
            logger.info("%s-%d has no committed offset: resuming at %d, after the files",
                        tp.topic, tp.partition, position)
            self.consumer.seek(tp, position)
            self._resumed[(tp.topic, tp.partition)] = position
            self.resumed_from_files += 1

    # ----------------------------------------------------------------- health

    def health(self) -> dict[str, Any]:
        """The state a service exposes: per partition the rows written, dead letters, files
        and bytes complete, position, committed offset, high watermark and lag; totals and
        the time of the last commit.

        Returns:
            JSON-ready data.
        """
        partitions = {}
        last = None
        for (topic, partition), p in sorted(self._progress.items()):
            high = p.highwater
            lag = None if high is None else high - (p.committed or 0)
            partitions[f"{topic}-{partition}"] = {
                "records": p.records, "dead_letters": p.dead_letters, "files": p.files,
                "bytes": p.bytes, "position": p.consumed, "committed": p.committed,
                "highwater": high, "lag": lag,
                "last_commit": _iso(p.last_commit)}
            if p.last_commit is not None and (last is None or p.last_commit > last):
                last = p.last_commit
        stats = self.sink.stats
        return {"running": self._running, "group": self.group, "topics": self.topics,
                "rows_written": stats.rows_written, "rows_committed": stats.rows_committed,
                "files_written": stats.files_written, "bytes_written": stats.bytes_written,
                "dead_letters": sum(p["dead_letters"] for p in partitions.values()),
                "commits": self.commits, "lost_partitions": self.lost_partitions,
                "schema_changes": self.schema_changes, "fenced": self.fenced,
                "resumed_from_files": self.resumed_from_files,
                "last_commit": _iso(last), "partitions": partitions}


def _iso(when: float | None) -> str | None:
    return None if when is None else datetime.datetime.fromtimestamp(
        when, datetime.UTC).isoformat()


def service_memory_pool() -> None:
    """Make Arrow allocate from the system allocator in a consumer process, unless
    ``ARROW_DEFAULT_MEMORY_POOL`` chose a pool: pyarrow's default, mimalloc, keeps the pages
    freed by each of the consumer's threads (decoding, encoding, uploads), about 130 MiB
    more resident memory here for the same 30 MiB of Arrow data at most
    (benchmarks/bench_kafka.py). :func:`run` and ``aorc kafka`` call it; a program that
    runs :class:`KafkaToOrc` itself may too.
    """
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        pa.set_memory_pool(pa.system_memory_pool())


def _listener(pipe: KafkaToOrc, aiokafka: Any) -> Any:
    class Listener(aiokafka.ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            await pipe._revoked(list(revoked))

        async def on_partitions_assigned(self, assigned: Any) -> None:
            await pipe._assigned(list(assigned))

    return Listener()


async def run(*, handle_signals: bool = True, idle_polls: int | None = None,
              **options: Any) -> dict[str, Any]:
    """Run a :class:`KafkaToOrc` until SIGTERM or SIGINT, then flush, commit and return.

    Args:
        handle_signals: stop on SIGTERM/SIGINT.
        idle_polls: also stop after this many empty polls in a row.
        **options: the arguments of :class:`KafkaToOrc`.

    Returns:
        The final :meth:`KafkaToOrc.health`.
    """
    service_memory_pool()
    async with KafkaToOrc(**options) as pipe:
        await pipe.run(handle_signals=handle_signals, idle_polls=idle_polls)
    return pipe.health()
