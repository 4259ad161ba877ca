"""Reading artifact files back into named numpy columns (the one place that decodes Parquet and HDF5)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub.errors import MissingExtraError

#: the encodingFormat of HDF5 artifacts; their arrays are read in place, never copied into derived column files
HDF5_ENCODING = "application/x-hdf5"


#: rows of one column decoded at a time by :func:`parquet_column_blocks` (a negatives row group of 1M queries x 20
#: is 80 MB decoded; 64k rows of it, 5 MB)
BLOCK_ROWS = 1 << 16


def _to_numpy(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    if pa.types.is_fixed_size_list(column.type):
        # a fixed-size list column is a rectangular matrix (e.g. negatives [n_queries, q]): rows x list_size
        joined = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        return joined.flatten().to_numpy(zero_copy_only=False).reshape(len(column), column.type.list_size)
    return column.to_numpy(zero_copy_only=False) if isinstance(column, pa.Array) else column.to_numpy()


def open_parquet(path: str | os.PathLike[str]) -> pq.ParquetFile:
    """A Parquet file opened to be read a block at a time: column chunks streamed through a 1 MiB buffer instead of
    read whole (pyarrow's default reads a row group's whole column chunk before decoding any of it)."""
    return pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)


def parquet_column_blocks(parquet: pq.ParquetFile, column: str, rows: int = BLOCK_ROWS) -> Iterator[np.ndarray]:
    """Column ``column`` of a Parquet file opened by :func:`open_parquet` as numpy arrays of at most ``rows`` rows
    each, in order (a fixed-size list as ``[rows, size]``): the memory a whole column, or even a whole row group of
    it, would take is never needed."""
    for batch in parquet.iter_batches(batch_size=rows, columns=[column]):
        yield _to_numpy(batch.column(0))


def read_parquet_columns(path: str | os.PathLike[str], names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Read ``names`` from a Parquet file as contiguous numpy arrays, in that order (fixed-size lists as 2-D)."""
    table = pq.read_table(path, columns=list(names))
    return {name: _to_numpy(table.column(name)) for name in names}


def import_h5py(needed_for: str) -> Any:
    """The h5py module.

    Raises:
        MissingExtraError: naming the ``hdf5`` extra if h5py is not installed.
    """
    try:
        import h5py
    except ModuleNotFoundError as exc:
        raise MissingExtraError("h5py", "hdf5", needed_for) from exc
    return h5py


def read_hdf5_arrays(path: str | os.PathLike[str], names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Read the datasets ``names`` of an HDF5 file into numpy arrays, in that order.

    Raises:
        MissingExtraError: if h5py is not installed.
        OSError: if the file is not HDF5 or lacks one of ``names`` (h5py raises ``KeyError``, re-raised as OSError).
    """
    h5py = import_h5py(f"reading {os.fspath(path)!r}")
    with h5py.File(path, "r") as handle:
        try:
            return {name: handle[name][()] for name in names}
        except KeyError as exc:
            raise OSError(f"{os.fspath(path)!r} has no dataset {exc}") from exc


def read_columns(path: str | os.PathLike[str], encoding: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Decode ``names`` from an artifact of the given ``encodingFormat`` (HDF5 datasets or Parquet columns)."""
    if encoding == HDF5_ENCODING:
        return read_hdf5_arrays(path, names)
    return read_parquet_columns(path, names)
