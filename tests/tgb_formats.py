"""Test-only: small synthetic datasets in py-tgb 2.3.0's exact on-disk formats, and py-tgb's own loader pointed at them.

Each writer builds a few hundred to a few thousand edges, deterministic from ``seed`` (``np.random.default_rng``), and
writes exactly the files py-tgb 2.3.0 reads for that dataset name, under the names it reads them by. The negatives are
generated with the rules of py-tgb's generators (docs/tgb.md, TGB's protocol) in py-tgb's *processed* id space, as the
upstream pickles are, so every key py-tgb's samplers look up exists. What was written is returned in
``FormatFiles.truth`` as raw (pre-loader) values, so a test can check an importer, or py-tgb itself, against it.

Format facts, established from py-tgb 2.3.0's source (``tgb/linkproppred/dataset.py``, ``tgb/nodeproppred/dataset.py``,
``tgb/utils/pre_process.py``, ``tgb/utils/utils.py``, the ``*_negative_{generator,sampler}.py`` modules and the dataset
scripts under ``tgb/datasets``):

* folder: ``<PROJ_DIR><root>/<name with '-' -> '_'>/``; the download saves ``<name>.zip`` there (not the upstream zip
  name) and ``extractall``\\ s into that same folder, so every zip is flat.
* file names: ``<name>_edgelist.csv``, ``<name>_{val,test}_ns.pkl``; with ``DATA_VERSION_DICT[name] = V > 1``
  ``<name>_edgelist_v<V>.csv`` and ``<name>_{val,test}_ns_v<V>.pkl``. Extra files: ``<name>_static_edgelist.csv``
  (tkgl-smallpedia, tkgl-wikidata), ``<name>_nodetype.csv`` (every thgl-*), ``<name>_node_labels.csv`` (tgbn-*),
  ``airport_node_feat_v<V>.csv`` (tgbl-flight, without the dataset's name).
* upstream zip: the basename of ``DATA_URL_DICT[name]``: ``<name>-v<V>.zip`` when V > 1, else ``<name>.zip``.
* every CSV has one header line that the parsers skip without reading it; columns are read by position.
* pickles: one dict per split, ``pickle.HIGHEST_PROTOCOL``; keys are tuples of ``numpy.int64`` scalars in the
  processed id space; values are 1-D ndarrays of processed destination ids.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import os
import pickle
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

# --- facts from tgb/utils/info.py (py-tgb 2.3.0) -----------------------------------------------------------------

#: ``DATA_VERSION_DICT``
PYTGB_VERSIONS: dict[str, int] = {
    "tgbl-enron": 1, "tgbl-uci": 1, "tgbl-wiki": 2, "tgbl-subreddit": 1, "tgbl-lastfm": 1, "tgbl-review": 2,
    "tgbl-coin": 2, "tgbl-comment": 1, "tgbl-flight": 2,
    "tgbn-trade": 1, "tgbn-genre": 1, "tgbn-reddit": 1, "tgbn-token": 1,
    "tkgl-polecat": 1, "tkgl-icews": 1, "tkgl-yago": 1, "tkgl-wikidata": 1, "tkgl-smallpedia": 1,
    "thgl-myket": 1, "thgl-github": 1, "thgl-forum": 1, "thgl-software": 1,
}

#: the parser ``generate_processed_files`` sends each name through (tgb/utils/pre_process.py)
PYTGB_PARSERS: dict[str, str] = {
    "tgbl-wiki": "load_edgelist_wiki", "tgbl-subreddit": "load_edgelist_wiki", "tgbl-uci": "load_edgelist_wiki",
    "tgbl-enron": "load_edgelist_wiki", "tgbl-lastfm": "load_edgelist_wiki",
    "tgbl-flight": "csv_to_pd_data", "tgbl-coin": "csv_to_pd_data_sc", "tgbl-review": "csv_to_pd_data_sc",
    "tgbl-comment": "csv_to_pd_data_rc",
    "tkgl-polecat": "csv_to_tkg_data", "tkgl-icews": "csv_to_tkg_data", "tkgl-yago": "csv_to_tkg_data",
    "tkgl-wikidata": "csv_to_wikidata", "tkgl-smallpedia": "csv_to_wikidata",
    "thgl-myket": "csv_to_thg_data", "thgl-github": "csv_to_thg_data", "thgl-software": "csv_to_thg_data",
    "thgl-forum": "csv_to_forum_data",
    "tgbn-trade": "load_edgelist_trade", "tgbn-genre": "load_edgelist_datetime", "tgbn-reddit": "load_edgelist_sr",
    "tgbn-token": "load_edgelist_token",
}

#: ``DATA_NS_STRATEGY_DICT`` for the names the writers support
PYTGB_NS_STRATEGY: dict[str, str] = {
    "tgbl-wiki": "hist_rnd", "tgbl-subreddit": "hist_rnd", "tgbl-uci": "hist_rnd", "tgbl-enron": "hist_rnd",
    "tgbl-lastfm": "hist_rnd",
    "tkgl-polecat": "time-filtered", "tkgl-icews": "time-filtered", "tkgl-yago": "time-filtered",
    "tkgl-smallpedia": "time-filtered", "tkgl-wikidata": "dst-time-filtered",
    "thgl-myket": "node-type-filtered", "thgl-github": "node-type-filtered", "thgl-forum": "node-type-filtered",
    "thgl-software": "node-type-filtered",
}

#: ``DATA_NUM_CLASSES``
PYTGB_NUM_CLASSES: dict[str, int] = {"tgbn-trade": 255, "tgbn-genre": 513, "tgbn-reddit": 698, "tgbn-token": 1001}

TGBL_NAMES = ("tgbl-wiki", "tgbl-subreddit", "tgbl-uci", "tgbl-enron", "tgbl-lastfm")   # the JODIE-layout parser
TKGL_STRING_NAMES = ("tkgl-smallpedia", "tkgl-wikidata")                                # Wikidata Q/P ids
TKGL_INT_NAMES = ("tkgl-polecat", "tkgl-icews", "tkgl-yago")                            # integer ids
THGL_NAMES = ("thgl-software", "thgl-github", "thgl-myket", "thgl-forum")
TGBN_NAMES = ("tgbn-trade",)

# Every TGB dataset script writes its CSVs with csv.writer on a file opened without newline='', so rows end in
# "\r\n" (csv's default lineterminator); JODIE's wikipedia.csv (tgbl-wiki) uses "\n".
CRLF = "\r\n"


# --- names ----------------------------------------------------------------------------------------------------------

def installed(folder: Path) -> list[Path]:
    """The files under ``folder`` other than lock files: what an import installed (a refused one installs nothing)."""
    return [p for p in folder.rglob("*") if p.is_file() and p.suffix != ".lock"] if folder.exists() else []


def version(name: str) -> int:
    return PYTGB_VERSIONS[name]


def dir_name(name: str) -> str:
    """The dataset folder py-tgb uses: ``'_'.join(name.split('-'))``."""
    return name.replace("-", "_")


def _suffix(name: str) -> str:
    return f"_v{version(name)}" if version(name) > 1 else ""


def edgelist_name(name: str) -> str:
    return f"{name}_edgelist{_suffix(name)}.csv"


def ns_name(name: str, split: str) -> str:
    assert split in ("val", "test")
    return f"{name}_{split}_ns{_suffix(name)}.pkl"


def node_labels_name(name: str) -> str:
    return f"{name}_node_labels{_suffix(name)}.csv"


def zip_name(name: str) -> str:
    """The upstream release's zip (basename of ``DATA_URL_DICT[name]``)."""
    return f"{name}-v{version(name)}.zip" if version(name) > 1 else f"{name}.zip"


# --- the result -----------------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class FormatFiles:
    """What a writer wrote: ``files`` maps a role (``edgelist``, ``val_ns``, ``test_ns``, ``static_edgelist``,
    ``nodetype``, ``node_labels``, ``node_feat``) to its path inside ``folder``; ``truth`` holds the values written."""

    name: str
    folder: Path
    files: dict[str, Path]
    truth: dict[str, Any]

    @property
    def kind(self) -> str:
        return "node" if self.name.startswith("tgbn-") else "link"

    @property
    def zip_name(self) -> str:
        return zip_name(self.name)

    def relocated(self, folder: Path) -> FormatFiles:
        """The same files, found in another folder (after a copy or an unzip)."""
        folder = Path(folder)
        return dataclasses.replace(self, folder=folder, files={k: folder / p.name for k, p in self.files.items()})


# --- shared helpers -------------------------------------------------------------------------------------------------

def _write_csv(path: Path, header: list[str], rows: Iterator[list[Any]] | list[list[Any]], newline: str) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=newline)
    writer.writerow(header)
    writer.writerows(rows)
    path.write_bytes(buf.getvalue().encode("utf-8"))


def _save_pkl(obj: Any, path: Path) -> None:
    with open(path, "wb") as handle:
        pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL)


def _first_appearance(heads: Any, tails: Any) -> dict[Any, int]:
    """py-tgb's remap: ids in order of first appearance, head before tail, row by row."""
    ids: dict[Any, int] = {}
    for h, t in zip(heads, tails):
        if h not in ids:
            ids[h] = len(ids)
        if t not in ids:
            ids[t] = len(ids)
    return ids


def _split_masks(ts: np.ndarray, val_ratio: float = 0.15, test_ratio: float = 0.15):
    """``generate_splits``: quantiles of the timestamps; train <= q(0.70) < val <= q(0.85) < test."""
    val_time, test_time = np.quantile(ts, [1 - val_ratio - test_ratio, 1 - test_ratio])
    return ts <= val_time, (ts > val_time) & (ts <= test_time), ts > test_time


def _key(*values: Any) -> tuple:
    return tuple(np.int64(v) for v in values)


def _prepare(folder: Path | str) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _skewed(rng: np.random.Generator, n: int, size: int, power: float = 1.0) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** power
    return rng.choice(n, size=size, p=p / p.sum())


# --- tgbl: JODIE layout (load_edgelist_wiki), hist_rnd negatives ---------------------------------------------------

def write_tgbl(folder: Path | str, name: str = "tgbl-wiki", n_edges: int = 1000, seed: int = 0, *,
               n_users: int = 80, n_items: int = 50, feat_dim: int = 172, q: int = 60,
               hist_ratio: float = 0.5) -> FormatFiles:
    """A bipartite user->item stream in JODIE's CSV layout, as tgbl-wiki (and -subreddit, -uci, -enron, -lastfm).

    CSV: header ``user_id,item_id,timestamp,state_label,comma_separated_list_of_features`` (5 names, while rows have
    4 + feat_dim fields); ``timestamp`` is written as a float (``36.0``) like JODIE's file. py-tgb reads it with
    ``pd.read_csv(skiprows=1, header=None)``: column 0 src, 1 dst, 2 ts, 3 ignored, 4: edge features.

    Negatives: hist_rnd, keyed ``(src, dst, ts)`` in py-tgb's ids (src raw, dst + max(src) + 1): up to
    ``int(q * hist_ratio)`` from the source's *train* destinations minus the conflict set (destinations of src at ts in
    that split), the rest from ``[min_dst, max_dst]`` minus conflict set and train destinations, all of them when fewer
    remain. As upstream, a source with no train history gets a float64 array (its empty historical part is
    ``np.array([])``), everything else int64. The default q = 60 over a destination range of about 60 ids gives, as
    tgbl-wiki-v2's q = 12000 over 1000 items does, mostly full queries and a few ragged ones.
    """
    if name not in TGBL_NAMES:
        raise ValueError(f"write_tgbl writes the load_edgelist_wiki layout: one of {TGBL_NAMES}, not {name!r}")
    folder = _prepare(folder)
    rng = np.random.default_rng(seed)
    users = np.sort(rng.choice(np.arange(n_users * 5 // 4), n_users, replace=False))    # raw ids, with gaps
    items = np.sort(rng.choice(np.arange(n_items * 5 // 4), n_items, replace=False))
    user_start = np.sort(rng.integers(0, n_edges, n_users))                             # users join over time
    user_start[: n_users // 3] = 0
    ts_now = 0.0
    rows_src, rows_dst, rows_ts = [], [], []
    seen: dict[int, list[int]] = {}
    for e in range(n_edges):
        r = rng.random()
        if e > 0 and r < 0.04:                           # same user, same time, another item: a conflict set
            u, t = rows_src[-1], rows_ts[-1]
            i = int(rng.choice(items))
        elif e > 0 and r < 0.05:                         # an exact duplicate: keys collapse
            u, i, t = rows_src[-1], rows_dst[-1], rows_ts[-1]
        else:
            ts_now += float(rng.integers(0, 40))
            active = np.flatnonzero(user_start <= e)
            u = int(users[active[_skewed(rng, len(active), 1, 0.8)[0]]])
            hist = seen.get(u)
            i = int(rng.choice(hist)) if hist and rng.random() < 0.6 else int(items[_skewed(rng, n_items, 1, 0.5)[0]])
            t = ts_now
        rows_src.append(u)
        rows_dst.append(i)
        rows_ts.append(t)
        seen.setdefault(u, []).append(i)
    src = np.array(rows_src, dtype=np.int64)
    dst = np.array(rows_dst, dtype=np.int64)
    ts = np.array(rows_ts, dtype=np.float64)
    state = (rng.random(n_edges) < 0.02).astype(np.int64)
    sparse = rng.normal(0.0, 0.5, (n_edges, feat_dim)) * (rng.random((n_edges, feat_dim)) < 0.3)
    feat_text = [[f"{x:.6f}".rstrip("0").rstrip(".") if x != 0 else "0.0" for x in row] for row in sparse]
    feat = np.array([[float(x) for x in row] for row in feat_text], dtype=np.float64).reshape(n_edges, feat_dim)

    lines = ["user_id,item_id,timestamp,state_label,comma_separated_list_of_features"]
    for k in range(n_edges):
        lines.append(",".join([str(src[k]), str(dst[k]), f"{ts[k]:.1f}", str(state[k]), *feat_text[k]]))
    paths = {"edgelist": folder / edgelist_name(name)}
    paths["edgelist"].write_text("\n".join(lines) + "\n")

    # py-tgb's view: no remap, dst shifted past the largest source id, ts cast to int
    p_src, p_dst, p_ts = src, dst + int(src.max()) + 1, ts.astype(np.int64)
    train, val, test = _split_masks(p_ts)
    hist: dict[int, np.ndarray] = {}
    for s in np.unique(p_src[train]):
        hist[int(s)] = np.unique(p_dst[train][p_src[train] == s])
    all_dst = np.arange(int(p_dst.min()), int(p_dst.max()) + 1)
    max_hist = int(q * hist_ratio)
    negatives = {}
    for split, mask in (("val", val), ("test", test)):
        s_arr, d_arr, t_arr = p_src[mask], p_dst[mask], p_ts[mask]
        conflicts: dict[tuple[int, int], list[int]] = {}
        for s, d, t in zip(s_arr, d_arr, t_arr):
            conflicts.setdefault((int(t), int(s)), []).append(int(d))
        out = {}
        for s, d, t in zip(s_arr, d_arr, t_arr):
            conflict = np.array(conflicts[(int(t), int(s))])
            seen_dst = hist.get(int(s))
            if seen_dst is None:
                neg_hist = np.array([])                  # float64, as upstream
                invalid = conflict
            else:
                candidates = np.setdiff1d(seen_dst, conflict)
                neg_hist = rng.choice(candidates, min(max_hist, len(candidates)), replace=False)
                invalid = np.concatenate([conflict, seen_dst])
            remaining = np.setdiff1d(all_dst, invalid)
            n_rnd = q - len(neg_hist)
            neg_rnd = remaining if n_rnd > len(remaining) else rng.choice(remaining, n_rnd, replace=False)
            out[_key(s, d, t)] = np.concatenate([neg_hist, neg_rnd])
        negatives[split] = out
        paths[f"{split}_ns"] = folder / ns_name(name, split)
        _save_pkl(out, paths[f"{split}_ns"])

    truth = {"src": src, "dst": dst, "ts": ts, "state_label": state, "edge_feat": feat,
             "negatives": negatives, "q": q, "hist_ratio": hist_ratio, "strategy": "hist_rnd", "seed": seed}
    return FormatFiles(name, folder, paths, truth)


# --- tgbl-flight: OpenSky layout (csv_to_pd_data) + airport node features (process_node_feat) -------------------

#: airport codes of the edges: ICAO-like idents, and "007" next to "7" (different airports to py-tgb's text ids)
FLIGHT_AIRPORTS = tuple(f"K{chr(65 + i)}{chr(66 + i)}X" for i in range(10)) + ("007", "7")
#: the edges' airports have 4 types and 7 continents (OurAirports' spelling; "NA" is North America, not a missing
#: value): 4 + 7 + a region of 7 characters + 2 coordinates = py-tgb's 20 node features
FLIGHT_TYPES = ("large_airport", "medium_airport", "small_airport", "heliport")
FLIGHT_CONTINENTS = ("NA", "EU", "AS", "AF", "OC", "SA", "AN")
#: ISO 3166-2 regions as OurAirports writes them (5 or 6 characters, "U-A" for unassigned); py-tgb pads them to 7
FLIGHT_REGIONS = ("US-NY", "GB-ENG", "CA-ON", "AU-QLD", "US-U-A", "BR-SP", "FR-ARA", "JP-13", "NZ-AUK", "ZA-GT",
                  "IN-MH", "AQ-U-A")
#: OurAirports lists every airport, so the file holds airports no edge has (py-tgb skips them), of other types too
FLIGHT_UNUSED_TYPES = ("closed", "seaplane_base", "balloonport", "small_airport")
#: an airport of the edges the airport file does not list: py-tgb leaves its features at zero
FLIGHT_UNLISTED = "KJKX"
#: callsigns of 0..8 characters (lower case, digits), typecodes of 0..9 (9: py-tgb's '!!!!!!!!')
FLIGHT_CALLSIGNS = ("", "A", "b2", "UAL", "dal12", "SWA123", "aal1234", "JBU12345")
FLIGHT_TYPECODES = ("", "B", "a3", "B738", "a320n", "B77W12", "e190zzz", "CRJ900xx", "A350-1000")


def flight_rows(n_edges: int = 600, seed: int = 0) -> list[list[object]]:
    """``day, src, dst, callsign, typecode`` rows as TGB's v2 release holds them: Unix seconds at daily granularity
    (2019-01-01 on), in time order; the first 12 rows visit every airport."""
    rng = np.random.default_rng(seed)
    days = np.sort(1_546_300_800 + 86_400 * rng.integers(0, 40, n_edges))
    airports = FLIGHT_AIRPORTS
    rows = []
    for i, day in enumerate(days.tolist()):
        src, dst = (airports[i % 12], airports[(i + 5) % 12]) if i < 12 else \
            (airports[rng.integers(12)], airports[rng.integers(12)])
        rows.append([day, src, dst, FLIGHT_CALLSIGNS[rng.integers(len(FLIGHT_CALLSIGNS))],
                     FLIGHT_TYPECODES[rng.integers(len(FLIGHT_TYPECODES))]])
    return rows


def flight_airports(seed: int = 0) -> list[list[object]]:
    """The airport file's rows (``airport_code, type, continent, iso_region, longitude, latitude``) as TGB's
    ``clean_node_feat`` writes them from OurAirports' list: every airport of the edges but :data:`FLIGHT_UNLISTED`,
    and airports no edge has, some of them before the first used one, in a shuffled order; coordinates as floats."""
    rng = np.random.default_rng(seed + 1)

    def coordinates() -> list[float]:
        return [float(np.round(rng.uniform(-180, 180), 8)), float(np.round(rng.uniform(-90, 90), 8))]

    rows = [[code, FLIGHT_TYPES[i % 4], FLIGHT_CONTINENTS[i % 7], FLIGHT_REGIONS[i], *coordinates()]
            for i, code in enumerate(FLIGHT_AIRPORTS) if code != FLIGHT_UNLISTED]
    rows = [rows[i] for i in rng.permutation(len(rows))]
    unused = [[f"{k:02d}{chr(65 + k)}", FLIGHT_UNUSED_TYPES[k % 4], FLIGHT_CONTINENTS[(k + 3) % 7],
               f"US-{chr(65 + k)}K", *coordinates()] for k in range(8)]
    return unused[:3] + rows[:6] + unused[3:] + rows[6:]


def write_flight(folder: Path | str, name: str = "tgbl-flight", n_edges: int = 600, seed: int = 0, *,
                 rows: list[list[object]] | None = None, airports: list[list[object]] | None = None, q: int = 5,
                 newline: str = CRLF) -> FormatFiles:
    """tgbl-flight's v2 release: ``tgbl-flight_edgelist_v2.csv`` (header ``day,src,dst,callsign,typecode``; rows
    :func:`flight_rows` or ``rows``), ``airport_node_feat_v2.csv`` (header ``airport_code,type,continent,iso_region,
    longitude,latitude``, rows :func:`flight_airports` or ``airports``; written by ``csv.writer``, "\\r\\n", floats
    as ``str(float)``, as TGB's ``clean_node_feat``) and hist_rnd-shaped negatives (``q`` per key) keyed by py-tgb's
    processed ids: airports by first appearance, source before destination. Rows with date strings get empty
    negatives (py-tgb's parser reads them, the import refuses them)."""
    if name != "tgbl-flight":
        raise ValueError(f"write_flight writes tgbl-flight's csv_to_pd_data layout, not {name!r}")
    folder = _prepare(folder)
    rows = flight_rows(n_edges, seed) if rows is None else rows
    airports = flight_airports(seed) if airports is None else airports
    paths = {"edgelist": folder / edgelist_name(name), "node_feat": folder / f"airport_node_feat{_suffix(name)}.csv"}
    _write_csv(paths["edgelist"], ["day", "src", "dst", "callsign", "typecode"], rows, newline)
    _write_csv(paths["node_feat"], ["airport_code", "type", "continent", "iso_region", "longitude", "latitude"],
               airports, newline)
    ids = _first_appearance([str(r[1]) for r in rows], [str(r[2]) for r in rows])
    negatives: dict[str, dict] = {"val": {}, "test": {}}
    if all(str(r[0]).isdigit() for r in rows):
        t = np.array([int(r[0]) for r in rows])
        _, val, test = _split_masks(t)
        rng = np.random.default_rng(seed + 3)
        for split, inside in (("val", val), ("test", test)):
            negatives[split] = {_key(ids[str(r[1])], ids[str(r[2])], int(r[0])): rng.choice(len(ids), q, replace=False)
                                for r, keep in zip(rows, inside) if keep}
    for split in ("val", "test"):
        paths[f"{split}_ns"] = folder / ns_name(name, split)
        _save_pkl(negatives[split], paths[f"{split}_ns"])
    truth = {"rows": rows, "airports": airports, "node_ids": ids, "negatives": negatives, "q": q, "seed": seed}
    return FormatFiles(name, folder, paths, truth)


#: the parser layouts :func:`write_text_ids` writes: the header py-tgb skips
TEXT_ID_HEADERS = {"tgbl-coin": ["time", "src", "dst", "weight"], "tgbl-review": ["time", "src", "dst", "weight"],
                   "tgbl-comment": ["ts", "src", "dst", "num_words", "score"]}


def write_text_ids(folder: Path | str, name: str = "tgbl-coin", n_edges: int = 1000, seed: int = 0, *,
                   n_nodes: int = 400, q: int = 7, time_ordered: bool = False, newline: str = CRLF) -> FormatFiles:
    """tgbl-coin / tgbl-review (``csv_to_pd_data_sc``: ``time, src, dst, weight``) or tgbl-comment
    (``csv_to_pd_data_rc``: ``ts, src, dst, num_words, score``): text ids (``0x``-hex addresses, with ``"007"`` and
    ``"7"`` as two different ids) drawn with a skew, so new ids keep appearing; weights with zeros (py-tgb maps them
    to 1 before log2) and decimals; rows out of time order unless ``time_ordered`` (as coin was before its v2);
    negatives (``q`` per key) keyed by py-tgb's processed ids: first appearance, source before destination."""
    if name not in TEXT_ID_HEADERS:
        raise ValueError(f"write_text_ids writes the text-id layouts of {sorted(TEXT_ID_HEADERS)}, not {name!r}")
    folder = _prepare(folder)
    rng = np.random.default_rng(seed)
    people = [f"0x{i:040x}" for i in range(n_nodes - 2)] + ["007", "7"]
    times = 1_600_000_000 + np.cumsum(rng.integers(0, 30, n_edges))
    if not time_ordered:
        times = times[rng.permutation(n_edges)]
    heads = _skewed(rng, n_nodes, n_edges, 0.7)
    tails = _skewed(rng, n_nodes, n_edges, 0.7)
    if name == "tgbl-comment":
        rows = [[int(t), people[h], people[d], int(rng.integers(0, 900)), int(rng.integers(-5, 50))]
                for t, h, d in zip(times.tolist(), heads.tolist(), tails.tolist())]
    else:
        weights = rng.choice([0.0, 2.5, 800.0, 0.125, 1e-6, 3.0], n_edges)
        rows = [[int(t), people[h], people[d], float(w)]
                for t, h, d, w in zip(times.tolist(), heads.tolist(), tails.tolist(), weights.tolist())]
    paths = {"edgelist": folder / edgelist_name(name)}
    _write_csv(paths["edgelist"], TEXT_ID_HEADERS[name], rows, newline)
    ids = _first_appearance([r[1] for r in rows], [r[2] for r in rows])
    _, val, test = _split_masks(times)
    for split, inside in (("val", val), ("test", test)):
        table = {_key(ids[r[1]], ids[r[2]], r[0]): rng.choice(len(ids), q, replace=False)
                 for r, keep in zip(rows, inside) if keep}
        paths[f"{split}_ns"] = folder / ns_name(name, split)
        _save_pkl(table, paths[f"{split}_ns"])
    return FormatFiles(name, folder, paths, {"rows": rows, "node_ids": ids, "q": q, "seed": seed})


# --- tkgl: (timestamp, head, tail, relation_type), inverse edges added by the client ------------------------------

def write_tkgl(folder: Path | str, name: str = "tkgl-smallpedia", n_edges: int = 1500, seed: int = 0, *,
               n_entities: int = 150, n_relations: int = 8, n_steps: int = 30, n_static: int = 120,
               q: int = 60, newline: str = CRLF) -> FormatFiles:
    """A temporal knowledge graph in the tkgl layout.

    CSV header ``ts,head,tail,relation_type`` (read by position): Wikidata-style string ids (``Q123``, ``P39``) and
    years for tkgl-smallpedia / tkgl-wikidata (parser ``csv_to_wikidata``: nodes *and* relations remapped in order of
    first appearance); integer ids and day indices for tkgl-polecat / -icews / -yago (``csv_to_tkg_data``: nodes
    remapped, relation ids kept). smallpedia and wikidata also get ``<name>_static_edgelist.csv`` (``head,tail,
    relation_type``, no triple that also occurs in time).

    Negatives are built over the client's edge arrays *with* inverse edges (o, s, t, r + R), R the number of distinct
    relation ids, and over its quantile split of those arrays (yago 0.1/0.1, others 0.15/0.15): for "time-filtered"
    each key ``(ts, src, rel)`` maps to the conflict set, every dst true at (ts, src, rel), in first-seen order; for
    "dst-time-filtered" (wikidata) to ``q`` negatives drawn from the relation's destinations anywhere in the data minus
    the conflict set, padded upstream's way when fewer remain.
    """
    string_ids = name in TKGL_STRING_NAMES
    if not string_ids and name not in TKGL_INT_NAMES:
        raise ValueError(f"write_tkgl supports {TKGL_STRING_NAMES + TKGL_INT_NAMES}, not {name!r}")
    folder = _prepare(folder)
    rng = np.random.default_rng(seed)
    if string_ids:
        entities = np.array([f"Q{x}" for x in rng.choice(1_000_000, n_entities, replace=False)], dtype=object)
        relations = np.array([f"P{x}" for x in rng.choice(np.arange(1, 2000), n_relations, replace=False)],
                             dtype=object)
        steps = 1900 + np.sort(rng.choice(125, n_steps, replace=False))       # years
    else:
        entities = rng.choice(200_000, n_entities, replace=False).astype(np.int64)
        relations = rng.permutation(n_relations).astype(np.int64)              # 0..R-1, any order
        steps = np.sort(rng.choice(1826, n_steps, replace=False)).astype(np.int64)  # day indices
    later_busier = np.linspace(1, 3, n_steps)
    step_of_edge = np.sort(rng.choice(n_steps, n_edges, p=later_busier / later_busier.sum()))
    quads: list[tuple[int, int, int, int]] = []                               # (step, head, tail, rel) as indices
    present: set[tuple[int, int, int, int]] = set()
    facts: list[tuple[int, int, int]] = []
    for e in range(n_edges):
        k = int(step_of_edge[e])
        for _ in range(1000):
            r = 1.0 if e < n_relations else rng.random()                # the first edges use every relation once
            if quads and quads[-1][0] == k and r < 0.1:                  # another tail for (t, s, r): conflict set
                _, h, _, rel = quads[-1]
                t = int(rng.integers(n_entities))
            elif facts and r < 0.55:                                    # a fact that held before: recurrency
                h, t, rel = facts[int(rng.integers(len(facts)))]
            else:
                h = int(_skewed(rng, n_entities, 1, 0.7)[0])
                t = int(rng.integers(n_entities))
                rel = e if e < n_relations else int(_skewed(rng, n_relations, 1, 0.5)[0])
            if h != t and (k, h, t, rel) not in present:
                break
        else:
            raise ValueError("could not draw a new quadruple: too many edges for so few entities and steps")
        present.add((k, h, t, rel))
        quads.append((k, h, t, rel))
        facts.append((h, t, rel))
    quads.sort(key=lambda x: x[0])
    q_arr = np.array(quads, dtype=np.int64)
    ts = steps[q_arr[:, 0]].astype(np.int64)
    head, tail, rel = entities[q_arr[:, 1]], entities[q_arr[:, 2]], relations[q_arr[:, 3]]

    paths = {"edgelist": folder / edgelist_name(name)}
    _write_csv(paths["edgelist"], ["ts", "head", "tail", "relation_type"],
               ([int(a), b, c, d if string_ids else int(d)] for a, b, c, d in zip(ts, head, tail, rel)), newline)
    truth: dict[str, Any] = {"ts": ts, "head": head, "tail": tail, "relation_type": rel}

    if string_ids:
        temporal = set(zip(head.tolist(), tail.tolist(), rel.tolist()))
        extra_entities = [f"Q{x}" for x in rng.choice(np.arange(1_000_000, 2_000_000), max(n_static // 6, 1),
                                                       replace=False)]
        extra_relations = [f"P{x}" for x in rng.choice(np.arange(2000, 4000), 3, replace=False)]
        pool_e = list(entities) + extra_entities
        pool_r = list(relations) + extra_relations
        static: list[tuple[str, str, str]] = []
        static_seen: set[tuple[str, str, str]] = set()
        while len(static) < n_static:
            h = pool_e[int(rng.integers(len(pool_e)))]
            t = pool_e[int(rng.integers(len(pool_e)))]
            r = pool_r[int(rng.integers(len(pool_r)))]
            if h != t and (h, t, r) not in temporal and (h, t, r) not in static_seen:
                static_seen.add((h, t, r))
                static.append((h, t, r))
        paths["static_edgelist"] = folder / f"{name}_static_edgelist.csv"
        _write_csv(paths["static_edgelist"], ["head", "tail", "relation_type"], (list(x) for x in static), newline)
        truth["static_head"] = np.array([x[0] for x in static], dtype=object)
        truth["static_tail"] = np.array([x[1] for x in static], dtype=object)
        truth["static_relation_type"] = np.array([x[2] for x in static], dtype=object)

    # the client's view: remap, relation ids, inverse edges appended, split over all of it
    node_ids = _first_appearance(head.tolist(), tail.tolist())
    p_src = np.array([node_ids[x] for x in head.tolist()], dtype=np.int64)
    p_dst = np.array([node_ids[x] for x in tail.tolist()], dtype=np.int64)
    if string_ids:
        rel_ids: dict[Any, int] = {}
        for r in rel.tolist():
            rel_ids.setdefault(r, len(rel_ids))
        p_rel = np.array([rel_ids[r] for r in rel.tolist()], dtype=np.int64)
    else:
        p_rel = rel.astype(np.int64)
    n_rels = len(np.unique(p_rel))
    a_src = np.concatenate([p_src, p_dst])
    a_dst = np.concatenate([p_dst, p_src])
    a_ts = np.concatenate([ts, ts])
    a_rel = np.concatenate([p_rel, p_rel + n_rels])
    ratio = 0.1 if name == "tkgl-yago" else 0.15
    _, val, test = _split_masks(a_ts, ratio, ratio)
    strategy = PYTGB_NS_STRATEGY[name]
    dst_dict: dict[int, np.ndarray] = {}
    if strategy == "dst-time-filtered":                # every tail of each relation, whole data, inverses included
        for r in np.unique(a_rel):
            dst_dict[int(r)] = np.array(list(dict.fromkeys(a_dst[a_rel == r].tolist())), dtype=np.int64)
    all_dst = np.arange(int(a_dst.min()), int(a_dst.max()) + 1)
    negatives = {}
    for split, mask in (("val", val), ("test", test)):
        conflicts: dict[tuple, dict[int, int]] = {}
        for s, d, t, r in zip(a_src[mask], a_dst[mask], a_ts[mask], a_rel[mask]):
            conflicts.setdefault(_key(t, s, r), {})[int(d)] = 1
        out = {}
        for key, found in conflicts.items():
            conflict = np.array(list(found), dtype=np.int64)
            if strategy == "time-filtered":
                out[key] = conflict
            else:
                filtered = np.setdiff1d(dst_dict[int(key[2])], conflict)
                if len(filtered) < q:                  # upstream's fallback, conflict set not excluded
                    sampled = rng.choice(np.setdiff1d(all_dst, filtered), q, replace=False)
                    sampled[: len(filtered)] = filtered
                else:
                    sampled = rng.choice(filtered, q, replace=False)
                out[key] = sampled
        negatives[split] = out
        paths[f"{split}_ns"] = folder / ns_name(name, split)
        _save_pkl(out, paths[f"{split}_ns"])
    truth.update(negatives=negatives, strategy=strategy, q=q if strategy == "dst-time-filtered" else None, seed=seed)
    return FormatFiles(name, folder, paths, truth)


# --- thgl: (timestamp, head, tail, relation_type) + node types, node-type-filtered negatives -----------------------

def write_thgl(folder: Path | str, name: str = "thgl-software", n_edges: int = 1500, seed: int = 0, *,
               nodes_per_type: tuple[int, ...] | None = None, n_relations: int | None = None, q: int = 20,
               newline: str = CRLF) -> FormatFiles:
    """A temporal heterogeneous graph in the thgl layout.

    CSV header ``timestamp,head,tail,relation_type`` (thgl-forum: ``ts,src,dst,relation_type,num_words,score``), all
    integers, Unix seconds; ``<name>_nodetype.csv`` with header ``node_id,type`` lists every node of the edge list by
    its raw id (an id the edges lack makes py-tgb raise). Raw ids are scrambled integers, so py-tgb's remap (order of
    first appearance) is not the identity. Each relation has one head type and one tail type.

    Negatives: key ``(ts, src, rel)`` -> ``q`` distinct nodes of the type of the first destination of the conflict
    set, drawn from all nodes of that type; redrawn from that type minus the conflict set when the draw hits it.
    """
    if name not in THGL_NAMES:
        raise ValueError(f"write_thgl supports {THGL_NAMES}, not {name!r}")
    forum = name == "thgl-forum"
    folder = _prepare(folder)
    rng = np.random.default_rng(seed)
    if nodes_per_type is None:
        nodes_per_type = (120, 40) if forum else (70, 50, 50, 40)
    if n_relations is None:
        n_relations = 2 if forum else 14
    n_types = len(nodes_per_type)
    raw_ids = rng.choice(5_000_000, sum(nodes_per_type), replace=False).astype(np.int64)
    node_type = np.repeat(np.arange(n_types), nodes_per_type)
    by_type = [raw_ids[node_type == k] for k in range(n_types)]
    if forum:
        rel_types = np.array([[0, 0], [0, 1]])                              # user-reply-user, user-post-subreddit
    else:
        rel_types = np.column_stack([np.zeros(n_relations, dtype=np.int64), rng.integers(1, n_types, n_relations)])
        rel_types[n_relations // 2:, 0] = rng.integers(1, n_types, n_relations - n_relations // 2)
    t_now = 1_704_067_200
    rows: list[tuple[int, int, int, int]] = []
    present: set[tuple[int, int, int, int]] = set()
    for _ in range(n_edges):
        for _ in range(100):
            r = rng.random()
            if rows and r < 0.08:                                      # conflict set at (t, s, r)
                t, h, _, rel = rows[-1]
            else:
                t = t_now + int(rng.integers(0, 4) if r < 0.5 else rng.integers(1, 300))
                rel = int(_skewed(rng, n_relations, 1, 0.6)[0])
                pool = by_type[rel_types[rel, 0]]
                h = int(pool[_skewed(rng, len(pool), 1, 0.7)[0]])
            pool = by_type[rel_types[rel, 1]]
            d = int(pool[_skewed(rng, len(pool), 1, 0.5)[0]])
            if d != h and (t, h, d, rel) not in present:
                break
        else:
            raise ValueError("could not draw a new edge: too many edges for so few nodes")
        t_now = max(t_now, t)
        present.add((t, h, d, rel))
        rows.append((t, h, d, rel))
    arr = np.array(rows, dtype=np.int64)
    ts, head, tail, rel = arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]
    truth: dict[str, Any] = {"ts": ts, "head": head, "tail": tail, "relation_type": rel}
    paths = {"edgelist": folder / edgelist_name(name)}
    if forum:
        num_words = rng.integers(1, 3000, n_edges)
        score = rng.integers(-50, 5000, n_edges)
        truth.update(num_words=num_words, score=score)
        _write_csv(paths["edgelist"], ["ts", "src", "dst", "relation_type", "num_words", "score"],
                   (list(map(int, x)) for x in zip(ts, head, tail, rel, num_words, score)), newline)
    else:
        _write_csv(paths["edgelist"], ["timestamp", "head", "tail", "relation_type"],
                   (list(map(int, x)) for x in zip(ts, head, tail, rel)), newline)

    used = np.unique(np.concatenate([head, tail]))
    type_of = dict(zip(raw_ids.tolist(), node_type.tolist()))
    truth["node_id"] = used
    truth["node_type"] = np.array([type_of[int(x)] for x in used], dtype=np.int64)
    paths["nodetype"] = folder / f"{name}_nodetype.csv"
    _write_csv(paths["nodetype"], ["node_id", "type"],
               ([int(a), int(b)] for a, b in zip(truth["node_id"], truth["node_type"])), newline)

    node_ids = _first_appearance(head.tolist(), tail.tolist())
    p_src = np.array([node_ids[x] for x in head.tolist()], dtype=np.int64)
    p_dst = np.array([node_ids[x] for x in tail.tolist()], dtype=np.int64)
    p_type = np.zeros(len(node_ids), dtype=np.int64)
    for raw, pid in node_ids.items():
        p_type[pid] = type_of[raw]
    nodes_of_type = {k: np.flatnonzero(p_type == k) for k in np.unique(p_type).tolist()}
    _, val, test = _split_masks(ts)
    negatives = {}
    for split, mask in (("val", val), ("test", test)):
        conflicts: dict[tuple, dict[int, int]] = {}
        for s, d, t, r in zip(p_src[mask], p_dst[mask], ts[mask], rel[mask]):
            conflicts.setdefault(_key(t, s, r), {})[int(d)] = 1
        out = {}
        for key, found in conflicts.items():
            conflict = np.array(list(found), dtype=np.int64)
            candidates = nodes_of_type[int(p_type[conflict[0]])]
            drawn = rng.choice(candidates, q, replace=False)
            if len(np.setdiff1d(drawn, conflict)) < q:
                drawn = rng.choice(np.setdiff1d(candidates, conflict), q, replace=False)
            out[key] = drawn
        negatives[split] = out
        paths[f"{split}_ns"] = folder / ns_name(name, split)
        _save_pkl(out, paths[f"{split}_ns"])
    truth.update(negatives=negatives, q=q, strategy="node-type-filtered", seed=seed)
    return FormatFiles(name, folder, paths, truth)


# --- tgbn-trade: (year, nation, trading nation, weight) + next-year label file --------------------------------------

def _nation_names(rng: np.random.Generator, n: int) -> list[str]:
    names = []
    for k in range(n):
        kind = k % 9
        if kind == 0:
            names.append(f"Territory {k:03d}, Special Region")        # a comma: csv quotes it
        elif kind == 1:
            names.append(f"Republic of Nation {k:03d} (Plurinational State)")
        elif kind == 2:
            names.append(f"Nation {k:03d} d'Est")
        else:
            names.append(f"Nation {k:03d}")
    return [names[i] for i in rng.permutation(n)]


def write_tgbn(folder: Path | str, name: str = "tgbn-trade", n_edges: int = 2000, seed: int = 0, *,
               n_nations: int = 255, n_years: int = 8, newline: str = CRLF) -> FormatFiles:
    """UN-trade-like yearly weighted edges, in tgbn-trade's layout.

    ``tgbn-trade_edgelist.csv``: header ``year,nation,trading nation,weight``; nations are strings (some with a comma,
    quoted), weights floats. ``tgbn-trade_node_labels.csv``: same header; for every year after the first, each
    nation's trade of that year normalised to sum 1 over partners. py-tgb's label vectors have ``len(node_ids)``
    entries (not ``DATA_NUM_CLASSES``), which is why ``n_nations`` defaults to 255. Every nation appears in the first
    year and every (year, nation, partner) at most once.
    """
    if name not in TGBN_NAMES:
        raise ValueError(f"write_tgbn supports {TGBN_NAMES}, not {name!r}")
    folder = _prepare(folder)
    rng = np.random.default_rng(seed)
    nations = _nation_names(rng, n_nations)
    years = 1986 + np.arange(n_years)
    per_year = np.full(n_years, n_edges // n_years)
    per_year[: n_edges - per_year.sum()] += 1
    if per_year[0] < (n_nations + 1) // 2:
        raise ValueError("too few edges for every nation to appear in the first year")
    rows: list[tuple[int, int, int, float]] = []
    for y, count in zip(years, per_year):
        pairs: set[tuple[int, int]] = set()
        order: list[tuple[int, int]] = []
        if y == years[0]:                                              # every nation appears once at least
            perm = rng.permutation(n_nations)
            for a in range(0, n_nations - 1, 2):
                pairs.add((int(perm[a]), int(perm[a + 1])))
                order.append((int(perm[a]), int(perm[a + 1])))
            if n_nations % 2:
                pairs.add((int(perm[-1]), int(perm[0])))
                order.append((int(perm[-1]), int(perm[0])))
        while len(order) < count:
            u = int(_skewed(rng, n_nations, 1, 0.6)[0])
            v = int(rng.integers(n_nations))
            if u != v and (u, v) not in pairs:
                pairs.add((u, v))
                order.append((u, v))
        perm = rng.permutation(len(order))
        for k in perm:
            u, v = order[k]
            rows.append((int(y), u, v, float(np.round(rng.lognormal(8.0, 2.0), 3))))
    year = np.array([r[0] for r in rows], dtype=np.int64)
    u_name = np.array([nations[r[1]] for r in rows], dtype=object)
    v_name = np.array([nations[r[2]] for r in rows], dtype=object)
    weight = np.array([r[3] for r in rows], dtype=np.float64)
    paths = {"edgelist": folder / edgelist_name(name), "node_labels": folder / node_labels_name(name)}
    header = ["year", "nation", "trading nation", "weight"]
    _write_csv(paths["edgelist"], header, ([int(a), b, c, repr(float(d))] for a, b, c, d in
                                           zip(year, u_name, v_name, weight)), newline)

    label_rows: list[tuple[int, str, str, float]] = []
    for y in years[1:]:
        sel = np.flatnonzero(year == y)
        totals: dict[str, float] = {}
        for k in sel:
            totals[u_name[k]] = totals.get(u_name[k], 0.0) + weight[k]
        for k in sel:
            label_rows.append((int(y), u_name[k], v_name[k], float(weight[k] / totals[u_name[k]])))
    _write_csv(paths["node_labels"], header, ([a, b, c, repr(d)] for a, b, c, d in label_rows), newline)
    truth = {"year": year, "nation": u_name, "trading_nation": v_name, "weight": weight,
             "label_year": np.array([r[0] for r in label_rows], dtype=np.int64),
             "label_nation": np.array([r[1] for r in label_rows], dtype=object),
             "label_trading_nation": np.array([r[2] for r in label_rows], dtype=object),
             "label_weight": np.array([r[3] for r in label_rows], dtype=np.float64),
             "num_classes": PYTGB_NUM_CLASSES[name], "seed": seed}
    return FormatFiles(name, folder, paths, truth)


# --- zip and unzip as the release and py-tgb do -----------------------------------------------------------------------

def zip_dataset(files: FormatFiles, out_dir: Path | str) -> Path:
    """``out_dir/<upstream zip name>``, flat (py-tgb extracts it into the dataset folder itself), byte-reproducible."""
    out_dir = _prepare(out_dir)
    target = out_dir / files.zip_name
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for role in sorted(files.files):
            path = files.files[role]
            info = zipfile.ZipInfo(path.name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
    return target


def unzip_like_pytgb(zip_path: Path | str, root: Path | str, name: str) -> Path:
    """What ``download()`` does after fetching: ``extractall(<root>/<dir_name>)``; returns that folder."""
    dest = Path(root) / dir_name(name)
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(dest)
    return dest


# --- py-tgb's own loader, pointed at a folder --------------------------------------------------------------------

def pytgb_root(dataset_folder: Path | str, name: str) -> tuple[str, dict | None]:
    """``(root, meta_dict)`` arguments that make py-tgb 2.3.0 use ``dataset_folder``.

    py-tgb builds ``PROJ_DIR + root`` by string concatenation (PROJ_DIR = ``.../site-packages/tgb/``), so ``root`` is
    the relative path from the package folder to the folder's parent; nothing is patched and nothing lands in the
    package. ``meta_dict`` names the folder when it is not the canonical ``<name with '_'>``.
    """
    from tgb.utils.info import PROJ_DIR

    folder = Path(os.path.realpath(dataset_folder))
    root = os.path.relpath(folder.parent, os.path.realpath(PROJ_DIR))
    if not os.path.samefile(PROJ_DIR + root, folder.parent):
        raise RuntimeError(f"cannot reach {folder.parent} from py-tgb's PROJ_DIR {PROJ_DIR}")
    return root, (None if folder.name == dir_name(name) else {"dir_name": folder.name})


class _NoRequests:
    def get(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("py-tgb tried to download during a test")


@contextlib.contextmanager
def _no_download() -> Iterator[None]:
    import tgb.linkproppred.dataset as link_mod
    import tgb.nodeproppred.dataset as node_mod

    saved = link_mod.requests, node_mod.requests
    link_mod.requests = node_mod.requests = _NoRequests()   # type: ignore[assignment]
    try:
        yield
    finally:
        link_mod.requests, node_mod.requests = saved


def load_with_pytgb(files: FormatFiles, kind: str | None = None, *, load_negatives: bool = True) -> Any:
    """py-tgb 2.3.0's ``LinkPropPredDataset`` / ``NodePropPredDataset`` on ``files.folder``, with ``download=False``
    (and its ``requests`` stubbed out meanwhile); for link data, the val and test negatives are loaded too.

    py-tgb writes its processed pickles (``ml_<name>*.pkl``) into the folder.
    """
    kind = kind or files.kind
    root, meta = pytgb_root(files.folder, files.name)
    with _no_download():
        if kind == "link":
            from tgb.linkproppred.dataset import LinkPropPredDataset

            dataset = LinkPropPredDataset(name=files.name, root=root, meta_dict=meta, preprocess=True,
                                          download=False)
            if load_negatives:
                dataset.load_val_ns()
                dataset.load_test_ns()
        elif kind == "node":
            from tgb.nodeproppred.dataset import NodePropPredDataset

            dataset = NodePropPredDataset(name=files.name, root=root, meta_dict=meta, preprocess=True,
                                          download=False)
        else:
            raise ValueError(f"kind is 'link' or 'node', not {kind!r}")
    return dataset


WRITERS = {"tgbl": write_tgbl, "tkgl": write_tkgl, "thgl": write_thgl, "tgbn": write_tgbn}
#: datasets whose layout is not their family's (py-tgb reads tgbl-flight with its own parser)
OWN_WRITERS = {"tgbl-flight": write_flight}


def write(folder: Path | str, name: str, **kwargs: Any) -> FormatFiles:
    """The writer for ``name``: its own layout's, else its family's."""
    return OWN_WRITERS.get(name, WRITERS[name.split("-")[0]])(folder, name=name, **kwargs)
