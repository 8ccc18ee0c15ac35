"""Neural style transfer: optimise the pixels of an image with L-BFGS.

In the style of the "Neural Transfer Using PyTorch" tutorial: content and style
losses are transparent modules inserted into a copy of a convolutional network
(added one by one to an nn.Sequential), the style loss compares Gram matrices, and
L-BFGS optimises the input image itself through a closure that clamps it to [0, 1]
under no_grad.  The network is small and randomly initialised (no pretrained VGG
download), and the two images are generated: the content a soft disc, the style
stripes.
"""
import copy

import difflab as torch
import difflab.nn as nn
import difflab.nn.functional as F
import difflab.optim as optim

torch.manual_seed(0)
imsize = 24
ys, xs = torch.meshgrid(torch.linspace(-1, 1, imsize), torch.linspace(-1, 1, imsize),
                        indexing="ij")
disc = torch.sigmoid(8 * (0.6 - (xs ** 2 + ys ** 2).sqrt()))
content_img = torch.stack([disc, 0.5 * disc, 1 - disc]).unsqueeze(0)
stripes = 0.5 + 0.5 * torch.sin(6 * (xs + ys))
style_img = torch.stack([stripes, 1 - stripes, 0.5 * stripes]).unsqueeze(0)
assert style_img.size() == content_img.size(), "style and content images must match"


class ContentLoss(nn.Module):
    def __init__(self, target,):
        super(ContentLoss, self).__init__()
        # we 'detach' the target content from the tree used to dynamically compute the
        # gradient: this is a stated value, not a variable.
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()  # a=batch size, b=number of feature maps, (c,d)=dimensions
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


cnn = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True),
    nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(inplace=True),
    nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
    nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(inplace=True),
).eval()
cnn_normalization_mean = torch.tensor([0.485, 0.456, 0.406])
cnn_normalization_std = torch.tensor([0.229, 0.224, 0.225])


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super(Normalization, self).__init__()
        # .view the mean and std to make them [C x 1 x 1] so that they can
        # directly work with image Tensor of shape [B x C x H x W].
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


content_layers_default = ["conv_4"]
style_layers_default = ["conv_1", "conv_2", "conv_3", "conv_4", "conv_5"]


def get_style_model_and_losses(cnn, normalization_mean, normalization_std, style_img,
                               content_img, content_layers=content_layers_default,
                               style_layers=style_layers_default):
    cnn = copy.deepcopy(cnn)
    normalization = Normalization(normalization_mean, normalization_std)
    content_losses = []
    style_losses = []
    model = nn.Sequential(normalization)
    i = 0  # increment every time we see a conv
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = "conv_{}".format(i)
        elif isinstance(layer, nn.ReLU):
            name = "relu_{}".format(i)
            # The in-place version doesn't play very nicely with the ContentLoss
            # and StyleLoss we insert below. So we replace with out-of-place ones here.
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = "pool_{}".format(i)
        elif isinstance(layer, nn.BatchNorm2d):
            name = "bn_{}".format(i)
        else:
            raise RuntimeError("Unrecognized layer: {}".format(layer.__class__.__name__))
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module("style_loss_{}".format(i), style_loss)
            style_losses.append(style_loss)
    # now we trim off the layers after the last content and style losses
    for i in range(len(model) - 1, -1, -1):
        if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
            break
    model = model[:(i + 1)]
    return model, style_losses, content_losses


def get_input_optimizer(input_img):
    # this line to show that input is a parameter that requires a gradient
    optimizer = optim.LBFGS([input_img])
    return optimizer


def run_style_transfer(cnn, normalization_mean, normalization_std, content_img, style_img,
                       input_img, num_steps=60, style_weight=100000, content_weight=1):
    print("Building the style transfer model..")
    model, style_losses, content_losses = get_style_model_and_losses(
        cnn, normalization_mean, normalization_std, style_img, content_img)
    # We want to optimize the input and not the model parameters so we
    # update all the requires_grad fields accordingly
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = get_input_optimizer(input_img)
    print("Optimizing..")
    run = [0]
    while run[0] <= num_steps:
        def closure():
            # correct the values of updated input image
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            style_score = 0
            content_score = 0
            for sl in style_losses:
                style_score += sl.loss
            for cl in content_losses:
                content_score += cl.loss
            style_score *= style_weight
            content_score *= content_weight
            loss = style_score + content_score
            loss.backward()
            run[0] += 1
            if run[0] % 20 == 0:
                print("run {}:".format(run))
                print("Style Loss : {:4f} Content Loss: {:4f}".format(
                    style_score.item(), content_score.item()))
            return style_score + content_score
        optimizer.step(closure)
    # a last correction...
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img, style_losses, content_losses


input_img = content_img.clone()
model, style_losses, content_losses = get_style_model_and_losses(
    cnn, cnn_normalization_mean, cnn_normalization_std, style_img, content_img)
model(input_img)
first = 100000 * sum(sl.loss for sl in style_losses) + sum(cl.loss for cl in content_losses)
print("layers:", [name for name, _ in model.named_children()])
output, style_losses, content_losses = run_style_transfer(
    cnn, cnn_normalization_mean, cnn_normalization_std, content_img, style_img, input_img)
print("output range:", output.min().item() >= 0, output.max().item() <= 1)
print("first loss:", first.item())
with torch.no_grad():
    final = 100000 * sum(sl.loss for sl in style_losses) + sum(cl.loss for cl in content_losses)
print("final loss:", final.item())
