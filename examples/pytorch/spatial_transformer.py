"""A spatial transformer network: the network learns to undo a random shift and turn.

In the style of the "Spatial Transformer Networks" tutorial: a localization network
predicts a 2x3 affine matrix theta (its last layer starts at the identity
transform), F.affine_grid turns theta into a sampling grid and F.grid_sample reads
the input image on that grid, before an ordinary convolutional classifier.  The
images are small generated shapes (a plus, a ring, a bar), moved and rotated at
random, so that the program needs no download.
"""
import math

import difflab as torch
import difflab.nn as nn
import difflab.nn.functional as F
import difflab.optim as optim

torch.manual_seed(0)
SIZE = 16


def shapes(n):
    label = torch.randint(0, 3, (n,))
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, SIZE), torch.linspace(-1, 1, SIZE),
                            indexing="ij")
    plus = ((xs.abs() < 0.15) | (ys.abs() < 0.15)) & (xs.abs() < 0.6) & (ys.abs() < 0.6)
    ring = ((xs ** 2 + ys ** 2).sqrt() - 0.45).abs() < 0.12
    bar = (ys.abs() < 0.15) & (xs.abs() < 0.6)
    images = torch.stack([plus, ring, bar]).float()[label].unsqueeze(1)   # (n, 1, S, S)
    angle = (torch.rand(n) - 0.5) * math.pi / 2
    shift = (torch.rand(n, 2) - 0.5) * 0.5
    theta = torch.stack([torch.stack([angle.cos(), -angle.sin(), shift[:, 0]], 1),
                         torch.stack([angle.sin(), angle.cos(), shift[:, 1]], 1)], 1)
    grid = F.affine_grid(theta, images.size(), align_corners=False)
    return F.grid_sample(images, grid, align_corners=False), label


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 3)

        # Spatial transformer localization-network
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=3),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
        )
        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 2 * 2, 32),
            nn.ReLU(True),
            nn.Linear(32, 3 * 2),
        )
        # Initialize the weights/bias with identity transformation
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    # Spatial transformer network forward function
    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 2 * 2)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)
        return x

    def forward(self, x):
        # transform the input
        x = self.stn(x)
        # Perform the usual forward pass
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 16 * 4 * 4)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net()
optimizer = optim.Adam(model.parameters(), lr=3e-3)
for step in range(1, 81):
    model.train()
    data, target = shapes(32)
    optimizer.zero_grad()
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print("step %d loss %.4f" % (step, loss.item()))

with torch.no_grad():
    model.eval()
    data, target = shapes(300)
    output = model(data)
    test_loss = F.nll_loss(output, target, reduction="sum").item() / 300
    pred = output.max(1, keepdim=True)[1]
    correct = pred.eq(target.view_as(pred)).sum().item()
    transformed = model.stn(data)
print("transformed batch:", tuple(transformed.shape))
print("test accuracy:", correct / 300)
print("final loss:", test_loss)
