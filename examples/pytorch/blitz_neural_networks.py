"""Neural networks: define a LeNet-style network, compute a loss, backpropagate, update."""
import difflab as torch
import difflab.nn as nn
import difflab.nn.functional as F
import difflab.optim as optim


class Net(nn.Module):

    def __init__(self):
        super().__init__()
        # 1 input channel, 6 output channels, 5x5 convolutions
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


torch.manual_seed(0)
net = Net()
print(net)

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's weight

input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)

net.zero_grad()
out.backward(torch.randn(1, 10))

output = net(input)
target = torch.randn(10)
target = target.view(1, -1)
criterion = nn.MSELoss()
loss = criterion(output, target)
print(loss)

print(loss.grad_fn)  # the mean squared error
print(loss.grad_fn.next_functions[0][0])
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])

net.zero_grad()
print("conv1.bias.grad before backward")
print(net.conv1.bias.grad)
loss.backward()
print("conv1.bias.grad after backward")
print(net.conv1.bias.grad)

# The update rule by hand ...
learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)

# ... and with an optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)
first = None
for _ in range(20):
    optimizer.zero_grad()
    output = net(input)
    loss = criterion(output, target)
    first = loss.item() if first is None else first
    loss.backward()
    optimizer.step()
print("first loss:", first)
print("final loss:", loss.item())
