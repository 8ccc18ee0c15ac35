"""Regenerate the PyTorch checkpoints tests/nn/test_serialization_pytorch.py reads without torch.

Run with a PyTorch installed (these were written by PyTorch 2.13, CPU)::

    python tests/nn/pytorch_files/make_files.py

Every value is set explicitly (no random numbers), so the tests can pin what they load.
Each file is small (a few kilobytes).
"""

from __future__ import annotations

import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class Net(torch.nn.Module):
    """A small model whose buffers have every dtype difflab reads."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.head = torch.nn.Linear(2, 1, dtype=torch.float64)
        with torch.no_grad():
            self.fc.weight.copy_(torch.arange(6.0).reshape(2, 3) / 8)
            self.fc.bias.copy_(torch.tensor([-0.5, 0.25]))
            self.head.weight.copy_(torch.tensor([[0.1, -0.2]], dtype=torch.float64))
            self.head.bias.fill_(1.0 / 3.0)
        self.register_buffer("f16", torch.tensor([0.5, -1.5, 65504.0], dtype=torch.float16))
        self.register_buffer("bf16", torch.tensor([1.0, -2.5, 3.0e38], dtype=torch.bfloat16))
        self.register_buffer("mask", torch.tensor([True, False, True]))
        self.register_buffer("i8", torch.tensor([-128, 0, 127], dtype=torch.int8))
        self.register_buffer("i16", torch.tensor([-32768, 1, 32767], dtype=torch.int16))
        self.register_buffer("i32", torch.tensor([-(2**31), 2, 2**31 - 1], dtype=torch.int32))
        self.register_buffer("i64", torch.tensor([-(2**63), 3, 2**63 - 1], dtype=torch.int64))
        self.register_buffer("u8", torch.tensor([0, 128, 255], dtype=torch.uint8))
        self.register_buffer("c64", torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64))
        # A view with an offset and a transposed stride (stored as part of a larger storage).
        self.register_buffer("view", torch.arange(12.0).reshape(3, 4)[1:, 1:3].t())

    def forward(self, x):
        return self.head(torch.tanh(self.fc(x)).double())


def adam_steps(model: torch.nn.Module, steps: int = 2) -> torch.optim.Adam:
    """Two Adam steps on fixed data (the optimizer state a checkpoint carries)."""
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x = torch.tensor([[1.0, -1.0, 0.5], [0.25, 2.0, -0.75]])
    for _ in range(steps):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
    return opt


def main() -> None:
    model = Net()
    torch.save(model.state_dict(), os.path.join(HERE, "state_dict_dtypes.pt"))

    trained = Net()
    opt = adam_steps(trained)
    torch.save(opt.state_dict(), os.path.join(HERE, "adam_state.pt"))
    torch.save({"epoch": 3, "loss": 0.125, "model": trained.state_dict(),
                "optimizer": opt.state_dict(), "shape": torch.Size([2, 3]),
                "note": "two steps"},
               os.path.join(HERE, "checkpoint.pt"))

    embed = torch.nn.Embedding(4, 2)
    tied = torch.nn.Sequential(embed, torch.nn.Linear(2, 4, bias=False))
    with torch.no_grad():
        embed.weight.copy_(torch.arange(8.0).reshape(4, 2))
    tied[1].weight = embed.weight
    torch.save(tied.state_dict(), os.path.join(HERE, "tied.pt"))
    torch.save(list(tied.parameters()) + [embed.weight], os.path.join(HERE, "parameters.pt"))

    # Files difflab refuses, each with what to do instead.
    torch.save(torch.nn.Linear(2, 1), os.path.join(HERE, "whole_module.pt"))
    torch.save(model.fc.state_dict(), os.path.join(HERE, "legacy.pt"),
               _use_new_zipfile_serialization=False)
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 1)), os.path.join(HERE, "torchscript.pt"))


if __name__ == "__main__":
    main()
