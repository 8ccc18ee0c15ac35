"""A job whose rank 1 raises while rank 0 waits in a collective (test_launched.py).

argv[1] is a marker the test searches the process table for afterwards.
"""

import sys
import time

import difflab as dl
import difflab.distributed as dist

dist.init_process_group("mpi")
if dist.get_rank() == 1:
    time.sleep(0.5)  # let rank 0 enter the all_reduce first
    raise ValueError(f"rank 1 fails on purpose ({sys.argv[1]})")
dist.all_reduce(dl.ones(3))  # would wait forever for rank 1 without the abort
print("rank 0 must not get here")
