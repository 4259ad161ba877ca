"""The PyTorch Geometric adapter (tgbhub.forecasting.pyg): TemporalData export on real data built by the real
generators, and the SnapshotLoader of the paper's PyG branch, with DataLoader workers; ``ds.to_pyg()`` with what the
manifest declares (edge and node features, weights, labels) and the dataset's node count on every split, on T-GRAB
and on small releases in TGB's formats (tests/tgb_formats.py) imported as ``tgbhub import tgb`` imports them."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tgbhub
from tests import tgb_formats as formats
from tgbhub.data import TemporalGraphDataset
from tgbhub.errors import InvalidNameError, MissingExtraError

torch = pytest.importorskip("torch")
pyg_data = pytest.importorskip("torch_geometric.data")

from tgbhub.forecasting.pyg import SnapshotLoader, to_temporal_data  # noqa: E402

# DataLoader warns when asked for more workers than the machine has cores; 3 workers are the PyG branch's test, not a
# performance choice.
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")

SPEC_CASES = [  # (times, horizon, the times of every snapshot, empty ones included): the PyG branch's tests
    ([0, 1, 1, 1, 2, 2, 3], 1, [[0], [1, 1, 1], [2, 2], [3]]),
    ([0, 1, 1, 1, 2, 2, 3], 2, [[0, 1, 1, 1], [2, 2, 3]]),
    ([100, 101, 101, 101, 105, 105, 108], 1, [[100], [101, 101, 101], [], [], [], [105, 105], [], [], [108]]),
    ([100, 101, 101, 101, 105, 105, 108], 2, [[100, 101, 101, 101], [], [105, 105], [], [108]]),
]


def _graph(times: list[int]) -> Any:
    """A Data with 7 edges (edge i: i -> i+1 mod 10, feature i), 10 nodes with features, and an edge-level time."""
    n = len(times)
    return pyg_data.Data(x=torch.arange(30.).view(10, 3),
                         edge_index=torch.tensor([list(range(n)), [(i + 1) % 10 for i in range(n)]]),
                         edge_attr=torch.arange(float(n)).view(-1, 1), time=torch.tensor(times))


@pytest.mark.parametrize("num_workers", [0, 1, 2, 3])
@pytest.mark.parametrize(("times", "horizon", "expected"), SPEC_CASES)
def test_spec_snapshot_counts_and_contents(times: list[int], horizon: int, expected: list[list[int]],
                                           num_workers: int) -> None:
    loader = SnapshotLoader(_graph(times), horizon, num_workers=num_workers)
    snaps = list(loader)
    assert len(loader) == len(snaps) == len(expected) == (max(times) - min(times)) // horizon + 1
    assert [s.time.tolist() for s in snaps] == expected
    offset = 0
    for i, snap in enumerate(snaps):
        edges = list(range(offset, offset + len(expected[i])))  # the input is sorted, so windows are edge ranges
        offset += len(edges)
        assert snap.edge_index.tolist() == [edges, [(e + 1) % 10 for e in edges]]
        assert snap.edge_attr.view(-1).tolist() == [float(e) for e in edges]
        assert snap.num_nodes == 10 and torch.equal(snap.x, torch.arange(30.).view(10, 3))
        lo, hi = min(times) + i * horizon, min(times) + (i + 1) * horizon
        assert all(lo <= t < hi for t in snap.time.tolist())
    assert offset == len(times)


@pytest.mark.parametrize("num_workers", [0, 2])
def test_temporal_data_is_sorted_and_cut_together(num_workers: int) -> None:
    times = [108, 101, 100, 105, 101, 105, 101]
    data = pyg_data.TemporalData(src=torch.arange(7), dst=torch.arange(7) + 10, t=torch.tensor(times),
                                 msg=torch.arange(7.).view(-1, 1))
    snaps = list(SnapshotLoader(data, 1, num_workers=num_workers))
    assert [s.t.tolist() for s in snaps] == [[100], [101, 101, 101], [], [], [], [105, 105], [], [], [108]]
    # a stable sort: the three t=101 events keep their input order (rows 1, 4, 6)
    assert [s.src.tolist() for s in snaps] == [[2], [1, 4, 6], [], [], [], [3, 5], [], [], [0]]
    for snap in snaps:
        assert torch.equal(snap.dst, snap.src + 10) and torch.equal(snap.msg.view(-1), snap.src.float())
        assert snap.msg.shape == (len(snap.t), 1)
    assert data.t.tolist() == times  # the input is not modified


def test_windows_are_half_open_so_no_fractional_time_is_dropped() -> None:
    data = pyg_data.TemporalData(src=torch.zeros(6, dtype=torch.long), dst=torch.ones(6, dtype=torch.long),
                                 t=torch.tensor([0.2, 0.5, 0.999, 1.0, 1.5, 2.5], dtype=torch.float64))
    loader = SnapshotLoader(data, 1)
    # PyG's inclusive [t0 + i*h, t0 + (i+1)*h - 1] would keep only t == 0.0 in window 0, dropping 0.2 .. 0.999
    assert len(loader) == (3 - 0) // 1 + 1 == 4
    assert [s.t.tolist() for s in loader] == [[0.2, 0.5, 0.999], [1.0, 1.5], [2.5], []]
    assert loader.t0 == 0 and loader.bounds.tolist() == [0, 1, 2, 3, 4]
    half = SnapshotLoader(data, 0.5)  # (3 - 0) // 0.5 + 1 == 7 windows, the last [3.0, 3.5) empty
    assert [s.t.tolist() for s in half] == [[0.2], [0.5, 0.999], [1.0], [1.5], [], [2.5], []] and len(half) == 7


def test_no_edges_no_windows() -> None:
    empty = pyg_data.TemporalData(src=torch.zeros(0, dtype=torch.long), dst=torch.zeros(0, dtype=torch.long),
                                  t=torch.zeros(0, dtype=torch.long))
    loader = SnapshotLoader(empty, 1)
    assert len(loader) == 0 and list(loader) == []


def test_time_stays_edge_level_when_there_are_as_many_nodes_as_edges() -> None:
    # PyG calls an attribute without 'edge' in its name node-level when num_nodes == num_edges; time must be cut
    data = pyg_data.Data(x=torch.arange(7.), edge_index=torch.tensor([[0, 1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6, 0]]),
                         time=torch.tensor([0, 1, 1, 1, 2, 2, 3]))
    snaps = list(SnapshotLoader(data, 2))
    assert [s.time.tolist() for s in snaps] == [[0, 1, 1, 1], [2, 2, 3]]
    assert [s.edge_index.shape[1] for s in snaps] == [4, 3]
    assert all(torch.equal(s.x, torch.arange(7.)) and s.num_nodes == 7 for s in snaps)


def test_loader_refuses_bad_input() -> None:
    data = _graph([0, 1, 2])
    with pytest.raises(InvalidNameError, match="horizon 0"):
        SnapshotLoader(data, 0)
    with pytest.raises(InvalidNameError, match="whole number of snapshots"):
        SnapshotLoader(data, 1.5)
    with pytest.raises(InvalidNameError, match="shuffle"):
        SnapshotLoader(data, 1, shuffle=True)
    with pytest.raises(InvalidNameError, match="batch_size"):
        SnapshotLoader(data, 1, batch_size=4)
    with pytest.raises(InvalidNameError, match="'time'"):
        SnapshotLoader(pyg_data.Data(edge_index=torch.tensor([[0], [1]])), 1)
    with pytest.raises(InvalidNameError, match="NaN"):
        SnapshotLoader(pyg_data.TemporalData(src=torch.tensor([0]), dst=torch.tensor([1]),
                                             t=torch.tensor([float("nan")])), 1)
    with pytest.raises(InvalidNameError, match="dict"):
        SnapshotLoader({"time": torch.tensor([0])}, 1)


def test_missing_extra_names_the_pip_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "torch_geometric" or m.startswith("torch_geometric.")]:
        monkeypatch.setitem(sys.modules, name, None)  # a None entry makes `import` raise ModuleNotFoundError
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[pyg\]'") as info:
        to_temporal_data(object())
    assert isinstance(info.value, ModuleNotFoundError)


def test_importing_the_adapter_does_not_import_torch() -> None:
    code = "import sys, tgbhub.forecasting.pyg; print(sorted({'torch', 'torch_geometric'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# --- on real data ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ce1(shared_cache: Path) -> TemporalGraphDataset:
    dataset = tgbhub.load_dataset("t-grab/ce-1", cache_dir=shared_cache)
    assert isinstance(dataset, TemporalGraphDataset)
    return dataset


def _assert_events(data: Any, t: np.ndarray, src: np.ndarray, dst: np.ndarray, time_dtype: Any) -> None:
    assert isinstance(data, pyg_data.TemporalData)
    assert (data.src.dtype, data.dst.dtype, data.t.dtype, data.msg.dtype) == (torch.int64, torch.int64, time_dtype,
                                                                              torch.float32)
    assert np.array_equal(data.src.numpy(), src) and np.array_equal(data.dst.numpy(), dst)
    assert np.array_equal(data.t.numpy(), t)
    assert data.msg.shape == (len(t), 1) and bool((data.msg == 1).all())
    assert data.num_events == len(t) > 0


def test_to_temporal_data_equals_the_dataset_columns(ce1: TemporalGraphDataset) -> None:
    _assert_events(to_temporal_data(ce1), ce1.t, ce1.src, ce1.dst, torch.int64)
    test = ce1.split("test")
    _assert_events(to_temporal_data(ce1, "test"), test.t, test.src, test.dst, torch.int64)
    _assert_events(ce1.to_pyg("test"), test.t, test.src, test.dst, torch.int64)
    assert to_temporal_data(ce1, "val").num_events == len(ce1.split("val").t)
    with pytest.raises(InvalidNameError, match="holdout"):
        ce1.to_pyg("holdout")


def test_snapshot_loader_on_a_split_matches_the_dataset_snapshots(ce1: TemporalGraphDataset) -> None:
    test = ce1.split("test")
    loader = SnapshotLoader(ce1.to_pyg("test"), 1, num_workers=2)
    snapshots = {t: (src, dst) for t, src, dst in test.snapshots()}
    assert loader.t0 == int(test.t[0]) and len(loader) == int(test.t[-1]) - int(test.t[0]) + 1
    for i, snap in enumerate(loader):
        src, dst = snapshots[loader.t0 + i]
        assert np.array_equal(snap.src.numpy(), src) and np.array_equal(snap.dst.numpy(), dst)
        assert bool((snap.t == loader.t0 + i).all())


def test_continuous_time_dataset_keeps_float64_and_every_event(shared_cache: Path) -> None:
    derived = tgbhub.load_dataset("t-grab/ce-1~intense-k1-s0", cache_dir=shared_cache)
    test = derived.split("test")
    data = derived.to_pyg("test")
    _assert_events(data, test.t, test.src, test.dst, torch.float64)
    loader = SnapshotLoader(data, 1)
    snaps = list(loader)
    assert len(snaps) == len(loader) == int(np.ceil(test.t.max())) - int(np.floor(test.t.min())) + 1
    assert sum(s.num_events for s in snaps) == len(test.t)
    for i, snap in enumerate(snaps):
        assert bool(((snap.t >= loader.bounds[i]) & (snap.t < loader.bounds[i + 1])).all())
    order = np.argsort(test.t, kind="stable")
    assert np.array_equal(torch.cat([s.src for s in snaps]).numpy(), test.src[order])


# --- ds.to_pyg(): what the manifest declares, and the whole node-id space -------------------------------------------

def import_release(files: formats.FormatFiles, folder: Path, stats: dict[str, int]) -> TemporalGraphDataset:
    """``files`` zipped and imported into ``folder/cache`` as ``tgbhub import tgb`` does, then loaded offline."""
    from tgbhub.local.imports import import_tgb

    import_tgb(files.name, formats.zip_dataset(files, folder / "zips"), cache_dir=folder / "cache",
               expected_stats=stats)
    dataset = tgbhub.load_dataset(f"tgb/{files.name}", cache_dir=folder / "cache", offline=True)
    assert isinstance(dataset, TemporalGraphDataset)
    return dataset


def flight_release(folder: Path) -> TemporalGraphDataset:
    """A small tgbl-flight: 16-d edge features and 20-d airport node features."""
    files = formats.write_flight(folder / formats.dir_name("tgbl-flight"), n_edges=300)
    rows = files.truth["rows"]
    stats = {"num_nodes": len({r[1] for r in rows} | {r[2] for r in rows}), "num_edges": len(rows),
             "num_timestamps": len({r[0] for r in rows}), "edge_feat_dim": 16}
    return import_release(files, folder, stats)


def trade_release(folder: Path) -> TemporalGraphDataset:
    """A small tgbn-trade: edge weights and yearly node labels."""
    files = formats.write_tgbn(folder / "files", "tgbn-trade", n_edges=400, n_nations=30, n_years=8)
    truth = files.truth
    stats = {"num_nodes": len(set(truth["nation"]) | set(truth["trading_nation"])), "num_edges": len(truth["year"]),
             "num_timestamps": len(set(truth["year"].tolist()))}
    return import_release(files, folder, stats)


@pytest.fixture(scope="module")
def flight(tmp_path_factory: pytest.TempPathFactory) -> TemporalGraphDataset:
    return flight_release(tmp_path_factory.mktemp("flight"))


@pytest.fixture(scope="module")
def trade(tmp_path_factory: pytest.TempPathFactory) -> TemporalGraphDataset:
    return trade_release(tmp_path_factory.mktemp("trade"))


def test_every_split_counts_the_whole_node_id_space(ce1: TemporalGraphDataset) -> None:
    train = ce1.to_pyg("train")
    # the ids that occur in train stop short of the dataset's 101: PyG's own count would say fewer
    assert int(torch.maximum(train.src.max(), train.dst.max())) + 1 < ce1.num_nodes == 101
    for split in (None, "train", "val", "test"):
        data = ce1.to_pyg(split)
        assert isinstance(data, pyg_data.TemporalData) and data.num_nodes == ce1.num_nodes, split
        # one-hot node features, one row per node id, and the constant-1 edge feature the manifest declares
        assert torch.equal(data.x, torch.eye(ce1.num_nodes)) and bool((data.msg == 1).all())
        assert "edge_weight" not in data and "label" not in data
    head = train[:ce1.num_nodes]  # as many events as nodes: x must still not be cut
    assert head.num_events == ce1.num_nodes and head.num_nodes == ce1.num_nodes and head.x.shape == (101, 101)
    assert torch.equal(head.src, train.src[:ce1.num_nodes])
    restored = pickle.loads(pickle.dumps(train))
    assert type(restored) is type(train) and restored.num_nodes == ce1.num_nodes


def test_declared_edge_and_node_features_are_msg_and_x(flight: TemporalGraphDataset) -> None:
    declared = flight.manifest.graph["node_feat"]
    nodes = flight.artifact(declared["file"])[declared["column"]]
    assert flight.manifest.graph["edge_features"] == "float64[16] (edge_feat)"
    for split in ("train", "val", "test"):
        lo, hi = flight.splits[split]
        data = flight.to_pyg(split)
        assert data.msg.dtype == torch.float32 and data.msg.shape == (hi - lo, 16)
        assert np.array_equal(data.msg.numpy(), flight.columns["edge_feat"][lo:hi].astype(np.float32))
        assert np.array_equal(data.x.numpy(), nodes.astype(np.float32)) and data.x.shape == (flight.num_nodes, 20)
        assert np.array_equal(data.src.numpy(), flight.src[lo:hi]) and np.array_equal(data.t.numpy(), flight.t[lo:hi])
        assert data.num_nodes == flight.num_nodes
    # the accessors the conversion reads
    assert flight.edge_weights() is None and flight.node_labels() is None
    assert np.array_equal(flight.edge_features("val"), flight.columns["edge_feat"][slice(*flight.splits["val"])])


def test_weights_and_labels_travel_with_their_split(trade: TemporalGraphDataset) -> None:
    rows = trade.manifest.task["labels"]["rows"]
    labels = trade.artifact(trade.manifest.graph["labels_file"])
    for split in ("train", "val", "test"):
        lo, hi = trade.splits[split]
        data = trade.to_pyg(split)
        assert np.array_equal(data.edge_weight.numpy(), trade.columns["weight"][lo:hi])
        assert data.edge_weight.dtype == torch.float64 and data.msg.shape == (hi - lo, 1)
        a, b = rows[split]
        assert np.array_equal(data.label_t.numpy(), labels["t"][a:b])
        assert np.array_equal(data.label_node.numpy(), labels["node"][a:b])
        assert np.array_equal(data.label.numpy(), labels["label"][a:b].astype(np.float32))
        assert data.label.shape == (b - a, trade.manifest.graph["num_classes"]) and b > a
        assert "x" not in data and data.num_nodes == trade.num_nodes  # it declares no node features
    whole = trade.to_pyg()
    assert len(whole.label_t) == len(labels["t"])  # every labelled row, graded or not
    sliced = trade.to_pyg("train")[:3]
    assert sliced.num_events == 3 and len(sliced.label_t) == rows["train"][1] - rows["train"][0]
