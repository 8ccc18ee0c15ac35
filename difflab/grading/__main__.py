"""``python -m difflab.grading grade|assign ...``."""

from difflab.grading.cli import cli

if __name__ == "__main__":
    cli(prog_name="python -m difflab.grading")
