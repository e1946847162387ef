"""Key providers for ORC column encryption: the :class:`KeyProvider` protocol,
:class:`InMemoryKeys` (ORC Java's ``InMemoryKeystore``) and a Hadoop KMS client.

They sit at the edge with the stores (:mod:`aorc.io`) and know nothing of the ORC format;
the cipher layout is :mod:`aorc.format.encryption`.
"""

from aorc.keys.base import ALGORITHMS, KeyProvider, KeyVersion, LocalKey
from aorc.keys.kms import HadoopKMS
from aorc.keys.memory import InMemoryKeys, parse_key_spec, read_key_specs

__all__ = [
    "ALGORITHMS",
    "HadoopKMS",
    "InMemoryKeys",
    "KeyProvider",
    "KeyVersion",
    "LocalKey",
    "parse_key_spec",
    "read_key_specs",
]
