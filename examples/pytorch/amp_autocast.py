"""Automatic mixed precision on the CPU: autocast to bfloat16 and a GradScaler.

In the style of the "Automatic Mixed Precision" recipe: inside torch.autocast the
linear layers run in bfloat16 while the loss is computed in float32; the
GradScaler scales the loss before backward, unscale_ lets the gradients be clipped
at their true size, step skips a step whose gradients are not finite, and its state
goes into the checkpoint next to the model's and the optimizer's.
"""
import difflab as torch

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
amp_dtype = torch.float16 if device == "cuda" else torch.bfloat16


def make_model(in_size, out_size, num_layers):
    layers = []
    for _ in range(num_layers - 1):
        layers.append(torch.nn.Linear(in_size, in_size))
        layers.append(torch.nn.ReLU())
    layers.append(torch.nn.Linear(in_size, out_size))
    return torch.nn.Sequential(*tuple(layers)).to(device)


batch_size = 32
in_size = 16
out_size = 4
num_layers = 3
num_batches = 10
epochs = 15
true_map = torch.randn(in_size, out_size)
data = [torch.randn(batch_size, in_size, device=device) for _ in range(num_batches)]
targets = [x @ true_map for x in data]
loss_fn = torch.nn.MSELoss().to(device)

net = make_model(in_size, out_size, num_layers)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 10)
for epoch in range(epochs):
    for input, target in zip(data, targets):
        with torch.autocast(device_type=device, dtype=amp_dtype):
            output = net(input)
            assert output.dtype is amp_dtype
            loss = loss_fn(output, target)
            assert loss.dtype is torch.float32
        scaler.scale(loss).backward()
        # Unscales the gradients of optimizer's assigned params in-place
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
    if epoch % 5 == 0:
        print(epoch, loss.item())

print("output dtype under autocast:", output.dtype)
print("parameter dtype:", next(net.parameters()).dtype)
print("scale:", scaler.get_scale())

# a step with an infinite gradient is skipped and the scale backs off
before = [p.detach().clone() for p in net.parameters()]
with torch.autocast(device_type=device, dtype=amp_dtype):
    loss = loss_fn(net(data[0]), targets[0]) * float("inf")
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()
opt.zero_grad()
print("skipped step left the weights:", all(torch.equal(a, b) for a, b in
                                            zip(before, net.parameters())))
print("scale after an inf:", scaler.get_scale())

checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(),
              "scaler": scaler.state_dict()}
net2 = make_model(in_size, out_size, num_layers)
opt2 = torch.optim.SGD(net2.parameters(), lr=0.1)
scaler2 = torch.amp.GradScaler(device)
net2.load_state_dict(checkpoint["model"])
opt2.load_state_dict(checkpoint["optimizer"])
scaler2.load_state_dict(checkpoint["scaler"])
print("restored scale:", scaler2.get_scale())
with torch.no_grad():
    final = sum(loss_fn(net(x), y).item() for x, y in zip(data, targets)) / num_batches
print("final loss:", final)
