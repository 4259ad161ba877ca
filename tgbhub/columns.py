"""Reading artifact files back into named numpy columns (the one place that decodes Parquet)."""

from __future__ import annotations

import os

import numpy as np
import pyarrow.parquet as pq


def read_parquet_columns(path: str | os.PathLike[str], names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Read ``names`` from a Parquet file as contiguous numpy arrays, in that order."""
    table = pq.read_table(path, columns=list(names))
    return {name: table.column(name).to_numpy() for name in names}
