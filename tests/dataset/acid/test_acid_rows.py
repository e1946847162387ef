"""The delete-event lookup of :class:`aorc.dataset.acid.rows.DeleteSet` against a plain
Python set of keys: duplicate events, several delete files, write ids too large for the
combined sort key, and row ids consecutive (a whole file), sorted with gaps (a filtered
read) or in any order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from aorc.dataset.acid.rows import DeleteSet, packed_keys


@pytest.mark.parametrize("big_write_ids", [False, True])
def test_delete_set_matches_a_set_of_keys(big_write_ids: bool) -> None:
    rng = np.random.default_rng(7)
    base = (1 << 45) if big_write_ids else 0
    sources = [(base + w, b * 4096) for w in (3, 5, 9) for b in (0, 1)]
    files, truth = [], set()
    for _ in range(4):  # four delete files, overlapping
        keys = [(w, b, int(r)) for w, b in sources for r in rng.integers(0, 2000, 150)]
        truth.update(keys)
        w, b, r = (np.array(c, np.int64) for c in zip(*keys, strict=True))
        files.append(packed_keys(w, b, r))
    deletes = DeleteSet(files)
    assert len(deletes) == len(truth)
    assert sorted(tuple(int(x) for x in np.frombuffer(k, np.int64))
                  for k in deletes.keys.to_pylist()) == sorted(truth)
    for w, b in sources:
        assert deletes.row_ids(w, b).tolist() == sorted(r for tw, tb, r in truth
                                                        if (tw, tb) == (w, b))
        cases = {"consecutive": np.arange(100, 1900, dtype=np.int64),
                 "gaps": np.sort(rng.choice(2000, 700, replace=False)).astype(np.int64),
                 "any order": rng.permutation(2000).astype(np.int64)[:900]}
        for name, ids in cases.items():
            mask = deletes.kept_rows(w, b, pa.chunked_array([ids[:300], ids[300:]]))
            assert mask is not None
            want = [(w, b, int(r)) not in truth for r in ids]
            assert mask.to_pylist() == want, name
    assert deletes.kept_rows(base + 4, 0, pa.array([1, 2], pa.int64())) is None
    assert not deletes.touches((base + 6, base + 8), (0, 1 << 30))
    assert deletes.touches((base + 5, base + 5), (4096, 4096))
    assert len(DeleteSet([])) == 0 and DeleteSet([]).keys is None
