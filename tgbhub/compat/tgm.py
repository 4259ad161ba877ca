"""TGM (tgm-lib 0.1.0b1, ``pip install -e '.[tgm]'``) on tgbhub's verified cache: the data is
``ds.to_tgm()`` (a ``tgm.data.DGData`` with TGB's splits), the evaluation negatives come from here.

TGM's own ``TGBNegativeEdgeSamplerHook`` loads py-tgb's negatives pickle through py-tgb; :func:`negatives_hook`
builds the same kind of hook from the dataset's negatives arrays (``ds.negatives(split)``), which the bundled
evaluator grades against, so a TGM script scores exactly the queries the evaluator ranks, with nothing else loaded.
:func:`link_hooks` registers one per evaluation split in a TGM ``HookManager``, the place of TGM's
``TGB_LINK_PROPERTY_PREDICTION`` recipe for val and test.

A batch the hook has run on carries what TGM's TGB hook gives it: ``neg_batch_list`` (one int32 tensor of
negatives per batch edge), ``neg`` (the batch's distinct negatives) and ``neg_time``. Queries are found by
``(src, dst, t)``, as py-tgb's sampler finds them; the hook takes a split whose rows are its queries one to one (a TGB
link dataset) and refuses one where queries sharing a key hold different negatives. A loader visits a split's rows in
stored order, so the ``k``-th edge a loop ranks is query ``k``: the ``query`` column of a ranking submission for
``ds.evaluator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tgbhub.data import Negatives, TemporalGraphDataset
from tgbhub.errors import IntegrityError, MissingExtraError, UnsupportedTaskError

#: the seed of the generator that draws ``neg_time``, as TGM's TGB hook seeds its own
NEG_TIME_SEED = 0


class NegativesHook:
    """A TGM hook (it satisfies ``tgm.hooks.DGHook``) that attaches one split's pre-generated negatives to every
    batch of that split. Build it with :func:`negatives_hook`; the constructor does no I/O.

    Args:
        split: the split the negatives belong to (for messages).
        queries: ``(src, dst, t)`` -> the query index whose negatives that key has.
        negatives: int64 ``[n_queries, q]``, padded with ``-1`` after ``count[i]`` entries.
        count: the number of real negatives of each query.
    """

    requires = {"edge_src", "edge_dst", "edge_time"}
    produces = {"neg", "neg_batch_list", "neg_time"}
    has_state = False

    def __init__(self, split: str, queries: dict[tuple[int, int, int], int], negatives: np.ndarray,
                 count: np.ndarray) -> None:
        self.split = split
        self.queries = queries
        self.negatives = negatives
        self.count = count

    def __call__(self, dg: Any, batch: Any) -> Any:
        """Attach ``neg_batch_list``, ``neg`` and ``neg_time`` to ``batch`` (a ``tgm.DGBatch``).

        Raises:
            UnsupportedTaskError: if a batch edge is none of the split's queries (a batch of another split).
        """
        import torch

        device = batch.edge_src.device
        keys = zip(batch.edge_src.tolist(), batch.edge_dst.tolist(), batch.edge_time.tolist(), strict=True)
        try:
            query = [self.queries[key] for key in keys]
        except KeyError as missing:
            raise UnsupportedTaskError(f"batch edge (src, dst, t) = {missing.args[0]} is no query of split "
                                       f"{self.split!r}; register this hook for the loader of that split only"
                                       ) from None
        batch.neg_batch_list = [torch.from_numpy(self.negatives[i, :self.count[i]].astype(np.int32)).to(device)
                                for i in query]
        if not query:
            batch.neg = torch.empty(0, dtype=torch.int32, device=device)
            batch.neg_time = torch.empty(0, dtype=torch.int64, device=device)
            return batch
        batch.neg = torch.unique(torch.cat(batch.neg_batch_list))
        # TGM's convention for the negatives' times: uniform over the batch's time span, from a fixed seed
        generator = torch.Generator(device=device)
        generator.manual_seed(NEG_TIME_SEED)
        low, high = int(batch.edge_time.min()), int(batch.edge_time.max()) + 1
        batch.neg_time = torch.randint(low, high, (len(batch.neg),), device=device, generator=generator)
        return batch

    def reset_state(self) -> None:
        """Nothing to reset: the hook keeps no state between batches."""


def negatives_hook(dataset: TemporalGraphDataset, split: str, task: str | None = None) -> NegativesHook:
    """The TGM hook of ``split``'s negatives (``dataset.negatives(split, task)``, memory-mapped from the cache).

    Raises:
        InvalidNameError: if the dataset has no negatives for ``split``.
        UnsupportedTaskError: if the split's rows are not its queries one to one (a symmetric T-GRAB graph ranks
            one direction of each undirected edge), which TGM's evaluation loop, one ranking per batch edge, needs.
        IntegrityError: if two queries share ``(src, dst, t)`` with different negatives.
    """
    negatives = dataset.negatives(split, task=task)
    _require_one_query_per_row(dataset, split, negatives)
    table = np.asarray(negatives.negatives).astype(np.int64)
    count = np.asarray(negatives.count).astype(np.int64)
    return NegativesHook(split, _query_index(negatives, table, count), table, count)


def link_hooks(dataset: TemporalGraphDataset, splits: Sequence[str] = ("val", "test"), task: str | None = None) -> Any:
    """A TGM ``HookManager`` keyed by ``splits``, each with its :func:`negatives_hook`; activate a key around the
    loop over that split (``with hooks.activate("test"): ...``).

    Raises:
        MissingExtraError: if tgm-lib is not installed (the ``tgm`` extra).
        InvalidNameError, UnsupportedTaskError, IntegrityError: as :func:`negatives_hook`.
    """
    try:
        from tgm.hooks import HookManager
    except ModuleNotFoundError as exc:
        raise MissingExtraError("tgm-lib", "tgm", "link_hooks()") from exc
    manager = HookManager(keys=list(splits))
    for split in splits:
        manager.register(split, negatives_hook(dataset, split, task))
    return manager


def _require_one_query_per_row(dataset: TemporalGraphDataset, split: str, negatives: Negatives) -> None:
    """Raises:
        UnsupportedTaskError: unless query ``i`` is row ``i`` of ``split``.
    """
    lo, hi = dataset.rows_of(split)
    same = len(negatives) == hi - lo and all(
        np.array_equal(np.asarray(mine), np.asarray(theirs)[lo:hi])
        for mine, theirs in ((negatives.src, dataset.src), (negatives.dst, dataset.dst), (negatives.t, dataset.t)))
    if not same:
        raise UnsupportedTaskError(f"{dataset.name}@{dataset.version}: split {split!r} has {hi - lo} rows and "
                                   f"{len(negatives)} queries that are not its rows one to one; TGM's evaluation "
                                   "ranks every batch edge, so take the queries from ds.negatives(split) and score "
                                   "them with ds.evaluator instead")


def _query_index(negatives: Negatives, table: np.ndarray, count: np.ndarray) -> dict[tuple[int, int, int], int]:
    """``(src, dst, t)`` -> the first query with that key.

    Raises:
        IntegrityError: if a later query with the same key holds other negatives (a key could not tell them apart).
    """
    index: dict[tuple[int, int, int], int] = {}
    keys = zip(np.asarray(negatives.src).tolist(), np.asarray(negatives.dst).tolist(),
               np.asarray(negatives.t).astype(np.int64).tolist(), strict=True)
    for i, key in enumerate(keys):
        first = index.setdefault(key, i)
        if first != i and (count[first] != count[i] or not np.array_equal(table[first], table[i])):
            raise IntegrityError(f"{negatives.file}", "one set of negatives per (src, dst, t)",
                                 f"queries {first} and {i} at (src, dst, t) = {key} hold different negatives",
                                 "Rank the queries by index instead: ds.negatives(split) row i is query i")
    return index


__all__: Sequence[str] = ("NEG_TIME_SEED", "NegativesHook", "link_hooks", "negatives_hook")
