import hashlib
from pathlib import Path

import numpy as np

from tgbhub.hashing import content_digest, file_sha256


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
