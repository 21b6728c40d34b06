"""``ferrograd.optim``: optimizers and learning-rate schedulers, with torch's API.

Example::

    >>> w = ferrograd.zeros(2, requires_grad=True)
    >>> opt = ferrograd.optim.SGD([w], lr=0.1)
    >>> sched = ferrograd.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
"""

from . import lr_scheduler as lr_scheduler
from . import optimizer as optimizer
from .adadelta import Adadelta as Adadelta
from .adagrad import Adagrad as Adagrad
from .adam import Adam as Adam
from .adamax import Adamax as Adamax
from .adamw import AdamW as AdamW
from .asgd import ASGD as ASGD
from .nadam import NAdam as NAdam
from .optimizer import Optimizer as Optimizer
from .radam import RAdam as RAdam
from .rmsprop import RMSprop as RMSprop
from .rprop import Rprop as Rprop
from .sgd import SGD as SGD

__all__ = [
    "ASGD",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "lr_scheduler",
    "optimizer",
]
