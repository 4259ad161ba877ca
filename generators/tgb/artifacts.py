"""A TGB release converted into this project's artifacts and their Croissant manifest.

Each TGB family has its converter module (:data:`FAMILY_MODULES`: ``convert``, ``write``, ``describe``; the files
each writes are described there); this module dispatches to it and assembles the manifest every import shares.

The manifest's recipe names the importer and the release it read (URL, zip name, the zip's sha256, TGB's version);
``stats`` records what was measured and the published statistics it was checked against.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, TypedDict, cast

import numpy as np

from tgbhub.errors import GenerationError
from tgbhub.hashing import DIGEST_ALGORITHM, ContentDigest
from tgbhub.manifest import plain

from ..manifests import croissant_document, file_object
from ..spill import Column, blocks
from .catalogue import TgbEntry
from .release import ProgressFactory, Release

IMPORTER = "tgbhub.tgb-import"
#: the converter's version: a change of what an import writes is a new minor version of every imported dataset
IMPORTER_VERSION = "1.1.0"
PUBLISHED = "2026-11-23"


def dataset_version(entry: TgbEntry) -> str:
    """``<TGB's version>.<importer's minor>.0``: TGB's data version stays visible, our conversion fixes count up."""
    return f"{entry.tgb_version}.{IMPORTER_VERSION.split('.')[1]}.0"


#: TGB family -> the module of this package that converts it (each exposes ``convert``, ``write``, ``describe``)
FAMILY_MODULES = {"tgbl": ".tgbl", "tkgl": ".tkgl", "thgl": ".thgl", "tgbn": ".tgbn"}


class _Measured(TypedDict):
    splits: dict[str, tuple[int, int]]
    measured: dict[str, Any]
    num_nodes: int
    reordered_rows: int
    parser: str


class Info(_Measured, total=False):
    """What a family converter measured on the way (its ``convert``'s second result): the split's row ranges, the
    statistics (``measured``: the manifest's, checked against the published ones), the node count, how many rows
    moved in the time sort and py-tgb's parser; and, by family, the node features' layout (``node_feat``), the
    relation count (``num_relations``) and static edges (``static``) of a knowledge graph, the labels' row ranges
    and width (``label_rows``, ``label_dim``) of a node task."""

    node_feat: dict[str, Any]
    num_relations: int
    static: dict[str, int] | None
    label_rows: dict[str, tuple[int, int]]
    label_dim: int


class Description(TypedDict):
    """What a family converter's ``describe`` adds to the manifest: its ``graph`` block, ``tasks`` and
    ``record_sets``."""

    graph: dict[str, Any]
    tasks: list[dict[str, Any]]
    record_sets: list[dict[str, Any]]


class Converter(Protocol):
    """A TGB family's converter module (:data:`FAMILY_MODULES`)."""

    def convert(self, entry: TgbEntry, release: Release) -> tuple[dict[str, dict[str, np.ndarray]], Info]: ...

    def write(self, files: Mapping[str, Mapping[str, np.ndarray]], folder: Path,
              progress: ProgressFactory | None = None) -> dict[str, Path]: ...

    def describe(self, entry: TgbEntry, files: Mapping[str, Mapping[str, np.ndarray]], info: Info) -> Description: ...


def family_module(entry: TgbEntry) -> Converter:
    """The converter of ``entry``'s family.

    Raises:
        GenerationError: if this tgbhub cannot import that family yet.
    """
    module = FAMILY_MODULES.get(entry.family)
    try:
        # every TgbEntry.family has its module here: the None is never returned
        return cast(Converter, importlib.import_module(module, __package__) if module else None)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}{module}":
            raise
        raise GenerationError(f"importing {entry.family} datasets ({entry.name}) is not implemented in this tgbhub "
                              "yet; upgrade tgbhub") from exc


def convert(entry: TgbEntry, release: Release) -> tuple[dict[str, dict[str, np.ndarray]], Info]:
    """The dataset's files (name -> columns) from an opened release, and what was measured on the way (``splits``,
    ``measured``, ``num_nodes``, ``reordered_rows``, ``parser``, ...), by its family's converter.

    Raises:
        GenerationError: for a dataset family or parser this tgbhub cannot import yet, or a release that does not
            fit py-tgb's layout (naming the file and the problem).
    """
    return family_module(entry).convert(entry, release)


def write(files: Mapping[str, Mapping[str, np.ndarray]], folder: Path, entry: TgbEntry,
          progress: ProgressFactory | None = None) -> dict[str, Path]:
    """Write the files into ``folder`` with ``entry``'s family converter (zstd Parquet, byte-stable), showing its
    progress through ``progress`` (silent if None)."""
    return family_module(entry).write(files, folder, progress)


def responsible_ai(entry: TgbEntry) -> dict[str, Any]:
    """The Croissant RAI fields of an imported TGB dataset, from its catalogue entry: real-world data collected by
    its source, TGB's release and intended use, the entry's own notes as limitations, who the records are about."""
    source = "TGB 2.0" if entry.family in ("tkgl", "thgl") else "TGB"
    metric = {"mrr": "MRR", "ndcg": "NDCG@10"}[entry.eval_metric]
    return {
        "rai:dataCollection": (
            f"Real-world data, collected by its original source and released by {source} as {entry.zip_name} "
            f"(TGB version {entry.tgb_version}); domain: {entry.domain or 'see the TGB papers'}. tgbhub collected "
            "nothing: it converts that release with py-tgb 2.3.0's conventions, keeps TGB's "
            f"chronological split and negatives, and checks the result against the published statistics (source: "
            f"{entry.stats_source})."),
        "rai:dataUseCases": [
            f"Academic benchmarking of temporal graph learning on {source}'s {entry.task} task ({metric}), with "
            f"{source}'s split and negatives, comparable with {source}'s leaderboard; {source} releases its datasets "
            "for research use.",
            "Not intended for profiling, tracking or making decisions about the people or organisations in the data."],
        "rai:dataLimitations": [
            "A record of one source over one period: models may not transfer to other platforms, periods or "
            "populations, and the source's own collection choices and errors are inherited.",
            f"License: {entry.license or 'not recorded by the TGB papers; check the TGB website before any reuse'}.",
            *entry.notes],
        "rai:dataBiases": [
            "Reflects who and what the source recorded: active users, popular items and the period covered are "
            "over-represented, and TGB's preprocessing shapes the sample further; TGB 2.0 warns that datasets that do "
            "not represent the broader real world can lead to biased or unfair outcomes when models are applied.",
            "Sampled negatives (where TGB draws q per query) make rank metrics relative to those negatives, which "
            "favours models that separate the true edge from TGB's particular sample."],
        "rai:personalSensitiveInformation": [
            entry.personal_data,
            "tgbhub adds no identifiers and attempts no re-identification; interaction histories of real people can "
            "allow re-identification when linked with other data, so do not link them."],
        "rai:dataSocialImpact": (
            "Where records are about people, models trained on them can be used to profile or target individuals; "
            f"{source} and tgbhub provide the data for research benchmarking only."),
    }


def manifest_document(entry: TgbEntry, files: Mapping[str, Mapping[str, np.ndarray]], info: Info,
                      folder: Path, zip_name: str, zip_sha256: str, published: Mapping[str, Any],
                      modified: bool = False) -> dict[str, Any]:
    """The Croissant manifest of an imported dataset whose files are in ``folder``.

    ``modified``: the release was checked against statistics the importer was given (``--expected-stats``), not
    the catalogue's published ones; the manifest says so (``stats.modified_release`` and a discrepancy entry).

    The parts that depend on the family (``graph``, ``tasks``, ``record_sets``) come from the family module's
    ``describe(entry, files, info)``; the rest (recipe, digests, statistics, provenance) is
    the same for every import.
    """
    name = f"tgb/{entry.name}"
    parts = family_module(entry).describe(entry, files, info)
    stats = {**info["measured"], "reordered_rows": info["reordered_rows"],
             "published": dict(published), "checked_against_published": sorted(published),
             "source": {"url": entry.url, "zip": zip_name, "zip_sha256": zip_sha256, "tgb_version": entry.tgb_version,
                        "py_tgb": "2.3.0", "parser": info["parser"]}}
    discrepancies = [{"field": "checksum", "paper": "none: py-tgb publishes no checksum of its zips",
                      "ours": f"the sha256 of the zip this import read ({zip_sha256})",
                      "evidence": "py-tgb 2.3.0's tgb/utils/info.py lists no md5, sha or size for any release"}]
    if modified:
        catalogue, given = plain(entry.stats), plain(published)
        stats["modified_release"] = {"catalogue_stats": catalogue, "checked_against": given}
        discrepancies.append({"field": "release", "paper": f"TGB's published statistics: {catalogue}",
                              "ours": f"a modified release, checked against the given statistics {given}",
                              "evidence": "imported with --expected-stats (tgbhub.local.imports expected_stats)"})
    description = (f"TGB's {entry.name} (version {entry.tgb_version}), imported from {zip_name} and converted with "
                   f"py-tgb 2.3.0's conventions: {entry.domain or 'see the TGB paper'}. Split and negatives are TGB's.")
    return croissant_document(
        name=name, version=dataset_version(entry), description=description, license=entry.license or "see TGB",
        published=PUBLISHED, citation=entry.citation, responsible_ai=responsible_ai(entry),
        distribution=[file_object(file, folder / file) for file in files], record_sets=parts["record_sets"],
        recipe={"generator": IMPORTER, "version": IMPORTER_VERSION,
                "params": {"dataset": entry.name, "tgb_version": entry.tgb_version, "url": entry.url,
                           "zip": zip_name, "zip_sha256": zip_sha256}, "seed": 0},
        digest=[{"file": file, "algorithm": DIGEST_ALGORITHM, "columns": list(columns),
                 "value": _digest(columns)} for file, columns in files.items()],
        graph=parts["graph"], splits={"unit": "row", "boundaries": {k: list(v) for k, v in info["splits"].items()}},
        tasks=parts["tasks"], stats=stats,
        discrepancies=discrepancies)


def _digest(columns: Mapping[str, Column]) -> str:
    """A file's logical digest, from the values written into it (in memory, or spilled to disk and read a block at
    a time), not from the file: the manifest then says what the file must decode to, which checks the writer too."""
    digest = ContentDigest()
    for name, values in columns.items():
        digest.start(name, values.dtype, len(values))
        for block in blocks(values):
            digest.update(block)
    return digest.hexdigest()
