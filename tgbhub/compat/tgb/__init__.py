"""py-tgb 2.3.0's public API served from tgbhub's verified cache: TGB's example scripts run with only their import
lines changed, or unchanged through the runner, and without py-tgb installed.

    from tgb.linkproppred.dataset import LinkPropPredDataset        # before
    from tgb.linkproppred.evaluate import Evaluator
    from tgb.utils.utils import set_random_seed, save_results
    from tgbhub.compat.tgb import LinkPropPredDataset, Evaluator, set_random_seed, save_results   # after

    python -m tgbhub.compat.tgb run examples/linkproppred/tgbl-wiki/tgn.py --num_run 1    # unchanged, via the runner

Every name TGB's example scripts import from ``tgb`` is served here, with py-tgb's signatures, attribute types and
return types: the numpy datasets (:class:`LinkPropPredDataset`, :class:`NodePropPredDataset`), the PyG datasets
(:class:`PyGLinkPropPredDataset`, :class:`PyGNodePropPredDataset`: torch tensors and ``get_TemporalData()``; torch and
torch_geometric are imported on first use of one of these two names), the negative samplers, one :class:`Evaluator`
for link and node datasets (``tgb.linkproppred.evaluate`` and ``tgb.nodeproppred.evaluate``), and
``tgb.utils.utils``' ``set_random_seed``, ``get_args``, ``save_results``, ``split_by_time`` with ``tgb.utils.stats``'
``plot_curve``. :func:`~tgbhub.compat.tgb.runner.run_script` (``python -m tgbhub.compat.tgb run SCRIPT ...``) runs a
script unchanged: for that process only, every ``tgb`` module name resolves to this package
(:data:`~tgbhub.compat.tgb.runner.TGB_MODULES`).

The constructors take py-tgb's arguments and the objects have py-tgb's attributes, with py-tgb's names, dtypes and
row order (the release CSV's, which the import keeps as ``edge_id``; for a TKG, py-tgb's originals followed by
their inverse edges). Served for every TGB family: tgbl (``hist_rnd`` negatives; tgbl-flight's airport
``node_feat``), tkgl (inverse edges, negatives keyed by ``(t, src, edge_type)``: the 1-vs-all ``time-filtered``
protocol and ``dst-time-filtered``), thgl (node types, ``node-type-filtered`` negatives) and tgbn (the label stream,
NDCG@10). What differs underneath (docs/tgb.md):

- the data are the version imported with ``tgbhub import tgb/NAME``: TGB's release converted and checked against
  TGB's published statistics, then cached with sha256-verified files. It lives in tgbhub's cache
  (``$TGBHUB_CACHE``, or the ``cache_dir=`` keyword this package adds), never under site-packages: py-tgb's ``root``
  and ``meta_dict`` are accepted and ignored. With ``download=True`` (py-tgb's default) a dataset that is not
  imported yet is imported on first use, from the zip a previous import kept or from TGB's URL (never in offline
  mode, ``TGBHUB_OFFLINE=1``); stdin is never read.
- nothing is parsed or unpickled: ``full_data`` comes from memory-mapped Parquet columns, and the evaluation
  negatives are rectangular arrays (or, time-filtered, CSR filter sets) found by sorted keys, not a pickled dict.
- :class:`Evaluator` refuses NaN/inf scores and shapes that py-tgb would broadcast silently
  (:class:`~tgbhub.errors.ScoreError`), where py-tgb scores a NaN positive as MRR 1.0.
- the tgbn label stream hands out each label timestamp's nodes in node-id order; py-tgb's dict keeps the order in
  which the label file lists them, which the import does not store. Every node gets the same label vector, so a
  model's predictions and the NDCG of a batch do not change (up to float rounding of the mean).
- where the stored data cannot reproduce py-tgb's view (a parser this package does not know), a clear error says so
  instead of returning something different.

Importing this package imports neither torch nor py-tgb; torch tensors are accepted wherever py-tgb accepts them.
"""

from __future__ import annotations

import importlib
from typing import Any

from tgbhub.compat.tgb.datasets import LinkPropPredDataset, NodePropPredDataset
from tgbhub.compat.tgb.evaluate import Evaluator
from tgbhub.compat.tgb.samplers import (
    KeyIndex,
    NegativeEdgeSampler,
    RelationNegativeEdgeSampler,
    RelationQueries,
    THGNegativeEdgeSampler,
    TKGNegativeEdgeSampler,
    complements,
    negative_sampler,
    relation_queries,
)
from tgbhub.compat.tgb.utils import get_args, plot_curve, save_results, set_random_seed, split_by_time
from tgbhub.compat.tgb.views import (
    PYTGB_NODE_PARSERS,
    PYTGB_PARSERS,
    LabelRows,
    dataset_entry,
    open_imported,
    pytgb_full_data,
    pytgb_node_data,
    pytgb_node_type,
    pytgb_static_data,
)

#: names served by a module that imports torch and torch_geometric, loaded on first use
_PYG_NAMES = ("PyGLinkPropPredDataset", "PyGNodePropPredDataset")


def __getattr__(name: str) -> Any:
    """The PyG datasets, imported on first use (they need torch and torch_geometric).

    Raises:
        AttributeError: for a name this package does not serve.
        MissingExtraError: if torch or torch_geometric is not installed.
    """
    if name in _PYG_NAMES:
        return getattr(importlib.import_module("tgbhub.compat.tgb.pyg"), name)
    raise AttributeError(f"module 'tgbhub.compat.tgb' has no attribute {name!r}")


__all__ = ["Evaluator", "KeyIndex", "LabelRows", "LinkPropPredDataset", "NegativeEdgeSampler", "NodePropPredDataset",
           "PYTGB_NODE_PARSERS", "PYTGB_PARSERS", "PyGLinkPropPredDataset", "PyGNodePropPredDataset",
           "RelationNegativeEdgeSampler", "RelationQueries", "THGNegativeEdgeSampler", "TKGNegativeEdgeSampler",
           "complements", "dataset_entry", "get_args", "negative_sampler", "open_imported", "plot_curve",
           "pytgb_full_data", "pytgb_node_data", "pytgb_node_type", "pytgb_static_data", "relation_queries",
           "save_results", "set_random_seed", "split_by_time"]
