"""Prune a trained network, then fine-tune it with stochastic weight averaging.

In the style of PyTorch's pruning tutorial and its SWA recipe: a small classifier is
trained, pruned (``prune.l1_unstructured`` per layer, ``prune.ln_structured`` on whole
hidden units, then ``prune.global_unstructured`` across layers), its sparsity printed
per layer; the pruned network is fine-tuned with ``AveragedModel``, ``SWALR`` and
``update_bn``, and the pruning made permanent with ``prune.remove``.  The data are two
interleaved spirals, generated with NumPy.
"""
import numpy as np

import difflab as torch
import difflab.nn as nn
import difflab.nn.functional as F
import difflab.nn.utils.prune as prune
from difflab.optim.swa_utils import SWALR, AveragedModel, update_bn

numbers = np.random.RandomState(0)


def spirals(n):
    t = numbers.uniform(0.5, 3.0, n) * np.pi
    label = numbers.randint(0, 2, n)
    sign = np.where(label == 0, 1.0, -1.0)
    points = np.stack([sign * t * np.cos(t), sign * t * np.sin(t)], 1) / 5.0
    points = points + 0.05 * numbers.randn(n, 2)
    return torch.tensor(points, dtype=torch.float32), torch.tensor(label)


train_x, train_y = spirals(512)
test_x, test_y = spirals(256)
batches = [(train_x[i:i + 64], train_y[i:i + 64]) for i in range(0, 512, 64)]


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(2, 64)
        self.bn1 = nn.BatchNorm1d(64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 2)

    def forward(self, x):
        x = F.relu(self.bn1(self.fc1(x)))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def accuracy(model):
    model.eval()
    with torch.no_grad():
        correct = (model(test_x).argmax(1) == test_y).float().mean().item()
    model.train()
    return correct


def train_epoch(model, optimizer):
    total = 0.0
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(batches)


def sparsity(tensor):
    return 100.0 * float(torch.sum(tensor == 0)) / float(tensor.nelement())


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(30):
    loss = train_epoch(model, optimizer)
print(f"dense loss: {loss:.4f}")
print(f"dense accuracy: {accuracy(model):.4f}")

# --- pruning, as in the tutorial ---------------------------------------------------
prune.l1_unstructured(model.fc2, name="weight", amount=0.3)
prune.l1_unstructured(model.fc3, name="weight", amount=10)
prune.ln_structured(model.fc1, name="weight", amount=0.25, n=2, dim=0)
print("fc2 buffers:", [name for name, _ in model.fc2.named_buffers()])
print("fc2 parameters:", [name for name, _ in model.fc2.named_parameters()])
print("fc2 pruned:", prune.is_pruned(model.fc2))
parameters_to_prune = ((model.fc1, "weight"), (model.fc2, "weight"), (model.fc3, "weight"))
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured,
                          amount=0.2)
for name in ("fc1", "fc2", "fc3"):
    print(f"Sparsity in {name}.weight: {sparsity(getattr(model, name).weight):.2f}%")
total = sum(float(torch.sum(m.weight == 0)) for m, _ in parameters_to_prune)
count = sum(float(m.weight.nelement()) for m, _ in parameters_to_prune)
print(f"Global sparsity: {100.0 * total / count:.2f}%")
print(f"pruned accuracy: {accuracy(model):.4f}")

# --- fine-tuning with stochastic weight averaging ---------------------------------
swa_model = AveragedModel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
swa_start = 5
swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=3)
for epoch in range(10):
    loss = train_epoch(model, optimizer)
    if epoch >= swa_start:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    print(f"epoch {epoch} loss {loss:.4f} lr {optimizer.param_groups[0]['lr']:.5f}")
update_bn(batches, swa_model)
print(f"averaged models: {swa_model.n_averaged.item()}")
print(f"swa accuracy: {accuracy(swa_model):.4f}")
print(f"pruned weights stay zero: {bool((model.fc2.weight[model.fc2.weight_mask == 0] == 0).all())}")

for module, name in parameters_to_prune:
    prune.remove(module, name)
print("state_dict keys of fc2 after remove:", list(model.fc2.state_dict().keys()))
print(f"fc2 sparsity after remove: {sparsity(model.fc2.weight):.2f}%")
print(f"final accuracy: {accuracy(model):.4f}")
