"""One program on two libraries: ``run(torch)`` with PyTorch, and ``run(difflab)``.

It exercises ``nn.utils.parametrize``/``parametrizations``, the hook-based weight and
spectral norms, ``nn.utils.prune`` and ``optim.swa_utils`` from inputs made by NumPy (no
library's random generator: the random starts, spectral norm's ``u``, ``v`` and orthogonal's
``base``, are overwritten through ``load_state_dict``), and returns every result as a NumPy
array by name.  tests/nn/test_nn_utils_match_pytorch.py runs it on both and compares.
"""

import numpy as np


def run(torch) -> dict:
    """Every result of the program, by name (float64 arrays)."""
    rng = np.random.default_rng(7)
    out = {}
    nn = torch.nn
    P = torch.nn.utils.parametrize
    PZ = torch.nn.utils.parametrizations
    prune = torch.nn.utils.prune
    swa = torch.optim.swa_utils


    def T(a, grad=False):
        return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


    def arr(t):
        return np.array(t.detach().numpy(), dtype=np.float64)


    def linear(weight, bias=True):
        m = nn.Linear(weight.shape[1], weight.shape[0], bias=bias).double()
        with torch.no_grad():
            m.weight.copy_(T(weight))
            if bias:
                m.bias.copy_(T(np.linspace(-1, 1, weight.shape[0])))
        return m


    W = rng.normal(size=(4, 3))
    x = T(rng.normal(size=(5, 3)))
    seed = T(rng.normal(size=(5, 4)))

    # weight norm, both forms
    for dim in (0, 1, None):
        m = PZ.weight_norm(linear(W), dim=dim)
        (m(x) * seed).sum().backward()
        plist = m.parametrizations.weight
        out[f"wn{dim}_g"] = arr(plist.original0)
        out[f"wn{dim}_w"] = arr(m.weight)
        out[f"wn{dim}_ggrad"] = arr(plist.original0.grad)
        out[f"wn{dim}_vgrad"] = arr(plist.original1.grad)
        m.weight = T(W * 2)
        out[f"wn{dim}_assigned_g"] = arr(plist.original0)
        m = nn.utils.weight_norm(linear(W), dim=dim)
        (m(x) * seed).sum().backward()
        out[f"oldwn{dim}_g"] = arr(m.weight_g)
        out[f"oldwn{dim}_ggrad"] = arr(m.weight_g.grad)
        out[f"oldwn{dim}_vgrad"] = arr(m.weight_v.grad)
        nn.utils.remove_weight_norm(m)
        out[f"oldwn{dim}_removed"] = arr(m.weight)

    # a parametrization of the user's, chained with weight norm; then removed
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    class Scale(nn.Module):
        def forward(self, X):
            return 2.0 * X

        def right_inverse(self, A):
            return A / 2.0

    square = rng.normal(size=(3, 3))
    m = P.register_parametrization(linear(square), "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale())
    (m(x) * seed[:, :3]).sum().backward()
    out["chain_w"] = arr(m.weight)
    out["chain_grad"] = arr(m.parametrizations.weight.original.grad)
    with P.cached():
        out["chain_cached_w"] = arr(m.weight)
    m.weight = T(square + square.T)
    out["chain_assigned_original"] = arr(m.parametrizations.weight.original)
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    out["chain_removed_original"] = arr(m.weight)

    # spectral norm, both forms, from the same u and v
    u0 = rng.normal(size=4)
    v0 = rng.normal(size=3)
    u0, v0 = u0 / np.linalg.norm(u0), v0 / np.linalg.norm(v0)
    for n_iter in (1, 3):
        m = PZ.spectral_norm(linear(W), n_power_iterations=n_iter)
        state = m.state_dict()
        state["parametrizations.weight.0._u"] = T(u0)
        state["parametrizations.weight.0._v"] = T(v0)
        m.load_state_dict(state)
        (m(x) * seed).sum().backward()
        out[f"sn{n_iter}_u"] = arr(m.parametrizations.weight[0]._u)
        out[f"sn{n_iter}_grad"] = arr(m.parametrizations.weight.original.grad)
        m.eval()
        out[f"sn{n_iter}_eval_w"] = arr(m.weight)
        out[f"sn{n_iter}_eval_w_again"] = arr(m.weight)  # (no iteration in eval mode)
        m = nn.utils.spectral_norm(linear(W), n_power_iterations=n_iter)
        state = m.state_dict()
        state["weight_u"], state["weight_v"] = T(u0), T(v0)
        m.load_state_dict(state)
        (m(x) * seed).sum().backward()
        out[f"oldsn{n_iter}_w"] = arr(m.weight)
        out[f"oldsn{n_iter}_u"] = arr(m.weight_u)
        out[f"oldsn{n_iter}_v"] = arr(m.weight_v)
        out[f"oldsn{n_iter}_grad"] = arr(m.weight_orig.grad)
        nn.utils.remove_spectral_norm(m)
        out[f"oldsn{n_iter}_removed"] = arr(m.weight)
    conv = nn.ConvTranspose2d(2, 3, 2).double()
    with torch.no_grad():
        conv.weight.copy_(T(rng.normal(size=(2, 3, 2, 2))))
    conv = PZ.spectral_norm(conv)
    out["sn_convT_u_shape"] = np.array(tuple(conv.parametrizations.weight[0]._u.shape))
    vec = nn.Module()
    vec.register_parameter("w", nn.Parameter(T(rng.normal(size=5))))
    out["sn_vector"] = arr(PZ.spectral_norm(vec, "w").w)

    # orthogonal: the same original X and base in both libraries
    for kind in ("matrix_exp", "cayley", "householder"):
        for shape in ((4, 4), (5, 3), (3, 5)):
            m = PZ.orthogonal(nn.Linear(shape[1], shape[0]).double(), orthogonal_map=kind)
            n = max(shape)
            X = rng.normal(size=shape)
            k = min(shape)
            X[np.arange(k), np.arange(k)] = rng.choice([-1.0, 1.0], size=k)
            base = np.linalg.qr(rng.normal(size=(n, n)))[0]
            state = m.state_dict()
            state["parametrizations.weight.original"] = T(X)
            state["parametrizations.weight.0.base"] = T(base)
            m.load_state_dict(state)
            S = T(rng.normal(size=shape))
            (m.weight * S).sum().backward()
            out[f"orth_{kind}_{shape}_w"] = arr(m.weight)
            out[f"orth_{kind}_{shape}_grad"] = arr(m.parametrizations.weight.original.grad)
        m = PZ.orthogonal(nn.Linear(4, 4).double(), orthogonal_map=kind)
        Q = np.linalg.qr(rng.normal(size=(4, 4)))[0]
        m.weight = T(Q)
        out[f"orth_{kind}_assigned"] = arr(m.weight)
        out[f"orth_{kind}_assigned_original"] = arr(m.parametrizations.weight.original)
        m = PZ.orthogonal(nn.Linear(4, 4).double(), orthogonal_map=kind)
        out[f"orth_{kind}_nonorthogonal_start"] = arr(m.weight.mT @ m.weight)
    m = PZ.orthogonal(nn.Linear(3, 5).double(), orthogonal_map="householder",
                      use_trivialization=False)
    Q = np.linalg.qr(rng.normal(size=(5, 3)))[0]
    m.weight = T(Q)
    out["orth_householder_plain_original"] = arr(m.parametrizations.weight.original)
    out["orth_householder_plain_w"] = arr(m.weight)

    # pruning
    Wp = rng.normal(size=(6, 4))
    m = linear(Wp)
    prune.l1_unstructured(m, "weight", amount=0.3)
    out["prune_l1"] = arr(m.weight_mask)
    prune.l1_unstructured(m, "weight", amount=5)
    out["prune_l1_again"] = arr(m.weight_mask)
    prune.ln_structured(m, "weight", amount=0.34, n=2, dim=0)
    out["prune_ln2"] = arr(m.weight_mask)
    prune.ln_structured(m, "weight", amount=1, n=float("inf"), dim=1)
    out["prune_lninf"] = arr(m.weight_mask)
    x4 = T(rng.normal(size=(5, 4)))
    seed6 = T(rng.normal(size=(5, 6)))
    (m(x4) * seed6).sum().backward()
    out["prune_grad"] = arr(m.weight_orig.grad)
    out["prune_weight"] = arr(m.weight)
    prune.remove(m, "weight")
    out["prune_removed"] = arr(m.weight)
    m = linear(Wp)
    prune.l1_unstructured(m, "weight", amount=7, importance_scores=T(np.abs(Wp[::-1, ::-1]) + 1))
    prune.l1_unstructured(m, "bias", amount=0.5)
    out["prune_scores"] = arr(m.weight_mask)
    out["prune_bias"] = arr(m.bias_mask)
    a, b = linear(rng.normal(size=(3, 4))), linear(5 * rng.normal(size=(2, 4)))
    prune.l1_unstructured(a, "weight", amount=2)
    prune.global_unstructured([(a, "weight"), (b, "weight"), (a, "bias")],
                              pruning_method=prune.L1Unstructured, amount=0.4)
    out["prune_global_a"] = arr(a.weight_mask)
    out["prune_global_b"] = arr(b.weight_mask)
    out["prune_global_bias"] = arr(a.bias_mask)
    conv = nn.Conv2d(2, 4, 3).double()
    with torch.no_grad():
        conv.weight.copy_(T(rng.normal(size=(4, 2, 3, 3))))
    prune.ln_structured(conv, "weight", amount=0.5, n=1, dim=0)
    prune.ln_structured(conv, "weight", amount=1, n=2, dim=1)
    out["prune_conv"] = arr(conv.weight_mask)

    # SWALR
    for strategy in ("cos", "linear"):
        for anneal in (0, 1, 3):
            opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
            sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=anneal, anneal_strategy=strategy)
            rates = []
            for _ in range(6):
                opt.step()
                sched.step()
                rates.append(opt.param_groups[0]["lr"])
            out[f"swalr_{strategy}_{anneal}"] = np.array(rates)
    opt = torch.optim.SGD([{"params": [nn.Parameter(torch.zeros(1))], "lr": 0.5},
                           {"params": [nn.Parameter(torch.zeros(1))], "lr": 2.0}], lr=1.0)
    sched = swa.SWALR(opt, swa_lr=[0.1, 0.2], anneal_epochs=2)
    rates = []
    for _ in range(4):
        opt.step()
        sched.step()
        rates.append([group["lr"] for group in opt.param_groups])
    out["swalr_groups"] = np.array(rates)

    # averaged models
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double()
    averages = {"swa": swa.AveragedModel(model),
                "ema": swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9)),
                "ema_fn": swa.AveragedModel(model, avg_fn=swa.get_ema_avg_fn(0.8),
                                            use_buffers=True),
                "swa_buffers": swa.AveragedModel(model, use_buffers=True)}
    for _ in range(4):
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(T(rng.normal(size=tuple(p.shape))))
        model(T(rng.normal(size=(6, 3))))
        for average in averages.values():
            average.update_parameters(model)
    for name, average in averages.items():
        for key, value in average.state_dict().items():
            out[f"avg_{name}_{key}"] = arr(value)
    loader = [(T(rng.normal(size=(4, 3))), T(np.zeros(4))) for _ in range(3)]
    swa.update_bn(loader, averages["swa"])
    for key, value in averages["swa"].state_dict().items():
        out[f"bn_{key}"] = arr(value)
    return out
