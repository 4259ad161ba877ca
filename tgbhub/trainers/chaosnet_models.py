"""ChaosNetBench's four trainable forecasters as torch modules, with the sizes the published runs used.

Every model maps a window ``x`` of shape ``(B, L, V)`` (``L = 48`` normalised steps of all ``V = 2N`` variables)
to the next ``H = 12`` steps, ``(B, H, V)``. Architectures and hyper-parameters follow upstream's
``chaosnetbench/models.py`` with the values ``scripts/train.py`` actually ran (``MODEL_HP_REGISTRY`` and
``LR_OVERRIDES``), not the unused ``configs/benchmark.yaml``.

They compute the same functions as upstream's modules, written for speed where that changes no result:

- ``dlinear``: the moving average is a fixed ``(L, L)`` matrix, so trend and seasonal maps fold into one
  ``(H, L)`` weight per forward pass (one matmul, no padding or convolution per call).
- ``tcn``: causal convolutions pad on the left only (upstream pads both sides and trims the right), and the
  filter/gate pair of each layer is one convolution with twice the channels (same parameter count and
  initialisation distribution); skip convolutions run on the last step only, the one the head reads.
- ``graph_wavenet``: tensors are laid out ``(B, C, T, V)`` so the diffusion over nodes is one matmul on the last axis
  for both directions at once; skip convolutions run on the last step only.
- ``tcn`` and ``graph_wavenet`` in eval mode compute only the steps the forecast depends on (BatchNorm then uses
  running statistics, so steps are independent): the dilated tree below the last step, 4x less work as run.

Upstream's GWNet also creates a 1x1 ``residual_convs`` per layer that its forward never uses; those dead weights
are left out here (upstream's parameter count is this one plus ``layers * (residual_channels**2 +
residual_channels)``: 67,276 against 60,940 at N = 8).

No model loops over nodes or batch items, none hard-codes a device or dtype, and all use ops with deterministic CPU
kernels (no scatter, no replicate padding), so ``torch.use_deterministic_algorithms(True)`` holds on CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

import torch
from torch import nn
from torch.nn import functional as F

from tgbhub.errors import InvalidNameError

#: upstream's window: 48 input steps, 12 predicted steps
INPUT_LEN = 48
HORIZON = 12


def _check_sizes(model: str, **sizes: int) -> None:
    """Positive integer sizes, or an error naming the offending hyper-parameter."""
    for name, value in sizes.items():
        if int(value) != value or value < 1:
            raise InvalidNameError(f"{model}: {name} must be a positive integer, got {value!r}")


def _check_dropout(model: str, dropout: float) -> None:
    if not 0.0 <= float(dropout) < 1.0:
        raise InvalidNameError(f"{model}: dropout must be in [0, 1), got {dropout!r}")


def moving_average_matrix(length: int, kernel_size: int) -> torch.Tensor:
    """The ``(length, length)`` matrix ``M`` with ``trend = M @ x``: a centred ``kernel_size``-step mean over ``x``
    padded by repeating its first and last values ``(kernel_size - 1) // 2`` times, as DLinear's ``series_decomp``.

    Raises:
        InvalidNameError: for an even or non-positive ``kernel_size`` (the padded series would lose a step).
    """
    _check_sizes("dlinear", input_len=length, kernel_size=kernel_size)
    if kernel_size % 2 == 0:
        raise InvalidNameError(f"dlinear: kernel_size must be odd (DLinear pads (k - 1) // 2 on each side and an "
                               f"even k would shorten the series), got {kernel_size}")
    half = (kernel_size - 1) // 2
    # Replicate padding = clamping the source index; one-hot rows summed give the repeated weights at the edges.
    source = (torch.arange(length)[:, None] + torch.arange(-half, half + 1)[None, :]).clamp(0, length - 1)
    return F.one_hot(source, length).sum(dim=1).to(torch.float32) / kernel_size


class DLinear(nn.Module):
    """DLinear: ``x = trend + seasonal`` by a ``kernel_size``-step moving average with edge padding, then
    ``Linear(L -> H)`` on each part, shared across the ``V`` channels, summed. ``2 * (L * H + H)`` parameters
    (1,176 at 48 -> 12), independent of ``V``.

    Raises:
        InvalidNameError: for a non-positive size or an even ``kernel_size``.
    """

    #: the moving-average matrix, a registered buffer (declared here: nn.Module types buffers as ``Tensor | Module``)
    average: torch.Tensor

    def __init__(self, num_nodes: int, *, input_len: int = INPUT_LEN, horizon: int = HORIZON,
                 kernel_size: int = 25) -> None:
        super().__init__()
        _check_sizes("dlinear", num_nodes=num_nodes, horizon=horizon)
        self.trend = nn.Linear(input_len, horizon)
        self.seasonal = nn.Linear(input_len, horizon)
        # Not persistent: it is a function of the sizes, so checkpoints hold only the learned weights.
        self.register_buffer("average", moving_average_matrix(input_len, kernel_size), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # W_t (M x) + W_s (x - M x) = ((W_t - W_s) M + W_s) x: the same linear map, one matmul over the time axis.
        weight = (self.trend.weight - self.seasonal.weight) @ self.average + self.seasonal.weight
        bias = self.trend.bias + self.seasonal.bias
        return torch.matmul(weight, x) + bias[:, None]


class LSTMForecaster(nn.Module):
    """LSTM over the window with all ``V`` variables as the input of each step; the last layer's final hidden
    state goes through ``Linear(hidden -> H * V)``, read as ``(H, V)``.

    Raises:
        InvalidNameError: for a non-positive size or a dropout outside [0, 1).
    """

    def __init__(self, num_nodes: int, *, horizon: int = HORIZON, hidden: int = 64, layers: int = 2,
                 dropout: float = 0.1) -> None:
        super().__init__()
        _check_sizes("lstm", num_nodes=num_nodes, horizon=horizon, hidden=hidden, layers=layers)
        _check_dropout("lstm", dropout)
        self.num_nodes, self.horizon = num_nodes, horizon
        # torch applies LSTM dropout between layers only (and warns for one layer), as upstream's guard does.
        self.lstm = nn.LSTM(num_nodes, hidden, num_layers=layers, batch_first=True,
                            dropout=dropout if layers > 1 else 0.0)
        self.head = nn.Linear(hidden, horizon * num_nodes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, (last, _) = self.lstm(x)
        return self.head(last[-1]).view(x.shape[0], self.horizon, self.num_nodes)


class TCN(nn.Module):
    """Per-node gated dilated causal TCN, weights shared by all nodes ("GWNet without the graph").

    A 1x1 input conv lifts each node's series to ``channels``; then ``layers`` blocks (dilation ``2**i``, kernel
    ``kernel_size``): ``z = dropout(tanh(filter) * sigmoid(gate))``, skip ``+= conv1x1(z)``,
    ``h = BatchNorm(h + conv1x1(z))``. The skip sum at the last step goes through
    ``relu -> conv1x1(channels -> end_channels) -> relu -> conv1x1(end_channels -> H)``.
    Receptive field ``1 + (kernel_size - 1) * (2**layers - 1)`` steps (31 as run).

    Raises:
        InvalidNameError: for a non-positive size or a dropout outside [0, 1).
    """

    def __init__(self, num_nodes: int, *, horizon: int = HORIZON, channels: int = 32, kernel_size: int = 3,
                 layers: int = 4, end_channels: int = 64, dropout: float = 0.1) -> None:
        super().__init__()
        _check_sizes("tcn", num_nodes=num_nodes, horizon=horizon, channels=channels, kernel_size=kernel_size,
                     layers=layers, end_channels=end_channels)
        _check_dropout("tcn", dropout)
        self.horizon = horizon
        self.pads = [(kernel_size - 1) * 2 ** i for i in range(layers)]
        self.receptive_field = 1 + sum(self.pads)
        self.input_conv = nn.Conv1d(1, channels, 1)
        # One conv gives filter and gate halves: 2 * (C*C*k + C) parameters either way, same init bound.
        self.gated = nn.ModuleList(nn.Conv1d(channels, 2 * channels, kernel_size, dilation=2 ** i)
                                   for i in range(layers))
        self.skip = nn.ModuleList(nn.Conv1d(channels, channels, 1) for _ in range(layers))
        self.residual = nn.ModuleList(nn.Conv1d(channels, channels, 1) for _ in range(layers))
        self.norms = nn.ModuleList(nn.BatchNorm1d(channels) for _ in range(layers))
        self.dropout = nn.Dropout(dropout)
        self.end1 = nn.Conv1d(channels, end_channels, 1)
        self.end2 = nn.Conv1d(end_channels, horizon, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, nodes = x.shape
        # Evaluating, BatchNorm uses its running statistics, so steps no longer interact and only the steps the
        # last one depends on need computing: the last receptive_field inputs, and before a layer of dilation d
        # every d-th step (4x less work as run). Training needs every step: batch statistics pool them.
        thin = not self.training and steps >= self.receptive_field
        if thin:
            x, steps = x[:, -self.receptive_field:], self.receptive_field
        h = self.input_conv(x.transpose(1, 2).reshape(batch * nodes, 1, steps))  # every node a sequence
        skip = h.new_zeros(())
        for gated, skip_conv, residual, norm, pad in zip(self.gated, self.skip, self.residual, self.norms,
                                                         self.pads, strict=True):
            # thin: h holds every d-th step, so the dilated causal conv is an undilated unpadded one over h
            conv = cast(nn.Conv1d, gated)  # nn.ModuleList yields its items as plain Modules
            out = F.conv1d(h, conv.weight, conv.bias) if thin else conv(F.pad(h, (pad, 0)))
            filt, gate = out.chunk(2, dim=1)
            z = self.dropout(torch.tanh(filt) * torch.sigmoid(gate))
            skip = skip + skip_conv(z[..., -1:])  # a 1x1 conv: only the step the head reads is needed
            h = norm(h[..., -z.shape[-1]:] + residual(z))
            if thin:  # the next layer's dilation is twice this one's
                h = h[..., (h.shape[-1] - 1) % 2::2]
        out = self.end2(F.relu(self.end1(F.relu(skip))))  # (B*V, H, 1)
        return out.view(batch, nodes, self.horizon).transpose(1, 2)


class GraphWaveNet(nn.Module):
    """Graph WaveNet as upstream runs it: ``layers`` gated dilated temporal convs (kernel 2, dilation ``2**i``) on
    a window left-padded with zeros to the receptive field ``2**layers`` (64 as run), each followed by one-hop
    diffusion forward (``A``) and backward (``A^T``) over the adaptive adjacency
    ``A = softmax(relu(E1 E2^T))`` (rows), with no predefined supports.

    Per layer: ``z = dropout(tanh(filter) * sigmoid(gate))``; skip ``+= conv1x1(z)``;
    ``h = BatchNorm(h[-T':] + conv1x1_f(A z) + conv1x1_b(A^T z))`` (the diffusion replaces upstream's unused
    residual conv, as in the official code). The skip sum at the last step goes through
    ``relu -> conv1x1(skip -> end) -> relu -> conv1x1(end -> H)``. Node embeddings start at ``0.1 * N(0, 1)``.

    Raises:
        InvalidNameError: for a non-positive size or a dropout outside [0, 1).
    """

    def __init__(self, num_nodes: int, *, horizon: int = HORIZON, layers: int = 6, residual_channels: int = 32,
                 dilation_channels: int = 32, skip_channels: int = 64, end_channels: int = 128, embed_dim: int = 10,
                 dropout: float = 0.3) -> None:
        super().__init__()
        _check_sizes("graph_wavenet", num_nodes=num_nodes, horizon=horizon, layers=layers,
                     residual_channels=residual_channels, dilation_channels=dilation_channels,
                     skip_channels=skip_channels, end_channels=end_channels, embed_dim=embed_dim)
        _check_dropout("graph_wavenet", dropout)
        self.receptive_field = 2 ** layers  # 1 + sum of dilations 1..2**(layers-1) at kernel 2
        self.source = nn.Parameter(torch.randn(num_nodes, embed_dim) * 0.1)
        self.target = nn.Parameter(torch.randn(num_nodes, embed_dim) * 0.1)
        # Layout (B, C, T, V): time is axis 2, so temporal convs have kernel (2, 1).
        self.input_conv = nn.Conv2d(1, residual_channels, 1)
        self.gated = nn.ModuleList(nn.Conv2d(residual_channels, 2 * dilation_channels, (2, 1), dilation=(2 ** i, 1))
                                   for i in range(layers))
        self.diffuse_forward = nn.ModuleList(nn.Conv2d(dilation_channels, residual_channels, 1)
                                             for _ in range(layers))
        self.diffuse_backward = nn.ModuleList(nn.Conv2d(dilation_channels, residual_channels, 1)
                                              for _ in range(layers))
        self.skip = nn.ModuleList(nn.Conv2d(dilation_channels, skip_channels, 1) for _ in range(layers))
        self.norms = nn.ModuleList(nn.BatchNorm2d(residual_channels) for _ in range(layers))
        self.dropout = nn.Dropout(dropout)
        self.end1 = nn.Conv2d(skip_channels, end_channels, 1)
        self.end2 = nn.Conv2d(end_channels, horizon, 1)

    def adjacency(self) -> torch.Tensor:
        """The learned ``(V, V)`` adjacency ``softmax(relu(E1 E2^T))``, normalised over each row."""
        return F.softmax(F.relu(self.source @ self.target.T), dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        nodes = x.shape[2]
        # Evaluating, BatchNorm uses its running statistics, so steps no longer interact and only the steps the
        # last one depends on need computing: the last receptive_field inputs, and before a layer of dilation d
        # every d-th step (4x less work as run). Training needs every step: batch statistics pool them.
        thin = not self.training
        h = x.unsqueeze(1)[:, :, -self.receptive_field:] if thin else x.unsqueeze(1)  # (B, 1, T, V)
        if h.shape[2] < self.receptive_field:
            h = F.pad(h, (0, 0, self.receptive_field - h.shape[2], 0))
        h = self.input_conv(h)
        a = self.adjacency()
        # z @ [A^T | A] gives (A z) and (A^T z) over the node axis for every (b, c, t) in one matmul.
        supports = torch.cat([a.T, a], dim=1)
        skip = h.new_zeros(())
        for gated, along, against, skip_conv, norm in zip(self.gated, self.diffuse_forward, self.diffuse_backward,
                                                          self.skip, self.norms, strict=True):
            # thin: h holds every d-th step, so the dilated conv is an undilated one over h
            conv = cast(nn.Conv2d, gated)  # nn.ModuleList yields its items as plain Modules
            filt, gate = (F.conv2d(h, conv.weight, conv.bias) if thin else conv(h)).chunk(2, dim=1)
            z = self.dropout(torch.tanh(filt) * torch.sigmoid(gate))
            skip = skip + skip_conv(z[:, :, -1:])  # a 1x1 conv: only the step the head reads is needed
            diffused = torch.matmul(z, supports)
            h = h[:, :, -z.shape[2]:] + along(diffused[..., :nodes]) + against(diffused[..., nodes:])
            h = norm(h)
            if thin:  # the next layer's dilation is twice this one's
                h = h[:, :, (h.shape[2] - 1) % 2::2]
        out = self.end2(F.relu(self.end1(F.relu(skip))))  # (B, H, 1, V)
        return out.squeeze(2)


#: name -> (builder ``(num_nodes, **hparams) -> nn.Module``, hyper-parameters as run, learning rate as run).
#: Learning rates are ``scripts/train.py``'s ``LR_OVERRIDES`` (GWNet's 3e-4 is the code's; Table 7 of the
#: paper omits it).
MODELS: Mapping[str, tuple[Callable[..., nn.Module], dict[str, Any], float]] = {
    "dlinear": (DLinear, {"input_len": INPUT_LEN, "horizon": HORIZON, "kernel_size": 25}, 3e-4),
    "lstm": (LSTMForecaster, {"horizon": HORIZON, "hidden": 64, "layers": 2, "dropout": 0.1}, 3e-3),
    "tcn": (TCN, {"horizon": HORIZON, "channels": 32, "kernel_size": 3, "layers": 4, "end_channels": 64,
                  "dropout": 0.1}, 3e-3),
    "graph_wavenet": (GraphWaveNet, {"horizon": HORIZON, "layers": 6, "residual_channels": 32,
                                     "dilation_channels": 32, "skip_channels": 64, "end_channels": 128,
                                     "embed_dim": 10, "dropout": 0.3}, 3e-4),
}
