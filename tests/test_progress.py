"""tgbhub.progress: a bar on a terminal, plain lines at a modest rate elsewhere, nothing under TGBHUB_NO_PROGRESS."""

from __future__ import annotations

import io
import re
import sys

import pytest
from tqdm import tqdm

from tgbhub import progress
from tgbhub.progress import LINE_EVERY, Lines, Steps, byte_bar, counter, track

LINE = re.compile(r"^(?P<desc>[^:]+): (?P<done>\d+)(?:/(?P<total>\d+))?(?: (?P<label>.+))? \((?P<elapsed>[^()]+)\)$")


class FakeClock:
    """Time that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _log(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """stderr as a log file (not a terminal), progress not silenced. Called in the test body: pytest's capture puts
    its own sys.stderr back after the fixtures are set up."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.delenv("TGBHUB_NO_PROGRESS", raising=False)
    return stream


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(progress, "clock", fake)
    return fake


def _run(items: list[str], clock: FakeClock, seconds_each: float, **options) -> None:
    for _ in track(items, **options):
        clock.advance(seconds_each)


def _lines(stream: io.StringIO) -> list[re.Match[str]]:
    lines = stream.getvalue().splitlines()
    matches = [LINE.match(line) for line in lines]
    assert all(matches), lines
    return matches


def test_a_build_of_52_datasets_writes_a_few_plain_lines_and_the_last(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    names = [f"t-grab/ce-{i}" for i in range(52)]
    _run(names, fake_clock, 1.2, desc="build", label=lambda name: name)
    lines = _lines(log)
    assert lines[0].group(0) == "build: 5/52 t-grab/ce-4 (6.0 s)"
    assert lines[-1].group(0) == "build: 52/52 t-grab/ce-51 (1 min 02 s)"
    interim = [1.2 * int(line["done"]) for line in lines[:-1]]  # the last line comes when the work ends
    assert all(later - earlier >= LINE_EVERY - 1e-9 for earlier, later in zip(interim, interim[1:]))
    assert 8 <= len(lines) <= 13  # about one per 5 s of 62 s, not one per dataset


def test_thousands_of_quick_items_write_a_line_per_interval_not_per_item(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    _run(["x"] * 10_000, fake_clock, 1 / 512, desc="grading")  # a binary fraction: the fake clock adds exactly
    assert [line["done"] for line in _lines(log)] == ["2560", "5120", "7680", "10000"]


def test_an_hour_of_work_writes_a_few_dozen_lines_at_most(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    _run(["x"] * 3600, fake_clock, 1.0, desc="grading")  # one item a second
    lines = _lines(log)
    assert lines[-1].group(0) == "grading: 3600/3600 (1 h 00 min)"
    assert len(lines) <= 60  # later lines thin out: at most one per tenth of the time run so far


def test_long_durations_read_in_minutes_and_hours(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    _run(["x"] * 3, fake_clock, 1500.0, desc="training")
    assert log.getvalue().splitlines()[-1] == "training: 3/3 (1 h 15 min)"
    assert progress._duration(125.0) == "2 min 05 s"


def test_work_shorter_than_the_line_interval_writes_nothing(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    _run(["a", "b", "c"], fake_clock, 1.0, desc="build")
    assert log.getvalue() == ""


def test_no_progress_keeps_it_silent(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    monkeypatch.setenv("TGBHUB_NO_PROGRESS", "1")
    _run(["x"] * 20, fake_clock, 10.0, desc="build", label=str)
    bar = counter("epoch 1/2", 100)
    fake_clock.advance(60)
    bar.update(100)
    bar.close()
    assert log.getvalue() == ""


def test_a_terminal_gets_the_tqdm_bar_not_lines(monkeypatch, fake_clock):
    monkeypatch.delenv("TGBHUB_NO_PROGRESS", raising=False)
    monkeypatch.setattr(sys, "stderr", Terminal())
    bar = counter("epoch 1/2", 10)
    assert isinstance(bar, tqdm) and not bar.disable
    bar.close()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert isinstance(counter("epoch 1/2", 10), Lines)


def test_steps_counters_and_downloads_share_the_line_format(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    steps = Steps("t-grab/ce-64@1.0.0 from local build", total=1)
    fake_clock.advance(7.0)
    steps.step("verified and installed")
    steps.close()
    bar = counter("dlinear epoch 1/50", 1000, unit="batch")
    fake_clock.advance(6.0)
    bar.set_postfix_str("train mse 0.1234")
    bar.update(100)
    bar.close()  # ended where its last line said, after 6 s: no second line
    download = byte_bar("downloading tgbl-wiki.zip", 150 * 2**20)
    fake_clock.advance(5.0)
    download.update(12 * 2**20)
    download.close()
    assert log.getvalue().splitlines() == [
        "t-grab/ce-64@1.0.0 from local build: 1/1 verified and installed (7.0 s)",
        "dlinear epoch 1/50: 100/1000 train mse 0.1234 (6.0 s)",
        "downloading tgbl-wiki.zip: 12.0 MiB/150.0 MiB (5.0 s)"]


def test_an_interrupted_loop_still_ends_with_where_it_stopped(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    for i, _ in enumerate(track(range(100), desc="build")):
        fake_clock.advance(2.0)
        if i == 9:
            break
    assert log.getvalue().splitlines()[-1] == "build: 9/100 (18.0 s)"  # the 10th was started, not done


def test_closing_twice_writes_one_last_line(fake_clock, monkeypatch):
    log = _log(monkeypatch)
    lines = Lines("tasks", None, log)
    fake_clock.advance(3.0)
    lines.update(2)
    fake_clock.advance(3.0)
    lines.close()
    lines.close()
    assert log.getvalue() == "tasks: 2 (6.0 s)\n"


def test_durations_read_from_seconds_to_years():
    assert [progress.duration(s) for s in (12.5, 125.0, 3 * 3600 + 420, 2 * 86400 + 4 * 3600, 5.7 * 365.25 * 86400)
            ] == ["12.5 s", "2 min 05 s", "3 h 07 min", "2 d 04 h", "5.7 years"]


def test_a_notice_is_one_line_on_stderr_unless_quiet(monkeypatch, capsys):
    monkeypatch.delenv(progress.QUIET_ENV, raising=False)
    progress.notice("about 3 min per epoch")
    assert capsys.readouterr().err == "tgbhub: notice: about 3 min per epoch\n"
    monkeypatch.setenv(progress.QUIET_ENV, "1")
    progress.notice("about 3 min per epoch")
    assert capsys.readouterr().err == ""
