"""Azure Blob Storage and ADLS Gen2: the ``az://`` / ``abfs://`` / ``abfss://`` URL forms and
typed settings (:mod:`aorc.io.azure.config`), and reading, writing and listing through the
Blob REST API (:mod:`aorc.io.azure.store`).
"""

from __future__ import annotations

from aorc.io.azure.config import AzureConfig
from aorc.io.azure.store import BLOCKS_PER_DOUBLING, AzureOutput, AzureScheme, AzureStore

__all__ = ["BLOCKS_PER_DOUBLING", "AzureConfig", "AzureOutput", "AzureScheme", "AzureStore"]
