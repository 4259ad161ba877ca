"""File hashes (what a download is checked against) and logical content digests (what a rebuild is checked against).

A Parquet file's bytes depend on the writer library's version; the logical digest depends only on the values, so a
local rebuild made with another pyarrow is still verifiable.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

import numpy as np

DIGEST_ALGORITHM = "sha256-columns-v1"
_CHUNK = 1 << 20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def git_blob_sha1(data: bytes) -> str:
    """The object id git (and the Hub, for non-LFS files) gives ``data``: sha1 of ``blob <size>\\0`` + data."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def column_sha256(values: np.ndarray) -> str:
    """sha256 of one column's C-order little-endian bytes (the per-array hashes some manifests list)."""
    array = np.asarray(values)
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    # ndarray.data is memoryview(array); numpy's stubs type ndarray as a buffer only for Python >= 3.12
    return hashlib.sha256(little.data.cast("B")).hexdigest()


def content_digest(columns: Mapping[str, np.ndarray]) -> str:
    """Logical digest of named columns, in the mapping's order (``sha256-columns-v1``).

    For each column: a header line ``name:dtype:length\\n`` (dtype as little-endian numpy type string), then the
    column's values as contiguous little-endian bytes. Order, names, dtypes and lengths all change the digest.
    """
    digest = hashlib.sha256()
    for name, values in columns.items():
        array = np.asarray(values)
        little = array.dtype.newbyteorder("<")
        digest.update(f"{name}:{little.str}:{len(array)}\n".encode())
        digest.update(np.ascontiguousarray(array, dtype=little).data.cast("B"))  # .data: memoryview(array)
    return digest.hexdigest()
