"""A consumer process of the Kafka crash test: runs aorc.kafka.KafkaToOrc and SIGKILLs itself
after a given number of batches, once it has committed and holds rows not committed yet.

Usage: python kafka_child.py BOOTSTRAP TOPIC GROUP DEST KILL_AFTER_BATCHES
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from aorc.kafka import KafkaToOrc

__all__ = ["main"]


async def main(bootstrap: str, topic: str, group: str, dest: str, kill_after: int) -> None:
    """Consume until killed (the kill is the test's event, not a timer)."""
    def maybe_kill(pipe: KafkaToOrc) -> None:
        if (pipe.batches >= kill_after and pipe.commits >= 1
                and pipe.sink.stats.rows_pending > 0):
            sys.stdout.write(f"killing after {pipe.batches} batches, {pipe.commits} commits\n")
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)

    async with KafkaToOrc(bootstrap_servers=bootstrap, topics=[topic], group=group,
                          dest=dest, schema="struct<n:int,s:string>", max_rows=200,
                          dead_letter=dest + "-dead", poll_ms=200, max_records=100,
                          consumer_options={"session_timeout_ms": 2000,
                                            "heartbeat_interval_ms": 500,
                                            "max_partition_fetch_bytes": 4096}) as pipe:
        pipe.on_batch = maybe_kill
        await pipe.run(idle_polls=50)
    sys.stdout.write("finished without being killed\n")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5], int(sys.argv[5])))
