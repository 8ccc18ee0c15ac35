"""Autograd: gradients of a small expression, vector-Jacobian products, no_grad, freezing."""
import difflab as torch

# Q = 3a³ - b², dQ/da = 9a², dQ/db = -2b
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3 * a ** 3 - b ** 2

# Q is a vector: backward needs the vector v of the product vᵀJ
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)

print(9 * a ** 2 == a.grad)
print(-2 * b == b.grad)
assert (9 * a ** 2 == a.grad).all() and (-2 * b == b.grad).all()

# What needs a gradient
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")
print(b.grad_fn)

# A one-layer model on a feature extractor whose parameters are frozen
model = torch.nn.Sequential(torch.nn.Linear(10, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
for param in model.parameters():
    param.requires_grad = False
model[2] = torch.nn.Linear(8, 2)  # a new head: the only part that learns
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
loss = model(torch.rand(3, 10)).sum()
loss.backward()
optimizer.step()
print("frozen grad:", model[0].weight.grad, "head grad shape:", tuple(model[2].weight.grad.shape))
assert model[0].weight.grad is None

with torch.no_grad():
    w = z * 2
print(w.requires_grad)
print("total:", float(a.grad is None))
