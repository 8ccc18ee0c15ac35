"""The "PyTorch Profiler" recipe, on a small ResNet-style network.

In the style of PyTorch's recipe: label a block with record_function, print the
operators' times sorted by total CPU time (and grouped by input shapes), the memory
each operator's results take, a Chrome trace, the source lines that called the
slowest operators, and a long job profiled on a schedule with one trace per cycle.

difflab's events carry its primitive names (conv2d, normalize, max_pool2d) where
PyTorch's carry aten:: names, and its table has no device columns: there is no
device time to show.  The recipe's export_stacks (flame graphs) and
export_memory_timeline have no difflab counterpart; this program leaves them out.
"""
import json
import os
import tempfile

import difflab as torch
import difflab.nn as nn
from difflab.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


def small_resnet():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16),
        nn.ReLU(inplace=True), nn.MaxPool2d(3, stride=2, padding=1),
        BasicBlock(16), BasicBlock(16),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


model = small_resnet()
inputs = torch.randn(5, 3, 32, 32)

# 3. Using profiler to analyze execution time
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    with record_function("model_inference"):
        model(inputs)

print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
print(prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total",
                                                         row_limit=10))
counts = {row.key: row.count for row in prof.key_averages()}
print("conv2d calls:", counts["conv2d"])
print("top-level event:", prof.key_averages().table(sort_by="cpu_time_total").splitlines()[3]
      .split()[0])

# on a GPU the recipe adds ProfilerActivity.CUDA and sorts by cuda_time_total
if torch.cuda.is_available():
    print("difflab records no device time: the CPU table above is what there is")
else:
    print("Neither CUDA nor XPU devices are available to demonstrate profiling on "
          "acceleration devices")

# 4. Using profiler to analyze memory consumption
model = small_resnet()
with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
    model(inputs)

print(prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=10))
print(prof.key_averages().table(sort_by="cpu_memory_usage", row_limit=10))
first_conv = next(e for e in prof.events() if e.name == "conv2d")
print("first conv2d output bytes:", first_conv.self_cpu_memory_usage)  # 5 x 16 x 16 x 16 float32

# 5. Using tracing functionality
with profile(activities=[ProfilerActivity.CPU]) as prof:
    model(inputs)

trace_path = os.path.join(tempfile.mkdtemp(), "trace.json")
prof.export_chrome_trace(trace_path)
with open(trace_path) as file:
    trace = json.load(file)["traceEvents"]
print("trace events:", len(trace), "all complete:", all(e["ph"] == "X" for e in trace))

# 6. Examining stack traces
with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
    model(inputs)

print(prof.key_averages(group_by_stack_n=5).table(sort_by="self_cpu_time_total",
                                                  row_limit=2))
slowest = max(prof.events(), key=lambda e: e.self_cpu_time_total)
print("slowest op called from this file:", "profiler_recipe.py" in " ".join(slowest.stack))

# 7. Using profiler to analyze long-running jobs
cycles = []


def trace_handler(p):
    output = p.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
    print(output)
    cycles.append(p.step_num)


with profile(activities=[ProfilerActivity.CPU],
             schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
             on_trace_ready=trace_handler) as p:
    for _ in range(8):
        model(inputs)
        p.step()

print("cycles handed over at steps:", cycles)
