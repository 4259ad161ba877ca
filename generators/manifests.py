"""The Croissant manifest every family writes: one document layout, one file-object form, one Parquet record set.

A family supplies what is its own (description, graph block, splits, tasks, statistics, record sets); this module
puts it in the one key order every manifest has, so two families can never drift apart in how a manifest looks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tgbhub.errors import GenerationError
from tgbhub.hashing import file_sha256
from tgbhub.manifest import MANIFEST_CONFORMS_TO, RAI_FIELDS, croissant_context

#: the repository's manifests (the authoring side writes and reads them here; the client reads its bundled copy)
MANIFEST_ROOT = Path(__file__).resolve().parent.parent / "manifests"
HUB_URL = "https://huggingface.co/datasets/tgbhub"
PROV = "http://www.w3.org/ns/prov#"
#: Croissant data types of the numpy dtypes our Parquet artifacts hold
CROISSANT_TYPES = {"int64": "cr:Int64", "int32": "cr:Int32", "float64": "cr:Float64", "float32": "cr:Float32"}
ENCODINGS = {".parquet": "application/x-parquet", ".h5": "application/x-hdf5"}


def file_object(name: str, path: Path) -> dict[str, Any]:
    """The ``distribution`` entry of one artifact: its name, format, sha256 and size as written."""
    return {"@type": "cr:FileObject", "@id": name, "name": name, "contentUrl": name,
            "encodingFormat": ENCODINGS[path.suffix], "sha256": file_sha256(path),
            "contentSize": f"{path.stat().st_size} B"}


def parquet_record_set(name: str, file: str, description: str,
                       columns: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """A RecordSet reading every column of a Parquet artifact (a 2-D column is a fixed-size list per row)."""
    fields = []
    for column, values in columns.items():
        field: dict[str, Any] = {"@type": "cr:Field", "@id": f"{name}/{column}", "name": column,
                                 "dataType": CROISSANT_TYPES[str(values.dtype)],
                                 "source": {"fileObject": {"@id": file}, "extract": {"column": column}}}
        if values.ndim == 2:
            field["repeated"] = True
        fields.append(field)
    return {"@type": "cr:RecordSet", "@id": name, "name": name, "description": description, "field": fields}


def croissant_document(*, name: str, version: str, description: str, license: str, published: str, citation: str,
                       responsible_ai: Mapping[str, Any],
                       distribution: Sequence[Mapping[str, Any]], record_sets: Sequence[Mapping[str, Any]],
                       recipe: Mapping[str, Any], digest: Sequence[Mapping[str, Any]], graph: Mapping[str, Any],
                       splits: Mapping[str, Any], tasks: Sequence[Mapping[str, Any]], stats: Mapping[str, Any],
                       discrepancies: Sequence[Mapping[str, Any]],
                       extra: Mapping[str, Any] | None = None, list_tasks: bool = True) -> dict[str, Any]:
    """The Croissant 1.1 JSON-LD manifest of one dataset version, keys in the order every manifest uses.

    ``tasks[0]`` is the default ``task``; ``list_tasks=False`` leaves out the ``tasks`` list (a family whose
    manifests predate it keeps its published bytes). ``extra`` keys (e.g. ``changelog``, ``derivedFrom``) come last,
    in their given order. ``responsible_ai``: the Croissant RAI fields (:data:`tgbhub.manifest.RAI_FIELDS`), placed by
    :func:`with_responsible_ai`.

    Raises:
        GenerationError: if a RAI field is missing or empty.
    """
    family = name.split("/", 1)[0]
    document: dict[str, Any] = {
        "@context": {}, "@type": "sc:Dataset", "conformsTo": list(MANIFEST_CONFORMS_TO),
        "name": name, "description": description, "license": license, "url": f"{HUB_URL}/{family}",
        "version": version, "datePublished": published, "citeAs": citation,
        "distribution": list(distribution), "recordSet": list(record_sets), "recipe": dict(recipe),
        "digest": list(digest), "graph": dict(graph), "splits": dict(splits), "task": tasks[0],
    }
    if list_tasks:
        document["tasks"] = list(tasks)
    document.update({"stats": dict(stats), "knownDiscrepancies": list(discrepancies)})
    document.update(extra or {})
    return with_responsible_ai(document, responsible_ai)


def with_responsible_ai(document: Mapping[str, Any], responsible_ai: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` carrying ``responsible_ai`` (every field of :data:`tgbhub.manifest.RAI_FIELDS`, in that order, right
    after ``citeAs``; any RAI field it had is replaced), declaring Croissant RAI in ``conformsTo``, its ``@context``
    recomputed. Every other key keeps its value and place, so applied to a published manifest it changes only
    metadata outside the versioned data: ``python -m scripts.manifests --metadata-only`` and a full rebuild write the
    same bytes.

    Raises:
        GenerationError: if a RAI field is missing or empty, or one that is not a RAI field (``rai:`` prefix) is given.
    """
    missing = [key for key in RAI_FIELDS if not responsible_ai.get(key) or (isinstance(responsible_ai[key], list)
                                                                          and not all(responsible_ai[key]))]
    unknown = sorted(set(responsible_ai) - set(RAI_FIELDS))
    if missing or unknown:
        raise GenerationError(f"{document.get('name')}: the Responsible-AI fields lack {missing} or add unknown "
                              f"{unknown}; every manifest carries exactly {', '.join(RAI_FIELDS)}, each non-empty")
    result: dict[str, Any] = {}
    for key, value in document.items():
        if key.startswith("rai:"):
            continue
        result[key] = list(MANIFEST_CONFORMS_TO) if key == "conformsTo" else value
        if key == "citeAs":
            result.update({field: responsible_ai[field] for field in RAI_FIELDS})
    result["@context"] = croissant_context(result)
    if any(key.startswith("prov:") for key in result):  # lineage in PROV-O, as Croissant 1.1 recommends
        result["@context"]["prov"] = PROV
    return result
