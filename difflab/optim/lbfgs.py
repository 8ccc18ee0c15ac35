r"""L-BFGS: a quasi-Newton method that needs the loss again and again, hence a closure.

Newton's step is d = -H⁻¹g.  BFGS builds an approximation of H⁻¹ from the
steps it has taken, s_k = x_{k+1} - x_k, and the change of gradient they
caused, y_k = g_{k+1} - g_k (a secant condition: the approximation maps each
y_k to s_k).  *Limited-memory* BFGS keeps only the last ``history_size``
pairs and never forms a matrix: the *two-loop recursion* (Nocedal & Wright,
*Numerical Optimization*, Algorithm 7.4) applies the approximate inverse
Hessian to g in O(history·n), starting from the scaled identity
γ = sᵀy / yᵀy.

Each call of :meth:`LBFGS.step` runs up to ``max_iter`` such iterations,
re-evaluating the loss through the closure: with a fixed step ``lr``, or with
a line search that finds a step satisfying the *strong Wolfe conditions*
(sufficient decrease f(x + t d) ≤ f(x) + c₁ t gᵀd and curvature
|∇f(x + t d)ᵀd| ≤ c₂ |gᵀd|; Algorithms 3.5 and 3.6 of the same book, with
cubic interpolation).  This follows PyTorch's ``torch.optim.LBFGS`` step for
step, so a program gets the same iterates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from difflab import backend
from difflab.autograd.grad_mode import enable_grad
from difflab.optim.optimizer import Optimizer
from difflab.tensor import Tensor


def _cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                       bounds: tuple | None = None) -> float:
    """The minimiser of the cubic through (x1, f1, f1') and (x2, f2, f2'), kept in ``bounds``
    (Nocedal & Wright, eq. 3.59); the midpoint when the cubic has no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square ** 0.5
        if x1 <= x2:
            position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(position, low), high)
    return (low + high) / 2.0


def _strong_wolfe(evaluate: Callable, t: float, d: Any, f: float, g: Any, gtd: float,
                  c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple:
    """A step t along d meeting the strong Wolfe conditions: bracket, then zoom.

    ``evaluate(t)`` returns the loss and the flat gradient at x + t·d.  Returns
    (loss, gradient, t, evaluations).
    """
    xp = backend.array_module(d)
    d_norm = float(xp.abs(d).max())
    g = g.copy()
    f_new, g_new = evaluate(t)
    evaluations, gtd_new = 1, float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done, ls_iter = False, 0
    while ls_iter < max_ls:  # bracketing phase: find an interval that holds a good step
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                          bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = evaluate(t)
        evaluations, gtd_new, ls_iter = evaluations + 1, float(g_new @ d), ls_iter + 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]
        bracket_gtd = [gtd, gtd_new]

    # zoom phase: shrink the bracket until a step satisfies both conditions
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])
        # a point too close to an end of the bracket makes little progress: move it inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) \
                    else min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evaluations, gtd_new, ls_iter = evaluations + 1, float(g_new @ d), ls_iter + 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evaluations


class LBFGS(Optimizer):
    """Limited-memory BFGS (PyTorch's algorithm and arguments); ``step`` needs a closure.

    The closure clears the gradients, computes the loss, calls ``backward()``
    and returns the loss; ``step(closure)`` calls it as often as it needs
    (up to ``max_eval`` times) and returns the first loss.  All parameters are
    treated as one vector, so there is one parameter group.

    Parameters
    ----------
    params : iterable of Tensor
    lr : float
        The step length (scaled on the very first iteration, as in PyTorch).
    max_iter : int
        Iterations per ``step``.
    max_eval : int, optional
        Closure calls per ``step`` (default ``max_iter * 5 // 4``).
    tolerance_grad : float
        Stop when the largest gradient component is at most this.
    tolerance_change : float
        Stop when the loss or the step changes less than this.
    history_size : int
        How many (s, y) pairs approximate the inverse Hessian.
    line_search_fn : None or 'strong_wolfe'

    Examples
    --------
    Minimise the Rosenbrock function, whose minimum is at (1, 1):

    >>> import difflab as dl
    >>> xy = dl.tensor([-1.5, 2.0], dtype=dl.float64, requires_grad=True)
    >>> opt = dl.optim.LBFGS([xy], lr=1, max_iter=100, line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in xy.tolist()]
    [1.0, 1.0]
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if not lr > 0:
            raise ValueError(f"Invalid learning rate: {lr} (must be > 0)")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")
        if not isinstance(max_iter, int) or max_iter < 1:
            raise ValueError(f"LBFGS: max_iter must be a positive integer, got {max_iter!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ------------------------------------------------ all parameters as one flat vector
    def _flat_grad(self) -> Any:
        xp = backend.array_module(self._params[0].array)
        return xp.concatenate([
            xp.zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.array.reshape(-1)
            for p in self._params])

    def _add_to_params(self, step: float, direction: Any) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.array += (step * direction[offset:offset + n]).reshape(p.shape).astype(p.dtype)
            p._version[0] += 1
            offset += n

    def _set_params(self, arrays: list) -> None:
        for p, a in zip(self._params, arrays):
            p.array[...] = a
            p._version[0] += 1

    def _evaluate(self, closure: Callable) -> float:
        with enable_grad():
            loss = closure()
        return float(loss.item() if isinstance(loss, Tensor) else loss)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        r"""Run up to ``max_iter`` L-BFGS iterations, calling ``closure`` for each new loss.

        Each iteration computes the direction :math:`d = -H^{-1} g` by the two-loop
        recursion over the last ``history_size`` pairs :math:`(s_k, y_k)`, then moves
        :math:`\theta \leftarrow \theta + t d` with :math:`t = \text{lr}` (scaled on the
        very first iteration) or the step the strong-Wolfe line search finds.  It
        stops early when the largest gradient entry is below ``tolerance_grad``, the
        step or the change of the loss below ``tolerance_change``, or after
        ``max_eval`` closure calls.  The history lives in ``state`` and carries over
        to the next ``step``.

        Parameters
        ----------
        closure : callable
            Clears the gradients, computes the loss, calls ``backward()`` and returns
            the loss.  Required.

        Returns
        -------
        Tensor or float
            The loss the first closure call returned (before this step's updates).

        Raises
        ------
        RuntimeError
            Without a closure; the message shows the closure to write.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> x = nn.Parameter(dl.tensor([-1.0, 1.0], dtype=dl.float64))
        >>> opt = optim.LBFGS([x], lr=1, line_search_fn="strong_wolfe")
        >>> def closure():                      # Rosenbrock's function, minimum at (1, 1)
        ...     opt.zero_grad()
        ...     loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        ...     loss.backward()
        ...     return loss
        >>> for _ in range(5):
        ...     _ = opt.step(closure)
        >>> [round(v, 4) for v in x.tolist()]
        [1.0, 1.0]
        """
        if closure is None or not callable(closure):
            raise RuntimeError(
                "LBFGS.step needs a closure that re-evaluates the model: def closure(): "
                "optimizer.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); "
                "return loss -- then optimizer.step(closure)"
            )
        self._tell_the_tracer()
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss.item() if isinstance(orig_loss, Tensor) else orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        xp = backend.array_module(flat_grad)
        if float(xp.abs(flat_grad).max()) <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:  # first iteration: steepest descent
                d, old_dirs, old_stps, ro, h_diag = -flat_grad, [], [], [], 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y @ s)
                if ys > 1e-10:  # keep the pair only if the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y @ y)
                # the two-loop recursion: d = -H⁻¹ g without forming H⁻¹
                alphas = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    alphas[i] = float(old_stps[i] @ q) * ro[i]
                    q = q - alphas[i] * old_dirs[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    beta = float(old_dirs[i] @ r) * ro[i]
                    r += old_stps[i] * (alphas[i] - beta)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / float(xp.abs(flat_grad).sum())) * lr if state["n_iter"] == 1 \
                else lr
            gtd = float(flat_grad @ d)
            if gtd > -tolerance_change:  # not a descent direction any more
                break
            evaluations = 0
            if group["line_search_fn"] == "strong_wolfe":
                start = [p.array.copy() for p in self._params]

                def evaluate(step: float, start: list = start, d: Any = d) -> tuple:
                    self._add_to_params(step, d)
                    value = self._evaluate(closure)
                    gradient = self._flat_grad()
                    self._set_params(start)
                    return value, gradient

                loss, flat_grad, t, evaluations = _strong_wolfe(evaluate, t, d, loss, flat_grad,
                                                                gtd)
                self._add_to_params(t, d)
                converged = float(xp.abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add_to_params(t, d)
                converged = False
                if n_iter != max_iter:
                    loss = self._evaluate(closure)
                    flat_grad = self._flat_grad()
                    converged = float(xp.abs(flat_grad).max()) <= tolerance_grad
                    evaluations = 1
            current_evals += evaluations
            state["func_evals"] += evaluations
            if n_iter == max_iter or current_evals >= max_eval or converged:
                break
            if float(xp.abs(d * t).max()) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`Optimizer.state_dict` returned, the curvature history included.

        The history is one flat vector per pair, as long as all parameters
        together, so it is restored as saved (converted to the parameters' dtype and
        device).

        Parameters
        ----------
        state_dict : dict
            What :meth:`Optimizer.state_dict` returned.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If the groups do not match (see :meth:`Optimizer.load_state_dict`), the
            state belongs to another parameter than the first, or a saved vector's
            length differs from the number of elements of the parameters.

        Examples
        --------
        >>> import difflab as dl
        >>> from difflab import nn, optim
        >>> x = nn.Parameter(dl.tensor([3.0, -2.0]))
        >>> opt = optim.LBFGS([x], max_iter=3)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (x ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure)
        >>> y = nn.Parameter(dl.zeros(2))
        >>> again = optim.LBFGS([y], max_iter=3)
        >>> again.load_state_dict(opt.state_dict())
        >>> again.state[y]["n_iter"] == opt.state[x]["n_iter"]
        True
        """
        saved = dict(state_dict.get("state", {}))
        super().load_state_dict({"state": {}, "param_groups": state_dict.get("param_groups")})
        self._params = self.param_groups[0]["params"]
        if not saved:
            return
        if set(saved) != {0} and set(map(int, saved)) != {0}:
            raise ValueError(f"LBFGS state must belong to parameter 0, got {sorted(saved)}")
        like = self._params[0]
        size = sum(p.numel() for p in self._params)

        def restore(value: Any, key: str) -> Any:
            if isinstance(value, (list, tuple)):
                return [restore(v, key) for v in value]
            if isinstance(value, Tensor):
                value = value.array
            if hasattr(value, "shape") and getattr(value, "ndim", 0):
                if tuple(value.shape) != (size,):
                    raise ValueError(f"LBFGS state '{key}' has shape {tuple(value.shape)}; the "
                                     f"parameters have {size} elements in all")
                array = backend.to_device(value, like.device) if like.is_cuda else \
                    backend.to_numpy(value)
                return array.astype(like.dtype, copy=True)
            return value

        self.state = {like: {k: restore(v, k) for k, v in next(iter(saved.values())).items()}}
