"""ORC Java through PySpark's JVM: what the reference reader sees in a file.

:class:`JavaOrc` opens files with ``org.apache.orc.OrcFile.createReader`` (the orc-core jar
that PySpark bundles) and turns what ORC Java reports - file, stripe and row-group
statistics, bloom filters - into plain Python values, so that tests can compare them with
values computed from the data. It also exposes ORC Java's bloom filter class and its Murmur3.

Every statistics object becomes a dict (see :func:`stats_dict`): ``kind`` (the Java class,
e.g. ``IntegerStatisticsImpl``), ``count``, ``has_null`` and the fields of that kind.
Readers are opened with ``convertToProlepticGregorian(true)``, so that dates and timestamps
of files written with the hybrid calendar (Spark) and the proleptic one (aorc) compare.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["JavaBloom", "JavaOrc", "assert_stats_equal", "stats_dict", "timestamp_nanos"]


@dataclass(frozen=True)
class JavaBloom:
    """A bloom filter as ORC Java holds it: ``k`` probes and its bit set as 64-bit words."""

    num_hash_functions: int
    words: np.ndarray  # uint64

    @property
    def num_bits(self) -> int:
        """The filter's size in bits."""
        return int(self.words.size) * 64


def timestamp_nanos(ts: Any) -> int | None:
    """Epoch nanoseconds of a ``java.sql.Timestamp`` (None stays None)."""
    if ts is None:
        return None
    return (int(ts.getTime()) // 1000) * 10**9 + int(ts.getNanos())


def _decimal(value: Any) -> decimal.Decimal | None:
    return None if value is None else decimal.Decimal(value.toString())


def _integer(s: Any) -> dict[str, Any]:
    return {
        "min": int(s.getMinimum()),
        "max": int(s.getMaximum()),
        "sum": int(s.getSum()) if s.isSumDefined() else None,
    }


def _double(s: Any) -> dict[str, Any]:
    return {"min": float(s.getMinimum()), "max": float(s.getMaximum()), "sum": float(s.getSum())}


def _string(s: Any) -> dict[str, Any]:
    return {
        "min": s.getMinimum(),
        "max": s.getMaximum(),
        "lower": s.getLowerBound(),
        "upper": s.getUpperBound(),
        "sum": int(s.getSum()),
    }


def _date(s: Any) -> dict[str, Any]:
    if s.getNumberOfValues() == 0:
        return {"min": None, "max": None}
    return {"min": int(s.getMinimumDayOfEpoch()), "max": int(s.getMaximumDayOfEpoch())}


def _timestamp(s: Any) -> dict[str, Any]:
    return {
        "min": timestamp_nanos(s.getMinimumUTC()),
        "max": timestamp_nanos(s.getMaximumUTC()),
        "min_local": timestamp_nanos(s.getMinimum()),
        "max_local": timestamp_nanos(s.getMaximum()),
    }


def _decimal_stats(s: Any) -> dict[str, Any]:
    return {
        "min": _decimal(s.getMinimum()),
        "max": _decimal(s.getMaximum()),
        "sum": _decimal(s.getSum()),
    }


def _collection(s: Any) -> dict[str, Any]:
    return {
        "min_children": int(s.getMinimumChildren()),
        "max_children": int(s.getMaximumChildren()),
        "total_children": int(s.getTotalChildren()),
    }


_FIELDS = {
    "IntegerStatisticsImpl": _integer,
    "DoubleStatisticsImpl": _double,
    "StringStatisticsImpl": _string,
    "BinaryStatisticsImpl": lambda s: {"sum": int(s.getSum())},
    "BooleanStatisticsImpl": lambda s: {
        "true_count": int(s.getTrueCount()),
        "false_count": int(s.getFalseCount()),
    },
    "DateStatisticsImpl": _date,
    "TimestampStatisticsImpl": _timestamp,
    "TimestampInstantStatisticsImpl": _timestamp,
    "DecimalStatisticsImpl": _decimal_stats,
    "Decimal64StatisticsImpl": _decimal_stats,
    "CollectionColumnStatisticsImpl": _collection,
    "ColumnStatisticsImpl": lambda s: {},
}


def stats_dict(s: Any) -> dict[str, Any]:
    """One ORC Java ``ColumnStatistics`` object as a dict (see the module docstring)."""
    kind = str(s.getClass().getSimpleName())
    out: dict[str, Any] = {
        "kind": kind,
        "count": int(s.getNumberOfValues()),
        "has_null": bool(s.hasNull()),
    }
    fields = _FIELDS.get(kind)
    if fields is None:
        raise AssertionError(f"unexpected ORC Java statistics class {kind}")
    out.update(fields(s))
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return bool(a == b) and type(a) is type(b)


def assert_stats_equal(
    actual: dict[str, Any], expected: dict[str, Any], where: str, *, exact_keys: bool = False
) -> None:
    """Assert that every key of ``expected`` has the same value in ``actual``.

    Floats compare equal when both are NaN; ``exact_keys`` also requires the same key sets.
    """
    if exact_keys and set(actual) != set(expected):
        raise AssertionError(f"{where}: keys differ: {sorted(actual)} != {sorted(expected)}")
    for key, want in expected.items():
        got = actual.get(key, "<missing>")
        if not _same(got, want):
            raise AssertionError(
                f"{where}: {key} is {got!r}, expected {want!r}\n"
                f"  actual:   {actual}\n  expected: {expected}"
            )


class JavaOrc:
    """ORC Java readers, statistics and bloom filters through a SparkSession's JVM."""

    def __init__(self, spark: Any) -> None:
        """Bind to the JVM of ``spark`` (a live SparkSession)."""
        self.jvm = spark._jvm
        self.gateway = spark.sparkContext._gateway
        self.conf = spark._jsc.hadoopConfiguration()
        self.orc = self.jvm.org.apache.orc

    # ------------------------------------------------------------------ readers

    @contextmanager
    def open(self, path: str | Path) -> Iterator[Any]:
        """An ``org.apache.orc.Reader`` of the local file ``path``, closed afterwards."""
        options = self.orc.OrcFile.readerOptions(self.conf).convertToProlepticGregorian(True)
        hadoop_path = self.jvm.org.apache.hadoop.fs.Path(str(path))
        reader = self.orc.OrcFile.createReader(hadoop_path, options)
        try:
            yield reader
        finally:
            reader.close()

    def file_info(self, path: str | Path) -> dict[str, Any]:
        """What the file's tail says, as ORC Java reads it."""
        with self.open(path) as reader:
            return {
                "rows": int(reader.getNumberOfRows()),
                "schema": str(reader.getSchema().toString()),
                "compression": str(reader.getCompressionKind().name()),
                "compression_size": int(reader.getCompressionSize()),
                "row_index_stride": int(reader.getRowIndexStride()),
                "stripe_rows": [int(s.getNumberOfRows()) for s in reader.getStripes()],
                "proleptic": bool(reader.writerUsedProlepticGregorian()),
                "file_version": str(reader.getFileVersion().getName()),
                "writer_version": str(reader.getWriterVersion().name()),
                "software_version": str(reader.getSoftwareVersion()),
                "metadata": {
                    str(key): self._buffer_bytes(reader.getMetadataValue(key))
                    for key in reader.getMetadataKeys()
                },
            }

    def _buffer_bytes(self, buffer: Any) -> bytes:
        out = self.jvm.java.io.ByteArrayOutputStream()
        self.jvm.java.nio.channels.Channels.newChannel(out).write(buffer.duplicate())
        return bytes(out.toByteArray())  # a byte[] result arrives as Python bytes

    def file_statistics(self, path: str | Path) -> list[dict[str, Any]]:
        """``reader.getStatistics()``: one dict per column id."""
        with self.open(path) as reader:
            return [stats_dict(s) for s in reader.getStatistics()]

    def stripe_statistics(self, path: str | Path) -> list[list[dict[str, Any]]]:
        """``reader.getStripeStatistics()``: per stripe, one dict per column id."""
        with self.open(path) as reader:
            return [
                [stats_dict(s) for s in stripe.getColumnStatistics()]
                for stripe in reader.getStripeStatistics()
            ]

    def _bools(self, size: int, true_at: Sequence[int]) -> Any:
        array = self.gateway.new_array(self.jvm.boolean, size)
        for i in true_at:
            array[i] = True
        return array

    def row_index(
        self, path: str | Path, stripe: int, columns: Sequence[int], *, blooms: bool = False,
        stats: bool = True,
    ) -> dict[int, dict[str, Any]]:
        """Row-group statistics and/or bloom filters of ``columns`` in a stripe.

        Reads them as ORC Java's record reader does (``RecordReaderImpl.readRowIndex``),
        deserializes the statistics with ``ColumnStatisticsImpl.deserialize`` and the filters
        with ``BloomFilterIO.deserialize``.

        Returns:
            column id -> ``{"stats": [dict per row group], "blooms": [JavaBloom | None per
            row group] | None, "bloom_kind": str | None}``.
        """
        impl = self.orc.impl
        with self.open(path) as reader:
            schema = reader.getSchema()
            size = schema.getMaximumId() + 1
            rows = reader.rows()
            try:
                bloom_columns = self._bools(size, columns if blooms else [])
                index = rows.readRowIndex(stripe, None, bloom_columns)
                footer = rows.readStripeFooter(reader.getStripes().get(stripe))
                proleptic = reader.writerUsedProlepticGregorian()
                out: dict[int, dict[str, Any]] = {}
                for col in columns:
                    subtype = schema.findSubtype(col)
                    entries = index.getRowGroupIndex()[col].getEntryList() if stats else []
                    group_stats = [
                        stats_dict(
                            impl.ColumnStatisticsImpl.deserialize(
                                subtype, e.getStatistics(), proleptic, True
                            )
                        )
                        for e in entries
                    ]
                    out[col] = {"stats": group_stats, "blooms": None, "bloom_kind": None}
                    if blooms:
                        out[col].update(self._blooms(reader, index, footer, col, subtype))
                return out
            finally:
                rows.close()

    def _blooms(
        self, reader: Any, index: Any, footer: Any, col: int, subtype: Any
    ) -> dict[str, Any]:
        kind = index.getBloomFilterKinds()[col]
        bfi = index.getBloomFilterIndex()[col]
        if kind is None or bfi is None:
            return {"blooms": None, "bloom_kind": None}
        filters = []
        for proto in bfi.getBloomFilterList():
            bf = self.orc.util.BloomFilterIO.deserialize(
                kind, footer.getColumns(col), reader.getWriterVersion(), subtype.getCategory(),
                proto,
            )
            filters.append(None if bf is None else self.bloom(bf))
        return {"blooms": filters, "bloom_kind": str(kind.name())}

    def rows_selected(self, path: str | Path, column: str, value: int | str) -> int:
        """Rows ORC Java's reader returns for ``column = value`` as a search argument: the
        rows of the row groups its statistics and bloom filters cannot rule out.

        Integers are passed as LONG literals; py4j makes a Java ``Long`` only of values
        outside the int range, so integer literals must lie outside it.
        """
        from py4j.java_gateway import get_field

        sarg_pkg = self.jvm.org.apache.hadoop.hive.ql.io.sarg
        if isinstance(value, int):
            if -(2**31) <= value < 2**31:
                raise ValueError("integer literals must lie outside the 32-bit range")
            leaf_type = sarg_pkg.PredicateLeaf.Type.LONG
        else:
            leaf_type = sarg_pkg.PredicateLeaf.Type.STRING
        builder = sarg_pkg.SearchArgumentFactory.newBuilder()
        sarg = builder.startAnd().equals(column, leaf_type, value).end().build()
        names = self.gateway.new_array(self.jvm.String, 1)
        names[0] = column
        with self.open(path) as reader:
            rows = reader.rows(reader.options().searchArgument(sarg, names))
            try:
                batch = reader.getSchema().createRowBatch()
                total = 0
                while rows.nextBatch(batch):
                    total += int(get_field(batch, "size"))
                return total
            finally:
                rows.close()

    # ------------------------------------------------------------------ bloom filters
    # ORC Java's writers add one value at a time. One py4j call per value would take seconds
    # for a few thousand values, so values travel as one array and a java.util.stream loop in
    # the JVM calls the filter's own method (bound with java.lang.invoke) on each of them.

    def new_bloom_filter(self, expected_entries: int, fpp: float) -> Any:
        """A new ``org.apache.orc.util.BloomFilterUtf8`` sized as ORC Java's writers size it."""
        return self.orc.util.BloomFilterUtf8(int(expected_entries), float(fpp))

    def bloom(self, bf: Any) -> JavaBloom:
        """The bit set and probe count of a Java bloom filter."""
        return JavaBloom(int(bf.getNumHashFunctions()), self.long_array(bf.getBitSet()))

    def long_array(self, array: Any) -> np.ndarray:
        """A Java ``long[]`` as a uint64 numpy array, transferred in one piece."""
        nio = self.jvm.java.nio
        buffer = nio.ByteBuffer.allocate(8 * len(array))
        buffer.order(nio.ByteOrder.LITTLE_ENDIAN)
        buffer.asLongBuffer().put(array)
        return np.frombuffer(bytes(buffer.array()), dtype="<u8").astype(np.uint64)

    def _java_array(self, values: np.ndarray, kind: str) -> Any:
        """A Java long[]/double[]/int[] holding ``values``."""
        dtype, element, view = {
            "long": ("<i8", self.jvm.long, "asLongBuffer"),
            "double": ("<f8", self.jvm.double, "asDoubleBuffer"),
            "int": ("<i4", self.jvm.int, "asIntBuffer"),
        }[kind]
        data = np.ascontiguousarray(values, dtype=dtype)
        array = self.gateway.new_array(element, len(data))
        if len(data):
            nio = self.jvm.java.nio
            buffer = nio.ByteBuffer.wrap(data.tobytes()).order(nio.ByteOrder.LITTLE_ENDIAN)
            getattr(buffer, view)().get(array)
        return array

    def _handle(self, owner: Any, name: str, ret: Any, *params: Any) -> Any:
        invoke = self.jvm.java.lang.invoke
        method_type = invoke.MethodType.methodType(ret, self._classes(params))
        return invoke.MethodHandles.publicLookup().findVirtual(owner, name, method_type)

    def _classes(self, classes: Sequence[Any]) -> Any:
        array = self.gateway.new_array(self.jvm.java.lang.Class, len(classes))
        for i, cls in enumerate(classes):
            array[i] = cls
        return array

    def _objects(self, values: Sequence[Any]) -> Any:
        array = self.gateway.new_array(self.jvm.java.lang.Object, len(values))
        for i, value in enumerate(values):
            array[i] = value
        return array

    def _proxy(self, interface: str, handle: Any) -> Any:
        cls = self.jvm.java.lang.Class.forName(interface)
        return self.jvm.java.lang.invoke.MethodHandleProxies.asInterfaceInstance(cls, handle)

    def _per_piece(self, handle: Any, values: Sequence[bytes]) -> tuple[Any, int]:
        """``handle`` of (byte[], int, int) turned into one of the piece index (int)."""
        invoke = self.jvm.java.lang.invoke
        handles = invoke.MethodHandles
        lengths = np.array([len(v) for v in values], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(values) else lengths
        getter = handles.arrayElementGetter(self.jvm.java.lang.Class.forName("[I"))
        starts_array = self._objects([self._java_array(starts, "int")])
        lengths_array = self._objects([self._java_array(lengths, "int")])
        get_start = handles.insertArguments(getter, 0, starts_array)
        get_length = handles.insertArguments(getter, 0, lengths_array)
        bound = handles.insertArguments(handle, 0, self._objects([bytearray(b"".join(values))]))
        pair = handles.filterArguments(bound, 0, self._handles([get_start, get_length]))
        ret = bound.type().returnType()
        int_type = self.jvm.java.lang.Integer.TYPE
        index_type = invoke.MethodType.methodType(ret, self._classes([int_type]))
        reorder = self.gateway.new_array(self.jvm.int, 2)
        return handles.permuteArguments(pair, index_type, reorder), len(values)

    def _handles(self, handles: Sequence[Any]) -> Any:
        array = self.gateway.new_array(self.jvm.java.lang.invoke.MethodHandle, len(handles))
        for i, h in enumerate(handles):
            array[i] = h
        return array

    def _for_each_piece(self, handle: Any, values: Sequence[bytes]) -> None:
        indexed, n = self._per_piece(handle, values)
        consumer = self._proxy("java.util.function.IntConsumer", indexed)
        self.jvm.java.util.stream.IntStream.range(0, n).forEach(consumer)

    def bloom_add_longs(self, bf: Any, values: np.ndarray) -> None:
        """``bf.addLong(v)`` for every value (integers, dates, timestamp millis)."""
        lang = self.jvm.java.lang
        handle = self._handle(bf.getClass(), "addLong", lang.Void.TYPE, lang.Long.TYPE).bindTo(bf)
        consumer = self._proxy("java.util.function.LongConsumer", handle)
        array = self._java_array(values, "long")
        self.jvm.java.util.stream.LongStream.of(array).forEach(consumer)

    def bloom_add_doubles(self, bf: Any, values: np.ndarray, *, as_float: bool = False) -> None:
        """``bf.addDouble(v)`` for every value; ``as_float`` first casts to float in Java
        (``(double) (float) v``), as ORC Java's float writer does."""
        lang = self.jvm.java.lang
        invoke = lang.invoke
        add = self._handle(bf.getClass(), "addDouble", lang.Void.TYPE, lang.Double.TYPE)
        handle = add.bindTo(bf)
        if as_float:
            method_type = invoke.MethodType.methodType
            to_float = method_type(lang.Void.TYPE, self._classes([lang.Float.TYPE]))
            to_double = method_type(lang.Void.TYPE, self._classes([lang.Double.TYPE]))
            explicit = invoke.MethodHandles.explicitCastArguments
            handle = explicit(explicit(handle, to_float), to_double)
        consumer = self._proxy("java.util.function.DoubleConsumer", handle)
        array = self._java_array(values, "double")
        self.jvm.java.util.stream.DoubleStream.of(array).forEach(consumer)

    def bloom_add_bytes(self, bf: Any, values: Sequence[bytes]) -> None:
        """``bf.addBytes(value, 0, len)`` for every value (strings as UTF-8, binary)."""
        lang = self.jvm.java.lang
        handle = self._handle(
            bf.getClass(), "addBytes", lang.Void.TYPE, lang.Class.forName("[B"),
            lang.Integer.TYPE, lang.Integer.TYPE,
        ).bindTo(bf)
        self._for_each_piece(handle, values)

    def bloom_add_decimals(self, bf: Any, texts: Sequence[str]) -> None:
        """What ORC Java's decimal writer adds for each decimal:
        ``bf.addString(new HiveDecimalWritable(text).toString())``."""
        lang = self.jvm.java.lang
        handles = lang.invoke.MethodHandles
        method_type = lang.invoke.MethodType.methodType
        writable = lang.Class.forName("org.apache.hadoop.hive.serde2.io.HiveDecimalWritable")
        string = lang.Class.forName("java.lang.String")
        byte_array = lang.Class.forName("[B")
        lookup = handles.publicLookup()
        add = self._handle(bf.getClass(), "addString", lang.Void.TYPE, string).bindTo(bf)
        to_string = lookup.findVirtual(writable, "toString", method_type(string, self._classes([])))
        void = lang.Void.TYPE
        parse = lookup.findConstructor(writable, method_type(void, self._classes([string])))
        decode = lookup.findConstructor(
            string,
            method_type(void, self._classes([byte_array, lang.Integer.TYPE, lang.Integer.TYPE])),
        )
        handle = handles.filterArguments(add, 0, self._handles([to_string]))
        handle = handles.filterArguments(handle, 0, self._handles([parse]))
        handle = handles.collectArguments(handle, 0, decode)
        self._for_each_piece(handle, [t.encode("ascii") for t in texts])

    def murmur3_hash64_many(self, values: Sequence[bytes]) -> np.ndarray:
        """``Murmur3.hash64(value)`` of every value, as int64."""
        lang = self.jvm.java.lang
        method_type = lang.invoke.MethodType.methodType(
            lang.Long.TYPE,
            self._classes([lang.Class.forName("[B"), lang.Integer.TYPE, lang.Integer.TYPE]),
        )
        murmur = lang.Class.forName("org.apache.orc.util.Murmur3")
        handle = lang.invoke.MethodHandles.publicLookup().findStatic(murmur, "hash64", method_type)
        indexed, n = self._per_piece(handle, values)
        function = self._proxy("java.util.function.IntToLongFunction", indexed)
        hashes = self.jvm.java.util.stream.IntStream.range(0, n).mapToLong(function).toArray()
        return self.long_array(hashes).view(np.int64)

    def murmur3_hash64(self, data: bytes) -> int:
        """``org.apache.orc.util.Murmur3.hash64(data)`` (signed)."""
        return int(self.orc.util.Murmur3.hash64(bytearray(data)))
