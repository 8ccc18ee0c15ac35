"""The core tests' fixtures live in tests/conftest.py (``device``: the CPU and CUDA)."""
