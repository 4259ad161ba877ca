"""ChaosNetBench upstream's training-loop data path, re-created for the speed benchmark (the "peer").

What upstream's ``chaosnetbench/training.py`` does per run (docs/chaosnet.md and docs/baselines.md describe the protocol), written here
the way that code does it, so its time can be set against tgbhub's trainer on the same model and data:

- ``CSMDataset``: the normalised split array (rows of all ICs concatenated) copied once into a float32 tensor;
  ``__getitem__`` slices one window, ``x`` ``(48, V)`` and ``y`` ``(12, V)``. Train windows have stride 12, val
  windows stride 1; windows may straddle two ICs, as upstream's do.
- ``DataLoader``: batch 32; train shuffled with ``drop_last``, val in order; ``num_workers`` workers (upstream's
  default is 4), ``persistent_workers`` when there are any, ``pin_memory`` on CUDA; every batch copied to the device
  with ``.to(device)``.
- Train epoch: Adam (weight decay 0), MSE, ``clip_grad_norm_`` at 5.0, ``loss.item()`` and ``grad_norm.item()``
  every batch; MultiStepLR at 20/35/45 with gamma 0.5 stepped once per epoch.
- Val pass every epoch: summed MSE and MAE with an ``.item()`` each per batch; the best-val weights are written with
  ``torch.save`` when val improves and loaded back before testing; patience 10.
- Rollout: each test IC on its own, as ``_evaluate_autoregressive`` / ``metrics.autoregressive_rollout_np``: a numpy
  window of the first 48 true rows, one model call per 12-step block (a new float32 tensor copied to the device,
  the forecast copied back with ``.cpu().numpy()``), ``np.concatenate`` to shift the window; 830 calls for a
  10,000-step IC; then the per-step MSE, NRMSE, sMAPE and VPT of that IC.

Left out because they cost nothing measurable or do not apply to these models: the ``compute_loss`` /
``get_kl_loss`` / adjacency-regulariser hooks (none of the four models has them), progress printing, result JSON.
The teacher-forced test pass over the stride-1 test windows is timed only when asked (``test_pass=True``).

Run it from the repository root: ``python -m scripts.upstream_loop`` (1 epoch of dlinear, 200 train batches, on
CPU); ``--help`` for more.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

os.environ.setdefault("TGBHUB_NO_PROGRESS", "1")

SEQ_LEN, PRED_LEN = 48, 12
BATCH_SIZE = 32
TRAIN_STRIDE = 12
MILESTONES, GAMMA = [20, 35, 45], 0.5
CLIP_NORM = 5.0
PATIENCE = 10
VPT_THRESHOLD = 1.0


class CSMDataset(Dataset):
    """Upstream's sliding-window dataset over one split's concatenated rows ``(T, V)``."""

    def __init__(self, data: np.ndarray, seq_len: int = SEQ_LEN, pred_len: int = PRED_LEN, stride: int = 1) -> None:
        """
        Raises:
            ValueError: if the split is shorter than one window.
        """
        self.data = torch.tensor(data, dtype=torch.float32)  # upstream: torch.FloatTensor(data), a copy
        self.seq_len, self.pred_len = seq_len, pred_len
        self.stride = max(1, stride)
        max_start = len(data) - seq_len - pred_len
        if max_start < 0:
            raise ValueError(f"not enough rows: {len(data)}, a window needs {seq_len + pred_len}")
        self.n_windows = max_start // self.stride + 1

    def __len__(self) -> int:
        return self.n_windows

    def __getitem__(self, idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        start = idx * self.stride
        end = start + self.seq_len
        return self.data[start:end], self.data[end:end + self.pred_len]


def make_loaders(train: np.ndarray, val: np.ndarray, device: torch.device,
                 workers: int) -> tuple[DataLoader, DataLoader]:
    """Upstream's train (stride 12, shuffled, ``drop_last``) and val (stride 1, in order) loaders."""
    common: dict[str, Any] = {"batch_size": BATCH_SIZE, "num_workers": workers,
                              "pin_memory": device.type == "cuda", "persistent_workers": workers > 0}
    train_loader = DataLoader(CSMDataset(train, stride=TRAIN_STRIDE), shuffle=True, drop_last=True, **common)
    val_loader = DataLoader(CSMDataset(val, stride=1), shuffle=False, **common)
    return train_loader, val_loader


def _sync(device: torch.device) -> None:
    """Wait for queued CUDA work, so a timer reads finished work (a no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_epoch(model: nn.Module, loader: DataLoader, optimiser: torch.optim.Optimizer, device: torch.device,
                max_batches: int | None) -> tuple[float, int]:
    """One epoch as upstream's ``_train_epoch``: ``(mean loss, batches)``; stops after ``max_batches`` if set."""
    model.train()
    total_loss, total_grad_norm, batches = 0.0, 0.0, 0
    for x, y in loader:
        x = x.to(device)
        y = y.to(device)
        loss = F.mse_loss(model(x), y)
        optimiser.zero_grad()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=CLIP_NORM)
        optimiser.step()
        total_loss += loss.item()
        total_grad_norm += grad_norm.item() if torch.isfinite(grad_norm) else 0.0  # upstream logs it
        batches += 1
        if max_batches is not None and batches >= max_batches:
            break
    return total_loss / max(batches, 1), batches


@torch.no_grad()
def validate(model: nn.Module, loader: DataLoader, device: torch.device) -> tuple[float, float]:
    """Upstream's ``_validate``: teacher-forced ``(MSE, MAE)`` over every val window, step and variable."""
    model.eval()
    total_mse, total_mae, count = 0.0, 0.0, 0
    for x, y in loader:
        x = x.to(device)
        y = y.to(device)
        y_hat = model(x)
        total_mse += F.mse_loss(y_hat, y, reduction="sum").item()
        total_mae += F.l1_loss(y_hat, y, reduction="sum").item()
        count += y.numel()
    return total_mse / count, total_mae / count


@torch.no_grad()
def rollout_ic(model: nn.Module, trajectory: np.ndarray, device: torch.device) -> dict[str, Any]:
    """One test IC as upstream's ``autoregressive_rollout_np`` + ``vpt_from_nrmse_curve``: the first 48 true rows
    seed a numpy window, each model call adds 12 rows (the last block truncated), then the per-step metrics."""
    model.eval()
    x_init, y_true = trajectory[:SEQ_LEN], trajectory[SEQ_LEN:]

    def model_fn(x_np: np.ndarray) -> np.ndarray:
        x_t = torch.tensor(x_np, dtype=torch.float32).to(device)  # upstream: torch.FloatTensor(x_np).to(device)
        return model(x_t).cpu().numpy()

    y_pred = np.zeros_like(y_true)
    window = x_init.copy()
    done, calls = 0, 0
    while done < len(y_true):
        pred = model_fn(window[np.newaxis])[0]
        calls += 1
        end = min(done + PRED_LEN, len(y_true))
        take = end - done
        y_pred[done:end] = pred[:take]
        window = np.concatenate([window[take:], pred[:take]], axis=0) if take < SEQ_LEN else pred[-SEQ_LEN:]
        done = end
    mse_t = np.mean((y_true - y_pred) ** 2, axis=-1)
    nrmse_t = np.sqrt(mse_t) / (np.std(y_true) + 1e-8)
    smape_t = 200.0 * np.mean(np.abs(y_pred - y_true) / (np.abs(y_pred) + np.abs(y_true) + 1e-8), axis=-1)
    exceed = np.where(nrmse_t > VPT_THRESHOLD)[0]
    vpt = int(exceed[0]) if len(exceed) else len(nrmse_t)
    return {"vpt": vpt, "calls": calls, "mse_final": float(mse_t[-1]), "smape_final": float(smape_t[-1])}


@torch.no_grad()
def teacher_forced_pass(model: nn.Module, rows: np.ndarray, device: torch.device, workers: int) -> float:
    """Upstream's teacher-forced test pass (stride-1 windows, batch 32, predictions gathered as numpy): its MSE."""
    loader = DataLoader(CSMDataset(rows, stride=1), batch_size=BATCH_SIZE, shuffle=False, num_workers=workers,
                        pin_memory=device.type == "cuda", persistent_workers=workers > 0)
    model.eval()
    truth, preds = [], []
    for x, y in loader:
        preds.append(model(x.to(device)).cpu().numpy())
        truth.append(y.numpy())
    return float(np.mean((np.concatenate(truth) - np.concatenate(preds)) ** 2))


def run_upstream(model: nn.Module, train: np.ndarray, val: np.ndarray, test_trajectories: np.ndarray, epochs: int,
                 lr: float, device: str, workers: int, max_batches: int | None = None, *, seed: int = 42,
                 test: bool = False) -> dict[str, Any]:
    """Train ``model`` and roll it out the way upstream does, timing each phase with ``time.perf_counter``.

    ``train``/``val`` are a split's normalised rows ``(ICs * steps, V)`` (``dataset.arrays(split)``),
    ``test_trajectories`` the normalised test ICs ``(ICs, steps, V)`` (``dataset.trajectories("test")``).
    ``max_batches`` caps the train batches per epoch (the val pass and the rollout always run in full).
    ``test=True`` also times the teacher-forced test pass. On CUDA the device is synchronised before each reading.

    Returns seconds per train epoch and per val pass (lists and means), per train batch, per rolled-out IC and in
    all, plus the counts and losses needed to read them.

    Raises:
        ValueError: if a split is shorter than one window or ``epochs`` is below 1.
    """
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    dev = torch.device(device)
    torch.manual_seed(seed)  # upstream seeds torch and numpy per run; the shuffle order draws from torch's
    np.random.seed(seed)
    precision = torch.get_float32_matmul_precision()
    if dev.type == "cuda":
        torch.set_float32_matmul_precision("high")  # upstream enables TF32 whenever CUDA is present
    try:
        model = model.to(dev)
        train_loader, val_loader = make_loaders(train, val, dev, workers)
        out: dict[str, Any] = {"device": str(dev), "workers": workers, "epochs": epochs,
                               "train_windows": len(train_loader.dataset), "val_windows": len(val_loader.dataset),
                               "val_batches": len(val_loader)}
        out.update(_train(model, train_loader, val_loader, dev, epochs, lr, max_batches))
        out.update(_rollout(model, test_trajectories, dev))
        if test:
            _sync(dev)
            tick = time.perf_counter()
            rows = test_trajectories.reshape(-1, test_trajectories.shape[-1])
            out["test_mse"] = teacher_forced_pass(model, rows, dev, workers)
            _sync(dev)
            out["test_s"] = time.perf_counter() - tick
        return out
    finally:
        torch.set_float32_matmul_precision(precision)


def _train(model: nn.Module, train_loader: DataLoader, val_loader: DataLoader, dev: torch.device, epochs: int,
           lr: float, max_batches: int | None) -> dict[str, Any]:
    """The epoch loop with upstream's early stopping and best-checkpoint file; per-epoch timings."""
    optimiser = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=0.0)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimiser, milestones=MILESTONES, gamma=GAMMA)
    times: dict[str, list[float]] = {"train_epoch_s": [], "val_s": [], "epoch_s": [], "train_loss": [],
                                     "val_mse": []}
    best, stale, batches = float("inf"), 0, 0
    with tempfile.TemporaryDirectory() as scratch:
        best_path = os.path.join(scratch, "best_model.pt")
        for _ in range(epochs):
            _sync(dev)
            start = time.perf_counter()
            loss, batches = train_epoch(model, train_loader, optimiser, dev, max_batches)
            _sync(dev)
            trained = time.perf_counter()
            val_mse, _ = validate(model, val_loader, dev)
            _sync(dev)
            validated = time.perf_counter()
            scheduler.step()
            if val_mse < best:
                best, stale = val_mse, 0
                torch.save(model.state_dict(), best_path)
            else:
                stale += 1
            times["epoch_s"].append(time.perf_counter() - start)
            times["train_epoch_s"].append(trained - start)
            times["val_s"].append(validated - trained)
            times["train_loss"].append(loss)
            times["val_mse"].append(val_mse)
            if stale >= PATIENCE:
                break
        if os.path.exists(best_path):
            model.load_state_dict(torch.load(best_path, weights_only=True))
    return {**times, "train_batches": batches,
            "train_epoch_s_mean": float(np.mean(times["train_epoch_s"])),
            "val_s_mean": float(np.mean(times["val_s"])),
            "train_batch_s": float(np.mean(times["train_epoch_s"])) / max(batches, 1)}


def _rollout(model: nn.Module, test_trajectories: np.ndarray, dev: torch.device) -> dict[str, Any]:
    """Every test IC rolled out on its own, one after another; seconds per IC and in all."""
    per_ic, vpts, calls = [], [], 0
    for trajectory in test_trajectories:
        _sync(dev)
        tick = time.perf_counter()
        result = rollout_ic(model, trajectory, dev)
        _sync(dev)
        per_ic.append(time.perf_counter() - tick)
        vpts.append(result["vpt"])
        calls = result["calls"]
    return {"rollout_ic_s": per_ic, "rollout_s": float(sum(per_ic)),
            "rollout_ic_s_mean": float(np.mean(per_ic)) if per_ic else 0.0, "rollout_calls_per_ic": calls,
            "vpt": vpts, "vpt_mean": float(np.mean(vpts)) if vpts else 0.0}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="chaosnet/k0.5-rho0.3-n8")
    parser.add_argument("--model", default="dlinear", choices=("dlinear", "lstm", "tcn", "graph_wavenet"))
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-batches", type=int, default=200, help="train batches per epoch (0: all)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workers", type=int, default=4, help="DataLoader workers (upstream's default: 4)")
    parser.add_argument("--ics", type=int, default=None, help="roll out only the first ICs of the test split")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--test", action="store_true", help="also time the teacher-forced test pass")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads (default: torch's own choice, as upstream)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    import tgbhub
    from tgbhub.trainers.chaosnet_models import MODELS

    dataset = tgbhub.load_dataset(args.dataset)
    builder, defaults, lr = MODELS[args.model]
    torch.manual_seed(args.seed)
    model = builder(dataset.num_nodes, **defaults)
    trajectories = dataset.trajectories("test")[:args.ics]
    result = run_upstream(model, dataset.arrays("train"), dataset.arrays("val"), trajectories, args.epochs, lr,
                          args.device, args.workers, args.max_batches or None, seed=args.seed, test=args.test)
    print(f"{args.model} on {args.dataset}, {result['device']}, {args.workers} workers, torch "
          f"{torch.__version__}, {torch.get_num_threads()} threads")
    print(f"train: {result['train_batches']} of {result['train_windows'] // BATCH_SIZE} batches/epoch, "
          f"{result['train_epoch_s_mean']:.3f} s/epoch ({1e3 * result['train_batch_s']:.3f} ms/batch), "
          f"loss {result['train_loss'][-1]:.4f}")
    print(f"val:   {result['val_batches']} batches, {result['val_s_mean']:.3f} s/pass, "
          f"MSE {result['val_mse'][-1]:.4f}")
    print(f"rollout: {len(result['rollout_ic_s'])} ICs x {result['rollout_calls_per_ic']} calls, "
          f"{result['rollout_ic_s_mean']:.3f} s/IC, {result['rollout_s']:.3f} s in all, "
          f"VPT mean {result['vpt_mean']:.2f}")
    if args.test:
        print(f"test pass: {result['test_s']:.3f} s, MSE {result['test_mse']:.4f}")


if __name__ == "__main__":
    main()
