"""Reading artifact files back into named numpy columns (the one place that decodes Parquet and HDF5)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tgbhub.errors import MissingExtraError

#: the encodingFormat of HDF5 artifacts; their arrays are read in place, never copied into derived column files
HDF5_ENCODING = "application/x-hdf5"


def _to_numpy(column: pa.ChunkedArray) -> np.ndarray:
    if pa.types.is_fixed_size_list(column.type):
        # a fixed-size list column is a rectangular matrix (e.g. negatives [n_queries, q]): rows x list_size
        flat = column.combine_chunks().flatten().to_numpy()
        return flat.reshape(len(column), column.type.list_size)
    return column.to_numpy()


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
