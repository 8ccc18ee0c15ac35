"""Train from an endless stream of samples: a DataLoader over RandomSampler(num_samples=10**10).

With ``replacement=True`` the sampler draws indices as the loader asks for
them, so ten billion samples cost nothing up front; training stops after a
fixed number of batches, however long the stream.
"""
import itertools

import difflab as torch
from difflab.utils.data import DataLoader, RandomSampler, TensorDataset

torch.manual_seed(0)
true_w = torch.tensor([[2.0], [-3.0], [0.5]])
x = torch.randn(1000, 3)
y = x @ true_w + 0.1 * torch.randn(1000, 1)
dataset = TensorDataset(x, y)

sampler = RandomSampler(dataset, replacement=True, num_samples=10**10)
loader = DataLoader(dataset, batch_size=32, sampler=sampler)
print("batches in one pass:", len(loader))

model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = torch.nn.MSELoss()
for step, (xb, yb) in enumerate(itertools.islice(loader, 300)):
    loss = loss_fn(model(xb), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(step, loss.item())

print("weights:", [round(v, 2) for v in model.weight.flatten().tolist()])
print("final loss:", loss_fn(model(x), y).item())
