"""The helpers TGB's example scripts import from py-tgb 2.3.0's ``tgb.utils.utils`` and ``tgb.utils.stats``, with
py-tgb's signatures and behaviour: seeding every random generator a script uses, the shared argument parser, the
results file, a TKG's per-timestamp snapshots and the training-curve plot."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import sys
from typing import Any

import numpy as np

from tgbhub.errors import MissingExtraError


def set_random_seed(random_seed: int) -> None:
    """Seed Python's ``random``, numpy's global generator and, when torch is installed, torch (CPU and CUDA, with
    cuDNN made deterministic), as py-tgb's ``set_random_seed`` does: a training script's runs repeat exactly.

    Args:
        random_seed: the seed.
    """
    random.seed(random_seed)
    np.random.seed(random_seed)
    if importlib.util.find_spec("torch") is None:
        return
    import torch  # py-tgb imports it whenever it is installed: seeding it is part of the contract

    torch.manual_seed(random_seed)
    torch.cuda.manual_seed(random_seed)
    torch.cuda.manual_seed_all(random_seed)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def argument_parser() -> argparse.ArgumentParser:
    """py-tgb's ``'*** TGB ***'`` parser: dataset, learning rate, batch size, k, epochs, seed, memory/time/embedding
    dimensions, early-stopping tolerance and patience, and the number of runs, with py-tgb's defaults."""
    parser = argparse.ArgumentParser("*** TGB ***")
    parser.add_argument("-d", "--data", type=str, help="Dataset name", default="tgbl-wiki")
    parser.add_argument("--lr", type=float, help="Learning rate", default=1e-4)
    parser.add_argument("--bs", type=int, help="Batch size", default=200)
    parser.add_argument("--k_value", type=int, help="k_value for computing ranking metrics", default=10)
    parser.add_argument("--num_epoch", type=int, help="Number of epochs", default=30)
    parser.add_argument("--seed", type=int, help="Random seed", default=1)
    parser.add_argument("--mem_dim", type=int, help="Memory dimension", default=100)
    parser.add_argument("--time_dim", type=int, help="Time dimension", default=100)
    parser.add_argument("--emb_dim", type=int, help="Embedding dimension", default=100)
    parser.add_argument("--tolerance", type=float, help="Early stopper tolerance", default=1e-6)
    parser.add_argument("--patience", type=float, help="Early stopper patience", default=5)
    parser.add_argument("--num_run", type=int, help="Number of iteration runs", default=5)
    return parser


def get_args() -> tuple[argparse.Namespace, list[str]]:
    """py-tgb's ``get_args``: the command line parsed by :func:`argument_parser`, and ``sys.argv``.

    Returns:
        ``(args, sys.argv)``.

    Raises:
        SystemExit: with status 0 after printing the help, for ``--help`` or arguments the parser refuses (py-tgb
            exits 0 in both cases).
    """
    parser = argument_parser()
    try:
        args = parser.parse_args()
    except SystemExit:
        parser.print_help()
        sys.exit(0)
    return args, sys.argv


def save_results(new_results: dict[str, Any], filename: str) -> None:
    """Write ``new_results`` to the JSON file ``filename``, or append it to the list the file holds (a file holding
    one dict becomes a list of two), as py-tgb's ``save_results``.

    Args:
        new_results: one run's results.
        filename: the JSON file.
    """
    if not os.path.isfile(filename):
        with open(filename, "w") as handle:
            json.dump(new_results, handle, indent=4)
        return
    with open(filename, "r+") as handle:
        stored = json.load(handle)
        runs = [stored] if isinstance(stored, dict) else stored
        runs.append(new_results)
        handle.seek(0)
        json.dump(runs, handle, indent=4)


def split_by_time(data: np.ndarray) -> list[np.ndarray]:
    """A TKG's quadruples ``[src, rel, dst, t]`` grouped by timestamp, as py-tgb's ``split_by_time``: one
    ``[n, 3]`` array of ``(src, rel, dst)`` per distinct ``t``, in increasing ``t``, rows in their input order."""
    times = np.unique(data[:, 3])
    return [data[data[:, 3] == t, :3] for t in times]


def plot_curve(y: np.ndarray, outname: str) -> None:
    """Plot a training curve and save it as ``<outname>.pdf``, as py-tgb's ``tgb.utils.stats.plot_curve``.

    Raises:
        MissingExtraError: if matplotlib is not installed (the ``plot`` extra).
    """
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        raise MissingExtraError("matplotlib", "plot", "plot_curve") from exc
    plt.plot(y, color="#fc4e2a")
    plt.savefig(outname + ".pdf")
    plt.close()
