"""Hooks for saved tensors, after PyTorch's tutorial of that name.

An operation recorded for backward keeps the values its derivative reads (``a * b``
keeps ``a`` and ``b``).  ``torch.autograd.graph.saved_tensors_hooks(pack, unpack)``
hands each of them to ``pack`` when it is saved and asks ``unpack`` for it back when
backward needs it: print them, keep them in a list, count them, move them to the host
(``save_on_cpu``) or to files in a temporary directory, for a whole model or inside one
module's forward.  Each gradient is checked against the same computation without hooks.

How many values an operation saves is each library's own choice (PyTorch's ``a * b``
packs ``b`` before ``a``; a Linear layer may keep its input and weight, or a transposed
copy): the counts and bytes printed below may differ between libraries; the gradients
may not.
"""
import os
import tempfile
import uuid

import numpy as np

import difflab as torch
import difflab.nn as nn

numbers = np.random.RandomState(0)


def randn(*shape, requires_grad=False):
    return torch.tensor(numbers.randn(*shape), dtype=torch.float32, requires_grad=requires_grad)


# -------------------------------------------------------- pack and unpack, printed

def pack_hook(x):
    print("Packing", x)
    return x


def unpack_hook(x):
    print("Unpacking", x)
    return x


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
y.sum().backward()
print("a.grad:", a.grad)

# ------------------------------------------ what unpack returns is what backward uses

x = randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda x: x * 4, lambda x: x / 4):
    y = torch.pow(x, 2)
y.sum().backward()
print("pow gradient is 2x:", bool(torch.allclose(x.grad, 2 * x)))

# an unpack hook that changes the value changes the gradient: d(a*b)/da reads b
a, b = randn(4, requires_grad=True), randn(4, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 3):
    y = a * b
y.sum().backward()
print("d(a*b)/da with b unpacked as 3b is 3b:", bool(torch.allclose(a.grad, 3 * b)))

# pack may return anything: here an index into a list
storage = []


def pack(x):
    storage.append(x)
    return len(storage) - 1


def unpack(x):
    return storage[x]


x = randn(5, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()
print("x * x gradient is 2x:", bool(torch.allclose(x.grad, 2 * x)))
print("values in storage:", len(storage))

# -------------------------------------------------------- counting a model's saved values

model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.Tanh(),
                      nn.Linear(128, 10))
inputs, targets = randn(32, 64), torch.tensor(numbers.randint(0, 10, 32))
loss_fn = nn.CrossEntropyLoss()


def gradients(context=None):
    model.zero_grad()
    if context is None:
        loss = loss_fn(model(inputs), targets)
    else:
        with context:
            loss = loss_fn(model(inputs), targets)
    loss.backward()
    return loss.item(), [p.grad.clone() for p in model.parameters()]


plain_loss, plain_grads = gradients()
sizes = []


def counting_pack(tensor):
    sizes.append(tensor.numel() * tensor.element_size())
    return tensor


def same(result):
    loss, grads = result
    return loss == plain_loss and all(torch.equal(g, h) for g, h in zip(grads, plain_grads))


counted = same(gradients(torch.autograd.graph.saved_tensors_hooks(counting_pack,
                                                                   lambda t: t)))
print("saved tensors packed:", len(sizes), "bytes:", sum(sizes))
print("identity hooks leave the gradients unchanged:", counted)

# ------------------------------------------------------------------------ save_on_cpu

print("save_on_cpu gradients equal:",
      same(gradients(torch.autograd.graph.save_on_cpu(pin_memory=True))))

# ----------------------------------------------------- saving to disk, in a temporary dir

tmp_dir_obj = tempfile.TemporaryDirectory()
tmp_dir = tmp_dir_obj.name


class SelfDeletingTempFile():
    def __init__(self):
        self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

    def __del__(self):
        os.remove(self.name)


SAVE_ON_DISK_THRESHOLD = 1000  # only tensors of at least this many elements go to disk
written = []


def disk_pack_hook(tensor):
    if tensor.numel() < SAVE_ON_DISK_THRESHOLD:
        return tensor
    temp_file = SelfDeletingTempFile()
    torch.save(tensor, temp_file.name)
    written.append(temp_file.name)
    return temp_file


def disk_unpack_hook(tensor_or_sctf):
    if isinstance(tensor_or_sctf, torch.Tensor):
        return tensor_or_sctf
    return torch.load(tensor_or_sctf.name)


model.zero_grad()
with torch.autograd.graph.saved_tensors_hooks(disk_pack_hook, disk_unpack_hook):
    loss = loss_fn(model(inputs), targets)
print("files written in the forward pass:", len(written) > 0)
print("files there before backward:", len(os.listdir(tmp_dir)) == len(written))
loss.backward()
del loss  # the graph, and with it the packed files, goes
print("disk hooks gradients equal:",
      all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), plain_grads)))
print("files left after backward:", len(os.listdir(tmp_dir)))


# ------------------------------------------------------- hooks inside one module's forward

class Wrapped(nn.Module):
    """Saves its block's values to disk; the rest of the model keeps them in memory."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        with torch.autograd.graph.saved_tensors_hooks(disk_pack_hook, disk_unpack_hook):
            return self.block(x)


written.clear()
model[2] = Wrapped(model[2])
print("inside a module gradients equal:", same(gradients()))
print("files written by the wrapped Linear:", len(written) > 0)
tmp_dir_obj.cleanup()
