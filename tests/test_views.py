"""ds.windows(...) and ds.batches(...) (tgbhub.forecasting.views) on a dataset built by the real generators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tgbhub
from tgbhub.errors import InvalidNameError


@pytest.fixture(scope="module")
def ds(shared_cache: Path):
    return tgbhub.load_dataset("t-grab/ce-4", cache_dir=shared_cache)


def test_windows_cover_the_split_once_in_time_order(ds) -> None:
    windows = list(ds.windows("test_inductive"))
    everything = list(ds.windows("test_inductive", skip_empty=False))
    start, stop = ds.snapshot_splits["test_inductive"]
    assert len(everything) == stop - start and [w.id for w in everything] == list(range(stop - start))
    assert len(windows) == sum(1 for w in everything if len(w)) < len(everything)  # CE's inductive split has gaps
    queries = np.concatenate([w.query for w in windows])
    assert (queries == np.arange(len(queries))).all()
    for w in windows:
        assert (w.t >= w.t_start).all() and (w.t < w.t_end).all() and (w.src <= w.dst).all()


def test_history_end_is_where_the_window_starts(ds) -> None:
    first = next(iter(ds.windows("test")))
    rows = (ds.t < first.t_start) & (ds.src <= ds.dst)
    assert first.history_end == int(rows.sum())


def test_negatives_ride_along_at_the_tasks_horizon(ds) -> None:
    negatives = ds.window_negatives("test")
    for w in ds.windows("test", negatives=True):
        assert (w.neg_src == negatives.neg_src[w.query]).all() and (w.neg_dst == negatives.neg_dst[w.query]).all()
        assert (negatives.window[w.query] == w.id).all()
    with pytest.raises(InvalidNameError, match="negatives=True needs the horizon of task 'window-forecast'"):
        next(iter(ds.windows("test", horizon=2, negatives=True)))


def test_other_horizons_and_batches(ds) -> None:
    two = list(ds.windows("test", horizon=2))
    one = list(ds.windows("test"))
    assert sum(len(w) for w in two) == sum(len(w) for w in one)
    assert len(two) == -(-len(one) // 2)
    batches = list(ds.batches("test", batch_size=50))
    assert [len(b) for b in batches[:-1]] == [50] * (len(batches) - 1) and 0 < len(batches[-1]) <= 50
    assert batches[1].history_end == batches[0].history_end + 50
    with pytest.raises(InvalidNameError, match="batch size 0"):
        next(iter(ds.batches("test", batch_size=0)))


def test_torch_tensors_on_a_device(ds) -> None:
    torch = pytest.importorskip("torch")  # the [torch] extra; scripts/test installs it
    w = next(iter(ds.windows("test", negatives=True, device="cpu")))
    assert isinstance(w.src, torch.Tensor) and w.src.dtype == torch.int64 and w.src.device.type == "cpu"
    assert w.neg_dst.tolist() == ds.window_negatives("test").neg_dst[w.query.numpy()].tolist()
