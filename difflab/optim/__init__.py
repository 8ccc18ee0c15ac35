"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``,
``Adamax``, ``NAdam``, ``RAdam``, ``Rprop``, ``ASGD``, ``LBFGS``, ``SparseAdam``),
``lr_scheduler`` and ``swa_utils`` (weight averaging: SWA and EMA).

The loop every learner writes::

    optimizer = difflab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in loader:
        optimizer.zero_grad()          # forget the last batch's gradients
        loss = loss_fn(model(x), y)
        loss.backward()                # fill p.grad (or nn.utils.compute_gradients)
        optimizer.step()               # update p in place

``LBFGS`` needs the loss more than once per step, so it takes a *closure*
that recomputes it: ``optimizer.step(closure)``.
"""

from difflab.optim import lbfgs, lr_scheduler, swa_utils
from difflab.optim.adaptive import ASGD, Adadelta, Adamax, NAdam, RAdam, Rprop
from difflab.optim.lbfgs import LBFGS
from difflab.optim.optimizer import Optimizer
from difflab.optim.sgd import SGD, Adagrad, Adam, AdamW, RMSprop, SparseAdam

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler", "swa_utils"]
