"""The "PyTorch Benchmark" recipe, at small sizes.

In the style of PyTorch's recipe: two ways to compute a batched dot product,
timed with timeit.Timer and with torch.utils.benchmark.Timer (time per run,
a warm-up, one thread unless asked), blocked_autorange's many short blocks, a
Compare table over input sizes and thread counts, and measurements pickled and
loaded.  The recipe's Fuzzer and Callgrind sections have no difflab counterpart
(collect_callgrind says so).  difflab's num_threads is recorded by
torch.set_num_threads; NumPy's BLAS keeps its own threads.
"""
import pickle
import timeit
from itertools import product

import difflab as torch
import difflab.utils.benchmark as benchmark


def batched_dot_mul_sum(a, b):
    '''Computes batched dot by multiplying and summing'''
    return a.mul(b).sum(-1)


def batched_dot_bmm(a, b):
    '''Computes batched dot by reducing to ``bmm``'''
    a = a.reshape(-1, 1, a.shape[-1])
    b = b.reshape(-1, b.shape[-1], 1)
    return torch.bmm(a, b).flatten(-3)


# Input for benchmarking
x = torch.randn(1000, 64)

# Ensure that both functions compute the same output
assert batched_dot_mul_sum(x, x).allclose(batched_dot_bmm(x, x))
print("both compute the same:", True)

# 2. Benchmarking with timeit.Timer
t0 = timeit.Timer(stmt='batched_dot_mul_sum(x, x)', globals={
    'x': x, 'batched_dot_mul_sum': batched_dot_mul_sum})
t1 = timeit.Timer(stmt='batched_dot_bmm(x, x)', globals={
    'x': x, 'batched_dot_bmm': batched_dot_bmm})
print(f'mul_sum(x, x):  {t0.timeit(100) / 100 * 1e6:>5.1f} us')
print(f'bmm(x, x):      {t1.timeit(100) / 100 * 1e6:>5.1f} us')

# 3. Benchmarking with torch.utils.benchmark.Timer
t0 = benchmark.Timer(
    stmt='batched_dot_mul_sum(x, x)',
    setup='from __main__ import batched_dot_mul_sum',
    globals={'x': x})
t1 = benchmark.Timer(
    stmt='batched_dot_bmm(x, x)',
    setup='from __main__ import batched_dot_bmm',
    globals={'x': x})
print(t0.timeit(100))
print(t1.timeit(100))

num_threads = torch.get_num_threads()
print(f'Benchmarking on {num_threads} threads')
t0 = benchmark.Timer(
    stmt='batched_dot_mul_sum(x, x)',
    setup='from __main__ import batched_dot_mul_sum',
    globals={'x': x},
    num_threads=num_threads,
    label='Multithreaded batch dot',
    sub_label='Implemented using mul and sum')
t1 = benchmark.Timer(
    stmt='batched_dot_bmm(x, x)',
    setup='from __main__ import batched_dot_bmm',
    globals={'x': x},
    num_threads=num_threads,
    label='Multithreaded batch dot',
    sub_label='Implemented using bmm')
print(t0.timeit(100))
print(t1.timeit(100))

# 4. Benchmarking with blocked_autorange
m0 = t0.blocked_autorange(min_run_time=0.05)
m1 = t1.blocked_autorange(min_run_time=0.05)
print(m0)
print(m1)
print(f"Mean:   {m0.mean * 1e6:6.2f} us")
print(f"Median: {m0.median * 1e6:6.2f} us")

# 5. Comparing benchmark results
results = []
sizes = [1, 64, 256]
for b, n in product(sizes, sizes):
    # label and sub_label are the rows
    # description is the column
    label = 'Batched dot'
    sub_label = f'[{b}, {n}]'
    x = torch.ones((b, n))
    for num_threads in [1, 4]:
        results.append(benchmark.Timer(
            stmt='batched_dot_mul_sum(x, x)',
            setup='from __main__ import batched_dot_mul_sum',
            globals={'x': x},
            num_threads=num_threads,
            label=label,
            sub_label=sub_label,
            description='mul/sum',
        ).blocked_autorange(min_run_time=0.01))
        results.append(benchmark.Timer(
            stmt='batched_dot_bmm(x, x)',
            setup='from __main__ import batched_dot_bmm',
            globals={'x': x},
            num_threads=num_threads,
            label=label,
            sub_label=sub_label,
            description='bmm',
        ).blocked_autorange(min_run_time=0.01))

compare = benchmark.Compare(results)
compare.print()

compare.trim_significant_figures()
compare.colorize()
compare.print()

# 6. Saving/Loading benchmark results
ab_test_results = [pickle.dumps(m) for m in results[:4]]
loaded = [pickle.loads(s) for s in ab_test_results]
print("measurements pickled and loaded:", len(loaded),
      all(a.times == b.times for a, b in zip(loaded, results)))

# 8. Collecting instruction counts with Callgrind: not in difflab
try:
    t0.collect_callgrind()
except NotImplementedError as error:
    print("collect_callgrind:", error)
