import numpy as np
from difflab.jit import fusion
from difflab.ops import registry
from difflab.backend import numpy_namespace
for name in sorted(p.name for p in registry.elementwise_ops()):
    p = registry.get(name)
    low, high = p.rule.domain
    rng = np.random.default_rng(sum(map(ord, name)))
    a, b = rng.uniform(low, high, 2000).astype(np.float32), rng.uniform(low, high, 2000).astype(np.float32)
    unary = isinstance(p, registry.UnaryOp)
    body = (("add", ("in0", 0.0)), (name, ("t0",) if unary else ("t0", "in1")))
    want = p.rule.forward(numpy_namespace, a + 0.0, *([] if unary else [b]))
    kind, k = fusion.compile_kernel(body, (1,), True, dtype=np.float32)
    out = np.empty(2000, np.float32)
    if kind == "numba":
        k(2000, a, *([] if unary else [b]), out)
    else:
        (out,) = k(numpy_namespace, a, *([] if unary else [b]))
    w = np.asarray(want)
    ulp = np.abs(out.view(np.int32).astype(np.int64) - w.astype(np.float32).view(np.int32).astype(np.int64))
    fin = np.isfinite(w)
    print(f"{name:14s} {kind:6s} {w.dtype} maxulp={ulp[fin].max() if fin.any() else '-'} neq={(out!=w).sum()}")
