"""Helpers for the distributed tests: the process group is torn down after each test."""

import pytest

import difflab.distributed as dist


@pytest.fixture(autouse=True)
def no_process_group_left():
    yield
    if dist.is_initialized():
        dist.destroy_process_group()
