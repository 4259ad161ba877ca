"""File hashes (what a download is checked against) and logical content digests (what a rebuild is checked against).

A Parquet file's bytes depend on the writer library's version; the logical digest depends only on the values, so a
local rebuild made with another pyarrow is still verifiable.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

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


class ContentDigest:
    """The ``sha256-columns-v1`` digest built up a column at a time, each column's values a block of rows at a time,
    so a column never has to be in memory whole.

    :meth:`start` opens a column (its header line), :meth:`update` feeds its next rows in C order, and
    :meth:`hexdigest` gives the digest of the columns fed so far; :func:`content_digest` is this fed whole columns.
    """

    def __init__(self) -> None:
        self._sha256 = hashlib.sha256()
        self._column = ""
        self._dtype: np.dtype[Any] | None = None
        self._rows_left = 0

    def start(self, name: str, dtype: DTypeLike, length: int) -> None:
        """Open column ``name`` of ``length`` rows of ``dtype`` (any byte order: the digest is over little-endian).

        Raises:
            ValueError: if the previous column has not had all its rows yet.
        """
        self._require_complete(f"start column {name!r}")
        little = np.dtype(dtype).newbyteorder("<")
        self._sha256.update(f"{name}:{little.str}:{length}\n".encode())
        self._column, self._dtype, self._rows_left = name, little, int(length)

    def update(self, values: np.ndarray) -> None:
        """Feed the open column's next rows (``values[i]`` is one row: a value, or a row of a matrix).

        Raises:
            ValueError: if no column is open, ``values`` has another dtype than the column's (byte order aside), or
                holds more rows than the column has left.
        """
        array = np.asarray(values)
        if self._dtype is None or array.dtype.newbyteorder("<") != self._dtype:
            raise ValueError(f"rows of dtype {array.dtype.str} fed to column {self._column!r} of dtype "
                             f"{self._dtype.str if self._dtype is not None else None}; start() a column of that "
                             "dtype, or cast the rows")
        if len(array) > self._rows_left:
            raise ValueError(f"{len(array)} rows fed to column {self._column!r}, which has {self._rows_left} left; "
                             "start() it with its whole length")
        # flat first: a memoryview of an empty matrix ([0, d] or [n, 0]) cannot be cast to bytes
        flat = np.ascontiguousarray(array, dtype=self._dtype).reshape(-1)
        self._sha256.update(flat.data.cast("B"))  # .data: memoryview(flat)
        self._rows_left -= len(array)

    def hexdigest(self) -> str:
        """The hex digest of the columns fed so far.

        Raises:
            ValueError: if the open column has not had all its rows yet.
        """
        self._require_complete("take the digest")
        return self._sha256.hexdigest()

    def _require_complete(self, action: str) -> None:
        if self._rows_left:
            raise ValueError(f"cannot {action}: column {self._column!r} still lacks {self._rows_left} rows; feed "
                             "them with update() first")


def content_digest(columns: Mapping[str, np.ndarray]) -> str:
    """Logical digest of named columns, in the mapping's order (``sha256-columns-v1``).

    For each column: a header line ``name:dtype:length\\n`` (dtype as little-endian numpy type string), then the
    column's values as contiguous little-endian bytes. Order, names, dtypes and lengths all change the digest.
    :class:`ContentDigest` computes the same digest fed a block of rows at a time.
    """
    digest = ContentDigest()
    for name, values in columns.items():
        array = np.asarray(values)
        digest.start(name, array.dtype, len(array))
        digest.update(array)
    return digest.hexdigest()
