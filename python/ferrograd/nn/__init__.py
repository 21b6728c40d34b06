"""``ferrograd.nn``: modules, parameters, the functional forms and
initialisations, with torch.nn's names and behaviour."""

from . import functional as functional
from . import init as init
from . import parallel as parallel
from . import utils as utils
from .modules import *  # noqa: F403
from .parallel import DataParallel as DataParallel
from .parameter import Buffer as Buffer
from .parameter import Parameter as Parameter
