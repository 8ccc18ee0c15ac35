"""The cubic fit of sin(x) as a linear layer on the features (x, x², x³)."""
import math

import difflab as torch

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# (2000,) -> (2000, 3): x to the powers 1, 2 and 3 (an int64 exponent: stays float32)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1),
)
loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-6
for t in range(2000):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

linear_layer = model[0]
print(f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + "
      f"{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3")
print("dtype:", y_pred.dtype)
print("final loss:", loss.item())
