"""A Hadoop KMS client: the key provider of ORC Java's default set-up (``kms://`` key
provider paths) and of Ranger KMS, over the KMS REST API (``/kms/v1/...``).

The master keys never leave the KMS. A local key is made as ORC Java makes it with any
Hadoop key provider: random bytes ``e`` of the key's length are stored in the file, and the
local key is the KMS's decryption of the "encrypted key" ``e`` with the IV ``e[:16]``
(``POST /v1/keyversion/NAME@VERSION/_eek?eek_op=decrypt``; Hadoop flips the IV's bits, so
the IV sent is ``e[:16]`` with its bits flipped). Files written with it read in ORC Java
through ``KMSClientProvider`` and the other way round; with the same master key they are
byte-compatible with :class:`aorc.InMemoryKeys` too.

Authentication: Hadoop's simple (pseudo) authentication, the ``user.name`` query parameter;
a Kerberos or proxy set-up needs its own session (``session=``, an ``aiohttp``
ClientSession carrying the credentials).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from aorc.errors import AccessDeniedError, StoreError
from aorc.keys.base import ALGORITHMS, KeyVersion, LocalKey

if TYPE_CHECKING:  # aiohttp is imported on the first call: `import aorc` stays light
    import aiohttp

__all__ = ["HadoopKMS"]

_IV_LENGTH = 16


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_")
                                    + "=" * (-len(text) % 4))


def _flip(iv: bytes) -> bytes:
    return bytes(b ^ 0xFF for b in iv)


class HadoopKMS:
    """A :class:`~aorc.keys.KeyProvider` backed by a Hadoop (or Ranger) KMS.

    Args:
        url: the KMS's base URL, e.g. ``http://kms.example.com:9600/kms`` (the part before
            ``/v1``); ``kms://http@host:9600/kms`` (Hadoop's provider path) works too.
        user: the user name of Hadoop's simple authentication (``user.name``; default: the
            ``HADOOP_USER_NAME`` or ``USER`` environment variable).
        session: an ``aiohttp.ClientSession`` to use (credentials, TLS); by default one is
            made per call.
        random_bytes: the source of new encrypted keys (``os.urandom``).

    Raises:
        ValueError: a URL of another form.
    """

    def __init__(self, url: str, *, user: str | None = None,
                 session: aiohttp.ClientSession | None = None,
                 random_bytes: Callable[[int], bytes] = os.urandom) -> None:
        if url.startswith("kms://"):
            scheme, _, rest = url[len("kms://"):].partition("@")
            url = f"{scheme}://{rest}"
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"a KMS URL is http(s)://HOST:PORT/kms or kms://http@HOST:PORT/kms, "
                             f"not {url!r}")
        self.url = url.rstrip("/")
        self.user = user or os.environ.get("HADOOP_USER_NAME") or os.environ.get("USER") or "aorc"
        self._session = session
        self._random = random_bytes

    def __repr__(self) -> str:
        return f"HadoopKMS({self.url!r}, user={self.user!r})"

    async def _call(self, method: str, path: str, params: dict[str, str] | None = None,
                    body: Any = None) -> Any:
        import aiohttp

        query = {"user.name": self.user, **(params or {})}
        url = f"{self.url}/v1/{path}"
        own = self._session is None
        session = aiohttp.ClientSession() if own else self._session
        assert session is not None
        try:
            async with session.request(method, url, params=query, json=body) as resp:
                if resp.status in (401, 403):
                    raise AccessDeniedError(f"KMS {self.url}: {method} {path} refused "
                                            f"({resp.status})")
                if resp.status == 404:
                    return None
                if resp.status != 200:
                    raise StoreError(f"KMS {self.url}: {method} {path} failed with HTTP "
                                     f"{resp.status}")
                return await resp.json(content_type=None)
        except aiohttp.ClientError as exc:
            raise StoreError(f"KMS {self.url}: {method} {path}: {type(exc).__name__}") from None
        finally:
            if own:
                await session.close()

    async def key_names(self) -> list[str]:
        """The KMS's key names (``GET keys/names``).

        Returns:
            The names, sorted.
        """
        names = await self._call("GET", "keys/names")
        return sorted(str(n) for n in names or [])

    async def current_version(self, name: str) -> KeyVersion:
        """The newest version of ``name`` from the KMS's key metadata, whose ``length``
        (128 or 256 bits) gives the algorithm.

        Args:
            name: a key name the KMS holds.

        Returns:
            That version.

        Raises:
            KeyError: the KMS has no such key.
        """
        meta = await self._call("GET", f"key/{quote(name, safe='')}/_metadata")
        if not meta:
            raise KeyError(f"the KMS has no key {name!r}")
        bits = int(meta.get("length", 128))
        algorithm = "AES_CTR_256" if bits == 256 else "AES_CTR_128"
        return KeyVersion(name, int(meta.get("versions", 1)) - 1, algorithm)

    async def _decrypt(self, key: KeyVersion, encrypted: bytes) -> bytes | None:
        body = {"name": key.name, "iv": _b64(_flip(encrypted[:_IV_LENGTH])),
                "material": _b64(encrypted)}
        version = quote(f"{key.name}@{key.version}", safe="")
        found = await self._call("POST", f"keyversion/{version}/_eek", {"eek_op": "decrypt"},
                                 body)
        if not found or "material" not in found:
            return None
        return _unb64(found["material"])

    async def create_local_key(self, key: KeyVersion) -> LocalKey:
        """Random bytes as the stored form, decrypted by the KMS (``eek_op=decrypt``) into
        the local key, as ORC Java's ``KMSClientProvider`` does.

        Args:
            key: a key version the KMS holds.

        Returns:
            The local key and its stored form.

        Raises:
            KeyError: the KMS has no such key version.
        """
        encrypted = self._random(ALGORITHMS[key.algorithm])
        local = await self._decrypt(key, encrypted)
        if local is None:
            raise KeyError(f"the KMS has no key {key.name!r} version {key.version}")
        return LocalKey(local, encrypted)

    async def decrypt_local_key(self, key: KeyVersion, encrypted: bytes) -> bytes | None:
        """The KMS's decryption (``eek_op=decrypt``) of a stored local key.

        Args:
            key: the key version a file names.
            encrypted: the stored form from the file.

        Returns:
            The local key; ``None`` when the KMS does not decrypt it (no such version).
        """
        if len(encrypted) < _IV_LENGTH:
            return None
        return await self._decrypt(key, bytes(encrypted))

    async def generate_encrypted_keys(self, name: str, count: int = 1
                                      ) -> list[tuple[str, bytes, bytes]]:
        """New data keys from the KMS (``eek_op=generate``), as Hadoop's
        ``generateEncryptedKey`` returns them (HDFS's use; ORC's local keys are made by
        :meth:`create_local_key`).

        Args:
            name: the master key's name.
            count: how many keys.

        Returns:
            ``(version name, iv, encrypted material)`` per key.
        """
        found = await self._call("GET", f"key/{quote(name, safe='')}/_eek",
                                 {"eek_op": "generate", "num_keys": str(count)})
        return [(str(k["versionName"]), _unb64(k["iv"]),
                 _unb64(k["encryptedKeyVersion"]["material"])) for k in found or []]
