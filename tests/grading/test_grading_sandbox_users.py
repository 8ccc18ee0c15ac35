"""Who student code runs as: an unprivileged uid, one per grading running at the time.

When the grader is root (as on Gradescope and in CI) it ends a grading by killing every
process of the sandbox uid, the only way to reach processes that left the student's
session.  Each grading therefore holds a uid of its own from a pool; these tests show
that two gradings at once do not kill each other's student process, and that the
student's process has really lost root's privileges.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from grading_helpers import by_name, write

from difflab.grading.sandbox_users import UidPool

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT,
    reason="the grader changes user only when it runs as root (as in CI and on Gradescope); "
    "as another user there is no privilege to drop and no uid pool",
)

IDS_SUBMISSION = '''
import os


def ids():
    try:
        os.setuid(0)
        became_root = True
    except PermissionError:
        became_root = False
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh if ":" in line)
    return {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
            "egid": os.getegid(), "groups": os.getgroups(), "became_root": became_root,
            "no_new_privs": status["NoNewPrivs"].strip(), "cwd": os.listdir(".")}
'''

IDS_TESTS = '''
import submission
from difflab.grading import points


@points(1)
def test_unprivileged():
    ids = submission.ids()
    print("IDS", ids)
    assert ids["uid"] == ids["euid"] and ids["uid"] >= 1000, ids
    assert ids["gid"] == ids["egid"] and ids["gid"] != 0, ids
    assert ids["groups"] == [], ids
    assert ids["became_root"] is False, ids
    assert ids["no_new_privs"] == "1", ids
    assert ids["cwd"] == ["submission.py"], ids
'''


@needs_root
def test_student_process_runs_unprivileged(tmp_path, grade_fast):
    sub = write(tmp_path / "ids.py", IDS_SUBMISSION)
    tests = write(tmp_path / "tests" / "test_ids.py", IDS_TESTS).parent
    results = grade_fast(sub, tests)
    test = by_name(results)["test_unprivileged"]
    assert test["status"] == "passed", test["output"]
    assert "sandbox uid" in results["extra_data"]["isolation"]


@needs_root
def test_pool_gives_each_holder_its_own_uid_and_takes_it_back(tmp_path):
    os.chmod(tmp_path, 0o700)
    pool = UidPool(base=64500, size=2, lock_dir=str(tmp_path / "locks"))
    first, lock1 = pool.acquire()
    second, lock2 = pool.acquire()
    assert {first.uid, second.uid} == {64500, 64501}
    with pytest.raises(LookupError, match="all 2 sandbox uids"):
        pool.acquire(wait=0.3)
    UidPool.release(lock1)
    again, lock3 = pool.acquire(wait=0.3)
    assert again.uid == first.uid
    for fd in (lock2, lock3):
        UidPool.release(fd)


@needs_root
def test_pool_refuses_an_unsafe_lock_folder(tmp_path):
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o777)
    os.chmod(folder, 0o777)
    with pytest.raises(LookupError, match="owned by root"):
        UidPool(64500, 2, str(folder)).acquire(wait=0)


def test_pool_rejects_system_uids():
    with pytest.raises(ValueError, match="1000 or more"):
        UidPool(base=0, size=4)


SLOW = '''
import time


def value():
    time.sleep(6)
    return 1
'''

QUICK = '''
def value():
    return 1
'''

VALUE_TESTS = '''
import submission
from difflab.grading import points


@points(1)
def test_value():
    assert submission.value() == 1
'''


@needs_root
def test_two_gradings_at_once_do_not_kill_each_other(tmp_path):
    """A grading that ends (and kills its uid's processes) while another one's student
    process is busy leaves that process alone: the slow grading still passes."""
    tests = write(tmp_path / "tests" / "test_value.py", VALUE_TESTS).parent
    slow, quick = write(tmp_path / "slow.py", SLOW), write(tmp_path / "quick.py", QUICK)

    def start(sub, name):
        return subprocess.Popen(
            [sys.executable, "-m", "difflab.grading", "grade", str(sub), "--tests",
             str(tests), "--out", str(tmp_path / f"{name}.json"), "--timeout", "20",
             "--memory-mb", "1024"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )

    slow_run = start(slow, "slow")
    time.sleep(2.5)  # the slow student's process is loaded and sleeping in its test
    quick_runs = [start(quick, f"quick{i}") for i in range(2)]
    for run in [*quick_runs, slow_run]:
        output, _ = run.communicate(timeout=120)
        assert run.returncode == 0, output
    for name in ("slow", "quick0", "quick1"):
        results = json.loads((tmp_path / f"{name}.json").read_text())
        assert results["score"] == 1, (name, results["tests"][0]["output"])


# -- the CPU-share watch stops every process of the student's, even one forked meanwhile ---

FORKING_TREE = r'''
import os, sys, time
from difflab.grading.sandbox_users import _has_ended, _kill_subtree, _subtree, become_subreaper

become_subreaper()  # as the trusted process does: orphans stay in this tree
if os.fork() == 0:  # the student's process: forks without pause, each child spins
    while True:
        try:
            if os.fork() == 0:
                os.setsid()
                while True:
                    pass
        except OSError:
            pass
time.sleep(0.5)
_kill_subtree(os.getpid())
time.sleep(0.2)  # a survivor would be seen running after this
print(sum(not _has_ended(pid) for pid in _subtree(os.getpid())))
'''


def test_the_cpu_share_kill_leaves_no_process_forked_while_it_was_sent(tmp_path):
    # A child missed by a single round (the kernel's children lists are not reliable
    # while a parent forks) spun on within the share and held the student's pipe open:
    # CI's grading reported a startup timeout instead of the overuse.
    script = tmp_path / "tree.py"
    script.write_text(FORKING_TREE)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
