"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``) and ``lr_scheduler``.

The loop every learner writes::

    optimizer = difflab.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for x, y in loader:
        optimizer.zero_grad()          # forget the last batch's gradients
        loss = loss_fn(model(x), y)
        loss.backward()                # fill p.grad (or nn.utils.compute_gradients)
        optimizer.step()               # update p in place
"""

from difflab.optim import lr_scheduler
from difflab.optim.optimizer import Optimizer
from difflab.optim.sgd import SGD, Adagrad, Adam, AdamW, RMSprop

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
