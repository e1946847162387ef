"""Where partitions resume when their consumer group has no committed offsets: after the
files already written (their names and metadata tell the offsets they hold).

A consumer group can lose its offsets while the files stay: a broker that forgot them (a
memory-storage broker restarted, offsets expired by ``offsets.retention.minutes``), a new
group name. Reading such a partition from its earliest offset would rewrite every file (the
same names, so exactly once still holds when the records are all still there) or, with the
oldest records gone (retention), write files overlapping the old ones. :func:`files_positions`
finds, for each partition, the offset after the last cut written: the file with the greatest
first offset in its name belongs to the stream's last cut, whose offset its metadata records
(``aorc.sink.cut_offset``, see :mod:`aorc.sink.rolling`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aorc.errors import ObjectNotFoundError
from aorc.io.registry import list_files
from aorc.read.reader import open_reader
from aorc.sink.plan import file_name

__all__ = ["files_positions"]

_FIRST = len("00000000000000000000.orc")


async def files_positions(dest: str, storage_options: Mapping[str, Any] | None,
                          streams: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The offset each stream resumes at (its last cut's offset + 1), from the files under
    ``dest``; streams without files are left out.

    Args:
        dest: the folder or object-store prefix of the files.
        storage_options: settings of the store.
        streams: ``(topic, partition)`` pairs.

    Returns:
        ``{(topic, partition): next offset}``.
    """
    try:
        listed = await list_files(dest, storage_options)
    except ObjectNotFoundError:
        return {}
    prefixes = {file_name(t, p, 0)[:-_FIRST]: (t, p) for t, p in streams}
    last: dict[tuple[str, int], tuple[int, str]] = {}
    for info in listed:
        name = info.path.rsplit("/", 1)[-1]
        if not name.endswith(".orc") or len(name) <= _FIRST:
            continue
        key = prefixes.get(name[:-_FIRST])
        digits = name[-_FIRST:-4]
        if key is None or not digits.isdigit():
            continue
        first = int(digits)
        if key not in last or first > last[key][0]:
            last[key] = (first, info.path)
    out = {}
    for key, (_first, path) in last.items():
        async with open_reader(path, storage_options=storage_options) as reader:
            meta = reader.metadata
        value = meta.get("aorc.sink.cut_offset")
        if value is not None:  # (not a rolling sink's file: read the partition again)
            out[key] = int(value) + 1
    return out
