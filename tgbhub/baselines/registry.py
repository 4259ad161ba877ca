"""``(task type, model) -> baseline function``: how ``tgbhub baseline MODEL NAME`` finds its implementation.

A model may take options, written after a colon: ``MODEL:KEY=VALUE[,KEY=VALUE...]`` (``edgebank-tw:memory=dyglib,
seed=0``). Each registration declares the options it accepts and how to read their values; the option-free name is
the model's default and behaves exactly as before options existed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from tgbhub.errors import InvalidNameError, UnsupportedTaskError
from tgbhub.plugins import PluginTable

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: a submission column: a numpy array, or an Arrow list column (a 2-D score matrix cut to each row's count)
Column: TypeAlias = "np.ndarray | pa.Array"
#: a submission: column name -> column, in the task's declared submission schema
Submission: TypeAlias = "Mapping[str, Column]"
#: a baseline: ``fn(dataset, task, split) -> submission``. ``task`` is the manifest's task block (JSON). The dataset is
#: the kind the task's type reads (a ``TemporalGraphDataset`` or a ``TrajectoryDataset``), which the registry picks
#: at run time by that type: no single parameter type admits the implementations of both kinds, so it stays open.
Baseline = Callable[[Any, Mapping[str, Any], str], Submission]

#: ``(task type, model name)`` -> baseline function; filled by :func:`register_baseline` in the modules listed here
BASELINES: PluginTable[tuple[str, str], Baseline] = PluginTable("baseline", (
    "tgbhub.baselines.edgebank", "tgbhub.baselines.forecast", "tgbhub.baselines.nodeprop",
    "tgbhub.baselines.persistence", "tgbhub.baselines.recency", "tgbhub.baselines.trajectory"))


#: what separates a model's name from its options, and the options from each other and from their values
OPTION_SEPARATOR, OPTION_DELIMITER, OPTION_ASSIGN = ":", ",", "="

#: an option's reader: the written value -> the value the baseline receives (raising InvalidNameError, naming the fix);
#: each option has its own value type (a name, a seed), forwarded unchanged as a keyword argument
OptionReader = Callable[[str], Any]

#: ``(task type, model)`` -> option name -> its reader; a model absent here takes no option. Filled together with
#: :data:`BASELINES`, so read it after :data:`BASELINES` has been read once.
BASELINE_OPTIONS: dict[tuple[str, str], Mapping[str, OptionReader]] = {}

F = TypeVar("F")


def registering(table: PluginTable[tuple[str, str], F], task_type: str, model: str) -> Callable[[F], F]:
    """A decorator putting its function into ``table`` under ``(task_type, model)`` (the baselines' and the
    trainers' registries share it).

    Raises:
        ValueError: if ``(task_type, model)`` is already registered to another function (a programming error).
    """
    def decorate(fn: F) -> F:
        table.add((task_type, model), fn)
        return fn
    return decorate


def register_baseline(task_type: str, model: str, options: Mapping[str, OptionReader] | None = None
                      ) -> Callable[[Baseline], Baseline]:
    """Decorator: ``model`` produces submissions for every task of type ``task_type``; with ``options`` (name ->
    reader of the written value) it also accepts ``model:name=value,...``, and the function receives the read values
    as keyword arguments (``fn(dataset, task, split, **options)``; a default for each when none is written).

    Raises:
        ValueError: if ``(task_type, model)`` is already registered to another function, or ``model`` holds the
            option separator.
    """
    if OPTION_SEPARATOR in model:
        raise ValueError(f"model name {model!r} holds {OPTION_SEPARATOR!r}, which starts a model's options; rename "
                         "it")
    if options:
        BASELINE_OPTIONS[(task_type, model)] = dict(options)
    return registering(BASELINES, task_type, model)


def split_options(model: str) -> tuple[str, dict[str, str]]:
    """``"edgebank-tw:memory=dyglib,seed=0"`` -> ``("edgebank-tw", {"memory": "dyglib", "seed": "0"})``; a name
    without a colon has no options. Values stay strings (their model reads them).

    Raises:
        InvalidNameError: for an option without ``=``, with an empty name or value, or written twice.
    """
    name, colon, written = model.partition(OPTION_SEPARATOR)
    options: dict[str, str] = {}
    if not colon:
        return name, options
    for item in written.split(OPTION_DELIMITER):
        key, assign, value = (part.strip() for part in item.partition(OPTION_ASSIGN))
        if not assign or not key or not value:
            raise InvalidNameError(f"model {model!r}: option {item!r} is not KEY=VALUE; write the options as "
                                   f"{name}:KEY=VALUE[,KEY=VALUE...], e.g. edgebank-tw:memory=dyglib,seed=0")
        if key in options:
            raise InvalidNameError(f"model {model!r} sets option {key!r} twice; keep one")
        options[key] = value
    return name, options


def models_for(task_type: str) -> list[str]:
    """Every model registered for ``task_type``, sorted."""
    return sorted(model for kind, model in BASELINES if kind == task_type)


def options_for(task_type: str, model: str) -> list[str]:
    """The options ``model`` accepts for ``task_type`` (``model:name=value``), sorted; empty if none."""
    BASELINES.get((task_type, model))  # the first read imports the modules that fill BASELINE_OPTIONS
    return sorted(BASELINE_OPTIONS.get((task_type, model), {}))


def baseline_for(task: Mapping[str, Any], model: str) -> Baseline:
    """The function registered for ``(task["type"], model)``; for ``model:key=value,...`` that function with the
    options read and bound as keyword arguments.

    Raises:
        UnsupportedTaskError: if no such baseline exists (the message lists the models for that task type).
        InvalidNameError: if the options are malformed, name one the model does not take (the message lists those
            it takes), or hold a value the option's reader refuses.
    """
    task_type = str(task.get("type"))
    name, written = split_options(model)
    fn = BASELINES.get((task_type, name))
    if fn is None:
        known = models_for(task_type)
        raise UnsupportedTaskError(f"no baseline {name!r} for task type {task.get('type')!r}; available: "
                                   f"{', '.join(known) or 'none'}")
    if not written:
        return fn
    readers = BASELINE_OPTIONS.get((task_type, name), {})
    unknown = sorted(set(written) - set(readers))
    if unknown:
        takes = f"it takes {', '.join(sorted(readers))}" if readers else "it takes none"
        raise InvalidNameError(f"model {model!r}: baseline {name!r} has no option {unknown[0]!r} for task type "
                               f"{task_type!r} ({takes}); drop it or fix its spelling")
    return functools.partial(fn, **{key: readers[key](value) for key, value in written.items()})
