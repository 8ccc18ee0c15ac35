"""Shared test settings: hypothesis without deadlines (CI machines are shared and noisy)."""

import os

from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=40, derandomize=True)
settings.register_profile("dev", deadline=None, max_examples=60)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
