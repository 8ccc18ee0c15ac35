#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image.
# Put a difflab wheel (built with `python -m build` in a difflab checkout) in the zip.
# The grader runs the instructor's tests with pytest, so it is installed too.
set -eu
apt-get update
apt-get install -y python3 python3-pip
python3 -m pip install /autograder/source/difflab-*.whl "pytest>=7.4"
