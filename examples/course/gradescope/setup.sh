#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image.
# (`difflab autograder build ASSIGNMENT --out autograder.zip` writes this file, the
# run_autograder and the tests into the zip for you.)
# Put a difflab wheel (built with `python -m build` in a difflab checkout) in the zip.
# The grader runs the instructor's tests with pytest, so it is installed too.
# Everything goes into a virtual environment: Ubuntu 24.04 refuses a system-wide pip
# install, and 22.04's python3 (3.10) is the oldest Python difflab supports.
set -eu
apt-get update
apt-get install -y python3 python3-venv python3-pip
python3 -m venv /autograder/venv
/autograder/venv/bin/python -m pip install /autograder/source/difflab-*.whl "pytest>=7.4"
# Student code runs as an unprivileged uid of the grader's pool (64000 and up; no
# account needed). Keep the tests readable by root only.
chmod -R go-rwx /autograder/source/tests
