"""ChaosNetBench's four forecasters (as upstream's train.py runs them): shapes, sizes as run, the receptive fields,
fitting, determinism, and equality with plain re-statements of upstream's forward passes (which pad both sides and
trim, keep filter and gate apart, sum skips over all steps and lay tensors out (B, C, V, T))."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from tgbhub.errors import InvalidNameError  # noqa: E402
from tgbhub.trainers.chaosnet_models import MODELS  # noqa: E402

#: tiny sizes with every branch still taken (GWNet's 3 layers see 48 > 8 steps: no padding, last step read)
TINY = {"dlinear": {}, "lstm": {"hidden": 16, "layers": 2, "dropout": 0.0},
        "tcn": {"channels": 8, "layers": 2, "end_channels": 16, "dropout": 0.0},
        "graph_wavenet": {"layers": 3, "residual_channels": 8, "dilation_channels": 8, "skip_channels": 16,
                          "end_channels": 16, "embed_dim": 4, "dropout": 0.0}}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def build(name: str, nodes: int, seed: int = 0, **overrides):
    builder, defaults, _ = MODELS[name]
    torch.manual_seed(seed)
    return builder(nodes, **{**defaults, **overrides})


def count(module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_registry_has_the_four_models_with_the_learning_rates_as_run():
    assert {name: lr for name, (_, _, lr) in MODELS.items()} == {
        "dlinear": 3e-4, "lstm": 3e-3, "tcn": 3e-3, "graph_wavenet": 3e-4}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("nodes", [16, 8])
def test_default_model_maps_48_steps_to_12(name, nodes):
    model = build(name, nodes)
    x = torch.randn(3, 48, nodes)
    for mode in (model.train, model.eval):
        mode()
        out = model(x)
        assert out.shape == (3, 12, nodes)
        assert out.dtype == torch.float32 and torch.isfinite(out).all()


def test_parameter_counts_as_run_at_n8():
    # DLinear's 1,176 is upstream's as run; the others follow from the sizes as run (V = 16), so a changed size fails
    # here.
    counts = {name: count(build(name, 16)) for name in MODELS}
    assert counts == {"dlinear": 1176, "lstm": 66752, "tcn": 36492, "graph_wavenet": 60940}
    assert count(build("dlinear", 64)) == 1176  # shared across channels: independent of V


def test_dlinear_is_moving_average_decomposition_with_edge_padding():
    model = build("dlinear", 5)
    x = torch.randn(4, 48, 5, dtype=torch.float32)
    series = x.transpose(1, 2)  # (B, V, L)
    padded = torch.cat([series[..., :1].expand(-1, -1, 12), series, series[..., -1:].expand(-1, -1, 12)], dim=-1)
    trend = F.avg_pool1d(padded, 25, stride=1)
    expected = model.trend(trend) + model.seasonal(series - trend)
    torch.testing.assert_close(model(x), expected.transpose(1, 2), rtol=1e-5, atol=1e-5)


def reference_tcn(model, x):
    """Upstream's TCN forward: both-side padding then trimming, separate filter/gate, skips summed over all steps."""
    batch, steps, nodes = x.shape
    h = model.input_conv(x.transpose(1, 2).reshape(batch * nodes, 1, steps))
    skip = 0
    for gated, skip_conv, residual, norm, pad in zip(model.gated, model.skip, model.residual, model.norms,
                                                     model.pads):
        half = gated.out_channels // 2
        conv = dict(padding=pad, dilation=gated.dilation)
        f = F.conv1d(h, gated.weight[:half], gated.bias[:half], **conv)[..., :steps]
        g = F.conv1d(h, gated.weight[half:], gated.bias[half:], **conv)[..., :steps]
        z = model.dropout(torch.tanh(f) * torch.sigmoid(g))
        skip = skip + skip_conv(z)
        h = norm(h + residual(z))
    out = model.end2(F.relu(model.end1(F.relu(skip[..., -1:]))))
    return out.squeeze(-1).reshape(batch, nodes, -1).transpose(1, 2)


def reference_gwnet(model, x):
    """Upstream's GWNet forward in its (B, C, V, T) layout, with einsum diffusion and skips over all steps."""
    h = x.transpose(1, 2).unsqueeze(1)
    h = F.pad(h, (max(model.receptive_field - h.shape[-1], 0), 0))
    h = F.conv2d(h, model.input_conv.weight, model.input_conv.bias)
    a = model.adjacency()
    skip = 0
    for gated, along, against, skip_conv, norm in zip(model.gated, model.diffuse_forward, model.diffuse_backward,
                                                      model.skip, model.norms):
        half = gated.out_channels // 2
        weight = gated.weight.transpose(2, 3)  # (out, in, 1, 2): kernel along the last (time) axis
        dilation = (1, gated.dilation[0])
        f = F.conv2d(h, weight[:half], gated.bias[:half], dilation=dilation)
        g = F.conv2d(h, weight[half:], gated.bias[half:], dilation=dilation)
        z = model.dropout(torch.tanh(f) * torch.sigmoid(g))
        s = skip_conv(z)
        skip = s if isinstance(skip, int) else skip[..., -s.shape[-1]:] + s
        gc = along(torch.einsum("ij,bcjt->bcit", a, z)) + against(torch.einsum("ij,bcjt->bcit", a.T, z))
        h = norm(h[..., -z.shape[-1]:] + gc)
    out = model.end2(F.relu(model.end1(F.relu(skip[..., -1:]))))
    return out.squeeze(-1)


@pytest.mark.parametrize("name,reference", [("tcn", reference_tcn), ("graph_wavenet", reference_gwnet)])
@pytest.mark.parametrize("sizes", ["default", "tiny"])
@pytest.mark.parametrize("steps", [48, 20])  # longer and shorter than TCN's receptive field (31), as run
def test_fast_forward_equals_upstream_forward(name, reference, sizes, steps):
    model = build(name, 6, **({"dropout": 0.0} if sizes == "default" else TINY[name]))
    x = torch.randn(5, steps, 6)
    # train: every step, batch statistics; eval: running statistics and only the steps the forecast reads
    for mode in (model.train, model.eval):
        mode()
        torch.testing.assert_close(model(x), reference(model, x), rtol=1e-4, atol=1e-5)


def input_gradient(model, x):
    """|d out / d x| summed over the batch: (L, V_in) per output node, shape (V_out, L, V_in)."""
    model.eval()
    rows = []
    for node in range(x.shape[2]):
        x_ = x.clone().requires_grad_(True)
        model(x_)[:, :, node].sum().backward()
        rows.append(x_.grad.abs().sum(dim=0))
    return torch.stack(rows)


def test_graph_wavenet_sees_all_48_steps_and_other_nodes():
    model = build("graph_wavenet", 6)
    assert model.receptive_field == 64
    grad = input_gradient(model, torch.randn(2, 48, 6))
    assert (grad.sum(dim=(0, 2)) > 0).all()  # every input step reaches the forecast
    off_diagonal = grad.sum(dim=1)[~torch.eye(6, dtype=torch.bool)]
    assert (off_diagonal > 0).all()  # and the diffusion mixes nodes


def test_tcn_sees_the_last_31_steps_of_its_own_node_only():
    model = build("tcn", 6)
    assert model.receptive_field == 31
    grad = input_gradient(model, torch.randn(2, 48, 6))
    per_step = grad.sum(dim=(0, 2))
    assert (per_step[:17] == 0).all() and (per_step[17:] > 0).all()
    per_node = grad.sum(dim=1)
    assert (per_node[~torch.eye(6, dtype=torch.bool)] == 0).all() and (per_node.diagonal() > 0).all()


def test_dlinear_is_per_channel_and_lstm_mixes_channels():
    assert (input_gradient(build("dlinear", 4), torch.randn(2, 48, 4)).sum(dim=1)
            [~torch.eye(4, dtype=torch.bool)] == 0).all()
    assert (input_gradient(build("lstm", 4), torch.randn(2, 48, 4)).sum(dim=1) > 0).all()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tiny_model_overfits_a_tiny_batch(name):
    model = build(name, 4, **TINY[name])
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(4, 48, 4, generator=gen), torch.randn(4, 12, 4, generator=gen)
    optimiser = torch.optim.Adam(model.parameters(), lr=3e-2)
    losses = []
    for _ in range(40):
        optimiser.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_same_seed_same_weights_outputs_and_gradients(name):
    x = torch.randn(3, 48, 6)

    def run():
        model = build(name, 6, seed=7)
        torch.manual_seed(3)  # dropout masks in train mode
        out = model(x)
        out.square().mean().backward()
        return out.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)  # as the trainer runs on CPU: no op may refuse
    try:
        (out_a, grads_a), (out_b, grads_b) = run(), run()
    finally:
        torch.use_deterministic_algorithms(previous)
    assert torch.equal(out_a, out_b)
    assert len(grads_a) == len(grads_b) > 0 and all(torch.equal(a, b) for a, b in zip(grads_a, grads_b))
    assert not torch.equal(build(name, 6, seed=7)(x), build(name, 6, seed=8)(x))


def test_checkpoint_holds_only_learned_state():
    state = build("dlinear", 4).state_dict()
    assert sorted(state) == ["seasonal.bias", "seasonal.weight", "trend.bias", "trend.weight"]


@pytest.mark.parametrize("name,bad", [("dlinear", {"kernel_size": 24}), ("dlinear", {"kernel_size": 0}),
                                      ("lstm", {"hidden": 0}), ("tcn", {"dropout": 1.0}),
                                      ("graph_wavenet", {"layers": -1})])
def test_bad_sizes_are_refused(name, bad):
    with pytest.raises(InvalidNameError, match=next(iter(bad))):
        build(name, 4, **bad)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning:torch.*")  # torch's own internals, not these models
@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_model_matches_eager(name):
    model = build(name, 4, **TINY[name]).eval()
    x = torch.randn(2, 48, 4)
    compiled = torch.compile(model)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    model.train()
    compiled(x).square().mean().backward()  # the training graph compiles too
