"""``ferrograd.optim``: optimizers and learning-rate schedulers, with torch's API.

Example::

    >>> w = ferrograd.zeros(2, requires_grad=True)
    >>> opt = ferrograd.optim.SGD([w], lr=0.1)
    >>> sched = ferrograd.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
"""

from . import lr_scheduler as lr_scheduler
from . import optimizer as optimizer
from .adagrad import Adagrad as Adagrad
from .adam import Adam as Adam
from .adamw import AdamW as AdamW
from .optimizer import Optimizer as Optimizer
from .rmsprop import RMSprop as RMSprop
from .sgd import SGD as SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler", "optimizer"]
