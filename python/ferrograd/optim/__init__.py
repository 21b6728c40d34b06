"""``ferrograd.optim``: optimizers and learning-rate schedulers, with torch's API.

Example::

    >>> w = ferrograd.zeros(2, requires_grad=True)
    >>> opt = ferrograd.optim.SGD([w], lr=0.1)
    >>> sched = ferrograd.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
"""

from . import lr_scheduler as lr_scheduler
from . import optimizer as optimizer
from . import swa_utils as swa_utils
from ._adafactor import Adafactor as Adafactor
from ._muon import Muon as Muon
from ._swap import swap_in_optimizer_params_and_state as swap_in_optimizer_params_and_state
from .adadelta import Adadelta as Adadelta
from .adagrad import Adagrad as Adagrad
from .adam import Adam as Adam
from .adamax import Adamax as Adamax
from .adamw import AdamW as AdamW
from .asgd import ASGD as ASGD
from .lbfgs import LBFGS as LBFGS
from .nadam import NAdam as NAdam
from .optimizer import Optimizer as Optimizer
from .radam import RAdam as RAdam
from .rmsprop import RMSprop as RMSprop
from .rprop import Rprop as Rprop
from .sgd import SGD as SGD
from .sparse_adam import SparseAdam as SparseAdam

__all__ = [
    "ASGD",
    "SGD",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "LBFGS",
    "Muon",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SparseAdam",
    "lr_scheduler",
    "optimizer",
    "swa_utils",
    "swap_in_optimizer_params_and_state",
]
