"""A small residual network, trained, checkpointed, and resumed.

In the style of the CIFAR-10 ResNet training scripts found in courses: BasicBlocks
with batch normalisation and a 1x1 shortcut where the shape changes,
AdaptiveAvgPool2d and torch.flatten before the classifier, SGD with Nesterov
momentum and weight decay, a CosineAnnealingLR schedule, and a checkpoint dict
(epoch, model, optimizer and scheduler states) saved with torch.save and loaded to
resume.  Resuming must continue exactly where the uninterrupted run goes.  The
images are generated 8x8 stripes (horizontal or vertical) with noise.
"""
import io

import numpy as np

import difflab as torch
import difflab.nn as nn
import difflab.nn.functional as F
import difflab.optim as optim

numbers = np.random.RandomState(0)
labels = numbers.randint(0, 2, 256)
rows = np.sin(np.arange(8) * 2.0)[None, :, None] * np.ones((1, 1, 8))
images = np.where(labels[:, None, None] == 0, rows, rows.transpose(0, 2, 1))
images = images + 0.8 * numbers.randn(256, 8, 8)
inputs = torch.tensor(images[:, None], dtype=torch.float32).repeat(1, 3, 1, 1)
targets = torch.tensor(labels)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1,
                               bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != self.expansion * planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride,
                          bias=False),
                nn.BatchNorm2d(self.expansion * planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        out = F.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=2):
        super(ResNet, self).__init__()
        self.in_planes = 8
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = self._make_layer(block, 8, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, 16, num_blocks[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.linear = nn.Linear(16 * block.expansion, num_classes)

    def _make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer1(out)
        out = self.layer2(out)
        out = self.avgpool(out)
        out = torch.flatten(out, 1)
        return self.linear(out)


def make(state=None):
    torch.manual_seed(0)
    net = ResNet(BasicBlock, [1, 1])
    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
    optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4,
                          nesterov=True)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=EPOCHS)
    return net, optimizer, scheduler


def train(epoch, net, optimizer, scheduler, criterion):
    net.train()
    train_loss, correct, total = 0, 0, 0
    order = np.random.RandomState(epoch).permutation(len(targets))
    for start in range(0, len(order), 32):
        batch = torch.from_numpy(order[start:start + 32])
        x, y = inputs[batch], targets[batch]
        optimizer.zero_grad()
        outputs = net(x)
        loss = criterion(outputs, y)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
        _, predicted = outputs.max(1)
        total += y.size(0)
        correct += predicted.eq(y).sum().item()
    scheduler.step()
    print("epoch %d loss %.4f acc %.3f lr %.5f" % (
        epoch, train_loss / 8, correct / total, scheduler.get_last_lr()[0]))
    return train_loss / 8


EPOCHS = 4
criterion = nn.CrossEntropyLoss()
net, optimizer, scheduler = make()
for epoch in range(EPOCHS):
    last = train(epoch, net, optimizer, scheduler, criterion)
    if epoch == 1:
        buffer = io.BytesIO()
        torch.save({"epoch": epoch, "model_state_dict": net.state_dict(),
                    "optimizer_state_dict": optimizer.state_dict(),
                    "scheduler_state_dict": scheduler.state_dict(), "loss": last}, buffer)

print("resuming from the checkpoint")
buffer.seek(0)
checkpoint = torch.load(buffer)
resumed, optimizer2, scheduler2 = make()
resumed.load_state_dict(checkpoint["model_state_dict"])
optimizer2.load_state_dict(checkpoint["optimizer_state_dict"])
scheduler2.load_state_dict(checkpoint["scheduler_state_dict"])
for epoch in range(checkpoint["epoch"] + 1, EPOCHS):
    resumed_loss = train(epoch, resumed, optimizer2, scheduler2, criterion)
same = all(torch.equal(a, b) for a, b in zip(net.state_dict().values(),
                                              resumed.state_dict().values()))
print("resumed equals uninterrupted:", same)
net.eval()
with torch.no_grad():
    accuracy = (net(inputs).argmax(1) == targets).float().mean().item()
print("eval accuracy:", accuracy)
print("final loss:", last)
