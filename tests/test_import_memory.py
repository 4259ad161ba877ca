"""The TGB importer converts a tgbl release in bounded memory: a release of millions of rows is read in
CSV blocks, its negatives converted without a second copy of TGB's dict, its Parquet written row group by row
group (that the streamed conversion writes the bytes the whole-table one does: ``test_import_stream.py``).

The import runs in a fresh interpreter, so the peak it reports is the import's own, not what the test process
allocated before (writing the release); the bound is on the peak anonymous resident memory above the interpreter's
once tgbhub is imported (see :func:`measure_import` for why anonymous)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pytest

from generators.tgb import release, tgbl
from generators.tgb.release import Release as OpenedRelease
from tests import tgb_formats as formats

NAME = "tgbl-wiki"
ROOT = Path(__file__).resolve().parents[1]

#: what the import may add to the interpreter's anonymous resident memory per edge of a release of 4 features and
#: q = 10 negatives, beyond :data:`BOUND_FIXED` (Arrow's blocks read ahead, the Parquet writer, what the allocators keep
#: of freed blocks). Measured (``measure_import``, peak anonymous memory sampled from outside): the whole-table
#: importer this replaced added 217 MB on 300k rows and 1105 MB on 2M (the CSV's bytes, its Arrow table, a combined
#: copy, two pickles' dicts at once); the spilled one adds 179 MiB on 300k rows and 338 MiB on 1.2M, its buffers
#: (Parquet row groups of 2^20 rows, the scan's chunks) still growing with the release up to about 2M rows and flat
#: after that (``scripts/bench tgb --scale``). The bound, 789 MB for 2M rows, fails the whole-table importer.
BOUND_BYTES_PER_ROW = 330
BOUND_FIXED = 160 << 20


def write_release(folder: Path, rows: int, feat_dim: int = 4, q: int = 10, seed: int = 0) -> tuple[Path, dict]:
    """A tgbl-wiki release of ``rows`` edges in JODIE's CSV layout (written with Arrow: ``tgb_formats.write_tgbl``
    loops in Python, minutes for millions of rows) and q negatives per val/test edge; returns the zip and the
    statistics the import must measure."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 1000, rows)
    dst = rng.integers(0, 2000, rows)
    t = np.cumsum(rng.integers(0, 3, rows)).astype(np.float64)
    features = {f"f{k}": np.round(rng.normal(size=rows), 4) for k in range(feat_dim)}
    table = pa.table({"user_id": src, "item_id": dst, "timestamp": t, "state_label": np.zeros(rows, np.int64),
                      **features})
    folder.mkdir(parents=True, exist_ok=True)
    csv = folder / formats.edgelist_name(NAME)
    pcsv.write_csv(table, csv)
    shifted, ts = dst + int(src.max()) + 1, t.astype(np.int64)
    val_time, test_time = np.quantile(ts, [0.70, 0.85])
    paths = {"edgelist": csv}
    for split, mask in (("val", (ts > val_time) & (ts <= test_time)), ("test", ts > test_time)):
        negatives = {(int(s), int(d), int(x)): rng.integers(0, 3000, q)
                     for s, d, x in zip(src[mask].tolist(), shifted[mask].tolist(), ts[mask].tolist())}
        paths[f"{split}_ns"] = folder / formats.ns_name(NAME, split)
        paths[f"{split}_ns"].write_bytes(pickle.dumps(negatives, protocol=4))
    zipped = folder / "zips" / formats.zip_name(NAME)
    zipped.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(zipped, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in paths.values():
            archive.write(path, path.name)
    stats = {"num_nodes": int(len(np.union1d(src, shifted))), "num_edges": rows, "edge_feat_dim": feat_dim}
    return zipped, stats


_MEASURE = """
import json, sys, time
from pathlib import Path
import tgbhub.local.imports, generators.tgb.importer  # noqa: F401 (loaded before the baseline is read)
status = dict(line.split(':', 1) for line in Path('/proc/self/status').read_text().splitlines())
before, start = int(status['RssAnon'].split()[0]) * 1024, time.perf_counter()
manifest = tgbhub.local.imports.import_tgb(sys.argv[1], sys.argv[2], cache_dir=sys.argv[3],
                                       expected_stats=json.loads(sys.argv[4]))
print(json.dumps({"baseline": before, "wall_s": time.perf_counter() - start}))
"""


def _anonymous_rss(pid: int) -> int | None:
    """The process's anonymous resident bytes, or None once it has exited."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    return None


def measure_import(zipped: Path, stats: dict, cache: Path) -> dict:
    """Import ``zipped`` in a fresh interpreter: its anonymous resident memory once tgbhub is imported, the peak
    during the import, and the wall time.

    Anonymous memory, not ``VmHWM``: the peak resident set also counts the pages of Arrow's shared libraries, and
    how many of those are mapped depends on the page cache (a just-installed venv maps 40 MB more of libarrow than
    an old one), not on the import. The peak is sampled from this process every millisecond, because a sampler
    inside the interpreter would wait for the GIL that ``pickle.loads`` of TGB's negatives holds throughout."""
    command = [sys.executable, "-c", _MEASURE, NAME, str(zipped), str(cache), json.dumps(stats)]
    env = {"TGBHUB_NO_PROGRESS": "1", "PATH": "/usr/bin:/bin"}
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as child:
        peak = 0
        while child.poll() is None:
            peak = max(peak, _anonymous_rss(child.pid) or 0)
            time.sleep(0.001)
        out, err = child.communicate()
    assert child.returncode == 0, err.decode()[-3000:]
    measured = json.loads(out.decode().strip().splitlines()[-1])
    return {**measured, "peak": peak, "added": peak - measured["baseline"]}


def _check_bound(tmp_path: Path, rows: int) -> None:
    zipped, stats = write_release(tmp_path / "release", rows)
    measured = measure_import(zipped, stats, tmp_path / "cache")
    bound = BOUND_FIXED + BOUND_BYTES_PER_ROW * rows
    assert measured["added"] < bound, measured


def test_a_release_imports_in_bounded_memory(tmp_path: Path) -> None:
    _check_bound(tmp_path, 300_000)


def test_a_type_change_after_the_first_block_reads_the_csv_whole(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Timestamps that are integers in the first block and decimals later: Arrow's streaming reader cannot change
    a column's type, so the CSV is read whole and truncated as py-tgb's astype(int) does."""
    rows = ["u,i,ts,label,f"] + [f"{k % 7},{k % 5},{k},0,0.5" for k in range(4000)] + ["1,2,4000.7,0,0.25"]
    csv = tmp_path / formats.edgelist_name(NAME)
    csv.write_text("\n".join(rows) + "\n")
    zipped = tmp_path / "release.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.write(csv, csv.name)
    monkeypatch.setattr(release, "CSV_BLOCK_BYTES", 4 << 10)
    opened = OpenedRelease(zipped, {"edgelist": csv.name})
    try:
        edges, _ = tgbl.parse_edges(opened, {"edgelist": csv.name}, "edgelist-wiki")
    finally:
        opened.close()
    assert edges["t"][-1] == 4000 and len(edges["t"]) == 4001
    assert edges["dst"].min() == 7  # shifted by max(src) + 1 over every row


@pytest.mark.slow
def test_a_2m_row_release_imports_in_bounded_memory(tmp_path: Path) -> None:
    _check_bound(tmp_path, 2_000_000)


if __name__ == "__main__":  # python tests/test_import_memory.py ROWS FOLDER: the figures of docs/performance.md
    target = Path(sys.argv[2])
    written, expected = write_release(target / "release", int(sys.argv[1]))
    print(json.dumps(measure_import(written, expected, target / "cache")))
