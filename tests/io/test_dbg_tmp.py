import asyncio
from aorc.io import open_output
from helpers.store_harness import make_backend

async def test_dbg(request):
    b = make_backend("gs", request)
    out = open_output(b.url("big.bin"), {**b.options, "part_size": 5*1024*1024})
    await out.write(b"x" * (5*1024*1024 + 1))
    for i in range(50):
        await asyncio.sleep(0.05)
    print([(r.method, r.target[:120], r.status, r.end > 0) for r in b.proxy.log])
    print(out._inflight, out.upload_id)
    await out.abort()
