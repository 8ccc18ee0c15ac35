"""A two-layer LSTM with dropout between its layers, forecasting the next value of a wave.

Windows of a noisy sum of two sines are the inputs; the target is the value
that follows each window.  ``dropout=0.2`` drops elements of the first layer's
outputs in training; ``model.eval()`` turns it off for evaluation.
"""
import difflab as torch
import difflab.nn as nn

torch.manual_seed(0)
WINDOW = 20

t = torch.arange(2000).float() * 0.1
series = torch.sin(t) + 0.5 * torch.sin(0.37 * t) + 0.05 * torch.randn(2000)
windows = torch.stack([series[i:i + WINDOW + 1] for i in range(len(series) - WINDOW)])
inputs, targets = windows[:, :WINDOW].unsqueeze(-1), windows[:, WINDOW:]
train_x, train_y = inputs[:1500], targets[:1500]
test_x, test_y = inputs[1500:], targets[1500:]


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(1, 32, num_layers=2, dropout=0.2, batch_first=True)
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


model = Forecaster()
model.lstm.flatten_parameters()  # what GPU programs call; nothing to do here
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.SmoothL1Loss(beta=0.1)
for step in range(120):
    idx = torch.randint(0, len(train_x), (64,))
    loss = loss_fn(model(train_x[idx]), train_y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(step, loss.item())

model.eval()
with torch.no_grad():
    test_mse = nn.functional.mse_loss(model(test_x), test_y).item()
print("variance of the targets:", test_y.var().item())
print("test mse:", test_mse)
print("final loss:", loss.item())
print("dropout between layers:", model.lstm.dropout)
