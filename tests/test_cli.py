import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tgbhub
from tgbhub.cli import datasets, main
from tgbhub.cli.output import human_bytes


def test_list_json_filters_by_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--family", "t-grab", "--json"]) == 0
    rows = [r for r in json.loads(capsys.readouterr().out) if r["derived_from"] is None]
    assert len(rows) == 52 and {r["name"] for r in rows} >= {"t-grab/ce-64", "t-grab/psto-64-p90"}


def test_list_unknown_family_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--family", "tgrab"]) == 2
    assert "t-grab" in capsys.readouterr().err


def test_info_shows_recipe_and_discrepancy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "t-grab/ce-4", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["recipe"]["seed"] == 12345 and info["known_discrepancies"][0]["paper"] == 165_142
    assert info["citation"].startswith("@inproceedings{dizaji2026tgrab")
    assert main(["info", "t-grab/ce-4"]) == 0
    out = capsys.readouterr().out
    assert "165142" in out and "t-grab/cause-effect 1.0.0, seed 12345" in out and "lag=4" in out
    assert "test_inductive: the first 4 snapshots are not graded" in out
    assert "snapshot-f1 (snapshot-link-prediction): f1 on test" in out
    assert "@inproceedings{dizaji2026tgrab" in out


def test_info_shows_the_version_history(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "chaosnet/mini-k2.0-rho0.3-n8"]) == 0
    out = capsys.readouterr().out
    lines = out[out.index("versions:"):].splitlines()
    assert lines[0].split("versions: ")[1].startswith("1.1.0 (")  # newest first
    assert any(line.strip().startswith("1.0.0 (") for line in lines) and "BLAS" in lines[0]
    assert main(["info", "chaosnet/mini-k2.0-rho0.3-n8", "--json"]) == 0
    assert [e["version"] for e in json.loads(capsys.readouterr().out)["changelog"]] == ["1.0.0", "1.1.0"]


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out.strip() == f"tgbhub {tgbhub.__version__}"


def test_list_shows_human_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--family", "t-grab"]) == 0
    header, first = capsys.readouterr().out.splitlines()[:2]
    assert header.split()[-3:] == ["size", "variants", "status"] and first.split()[-3] in {"B", "KiB", "MiB"}
    assert [human_bytes(n) for n in (0, 1023, 1536, 5 * 2**30)] == ["0 B", "1023 B", "1.5 KiB", "5 GiB"]


def test_list_into_a_closed_pipe_is_quiet() -> None:
    child = subprocess.Popen([sys.executable, "-m", "tgbhub.cli", "list", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    child.stdout.close()  # as `| head` does, before the child has written anything
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=60) == 141 and stderr == ""


def test_bare_name_suggests_the_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", "ce-64"]) == 2
    assert "did you mean 't-grab/ce-64'?" in capsys.readouterr().err


def test_get_offline_then_cached(capsys: pytest.CaptureFixture[str], cache_dir: Path) -> None:
    assert main(["--cache-dir", str(cache_dir), "get", "t-grab/pdet-2-1", "--offline", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "build"
    assert main(["--cache-dir", str(cache_dir), "get", "t-grab/pdet-2-1", "--version", "1.0.0", "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["source"] == "cache" and card["num_rows"] == 10_560


def test_get_unknown_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["get", "t-grab/ce-65"]) == 2
    assert "t-grab/ce-64" in capsys.readouterr().err


def test_build_names_and_nothing(capsys: pytest.CaptureFixture[str], cache_dir: Path) -> None:
    assert main(["--cache-dir", str(cache_dir), "build", "t-grab/pdet-2-1", "t-grab/lr-1-1"]) == 0
    assert "2 dataset(s) ready (2 built" in capsys.readouterr().out
    assert main(["--cache-dir", str(cache_dir), "build"]) == 2
    assert "--all" in capsys.readouterr().err


def test_build_continues_past_failures(capsys: pytest.CaptureFixture[str], cache_dir: Path) -> None:
    assert main(["--cache-dir", str(cache_dir), "build", "t-grab/ce-65", "t-grab/pdet-2-1"]) == 1
    captured = capsys.readouterr()
    assert "1 of 2 dataset(s) ready (1 built" in captured.out
    assert "1 failed:" in captured.err and "t-grab/ce-65: unknown dataset" in captured.err


def test_warnings_are_one_line(capsys: pytest.CaptureFixture[str], cache_dir: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TGBHUB_MIRRORS", "http://127.0.0.1:9/")  # loopback discard port: refused, then the build
    assert main(["--cache-dir", str(cache_dir), "get", "t-grab/pdet-2-1"]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if line]
    assert warned and all(line.startswith("tgbhub: warning: t-grab/pdet-2-1@1.0.0: mirror") for line in warned)


def test_graded_inductive_split_says_what_it_skipped(capsys: pytest.CaptureFixture[str], cache_dir: Path) -> None:
    assert main(["--cache-dir", str(cache_dir), "baseline", "persistence", "t-grab/ce-4", "--task", "snapshot-f1",
                 "--split", "test_inductive"]) == 0
    out = capsys.readouterr().out
    start = tgbhub.resolve("t-grab/ce-4").splits["test_inductive"][0]
    assert f"skipped: snapshots {start}..{start + 3} (4):" in out


def test_every_dataset_is_discoverable_with_its_status(tmp_path, capsys) -> None:
    """TGB's catalogue is listed (import required until imported), `info` prints its card offline, a bare name gets
    its family suggested, and a dataset loaded into the cache is listed as cached."""
    cache = str(tmp_path / "cache")
    tgbhub.load_dataset("t-grab/pdet-2-16", cache_dir=cache, offline=True)
    assert main(["--cache-dir", cache, "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    tgb = {name: row for name, row in rows.items() if name.startswith("tgb/")}
    assert len(tgb) == 22 and {row["status"] for row in tgb.values()} == {"import required"}
    wiki = tgb["tgb/tgbl-wiki"]  # its node-id space and rows are counted once imported; TGB's counts beside them
    assert (wiki["num_nodes"], wiki["num_rows"], wiki["published_num_nodes"], wiki["published_num_edges"]) == (
        None, None, 9227, 157474)
    assert wiki["import"] == "tgbhub import tgb/tgbl-wiki"
    assert rows["t-grab/pdet-2-16"]["status"] == "cached" and rows["t-grab/ce-64"]["status"] == "buildable"
    assert rows["t-grab/ce-64~shuffle-s0"]["status"] == "buildable"
    lattice = rows["chaosnet/mini-k2.0-rho0.1-n8"]  # nodes: the 2 variables (q, p) of each of its 8 sites
    assert (lattice["num_nodes"], lattice["num_sites"], lattice["num_variables"]) == (16, 8, 16)
    assert main(["--cache-dir", cache, "info", "tgb/tgbl-wiki", "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["status"] == "import required" and card["stats"]["num_nodes"] == 9227 and "@" in card["citation"]
    assert main(["--cache-dir", cache, "info", "tgbl-wiki"]) == 2
    assert "did you mean 'tgb/tgbl-wiki'" in capsys.readouterr().err
    assert main(["--cache-dir", cache, "info", "ce-64"]) == 2
    assert "did you mean 't-grab/ce-64'" in capsys.readouterr().err
    assert main(["--cache-dir", cache, "list", "--family", "tgb"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 23


def test_global_options_go_before_or_after_any_command(tmp_path, capsys, monkeypatch) -> None:
    cache = str(tmp_path / "cache")
    monkeypatch.delenv("TGBHUB_OFFLINE", raising=False)
    assert main(["build", "t-grab/pdet-2-16", "--cache-dir", cache, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["name"] == "t-grab/pdet-2-16"
    assert main(["--json", "get", "t-grab/pdet-2-16", "--cache-dir", cache]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "cache"
    assert main(["--cache-dir", cache, "get", "t-grab/pdet-2-16", "--offline"]) == 0
    assert "source: cache" in capsys.readouterr().out
    assert main(["--offline", "--cache-dir", cache, "info", "t-grab/pdet-2-16~intense-k2-s1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["transform"]["params"]["k"] == 2
    assert "TGBHUB_OFFLINE" not in os.environ  # --offline holds while the command runs, not after
    assert (tmp_path / "cache" / "t-grab" / "pdet-2-16~intense-k2-s1" / "1.0.0.manifest.json").is_file()


@pytest.mark.parametrize("argv, code, words", [
    (["get", "t-grab/" + "x" * 300], 2, "is 307 characters long; a name has at most 200"),
    (["--cache-dir", "CACHE_IS_A_FILE", "get", "t-grab/pdet-2-16"], 2,
     "cannot write t-grab/pdet-2-16@1.0.0 into the cache at .*: Not a directory; a path on the way is a file"),
    (["--cache-dir", "CACHE", "baseline", "edgebank", "t-grab/pdet-2-16", "--out", "MISSING/out.parquet"], 2,
     "out=.*missing/out.parquet': the folder .*missing does not exist; create it"),
    (["info", "tgbl-wiki"], 2, "did you mean 'tgb/tgbl-wiki'\\? .*tgbhub import tgb/tgbl-wiki"),
    (["get", "ce-64"], 2, "did you mean 't-grab/ce-64'"),
    (["--offline", "--cache-dir", "CACHE", "baseline", "edgebank-thr", "t-grab/pdet-2-16"], 2,
     "does not run on t-grab/pdet-2-16's task 'snapshot-f1' .*add --task window-forecast"),
    (["--offline", "--cache-dir", "CACHE", "train", "lstm", "chaosnet/mini-k2.0-rho0.1-n8", "--hparam", "hidden=abc",
      "--out", "RUN"], 2, "lstm: --hparam hidden='abc' is out of range; hidden: an integer in \\[1, 4096\\]"),
    (["--offline", "--cache-dir", "CACHE", "train", "lstm", "chaosnet/mini-k2.0-rho0.1-n8", "--hparam",
      "hidden=100000", "--out", "RUN"], 2, "hidden=100000 is out of range"),
    (["--offline", "--cache-dir", "CACHE", "train", "lstm", "chaosnet/mini-k2.0-rho0.1-n8", "--hparam",
      "dropout=1.5", "--out", "RUN"], 2, "dropout=1.5 is out of range; dropout: a number in \\[0, 1\\)"),
    (["train", "lstm", "chaosnet/mini-k2.0-rho0.1-n8", "--hparam", "hidden"], 2, "is not KEY=VALUE"),
    (["hub", "serve", "/etc"], 2, "/etc.* not a hub root"),
    (["--cache-dir", "CACHE", "leaderboard", "show", "t-grab/pdet-2-16", "--endpoint", "http://127.0.0.1:9"], 2,
     "ConnectError.*Nothing answered at http://127.0.0.1:9: check --endpoint"),
    # a folder where a file belongs: named as a folder, with the one file in it that fits
    (["--cache-dir", "CACHE", "evaluate", "t-grab/pdet-2-16", "PREDS_DIR"], 2,
     "FILE '.*preds' is a folder, but `tgbhub evaluate` takes a Parquet file there: pass the one in it, "
     ".*preds/scores.parquet"),
    (["--cache-dir", "CACHE", "generative", "t-grab/pdet-2-16", "EMPTY_DIR"], 2,
     "FILE '.*empty' is a folder, .* and it holds no \\*.parquet file: pass the file itself"),
    (["verify-result", "RECORD_FILE", "PREDS_DIR"], 2,
     "SUBMISSION '.*preds' is a folder, but `tgbhub verify-result` takes a Parquet file there: pass the one in it"),
    (["submit", "t-grab/pdet-2-16", "PREDS_DIR", "--hub", "git:HUB", "--model", "m"], 2,
     "SUBMISSION '.*preds' is a folder, but `tgbhub submit` takes a Parquet file there"),
    (["aggregate-results", "RECORDS_DIR"], 2, "RECORD '.*records' is a folder, .*: pass one of the 2 \\*.json files"),
    # two arguments in each other's places: called swapped, with the command written the right way round
    (["evaluate", "preds.parquet", "t-grab/pdet-2-16"], 2, "the arguments look swapped: 'preds.parquet' is a "
     "Parquet file and 't-grab/pdet-2-16' is a dataset; .*write `tgbhub evaluate t-grab/pdet-2-16 preds.parquet`"),
    (["baseline", "t-grab/pdet-2-16", "edgebank", "--task", "snapshot-f1"], 2, "the arguments look swapped: "
     ".*write `tgbhub baseline edgebank t-grab/pdet-2-16 --task snapshot-f1`"),
    (["train", "chaosnet/mini-k2.0-rho0.1-n8", "lstm", "--out", "RUN"], 2,
     "the arguments look swapped: .*`tgbhub train` takes MODEL first, .*write `tgbhub train lstm "
     "chaosnet/mini-k2.0-rho0.1-n8 --out .*run`"),
    (["verify-result", "PREDS_FILE", "RECORD_FILE"], 2, "the arguments look swapped: '.*scores.parquet' is a "
     "Parquet file and '.*record.json' is a result record \\(JSON\\); .*write `tgbhub verify-result .*record.json "
     ".*scores.parquet`"),
    (["counterfactual", "t-grab/pdet-2-16", "recency"], 2, "swapped: .*write `tgbhub counterfactual recency "
     "t-grab/pdet-2-16`"),
    # a ranking file whose columns were renamed is told the ranking task's columns, not the default task's
    (["--offline", "--cache-dir", "CACHE", "evaluate", "t-grab/pdet-2-16", "RENAMED_RANKING"], 2,
     "Write exactly the columns query, pos_score, neg_scores"),
    (["generative", "preds.parquet", "t-grab/pdet-2-16"], 2, "swapped: .*write `tgbhub generative "
     "t-grab/pdet-2-16 preds.parquet`"),
    (["submit", "preds.parquet", "t-grab/pdet-2-16", "--hub", "git:HUB", "--model", "m"], 2,
     "swapped: .*write `tgbhub submit t-grab/pdet-2-16 preds.parquet --hub git:.* --model m`"),
])
def test_a_users_mistake_is_one_line_and_no_traceback(argv, code, words, tmp_path, capsys) -> None:
    (tmp_path / "file").write_text("not a folder")
    for folder, files in (("preds", ["scores.parquet", "notes.txt"]), ("empty", []),
                          ("records", ["seed0.json", "seed1.json"])):
        (tmp_path / folder).mkdir()
        for name in files:
            (tmp_path / folder / name).write_text("")
    (tmp_path / "scores.parquet").write_text("")
    (tmp_path / "record.json").write_text("{}")
    pq.write_table(pa.table({"query": [0, 1], "positive": [0.5, 0.25], "negatives": [[0.1, 0.2], [0.3, 0.4]]}),
                   tmp_path / "renamed.parquet")
    paths = {"CACHE_IS_A_FILE": str(tmp_path / "file"), "CACHE": str(tmp_path / "cache"),
             "MISSING/out.parquet": str(tmp_path / "missing" / "out.parquet"), "RUN": str(tmp_path / "run"),
             "PREDS_DIR": str(tmp_path / "preds"), "EMPTY_DIR": str(tmp_path / "empty"),
             "RECORDS_DIR": str(tmp_path / "records"), "PREDS_FILE": str(tmp_path / "scores.parquet"),
             "RECORD_FILE": str(tmp_path / "record.json"), "git:HUB": f"git:{tmp_path / 'hub'}",
             "RENAMED_RANKING": str(tmp_path / "renamed.parquet")}
    try:
        returned = main([paths.get(a, a) for a in argv])
    except SystemExit as exited:  # a usage mistake ends in the parser, with argparse's exit
        returned = exited.code
    assert returned == code
    lines = [line for line in capsys.readouterr().err.splitlines()
             if line.strip() and not line.startswith("compiling ")]  # a first-use JIT notice may precede the error
    assert len(lines) == 1 and re.search(words, lines[0]), lines
    assert not (tmp_path / "run").exists()  # refused before a run folder was made


@pytest.mark.parametrize("code, advice", [("ENOSPC", "the disk is full. The disk mounted at"),
                                          ("EROFS", "the file system is read-only"),
                                          ("EACCES", "no permission to write there")])
def test_a_cache_that_cannot_be_written_is_one_line(code, advice, tmp_path, capsys, monkeypatch) -> None:
    """A full disk, a read-only file system or a folder without permission (simulated: this suite runs as root, and
    filling a disk is not a unit test) is named with its advice, not reported as a source failure, and leaves no
    temporary file behind."""
    import errno

    real_replace = os.replace
    cache = tmp_path / "cache"

    def failing(src, dst, *args, **kwargs):
        if str(dst).startswith(str(cache)):
            raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)), str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", failing)
    assert main(["--offline", "--cache-dir", str(cache), "get", "t-grab/pdet-2-16"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot write" in lines[0] and advice in lines[0], lines
    assert "offline" not in lines[0]  # the old advice (turn offline mode off) was wrong for a local write failure
    assert not [p for p in cache.rglob("*") if p.is_file() and not p.name.endswith(".lock")]  # no staging, no .tmp


def test_a_real_full_disk_is_one_line_and_a_smaller_dataset_fits_after_it(tmp_path, capsys) -> None:
    """On a 2 MiB disk, `get` of a 4 MiB dataset fails with one line naming the disk, its free bytes and the fix,
    not the offline advice, and leaves nothing behind: a 300 KiB dataset then installs."""
    from tests.test_cache import leftovers, small_disk

    with small_disk(tmp_path / "disk", "2m") as disk:
        cache = str(disk / "cache")
        assert main(["--offline", "--cache-dir", cache, "get", "t-grab/pdet-2-16"]) == 2
        lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"tgbhub: error: cannot write t-grab/pdet-2-16@1.0.0 into the cache at {cache}: "
                                   f"the disk is full. The disk mounted at {disk} has ")
        assert "Free space on" in lines[0] and "--cache-dir DIR or TGBHUB_CACHE=DIR" in lines[0]
        assert "ffline" not in lines[0] and "requested and" not in lines[0]
        assert leftovers(disk / "cache") == []
        assert main(["--offline", "--cache-dir", cache, "get", "t-grab/pdet-2-1"]) == 0


def test_ctrl_c_in_a_real_process_exits_130_with_one_line(tmp_path) -> None:
    """SIGINT while a family builds: exit 130, one line on stderr, no traceback, no half-written file in place."""
    import signal
    import time

    env = {**os.environ, "TGBHUB_NO_PROGRESS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "tgbhub.cli", "--offline", "--cache-dir", str(tmp_path / "c"),
                             "build", "--family", "t-grab"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env,
                            # a suite started in the background (`pytest &` in a script) ignores SIGINT, and a child
                            # that inherits that never sees the Ctrl-C this test sends
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def started() -> bool:  # a second dataset's folder: real work is under way
        family = tmp_path / "c" / "t-grab"
        return family.is_dir() and len(os.listdir(family)) >= 2

    deadline = time.monotonic() + 60
    while not started() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert [line for line in err.splitlines() if line.strip()] == [
        "tgbhub: interrupted (nothing half-written takes its final name)"]


def test_an_unreadable_tgb_release_is_one_line_and_a_clean_exit(tmp_path) -> None:
    """An empty edge-list CSV in a TGB zip: the error line and exit 2, every time (it used to abort with exit 134
    after the message in 2 of 3 runs)."""
    from tests import tgb_formats as formats

    files = formats.write_tgbl(tmp_path / "files", "tgbl-wiki", n_edges=200, seed=0)
    edges = files.files["edgelist"]
    edges.write_text(edges.read_text().splitlines()[0] + "\n")  # the header alone
    zipped = formats.zip_dataset(files, tmp_path / "zips")
    for run in range(3):
        done = subprocess.run([sys.executable, "-m", "tgbhub.cli", "--offline", "--cache-dir",
                               str(tmp_path / f"c{run}"), "import", "tgb/tgbl-wiki", "--from", str(zipped)],
                              capture_output=True, text=True, timeout=120)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1 and "not a CSV in TGB's layout" in lines[0], done.stderr


def test_ctrl_c_exits_130_with_one_line(capsys, monkeypatch) -> None:
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(datasets, "run_list", interrupted)
    assert main(["list"]) == 130
    assert capsys.readouterr().err.strip() == "tgbhub: interrupted (nothing half-written takes its final name)"


def test_quiet_silences_progress_and_notices_while_the_command_runs(monkeypatch) -> None:
    seen = {}

    def record(args):
        seen.update({key: os.environ.get(key) for key in ("TGBHUB_NO_PROGRESS", "TGBHUB_QUIET")})
        return 0

    monkeypatch.delenv("TGBHUB_NO_PROGRESS", raising=False)
    monkeypatch.setattr(datasets, "run_list", record)
    assert main(["list", "--quiet"]) == 0
    assert seen == {"TGBHUB_NO_PROGRESS": "1", "TGBHUB_QUIET": "1"}
    assert "TGBHUB_QUIET" not in os.environ and "TGBHUB_NO_PROGRESS" not in os.environ  # restored after


def test_help_lists_every_registered_model_without_importing_them_for_other_runs(capsys) -> None:
    code = ("import sys, tgbhub.cli as c; c.build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('tgbhub.baselines', 'tgbhub.trainers'))))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
    with pytest.raises(SystemExit):
        main(["baseline", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "window-link-forecasting:" in text and "edgebank-thr" in text and "rollout-forecasting: linear" in text


def test_list_prints_one_placeholder_and_labels_time_by_its_kind(tmp_path, capsys) -> None:
    """Unknown values (an import's counts before it is imported) are one placeholder; the time column says what it
    counts: snapshots (discrete time), timestamps (continuous time), steps (trajectories)."""
    assert main(["--cache-dir", str(tmp_path), "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    assert "time" in header and "num_snapshots" not in header
    cells = [re.split(r"\s{2,}", line) for line in lines[1:]]
    assert not any(cell in {"None", "", "nan"} for row in cells for cell in row)
    time = {row[0]: row[header.index("time")] for row in cells}
    assert time["tgb/tgbl-wiki"].endswith(" timestamps") and time["tgb/tgbl-enron"] == datasets.UNKNOWN
    assert time["t-grab/ce-64"] == "4064 snapshots" and time["chaosnet/mini-k2.0-rho0.1-n8"].endswith(" steps")
    wiki = next(row for row in cells if row[0] == "tgb/tgbl-wiki")
    assert wiki[1:4] == [datasets.UNKNOWN] * 3  # version, nodes, rows: known once imported


def test_the_demo_explains_what_it_prints_in_short_lines(tmp_path) -> None:
    """scripts/demo.py (what scripts/demo runs): every line under 100 characters, every verdict and metric it prints
    said in words."""
    pytest.importorskip("olah")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "TGBHUB_OFFLINE": "1", "TGBHUB_NO_PROGRESS": "1"}
    run = subprocess.run([sys.executable, str(root / "scripts" / "demo.py"), "--cache-dir", str(tmp_path / "cache")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert max(len(line) for line in lines) < 100
    text = run.stdout
    for verdict in {m.group(1) for m in re.finditer(r"-> ([a-z-]+)$", text, re.MULTILINE)}:
        assert re.search(rf"^  {verdict}: \w", text, re.MULTILINE), f"the demo does not say what {verdict} means"
    assert "mrr: mean of 1/rank" in text and "hits@k: share ranked in the top k" in text
    assert "never 1st, nearly always top 10" in text  # EdgeBank's hits@1 = 0 next to hits@10 = 1, explained
