"""Save a whole trained model (not just its state_dict) and load it back.

``torch.save(model, path)`` stores the model itself.  Loading a class of your
own is allowed explicitly (``safe_globals``), as PyTorch asks since version
2.6 (``weights_only=True`` by default); difflab writes the model as data, never
with pickle, and rebuilds only the classes you allow.
"""
import os
import tempfile

import difflab as torch
import difflab.nn as nn

torch.manual_seed(0)


class MoonsClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, x):
        return self.layers(x)


# two interleaved half circles
angle = torch.rand(400) * 3.14159
label = torch.randint(0, 2, (400,))
x = torch.stack([torch.cos(angle) + label * 1.0, torch.sin(angle) * (1 - 2 * label) + 0.5 * label],
                1) + 0.1 * torch.randn(400, 2)

model = MoonsClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()
for _ in range(200):
    loss = loss_fn(model(x), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("trained loss:", loss.item())

path = os.path.join(tempfile.mkdtemp(), "moons_model.pt")
model.eval()
torch.save(model, path)

with torch.serialization.safe_globals([MoonsClassifier, nn.Sequential, nn.Linear, nn.Tanh]):
    restored = torch.load(path)
restored.eval()
with torch.no_grad():
    same = torch.equal(restored(x), model(x))
    accuracy = (restored(x).argmax(1) == label).float().mean().item()
print("restored class:", type(restored).__name__)
print("outputs equal:", same)
print("accuracy:", accuracy)
print("final loss:", loss_fn(restored(x), label).item())
