"""``tgbhub doctor``: the machine facts that matter for bit-exact rebuilds, and each family's preflight verdict."""

from __future__ import annotations

import json

import pytest

from tests.test_chaosnet import GLIBC_X86_FMA
from tgbhub.cli import main
from tgbhub.local.doctor import report


def test_report_names_the_machine_and_runs_every_familys_preflight() -> None:
    found = report()
    assert {"platform", "libc", "cpu", "openblas_kernel", "versions", "preflight"} <= set(found)
    assert {name.split("/")[0] for name in found["preflight"]} == {"chaosnet", "t-grab"}
    assert found["versions"]["numpy"] != "not installed"
    if GLIBC_X86_FMA:
        assert all(verdict.startswith("ok") for verdict in found["preflight"].values()), found["preflight"]


@pytest.mark.skipif(not GLIBC_X86_FMA, reason="the reference is glibc's FMA build on x86-64")
def test_cli_prints_json_and_exits_zero_on_a_reference_machine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["preflight"] and printed["cpu"]["machine"]
