"""Trainable baselines: a model protocol, GPU-aware trainers that are bit-reproducible on CPU, and checkpoints.

Registered by ``(task type, model name)`` like the heuristics in :mod:`tgbhub.baselines`:

- ``rollout-forecasting`` (ChaosNetBench, :mod:`tgbhub.trainers.chaosnet`): ``dlinear``, ``lstm``, ``tcn``,
  ``graph_wavenet``, trained by ChaosNetBench's shared protocol;
- ``snapshot-link-prediction`` and ``one-vs-many-ranking`` (T-GRAB and any discrete-time temporal graph,
  :mod:`tgbhub.trainers.snapshot`): ``gclstm`` and ``tgn``, trained snapshot by snapshot as T-GRAB does;
- ``one-vs-many-ranking`` on continuous time (TGB's ``tgbl-*`` and any graph whose splits are rows,
  :mod:`tgbhub.trainers.events`): ``tgn`` and ``graphmixer``, trained on batches of events as TGB's ``tgn.py`` does.
  A ranking task's ``tgn`` is one registered trainer that takes the protocol of the dataset's kind of time
  (``make_trainer(..., dataset=ds)`` binds it); both protocols train the same TGN module
  (:mod:`tgbhub.trainers.graph_models`).

torch (and torch-geometric for the graph models) is the ``[train]`` extra and is imported only when a model is built.
``tgbhub.train(...)`` (:mod:`tgbhub.training`) and ``tgbhub train MODEL NAME`` fit, predict, grade and write a run.

Adding a model: write a class with the :class:`Trainer` methods, register a factory with
``@register_trainer(task_type, name)``, and list its module in :data:`TRAINERS` (imported on its first read).
"""

from __future__ import annotations

from tgbhub.trainers.base import TRAINERS, FitReport, TrainConfig, Trainer, make_trainer, register_trainer, trainers_for
from tgbhub.trainers.checkpoint import Checkpoint, load_checkpoint, save_checkpoint

__all__ = ["TRAINERS", "Checkpoint", "FitReport", "TrainConfig", "Trainer", "load_checkpoint", "make_trainer",
           "register_trainer", "save_checkpoint", "trainers_for"]
