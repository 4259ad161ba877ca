"""Dense trajectories on a known graph (ChaosNetBench): a memory-mapped ``(ICs, steps, variables)`` array plus splits
by initial condition, z-scoring with train statistics, forecasting windows, topology and chaos indicators.

The HDF5 file is opened only to locate the ``state`` array and to read the small arrays; the states themselves are
memory-mapped (one uncompressed chunk per IC, laid out in order), so ``ds.states[80:100]`` reads only those bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike

from tgbhub.columns import import_h5py
from tgbhub.data.grading import EvaluatorFactory, Gradable
from tgbhub.errors import InvalidNameError, MissingExtraError
from tgbhub.manifest import DIGEST_KIND, Manifest

if TYPE_CHECKING:
    import h5py
    import torch

WINDOW_MODES = ("parity", "clean")


def _memory_map(path: Path, dataset: h5py.Dataset) -> np.ndarray | None:
    """A read-only memmap over an HDF5 dataset stored uncompressed and in order, else ``None``."""
    if dataset.compression is not None or dataset.dtype.byteorder == ">" or dataset.size == 0:
        return None
    if dataset.chunks is None:
        offset = dataset.id.get_offset()
    else:
        if dataset.chunks[1:] != dataset.shape[1:] or dataset.chunks[0] != 1:
            return None
        chunk_bytes = dataset.dtype.itemsize * int(np.prod(dataset.shape[1:]))
        infos = [dataset.id.get_chunk_info(i) for i in range(dataset.id.get_num_chunks())]
        if len(infos) != dataset.shape[0]:
            return None  # a chunk was never written
        offset = infos[0].byte_offset
        for row, info in enumerate(infos):
            if info.byte_offset != offset + row * chunk_bytes or info.size != chunk_bytes or info.filter_mask:
                return None
    if offset is None:
        return None
    return np.memmap(path, dtype=dataset.dtype.newbyteorder("<"), mode="r", offset=offset, shape=dataset.shape)


@dataclass(frozen=True)
class Scaler:
    """Per-variable z-scoring fitted on the train ICs: ``(x - mean) / std`` (population std; tiny std -> 1)."""

    mean: np.ndarray
    std: np.ndarray

    def transform(self, values: np.ndarray, dtype: DTypeLike = np.float32) -> np.ndarray:
        """Normalise in float64, then cast (upstream casts to float32 after z-scoring)."""
        return ((np.asarray(values, dtype=np.float64) - self.mean) / self.std).astype(dtype, copy=False)

    def inverse(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=np.float64) * self.std + self.mean


class Windows:
    """Forecasting windows ``(x: context rows, y: horizon rows)`` over one split, gathered on demand.

    ``starts`` are row indices into ``rows``, the split's normalised states concatenated IC after IC: in ``parity``
    mode every ``stride``-th start over the concatenation (upstream: some windows straddle two ICs); in ``clean``
    mode only starts whose window stays inside one IC.
    """

    def __init__(self, rows: np.ndarray, starts: np.ndarray, context: int, horizon: int, mode: str,
                 ic_length: int) -> None:
        self.rows = rows
        self.starts = starts
        self.context = context
        self.horizon = horizon
        self.mode = mode
        self.ic_length = ic_length

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, index: int | slice | np.ndarray | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(x, y)`` of the selected windows: ``(B, context, V)`` and ``(B, horizon, V)`` (or without B for an int)."""
        starts = self.starts[index]
        offsets = np.arange(self.context + self.horizon)
        block = self.rows[np.asarray(starts)[..., None] + offsets]
        return block[..., :self.context, :], block[..., self.context:, :]

    def batches(self, batch_size: int = 32, *, shuffle: bool = False, seed: int | None = None,
                drop_last: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(x, y)`` batches; ``shuffle`` uses ``np.random.default_rng(seed)`` (never global state)."""
        order = np.random.default_rng(seed).permutation(len(self)) if shuffle else np.arange(len(self))
        stop = len(order) - (len(order) % batch_size if drop_last else 0)
        for lo in range(0, stop, batch_size):
            yield self[order[lo:lo + batch_size]]

    @property
    def straddling(self) -> int:
        """How many windows mix two ICs (0 in clean mode; about 0.6 % of them in parity mode)."""
        last = self.starts + self.context + self.horizon - 1
        return int(np.count_nonzero(self.starts // self.ic_length != last // self.ic_length))


class TrajectoryDataset(Gradable):
    """One instance: ``states`` ``(ICs, steps, 2N)`` float64, splits of whole ICs (``splits`` in rows, ``ic_splits``
    in ICs), windows, topology, indicators.

    Built from a verified file path plus the manifest; the constructor does no I/O (the file opens on first use).
    """

    def __init__(self, manifest: Manifest, path: Path, source: str,
                 evaluator_factory: EvaluatorFactory | None = None) -> None:
        self.manifest = manifest
        self.path = Path(path)
        self.source = source
        self._evaluator_factory = evaluator_factory
        self._normalised: dict[tuple[str, str], np.ndarray] = {}

    name = property(lambda self: self.manifest.name)
    version = property(lambda self: self.manifest.version)
    task = property(lambda self: self.manifest.task)
    #: the nodes of the graph the models run on (:meth:`edge_index`'s default, the Jacobian graph): one per state
    #: variable, ``q_i`` or ``p_i``, so ``2N`` (the manifest's ``graph.num_nodes``); the lattice's sites are
    #: :attr:`num_sites`
    num_nodes = property(lambda self: int(self.manifest.graph["num_nodes"]))
    #: the lattice's sites (oscillators), ``N``: each carries two variables (``q_i``, ``p_i``), two nodes
    num_sites = property(lambda self: int(self.manifest.graph["num_sites"]))
    num_ics = property(lambda self: int(self.manifest.graph["num_ics"]))
    num_steps = property(lambda self: int(self.manifest.graph["num_snapshots"]))
    variables = property(lambda self: tuple(self.manifest.graph["variables"]))
    #: state variables per step (``2N``: ``q_1..q_N, p_1..p_N``), the width of a row
    num_variables = property(lambda self: len(self.manifest.graph["variables"]))

    @property
    def num_rows(self) -> int:
        """The rows: one state vector per ``(IC, step)``, ``num_ics * num_steps`` (the manifest's ``num_rows``)."""
        return self.num_ics * self.num_steps

    @property
    def splits(self) -> dict[str, tuple[int, int]]:
        """Every split as a half-open range of rows, as on every dataset: a row is one ``(IC, step)`` state vector,
        the rows of ``states.reshape(-1, num_variables)`` (IC after IC), so split ``name`` is the rows
        :meth:`arrays` returns for it (raw). The splits are whole ICs: :attr:`ic_splits` gives them in ICs."""
        steps = self.num_steps
        return {name: (start * steps, stop * steps) for name, (start, stop) in self.ic_splits.items()}

    @property
    def ic_splits(self) -> dict[str, tuple[int, int]]:
        """Every split as a half-open range of initial conditions (the manifest's stored ``splits``, and
        :meth:`split_ics`)."""
        return {name: (int(start), int(stop)) for name, (start, stop) in self.manifest.splits.items()}

    @property
    def params(self) -> dict[str, Any]:
        """``K``, ``rho``, ``epsilon`` (full precision) and ``N``."""
        return dict(self.manifest.graph["params"])

    @property
    def digest(self) -> str:
        """The logical content digest of the trajectories file."""
        return self.manifest.file(self.manifest.graph["trajectories_file"]).digest or ""

    # ------------------------------------------------------------------------------------------- file access

    @cached_property
    def _contents(self) -> dict[str, np.ndarray | h5py.Dataset]:
        h5py = import_h5py("reading trajectory datasets")
        with h5py.File(self.path, "r") as handle:
            state = handle[self.manifest.graph["state_array"]]
            mapped = _memory_map(self.path, state)
            small = {name: handle[name][()] for name in handle if name != self.manifest.graph["state_array"]}
        if mapped is None:
            # Not laid out for mapping (e.g. a repacked or compressed file): read lazily through h5py instead.
            mapped = h5py.File(self.path, "r")[self.manifest.graph["state_array"]]
        return {"state": mapped, **small}

    @property
    def states(self) -> np.ndarray:
        """All trajectories, ``(ICs, steps, 2N)`` float64 in the blocked order ``[q_1..q_N, p_1..p_N]`` mod 2pi.

        A read-only memory map (an ``h5py.Dataset`` with the same slicing if the file cannot be mapped).

        Raises:
            MissingExtraError: if h5py is not installed (the ``hdf5`` extra).
        """
        return self._contents["state"]

    @property
    def seeds(self) -> np.ndarray:
        return self._contents["seeds"]

    @property
    def initial_conditions(self) -> np.ndarray:
        """``(ICs, 2N)``: ``[q0, p0]`` with ``p0`` unwrapped in [-pi, pi)."""
        return self._contents["initial_conditions"]

    def adjacency(self, kind: str = "jacobian") -> np.ndarray:
        """A float32 adjacency matrix: ``ring`` (N x N), ``jacobian`` or ``coupling_only`` (2N x 2N, rows depend on
        columns).

        Raises:
            InvalidNameError: for another ``kind`` (the message lists the ones the manifest declares).
        """
        declared = self.manifest.graph["adjacency"]
        if kind not in declared:
            raise InvalidNameError(f"{self.name} has no adjacency {kind!r}; choose one of {', '.join(declared)}")
        return self._contents[declared[kind]]

    def edge_index(self, kind: str = "jacobian") -> np.ndarray:
        """``(2, E)`` int64 ``[source, target]`` pairs of ``adjacency(kind)`` (a row depends on its columns, so
        information flows column -> row).

        Raises:
            InvalidNameError: for an unknown ``kind``.
        """
        rows, cols = np.nonzero(self.adjacency(kind))
        return np.stack([cols, rows]).astype(np.int64)

    @property
    def indicators(self) -> dict[str, np.ndarray]:
        """Per-IC chaos indicators: ``lambda_max`` (Benettin, per step), and for each SALI horizon H ``sali_H``,
        ``sali_iterations_H`` and ``label_H`` (chaotic below the manifest's ``chaotic_below``, 1e-8; regular above
        ``regular_above``, 1e-4; sticky between). The 1,000-step screen is upstream's and horizon-limited."""
        contents, declared = self._contents, self.manifest.graph["indicators"]
        out: dict[str, np.ndarray] = {"lambda_max": contents[declared["lambda"]]}
        chaotic, regular = float(declared["chaotic_below"]), float(declared["regular_above"])
        for column, horizon in enumerate(contents[declared["sali_horizons"]]):
            values = contents[declared["sali"]][:, column]
            out[f"sali_{horizon}"] = values
            out[f"sali_iterations_{horizon}"] = contents[declared["sali_iterations"]][:, column]
            out[f"label_{horizon}"] = np.where(values < chaotic, "chaotic", np.where(values > regular, "regular",
                                                                                      "sticky"))
        return out

    # ------------------------------------------------------------------------------------------- splits and windows

    def split_ics(self, split: str) -> range:
        """The IC indices of ``split``.

        Raises:
            InvalidNameError: if there is no such split (the message lists them).
        """
        declared = self.ic_splits
        if split not in declared:
            raise InvalidNameError(f"{self.name}@{self.version} has no split {split!r}; its splits are "
                                   f"{', '.join(declared)}")
        return range(*declared[split])

    @cached_property
    def scaler(self) -> Scaler:
        """Mean and population std of every variable over all train-IC rows, in float64 (std < 1e-8 -> 1)."""
        normalisation = self.task.get("normalisation", {})
        fit = self.split_ics(str(normalisation.get("fit_split", "train")))
        rows = np.asarray(self.states[fit.start:fit.stop], dtype=np.float64).reshape(-1, self.num_variables)
        mean = rows.mean(axis=0)
        std = rows.std(axis=0, ddof=int(normalisation.get("ddof", 0)))
        std = np.where(std < float(normalisation.get("min_std", 1e-8)), 1.0, std)
        return Scaler(mean=mean, std=std)

    def trajectories(self, split: str, *, normalised: bool = True, dtype: DTypeLike = np.float32) -> np.ndarray:
        """The split's trajectories ``(ICs, steps, 2N)``: z-scored with the train statistics and cast to ``dtype``
        (upstream: float32), or the raw float64 states when ``normalised=False``.

        Raises:
            InvalidNameError: for an unknown split.
        """
        ics = self.split_ics(split)
        if not normalised:
            return np.asarray(self.states[ics.start:ics.stop])
        key = (split, np.dtype(dtype).str)
        if key not in self._normalised:  # windows and evaluators reuse a split's normalised copy
            self._normalised[key] = self.scaler.transform(self.states[ics.start:ics.stop], dtype)
        return self._normalised[key]

    def arrays(self, split: str, *, normalised: bool = True, dtype: DTypeLike = np.float32) -> np.ndarray:
        """The split's trajectories concatenated in time, ``(ICs * steps, 2N)``: upstream's ``train``/``val``/``test``.

        Raises:
            InvalidNameError: for an unknown split.
        """
        return self.trajectories(split, normalised=normalised, dtype=dtype).reshape(-1, self.num_variables)

    def to_torch(self, device: torch.device | str | int | None = None, *, normalised: bool = True,
                 dtype: DTypeLike = np.float32) -> dict[str, torch.Tensor]:
        """Every split's trajectories ``(ICs, steps, 2N)`` (as :meth:`trajectories`) and the Jacobian graph's
        ``edge_index`` (int64) as torch tensors on ``device`` (default: CUDA when available, else CPU), moved once.

        Raises:
            MissingExtraError: if torch is not installed (the ``torch`` extra).
        """
        try:
            import torch
        except ModuleNotFoundError as exc:
            raise MissingExtraError("torch", "torch", "TrajectoryDataset.to_torch") from exc
        target = torch.device(device) if device is not None else torch.device(
            "cuda" if torch.cuda.is_available() else "cpu")
        # np.array copies: the arrays may be read-only memory maps, which torch would warn about
        tensors = {split: torch.from_numpy(np.array(self.trajectories(split, normalised=normalised, dtype=dtype)))
                   for split in self.manifest.splits}
        tensors["edge_index"] = torch.from_numpy(np.array(self.edge_index(), dtype=np.int64))
        return {name: tensor.to(target) for name, tensor in tensors.items()}

    def windows(self, split: str, context: int = 48, horizon: int = 12, stride: int | None = None,
                mode: str | None = None) -> Windows:
        """Forecasting windows of normalised float32 rows (the task's protocol by default).

        ``stride`` defaults to the task's (train 12, val/test 1); ``mode`` to the task's default, ``parity``
        (windows over the concatenated split, as upstream); ``clean`` keeps every window inside one IC.

        Raises:
            InvalidNameError: for an unknown split or mode, or a non-positive context, horizon or stride.
        """
        mode = mode or str(self.task.get("windows", {}).get("default", "parity"))
        if mode not in WINDOW_MODES:
            raise InvalidNameError(f"window mode {mode!r} is unknown; choose one of {', '.join(WINDOW_MODES)}")
        stride = int(stride if stride is not None else self.task.get("strides", {}).get(split, 1))
        if min(context, horizon, stride) <= 0:
            raise InvalidNameError(f"context, horizon and stride must be positive, got {context}, {horizon}, "
                                   f"{stride}")
        rows = self.arrays(split)
        width = context + horizon
        length = self.num_steps
        if mode == "parity":
            starts = np.arange(0, len(rows) - width + 1, stride, dtype=np.int64)
        else:
            within = np.arange(0, length - width + 1, stride, dtype=np.int64)
            starts = (np.arange(len(self.split_ics(split)), dtype=np.int64)[:, None] * length + within).reshape(-1)
        return Windows(rows, starts, context, horizon, mode, length)

    # ------------------------------------------------------------------------------------------- evaluation, card

    def card(self) -> dict[str, Any]:
        """A summary a person reads first.

        Returns:
            The parameters, sizes (``num_nodes``: the Jacobian graph's, one per variable; ``num_sites``: the
            lattice's), ``splits`` as row ranges and ``ic_splits`` in ICs, the indicator summary, the trajectories
            file's ``digest`` with its ``digest_kind`` (a logical content digest, not a file sha256) and ``source``.
        """
        stats = self.manifest.stats
        return {"name": self.name, "version": self.version, "source": self.source, **self.params,
                "num_nodes": self.num_nodes, "num_sites": self.num_sites, "num_ics": self.num_ics,
                "num_steps": self.num_steps, "num_variables": self.num_variables, "num_rows": self.num_rows,
                "splits": {k: list(v) for k, v in self.splits.items()},
                "ic_splits": {k: list(v) for k, v in self.ic_splits.items()}, "lambda_mean": stats.get("lambda_mean"),
                "lyapunov_time": stats.get("lyapunov_time"), "chaotic_fraction": stats.get("chaotic_fraction"),
                "digest": self.digest, "digest_kind": DIGEST_KIND}

    def __repr__(self) -> str:
        p = self.params
        return (f"TrajectoryDataset({self.name}@{self.version}: K={p['K']}, rho={p['rho']}, epsilon={p['epsilon']}, "
                f"N={p['N']}, {self.num_ics} ICs x {self.num_steps} steps, source={self.source!r})")


def open_trajectories(manifest: Manifest, files: Mapping[str, Mapping[str, Path]], source: str,
                      evaluator_factory: EvaluatorFactory | None = None) -> TrajectoryDataset:
    """The dataset object over the verified trajectories file (no I/O until an array is used)."""
    name = manifest.graph["trajectories_file"]
    path = next(iter(files[name].values()))
    return TrajectoryDataset(manifest, path, source, evaluator_factory)
