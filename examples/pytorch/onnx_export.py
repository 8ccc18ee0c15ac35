"""Export a model to ONNX and run it with ONNX Runtime (after PyTorch's super-resolution
tutorial): the model, torch.onnx.export with names and dynamic axes, the checker, and
ONNX Runtime's outputs against the model's.  Needs the onnx and onnxruntime packages."""

import io

import numpy as np
import onnx
import onnxruntime

import difflab as torch
import difflab.nn as nn
import difflab.nn.init as init


class SuperResolutionNet(nn.Module):
    def __init__(self, upscale_factor, inplace=False):
        super(SuperResolutionNet, self).__init__()

        self.relu = nn.ReLU(inplace=inplace)
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


torch.manual_seed(0)
torch_model = SuperResolutionNet(upscale_factor=3)

# Input to the model
batch_size = 1
x = torch.randn(batch_size, 1, 64, 64, requires_grad=True)

# set the model to inference mode
torch_model.eval()
torch_out = torch_model(x)

# Export the model
buffer = io.BytesIO()
torch.onnx.export(torch_model,               # model being run
                  x,                         # model input (or a tuple for multiple inputs)
                  buffer,                    # where to save the model
                  export_params=True,        # store the trained parameter weights inside
                  opset_version=10,          # the ONNX version to export the model to
                  do_constant_folding=True,  # whether to execute constant folding
                  input_names=['input'],     # the model's input names
                  output_names=['output'],   # the model's output names
                  dynamic_axes={'input': {0: 'batch_size'},    # variable length axes
                                'output': {0: 'batch_size'}})

onnx_model = onnx.load_from_string(buffer.getvalue())
onnx.checker.check_model(onnx_model)
print("ops:", sorted({node.op_type for node in onnx_model.graph.node}))

ort_session = onnxruntime.InferenceSession(buffer.getvalue(),
                                           providers=["CPUExecutionProvider"])


def to_numpy(tensor):
    return tensor.detach().cpu().numpy() if tensor.requires_grad else tensor.cpu().numpy()


# compute ONNX Runtime output prediction
ort_inputs = {ort_session.get_inputs()[0].name: to_numpy(x)}
ort_outs = ort_session.run(None, ort_inputs)

# compare ONNX Runtime and PyTorch results
np.testing.assert_allclose(to_numpy(torch_out), ort_outs[0], rtol=1e-03, atol=1e-05)
print("Exported model has been tested with ONNXRuntime, and the result looks good!")

# another image of the same size
y = torch.rand(batch_size, 1, 64, 64)
with torch.no_grad():
    expected = torch_model(y)
got = ort_session.run(["output"], {"input": y.numpy()})[0]
print("output shape:", tuple(got.shape))
print("largest difference:", float(np.abs(got - expected.numpy()).max()))
