#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image.
# (`difflab autograder build ASSIGNMENT --out autograder.zip` writes this file, the
# run_autograder and the tests into the zip for you.)
# Put a difflab wheel (built with `python -m build` in a difflab checkout) in the zip.
# The grader runs the instructor's tests with pytest, so it is installed too.
set -eu
apt-get update
apt-get install -y python3 python3-pip
python3 -m pip install /autograder/source/difflab-*.whl "pytest>=7.4"
# Student code runs as an unprivileged uid of the grader's pool (64000 and up; no
# account needed). Keep the tests readable by root only.
chmod -R go-rwx /autograder/source/tests
