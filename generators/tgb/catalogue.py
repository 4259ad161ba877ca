"""The catalogue of TGB's datasets: every dataset py-tgb 2.3.0 can download, as pure data.

One :class:`TgbEntry` per key of py-tgb's ``DATA_URL_DICT`` (``tgb/utils/info.py``): the TGB 1.x link datasets
(``tgbl-*``, including the four supplementary ones of v2.1.0), the TGB 1.x node property datasets (``tgbn-*``) and
the TGB 2.0 multi-relational link datasets (``tkgl-*``, ``thgl-*``, plus ``tkgl-yago``, which is in the code but not
in the paper). An entry records where upstream serves the dataset, TGB's version number, the exact file names inside
its zip, the evaluation protocol, and the *published* statistics that an import must reproduce.

Where the facts come from (each cross-checked against py-tgb's code and the papers):

- URL, version, metric, negative-sampling strategy and class counts: py-tgb 2.3.0's ``tgb/utils/info.py``.
- File names inside each zip: what py-tgb 2.3.0's ``LinkPropPredDataset`` / ``NodePropPredDataset`` look for.
- Negatives per query (``q``) and the seed: py-tgb's negative-generation scripts (``tgb/datasets/**``).
- Statistics: TGB 2.0 paper Tables 1 and 11 (``tkgl``/``thgl``), the TGB paper and website tables (``tgbl``,
  ``tgbn``), and the DGB paper (Poursafaei et al. 2022) for the supplementary ``tgbl`` datasets, which TGB's own
  docs do not list. Every number is one a paper, TGB's website or py-tgb states; a statistic nobody published is
  left out, and ``stats_note`` says so, as it does for every number that is uncertain or counts something a loader
  may count differently (inverse TKG edges, above all).

No upstream checksum exists: py-tgb has no md5, sha, size or content hash, only the version integer.
An import therefore cannot verify the zip against upstream; it records the sha256 of the zip it read, and it checks
what it parsed against these published statistics (:func:`check_stats`).
"""

from __future__ import annotations

import dataclasses
import difflib
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeGuard

from tgbhub.errors import DatasetNotFoundError

#: the py-tgb release whose URLs, versions and file names this catalogue records
PY_TGB_VERSION = "2.3.0"
#: where every zip lives since py-tgb 2.3.0 (the Digital Research Alliance of Canada's object store)
URL_PREFIX = "https://object-arbutus.alliancecan.ca/swift/v1/14c95234f6cd4a21a47deafe20cce2a7/tgb/"
#: the pattern up to py-tgb 2.2.0 and in the TGB 2.0 paper's Appendix C; dead since the 2.3.0 migration (PR #128)
LEGACY_URL_PREFIX = "https://object-arbutus.cloud.computecanada.ca/tgb/"
#: the prefix of a TGB mirror's name in tgbhub: ``tgb/tgbl-wiki``
HUB_FAMILY = "tgb"

Family = Literal["tgbl", "tkgl", "thgl", "tgbn"]

#: decimals the published ratios carry; :func:`check_stats` compares a measured ratio at that precision
PROFILE_DECIMALS: Mapping[str, int] = MappingProxyType({
    "surprise": 3, "inductive_test_fraction": 2, "drec": 2, "rec": 2, "con": 2,
    "mean_edges_per_timestep": 2, "mean_nodes_per_timestep": 2,
})

CITATION_TGB = """@article{huang2023temporal,
  title={Temporal graph benchmark for machine learning on temporal graphs},
  author={Huang, Shenyang and Poursafaei, Farimah and Danovitch, Jacob and Fey, Matthias and Hu, Weihua and
          Rossi, Emanuele and Leskovec, Jure and Bronstein, Michael and Rabusseau, Guillaume and Rabbany, Reihaneh},
  journal={Advances in Neural Information Processing Systems},
  year={2023}
}"""  # as py-tgb's README gives it (author list wrapped)

CITATION_TGB2 = """@article{huang2024tgb2,
  title={TGB 2.0: A Benchmark for Learning on Temporal Knowledge Graphs and Heterogeneous Graphs},
  author={Gastinger, Julia and Huang, Shenyang and Galkin, Mikhail and Loghmani, Erfan and Parviz, Ali and
          Poursafaei, Farimah and Danovitch, Jacob and Rossi, Emanuele and Koutis, Ioannis and
          Stuckenschmidt, Heiner and Rabbany, Reihaneh and Rabusseau, Guillaume},
  journal={Advances in Neural Information Processing Systems},
  year={2024}
}"""  # as py-tgb's README gives it (author list wrapped)

CITATION_DGB = """@article{poursafaei2022towards,
  title={Towards better evaluation for dynamic link prediction},
  author={Poursafaei, Farimah and Huang, Shenyang and Pelrine, Kellin and Rabbany, Reihaneh},
  journal={Advances in Neural Information Processing Systems},
  volume={35},
  pages={32928--32941},
  year={2022}
}"""  # (reference [57] of the TGB 2.0 paper)

SOURCE_TGB = "TGB paper (Huang et al., NeurIPS 2023 D&B) and the TGB website's dataset tables"
SOURCE_TGB2 = "TGB 2.0 paper (Gastinger, Huang et al., NeurIPS 2024 D&B), Tables 1 and 11"
SOURCE_DGB = ("DGB paper (Poursafaei et al., NeurIPS 2022), as quoted by the TGB website; TGB's own docs do not "
              "list these datasets")


@dataclass(frozen=True)
class TgbEntry:
    """One TGB dataset as py-tgb 2.3.0 serves it, and what an import of it must reproduce.

    ``stats`` holds exact published counts: ``num_nodes``, ``num_edges``, ``num_timestamps`` (distinct timestamps,
    "steps"), ``num_relations`` (edge types, without inverses), ``num_node_types``, ``num_static_edges``,
    ``edge_feat_dim``, and ``split_edges`` / ``split_timestamps`` as ``{"train", "val", "test"}`` mappings.
    ``profile`` holds the published ratios, rounded as :data:`PROFILE_DECIMALS` says. ``stats_note`` explains, per
    statistic, every number that is uncertain, derived, or counted differently by py-tgb's loader, and every
    statistic that is left out because nobody published it.
    """

    name: str
    family: Family
    task: Literal["link", "node"]
    tgb_version: int
    zip_name: str
    #: role -> exact file name inside the zip, as py-tgb 2.3.0 looks for it (``edgelist``, ``val_ns``, ``test_ns``,
    #: ``static_edgelist``, ``nodetype``, ``node_feat``, ``node_labels``)
    files: Mapping[str, str] = field(hash=False)
    eval_metric: Literal["mrr", "ndcg"]
    #: py-tgb's ``DATA_NS_STRATEGY_DICT`` value; None for node datasets, which have no negatives
    ns_strategy: str | None
    #: negatives per query in the generation script; None for 1-vs-all (``time-filtered``) and node datasets
    q: int | None
    #: seed of the negative-generation scripts (all 42); None for node datasets
    ns_seed: int | None
    #: share of historical negatives in ``hist_rnd`` (py-tgb's default, 0.5); None for the other strategies
    hist_ratio: float | None
    #: tgbn only: width of the label vectors (``DATA_NUM_CLASSES``)
    num_classes: int | None
    #: chronological split by timestamp quantile: ``{"val": ratio, "test": ratio}``
    split: Mapping[str, float] = field(hash=False)
    #: the granularity of a timestamp step, where a source states one (``year``, ``day``, ``second``)
    time_unit: str | None
    #: tgbn only: the period a label row aggregates (``year`` for trade, ``week`` for the others)
    label_period: str | None
    #: the domain as the papers describe it; None where they describe none
    domain: str | None
    #: the dataset's license where a source records it; None where none does (see ``notes``)
    license: str | None
    #: BibTeX of every paper to cite for this dataset
    citation: str
    stats: Mapping[str, int | Mapping[str, int]] = field(hash=False)
    profile: Mapping[str, float] = field(hash=False)
    stats_source: str
    stats_note: Mapping[str, str] = field(hash=False)
    #: the TGB website's scale label (TGB 2.0 datasets only)
    scale: str | None = None
    #: the W/Di/A column of the TGB tables (weighted, directed, attributed); None where they give none
    weighted: bool | None = None
    directed: bool | None = None
    attributed: bool | None = None
    notes: tuple[str, ...] = ()
    #: who or what the records are about, and what about people they hold (the manifest's
    #: ``rai:personalSensitiveInformation``), from the TGB papers and the sources they name
    personal_data: str = ""

    @property
    def url(self) -> str:
        """The zip's URL on the object store py-tgb 2.3.0 downloads from."""
        return URL_PREFIX + self.zip_name

    @property
    def legacy_url(self) -> str:
        """The zip's pre-2.3.0 URL (dead; kept to recognise old references)."""
        return LEGACY_URL_PREFIX + self.zip_name

    @property
    def dir_name(self) -> str:
        """py-tgb's folder for the dataset: the name with ``_`` for ``-`` (``tgbl_wiki``)."""
        return self.name.replace("-", "_")

    @property
    def hub_name(self) -> str:
        """The dataset's name as a tgbhub mirror: ``tgb/tgbl-wiki``."""
        return f"{HUB_FAMILY}/{self.name}"

    @property
    def one_vs_all(self) -> bool:
        """True where every destination is a candidate (TGB's ``time-filtered`` TKG protocol)."""
        return self.ns_strategy == "time-filtered"


def _ro(mapping: Mapping[str, object]) -> MappingProxyType:
    """A read-only copy, nested mappings included."""
    return MappingProxyType({k: _ro(v) if isinstance(v, Mapping) else v for k, v in mapping.items()})


def _splits(train: int, val: int, test: int) -> dict[str, int]:
    return {"train": train, "val": val, "test": test}


# --- TGB 1.x ---------------------------------------------------------------------------------------------------------

_NO_LICENSE = "license: not recorded in the TGB papers; py-tgb's README refers to the TGB website for dataset licenses"


def _tgbl(name: str, version: int, zip_name: str, files: dict[str, str], q: int, domain: str | None,
          stats: Mapping[str, object], profile: Mapping[str, float], stats_note: Mapping[str, str],
          wda: tuple[bool | None, bool | None, bool | None], *, time_unit: str | None = None,
          supplementary: bool = False, notes: tuple[str, ...] = ()) -> TgbEntry:
    return TgbEntry(
        name=name, family="tgbl", task="link", tgb_version=version, zip_name=zip_name, files=_ro(files),
        eval_metric="mrr", ns_strategy="hist_rnd", q=q, ns_seed=42, hist_ratio=0.5, num_classes=None,
        split=_ro({"val": 0.15, "test": 0.15}), time_unit=time_unit, label_period=None, domain=domain, license=None,
        citation=CITATION_TGB + "\n\n" + CITATION_DGB if supplementary else CITATION_TGB, stats=_ro(stats),
        profile=_ro(profile), stats_source=SOURCE_DGB if supplementary else SOURCE_TGB, stats_note=_ro(stats_note),
        weighted=wda[0], directed=wda[1], attributed=wda[2], notes=(*notes, _NO_LICENSE))


def _v1_files(name: str) -> dict[str, str]:
    return {"edgelist": f"{name}_edgelist.csv", "val_ns": f"{name}_val_ns.pkl", "test_ns": f"{name}_test_ns.pkl"}


_SUPPLEMENTARY_NOTE = {
    "num_nodes": "from the DGB paper, not checked against TGB's zip; TGB's docs do not list it",
    "num_edges": "from the DGB paper, not checked against TGB's zip; TGB's docs do not list it",
    "num_timestamps": "unknown: not published for this dataset in the TGB papers, so left out",
}
_SUPPLEMENTARY_NOTES = ("supplementary dataset, added in py-tgb 2.1.0 'for research purposes' (py-tgb README)",)

_TGBL = (
    _tgbl("tgbl-wiki", 2, "tgbl-wiki-v2.zip",
          {"edgelist": "tgbl-wiki_edgelist_v2.csv", "val_ns": "tgbl-wiki_val_ns_v2.pkl",
           "test_ns": "tgbl-wiki_test_ns_v2.pkl"},
          12000, "interaction (editors -> pages, 1 month)",
          {"num_nodes": 9_227, "num_edges": 157_474, "num_timestamps": 152_757, "edge_feat_dim": 172},
          {"surprise": 0.108},
          {"edge_feat_dim": "the 172-d LIWC edge feature (the TGB website's W/Di/A column)"},
          (False, True, True),
          notes=("q=12000 exceeds the ~999 destinations, so a query gets every destination outside its conflict "
                 "set; query sizes are ragged (4 queries get 998, TGB issue #76)",
                 "py-tgb shifts item ids by max(src)+1, so the graph is bipartite")),
    _tgbl("tgbl-review", 2, "tgbl-review-v2.zip",
          {"edgelist": "tgbl-review_edgelist_v2.csv", "val_ns": "tgbl-review_val_ns_v2.pkl",
           "test_ns": "tgbl-review_test_ns_v2.pkl"},
          100, "rating (Amazon electronics 1997-2018, users with >= 10 reviews)",
          {"num_nodes": 352_637, "num_edges": 4_873_540, "num_timestamps": 6_865},
          {"surprise": 0.987}, {},
          (True, True, False),
          notes=("a v3 zip exists upstream but py-tgb 2.3.0 does not use it (DATA_VERSION_DICT says 2)",
                 "not bipartite in py-tgb because of a loader bug (TGB issue #95; the v3 fix is unreleased, #111)")),
    _tgbl("tgbl-coin", 2, "tgbl-coin-v2.zip",
          {"edgelist": "tgbl-coin_edgelist_v2.csv", "val_ns": "tgbl-coin_val_ns_v2.pkl",
           "test_ns": "tgbl-coin_test_ns_v2.pkl"},
          20, "transaction (stablecoin ERC20 transfers, Apr-Nov 2022)",
          {"num_nodes": 638_486, "num_edges": 22_809_486, "num_timestamps": 1_295_720},
          {"surprise": 0.120}, {},
          (True, True, False),
          notes=("py-tgb's edge feature is log2 of the weight (a weight of 0 is read as 1)",)),
    _tgbl("tgbl-comment", 1, "tgbl-comment.zip", _v1_files("tgbl-comment"),
          20, "social (Reddit replies 2005-2010)",
          {"num_nodes": 994_790, "num_edges": 44_314_507, "num_timestamps": 30_998_030},
          {"surprise": 0.823}, {}, (True, True, True),
          notes=("py-tgb's edge feature is num_words/5000 with the score as the weight",)),
    _tgbl("tgbl-flight", 2, "tgbl-flight-v2.zip",
          {"edgelist": "tgbl-flight_edgelist_v2.csv", "val_ns": "tgbl-flight_val_ns_v2.pkl",
           "test_ns": "tgbl-flight_test_ns_v2.pkl", "node_feat": "airport_node_feat_v2.csv"},
          20, "traffic (OpenSky flights 2019-2022, daily)",
          {"num_nodes": 18_143, "num_edges": 67_169_570, "num_timestamps": 1_385, "edge_feat_dim": 16},
          {"surprise": 0.024},
          {"edge_feat_dim": "the 16-d character encoding of callsign and typecode (the TGB website)"},
          (False, True, True), time_unit="day",
          notes=("timestamps are Unix seconds at daily granularity (v2 CSV, py-tgb 0.9.2)",)),
    _tgbl("tgbl-enron", 1, "tgbl-enron.zip", _v1_files("tgbl-enron"), 1000, None,
          {"num_nodes": 184, "num_edges": 125_235}, {}, _SUPPLEMENTARY_NOTE, (None, None, None), supplementary=True,
          notes=(*_SUPPLEMENTARY_NOTES, "q=1000 exceeds the node count: every destination is a candidate")),
    _tgbl("tgbl-uci", 1, "tgbl-uci.zip", _v1_files("tgbl-uci"), 1000, "messages (SNAP CollegeMsg, per a third party)",
          {"num_nodes": 1_899, "num_edges": 59_835}, {}, _SUPPLEMENTARY_NOTE, (None, None, None), supplementary=True,
          notes=_SUPPLEMENTARY_NOTES),
    _tgbl("tgbl-subreddit", 1, "tgbl-subreddit.zip", _v1_files("tgbl-subreddit"), 1000,
          "social (the JODIE Reddit dataset)",
          {"num_nodes": 10_984, "num_edges": 672_447}, {}, _SUPPLEMENTARY_NOTE, (None, None, None),
          supplementary=True, notes=_SUPPLEMENTARY_NOTES),
    _tgbl("tgbl-lastfm", 1, "tgbl-lastfm.zip", _v1_files("tgbl-lastfm"), 2000, None,
          {"num_nodes": 1_980, "num_edges": 1_293_103}, {}, _SUPPLEMENTARY_NOTE, (None, None, None),
          supplementary=True, notes=(*_SUPPLEMENTARY_NOTES, "q=2000 is every node in the dataset")),
)


def _tgbn(name: str, num_classes: int, domain: str, stats: Mapping[str, object], surprise: float, attributed: bool, *,
          period: str) -> TgbEntry:
    return TgbEntry(
        name=name, family="tgbn", task="node", tgb_version=1, zip_name=f"{name}.zip",
        files=_ro({"edgelist": f"{name}_edgelist.csv", "node_labels": f"{name}_node_labels.csv"}),
        eval_metric="ndcg", ns_strategy=None, q=None, ns_seed=None, hist_ratio=None, num_classes=num_classes,
        split=_ro({"val": 0.15, "test": 0.15}), time_unit="year" if period == "year" else None, label_period=period,
        domain=domain, license=None, citation=CITATION_TGB, stats=_ro(stats), profile=_ro({"surprise": surprise}),
        stats_source=SOURCE_TGB, stats_note=_ro({}), weighted=True, directed=True, attributed=attributed,
        notes=("metric: NDCG@10 per label timestamp, averaged over label timestamps (docs/tgb.md)", _NO_LICENSE))


_TGBN = (
    _tgbn("tgbn-trade", 255, "UN agricultural trade 1986-2016, yearly",
          {"num_nodes": 255, "num_edges": 468_245, "num_timestamps": 32}, 0.023, False, period="year"),
    _tgbn("tgbn-genre", 513, "LastFM user -> genre, weekly labels",
          {"num_nodes": 1_505, "num_edges": 17_858_395, "num_timestamps": 133_758}, 0.005, False, period="week"),
    _tgbn("tgbn-reddit", 698, "Reddit user -> subreddit 2005-2019, weekly labels",
          {"num_nodes": 11_766, "num_edges": 27_174_118, "num_timestamps": 21_889_537}, 0.013, False,
          period="week"),
    _tgbn("tgbn-token", 1001, "user -> token transfers, weekly labels",
          {"num_nodes": 61_756, "num_edges": 72_936_998, "num_timestamps": 2_036_524}, 0.014, True, period="week"),
)


# --- TGB 2.0 ---------------------------------------------------------------------------------------------------------

_TKG_NOTE = {
    "num_edges": "original quadruples (Table 1); py-tgb's loader appends one inverse per edge, so its num_edges is "
                 "twice this",
    "num_relations": "edge types without inverses; py-tgb's num_rels counts the inverse types r+R too, i.e. twice "
                     "this",
    "split_edges": "original edges only (Table 11); py-tgb's masks over the doubled arrays count twice this",
    "mean_edges_per_timestep": "not num_edges/num_timestamps in general: tkgl-icews gives 15,513,446/10,224 = "
                               "1,517.36 vs 1,516.91 published, which is 15,513,446/10,227, i.e. per step of the "
                               "time span, not per distinct timestamp (derived here; the papers give no definition)",
}
_THG_NOTE = {
    "num_edges": "no inverse edges in THG; equals py-tgb's num_edges",
    "mean_edges_per_timestep": "not num_edges/num_timestamps (thgl-software: 1,489,806/689,549 = 2.16 vs 0.56 "
                               "published); it matches edges per second of the time span, e.g. 1,489,806 / "
                               "2,678,400 s of January 2024 = 0.56 (derived here, not stated by the paper)",
    "mean_nodes_per_timestep": "the papers give no definition; see mean_edges_per_timestep",
}
_STATIC_NODES_NOTE = ("Table 1's # Nodes; the paper does not say whether entities that occur only in the static "
                      "edges are counted (py-tgb's num_nodes counts temporal-edge endpoints only)")
_THG_NODE_NOTE = ("Table 1's # Nodes; py-tgb's num_nodes counts edge endpoints only, and the paper does not say "
                  "whether the nodetype file lists more")
_THG_FILES_NOTE = ("the zip also holds nodemapping.csv and edgemapping.csv (human-readable names), which py-tgb "
                   "does not read (TGB 2.0 paper, Appendix)")


def _multirel(name: str, q: int | None, domain: str, time_unit: str | None, lic: str | None, scale: str | None,
              stats: Mapping[str, object], profile: Mapping[str, float], stats_note: Mapping[str, str], *,
              notes: tuple[str, ...] = ()) -> TgbEntry:
    family: Family = "tkgl" if name.startswith("tkgl-") else "thgl"
    files = {"edgelist": f"{name}_edgelist.csv", "val_ns": f"{name}_val_ns.pkl", "test_ns": f"{name}_test_ns.pkl"}
    if "num_static_edges" in stats:
        files["static_edgelist"] = f"{name}_static_edgelist.csv"
    if family == "thgl":
        files["nodetype"] = f"{name}_nodetype.csv"
    strategy = {"tkgl": "time-filtered" if q is None else "dst-time-filtered", "thgl": "node-type-filtered"}[family]
    yago = name == "tkgl-yago"
    return TgbEntry(
        name=name, family=family, task="link", tgb_version=1, zip_name=f"{name}.zip", files=_ro(files),
        eval_metric="mrr", ns_strategy=strategy, q=q, ns_seed=42, hist_ratio=None, num_classes=None,
        split=_ro({"val": 0.1, "test": 0.1} if yago else {"val": 0.15, "test": 0.15}), time_unit=time_unit,
        label_period=None, domain=domain, license=lic, citation=CITATION_TGB2, stats=_ro(stats),
        profile=_ro(profile), stats_source=SOURCE_TGB2 if stats else "none published (see stats_note)",
        stats_note=_ro({**(_TKG_NOTE if family == "tkgl" else _THG_NOTE), **stats_note} if stats else stats_note),
        scale=scale, notes=notes)


def _profile(induct: float, drec: float, rec: float, con: float, edges_ts: float, nodes_ts: float) -> dict[str, float]:
    return {"inductive_test_fraction": induct, "drec": drec, "rec": rec, "con": con,
            "mean_edges_per_timestep": edges_ts, "mean_nodes_per_timestep": nodes_ts}


def _counts(nodes: int, edges: int, rels: int, steps: int, split_edges: tuple[int, int, int],
            split_steps: tuple[int, int, int], **extra: int) -> dict[str, int | dict[str, int]]:
    return {"num_nodes": nodes, "num_edges": edges, "num_relations": rels, "num_timestamps": steps, **extra,
            "split_edges": _splits(*split_edges), "split_timestamps": _splits(*split_steps)}


_STATIC_EDGES_NOTE = "the paper's count of static edges (TGB 2.0, Table 1); the static file is not split or evaluated"

_MULTIREL = (
    _multirel("tkgl-smallpedia", None, "knowledge (Wikidata entities < 1M, years 1900-2024)", "year",
              "Wikidata (CC0 / CC BY-SA)", "small",
              _counts(47_433, 550_376, 283, 125, (387_757, 81_033, 81_586), (98, 10, 17), num_static_edges=978_315),
              _profile(0.26, 0.71, 0.72, 5.82, 4_403.01, 5_289.16),
              {"num_nodes": _STATIC_NODES_NOTE, "num_static_edges": _STATIC_EDGES_NOTE},
              notes=("the leaderboard and the paper disagree on RecB for smallpedia: cite the version "
                     "used",)),
    _multirel("tkgl-polecat", None, "political (POLECAT / PLOVER events, Jan 2018-Dec 2022)", "day", "CC0 1.0",
              "medium", _counts(150_931, 1_779_610, 16, 1_826, (1_246_556, 266_736, 266_318), (1_193, 329, 304)),
              _profile(0.12, 0.07, 0.43, 1.07, 974.59, 550.60), {}),
    _multirel("tkgl-icews", None, "political (ICEWS coded events, CAMEO, 1995-2022)", "day",
              "custom ICEWS: research and education only, non-commercial", "large",
              _counts(87_856, 15_513_446, 391, 10_224, (10_861_600, 2_326_157, 2_325_689), (7_187, 1_341, 1_696)),
              _profile(0.05, 0.11, 0.63, 1.14, 1_516.91, 1_008.65), {}),
    _multirel("tkgl-wikidata", 1000, "knowledge (Wikidata dump of 2024-02-20, first 32M entity ids)", "year",
              "Wikidata", "large",
              _counts(1_226_440, 9_856_203, 596, 2_025, (6_982_503, 1_434_950, 1_438_750), (1_999, 12, 14),
                      num_static_edges=71_900_685),
              _profile(0.34, 0.61, 0.61, 5.05, 4_867.26, 5_772.16),
              {"num_nodes": _STATIC_NODES_NOTE,
               "num_static_edges": _STATIC_EDGES_NOTE + "; uncertain whether counted before or after dropping "
                                   "P31/P279 and the links that are both static and temporal"},
              notes=("dst-time-filtered: q=1000 per-relation candidates; its fallback can draw the true answer as "
                     "a negative (docs/tgb.md)",)),
    _multirel("thgl-software", 1000, "software (GH Archive, January 2024)", "second", "CC-BY-4.0", "small",
              _counts(681_927, 1_489_806, 14, 689_549, (1_042_866, 223_469, 223_471), (485_863, 99_500, 104_186),
                      num_node_types=4),
              _profile(0.13, 0.00, 0.10, 1.00, 0.56, 0.86), {"num_nodes": _THG_NODE_NOTE},
              notes=(_THG_FILES_NOTE,)),
    _multirel("thgl-forum", 100, "social (Reddit user replies and subreddit posts, January 2014)", "second",
              "CC BY-NC 2.0", "medium",
              _counts(152_816, 23_757_707, 2, 2_558_457, (16_630_396, 3_563_658, 3_563_653),
                      (1_805_376, 393_000, 360_081), num_node_types=2, edge_feat_dim=2),
              _profile(0.02, 0.00, 0.63, 1.00, 8.87, 12.96),
              {"num_nodes": _THG_NODE_NOTE,
               "edge_feat_dim": "num_words/10000 and score/10000 (py-tgb's loader): a loader fact, not a table entry"},
              notes=(_THG_FILES_NOTE,)),
    _multirel("thgl-github", 20, "software (GH Archive, March 2024)", "second", "CC-BY-4.0", "large",
              _counts(5_856_765, 17_499_577, 14, 2_510_415, (12_249_711, 2_624_934, 2_624_932),
                      (1_703_696, 382_882, 423_837), num_node_types=4),
              _profile(0.14, 0.00, 0.01, 1.00, 6.54, 9.77), {"num_nodes": _THG_NODE_NOTE},
              notes=(_THG_FILES_NOTE,)),
    _multirel("thgl-myket", 20, "interaction (Myket Android market installs and updates, Jun 2020-Jan 2021)",
              "second", "CC BY-NC 4.0", "large",
              _counts(1_530_835, 53_632_788, 2, 14_828_090, (37_542_951, 8_044_922, 8_044_915),
                      (9_935_183, 2_274_936, 2_617_971), num_node_types=2),
              _profile(0.01, 0.00, 0.37, 1.00, 3.15, 6.24),
              {"num_nodes": _THG_NODE_NOTE,
               "split_edges": "the paper's Table 11 prints the test count as '804,4915'; read as 8,044,915, which "
                              "makes train+val+test equal the total"},
              notes=(_THG_FILES_NOTE,)),
    _multirel("tkgl-yago", None, "knowledge (YAGO)", None, None, None, {}, {},
              dict.fromkeys(("num_nodes", "num_edges", "num_relations", "num_timestamps", "split_edges"),
                            "unknown: tkgl-yago is in py-tgb's code but not in the TGB 2.0 paper, which publishes "
                            "no statistics for it, so none is checked"),
              notes=("the only dataset split 80/10/10 (val_ratio=0.1, test_ratio=0.1 in py-tgb)",
                     "py-tgb builds its edgelist by merging an existing benchmark's train/valid/test files "
                     "(tgb/datasets/tkgl_yago); time unit and license are not stated in the papers",
                     "cited as TGB 2.0, the release whose code ships it")),
)

_ANONYMISED = "node ids are integers; TGB states it anonymised user information where appropriate (TGB 2.0, App. H)"
#: per dataset: who or what the records are about (the TGB papers' dataset sections and App. C/H)
_PERSONAL_DATA: Mapping[str, str] = MappingProxyType({
    "tgbl-wiki": f"Wikipedia editors and the pages they edited, with edit times and LIWC features of the edit text; "
                 f"{_ANONYMISED}.",
    "tgbl-review": f"Amazon users and the electronics they rated, with rating times and scores; {_ANONYMISED}.",
    "tgbl-coin": "Pseudonymous blockchain addresses and their stablecoin transfers (public ledger data, which can be "
                 "linked back to people with other data); addresses are integer ids here.",
    "tgbl-comment": f"Reddit users replying to each other, with reply times and comment statistics; {_ANONYMISED}.",
    "tgbl-flight": "Airports and flights between them (callsign and aircraft type codes as edge features); no "
                   "records about individual people.",
    "tgbl-enron": "E-mails between employees of Enron (the public Enron corpus, per the DGB paper); people are "
                  "integer ids here.",
    "tgbl-uci": "Messages between members of a university's online community (SNAP CollegeMsg, per a third party); "
                "people are integer ids here.",
    "tgbl-subreddit": "Reddit users posting to subreddits (the JODIE Reddit dataset); users are integer ids here.",
    "tgbl-lastfm": "LastFM users and the songs they listened to (per the DGB paper); users are integer ids here.",
    "tgbn-trade": "Countries and their yearly agricultural trade (UN data); no records about individual people.",
    "tgbn-genre": f"LastFM users and the music genres they listened to each week; {_ANONYMISED}.",
    "tgbn-reddit": f"Reddit users and the subreddits they posted to each week; {_ANONYMISED}.",
    "tgbn-token": "Pseudonymous blockchain addresses and the tokens they transferred (public ledger data, which can "
                  "be linked back to people with other data); addresses are integer ids here.",
    "tkgl-smallpedia": "Wikidata facts between entities, including facts about public persons (e.g. positions "
                       "held); entities are integer ids here.",
    "tkgl-polecat": "Political events between actors (countries, organisations, named political figures) coded from "
                    "news reports; actors are integer ids here.",
    "tkgl-icews": "Political events between actors (countries, organisations, named political figures) coded from "
                  "news reports (ICEWS, CAMEO); actors are integer ids here.",
    "tkgl-wikidata": "Wikidata facts between entities, including facts about public persons; entities are integer "
                     "ids here.",
    "tkgl-yago": "YAGO facts between entities, including facts about public persons; entities are integer ids here.",
    "thgl-software": "GitHub users, repositories, issues and pull requests and the events between them (GH Archive); "
                     "TGB anonymised all nodes to integers (TGB 2.0, App. C).",
    "thgl-forum": f"Reddit users replying to each other and posting to subreddits (January 2014); {_ANONYMISED}.",
    "thgl-github": "GitHub users, repositories, issues and pull requests and the events between them (GH Archive); "
                   "TGB anonymised all nodes to integers (TGB 2.0, App. C).",
    "thgl-myket": "Installs and updates of Android apps by over 1.3 million users of the Myket market, collected by "
                  "Myket under its privacy policy and anonymised without personal identifiers (TGB 2.0, App. H).",
})

#: every dataset py-tgb 2.3.0 can download, by TGB name
CATALOGUE: Mapping[str, TgbEntry] = MappingProxyType({
    e.name: dataclasses.replace(e, personal_data=_PERSONAL_DATA[e.name]) for e in (*_TGBL, *_TGBN, *_MULTIREL)})


def entry(name: str) -> TgbEntry:
    """The catalogue entry of ``name`` (``tgbl-wiki``; a tgbhub mirror name ``tgb/tgbl-wiki`` is accepted too).

    Raises:
        DatasetNotFoundError: if TGB has no such dataset; it suggests the closest names.
    """
    key = name.removeprefix(f"{HUB_FAMILY}/")
    if key in CATALOGUE:
        return CATALOGUE[key]
    suggestions = difflib.get_close_matches(key.replace("_", "-"), list(CATALOGUE), n=3, cutoff=0.6)
    raise DatasetNotFoundError(name, suggestions)


def _is_count(value: object) -> TypeGuard[numbers.Integral]:
    """An integer, numpy's included; not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _fmt(value: object) -> str:
    return f"{int(value):,}" if _is_count(value) else repr(value)


def _compare_count(stat: str, published: int, measured: object) -> str | None:
    if not _is_count(measured) or int(measured) != published:
        return f"{stat}: published {published:,}, measured {_fmt(measured)}"
    return None


def _compare_ratio(stat: str, published: float, measured: object) -> str | None:
    decimals = PROFILE_DECIMALS.get(stat, 2)
    if isinstance(measured, numbers.Real) and not isinstance(measured, bool) and \
            abs(float(measured) - published) <= 0.5 * 10 ** -decimals + 1e-9:
        return None
    return f"{stat}: published {published:.{decimals}f}, measured {_fmt(measured)} (compared at {decimals} decimals)"


def check_stats(item: TgbEntry, measured: Mapping[str, object]) -> list[str]:
    """Every published statistic of ``item`` that ``measured`` contradicts, as readable lines; empty if all match.

    Only statistics present in both are compared: counts exactly, split mappings key by key (``split_edges.val``),
    ratios of ``profile`` at their published precision. A line names the statistic, both numbers, and the
    catalogue's note on that statistic where it has one (e.g. that py-tgb counts inverse TKG edges).
    """
    problems: list[str] = []
    for stat, value in measured.items():
        if stat in item.profile:
            found = [_compare_ratio(stat, item.profile[stat], value)]
        elif stat not in item.stats:
            continue
        elif not isinstance(published := item.stats[stat], Mapping):
            found = [_compare_count(stat, published, value)]
        elif not isinstance(value, Mapping):
            found = [f"{stat}: published {dict(published)}, measured {value!r} (expected a mapping)"]
        else:
            found = [_compare_count(f"{stat}.{part}", published[part], value[part])
                     for part in published if part in value]
        note = item.stats_note.get(stat)
        problems.extend(f"{line} [{item.name}; note: {note}]" if note else f"{line} [{item.name}]"
                        for line in found if line)
    return problems
