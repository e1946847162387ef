"""Google Cloud Storage: the ``gs://`` / ``gcs://`` URL form and typed settings
(:mod:`aorc.io.gcs.config`), and reading, writing and listing through the JSON API
(:mod:`aorc.io.gcs.store`).
"""

from __future__ import annotations

from aorc.io.gcs.config import GCSConfig
from aorc.io.gcs.store import GCSOutput, GCSScheme, GCSStore

__all__ = ["GCSConfig", "GCSOutput", "GCSScheme", "GCSStore"]
