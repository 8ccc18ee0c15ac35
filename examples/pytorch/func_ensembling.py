"""Per-sample gradients and model ensembling with torch.func.

In the style of the "Per-sample-gradients" and "Model ensembling" tutorials:
functional_call runs a module with parameters given as a dict, grad differentiates
a loss with respect to that dict, vmap maps over the samples of a batch (or over a
stack of models made by stack_module_state), and the results are checked against
plain Python loops.
"""
import copy

import difflab as torch
import difflab.nn as nn
import difflab.nn.functional as F
from difflab.func import functional_call, grad, stack_module_state, vmap

torch.manual_seed(0)


class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, 4)

    def forward(self, x):
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


# --- per-sample gradients -----------------------------------------------------------
batch_size = 8
data = torch.randn(batch_size, 4, 4)
targets = torch.randint(4, (batch_size,))
model = SimpleMLP()


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


def compute_grad(sample, target):
    sample = sample.unsqueeze(0)  # prepend batch dimension for processing
    target = target.unsqueeze(0)
    prediction = model(sample)
    loss = loss_fn(prediction, target)
    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    """ manually process each sample with per sample gradient """
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads


per_sample_grads = compute_sample_grads(data, targets)
print("first gradient shape:", tuple(per_sample_grads[0].shape))

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
print("per-sample gradients match:", True)
largest = max((a - b).abs().max().item()
              for a, b in zip(per_sample_grads, ft_per_sample_grads.values()))
print("largest difference:", largest)

# --- model ensembling ---------------------------------------------------------------
num_models = 5
minibatches = torch.randn(num_models, 64, 4, 4)
models = [SimpleMLP() for _ in range(num_models)]
minibatch = minibatches[0]
predictions1 = [model(minibatch) for model in models]
predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]

params, buffers = stack_module_state(models)
base_model = copy.deepcopy(models[0])
# (the tutorial moves base_model to the "meta" device here; difflab has none)


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


print([p.size(0) for p in params.values()])  # show the leading 'num_models' dimension
assert minibatches.shape == (num_models, 64, 4, 4)  # verify minibatch has leading dimension of size 'num_models'
predictions1_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
assert torch.allclose(predictions1_vmap, torch.stack(predictions1), atol=1e-3, rtol=1e-5)
predictions2_vmap = vmap(fmodel)(params, buffers, minibatches)
assert torch.allclose(predictions2_vmap, torch.stack(predictions_diff_minibatch_loop),
                      atol=1e-3, rtol=1e-5)
print("ensemble predictions match:", True)
print("ensemble output shape:", tuple(predictions2_vmap.shape))

# --- a training step from the per-sample gradients (clipped per sample, as in DP-SGD) --
norms = torch.stack([g.flatten(1).norm(dim=1) for g in ft_per_sample_grads.values()]).norm(dim=0)
factor = (1.0 / norms).clamp(max=1.0)
with torch.no_grad():
    for p, g in zip(model.parameters(), ft_per_sample_grads.values()):
        p -= 0.1 * (g * factor.view(-1, *[1] * (g.dim() - 1))).mean(0)
print("final loss:", loss_fn(model(data), targets).item())
