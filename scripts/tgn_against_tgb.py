"""tgbhub's TGN against TGB's own, step by step: ``python -m scripts.tgn_against_tgb --tgb-repo TGB --peer-site SITE
--cache CACHE [--seed 1]``.

TGB's ``tgn.py`` training loop, written here around TGB's own ``modules`` (its ``TGNMemory``, ``LastNeighborLoader``,
``GraphAttentionEmbedding``, ``LinkPredictor``; a checkout of TGB at v2.3.0, ``--tgb-repo``; they import
torch-scatter, which has no wheel: ``--peer-site`` is a folder it was built into) and tgbhub's event trainer run one
epoch on the same imported ``tgb/tgbl-wiki`` (``--cache``, e.g. the benchmark's ``scripts/bench train --part tgn
--work DIR`` leaves one in ``DIR/tgbhub-cache``), from the same seed (the two build their modules in the same order,
so their initial weights are equal: checked), with the same training negatives (drawn once here and handed to both)
and attention dropout 0, so nothing random differs. It prints the first batches' losses of both, the epoch's mean
loss, and the validation and test MRR (TGB's evaluated one query at a time with py-tgb's ``Evaluator``, tgbhub's by
its batched protocol and the bundled evaluator). Equal losses batch for batch say the two compute the same model.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

FIRST = 5


def _negatives(ds: Any, seed: int) -> list[torch.Tensor]:
    """One uniform destination per training event, batch by batch (200), from a generator of their own."""
    lo, hi = (int(b) for b in ds.splits["train"])
    dst = np.asarray(ds.dst)
    low, high = int(dst.min()), int(dst.max())
    generator = torch.Generator().manual_seed(seed)
    return [torch.randint(low, high + 1, (min(200, hi - b),), generator=generator) for b in range(lo, hi, 200)]


def tgb_side(ds: Any, negatives: list[torch.Tensor], seed: int) -> dict[str, Any]:
    """TGB's tgn.py loop around TGB's modules: one epoch, then val and test one query at a time."""
    from modules.decoder import LinkPredictor
    from modules.emb_module import GraphAttentionEmbedding
    from modules.memory_module import TGNMemory
    from modules.msg_agg import LastAggregator
    from modules.msg_func import IdentityMessage
    from modules.neighbor_loader import LastNeighborLoader
    from tgb.linkproppred.evaluate import Evaluator
    from torch_geometric.data import TemporalData
    from torch_geometric.loader import TemporalDataLoader

    data = TemporalData(src=torch.as_tensor(np.asarray(ds.src, dtype=np.int64)),
                        dst=torch.as_tensor(np.asarray(ds.dst, dtype=np.int64)),
                        t=torch.as_tensor(np.asarray(ds.t, dtype=np.int64)),
                        msg=torch.as_tensor(np.asarray(ds.columns["edge_feat"], dtype=np.float32)))
    dim = int(data.msg.size(-1))
    torch.manual_seed(seed)
    memory = TGNMemory(ds.num_nodes, dim, 100, 100, message_module=IdentityMessage(dim, 100, 100),
                       aggregator_module=LastAggregator())
    gnn = GraphAttentionEmbedding(in_channels=100, out_channels=100, msg_dim=dim, time_enc=memory.time_enc)
    gnn.conv.dropout = 0.0
    link_pred = LinkPredictor(in_channels=100)
    optimiser = torch.optim.Adam(set(memory.parameters()) | set(gnn.parameters()) | set(link_pred.parameters()),
                                 lr=1e-4)
    criterion = torch.nn.BCEWithLogitsLoss()
    loader = LastNeighborLoader(ds.num_nodes, size=10)
    assoc = torch.empty(ds.num_nodes, dtype=torch.long)
    memory.train(), gnn.train(), link_pred.train()
    memory.reset_state()
    loader.reset_state()
    lo, hi = (int(b) for b in ds.splits["train"])
    losses = []
    for batch, neg in zip(TemporalDataLoader(data[lo:hi], batch_size=200), negatives, strict=True):
        optimiser.zero_grad()
        n_id, edge_index, e_id = loader(torch.cat([batch.src, batch.dst, neg]).unique())
        assoc[n_id] = torch.arange(n_id.size(0))
        z, last_update = memory(n_id)
        z = gnn(z, last_update, edge_index, data.t[e_id], data.msg[e_id])
        pos = link_pred(z[assoc[batch.src]], z[assoc[batch.dst]])
        out = link_pred(z[assoc[batch.src]], z[assoc[neg]])
        loss = criterion(pos, torch.ones_like(pos)) + criterion(out, torch.zeros_like(out))
        memory.update_state(batch.src, batch.dst, batch.t, batch.msg)
        loader.insert(batch.src, batch.dst)
        loss.backward()
        optimiser.step()
        memory.detach()
        losses.append(float(loss))
    evaluator = Evaluator(name="tgbl-wiki")

    @torch.no_grad()
    def mrr(split: str) -> float:
        memory.eval(), gnn.eval(), link_pred.eval()
        queries = ds.negatives(split)
        keys = zip(queries.src, queries.dst, queries.t, strict=True)
        row = {(int(a), int(b), int(c)): i for i, (a, b, c) in enumerate(keys)}
        table, count = np.asarray(queries.negatives), np.asarray(queries.count)
        scores = []
        start, stop = (int(b) for b in ds.splits[split])
        for b in range(start, stop, 200):
            part = data[b:min(b + 200, stop)]
            for i in range(part.num_events):
                q = row[(int(part.src[i]), int(part.dst[i]), int(part.t[i]))]
                src = torch.full((1 + int(count[q]),), int(part.src[i]))
                dst = torch.as_tensor(np.concatenate(([int(part.dst[i])], table[q, :count[q]])))
                n_id, edge_index, e_id = loader(torch.cat([src, dst]).unique())
                assoc[n_id] = torch.arange(n_id.size(0))
                z, last_update = memory(n_id)
                z = gnn(z, last_update, edge_index, data.t[e_id], data.msg[e_id])
                y = link_pred(z[assoc[src]], z[assoc[dst]]).squeeze(-1).numpy()
                scores.append(evaluator.eval({"y_pred_pos": y[:1], "y_pred_neg": y[1:], "eval_metric": ["mrr"]})["mrr"])
            memory.update_state(part.src, part.dst, part.t, part.msg)
            loader.insert(part.src, part.dst)
        return float(np.mean(scores))

    return {"losses": losses, "val": mrr("val"), "test": mrr("test")}


def tgbhub_side(ds: Any, negatives: list[torch.Tensor], seed: int) -> dict[str, Any]:
    """tgbhub's trainer, its negatives' draws replaced by the same ones, attention dropout 0."""
    from tgbhub import api
    from tgbhub.trainers import TrainConfig, graph_models, make_trainer

    losses: list[float] = []
    fed = iter(negatives)
    draw, pair_logits = torch.randint, graph_models.TGNNet.pair_logits
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def randint(*args: Any, **kwargs: Any) -> torch.Tensor:
        return next(fed).clone() if "generator" in kwargs else draw(*args, **kwargs)

    def recorded(module: Any, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        pos, out = pair_logits(module, *args)
        losses.append(float(bce(pos, torch.ones_like(pos)) + bce(out, torch.zeros_like(out))))
        return pos, out

    torch.randint, graph_models.TGNNet.pair_logits = randint, recorded  # type: ignore[assignment]
    try:
        trainer = make_trainer(ds.task, "tgn", TrainConfig(seed=seed, epochs=1, progress=False, device="cpu",
                                                           hparams={"dropout": 0.0}), dataset=ds)
        report = trainer.fit(ds, ds.task)
    finally:
        torch.randint, graph_models.TGNNet.pair_logits = draw, pair_logits  # type: ignore[assignment]
    graded = api.get_evaluator(ds, ds.task.get("name")).evaluate(trainer.predict(ds, ds.task, "test"), split="test")
    return {"losses": losses, "val": report.best_val, "test": float(graded["metrics"]["mrr"])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tgb-repo", type=Path, required=True)
    parser.add_argument("--peer-site", type=Path, default=None)
    parser.add_argument("--cache", type=Path, required=True, help="a tgbhub cache holding tgb/tgbl-wiki")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    sys.path[:0] = [str(args.tgb_repo)] + ([str(args.peer_site)] if args.peer_site else [])
    import tgbhub

    ds = tgbhub.load_dataset("tgb/tgbl-wiki", cache_dir=args.cache, offline=True)
    negatives = _negatives(ds, 99)
    theirs, ours = tgb_side(ds, negatives, args.seed), tgbhub_side(ds, negatives, args.seed)
    print(f"seed {args.seed}, {len(negatives)} training batches, dropout 0, the same negatives")
    for name, side in (("TGB tgn.py loop", theirs), ("tgbhub", ours)):
        first = ", ".join(f"{x:.6f}" for x in side["losses"][:FIRST])
        print(f"{name:16s} first losses [{first}]  mean {np.mean(side['losses']):.6f}  val MRR {side['val']:.5f}  "
              f"test MRR {side['test']:.5f}")


if __name__ == "__main__":
    main()
