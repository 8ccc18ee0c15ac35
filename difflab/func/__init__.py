"""Function transforms, as ``torch.func``: vmap, grad, jacrev, jacfwd, hessian, vjp, jvp,
linearize.

Each takes a function and returns a function, and they compose:
``vmap(grad(loss))`` gives per-example gradients, ``jacfwd(jacrev(f))`` a
Hessian.  :func:`functional_call` runs a module with parameters passed in,
so a network's loss is a function of its parameters.  See docs/guides/func.md.
"""

from difflab.func.functional_call import (
    functional_call,
    replace_all_batch_norm_modules_,
    stack_module_state,
)
from difflab.func.linearize import linearize
from difflab.func.transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from difflab.func.vmap import BatchedTensor, vmap

__all__ = ["BatchedTensor", "functional_call", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "replace_all_batch_norm_modules_",
           "stack_module_state", "vjp", "vmap"]
