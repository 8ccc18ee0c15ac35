"""The cubic fit of sin(x), solved by L-BFGS: a quasi-Newton method that needs a closure.

L-BFGS evaluates the loss several times per step (its line search tries step
lengths), so ``optimizer.step`` takes a function that recomputes it.  A least-
squares problem is a quadratic, and a few L-BFGS steps reach its minimum, where
plain gradient descent needs thousands.
"""
import math

import difflab as torch

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))

model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=50, history_size=10,
                              line_search_fn="strong_wolfe")


def closure():
    optimizer.zero_grad()
    loss = loss_fn(model(xx), y)
    loss.backward()
    return loss


for step in range(5):
    loss = optimizer.step(closure)
    print(f"step {step}: loss before {loss.item():.6f}")

final = loss_fn(model(xx), y)
linear = model[0]
print(f"Result: y = {linear.bias.item()} + {linear.weight[:, 0].item()} x + "
      f"{linear.weight[:, 1].item()} x^2 + {linear.weight[:, 2].item()} x^3")
print("final loss:", final.item())
