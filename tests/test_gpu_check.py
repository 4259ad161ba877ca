"""scripts/gpu-check and scripts/gpu-report: the GPU plan rehearsed on the CPU (the dry run), its budget on a fake
clock, a half-done reproduction resumed from its fit state, and the docs tables rendered from the records."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from scripts import gpu_check, gpu_report  # noqa: E402
from scripts.gpu_check import DRY, DRY_INSTANCES, GPU, Context, Outcome, Step  # noqa: E402
from tgbhub.results import records  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

#: what each kind's record holds, on a GPU and in a dry run alike
DATA_KEYS = {
    "speed": {"dataset", "model", "batch_size", "full_batches", "measured_batches", "train_epoch_s",
              "train_epoch_extrapolated", "val_pass_s", "rollout_s", "upstream_loop_workers",
              "upstream_published_h100_epoch_s", "goal_epoch_s"},
    "evaluate": {"queries", "negatives", "repeats", "rows"},
    "agreement": {"dataset", "model", "epochs", "batches_per_epoch", "val_mse", "max_rel_val_mse_diff",
                  "max_abs_weight_diff", "rtol", "agrees", "tf32"},
    "reproduction": {"dataset", "model", "seed", "published", "result_record"},
}


#: glibc keeps freed memory for reuse in the dry run: its training steps free and allocate torch's tensors again at
#: every batch, and under glibc's defaults refaulting their pages takes half the run (about 20 of 40 s)
KEEP_FREED_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(256 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(256 * 2**20)}


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("gpu-check")
    done = subprocess.run([str(ROOT / "scripts" / "gpu-check"), "--dry-run", "--out", str(base / "out"),
                           "--cache-dir", str(base / "cache")], capture_output=True, text=True, timeout=900,
                          env={**os.environ, **KEEP_FREED_MEMORY})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return base, done.stdout


def test_the_dry_run_writes_a_record_of_the_gpu_plans_shape_for_every_step(dry_run):
    base, stdout = dry_run
    written = {json.loads(p.read_text())["step"]: json.loads(p.read_text())
               for p in (base / "out" / "records").glob("*.json")}
    dry_steps, gpu_steps = gpu_check.plan(DRY), gpu_check.plan(GPU)
    assert sorted(written) == sorted(s.key for s in dry_steps)
    assert [s.kind for s in dry_steps] == [s.kind for s in gpu_steps] and len(gpu_steps) == 20
    assert "all 20 steps are measured" in stdout
    for key, record in written.items():
        assert record["format"] == gpu_check.FORMAT and record["dry_run"] is True and record["status"] == "measured"
        assert set(record["data"]) == DATA_KEYS[record["kind"]], key
        body = {k: v for k, v in record.items() if k != "record_sha256"}
        assert record["record_sha256"] == records.record_sha256(body), key
    speed = written["speed/graph_wavenet"]["data"]
    assert speed["train_epoch_extrapolated"] and speed["measured_batches"] == {"tgbhub": 2, "upstream": 2}
    assert speed["upstream_published_h100_epoch_s"] == 78.0 and speed["goal_epoch_s"] == 4.0
    assert written["agreement/lstm"]["data"]["agrees"]  # a dry run's two sides are both the CPU: bit-identical
    run = written[f"reproduction/tcn/{DRY_INSTANCES[1].split('/')[1]}/s44"]["data"]
    records.check_record(run["result_record"])
    assert run["result_record"]["model"]["seed"] == 44 and run["result_record"]["metrics"]["test_mse"] > 0


def test_a_second_run_runs_nothing_and_the_report_renders_every_kind(dry_run, tmp_path):
    base, _ = dry_run
    again = subprocess.run([str(ROOT / "scripts" / "gpu-check"), "--dry-run", "--out", str(base / "out"),
                            "--cache-dir", str(base / "cache"), "--list"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and again.stdout.count("measured") == 20 and "to run" not in again.stdout
    page, figure = tmp_path / "gpu.md", tmp_path / "gpu.png"
    page.write_text(f"# GPU\n\nkept\n\n{gpu_report.START}\nold\n{gpu_report.END}\n\ntail\n")
    assert gpu_report.main([str(base / "out" / "records"), "--page", str(page), "--figure", str(figure)]) == 0
    text = page.read_text()
    assert text.startswith("# GPU\n\nkept") and text.rstrip().endswith("tail") and "old" not in text
    assert "dry run (CPU)" in text and "extrapolated from 2 of" in text and "s42:" in text
    assert "| dlinear | PyTorch's defaults, 1 epoch(s) x 2 batches, seed 42 | 0.00e+00" in text
    assert "| lstm | TF32 off, 1 epoch(s) x 2 batches, seed 42 | 0.00e+00" in text
    assert "not run yet (seeds 42, 43, 44)" in text  # the real instances: a dry run uses the mini ones
    assert figure.stat().st_size > 10_000
    assert gpu_report.save(gpu_report.read_records([base / "out" / "records"]), tmp_path / "kept") == 0


def _fake(limits=GPU, **changes):
    return dataclasses.replace(limits, device="cpu", **changes)


def test_the_plan_keeps_to_its_budget_on_a_fake_clock(tmp_path):
    now = [0.0]
    ran: list[tuple[str, float]] = []

    def costing(seconds: float, status: str = "done"):
        def act(ctx, left):
            ran.append((key_of[id(act)], left))
            now[0] += seconds
            return Outcome(status, {"took": seconds}, "")
        return act

    costs = {"a": (240, False), "b": (300, False), "c": (180, False), "r1": (200, True), "d": (60, False)}
    key_of, steps = {}, []
    for key, (cost, resumable) in costs.items():
        act = costing(cost, "paused" if resumable else "done")
        key_of[id(act)] = key
        steps.append(Step(key, "test", act, resumable=resumable))
    limits = _fake(estimates={"a": 240, "b": 300, "c": 180, "d": 60}, min_slice=90, margin=30)
    lines: list[str] = []
    left = gpu_check.run_plan(steps, Context(tmp_path, limits), budget_s=600, clock=lambda: now[0], say=lines.append)
    # a (4 min) and b (5 min) fit in 10; c (3 min) does not fit in the 1 left, nor does r1's 1.5-minute slice;
    # d (1 min) still does
    assert [k for k, _ in ran] == ["a", "b", "d"] and now[0] <= 600
    assert [(item.key, item.why.split(":")[0]) for item in left] == [("c", "not started"), ("r1", "not started")]
    assert "needs about 3.0 min, 1.0 left" in left[0].why and "3 of 5 steps measured" in lines[-1]
    # the next command: the done steps are skipped, a resumable one is handed what is left
    now[0], ran[:] = 0.0, []
    left = gpu_check.run_plan(steps, Context(tmp_path, limits), budget_s=600, clock=lambda: now[0], say=lines.append)
    assert ran == [("c", 600), ("r1", 420)] and [item.key for item in left] == ["r1"]
    assert left[0].why.startswith("paused")


def test_a_failing_step_is_recorded_and_the_plan_goes_on(tmp_path):
    def broken(ctx, left):
        raise RuntimeError("no py-tgb here")

    steps = [Step("x", "test", broken), Step("y", "test", lambda ctx, left: Outcome("done", {}))]
    left = gpu_check.run_plan(steps, Context(tmp_path, _fake(DRY)), budget_s=60, say=lambda line: None)
    assert [item.key for item in left] == ["x"] and "RuntimeError: no py-tgb here" in left[0].why
    failed = json.loads((tmp_path / "records" / "x.json").read_text())
    assert failed["status"] == "failed" and not Context(tmp_path, DRY).done("x") and Context(tmp_path, DRY).done("y")


def test_a_half_done_reproduction_resumes_from_its_fit_state(tmp_path):
    step = gpu_check.reproduction_step("tcn", DRY_INSTANCES[0], 42)
    ctx = Context(tmp_path / "out", DRY, tmp_path / "cache")
    paused = step.action(ctx, 0.0)  # no time at all: one epoch (one always runs), then the fit pauses
    assert paused.status == "paused" and "paused after epoch 1" in paused.note
    state = ctx.runs / step.key.replace("/", "__") / "fit-state.pt"
    assert state.exists() and not ctx.done(step.key)
    packed = gpu_check.pack(ctx.out, tmp_path / "slot.tgz")
    assert f"out/runs/{state.parent.name}/fit-state.pt" in tarfile.open(packed).getnames()
    left = gpu_check.run_plan([step], ctx, budget_s=600, say=lambda line: None)
    assert left == [] and ctx.done(step.key)
    resumed = json.loads(ctx.record_path(step.key).read_text())["data"]["result_record"]
    assert json.loads((state.parent / "result.json").read_text())["history"][0]["epoch"] == 0
    # the same run without a pause: bit-identical on the CPU, so the same graded metrics
    straight_ctx = Context(tmp_path / "straight", DRY, tmp_path / "cache")
    gpu_check.run_plan([step], straight_ctx, budget_s=600, say=lambda line: None)
    straight = json.loads(straight_ctx.record_path(step.key).read_text())["data"]["result_record"]
    assert resumed["metrics"] == straight["metrics"] and resumed["model"]["epochs"] == 2
    names = tarfile.open(gpu_check.pack(ctx.out, tmp_path / "after.tgz")).getnames()
    assert not any(name.endswith("fit-state.pt") for name in names) and any("records" in n for n in names)
