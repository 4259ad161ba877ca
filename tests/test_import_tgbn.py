"""`tgbhub import tgb` for TGB's node property datasets (tgbn-*): releases in py-tgb 2.3.0's exact formats, converted
and checked against py-tgb's own loader, graded like py-tgb's Evaluator on TGB's example protocol, and refused with
nothing installed when they are not what was published (generators/tgb/tgbn.py, tgbhub/evaluate/nodeprop.py)."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tgbhub
from tests import tgb_formats as formats
from tgbhub.errors import GenerationError, IntegrityError, SubmissionError
from tgbhub.evaluate.nodeprop import ndcg_rows
from tgbhub.local.imports import import_tgb

NAME = "tgbn-trade"
SPLITS = ("train", "val", "test")


@dataclasses.dataclass(frozen=True)
class Loaded:
    """A small release, its zip, py-tgb's own load of it, and the statistics that load measures."""

    files: formats.FormatFiles
    zipped: Path
    pytgb: Any
    stats: dict[str, int]


def _stats(pytgb: Any) -> dict[str, int]:
    data = pytgb.full_data
    return {"num_nodes": int(len(np.union1d(data["sources"], data["destinations"]))),
            "num_edges": int(len(data["sources"])), "num_timestamps": int(len(np.unique(data["timestamps"])))}


def _load(files: formats.FormatFiles, out: Path) -> Loaded:
    zipped = formats.zip_dataset(files, out / "zips")
    pytgb = formats.load_with_pytgb(files, kind="node")
    return Loaded(files, zipped, pytgb, _stats(pytgb))


@pytest.fixture(scope="module")
def trade(tmp_path_factory: pytest.TempPathFactory) -> Loaded:
    folder = tmp_path_factory.mktemp("tgbn")
    return _load(formats.write_tgbn(folder / "files", NAME, n_edges=2000, seed=0), folder)


def _imported(loaded: Loaded, cache: Path) -> Any:
    import_tgb(loaded.files.name, loaded.zipped, cache_dir=cache, expected_stats=loaded.stats)
    return tgbhub.load_dataset(f"tgb/{loaded.files.name}", cache_dir=cache, offline=True)


def _labels(ds: Any) -> dict[str, np.ndarray]:
    return {name: np.asarray(np.load(path)) for name, path in ds._files["labels.parquet"].items()}


def tgb_example_batches(pytgb: Any, batch_size: int = 200) -> dict[str, list[tuple[int, np.ndarray, np.ndarray]]]:
    """The label batches TGB's example hands out in each split's loop (``test_n_upate`` of
    examples/nodeproppred/tgbn-trade/persistant_forecast.py): the edges of the split in batches, and whenever a
    batch's last timestamp passes the current label time, ``get_node_label(query_t)``; train, val and test in turn,
    the label pointer reset only once, before."""
    pytgb.reset_label_time()
    t = pytgb.full_data["timestamps"]
    out: dict[str, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    for split, mask in zip(SPLITS, (pytgb.train_mask, pytgb.val_mask, pytgb.test_mask)):
        ts, got = t[mask], []
        label_t = pytgb.return_label_ts()
        for start in range(0, len(ts), batch_size):
            query_t = ts[start:start + batch_size][-1]
            if query_t > label_t:
                found = pytgb.find_next_labels_batch(query_t)
                if found is None:
                    break
                got.append((int(found[0][0]), found[1].astype(np.int64), found[2]))
                label_t = pytgb.return_label_ts()
        out[split] = got
    pytgb.reset_label_time()
    return out


def _assert_equals_pytgb(ds: Any, pytgb: Any) -> None:
    """Edges, weights, features, timestamps, masks and labels of ``ds`` are py-tgb's (rows matched by edge_id)."""
    data = pytgb.full_data
    row = np.asarray(ds.columns["edge_id"])
    assert (np.sort(row) == np.arange(len(row))).all()
    assert (ds.src == data["sources"][row]).all() and (ds.dst == data["destinations"][row]).all()
    assert (ds.t == data["timestamps"][row]).all() and (np.diff(ds.t) >= 0).all()
    assert np.array_equal(ds.columns["edge_feat"], pytgb.edge_feat[row])
    assert (row + ds.manifest.graph["pytgb_edge_idxs_start"] == data["edge_idxs"][row]).all()
    for split, mask in zip(SPLITS, (pytgb.train_mask, pytgb.val_mask, pytgb.test_mask)):
        lo, hi = ds.splits[split]
        assert sorted(row[lo:hi].tolist()) == np.flatnonzero(mask).tolist(), split
    labels = _labels(ds)
    expected = [(ts, node) for ts in sorted(pytgb.label_dict) for node in sorted(pytgb.label_dict[ts])]
    assert list(zip(labels["t"].tolist(), labels["node"].tolist())) == expected
    vectors = np.stack([pytgb.label_dict[ts][node] for ts, node in expected])
    assert labels["label"].shape == vectors.shape and np.array_equal(labels["label"], vectors)
    assert ds.manifest.task["labels"]["width"] == ds.manifest.graph["num_classes"] == vectors.shape[1]


def _assert_graded_as_tgbs_example(ds: Any, pytgb: Any, batch_size: int) -> None:
    """The label timestamps the task grades per split are the ones TGB's example loop hands out there."""
    labels, rows = _labels(ds), ds.manifest.task["labels"]["rows"]
    handed = tgb_example_batches(pytgb, batch_size)
    for split in SPLITS:
        lo, hi = rows[split]
        assert np.unique(labels["t"][lo:hi]).tolist() == [ts for ts, _, _ in handed[split]], split
    assert rows["train"][0] == 0 and rows["train"][1] == rows["val"][0] and rows["val"][1] == rows["test"][0]


# --- tgbn-trade, end to end -------------------------------------------------------------------------------------------

def test_trade_import_equals_pytgbs_loader(trade: Loaded, tmp_path: Path) -> None:
    ds = _imported(trade, tmp_path)
    assert (ds.name, ds.version, ds.source) == (f"tgb/{NAME}", "1.1.0", "cache")
    _assert_equals_pytgb(ds, trade.pytgb)
    assert (ds.columns["weight"] == trade.pytgb.full_data["edge_feat"][:, 0]).all()  # py-tgb: edge_feat = [w]
    assert (ds.columns["edge_id"] == np.arange(ds.num_rows)).all()  # the release is time-sorted
    assert ds.manifest.graph["num_classes"] == 255 == ds.num_nodes  # py-tgb: len(node_ids), one per nation
    task = ds.manifest.task
    assert (task["type"], task["report_split"], task["k"]) == ("node-property-ndcg", "test", 10)
    assert ds.manifest.raw["stats"]["source"]["parser"] == "load_edgelist_trade"


def test_trade_grades_the_label_timestamps_tgbs_example_hands_out(trade: Loaded, tmp_path: Path) -> None:
    ds = _imported(trade, tmp_path)
    _assert_graded_as_tgbs_example(ds, trade.pytgb, batch_size=200)
    labels, task = _labels(ds), ds.manifest.task["labels"]
    lo, hi = task["ungraded_rows"]
    assert hi == len(labels["t"]) and lo < hi  # the last label year lies past the last edge: never handed out
    assert labels["t"][lo:hi].min() >= ds.t[-1]


@pytest.mark.parametrize("split", ["val", "test"])
def test_ndcg_equals_pytgbs_evaluator_on_tgbs_protocol(trade: Loaded, tmp_path: Path, split: str) -> None:
    """Random integer scores (many ties), graded per label timestamp and averaged, as TGB's example does."""
    from tgb.nodeproppred.evaluate import Evaluator

    ds = _imported(trade, tmp_path)
    theirs = Evaluator(name=NAME)
    rng = np.random.default_rng(3)
    per_t, rows = [], {"t": [], "node": [], "scores": []}
    for ts, nodes, labels in tgb_example_batches(trade.pytgb)[split]:
        scores = rng.integers(0, 4, labels.shape).astype(np.float32)
        per_t.append(theirs.eval({"y_true": labels, "y_pred": scores, "eval_metric": ["ndcg"]})["ndcg"])
        rows["t"] += [ts] * len(nodes)
        rows["node"] += nodes.tolist()
        rows["scores"] += list(scores)
    order = rng.permutation(len(rows["t"]))  # row order is free
    submission = {"t": np.array(rows["t"])[order], "node": np.array(rows["node"])[order],
                  "scores": np.stack(rows["scores"])[order]}
    ours = ds.get_evaluator("ndcg").evaluate(submission, split=split, detail=True)
    assert ours["metrics"]["ndcg"] == pytest.approx(float(np.mean(per_t)), abs=1e-12)
    assert ours["per_timestamp"]["ndcg"] == pytest.approx(per_t, abs=1e-12)
    assert ours["num_label_timestamps"] == len(per_t) and ours["split"] == split
    assert set(ours["digests"]) == {"edges.parquet", "labels.parquet"}


def test_nan_and_malformed_submissions_are_refused(trade: Loaded, tmp_path: Path) -> None:
    ds = _imported(trade, tmp_path)
    labels, (lo, hi) = _labels(ds), ds.manifest.task["labels"]["rows"]["test"]
    scores = np.random.default_rng(0).random((hi - lo, labels["label"].shape[1]))
    good = {"t": labels["t"][lo:hi], "node": labels["node"][lo:hi], "scores": scores}
    evaluator = ds.get_evaluator("ndcg")
    assert 0 < evaluator.evaluate(good)["metrics"]["ndcg"] < 1
    broken = scores.copy()
    broken[5, 7] = np.nan  # sklearn (py-tgb) raises on a NaN; ours says what to do about it
    with pytest.raises(SubmissionError, match="scores.*nan_to_num"):
        evaluator.evaluate({**good, "scores": broken})
    with pytest.raises(SubmissionError, match="lacks 1 of"):
        evaluator.evaluate({name: values[1:] for name, values in good.items()})
    with pytest.raises(SubmissionError, match="repeats"):
        evaluator.evaluate({name: np.concatenate([values, values[:1]]) for name, values in good.items()})
    with pytest.raises(SubmissionError, match="not a label row this split grades"):
        evaluator.evaluate({**good, "t": good["t"] - 1})
    with pytest.raises(SubmissionError, match="has 254 scores"):
        evaluator.evaluate({**good, "scores": scores[:, 1:]})


def test_a_statistics_mismatch_is_refused_with_nothing_installed(trade: Loaded, tmp_path: Path) -> None:
    with pytest.raises(IntegrityError) as info:
        import_tgb(NAME, trade.zipped, cache_dir=tmp_path)  # the catalogue's: 468,245 edges, 32 timestamps
    message = str(info.value)
    assert "num_edges" in message and "468245" in message.replace(",", "") and "Nothing was installed" in message
    assert not formats.installed(tmp_path / "tgb")


def test_an_import_is_byte_stable(trade: Loaded, tmp_path: Path) -> None:
    first = import_tgb(NAME, trade.zipped, cache_dir=tmp_path / "a", expected_stats=trade.stats)
    second = import_tgb(NAME, trade.zipped, cache_dir=tmp_path / "b", expected_stats=trade.stats)
    assert [(f.name, f.sha256) for f in first.files] == [(f.name, f.sha256) for f in second.files]


# --- sklearn's ndcg_score, in numpy ---------------------------------------------------------------------------------

def test_ndcg_rows_equal_sklearns_ndcg_score() -> None:
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(7)
    for width, k in ((3, 10), (12, 10), (40, 10), (40, 3), (255, 10)):
        y_true = rng.random((30, width)) * (rng.random((30, width)) < 0.3)
        y_true[0] = 0  # an all-zero label row scores 0
        y_true[1] = rng.integers(0, 3, width)  # ties in the truth
        scores = rng.integers(0, 3, (30, width)).astype(np.float64)  # ties in the scores
        scores[2] = 0.5  # a constant predictor: the mean gain, not the best case
        scores[3] = np.where(rng.random(width) < 0.5, 0.0, -0.0)  # signed zeros are one tie
        rows = ndcg_rows(y_true, scores, k)
        assert rows[0] == 0
        for i in range(len(rows)):
            expected = ndcg_score(y_true[i:i + 1], scores[i:i + 1], k=k) if y_true[i].any() else 0.0
            assert rows[i] == pytest.approx(expected, abs=1e-12), (width, k, i)
        assert rows.mean() == pytest.approx(ndcg_score(y_true, scores, k=k), abs=1e-12)
        continuous = rng.normal(size=(30, width))
        assert ndcg_rows(y_true, continuous, k).mean() == pytest.approx(ndcg_score(y_true, continuous, k=k),
                                                                         abs=1e-12)


# --- tgbn-genre, tgbn-reddit, tgbn-token: their own parsers ------------------------------------------------------

def _write(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")  # TGB's scripts: csv.writer's default line ending
    writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes(buffer.getvalue().encode("utf-8"))
    return path


def _hex(rng: np.random.Generator) -> str:
    return "0x" + "".join(rng.choice(list("0123456789abcdef"), 40))


def write_weekly(folder: Path, name: str, n_edges: int = 900, seed: int = 0, *, n_users: int = 40,
                 n_classes: int = 14, shuffle: int = 0) -> formats.FormatFiles:
    """A small release of tgbn-genre, -reddit or -token in its parser's layout (all read by position).

    genre ``ts,user_id,genre,weight`` (lastfm-like user names, genre names with spaces and one with a comma);
    reddit ``ts,src,subreddit,num_words,score`` (timestamps written ``1134028003.0``: py-tgb parses them into a
    float64 array; integer, possibly negative scores); token ``timestamp,user_address,token_address,value,IsSender``
    (hex addresses, large float values). Edges over about 12 weeks, every week has edges; a label row per (week end,
    user, class) with that week's normalised weights, at the week's end, for every week but the last; one label row
    is given twice with different weights (py-tgb keeps the last). ``shuffle`` swaps that many adjacent rows of
    different times (py-tgb does not sort; the import does).
    """
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    week, start = 7 * 86400, 1_104_537_600
    if name == "tgbn-genre":
        users = [f"user_{i:06d}" for i in rng.permutation(n_users * 3)[:n_users]]
        classes = [f"genre {i}" for i in range(n_classes - 1)] + ["rock, classic"]
    elif name == "tgbn-reddit":
        users = [f"u{rng.integers(10**6)}_{i}" for i in range(n_users)]
        classes = [f"subreddit{i}" for i in range(n_classes)]
    else:
        users = [_hex(rng) for _ in range(n_users)]
        classes = [_hex(rng) for _ in range(n_classes)]
    t = np.sort(start + rng.integers(0, 12 * week, n_edges))
    t[: 12] = start + np.arange(12) * week + 5  # every week has an edge
    t = np.sort(t)
    user = rng.integers(0, n_users, n_edges)
    cls = np.minimum(rng.geometric(0.25, n_edges) - 1, n_classes - 1)
    weight = np.round(rng.lognormal(1.0, 1.0, n_edges), 4)
    rows = []
    for k in range(n_edges):
        u, c = users[user[k]], classes[cls[k]]
        if name == "tgbn-genre":
            rows.append([int(t[k]), u, c, repr(float(weight[k]))])
        elif name == "tgbn-reddit":
            rows.append([f"{int(t[k])}.0", u, c, int(rng.integers(1, 500)), int(rng.integers(-20, 300))])
        else:
            rows.append([int(t[k]), u, c, f"{weight[k] * 1e18:.6e}", int(rng.integers(0, 2))])
    for _ in range(shuffle):
        k = int(rng.integers(0, n_edges - 1))
        if rows[k][0] != rows[k + 1][0]:
            rows[k], rows[k + 1] = rows[k + 1], rows[k]
    header = {"tgbn-genre": ["ts", "user_id", "genre", "weight"],
              "tgbn-reddit": ["ts", "src", "subreddit", "num_words", "score"],
              "tgbn-token": ["timestamp", "user_address", "token_address", "value", "IsSender"]}[name]
    labels: list[list[Any]] = []
    for w in range(11):
        inside = (t >= start + w * week) & (t < start + (w + 1) * week)
        for u in np.unique(user[inside]):
            mine = inside & (user == u)
            total = weight[mine].sum()
            for c in np.unique(cls[mine]):
                labels.append([start + (w + 1) * week, users[u], classes[c],
                               repr(float(weight[mine & (cls == c)].sum() / total))])
    labels.insert(3, [labels[2][0], labels[2][1], labels[2][2], "0.125"])  # given twice: the later row wins
    files = {"edgelist": _write(folder / f"{name}_edgelist.csv", header, rows),
             "node_labels": _write(folder / f"{name}_node_labels.csv", ["ts", "user", "class", "weight"], labels)}
    return formats.FormatFiles(name, folder, files, {"classes": classes, "users": users})


@pytest.mark.parametrize("name", ["tgbn-genre", "tgbn-reddit", "tgbn-token"])
def test_weekly_releases_import_as_pytgb_loads_them(name: str, tmp_path: Path) -> None:
    shuffle = 25 if name == "tgbn-token" else 0
    loaded = _load(write_weekly(tmp_path / "files", name, shuffle=shuffle), tmp_path)
    ds = _imported(loaded, tmp_path / "cache")
    _assert_equals_pytgb(ds, loaded.pytgb)
    num_classes = formats.PYTGB_NUM_CLASSES[name]
    assert ds.dst.max() < 14 <= num_classes <= ds.src.min()  # classes 0.., users from DATA_NUM_CLASSES on
    assert ds.manifest.graph["num_classes"] == 14 and ds.manifest.task["labels"]["declared_num_classes"] == num_classes
    if shuffle:
        assert ds.manifest.raw["stats"]["reordered_rows"] > 0
    else:
        _assert_graded_as_tgbs_example(ds, loaded.pytgb, batch_size=1)


def test_token_features_are_the_csvs_and_py_tgb_logs_them_only_on_a_reload(tmp_path: Path) -> None:
    loaded = _load(write_weekly(tmp_path / "files", "tgbn-token"), tmp_path)
    ds = _imported(loaded, tmp_path / "cache")
    assert ds.columns["edge_feat"].shape[1] == 2 and set(np.unique(ds.columns["edge_feat"][:, 1])) <= {0.0, 1.0}
    assert (ds.columns["weight"] == ds.columns["edge_feat"][:, 0]).all()
    reloaded = formats.load_with_pytgb(loaded.files, kind="node")  # from py-tgb's processed pickles
    assert np.array_equal(reloaded.edge_feat[:, 0], np.log(ds.columns["edge_feat"][:, 0]))


def test_a_label_naming_an_unknown_node_is_refused(tmp_path: Path) -> None:
    files = write_weekly(tmp_path / "files", "tgbn-genre")
    labels = files.files["node_labels"]
    labels.write_bytes(labels.read_bytes() + b"1105747200,user_999999,genre 1,0.5\r\n")
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    with pytest.raises(GenerationError, match="user_999999.*edge list does not hold"):
        import_tgb("tgbn-genre", zipped, cache_dir=tmp_path / "cache", expected_stats={})
    assert not formats.installed(tmp_path / "cache" / "tgb")


def test_more_classes_than_py_tgb_reserves_are_refused(tmp_path: Path) -> None:
    files = write_weekly(tmp_path / "files", "tgbn-genre", n_edges=1200, n_classes=520)
    rows = files.files["edgelist"].read_text().splitlines()
    extra = [f"{1105000000 + i},user_000001,genre {i},1.0" for i in range(520)]  # every class appears
    files.files["edgelist"].write_text("\r\n".join([*rows, *extra]) + "\r\n")
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    with pytest.raises(GenerationError, match="more than the 513"):
        import_tgb("tgbn-genre", zipped, cache_dir=tmp_path / "cache", expected_stats={})


def test_the_manifest_records_the_release(trade: Loaded, tmp_path: Path) -> None:
    manifest = import_tgb(NAME, trade.zipped, cache_dir=tmp_path, expected_stats=trade.stats)
    source = manifest.raw["stats"]["source"]
    assert source["zip_sha256"] == hashlib.sha256(trade.zipped.read_bytes()).hexdigest()
    assert list(manifest.raw["stats"]["checked_against_published"]) == sorted(trade.stats)
    assert manifest.raw["stats"]["label_dim"] == 255
