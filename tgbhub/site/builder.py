"""Render the hub's catalogue as static HTML: one context per page (plain dicts from manifests, the derived index and
the importers' cards), rendered by Jinja2 templates shipped in ``tgbhub/site/templates``, then written at the edge.

Layout of the output folder (every link between pages is relative, so the folder can be served from anywhere)::

    index.html                          the families with their counts (small however many datasets there are)
    families/<family>.html              a family's datasets (a filter in the browser), its variants folded away
    datasets/<family>/<name>.html       one page per dataset (bundled or imported manifest, or derived-index entry)
    datasets/<family>/<name>.<kind>.png its figures (activity, degree, ...), when the cache holds the dataset
    datasets/<family>/<name>.<task>.example.parquet   its example submission, when the cache holds the dataset
    leaderboards/index.html             every board with submissions, its best row
    imports/<family>/<name>.html        how to import a benchmark's dataset this cache does not hold yet
    leaderboards/<family>/<name>/<task>.html   one per task of a dataset page and per board of the results repo
    records/<family>/<name>/<task>/<id>.json   the grader's record of each leaderboard row, copied byte for byte

``tgbhub hub serve`` mounts this folder at ``/site/`` (``/`` redirects there), beside the Hub API's ``/api/...`` and
``/datasets/ORG/REPO/...``; nothing in it is reached without that prefix, so no page can shadow an API path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tgbhub import api, config
from tgbhub.errors import CacheWriteError, MissingExtraError, human_bytes
from tgbhub.manifest import Manifest, plain
from tgbhub.registry import natural_key
from tgbhub.site.boards import Board, Results, read_results
from tgbhub.site.charts import board_chart
from tgbhub.site.figures import Figures, PageFigure, site_figures
from tgbhub.site.preview import Previews, site_previews
from tgbhub.version import __version__

if TYPE_CHECKING:
    import jinja2

#: the folder of the templates inside the package (package data: the wheel ships the whole tgbhub folder)
TEMPLATES = "templates"
TEMPLATE_FILES = ("base.html", "index.html", "family.html", "dataset.html", "variant.html", "import.html",
                  "leaderboard.html", "leaderboards.html", "preview.html", "chart.html", "figures.html", "boards.html")
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


@dataclass(frozen=True)
class SiteReport:
    """What :func:`build_site` wrote: the output folder, every page (relative paths), the datasets whose figures are
    on their page, why a cached dataset's were not (``name -> reason``), how many figures were drawn now and how
    many reused from the cache's figure store, and the datasets whose page previews their data (``previews``) and
    offers an example submission (``examples``)."""

    out: Path
    pages: tuple[str, ...]
    figures: tuple[str, ...]
    figures_skipped: Mapping[str, str]
    figures_drawn: int = 0
    figures_reused: int = 0
    previews: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()


def build_site(out: str | os.PathLike[str], *, family: str | None = None, figures: bool = True,
               require_figures: bool = False, cache_dir: str | os.PathLike[str] | None = None,
               results: str | os.PathLike[str] | None = None, figure_workers: int | None = None,
               previews: bool = True) -> SiteReport:
    """Write the catalogue's static site into ``out`` (created if missing; pages already there are overwritten).

    ``family`` limits the site to one family (``tgb`` included). With ``figures`` (the default) each dataset the cache
    at ``cache_dir`` already holds gets every figure :mod:`tgbhub.plot` draws for its kind, each with its alt text;
    nothing is built or downloaded for a figure, so a dataset not in the cache has a note on its page instead
    (``tgbhub get NAME`` first). Figures are kept in the cache by the dataset's content digest
    (:mod:`tgbhub.site.figures`): a rebuild draws only what changed. Without matplotlib the figures are left out
    with a :class:`~tgbhub.site.figures.FigureWarning`, unless ``require_figures`` asks for them. Datasets to draw
    are spread over ``figure_workers`` processes (default: one per CPU, up to 8, from 4 datasets on).

    With ``previews`` (the default) the page of each dataset the cache holds also shows the first rows of every file,
    one ranking query with its negatives, and links an example submission for its default task, graded by the
    reference evaluator and kept in the cache (:mod:`tgbhub.site.preview`, :mod:`tgbhub.site.examples`).

    Every task of a dataset page gets a leaderboard page, filled from ``results`` (a results repo: a folder with
    ``leaderboards/``, or the git repo ``tgbhub leaderboard update`` writes) when given and holding its board, else
    saying that nobody has submitted yet; each row's grader record is copied into the site and linked.

    Raises:
        MissingExtraError: if jinja2 is not installed (the ``site`` extra), or with ``require_figures`` matplotlib
            (the ``plot`` extra).
        InvalidNameError: for a family nobody knows (naming the known ones).
        RecordError: if ``results`` is no results repo or holds a board that breaks the leaderboard contract.
        CacheWriteError: if ``out`` cannot be written (a file in the way, no permission, a full disk), or a figure
            or an example submission cannot be kept in the cache.
    """
    environment = _environment()
    root = config.cache_root(cache_dir)
    rows = api.catalogue_rows(family, cache_dir=root)
    # with the tasks of their bundled task documents (e.g. window-forecast): each gets a leaderboard page too
    manifests = {row["name"]: api.with_task_documents(api.manifest_of(row["name"], row["version"], cache_dir=root))
                 for row in rows if _page_kind(row) == "dataset"}
    variants = _variants_by_parent(rows)
    found = read_results(results) if results is not None else Results("", {}, {})
    boards = _boards(rows, manifests, found, family)
    target = Path(out)
    page_of = {row["name"]: page_path(row["name"]) for row in rows if _page_kind(row) != "import"}
    drawn = (site_figures(rows, manifests, root, page_of, required=require_figures, workers=figure_workers)
             if figures or require_figures else Figures())
    shown = site_previews(rows, manifests, root, page_of) if previews else Previews()
    sections = _families(rows, manifests)
    pages: dict[str, str | bytes] = {"index.html": environment.get_template("index.html").render(
        _index_context(sections, family, boards))}
    for section in sections:
        pages[family_path(section["name"])] = environment.get_template("family.html").render(
            _family_context(section))
    pages[BOARDS_PAGE] = environment.get_template("leaderboards.html").render(_boards_context(boards))
    copied = {**drawn.files, **shown.site_files}
    pages.update(copied)
    for row in rows:
        path, template, context = _page(row, manifests, variants, drawn, shown, figures or require_figures, boards,
                                        previews)
        pages[path] = environment.get_template(template).render(context)
    listed = {row["name"]: page_path(row["name"], _page_kind(row)) for row in rows}
    for (name, task), board in boards.items():
        pages[leaderboard_path(name, task)] = environment.get_template("leaderboard.html").render(
            _board_context(name, task, board, manifests.get(name), listed.get(name), bool(found.where)))
        for board_row in board.rows if board is not None else ():
            if board_row["record"]:
                pages[board_row["record"]] = found.records[board_row["record"]]
    _write(target, pages)
    return SiteReport(out=target, pages=tuple(p for p in pages if p not in copied),
                      figures=tuple(sorted(drawn.pages)), figures_skipped=dict(sorted(drawn.skipped.items())),
                      figures_drawn=drawn.drawn, figures_reused=drawn.reused, previews=tuple(sorted(shown.files)),
                      examples=tuple(sorted(shown.examples)))


def _environment() -> jinja2.Environment:
    """The Jinja2 environment over the shipped templates: autoescaping on for every template (every value a page
    shows comes from a manifest or a card, and none is trusted as markup), undefined names an error.

    Raises:
        MissingExtraError: if jinja2 is not installed.
    """
    try:
        import jinja2
    except ModuleNotFoundError as exc:
        raise MissingExtraError("jinja2", "site", "`tgbhub site build`") from exc
    environment = jinja2.Environment(loader=jinja2.PackageLoader("tgbhub.site", TEMPLATES), autoescape=True,
                                     undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                                     keep_trailing_newline=True)
    environment.filters.update(number=_number, size=_size, value=_value)
    return environment


def render(template: str, context: Mapping[str, Any]) -> str:
    """One shipped template rendered with ``context`` (what :func:`build_site` does per page; for tests and callers
    that render a page of their own).

    Raises:
        MissingExtraError: if jinja2 is not installed.
    """
    return str(_environment().get_template(template).render(context))


# --- one context per page --------------------------------------------------------------------------------------


def _page_kind(row: Mapping[str, Any]) -> str:
    """``import`` (a benchmark's dataset not imported here), ``variant`` (a published derived dataset, whose manifest
    is derived on request: its page comes from the derived index) or ``dataset`` (a manifest to read)."""
    if row["status"] == "import required":
        return "import"
    if api.registry().derived(row["name"], row["version"]) is not None:
        return "variant"
    return "dataset"


def page_path(name: str, kind: str = "dataset") -> str:
    """The page of ``family/name`` relative to the site's root (``imports/...`` for an import page)."""
    family, _, short = name.partition("/")
    return f"{'imports' if kind == 'import' else 'datasets'}/{family}/{short}.html"


def family_path(family: str) -> str:
    """The page of a family's datasets relative to the site's root."""
    return f"families/{family}.html"


#: the page listing every board with submissions, relative to the site's root
BOARDS_PAGE = "leaderboards/index.html"


def leaderboard_path(name: str, task: str) -> str:
    """The leaderboard page of ``family/name``'s ``task`` relative to the site's root."""
    family, _, short = name.partition("/")
    return f"leaderboards/{family}/{short}/{task}.html"


def _boards(rows: Sequence[Mapping[str, Any]], manifests: Mapping[str, Manifest], found: Results,
            family: str | None) -> dict[tuple[str, str], Board | None]:
    """``(name, task) -> its board, or None (no submission yet)``: every task of every dataset page, and every board
    of the results repo in the site's family (a variant's or a not yet imported dataset's included)."""
    boards: dict[tuple[str, str], Board | None] = {}
    for row in rows:
        manifest = manifests.get(row["name"])
        for task in manifest.tasks if manifest is not None else ():
            boards[(row["name"], str(task.get("name")))] = None
    for key, board in found.boards.items():
        if family is None or key[0].split("/", 1)[0] == family:
            boards[key] = board
    return dict(sorted(boards.items(), key=lambda item: (natural_key(item[0][0]), item[0][1])))


def _board_links(name: str, boards: Mapping[tuple[str, str], Board | None], root: str) -> dict[str, dict[str, Any]]:
    """``task -> {href, summary, board}`` of ``name``'s leaderboard pages, for the pages that link them."""
    return {task: {"href": root + leaderboard_path(name, task), "summary": _summary(board), "board": board}
            for (board_name, task), board in boards.items() if board_name == name}


def _summary(board: Board | None) -> str:
    if board is None or not board.rows:
        return "no submissions yet"
    rejected = len(board.rows) - board.ranked
    return f"{board.ranked} ranked" + (f", {rejected} rejected" if rejected else "")


def _board_context(name: str, task: str, board: Board | None, manifest: Manifest | None, dataset_page: str | None,
                   have_results: bool) -> dict[str, Any]:
    """A leaderboard page: the task as the manifest declares it (when it is listed here), the board's rows and
    their chart."""
    from tgbhub.evaluate.directions import higher_is_better

    declared = next((t for t in manifest.tasks if t.get("name") == task), None) if manifest is not None else None
    rows = list(board.rows) if board is not None else []
    metric = next((str(row["metric"]) for row in rows if row.get("metric")), "")
    return {"root": "../../../", "title": f"{name} {task} leaderboard", "version": __version__, "name": name,
            "task": task, "declared": _task_context(declared) if declared is not None else None,
            "dataset_href": f"../../../{dataset_page}" if dataset_page else None,
            "nav_family": _nav_family(name, "../../../"), "rows": rows,
            "chart": board_chart(rows, higher_is_better(metric, declared)) if rows else None,
            "source": board.path if board else None, "have_results": have_results}


def _nav_family(name: str, root: str) -> dict[str, str]:
    """The family link of a page's navigation bar."""
    family = name.split("/", 1)[0]
    return {"name": family, "href": root + family_path(family)}


def _variants_by_parent(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """``base name -> its published variants' rows`` (the derived index's entries, via the catalogue rows)."""
    found: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        if _page_kind(row) == "variant":
            found.setdefault(str(row["derived_from"]).partition("@")[0], []).append(row)
    return found


def _families(rows: Sequence[Mapping[str, Any]], manifests: Mapping[str, Manifest]) -> list[dict[str, Any]]:
    """Per family, by name: its datasets (base, imported and importable ones, each with its page's path relative
    to the site's root, its kind, tasks and how many published variants its page lists), its published variants,
    those whose parent is not listed (``orphans``: listed on the family page, as no dataset page links them), and
    their counts."""
    families: dict[str, dict[str, Any]] = {}
    for row in rows:
        name = row["name"]
        section = families.setdefault(name.split("/", 1)[0], {"datasets": [], "variants": []})
        kind = _page_kind(row)
        if kind == "variant":
            section["variants"].append({**row, "href": page_path(name), "parent": _parent_name(row)})
            continue
        section["datasets"].append({**row, "href": page_path(name, kind), **_kind_and_tasks(row, manifests)})
    for name, section in families.items():
        section["name"] = name
        section["href"] = family_path(name)
        section["importable"] = sum(1 for r in section["datasets"] if r["status"] == "import required")
        section["held"] = sum(1 for r in [*section["datasets"], *section["variants"]]
                              if r["status"] in ("cached", "imported"))
        section["kinds"] = sorted({str(r["kind"]) for r in section["datasets"]})
        section["task_names"] = sorted({task for r in section["datasets"] for task in r["tasks"]})
        parents = [str(r["parent"]) for r in section["variants"]]
        for dataset in section["datasets"]:
            dataset["variants"] = parents.count(dataset["name"])
        listed = {str(r["name"]) for r in section["datasets"]}
        section["orphans"] = [r for r in section["variants"] if r["parent"] not in listed]
    return [families[name] for name in sorted(families)]


def _index_context(sections: Sequence[Mapping[str, Any]], family: str | None,
                   boards: Mapping[tuple[str, str], Board | None]) -> dict[str, Any]:
    """The catalogue page: the families with their counts, and how many boards have submissions (the datasets
    themselves are on the family pages, so the page stays small however the catalogue grows)."""
    filled = [board for board in boards.values() if board is not None and board.rows]
    return {"root": "", "title": "tgbhub catalogue", "version": __version__, "only_family": family,
            "families": [{key: section[key] for key in ("name", "href", "importable", "held", "kinds", "task_names")}
                         | {"datasets": len(section["datasets"]), "variants": len(section["variants"])}
                         for section in sections],
            "total": sum(len(section["datasets"]) + len(section["variants"]) for section in sections),
            "boards_filled": len(filled), "boards_total": len(boards), "boards_href": BOARDS_PAGE}


def _family_context(section: Mapping[str, Any]) -> dict[str, Any]:
    """A family's page: a table of its datasets, each with the count of its published variants (listed on its own
    page, so the family page stays small), and the variants whose parent is not listed; links relative to the
    page."""
    def linked(row: Mapping[str, Any]) -> dict[str, Any]:
        return {**row, "href": "../" + str(row["href"])}

    return {"root": "../", "title": f"tgbhub catalogue: {section['name']}", "version": __version__,
            "family": section["name"], "datasets": [linked(row) for row in section["datasets"]],
            "variants": len(section["variants"]), "orphans": [linked(row) for row in section["orphans"]],
            "task_names": section["task_names"],
            "importable": section["importable"], "held": section["held"]}


def _boards_context(boards: Mapping[tuple[str, str], Board | None]) -> dict[str, Any]:
    """The page of every board with submissions: its dataset, task, counts and best ranked row."""
    filled = [{"name": name, "task": task, "href": "../" + leaderboard_path(name, task), "board": board,
               "summary": _summary(board), "best": next((r for r in board.rows if r["status"] == "ranked"), None)}
              for (name, task), board in boards.items() if board is not None and board.rows]
    return {"root": "../", "title": "tgbhub leaderboards", "version": __version__, "boards": filled,
            "empty": len(boards) - len(filled)}


def _kind_and_tasks(row: Mapping[str, Any], manifests: Mapping[str, Manifest]) -> dict[str, Any]:
    manifest = manifests.get(row["name"])
    if manifest is None:  # an importable dataset: what its catalogue card says
        card = api.catalogue_card(row["name"]) or {}
        return {"kind": "temporal-graph", "tasks": [str(card.get("task", "?"))]}
    return {"kind": manifest.graph.get("kind", "?"), "tasks": [str(t.get("name")) for t in manifest.tasks]}


def _parent_name(row: Mapping[str, Any]) -> str:
    return str(row["derived_from"]).partition("@")[0]


def _page(row: Mapping[str, Any], manifests: Mapping[str, Manifest], variants: Mapping[str, list[Mapping[str, Any]]],
          drawn: Figures, shown: Previews, with_figures: bool, boards: Mapping[tuple[str, str], Board | None],
          with_previews: bool) -> tuple[str, str, dict[str, Any]]:
    """``(path, template, context)`` of one dataset's page."""
    name, kind = row["name"], _page_kind(row)
    links = _board_links(name, boards, "../../")
    base = {"root": "../../", "title": name, "version": __version__, "row": dict(row), "boards": links,
            "nav_family": _nav_family(name, "../../")}
    preview = _preview_context(name, row, shown, with_previews)
    if kind == "import":
        card = api.catalogue_card(name) or {}
        command = card.get("import") or f"tgbhub import {name}"
        return page_path(name, kind), "import.html", {**base, "card": card, "stats": list(_flat(card.get("stats", {}))),
                                                      "command": command, "snippet": _snippet(name)}
    if kind == "variant":
        parent = _parent_name(row)
        return page_path(name), "variant.html", {
            **base, "parent": parent, "parent_href": f"{parent.split('/', 1)[1]}.html",
            "parent_listed": parent in manifests, "transform": json.dumps(row["transform"], indent=1, sort_keys=True),
            "entry": api.registry().derived(name, row["version"]), "snippet": _snippet(f"{name}@{row['version']}"),
            "citation": manifests[parent].raw.get("citeAs") if parent in manifests else None,
            "figures": _figure_list(drawn.pages.get(name)),
            "figure_note": _figure_note(row, drawn.skipped, with_figures), "preview": preview}
    return page_path(name), "dataset.html", _dataset_context(
        manifests[name], row, variants.get(name, []), drawn.pages.get(name), _figure_note(row, drawn.skipped,
                                                                                          with_figures), links,
        preview)


def _preview_context(name: str, row: Mapping[str, Any], shown: Previews, with_previews: bool) -> dict[str, Any]:
    """What the preview section of ``name``'s page shows: its files' first rows, a query with its negatives, the
    example submission, or why there is none."""
    if name in shown.files:
        note = shown.notes.get(name, "")
    elif not with_previews:
        note = "No preview: this site was built without previews."
    else:
        note = (f"No preview: {name} is not in the cache this site was built with; `tgbhub get {name}` it, then "
                "build the site again.")
    example = shown.examples.get(name)
    return {"files": shown.files.get(name, []), "query": shown.queries.get(name), "note": note,
            "example": None if example is None else {
                "task": example.task, "split": example.split, "model": example.model, "rows": example.rows,
                "file": example.file, "size": len(example.data), "metric": example.primary,
                "value": example.metrics.get(example.primary), "name": name, "version": row.get("version")}}


def render_dataset(manifest: Manifest, status: str = "unknown") -> str:
    """The page of one dataset from its manifest alone: no variants listed, no figure (what :func:`build_site`
    writes per dataset, for callers that show one page, and for tests of the escaping).

    Raises:
        MissingExtraError: if jinja2 is not installed.
    """
    row = {"name": manifest.name, "version": manifest.version, "status": status}
    preview = _preview_context(manifest.name, row, Previews(), False)
    return render("dataset.html", _dataset_context(manifest, row, [], None, "No figure: a page rendered on its own.",
                                                   {}, preview))


def _dataset_context(manifest: Manifest, row: Mapping[str, Any], variants: Sequence[Mapping[str, Any]],
                     figures: Sequence[PageFigure] | None, figure_note: str, boards: Mapping[str, Mapping[str, Any]],
                     preview: Mapping[str, Any]) -> dict[str, Any]:
    return {"root": "../../", "title": manifest.name, "version": __version__, "row": dict(row),
            **_manifest_context(manifest), "figures": _figure_list(figures), "figure_note": figure_note,
            "boards": boards, "preview": preview, "nav_family": _nav_family(manifest.name, "../../"),
            "variants": [{**v, "href": f"{v['name'].split('/', 1)[1]}.html"} for v in variants]}


def _manifest_context(manifest: Manifest) -> dict[str, Any]:
    """What a dataset's page shows of its manifest: description, statistics, splits, files, recipe, lineage, tasks
    with their submission columns, the load snippet and the BibTeX entry."""
    recipe = manifest.recipe
    parent = manifest.derived_from.partition("@")[0] if manifest.derived_from else None
    return {
        "manifest": manifest, "description": manifest.description, "license": manifest.license,
        "graph": list(_flat(manifest.graph)), "stats": list(_flat(manifest.stats)),
        "split_unit": manifest.split_unit,
        "splits": [{"name": s, "start": lo, "stop": hi, "size": hi - lo} for s, (lo, hi) in manifest.splits.items()],
        "files": manifest.files,
        "recipe": None if recipe is None else {
            "generator": recipe.generator, "version": recipe.version, "seed": recipe.seed,
            "params": json.dumps(plain(recipe.params), indent=1, sort_keys=True)},
        "parent": parent, "parent_href": f"{parent.split('/', 1)[1]}.html" if parent else None,
        "tasks": [_task_context(task) for task in manifest.tasks],
        "discrepancies": [json.dumps(plain(d), sort_keys=True) for d in manifest.known_discrepancies],
        "changelog": [plain(entry) for entry in manifest.changelog],
        "snippet": _snippet(f"{manifest.name}@{manifest.version}"), "citation": manifest.raw.get("citeAs")}


def _task_context(task: Mapping[str, Any]) -> dict[str, Any]:
    submission = task.get("submission", {}) or {}
    metrics = task.get("metrics") or [task.get("primary_metric") or task.get("metric")]
    return {"name": task.get("name"), "type": task.get("type"), "metric": ", ".join(str(m) for m in metrics if m),
            "document": task.get("document"),
            "report_split": task.get("report_split"), "format": submission.get("format"),
            "rows": submission.get("rows"),
            "columns": [(c.get("name"), c.get("type")) for c in submission.get("columns", ())],
            "block": json.dumps(plain(task), indent=1, sort_keys=True, default=str)}


def _snippet(reference: str) -> str:
    # json.dumps quotes the name as a valid Python string literal, whatever it holds
    return f"import tgbhub\n\ndataset = tgbhub.load_dataset({json.dumps(reference)})\n"


def _figure_list(figures: Sequence[PageFigure] | None) -> list[dict[str, str]]:
    """The figures a page shows, as the templates read them (``src``, ``alt``, ``title``, ``kind``)."""
    return [{"src": f.src, "alt": f.alt, "title": f.title, "kind": f.kind} for f in figures or ()]


def _figure_note(row: Mapping[str, Any], skipped: Mapping[str, str], with_figures: bool) -> str:
    """Why a page has no figure (shown only when it has none)."""
    if row["name"] in skipped:
        return f"No figure: {skipped[row['name']]}"
    if not with_figures:
        return "No figure: this site was built with --no-figures."
    return (f"No figure: {row['name']} is not in the cache this site was built with; `tgbhub get {row['name']}` "
            "it, then build the site again.")


def _flat(mapping: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` of every leaf of a nested mapping: scalars as they are (the page formats numbers),
    lists as JSON text."""
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            shown = value if isinstance(value, (str, int, float, type(None))) else json.dumps(plain(value))
            yield f"{prefix}{key}", shown


def _value(value: Any) -> str:
    """A metric value: four decimals; a missing one as an em dash."""
    if value is None:
        return "\u2014"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _number(value: Any) -> str:
    """``164750`` -> ``'164,750'``; a missing value as an em dash."""
    if value is None:
        return "\u2014"
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _size(size: int | None) -> str:
    """``1536`` -> ``'1.5 KiB'`` (:func:`~tgbhub.errors.human_bytes`); ``None`` as an em dash."""
    return "\u2014" if size is None else human_bytes(size)


# --- the one place that writes ---------------------------------------------------------------------------------


def _write(out: Path, pages: Mapping[str, str | bytes]) -> None:
    """Write every page (text) and copied file (bytes) under ``out``.

    Raises:
        CacheWriteError: naming the path and the way out.
    """
    try:
        for relative in sorted(pages, key=natural_key):
            path = out / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            content = pages[relative]
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
    except OSError as exc:
        if CacheWriteError.applies(exc):
            raise CacheWriteError("the site", exc) from exc
        raise
