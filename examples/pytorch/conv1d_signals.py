"""A 1-D convolutional network that tells sine, square and sawtooth waves apart.

Each signal has a random frequency, phase and noise; Conv1d filters slide along
time, MaxPool1d keeps the strongest response of each stretch, and a linear layer
classifies.
"""
import math

import difflab as torch
import difflab.nn as nn
import difflab.nn.functional as F

torch.manual_seed(0)
LENGTH = 64


def signals(n):
    kind = torch.randint(0, 3, (n,))
    t = torch.arange(LENGTH).float() / LENGTH
    frequency = 2 + 3 * torch.rand(n, 1)
    phase = torch.rand(n, 1)
    cycles = frequency * t + phase
    sine = torch.sin(2 * math.pi * cycles)
    square = torch.sign(sine)
    sawtooth = 2 * (cycles - torch.floor(cycles)) - 1
    waves = torch.stack([sine, square, sawtooth], 1)          # (n, 3, LENGTH)
    chosen = waves[torch.arange(n), kind]                     # (n, LENGTH)
    return (chosen + 0.2 * torch.randn(n, LENGTH)).unsqueeze(1), kind


class WaveNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(1, 8, kernel_size=5, padding=2)
        self.conv2 = nn.Conv1d(8, 16, kernel_size=5, padding=2)
        self.pool = nn.MaxPool1d(4)
        self.fc = nn.Linear(16 * 4, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))                  # (n, 8, 16)
        x = self.pool(F.relu(self.conv2(x)))                  # (n, 16, 4)
        return self.fc(torch.flatten(x, 1))


model = WaveNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()
for step in range(150):
    x, y = signals(64)
    loss = loss_fn(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 30 == 0:
        print(step, loss.item())

x, y = signals(500)
with torch.no_grad():
    accuracy = (model(x).argmax(1) == y).float().mean().item()
print("test accuracy:", accuracy)
print("final loss:", loss.item())
