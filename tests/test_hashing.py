import hashlib
from pathlib import Path

import numpy as np
import pytest

from tgbhub.hashing import ContentDigest, content_digest, file_sha256


def test_file_sha256_matches_hashlib(tmp_path: Path) -> None:
    path = tmp_path / "blob"
    data = bytes(range(256)) * 10_000  # more than one 1 MiB chunk
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()


def test_content_digest_is_defined_over_little_endian_bytes() -> None:
    t = np.array([0, 1], dtype=np.int64)
    src = np.array([3, 4], dtype=np.int32)
    expected = hashlib.sha256(b"t:<i8:2\n" + t.tobytes() + b"src:<i4:2\n" + src.tobytes()).hexdigest()
    assert content_digest({"t": t, "src": src}) == expected
    assert content_digest({"t": t.astype(">i8"), "src": src}) == expected  # byte order is canonicalised


def test_content_digest_changes_with_values_order_dtype_and_names() -> None:
    t = np.array([0, 1], dtype=np.int64)
    src = np.array([3, 4], dtype=np.int32)
    base = content_digest({"t": t, "src": src})
    assert content_digest({"src": src, "t": t}) != base
    assert content_digest({"t": t, "src": src.astype(np.int64)}) != base
    assert content_digest({"t": t, "dst": src}) != base
    assert content_digest({"t": t, "src": src[::-1]}) != base


def _whole_column_digest(columns: dict[str, np.ndarray]) -> str:
    """``sha256-columns-v1`` spelled out: each column's header line, then its C-order little-endian bytes."""
    digest = hashlib.sha256()
    for name, values in columns.items():
        little = values.dtype.newbyteorder("<")
        digest.update(f"{name}:{little.str}:{len(values)}\n".encode())
        digest.update(np.ascontiguousarray(values, dtype=little).tobytes())
    return digest.hexdigest()


DTYPES = ("<i8", ">i8", "<i4", ">i4", "<f8", ">f8", "<f4", "|u1", "|b1")


def _random_column(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-(1 << 40), 1 << 40, size=shape).astype(np.dtype(dtype)) if dtype[1] in "iub" else \
        rng.standard_normal(size=shape).astype(np.dtype(dtype))


@pytest.mark.parametrize("seed", range(5))
def test_the_digest_fed_in_blocks_is_the_whole_columns_digest(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shapes = [(0,), (1,), (int(rng.integers(2, 300)),), (0, 3), (int(rng.integers(2, 300)), int(rng.integers(1, 5))),
              (5, 0)]
    columns = {f"c{i}": _random_column(rng, dtype, shape)
               for i, (dtype, shape) in enumerate((d, s) for d in DTYPES for s in shapes)}
    columns["strided"] = _random_column(rng, "<i8", (40, 6))[::2, 1:4]  # not contiguous
    expected = _whole_column_digest(columns)
    assert content_digest(columns) == expected
    digest = ContentDigest()
    for name, values in columns.items():
        digest.start(name, values.dtype, len(values))
        cuts = np.sort(rng.integers(0, len(values) + 1, size=int(rng.integers(0, 4))))
        for block in np.split(values, cuts):  # empty blocks included
            digest.update(block)
    assert digest.hexdigest() == expected


def test_the_digest_refuses_rows_that_do_not_fit_the_column() -> None:
    digest = ContentDigest()
    with pytest.raises(ValueError, match="no column|dtype"):
        digest.update(np.zeros(2, dtype=np.int64))
    digest.start("t", np.int64, 3)
    with pytest.raises(ValueError, match="dtype <i4"):
        digest.update(np.zeros(2, dtype=np.int32))
    digest.update(np.zeros(2, dtype=">i8"))  # byte order aside, the same dtype
    with pytest.raises(ValueError, match="2 rows fed to column 't', which has 1 left"):
        digest.update(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="still lacks 1 rows"):
        digest.hexdigest()
    with pytest.raises(ValueError, match="start column 'src'"):
        digest.start("src", np.int32, 1)
    digest.update(np.zeros(1, dtype=np.int64))
    assert digest.hexdigest() == content_digest({"t": np.zeros(3, dtype=np.int64)})
