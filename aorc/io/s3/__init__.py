"""Amazon S3 and S3-compatible stores: the ``s3://`` / ``s3a://`` URL form and typed settings
(:mod:`aorc.io.s3.config`), the pooled aiobotocore clients and error mapping
(:mod:`aorc.io.s3.clients`), reading and writing (:mod:`aorc.io.s3.store`) and the optional
obstore engine (:mod:`aorc.io.s3.obstore_client`).
"""

from __future__ import annotations

from aorc.io.s3.config import S3Config
from aorc.io.s3.store import PARTS_PER_DOUBLING, S3Output, S3Store

__all__ = ["PARTS_PER_DOUBLING", "S3Config", "S3Output", "S3Store"]
