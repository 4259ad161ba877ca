"""``python -m scripts.manifests [--out DIR] [--family F] [--metadata-only] [NAME ...]``, run from the repository root:
rebuild artifacts and rewrite their manifests.

Artifacts go to ``--out`` (kept, e.g. for publishing) or a temporary folder, removed as soon as the dataset's
manifest is written (ChaosNetBench's 96 instances are 28.7 GB); manifests go to ``manifests/``. An authoring script,
and so a composition root: it hands the builders what they take from the library (the evaluator's ATD/ACD that
variants' manifests record), which generator code may not import itself. A derived family's manifests are not
shipped: each one's sha256, size and row count go into its parent family's ``derived.json`` (entries of datasets not
rebuilt this time are kept), and clients derive the manifest on request.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from tqdm import tqdm

from generators.families import REGISTERED, Inputs, families
from generators.manifests import MANIFEST_ROOT as MANIFESTS, with_responsible_ai
from tgbhub.evaluate.metrics import generative_scores
from tgbhub.manifest import DERIVED_INDEX, DerivedEntry, derived_entry, derived_index_text, read_derived_index


def manifest_path(root: Path, name: str, version: str) -> Path:
    """Where the manifest of ``name@version`` lives under ``root``."""
    family, short = name.split("/", 1)
    return root / family / short / f"{version}.json"


def main(argv: list[str] | None = None) -> int:
    """Rebuild the datasets ``argv`` names (every one by default) and write their manifests, or with
    ``--metadata-only`` rewrite only the committed manifests' metadata.

    Returns:
        The exit status, 0 (a bad argument exits through ``argparse``).
    """
    parser = argparse.ArgumentParser(prog="python -m scripts.manifests", description=__doc__)
    parser.add_argument("names", nargs="*", help="datasets to rebuild (default: all)")
    parser.add_argument("--out", type=Path, help="keep the artifacts here, one folder per dataset version")
    parser.add_argument("--manifests", type=Path, default=MANIFESTS, help="manifest root (default: %(default)s)")
    parser.add_argument("--family", choices=list(REGISTERED), help="only this family")
    parser.add_argument("--metadata-only", action="store_true",
                        help="rewrite only the metadata outside the versioned data (the Croissant RAI fields) of the "
                             "committed manifests, every version, without building anything")
    args = parser.parse_args(argv)
    if args.metadata_only:
        return rewrite_metadata(args.manifests, args.family, args.names)
    writers = {}
    for family in families():
        if args.family in (None, family.name):
            writers.update({(entry.name, entry.version): (entry, family) for entry in family.catalogue()})
    chosen = [(entry, family) for (name, _), (entry, family) in writers.items() if not args.names or name in args.names]
    unknown = set(args.names) - {entry.name for entry, _ in chosen}
    if unknown:
        parser.error(f"unknown dataset(s): {', '.join(sorted(unknown))}")
    indexed: dict[str, list[DerivedEntry]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        for entry, family in tqdm(chosen, desc="building", unit="dataset", file=sys.stderr):
            document = family.write(entry, out / entry.name / entry.version, Inputs(distances=generative_scores))
            text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
            if family.derived:
                indexed.setdefault(entry.name.split("/", 1)[0], []).append(derived_entry(document, text))
            else:
                target = manifest_path(args.manifests, entry.name, entry.version)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            if args.out is None:
                shutil.rmtree(out / entry.name / entry.version)
    for family_name, entries in indexed.items():
        write_index(args.manifests / family_name / DERIVED_INDEX, entries)
    return 0


def rewrite_metadata(root: Path, only_family: str | None, names: list[str]) -> int:
    """Set each committed manifest's RAI fields (every version of every catalogue entry of the families that declare
    ``responsible_ai``) from its catalogue entry, leaving every other key as published: what a full rebuild writes,
    without the build (ChaosNetBench's 1.0.0 manifests cannot be rebuilt by today's generator at all). Derived
    families are skipped: their manifests are not committed, and ``python -m scripts.manifests --family tlpcf`` rewrites
    their index after the parents' manifests changed."""
    written = 0
    for family in families():
        if family.responsible_ai is None or only_family not in (None, family.name):
            continue
        for entry in family.catalogue():
            if names and entry.name not in names:
                continue
            for path in sorted(manifest_path(root, entry.name, "0").parent.glob("*.json")):
                document = json.loads(path.read_text(encoding="utf-8"))
                amended = with_responsible_ai(document, family.responsible_ai(entry))
                path.write_text(json.dumps(amended, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
                written += 1
    print(f"rewrote the metadata of {written} manifest(s) under {root}", file=sys.stderr)
    return 0


def write_index(path: Path, entries: list[DerivedEntry]) -> None:
    """Merge ``entries`` into the derived index at ``path`` (an entry rebuilt now replaces its old one)."""
    kept = {(e.name, e.version): e for e in (read_derived_index(path) if path.is_file() else [])}
    kept.update({(e.name, e.version): e for e in entries})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(derived_index_text(kept.values()), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
