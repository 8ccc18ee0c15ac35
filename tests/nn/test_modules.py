"""Module machinery: registration, walking, modes, devices, state_dict, repr, init."""

import math

import numpy as np
import pytest

import difflab as dl
import difflab.nn as nn
from difflab.nn import init


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 3)
        self.scale = nn.Parameter(dl.ones(1))
        self.register_buffer("calls", dl.zeros(1), persistent=False)

    def forward(self, x):
        return self.fc2(self.bn(self.fc1(x)).relu()) * self.scale


def test_registration_and_walking():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight",
                     "fc2.bias"]
    assert len(list(net.parameters())) == 7
    assert [n for n, _ in net.named_children()] == ["fc1", "bn", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert [n for n, _ in net.named_buffers()] == ["calls", "bn.running_mean", "bn.running_var",
                                                   "bn.num_batches_tracked"]
    assert net.get_parameter("fc1.weight") is net.fc1.weight
    assert net.num_parameters() == 4 * 8 + 8 + 16 + 8 * 3 + 3 + 1


def test_shared_parameter_listed_once():
    seq = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    seq[1].weight = seq[0].weight
    assert len(list(seq.parameters())) == 3


def test_train_eval_zero_grad_apply():
    net = Net()
    net.eval()
    assert not net.training and not net.fc1.training
    net.train()
    assert net.bn.training
    net(dl.randn(5, 4)).sum().backward()
    assert net.fc1.weight.grad is not None
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Linear", "Net"]


def test_to_dtype_keeps_parameter_objects():
    net = Net()
    w = net.fc1.weight
    net.double()
    assert net.fc1.weight is w and w.dtype == np.float64
    assert net.bn.num_batches_tracked.dtype == np.int64  # integers untouched
    assert net(dl.randn(3, 4).double()).dtype == np.float64


def test_state_dict_keys_and_sharing():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == ["scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias",
                        "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
                        "fc2.weight", "fc2.bias"]  # 'calls' is not persistent
    assert not sd["fc1.weight"].requires_grad
    assert np.shares_memory(sd["fc1.weight"].numpy(), net.fc1.weight.detach().numpy())


def test_load_state_dict_copies_values():
    a, b = Net(), Net()
    b.load_state_dict(a.state_dict())
    for (na, pa), (nb, pb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert na == nb and np.array_equal(pa.numpy(), pb.numpy())


def test_load_state_dict_errors_list_every_problem():
    net = Net()
    sd = net.state_dict()
    del sd["fc1.bias"]
    sd["extra.weight"] = dl.zeros(2)
    sd["fc2.weight"] = dl.zeros(2, 8)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    msg = str(info.value)
    assert 'Missing key(s) in state_dict: "fc1.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra.weight"' in msg
    assert "size mismatch for fc2.weight" in msg and "(2, 8)" in msg and "(3, 8)" in msg
    before = net.fc1.weight.detach().numpy().copy()
    sd2 = Net().state_dict()
    sd2["fc2.weight"] = dl.zeros(2, 8)
    with pytest.raises(RuntimeError):
        net.load_state_dict(sd2)
    assert np.array_equal(net.fc1.weight.detach().numpy(), before)  # nothing copied


def test_load_state_dict_non_strict():
    net = Net()
    sd = net.state_dict()
    del sd["scale"]
    sd["other"] = dl.zeros(1)
    missing, unexpected = net.load_state_dict(sd, strict=False)
    assert missing == ["scale"] and unexpected == ["other"]


def test_repr_is_readable():
    text = repr(nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten()))
    assert text == (
        "Sequential(\n"
        "  (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
        "  (1): ReLU()\n"
        "  (2): Flatten(start_dim=1, end_dim=-1)\n"
        ")"
    )


def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.Linear)
    assert len(seq[1:]) == 2 and isinstance(seq[1:], nn.Sequential)
    with pytest.raises(IndexError):
        seq[3]
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ml.append(nn.Tanh())
    assert len(ml) == 4 and len(list(ml.parameters())) == 6
    md = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.ReLU()})
    assert "a" in md and list(md.keys()) == ["a", "b"]
    holder = nn.Module()
    holder.blocks = ml
    assert len(list(holder.parameters())) == 6


def test_deleting_from_a_sequential_renumbers_so_append_replaces_nothing():
    # (the keys stayed '1', '2' after del seq[0], and append's key str(len) = '2' silently
    # replaced the Tanh; PyTorch renumbers after a deletion)
    seq = nn.Sequential(nn.Linear(1, 1), nn.ReLU(), nn.Tanh())
    del seq[0]
    assert [name for name, _ in seq.named_children()] == ["0", "1"]
    seq.append(nn.Sigmoid())
    assert [type(m).__name__ for m in seq] == ["ReLU", "Tanh", "Sigmoid"]
    del seq[0:2]
    assert [name for name, _ in seq.named_children()] == ["0"] and len(seq) == 1


def test_assigning_non_parameter_to_parameter_slot_is_an_error():
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="nn.Parameter"):
        lin.weight = dl.zeros(2, 2)


def test_module_without_super_init():
    class Bad(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match="super"):
        Bad()


def test_default_initialisations_follow_pytorch():
    dl.manual_seed(0)
    lin = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    assert np.abs(lin.weight.detach().numpy()).max() <= bound
    assert np.abs(lin.weight.detach().numpy()).max() > 0.9 * bound
    assert np.abs(lin.bias.detach().numpy()).max() <= bound
    conv = nn.Conv2d(4, 8, 3, groups=2)
    bound = 1 / math.sqrt(2 * 9)
    assert np.abs(conv.weight.detach().numpy()).max() <= bound
    emb = nn.Embedding(1000, 8)
    assert abs(emb.weight.detach().numpy().std() - 1.0) < 0.05
    bn = nn.BatchNorm2d(3)
    assert np.all(bn.weight.detach().numpy() == 1) and np.all(bn.bias.detach().numpy() == 0)


@pytest.mark.parametrize(
    "fn,expected_std",
    [
        (lambda t: init.xavier_uniform_(t), math.sqrt(2 / (200 + 300))),
        (lambda t: init.xavier_normal_(t), math.sqrt(2 / (200 + 300))),
        (lambda t: init.kaiming_uniform_(t, nonlinearity="relu"), math.sqrt(2 / 300)),
        (lambda t: init.kaiming_normal_(t, nonlinearity="relu"), math.sqrt(2 / 300)),
        (lambda t: init.normal_(t, 0, 0.5), 0.5),
        (lambda t: init.uniform_(t, -1, 1), 1 / math.sqrt(3)),
    ],
)
def test_init_functions(fn, expected_std):
    t = nn.Parameter(dl.zeros(200, 300))
    out = fn(t)
    assert out is t
    assert abs(t.detach().numpy().std() / expected_std - 1) < 0.05
    init.zeros_(t)
    assert not t.detach().numpy().any()
    init.ones_(t)
    assert np.all(t.detach().numpy() == 1)


def test_batchnorm_running_stats_and_eval():
    bn = nn.BatchNorm2d(2, momentum=0.5)
    x = dl.randn(8, 2, 3, 3) * 3 + 1
    y = bn(x)
    assert abs(float(y.mean().item())) < 1e-5
    batch_mean = x.numpy().mean(axis=(0, 2, 3))
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.5 * batch_mean, rtol=1e-5)
    assert int(bn.num_batches_tracked.item()) == 1
    bn.eval()
    out = bn(x).detach().numpy()
    expected = (x.numpy() - bn.running_mean.numpy()[None, :, None, None]) / np.sqrt(
        bn.running_var.numpy()[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_dropout_train_and_eval():
    dl.manual_seed(0)
    drop = nn.Dropout(0.25)
    x = dl.ones(1000, 100)
    y = drop(x).numpy()
    assert abs((y == 0).mean() - 0.25) < 0.01
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    drop.eval()
    assert drop(x) is x


def test_flatten_and_unflatten():
    x = dl.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert nn.Flatten(2)(x).shape == (2, 3, 20)
    assert nn.Unflatten(1, (3, 20))(nn.Flatten()(x)).shape == (2, 3, 20)


def test_activation_modules_match_functions():
    x = dl.randn(3, 4)
    assert np.allclose(nn.Softmax(dim=1)(x).numpy().sum(1), 1)
    assert np.allclose(np.exp(nn.LogSoftmax(dim=1)(x).numpy()).sum(1), 1)
    assert np.allclose(nn.ReLU()(x).numpy(), np.maximum(x.numpy(), 0))
    assert np.allclose(nn.LeakyReLU(0.1)(x).numpy(), np.where(x.numpy() > 0, x.numpy(),
                                                               0.1 * x.numpy()))
    assert np.allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp(-x.numpy())))
    assert np.allclose(nn.Tanh()(x).numpy(), np.tanh(x.numpy()))
    assert nn.GELU()(x).shape == (3, 4)


def test_rnn_and_lstm_shapes_and_gradients():
    dl.manual_seed(0)
    rnn = nn.RNN(3, 5, num_layers=2, batch_first=True)
    out, h = rnn(dl.randn(4, 7, 3))
    assert out.shape == (4, 7, 5) and h.shape == (2, 4, 5)
    out.sum().backward()
    assert rnn.weight_hh_l1.grad is not None
    assert [n for n, _ in rnn.named_parameters()][:4] == ["weight_ih_l0", "weight_hh_l0",
                                                          "bias_ih_l0", "bias_hh_l0"]
    lstm = nn.LSTM(3, 4)
    out, (h, c) = lstm(dl.randn(6, 2, 3))
    assert out.shape == (6, 2, 4) and h.shape == (1, 2, 4) and c.shape == (1, 2, 4)
    cell = nn.RNNCell(3, 4).double()
    x = dl.randn(2, 3).double().requires_grad_()
    assert dl.autograd.gradcheck(lambda x: cell(x), (x,))


class Everything(nn.Module):
    """One of each layer kind: convolution, pooling, normalisation, dropout, recurrence."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.BatchNorm2d(3), nn.GELU(),
                                  nn.MaxPool2d(2), nn.AvgPool2d(1), nn.Flatten())
        self.lstm = nn.LSTM(12, 4, batch_first=True)
        self.embed = nn.Embedding(5, 4)
        self.head = nn.Sequential(nn.LayerNorm(8), nn.Dropout(0.25), nn.Linear(8, 3))

    def forward(self, images, tokens):
        features = self.conv(images)  # (N, 3 * 2 * 2)
        sequence, _ = self.lstm(features.unsqueeze(1).expand(-1, 2, -1))
        return self.head(dl.cat([sequence[:, -1], self.embed(tokens).mean(1)], dim=1))


def test_a_model_of_every_layer_trains_and_round_trips_on_each_device(device, tmp_path):
    """Training on the device gives the CPU's numbers; its state_dict saves and loads anywhere."""

    def train(on):
        dl.manual_seed(0)
        model = Everything().double().to(on)
        opt = dl.optim.Adam(model.parameters(), lr=0.01)
        images = dl.randn(4, 1, 4, 4, dtype=dl.float64).to(on)
        tokens, labels = dl.tensor([[0, 4], [1, 1], [2, 3], [4, 0]]).to(on), dl.tensor(
            [0, 2, 1, 2]).to(on)
        for _ in range(3):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(images, tokens), labels)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        model.eval()
        return model, model(images, tokens).detach().cpu().numpy(), loss.item()

    model, out, loss = train(device)
    _, cpu_out, cpu_loss = train("cpu")
    assert all(p.device == dl.device(device) for p in model.parameters())
    assert all(b.device == dl.device(device) for b in model.buffers())
    np.testing.assert_allclose(out, cpu_out, rtol=1e-10, atol=1e-12)
    assert loss == pytest.approx(cpu_loss, rel=1e-12)
    dl.save(model.state_dict(), tmp_path / "model.pth")
    for target in ("cpu", device):
        fresh = Everything().double().to(target)
        fresh.load_state_dict(dl.load(tmp_path / "model.pth"))
        assert all(p.device == dl.device(target) for p in fresh.parameters())
        for (name, ours), theirs in zip(model.state_dict().items(), fresh.state_dict().values()):
            assert np.array_equal(ours.cpu().numpy(), theirs.cpu().numpy()), name
