"""TGB 1.x link datasets (``tgbl-*``): a release zip converted to this project's files, as py-tgb 2.3.0 sees it.

What py-tgb's loader does to the files (docs/tgb.md; checked against py-tgb itself by
``tests/test_importing.py`` and ``tests/test_import_flight.py`` on files in TGB's exact formats), and what the
conversion therefore does:

- parser ``edgelist-wiki`` (tgbl-wiki, -subreddit, -uci, -enron, -lastfm): columns by position, ``src`` = column 0,
  ``dst`` = column 1 + max(src) + 1 (the graph is made bipartite: uci and enron too, where one person then has a
  sender id and a receiver id), ``t`` = column 2 cast to int (truncation, as ``astype(int)``), edge features =
  columns 4 onwards (float64, exactly as parsed); column 3 (the state label) is not read.
- parser ``stablecoin`` (tgbl-coin, tgbl-review) and ``reddit-comments`` (tgbl-comment): raw text ids renumbered in
  order of first appearance (source before destination, row by row), features as :func:`_stablecoin_rows` and
  :func:`_comments_rows` say, py-tgb's quirks included.
- parser ``opensky`` (tgbl-flight, py-tgb's ``csv_to_pd_data``): ``day, src, dst, callsign, typecode``; Unix-second
  timestamps (TGB's v2 release) as ``int(float(int(ts)))``; airport codes renumbered by first appearance; the 16
  edge features encode callsign and typecode character by character (see :func:`_opensky_rows`). A release with date
  strings, or a callsign longer than 8 characters (py-tgb itself fails on it), is refused.
- node features (tgbl-flight's ``airport_node_feat_v2.csv``, the catalogue's ``node_feat`` file): py-tgb's
  ``process_node_feat`` (:func:`parse_node_features`): one-hot airport type and continent, the encoded ISO region,
  longitude and latitude, 20 float64 values per node, zeros for an airport the file does not list.
- the split is py-tgb's: ``val_time, test_time = np.quantile(t, [0.70, 0.85])``, train ``t <= val_time``, val
  ``val_time < t <= test_time``, test ``t > test_time`` (ties go to the earlier split);
- the negatives: for every val/test edge ``(s, d, t)`` the array stored under that key (keys collapse duplicate
  edges, so duplicates share their negatives), converted to ``int32 [n, q]`` padded with -1 plus ``count`` (a
  ragged release, e.g. 998 negatives for a few queries of tgbl-wiki, keeps its exact counts).

Files: ``edges.parquet`` (``t`` int64 in the release's unit, ``src``/``dst`` int32 py-tgb ids, ``edge_id`` int64 =
the row's position in the release CSV, ``edge_feat`` a fixed-size list of float64, exactly as parsed); with node
features ``nodes.parquet`` (``node`` int32, every node id in order, ``node_feat`` a fixed-size list of float64: py-tgb's
``node_feat`` row by row; the manifest's ``graph.node_feat`` names the file and the layout of the vector); and
``negatives-val.parquet`` / ``negatives-test.parquet`` in the ranking task's layout (one query per edge of the split:
``t, src, dst``, ``negatives`` int32 ``[n, q]`` padded with -1, ``count``).

Rows are stored in time order; a release whose CSV is not (coin and flight were not before their v2) is sorted
stably and ``edge_id`` keeps each row's position in the CSV, the id py-tgb's ``edge_idxs`` counts from.

Every parser reads its CSV block by block (:data:`STREAMED`): each block's rows converted as the whole
table's would be, first-appearance ids numbered across blocks (:class:`~generators.tgb.release.BlockNumbering`),
then the columns joined one at a time, so neither the CSV's text nor Arrow's table of it is ever held whole; the
files are byte-identical to the whole-table reading (:data:`PARSERS`, ``tests/test_import_stream.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tgbhub.errors import GenerationError
from tgbhub.memory import give_back_memory

from ..manifests import parquet_record_set
from ..ranking import negatives_file, ranking_submission, write_negatives
from ..spill import Column, ColumnSink, DiskColumn, blocks, remove, rewrite, spilled
from .artifacts import Description, Info
from .catalogue import TgbEntry
from .negpickle import Bounds, ScannedNegatives, scan, too_large, too_many_entries, too_wide
from .negstream import stream_negatives
from .release import (
    EVERY_COLUMN,
    BlockNumbering,
    ProgressFactory,
    Release,
    Stage,
    WholeRead,
    columns_at_least,
    csv_blocks,
    integers,
    load_pickle,
    numbered,
    read_csv,
    silent,
)

SPLITS = ("train", "val", "test")
#: the edge columns of one conversion: all in memory, or (with a spill folder) on disk
ColumnT = TypeVar("ColumnT", np.ndarray, Column)
EDGES_FILE = "edges.parquet"
NODES_FILE = "nodes.parquet"
#: py-tgb's ``process_node_feat``: every node's vector has ``feat_size = 20`` values, and an ISO region is padded
#: with ``!`` to 7 characters before its characters are encoded
NODE_FEAT_DIM = 20
REGION_PAD = 7
#: which py-tgb parser reads each dataset's edge list (py-tgb dispatches on the name; we declare it as data)
DATASET_PARSERS = {**{name: "edgelist-wiki" for name in ("tgbl-wiki", "tgbl-subreddit", "tgbl-uci", "tgbl-enron",
                                                 "tgbl-lastfm")},
           "tgbl-coin": "stablecoin", "tgbl-review": "stablecoin", "tgbl-comment": "reddit-comments",
           "tgbl-flight": "opensky"}
#: the first ``edge_idxs`` py-tgb gives each parser's rows (``edge_id`` stores 0-based CSV positions)
EDGE_IDXS_START = {"edgelist-wiki": 0, "stablecoin": 1, "reddit-comments": 1, "opensky": 1}
#: a block reader: one CSV block's rows (columns by position, the member's name, the numbering shared by the
#: blocks, the block's first row in the CSV) in py-tgb's reading, ids through the numbering
BlockRows = Callable[[list[pa.Array], str, BlockNumbering, int], dict[str, np.ndarray]]


@contextmanager
def stage(progress: ProgressFactory, desc: str, total: float | None = 1, unit: str = "it") -> Iterator[Stage]:
    """Progress of one stage of an import (read, number, sort, negatives, write) through the factory the client
    handed in (:attr:`Release.progress <generators.tgb.release.Release>`; tgbhub's shows a bar on a terminal, a line
    for a stage that runs a while elsewhere, nothing under ``--quiet``); the caller counts its units with
    ``update``."""
    bar = progress(desc, total, unit)
    try:
        yield bar
    finally:
        bar.close()



def parse_edges(release: Release, files: Mapping[str, str], parser: str
                ) -> tuple[dict[str, Column], pa.Array | None]:
    """``t, src, dst, edge_id`` and ``edge_feat`` ``[E, d]`` of the edge list, in CSV order, py-tgb's ids and
    features (see :data:`PARSERS`), and the raw id of every node id (``None`` where py-tgb keeps the raw integers).

    Raises:
        GenerationError: for a parser this tgbhub does not implement yet, or a CSV that does not fit it.
    """
    reader = PARSERS.get(parser)
    if reader is None:
        raise GenerationError(f"importing TGB datasets read by py-tgb's {parser!r} parser is not implemented in this "
                              f"tgbhub yet (it imports tgbl datasets of the parsers {', '.join(PARSERS)}); upgrade "
                              "tgbhub")
    member = files["edgelist"]
    if parser in STREAMED:
        streamed = STREAMED[parser](release, member)
        if streamed is not None:
            return streamed
    edges, nodes = reader(read_csv(release.read(member), member, STRING_IDS.get(parser, ())), member)
    return dict(edges), nodes


def _numbers(column: pa.Array, member: str, what: str) -> np.ndarray:
    """A numeric CSV column as float64 (an empty field is NaN, as pandas reads it).

    Raises:
        GenerationError: if the column holds text.
    """
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_null(column.type)):
        raise GenerationError(f"{member}: {what} holds {column.type} values; py-tgb reads numbers there")
    return column.to_numpy(zero_copy_only=False).astype(np.float64)


def _wiki(columns: list[pa.Array], member: str) -> tuple[dict[str, np.ndarray], None]:
    """py-tgb's ``load_edgelist_wiki``: integer ids, items shifted by max(src) + 1, features from column 4 on."""
    edges = _wiki_rows(columns, member)
    edges["dst"] += int(edges["src"].max()) + 1
    return edges, None


def _wiki_streamed(release: Release, member: str) -> tuple[dict[str, Column], None] | None:
    """:func:`_wiki` over the CSV's blocks (:func:`_joined_blocks`), the items shifted by the largest source id of
    all blocks; ``None`` for a CSV without rows.

    Raises:
        GenerationError: as :func:`_wiki`, for the first block that does not fit py-tgb's layout.
    """
    joined = _joined_blocks(release, member, lambda columns, member, _, __: _wiki_rows(columns, member))
    if joined is None:
        return None
    edges, _ = joined
    shift = column_max(edges["src"]) + 1
    if isinstance(edges["dst"], DiskColumn):
        rewrite(edges["dst"], shift)
    else:
        edges["dst"] += shift
    return edges, None


def _numbered_streamed(parser: str) -> Callable[[Release, str], tuple[dict[str, Column], pa.Array | None] | None]:
    """The streamed parser of a first-appearance parser: its block reader (:data:`BLOCK_ROWS`) over the CSV's
    blocks, the raw ids numbered by :class:`BlockNumbering` (``None`` for a CSV without rows)."""
    def parse(release: Release, member: str) -> tuple[dict[str, Column], pa.Array | None] | None:
        return _joined_blocks(release, member, BLOCK_ROWS[parser], STRING_IDS.get(parser, ()))
    return parse


def _joined_blocks(release: Release, member: str, rows: BlockRows, strings: tuple[int, ...] = ()
                   ) -> tuple[dict[str, Column], pa.Array | None] | None:
    """``rows`` over the CSV's blocks (:func:`csv_blocks`), the raw ids numbered across blocks, the columns joined
    and ``edge_id`` counted over every row: the edges in CSV order and the numbering's dictionary (``None`` if
    ``rows`` numbers nothing); ``None`` if the CSV has no row (its whole reading then says what is wrong, or yields
    the empty edge list). The CSV's text and Arrow's table of it are never held whole; with the release's spill
    folder, neither are the columns: each block goes to disk once its ids are global
    (:attr:`BlockNumbering.settled <generators.tgb.release.BlockNumbering.settled>`).

    Raises:
        GenerationError: as ``rows``, for the first block that does not fit py-tgb's layout.
    """
    numbering = BlockNumbering()
    sink = ColumnSink(release.spill)
    waiting: list[dict[str, np.ndarray]] = []  # blocks whose ids a merge of the numbering will still rewrite
    first_row = 0
    with stage(release.progress, f"reading {member}", None, "rows") as bar:
        try:
            for columns in csv_blocks(release, member, strings):
                block = rows(columns, member, numbering, first_row)
                block["edge_id"] = np.arange(first_row, first_row + len(block["t"]), dtype=np.int64)
                first_row += len(block["t"])
                waiting.append(block)
                bar.update(len(block["t"]))
                if numbering.settled:
                    sink.extend(waiting)
                    waiting = []
        except WholeRead as whole:  # column types change after the first block: read as read_csv infers them
            numbering, waiting = BlockNumbering(), []
            sink.discard()
            block = rows(whole.columns, member, numbering, 0)
            block["edge_id"] = np.arange(len(block["t"]), dtype=np.int64)
            first_row = len(block["t"])
            waiting.append(block)
    if not first_row:
        return None
    with stage(release.progress, f"numbering the node ids of {member}") as bar:
        nodes = numbering.finish()  # before the join: it rewrites the waiting blocks' ids in place
        bar.update(1)
    sink.extend(waiting)
    return sink.finish(), nodes


def _wiki_rows(columns: list[pa.Array], member: str) -> dict[str, np.ndarray]:
    """py-tgb's reading of rows of the JODIE layout, items not yet shifted (the shift needs every row's src).

    Raises:
        GenerationError: if a column does not hold what py-tgb reads there.
    """
    columns_at_least(columns, 4, member, "src, dst, timestamp, state label and edge features")
    src = integers(columns[0], member, "column 0 (src)")
    dst = integers(columns[1], member, "column 1 (dst)")
    if not (pa.types.is_integer(columns[2].type) or pa.types.is_floating(columns[2].type)) or columns[2].null_count:
        raise GenerationError(f"{member}: column 2 (timestamp) holds {columns[2].type} values or empty fields; "
                              "py-tgb casts the timestamps to int, so they must be numbers")
    t = columns[2].to_numpy().astype(np.int64)  # py-tgb: timestamps.astype(int), truncating
    features = np.column_stack([_numbers(c, member, f"column {k + 4} (edge feature)")
                                for k, c in enumerate(columns[4:])]) if len(columns) > 4 else np.zeros((len(t), 0))
    return {"t": t, "src": src, "dst": dst, "edge_id": np.arange(len(t), dtype=np.int64), "edge_feat": features}


def _whole(rows: BlockRows) -> Callable[[list[pa.Array], str], tuple[dict[str, np.ndarray], pa.Array | None]]:
    """The whole-table parser of a parser's block reader: every row as one block, numbered by first appearance."""
    def parse(columns: list[pa.Array], member: str) -> tuple[dict[str, np.ndarray], pa.Array | None]:
        numbering = BlockNumbering()
        edges = rows(columns, member, numbering, 0)
        return edges, numbering.finish()
    parse.__doc__ = rows.__doc__
    return parse


def _stablecoin_rows(columns: list[pa.Array], member: str, numbering: BlockNumbering, first_row: int
                     ) -> dict[str, np.ndarray]:
    """py-tgb's ``csv_to_pd_data_sc`` (tgbl-coin, tgbl-review): ``time, src, dst, weight``; ids by first appearance;
    a weight of 0 becomes 1, then log2 (for review too: the same parser); the one edge feature is that log2 weight.

    Raises:
        GenerationError: if a column does not hold what py-tgb reads there.
    """
    columns_at_least(columns, 4, member, "time, src, dst, weight")
    src, dst = numbering.add(columns[1], columns[2])
    weight = _numbers(columns[3], member, "column 3 (weight)")
    weight = np.log2(np.where(weight == 0, 1.0, weight))
    t = integers(columns[0], member, "column 0 (time)")
    return {"t": t, "src": src, "dst": dst, "edge_id": np.arange(len(t), dtype=np.int64),
            "edge_feat": weight.reshape(-1, 1)}


def _comments_rows(columns: list[pa.Array], member: str, numbering: BlockNumbering, first_row: int
                   ) -> dict[str, np.ndarray]:
    """py-tgb's ``csv_to_pd_data_rc`` (tgbl-comment): ``ts, src, dst, num_words, score`` by position; ids by first
    appearance; features ``[num_words / 5000, num_words / 5000, score]``: py-tgb declares two feature columns but
    fills both with ``num_words / 5000`` (a 1-vector broadcast into 2), then appends the score as the weight.

    Raises:
        GenerationError: if a column does not hold what py-tgb reads there.
    """
    columns_at_least(columns, 5, member, "ts, src, dst, num_words, score")
    src, dst = numbering.add(columns[1], columns[2])
    words = integers(columns[3], member, "column 3 (num_words)") / 5000
    score = integers(columns[4], member, "column 4 (score)").astype(np.float64)
    t = integers(columns[0], member, "column 0 (ts)")
    return {"t": t, "src": src, "dst": dst, "edge_id": np.arange(len(t), dtype=np.int64),
            "edge_feat": np.column_stack([words, words, score])}


def _opensky_rows(columns: list[pa.Array], member: str, numbering: BlockNumbering, first_row: int
                  ) -> dict[str, np.ndarray]:
    """py-tgb's ``csv_to_pd_data`` (tgbl-flight): ``day, src, dst, callsign, typecode`` by position.

    - ``day``: py-tgb looks at the first value only (the block at ``first_row`` 0 holds it): all digits -> Unix
      timestamps, ``float(int(ts))`` (v2 release);
      otherwise ``datetime.strptime(ts, "%Y-%m-%d").timestamp()``, which reads the date in the machine's local time
      zone: not reproducible, so refused.
    - ``src``/``dst``: raw airport codes renumbered by first appearance; the weights are all 1 (not stored).
    - features: callsign padded with ``!`` to 8 characters (an empty one is ``!!!!!!!!``; a longer one makes py-tgb
      fail, since its row gets more than 16 values: refused), typecode padded to 8 (``!!!!!!!!`` when empty or longer
      than 8), concatenated, each character ``convert_str2int``-ed (:func:`_encode_characters`); float32 values (all
      small integers) stored as float64 ``[E, 16]``.

    Raises:
        GenerationError: for date-string timestamps, a callsign of more than 8 characters, or a malformed CSV.
    """
    columns_at_least(columns, 5, member, "day, src, dst, callsign, typecode")
    days, callsign, typecode = columns[0], columns[3], columns[4]
    if first_row == 0 and len(days) and not str(days[0].as_py()).isdigit():
        raise GenerationError(
            f"{member}: the timestamps are date strings ({days[0].as_py()!r}), not Unix seconds; py-tgb converts them "
            "with datetime.strptime(ts, '%Y-%m-%d').timestamp(), i.e. in the local time zone of the machine that "
            "loads them, which is not reproducible. TGB's v2 release of tgbl-flight ships Unix timestamps: import "
            "that release")
    try:
        t = pc.cast(days, pa.int64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise GenerationError(f"{member}: column 0 (day) holds a value that is not an integer ({exc})") from exc
    t = t.astype(np.float64).astype(np.int64)  # py-tgb: float(int(ts)) into a float64 column
    src, dst = numbering.add(columns[1], columns[2])
    too_long = np.flatnonzero(pc.greater(pc.utf8_length(callsign), 8).to_numpy(zero_copy_only=False))
    if len(too_long):
        row = first_row + int(too_long[0])
        raise GenerationError(
            f"{member}: row {row} (line {row + 2}) has the callsign {callsign[int(too_long[0])].as_py()!r} of "
            f"more than 8 characters ({len(too_long)} such rows among rows {first_row} to "
            f"{first_row + len(callsign) - 1}); py-tgb's csv_to_pd_data fails on it (the row encodes to more "
            "than 16 features), so this is not a release py-tgb can load")
    typecode = pc.if_else(pc.greater(pc.utf8_length(typecode), 8), "!!!!!!!!", typecode)
    joined = pc.binary_join_element_wise(pc.utf8_rpad(callsign, width=8, padding="!"),
                                         pc.utf8_rpad(typecode, width=8, padding="!"),
                                         pa.scalar("", type=callsign.type))
    return {"t": t, "src": src, "dst": dst, "edge_id": np.arange(len(t), dtype=np.int64),
            "edge_feat": _encode_characters(joined, member, 16)}


def _encode_characters(strings: pa.Array, member: str, width: int) -> np.ndarray:
    """py-tgb's ``convert_str2int`` of strings of ``width`` characters each, as float64 ``[n, width]``: a digit ->
    its value, ``!`` -> -1, anything else -> ``ord(c.upper()) - 44 + 9``, as float32."""
    n = len(strings)
    if n == 0:
        return np.zeros((0, width))
    if bool(pc.all(pc.string_is_ascii(strings)).as_py()):
        binary = strings.cast(pa.large_binary())  # every string is `width` ASCII bytes: one contiguous block
        offsets = np.frombuffer(binary.buffers()[1], dtype=np.int64)[binary.offset:binary.offset + n + 1]
        data = np.frombuffer(binary.buffers()[2], dtype=np.uint8)
        codes = data[offsets[0]:offsets[-1]].reshape(n, width).astype(np.int64)
    else:
        codes = np.asarray(strings.to_numpy(zero_copy_only=False).astype(f"U{width}")).view(np.uint32)
        codes = codes.reshape(n, width).astype(np.int64)
    values = np.where((codes >= ord("a")) & (codes <= ord("z")), codes - 32, codes) - 44 + 9
    values = np.where((codes >= ord("0")) & (codes <= ord("9")), codes - ord("0"), values)
    values = np.where(codes == ord("!"), -1, values)
    for code in np.unique(codes[codes > 127]).tolist():  # py-tgb's rules, character by character
        char = chr(code)
        try:
            value = float(char) if char.isnumeric() else float(ord(char.upper()) - 44 + 9)
        except (TypeError, ValueError) as exc:
            raise GenerationError(f"{member}: py-tgb cannot encode the character {char!r} ({exc})") from exc
        values[codes == code] = value
    return values.astype(np.float32).astype(np.float64)


#: py-tgb's parser of each tgbl edge list, by the name this project gives it (the catalogue's datasets map to them
#: in :data:`DATASET_PARSERS`)
#: the block readers of the parsers that number raw ids by first appearance (``(columns, member, numbering,
#: first_row)``: one block's rows, their ids through the numbering, ``first_row`` the block's first row in the CSV)
BLOCK_ROWS: dict[str, BlockRows] = {"stablecoin": _stablecoin_rows, "reddit-comments": _comments_rows,
                                    "opensky": _opensky_rows}
PARSERS = {"edgelist-wiki": _wiki, **{parser: _whole(rows) for parser, rows in BLOCK_ROWS.items()}}
#: the parsers that read the CSV block by block (:func:`parse_edges` reads a CSV whole with :data:`PARSERS` where
#: a parser is missing here: the reference the streamed reading is tested against)
STREAMED: dict[str, Callable[[Release, str], tuple[dict[str, Column], pa.Array | None] | None]] = {
    "edgelist-wiki": _wiki_streamed, **{parser: _numbered_streamed(parser) for parser in BLOCK_ROWS}}
#: the columns each parser reads as text (py-tgb maps the strings, not numbers: raw ids, and flight's day, callsign
#: and typecode, whose first value decides the timestamp format and whose characters are encoded)
STRING_IDS = {"stablecoin": (1, 2), "reddit-comments": (1, 2), "opensky": (0, 1, 2, 3, 4)}


def parse_node_features(release: Release, member: str, nodes: pa.Array | None
                        ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """py-tgb's ``process_node_feat`` (tgbl-flight's airport file: ``airport_code, type, continent, iso_region,
    longitude, latitude``, by position, every field as text): ``node`` (int32, every node id) and ``node_feat``
    (float64 ``[N, 20]``), and what the manifest says of them (``layout``, ``nodes_without_features``).

    py-tgb skips the rows whose airport no edge has, numbers the types and the continents of the other rows by
    first appearance, and gives each row ``[one-hot type, one-hot continent, convert_str2int(iso_region padded with
    '!' to 7), float(longitude), float(latitude)]`` (the docstring's scaling by 180 and 90 is not in the code); an
    airport listed twice keeps its last row, one not listed keeps zeros.

    Raises:
        GenerationError: if the edge list's parser keeps no raw ids to match the codes against, a row's vector is
            not py-tgb's 20 values wide (py-tgb fails on it), or a coordinate is not a number.
    """
    if nodes is None:
        raise GenerationError(f"{member}: py-tgb matches its airport codes against the raw ids of the edge list, "
                              "which this dataset's parser does not keep; is it another dataset's file?")
    columns = read_csv(release.read(member), member, strings=EVERY_COLUMN)
    columns_at_least(columns, 6, member, "airport_code, type, continent, iso_region, longitude, latitude")
    rows = np.flatnonzero(pc.is_in(columns[0], value_set=nodes).to_numpy(zero_copy_only=False))
    code, kind, continent, region, longitude, latitude = (column.take(pa.array(rows)) for column in columns[:6])
    kinds, kind_names = numbered(kind)
    continents, continent_names = numbered(continent)
    region = pc.utf8_rpad(region, width=REGION_PAD, padding="!")
    width = NODE_FEAT_DIM - len(kind_names) - len(continent_names) - 2
    wrong = np.flatnonzero(pc.utf8_length(region).to_numpy(zero_copy_only=False) != width)
    if len(wrong):
        row, size = int(rows[wrong[0]]), len(region[int(wrong[0])].as_py())
        raise GenerationError(
            f"{member}: row {row} (line {row + 2}) encodes to {len(kind_names)} types + {len(continent_names)} "
            f"continents + {size} region characters + 2 coordinates = {size + NODE_FEAT_DIM - width} values, not "
            f"py-tgb's {NODE_FEAT_DIM} ({len(wrong)} such rows); py-tgb's process_node_feat fails on it, so this is "
            "not a release py-tgb can load")
    features = np.zeros((len(rows), NODE_FEAT_DIM))
    features[np.arange(len(rows)), kinds] = 1.0
    features[np.arange(len(rows)), len(kind_names) + continents] = 1.0
    features[:, NODE_FEAT_DIM - 2 - width:NODE_FEAT_DIM - 2] = _encode_characters(region, member, width)
    features[:, -2] = _coordinates(longitude, member, "column 4 (longitude)")
    features[:, -1] = _coordinates(latitude, member, "column 5 (latitude)")
    node = pc.index_in(code, value_set=nodes).to_numpy().astype(np.int64)
    _, from_end = np.unique(node[::-1], return_index=True)
    last = len(node) - 1 - from_end  # an airport listed twice keeps its last row, as py-tgb's loop assigns
    node_feat = np.zeros((len(nodes), NODE_FEAT_DIM))
    node_feat[node[last]] = features[last]
    layout = {"type": {"columns": [0, len(kind_names)], "one_hot": kind_names.to_pylist()},
              "continent": {"columns": [len(kind_names), NODE_FEAT_DIM - 2 - width],
                            "one_hot": continent_names.to_pylist()},
              "iso_region": {"columns": [NODE_FEAT_DIM - 2 - width, NODE_FEAT_DIM - 2],
                             "encoding": "py-tgb's convert_str2int of the region padded with '!' to 7 characters"},
              "longitude": {"columns": [NODE_FEAT_DIM - 2, NODE_FEAT_DIM - 1]},
              "latitude": {"columns": [NODE_FEAT_DIM - 1, NODE_FEAT_DIM]}}
    return ({"node": np.arange(len(nodes), dtype=np.int32), "node_feat": node_feat},
            {"layout": layout, "nodes_without_features": int(len(nodes) - len(last))})


def _coordinates(column: pa.Array, member: str, what: str) -> np.ndarray:
    """``float(text)`` of every field, as py-tgb parses a coordinate.

    Raises:
        GenerationError: naming the column, if a field is not a number.
    """
    try:
        return pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise GenerationError(f"{member}: {what} holds a value py-tgb's float() cannot parse ({exc}); is it the "
                              "release TGB published?") from exc


def time_order(edges: dict[str, ColumnT], spill: Path | None = None) -> tuple[dict[str, ColumnT], int]:
    """The edges sorted stably by ``t`` and how many rows moved (0 for a time-ordered release).

    ``edges`` is sorted in place, column by column, each column's unsorted copy dropped as its sorted one is made
    (the whole table is never held twice); the same dict is returned. A time-ordered release is only read, a block
    at a time; columns on disk that must move are sorted in memory a column at a time and written back to ``spill``
    (TGB's v2 releases are time-ordered: only older ones pay that).
    """
    t = edges["t"]
    if _time_ordered(t):
        return edges, 0
    order = np.argsort(t[0:len(t)], kind="stable")
    moved = len(t) - int(np.count_nonzero(order == np.arange(len(t))))
    del t
    for name in list(edges):
        column = edges[name]
        edges[name] = cast(ColumnT, spilled(column[0:len(column)][order],
                                            spill if isinstance(column, DiskColumn) else None, name))
        if isinstance(column, DiskColumn):
            remove([column])
    return edges, moved


def _time_ordered(t: Column) -> bool:
    """Whether ``t`` never decreases (read a block at a time)."""
    last = None
    for block in blocks(t):
        if not bool(np.all(block[1:] >= block[:-1])) or (last is not None and block[0] < last):
            return False
        last = block[-1]
    return True


def column_max(column: Column) -> int:
    """The largest value of a non-empty integer column (read a block at a time)."""
    return max(int(block.max()) for block in blocks(column))


def split_rows(t: Column, val: float, test: float) -> dict[str, tuple[int, int]]:
    """Row ranges of py-tgb's quantile split of time-sorted ``t`` (ties to the earlier split)."""
    val_time, test_time = sorted_quantiles(t, [1 - val - test, 1 - test])
    first_val = _at_most(t, val_time)
    first_test = _at_most(t, test_time)
    return {"train": (0, first_val), "val": (first_val, first_test), "test": (first_test, len(t))}


def sorted_quantiles(t: Column, quantiles: list[float]) -> list[float]:
    """``np.quantile(t, quantiles)`` (its default linear method) of a sorted, non-empty integer column, reading only
    the values it interpolates between, computed with numpy's own operations in numpy's order so the floats are
    the same to the bit (``tests/test_import_stream.py`` checks it against ``np.quantile``)."""
    n = len(t)
    virtual = (n - 1) * np.asarray(quantiles, dtype=np.float64)
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = following[above] = n - 1
    low = np.concatenate([t[int(i):int(i) + 1] for i in previous])
    high = np.concatenate([t[int(i):int(i) + 1] for i in following])
    gamma = virtual - np.where(above, -1.0, previous)  # numpy's gamma counts from index -1 above the bounds
    difference = high - low
    values = np.add(low, difference * gamma)
    np.subtract(high, difference * (1 - gamma), out=values, where=gamma >= 0.5, casting="unsafe")
    return [float(value) for value in values]


def _at_most(t: Column, value: float) -> int:
    """How many values of sorted ``t`` are at most ``value`` (``np.searchsorted(t, value, "right")``)."""
    count = 0
    for block in blocks(t):
        if block[-1] <= value:
            count += len(block)
            continue
        return count + int(np.searchsorted(block, value, side="right"))
    return count


def convert_negatives(table: dict[Any, Any] | ScannedNegatives, t: np.ndarray, src: np.ndarray, dst: np.ndarray,
                      member: str) -> dict[str, np.ndarray]:
    """One query per edge: the negatives stored under its ``(src, dst, t)`` key, as ``int32 [n, q]`` + ``count``.

    ``table`` is TGB's pickle as :func:`~generators.tgb.negpickle.scan` read it (keys, values, width), or the
    unpickled dict where the scan fell back; a dict is emptied on the way: its entries are taken out in blocks of
    :data:`NEGATIVE_BLOCK` and each block dropped once stacked into the matrix, so TGB's dict shrinks as the matrix
    fills and the two are never both whole. Edges find their entry by a sort of the keys (vectorised), not a dict
    lookup per edge; edges that share a key (duplicate events) share its row. A key the scan read twice gives its
    last entry, as the dict the pickle builds keeps the last value.

    Raises:
        GenerationError: if an edge has no entry, a key is not three finite numbers within int64, or an entry holds
            something other than node ids within int32.
    """
    if isinstance(table, dict):
        rows = _key_rows(_keys(table, member), src, dst, t, member)
        by_key, width = _stacked_values(table, member)
    else:
        rows = _key_rows(table.keys, src, dst, t, member)
        by_key, width = table.values, table.width
    count = width[rows]
    bad = np.flatnonzero(count < 0)  # entries holding something else than node ids
    if len(bad):
        raise GenerationError(f"{member}: the negatives of row {int(bad[0])} are not integer node ids")
    matrix = by_key[rows, :int(count.max()) if len(count) else 0]  # as wide as the longest entry an edge uses
    count = count.astype(np.int32)
    return {"t": t, "src": src.astype(np.int32), "dst": dst.astype(np.int32), "negatives": matrix, "count": count}


#: entries of TGB's negatives dict taken out and stacked at a time (:func:`convert_negatives`)
NEGATIVE_BLOCK = 1 << 16
_KEY = np.dtype([("t", np.int64), ("src", np.int64), ("dst", np.int64)])


def _keys(table: dict[Any, Any], member: str) -> np.ndarray:
    """The dict's keys as ``int64 [k, 3]`` in its order; a key with a fraction becomes ``(-1, -1, -1)``, which no
    edge has (a dict lookup would not find it either: ``36.5`` is no edge's time), as the scan reads it.

    Raises:
        GenerationError: if a key is not a triple of integers or floats (numpy's or Python's; not bools, complex,
            datetimes), or a part is not finite or lies beyond int64.
    """
    odd = next((key for key in table if type(key) is not tuple or len(key) != 3), None)
    if odd is not None:
        raise GenerationError(f"{member}: the negatives dict has the key {odd!r:.80}, not a (src, dst, t) triple; "
                              "is it TGB's pickle?")
    kinds = {type(part) for part in chain.from_iterable(table)}
    foreign = sorted(kind.__name__ for kind in kinds if issubclass(kind, (bool, np.bool_)) or not issubclass(
        kind, (int, float, np.integer, np.floating)))
    if foreign:
        raise GenerationError(f"{member}: a key of the negatives dict holds a {foreign[0]}, not an integer node id "
                              "or time; is it TGB's pickle?")
    count = 3 * len(table)
    fraction = np.zeros(len(table), dtype=bool)
    if any(issubclass(kind, (float, np.floating)) for kind in kinds):
        exact = np.fromiter(chain.from_iterable(table), dtype=np.float64, count=count).reshape(-1, 3)
        if not np.isfinite(exact).all():
            raise GenerationError(f"{member}: a key of the negatives dict holds "
                                  f"{exact[~np.isfinite(exact)][0]}, not a node id or time; is it TGB's pickle?")
        fraction = (exact != np.trunc(exact)).any(axis=1)
    try:
        keys = np.fromiter(chain.from_iterable(table), dtype=np.int64, count=count).reshape(-1, 3)
    except (OverflowError, ValueError) as exc:
        raise GenerationError(f"{member}: a key of the negatives dict lies beyond int64 ({exc}); no edge has it: is "
                              "it TGB's pickle?") from exc
    keys[fraction] = -1  # fromiter truncated the fraction
    return keys


def _key_rows(keys: np.ndarray, src: np.ndarray, dst: np.ndarray, t: np.ndarray, member: str) -> np.ndarray:
    """For each edge, the position of its ``(src, dst, t)`` among ``keys`` (``[k, 3]``, the dict's order; the last
    of a key that appears twice).

    Raises:
        GenerationError: naming the first edge with no key.
    """
    table = np.empty(len(keys), dtype=_KEY)
    table["src"], table["dst"], table["t"] = keys[:, 0], keys[:, 1], keys[:, 2]
    order = np.argsort(table, order=("t", "src", "dst"), kind="stable")
    ordered = table[order]
    wanted = np.empty(len(t), dtype=_KEY)
    wanted["t"], wanted["src"], wanted["dst"] = t, src, dst
    # the last of equal keys (a sort keeps their order): the value a dict keeps for a key given twice
    at = np.maximum(np.searchsorted(ordered, wanted, side="right") - 1, 0)
    missing = np.flatnonzero(ordered[at] != wanted) if len(ordered) else np.arange(len(t))
    if len(missing):
        row = int(missing[0])
        raise GenerationError(f"{member} has no negatives for the edge (src={int(src[row])}, dst={int(dst[row])}, "
                              f"t={int(t[row])}); py-tgb's query_batch would raise too: the pickle does not belong "
                              "to this edge list")
    return order[at]


def _stacked_values(table: dict[Any, Any], member: str) -> tuple[np.ndarray, np.ndarray]:
    """The dict's values in its order as one ``int32 [k, q]`` matrix (-1 after a shorter entry) and each entry's
    length (-1 for an entry that is not integer node ids), taking the entries out block by block.

    Raises:
        GenerationError: if an entry is not a flat list or array of numbers.
    """
    size = len(table)
    width = np.empty(size, dtype=np.int64)
    blocks: list[tuple[int, np.ndarray]] = []
    values = list(table.values())
    table.clear()  # the values live on in the list only, each block of them dropped once stacked (from the end)
    while values:
        start = max(0, len(values) - NEGATIVE_BLOCK)
        try:
            block = [np.asarray(value) for value in values[start:]]
        except (TypeError, ValueError) as exc:  # a ragged list of lists, say
            raise GenerationError(f"{member}: an entry of the negatives dict is not a flat list of numbers ({exc}); "
                                  "is it TGB's release of this dataset?") from exc
        del values[start:]
        width[start:start + len(block)] = [len(value) if value.ndim == 1 else -1 for value in block]
        blocks.append((start, _stacked_block(block, width[start:start + len(block)], member)))
        del block
    q = max((b.shape[1] for _, b in blocks), default=0)
    matrix = np.full((size, q), -1, dtype=np.int32)
    while blocks:
        start, stacked = blocks.pop()
        matrix[start:start + len(stacked), :stacked.shape[1]] = stacked
    return matrix, width


#: the node ids a negatives matrix holds (``int32``)
_ID_MIN, _ID_MAX = -(1 << 31), (1 << 31) - 1


def _stacked_block(block: list[np.ndarray], width: np.ndarray, member: str) -> np.ndarray:
    """One block of entries as ``int32 [len, q]``; ``width`` set to -1 where an entry is not integer node ids.

    Raises:
        GenerationError: for an entry that is not flat, holds values that are not integers or floats (bools,
            complex, datetimes, void, objects), or a whole value beyond int32 (infinity included).
    """
    if np.any(width < 0):
        shape = next(value.shape for value in block if value.ndim != 1)
        raise GenerationError(f"{member}: an entry of the negatives dict holds an array of shape {shape}, not a flat "
                              "list of node ids as TGB's pickles do; is it TGB's release of this dataset?")
    odd = next((value.dtype for value in block if value.dtype.kind not in "iuf"), None)
    if odd is not None:
        raise GenerationError(f"{member}: the negatives hold {odd} values, not integer node ids as TGB's "
                              "pickles do; is it TGB's release of this dataset?")
    for value in block:  # checked before any cast: numpy would wrap a uint64 or a float beyond int32 silently
        whole = value if value.dtype.kind in "iu" else value[value == np.floor(value)]
        if whole.size and (whole.min() < _ID_MIN or whole.max() > _ID_MAX):
            beyond = whole[(whole < _ID_MIN) | (whole > _ID_MAX)][0]
            raise GenerationError(f"{member}: the negatives hold the value {beyond}, beyond the int32 node ids "
                                  "they are stored as; is it TGB's release of this dataset?")
    q = int(width.max()) if len(width) else 0
    if len(width) and int(width.min()) == q:
        values = np.stack(block) if q else np.empty((len(block), 0))
    else:
        values = np.full((len(block), q), -1, dtype=np.float64 if any(v.dtype.kind == "f" for v in block)
                         else np.int64)
        for row, value in enumerate(block):
            values[row, :len(value)] = value
    if values.dtype.kind == "f":
        whole = values == np.floor(values)
        for partial in np.flatnonzero(~whole.all(axis=1)):  # a row holding a non-integer value
            width[partial] = -1
        values = np.where(whole, values, -1)
    return values.astype(np.int32)


def measured_stats(edges: Mapping[str, Column], splits: Mapping[str, tuple[int, int]]) -> dict[str, Any]:
    """The statistics the catalogue publishes, measured on the converted edges (py-tgb's counting)."""
    return {"num_nodes": distinct_count(edges["src"], edges["dst"]), "num_edges": int(len(edges["t"])),
            "num_timestamps": distinct_count(edges["t"]), "edge_feat_dim": int(edges["edge_feat"].shape[1]),
            "split_edges": {name: int(hi - lo) for name, (lo, hi) in splits.items()}}


def distinct_count(*columns: Column) -> int:
    """How many distinct values the integer columns hold together (``len(np.union1d(...))``'s answer), read a
    block at a time: a pass over sorted values, a bitmap over small non-negative ids, else the distinct values of
    each block merged (memory bounded by the distinct values, not the rows)."""
    if not any(len(column) for column in columns):
        return 0
    if len(columns) == 1 and _time_ordered(columns[0]):
        return _runs(columns[0])
    low = min(_column_min(column) for column in columns if len(column))
    high = max(column_max(column) for column in columns if len(column))
    if low >= 0 and high < 8 * sum(len(column) for column in columns) + (1 << 20):
        seen = np.zeros(high + 1, dtype=bool)
        for column in columns:
            for block in blocks(column):
                seen[block] = True
        return int(np.count_nonzero(seen))
    distinct = np.empty(0, dtype=np.int64)
    for column in columns:
        for block in blocks(column):
            distinct = np.union1d(distinct, block)
    return int(len(distinct))


def _runs(column: Column) -> int:
    """How many runs of equal values a sorted column holds."""
    runs, last = 0, None
    for block in blocks(column):
        runs += int(np.count_nonzero(block[1:] != block[:-1])) + int(last is None or block[0] != last)
        last = block[-1]
    return runs


def _column_min(column: Column) -> int:
    return min(int(block.min()) for block in blocks(column))


def convert(entry: TgbEntry, release: Release) -> tuple[dict[str, dict[str, Column]], Info]:
    """The dataset's files (name -> columns) from an opened release, and what was measured on the way (``splits``,
    ``measured``, ``num_nodes``, ``reordered_rows``, ``parser``, and ``node_feat`` where the release has node
    features). With the release's spill folder the large columns are :class:`~generators.spill.DiskColumn`
    files in it, and nothing held in memory grows with the rows of a time-ordered release.

    Raises:
        GenerationError: for a dataset family or parser this tgbhub cannot import yet, or a release that does not
            fit py-tgb's layout (naming the file and the problem).
    """
    parser = DATASET_PARSERS.get(entry.name, "unknown")
    edges, nodes = parse_edges(release, entry.files, parser)
    with stage(release.progress, f"sorting the edges of {entry.name} by time") as bar:
        edges, reordered = time_order(edges, release.spill)
        bar.update(1)
    give_back_memory()  # the CSV reader's blocks: the next stages need the room
    splits = split_rows(edges["t"], float(entry.split["val"]), float(entry.split["test"]))
    files: dict[str, dict[str, Column]] = {EDGES_FILE: {
        "t": edges["t"], "src": edges["src"].astype(np.int32), "dst": edges["dst"].astype(np.int32),
        "edge_id": edges["edge_id"], "edge_feat": edges["edge_feat"]}}
    info: Info = {"splits": splits, "reordered_rows": reordered, "parser": parser,
                  "measured": measured_stats(edges, splits),
                  "num_nodes": max(column_max(edges["src"]), column_max(edges["dst"])) + 1 if len(edges["t"]) else 0}
    if "node_feat" in entry.files:  # the catalogue lists the file for the datasets py-tgb reads node features of
        node_file, info["node_feat"] = parse_node_features(release, entry.files["node_feat"], nodes)
        files[NODES_FILE] = dict(node_file)
        info["measured"].update(node_feat_dim=NODE_FEAT_DIM,
                                nodes_without_features=info["node_feat"]["nodes_without_features"])
    edges_file = files[EDGES_FILE]
    edges.clear()  # in memory, its int64 endpoints (16 B an edge) go: the file's int32 copies key the negatives
    with stage(release.progress, f"converting the negatives of {entry.name}", len(SPLITS) - 1, "splits") as bar:
        for split in SPLITS[1:]:  # one split's pickle at a time, read from the zip as a stream (never its bytes)
            lo, hi = splits[split]
            files[negatives_file(split)] = split_negatives(
                release, entry.files[f"{split}_ns"], negative_bounds(entry, hi - lo, info["num_nodes"]),
                *(_rows(edges_file[name], lo, hi) for name in ("t", "src", "dst")))
            give_back_memory()
            bar.set_postfix_str(split)
            bar.update(1)
    return files, info


def split_negatives(release: Release, member: str, bounds: Bounds, t: Column, src: Column, dst: Column
                    ) -> dict[str, Column]:
    """One split's negatives file (:func:`convert_negatives`' columns) from TGB's pickle ``member``: with the
    release's spill folder, streamed into it where the pickle's entries come in the edges' order (TGB's releases;
    :func:`~generators.tgb.negstream.stream_negatives`), else converted whole in memory.

    Raises:
        GenerationError: as :func:`read_negatives` and :func:`convert_negatives`.
    """
    if release.spill is not None:
        streamed = stream_negatives(release, member, bounds, t, src, dst, release.spill)
        if streamed is not None:
            return streamed
    table = read_negatives(release, member, bounds)
    return dict(convert_negatives(table, t[0:len(t)], src[0:len(src)], dst[0:len(dst)], member))


def _rows(column: Column, lo: int, hi: int) -> Column:
    """Rows ``lo:hi`` of a column, without reading them."""
    return column.view(lo, hi) if isinstance(column, DiskColumn) else column[lo:hi]


def negative_bounds(entry: TgbEntry, rows: int, num_nodes: int) -> Bounds:
    """What the negatives pickle of a split of ``rows`` edges may hold: at most one entry per edge, each of at most
    the catalogue's ``q`` negatives, and never more than the ``num_nodes`` node ids (a query's negatives are
    distinct nodes: tgbl-wiki's q = 12000 gives at most 998); without a ``q`` in the catalogue, the node count
    alone."""
    if entry.q is None:
        return Bounds(rows, max(num_nodes, 1), f"the {num_nodes:,} node ids of the edge list; the catalogue has no "
                                               f"q for {entry.name}")
    if num_nodes < entry.q:
        return Bounds(rows, max(num_nodes, 1), f"the {num_nodes:,} node ids of the edge list, fewer than the "
                                               f"catalogue's q = {entry.q:,} for {entry.name}")
    return Bounds(rows, entry.q, f"the catalogue's q for {entry.name}")


def read_negatives(release: Release, member: str, bounds: Bounds | None = None
                   ) -> ScannedNegatives | dict[Any, Any]:
    """TGB's negatives pickle ``member`` as arrays (:func:`~generators.tgb.negpickle.scan`, a progress stage in
    bytes), or, where it is not the pattern py-tgb's ``pickle.dump`` writes, the dict :func:`load_pickle` unpickles
    from a second read of the member: which one came back says which path was taken. ``bounds`` (the split's, from
    :func:`negative_bounds`) limit what either may allocate: the member's size is checked before anything is read,
    the entries and their widths before they are stacked.

    Raises:
        GenerationError: as :func:`load_pickle`, for a pickle the scan leaves to it, and for a pickle larger than
            ``bounds`` allow, with more entries than its split has edges, or an entry wider than the bound.
    """
    size = release.size(member)
    if bounds is not None and size > bounds.stream_bytes:
        raise too_large(member, size, bounds)
    with stage(release.progress, f"scanning TGB's negatives pickle {member}", size, "B") as bar:
        with release.open(member) as stream:
            scanned = scan(stream, read=bar.update, bounds=bounds, size=size)
    if scanned is not None:
        return scanned
    with release.open(member) as stream:
        table = load_pickle(stream, member, bounds, size)
    if bounds is not None:
        _check_bounds(table, member, bounds)
    return table


def _check_bounds(table: dict[Any, Any], member: str, bounds: Bounds) -> None:
    """Raises GenerationError if the unpickled dict has more entries or a wider entry than ``bounds`` allow (before
    :func:`convert_negatives` allocates its matrix, entries times the widest)."""
    if len(table) > bounds.entries:
        raise too_many_entries(member, len(table), bounds)
    for value in table.values():
        size = value.size if isinstance(value, np.ndarray) else len(value) if hasattr(value, "__len__") else 1
        if size > bounds.width:
            raise too_wide(member, size, bounds)


def write(files: Mapping[str, Mapping[str, np.ndarray]], folder: Path,
          progress: ProgressFactory | None = None) -> dict[str, Path]:
    """Write the files into ``folder`` (zstd Parquet, no timestamps: byte-stable): negatives in the ranking
    layout, every other file by :func:`write_parquet`; a file at a time through ``progress`` (silent if None)."""
    folder.mkdir(parents=True, exist_ok=True)
    with stage(progress or silent, "writing the imported files", len(files), "files") as bar:
        for name, columns in files.items():
            if name.startswith("negatives-"):
                write_negatives(columns, folder / name)
            else:
                write_parquet(columns, folder / name)
            give_back_memory()
            bar.set_postfix_str(name)
            bar.update(1)
    return {name: folder / name for name in files}


#: rows per Parquet row group of every file :func:`write_parquet` writes (the files' bytes depend on it: a change
#: changes every imported file's sha256, so it is the importer's version's business)
ROW_GROUP_ROWS = 1 << 20


def write_parquet(columns: Mapping[str, np.ndarray], path: Path) -> None:
    """One Parquet column per array, in order (a 2-D array as a fixed-size list), zstd, no timestamps in the file,
    so the bytes are stable (every TGB family's files but the ranking negatives). Written row group by row group
    (:data:`ROW_GROUP_ROWS` rows each), each group's rows handed to Arrow as it is written (a view of the arrays,
    not a copy, where they are contiguous): the same bytes as one ``write_table`` of the whole table."""
    rows = len(next(iter(columns.values()))) if columns else 0
    first = _arrow_rows(columns, 0, min(rows, ROW_GROUP_ROWS))
    with pq.ParquetWriter(path, first.schema, compression="zstd", write_statistics=True) as writer:
        writer.write_table(first, row_group_size=ROW_GROUP_ROWS)  # an empty file still holds its one empty group
        del first
        for start in range(ROW_GROUP_ROWS, rows, ROW_GROUP_ROWS):
            give_back_memory()  # else each row group's transient blocks stay resident beside the next one's
            writer.write_table(_arrow_rows(columns, start, start + ROW_GROUP_ROWS), row_group_size=ROW_GROUP_ROWS)


def _arrow_rows(columns: Mapping[str, np.ndarray], start: int, stop: int) -> pa.Table:
    """Rows ``start:stop`` of the columns as an Arrow table (a 2-D array as a fixed-size list)."""
    arrays = []
    for values in columns.values():
        matrix = np.ascontiguousarray(values[start:stop])
        arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])
                      if matrix.ndim == 2 else pa.array(matrix))
    return pa.Table.from_arrays(arrays, names=list(columns))


def _ranking_task(entry: TgbEntry, splits: list[str]) -> dict[str, Any]:
    return {
        "name": "ranking", "type": "one-vs-many-ranking", "report_split": "test",
        "query": "one per edge of the split, in stored order: rank dst among the query's negatives as destinations "
                 "of src at t (TGB's one-vs-many link prediction)",
        "history": "every edge before the query's time (train, val and earlier test edges), as TGB's examples use",
        "negatives": {"strategy": f"TGB's published {entry.ns_strategy} negatives (py-tgb {entry.name}), converted: "
                                  f"q={entry.q} in the generation script, seed {entry.ns_seed}, historical share "
                                  f"{entry.hist_ratio}",
                      "padding": "-1 after the first count[i] entries (a ragged release keeps its exact counts)",
                      "files": {split: negatives_file(split) for split in splits}},
        "metrics": ["mrr", "hits@1", "hits@3", "hits@10"], "ks": [1, 3, 10],
        "tie_rule": "average rank: 1 + (#negatives > pos + #negatives >= pos) / 2 (TGB's Evaluator, OGB)",
        "submission": ranking_submission()}


def describe(entry: TgbEntry, files: Mapping[str, Mapping[str, np.ndarray]], info: Info) -> Description:
    """The family-specific parts of a tgbl dataset's manifest: ``graph``, ``tasks`` and ``record_sets``."""
    edges = files[EDGES_FILE]
    splits = [split for split in SPLITS[1:] if negatives_file(split) in files]
    record_sets = [parquet_record_set("edges", EDGES_FILE, "The release's edges in time order: py-tgb's node ids, "
                                      "the timestamp as an integer, the CSV row (edge_id) and the edge features.",
                                      edges)]
    if NODES_FILE in files:
        record_sets.append(parquet_record_set("nodes", NODES_FILE, "py-tgb's node_feat: one row per node id, the "
                                              "features py-tgb's process_node_feat gives it (zeros for a node the "
                                              "release does not describe).", files[NODES_FILE]))
    record_sets += [parquet_record_set(f"negatives-{split}", negatives_file(split), f"TGB's {split} negatives, one "
                                       "row per edge of the split, -1 padded after count.",
                                       files[negatives_file(split)]) for split in splits]
    graph: dict[str, Any] = {
        "kind": "temporal-graph", "time": "continuous", "time_unit": entry.time_unit or "second",
        "directed": bool(entry.directed) if entry.directed is not None else True, "symmetric": False,
        "num_nodes": info["num_nodes"], "edges_file": EDGES_FILE, "node_features": "none",
        "edge_features": f"float64[{edges['edge_feat'].shape[1]}] (edge_feat)",
        "pytgb_edge_idxs_start": EDGE_IDXS_START.get(info["parser"], 0)}
    if NODES_FILE in files:
        graph["node_features"] = f"float64[{NODE_FEAT_DIM}] (node_feat of {NODES_FILE})"
        graph["node_feat"] = {"file": NODES_FILE, "column": "node_feat", "dim": NODE_FEAT_DIM,
                              "reader": "process_node_feat", "layout": info["node_feat"]["layout"],
                              "unlisted": "all zeros (stats.nodes_without_features), as py-tgb's"}
    return {"graph": graph, "tasks": [_ranking_task(entry, splits)], "record_sets": record_sets}
