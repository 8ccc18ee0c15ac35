"""The snippets of the course notes, run with difflab in place of torch."""

import numpy as np

import difflab as torch  # the notes' spelling
import difflab.nn as nn
import difflab.optim as optim
from difflab.nn import Linear, Module, MSELoss, ReLU
from difflab.nn.init import xavier_uniform_
from difflab.optim import SGD
from difflab.serialization import load, save
from difflab.utils.data import DataLoader, Dataset, random_split


class CustomLayer(nn.Module):
    # As in the notes, except that the notes register ``self.weights`` and then read
    # ``self.weight`` (an AttributeError in PyTorch too); here both say ``weight``.
    def __init__(self, input_size, output_size):
        super(CustomLayer, self).__init__()  # noqa: UP008
        self.weight = nn.Parameter(torch.randn(input_size, output_size))
        self.bias = nn.Parameter(torch.randn(output_size))

    def forward(self, X):  # noqa: N803
        linear = torch.matmul(X, self.weight.data) + self.bias.data
        return linear


def test_custom_layer():
    layer = CustomLayer(3, 2)
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    out = layer(torch.randn(4, 3))
    assert out.shape == (4, 2)
    assert not out.requires_grad  # .data is cut off from the tape, as in PyTorch


class MLP(Module):
    def __init__(self, n_inputs):
        super().__init__()
        self.hidden = Linear(n_inputs, 10)
        xavier_uniform_(self.hidden.weight)
        self.act = ReLU()
        self.out = Linear(10, 1)
        xavier_uniform_(self.out.weight)

    def forward(self, X):  # noqa: N803
        return self.out(self.act(self.hidden(X)))


class CSVLikeDataset(Dataset):
    def __init__(self):
        rng = np.random.default_rng(0)
        self.X = rng.standard_normal((100, 3)).astype(np.float32)
        self.y = (self.X @ np.array([1.0, -2.0, 0.5], np.float32))[:, None]

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        return [self.X[idx], self.y[idx]]


def test_notes_training_loop_save_and_load(tmp_path):
    torch.manual_seed(0)
    train, test = random_split(CSVLikeDataset(), [0.8, 0.2],
                               generator=torch.Generator().manual_seed(0))
    train_dl = DataLoader(train, batch_size=16, shuffle=True)
    model = MLP(3)
    criterion = MSELoss()
    optimizer = SGD(model.parameters(), lr=0.05, momentum=0.9)
    for _ in range(40):
        for inputs, targets in train_dl:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
    assert loss.item() < 0.1
    FILE = str(tmp_path / "model.pth")  # noqa: N806
    save(model.state_dict(), FILE)  # torch.save(model.state_dict(), FILE)
    loaded_model = MLP(3)
    loaded_model.load_state_dict(load(FILE))
    loaded_model.eval()
    x = torch.randn(5, 3)
    assert np.array_equal(loaded_model(x).detach().numpy(), model(x).detach().numpy())
    assert len(list(loaded_model.parameters())) == 4


def test_optim_and_no_grad_update_from_the_notes():
    w1 = torch.randn(3, 2, requires_grad=True)
    loss = (torch.randn(4, 3) @ w1).pow(2).sum()
    loss.backward()
    before = w1.detach().numpy().copy()
    with torch.no_grad():
        w1 -= 0.01 * w1.grad
    w1.grad.zero_()
    assert not np.array_equal(before, w1.detach().numpy())
    assert not w1.grad.numpy().any()
    opt = optim.SGD([w1], lr=0.1)
    opt.zero_grad()
    start = w1.detach().numpy().copy()
    (w1 * 2).sum().backward()  # gradient 2 everywhere
    opt.step()
    np.testing.assert_allclose(w1.detach().numpy(), start - 0.1 * 2, rtol=1e-6)
