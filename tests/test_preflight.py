"""The ChaosNet preflight: cheap component checks that refuse, before the long computation, a build this machine could
not reproduce, and say which component differs and what to do instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import generators.chaosnet.artifacts as artifacts
from generators.build import preflight
from generators.chaosnet.catalogue import VERSION
from tests.test_chaosnet import GLIBC_X86_FMA
from tests.test_chaosnet_portability import kernels
from tgbhub import api
from tgbhub.errors import GenerationError, SourceUnavailableError, SourceWarning
from tgbhub.manifest import Manifest, parse_manifest, plain
from tgbhub.local.gateway import BuildSource

ROOT = Path(__file__).resolve().parent.parent
MINI = "chaosnet/mini-k2.0-rho0.3-n8"
needs_reference_libm = pytest.mark.skipif(not GLIBC_X86_FMA, reason="the reference is glibc's FMA build on x86-64")


def _manifest(name: str = MINI, version: str = VERSION, **checks: object) -> Manifest:
    doc = json.loads((ROOT / "manifests" / f"{name}/{version}.json").read_text())
    doc["recipe"]["checks"].update(checks)
    return parse_manifest(doc)


@needs_reference_libm
@pytest.mark.parametrize("name", [MINI, "chaosnet/k6.5-rho0.5-n32"])
def test_published_checks_pass_on_a_reference_machine(name: str) -> None:
    preflight(_manifest(name).recipe)


@needs_reference_libm
@pytest.mark.parametrize(("check", "value", "component"), [
    ("seed", 1, "per-trajectory seed"),
    ("initial_condition_sha256", "0" * 64, "initial condition"),
    ("deviation_vectors_sha256", "0" * 64, "SALI deviation vectors"),
    ("state_sha256", "0" * 64, "trajectory"),
    ("lambda_max", "0x1.0p-1", "Lyapunov exponent"),
    ("sali", ["0x1.0p-40", "0x1.0p-40"], "SALI values"),
])
def test_the_first_component_that_differs_is_named_with_the_way_out(check: str, value: object,
                                                                     component: str) -> None:
    with pytest.raises(GenerationError) as caught:
        preflight(_manifest(**{check: value}).recipe)
    message = str(caught.value)
    assert f"computes the {component} differently" in message
    assert "no build was started" in message and "TGBHUB_ENDPOINT" in message


@needs_reference_libm
def test_a_refused_build_never_starts_the_long_computation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The preflight simulates IC 0 alone; the build's own all-IC simulation must not run when it refuses."""
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the full simulation ran although the preflight should have refused")

    monkeypatch.setattr(artifacts, "simulate", forbidden)
    with pytest.raises(GenerationError, match="Lyapunov exponent"):
        artifacts.build_recipe(_manifest(lambda_max="0x1.0p-1").recipe, tmp_path)


@needs_reference_libm
def test_load_gives_advice_that_fits_the_situation(tmp_path: Path) -> None:
    """Offline off and no hub configured: the advice is to configure one, never to turn offline mode off."""
    manifest = _manifest(state_sha256="0" * 64)
    with pytest.raises(SourceUnavailableError) as online, pytest.warns(SourceWarning, match="build failed"):
        api.ensure_cached(manifest, tmp_path, [BuildSource()], offline=False)
    assert "trajectory" in str(online.value) and "No hub or mirror is configured" in str(online.value)
    assert "Offline mode is on" not in str(online.value)
    with pytest.raises(SourceUnavailableError) as offline, pytest.warns(SourceWarning):
        api.ensure_cached(manifest, tmp_path, [BuildSource()], offline=True)
    assert "Offline mode is on" in str(offline.value)


def test_a_recipe_without_checks_still_probes_the_c_library() -> None:
    recipe = _manifest().recipe
    bare = replace(recipe, checks={})
    if GLIBC_X86_FMA:
        preflight(bare)
    else:
        with pytest.raises(GenerationError, match="sin/cos/log"):
            preflight(bare)
    assert plain(recipe.checks)["ic"] == 0


def _preflight_1_0_0(kernel: str) -> subprocess.CompletedProcess[str]:
    code = ("import json, sys; from generators.build import preflight; from tgbhub.manifest import read_manifest; "
            f"preflight(read_manifest('manifests/{MINI}/1.0.0.json').recipe); print('ok')")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "OPENBLAS_CORETYPE": kernel}, timeout=120)


@needs_reference_libm
@pytest.mark.skipif("Haswell" not in kernels(), reason="needs a CPU that runs OpenBLAS's Haswell kernel")
def test_version_1_0_0_is_refused_where_blas_rounds_otherwise_and_points_to_the_new_version() -> None:
    run = _preflight_1_0_0("Haswell")
    assert run.returncode != 0 and "SkylakeX" in run.stderr and "1.1.0" in run.stderr


@needs_reference_libm
@pytest.mark.skipif("SkylakeX" not in kernels(), reason="needs a CPU with AVX-512 for OpenBLAS's SkylakeX kernel")
def test_version_1_0_0_stays_buildable_with_the_kernel_it_was_published_with(tmp_path: Path) -> None:
    assert _preflight_1_0_0("SkylakeX").stdout.strip() == "ok"
    code = (f"import tgbhub; ds = tgbhub.load_dataset('{MINI}@1.0.0', offline=True); print(ds.source)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "OPENBLAS_CORETYPE": "SkylakeX", "TGBHUB_CACHE": str(tmp_path),
                              "TGBHUB_NO_PROGRESS": "1"})
    assert run.returncode == 0 and run.stdout.strip() == "build", run.stderr[-2000:]
