"""``ferrograd.distributed``: collectives across processes, on MPI.

torch's names (``init_process_group``, ``all_reduce``, ``broadcast``...)
with MPI (through mpi4py) as the transport: processes are started by
``mpiexec -n N python train.py`` (or ``python -m
ferrograd.distributed.run -n N train.py``), each learns its rank and the
world size from MPI, and collectives move tensor memory directly (the
buffer protocol: no copies). See docs/distributed.md.
"""

from __future__ import annotations

import array
import enum
import importlib.util
import io
from datetime import timedelta
from typing import Any

from .. import _core
from ._group import (
    DTYPE_CODES,
    DistBackendError,
    DistError,
    DistNetworkError,
    ProcessGroup,
    Work,
    _mpi,
    _state,
    check_world,
    close_world,
    init_world,
    track_backward,
)

__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "GroupMember", "ProcessGroup",
    "ReduceOp", "Work", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce",
    "barrier", "broadcast", "broadcast_object_list", "destroy_process_group", "gather", "get_backend",
    "get_global_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_initialized", "is_mpi_available", "isend",
    "new_group", "recv", "reduce", "reduce_scatter_tensor", "scatter", "send",
]  # fmt: skip

Tensor = _core.Tensor
default_pg_timeout = timedelta(minutes=30)


def is_available() -> bool:
    """Returns whether collectives can run in this process: ferrograd's
    transport, mpi4py, is installed.

    Returns:
        bool: ``True`` when mpi4py can be imported.
    """
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    """Same as :func:`is_available`: the MPI backend is the only one."""
    return is_available()


def is_gloo_available() -> bool:
    """Same as :func:`is_available`: ``"gloo"`` is accepted as a backend name
    and runs on MPI.
    """
    return is_available()


def is_nccl_available() -> bool:
    """Always ``False``: ferrograd runs on the CPU, without NCCL."""
    return False


class Backend(str):
    """The backend names, as a lower-cased ``str``: ``Backend.MPI``,
    ``Backend.GLOO`` and ``Backend.NCCL``. Every CPU backend name runs on
    MPI; ``"nccl"`` is rejected by :func:`init_process_group`.

    Args:
        name (str): the backend's name (any case).
    """

    UNDEFINED = "undefined"
    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str) -> Backend:
        return super().__new__(cls, name.lower())


class ReduceOp(enum.Enum):
    """How :func:`all_reduce`, :func:`reduce` and
    :func:`reduce_scatter_tensor` combine values: ``SUM``, ``AVG``,
    ``PRODUCT``, ``MIN``, ``MAX``, and for integer and bool tensors the
    bitwise ``BAND``, ``BOR`` and ``BXOR``.
    """

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"


class GroupMember:
    """Special group values: ``GroupMember.WORLD`` is the default group
    (``None`` in calls), and ``GroupMember.NON_GROUP_MEMBER`` is what
    :func:`new_group` returns on ranks outside the new group. Also
    available as ``ferrograd.distributed.group``."""

    WORLD: Any = None
    NON_GROUP_MEMBER = object()


group = GroupMember


def _world() -> ProcessGroup:
    if _state.world is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to call init_process_group."
        )
    return _state.world


def _resolve(g: Any) -> ProcessGroup | None:
    """The process group of argument ``g`` (None for the world); None on a
    rank outside it."""
    if g is None or g is GroupMember.WORLD:
        return _world()
    if g is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup (or None for the default group), got {type(g).__name__}")
    _world()
    return g


def _group_rank(g: ProcessGroup, global_rank: int, what: str) -> int:
    try:
        return g._global.index(global_rank)
    except ValueError:
        raise ValueError(
            f"{what}: global rank {global_rank} is not part of {g!r} (ranks {g._global})"
        ) from None


# ---------------------------------------------------------------------------
# Process groups
# ---------------------------------------------------------------------------


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Joins the processes MPI started into the default group; call it once
    in every process before any collective.

    Processes are started by ``mpiexec -n N python train.py`` (or
    ``python -m ferrograd.distributed.run -n N train.py``). Rank and world
    size come from MPI; ``world_size`` and ``rank`` (and the ``WORLD_SIZE``
    and ``RANK`` variables a launcher sets) are only checked against them,
    and so is the number of processes MPI's launcher says it started
    (``PMI_SIZE``, ``OMPI_COMM_WORLD_SIZE``...; a ``RuntimeError`` when
    the launcher belongs to another MPI than mpi4py's).

    Args:
        backend (str, optional): ``"mpi"``, or ``"gloo"`` (which runs on
            MPI here). Default: ``None`` (``"mpi"``).
        init_method (str, optional): ``None``, ``"env://"``, ``"tcp://..."``
            or ``"file://..."``; MPI does the rendezvous, so the address is not
            used. Default: ``None``.
        timeout (timedelta, optional): bounds every collective, and the time a
            failed rank waits for the others to hear of its failure.
            Default: ``None`` (30 minutes).
        world_size (int): the expected number of processes (``-1``: not
            checked). Default: ``-1``.
        rank (int): the expected rank of this process (``-1``: not checked).
            Default: ``-1``.
        store: accepted for compatibility. Default: ``None``.
        group_name (str): accepted for compatibility. Default: ``""``.
        pg_options: accepted for compatibility. Default: ``None``.
        device_id: accepted for compatibility. Default: ``None``.

    Example::

        # run with: mpiexec -n 2 python script.py
        import ferrograd
        import ferrograd.distributed as dist

        dist.init_process_group("mpi")
        t = ferrograd.tensor([float(dist.get_rank())])
        dist.all_reduce(t)  # t is tensor([1.]) on both ranks
        dist.destroy_process_group()
    """
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend or "mpi")
    if name.split(":")[-1] not in ("mpi", "gloo", "undefined"):
        raise RuntimeError(
            f"init_process_group: backend {backend!r} is not available: ferrograd runs on the CPU and "
            "its collectives on MPI; use backend='mpi' (or 'gloo', which runs on MPI here)"
        )
    if init_method is not None and not init_method.startswith(("env://", "tcp://", "file://", "mpi://")):
        raise ValueError(f"init_process_group: unsupported init_method {init_method!r}")
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout)}")
    world = init_world(timeout or default_pg_timeout)
    try:
        check_world(world, world_size, rank)
    except (RuntimeError, ValueError):
        destroy_process_group()
        raise


def is_initialized() -> bool:
    """Returns whether :func:`init_process_group` has set up the default group
    (and it was not destroyed since).
    """
    return _state.world is not None


def destroy_process_group(group: Any = None) -> None:
    """Releases a group, or the default group and with it every group.

    MPI itself stays initialised until exit, so :func:`init_process_group`
    may be called again afterwards. Destroying the default group tells the
    other ranks that this one left (their operations with it raise instead
    of waiting for the timeout).

    Args:
        group (ProcessGroup, optional): the group to release.
            Default: ``None`` (the default group and every other group).
    """
    if group is None or group is GroupMember.WORLD:
        close_world()
        return
    if isinstance(group, ProcessGroup) and _state.broken is None:
        group._comm.Free()


def get_rank(group: Any = None) -> int:
    """Returns this process's rank in ``group``, from 0 to the group size
    minus 1 (-1 on a rank outside the group).

    Args:
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
    """
    g = _resolve(group)
    return -1 if g is None else g.rank()


def get_world_size(group: Any = None) -> int:
    """Returns the number of processes in ``group`` (-1 on a rank outside it).

    Args:
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
    """
    g = _resolve(group)
    return -1 if g is None else g.size()


def get_backend(group: Any = None) -> str:
    """Returns the backend of ``group``: always ``"mpi"``.

    Args:
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
    """
    _resolve(group)
    return Backend.MPI


def get_process_group_ranks(group: Any) -> list[int]:
    """Returns the global ranks of the members of ``group``, in group-rank
    order.

    Args:
        group (ProcessGroup or None): the group (``None``: the default one).
    """
    g = _resolve(group)
    if g is None:
        raise ValueError("get_process_group_ranks: this rank is not part of the group")
    return list(g._global)


def get_global_rank(group: Any, group_rank: int) -> int:
    """Translates a rank within ``group`` into the global rank.

    Args:
        group (ProcessGroup or None): the group (``None``: the default one).
        group_rank (int): the rank within ``group``.
    """
    return get_process_group_ranks(group)[group_rank]


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None, backend: str | None = None,
              pg_options: Any = None, use_local_synchronization: bool = False,
              group_desc: str | None = None) -> Any:
    """Creates a group of some of the processes, for collectives among them.

    Every rank of the world must call it, with the same ``ranks``; ranks
    outside the group get ``GroupMember.NON_GROUP_MEMBER``, and collectives
    they call on it return at once.

    Args:
        ranks (list of ints, optional): the global ranks of the members.
            Default: ``None`` (every rank).
        timeout (timedelta, optional): bounds the group's collectives.
            Default: ``None`` (the default group's timeout).
        backend (str, optional): accepted for compatibility. Default: ``None``.
        pg_options: accepted for compatibility. Default: ``None``.
        use_local_synchronization (bool): accepted for compatibility.
            Default: ``False``.
        group_desc (str, optional): a name for the group in error messages.
            Default: ``None``.

    Returns:
        ProcessGroup: the group, or ``GroupMember.NON_GROUP_MEMBER``.
    """
    world = _world()
    members = list(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members) or any(not 0 <= r < world.size() for r in members):
        raise ValueError(f"new_group: ranks must be distinct ranks of the world (0..{world.size() - 1}), "
                         f"got {ranks}")
    comm = world._comm.Create_group(world._comm.Get_group().Incl(members))
    if comm == _mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    _state.group_count += 1
    limit = world._timeout if timeout is None else timeout.total_seconds()
    return ProcessGroup(comm, members, limit, group_desc or f"group{_state.group_count}")


# ---------------------------------------------------------------------------
# Tensor collectives
# ---------------------------------------------------------------------------

_INT_OPS = {ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR}
_OP_CODES = {op: i for i, op in enumerate(ReduceOp, start=1)}


def _sig(t: Tensor, extra: int = 0) -> tuple[int, int, int]:
    """What the ranks must agree on for a collective on ``t``."""
    return (t.numel(), DTYPE_CODES.get(str(t.dtype), 0), extra)


def _check(t: Any, what: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{what}` of type Tensor but got {type(t)} "
            "instead."
        )
    if not t.is_contiguous():
        raise RuntimeError(
            f"{what}: collectives need contiguous tensors; got shape {list(t.shape)} with strides "
            f"{list(t.stride())} (call .contiguous())"
        )
    return t


class _Buffer:
    """A tensor as MPI reads and writes it: its own memory, or for bfloat16
    (which has no MPI type) a float32 copy written back afterwards."""

    __slots__ = ("tensor", "mem")

    def __init__(self, t: Tensor, fill: bool = True) -> None:
        self.tensor = t.detach()
        if t.dtype == _core.bfloat16:
            self.mem = self.tensor.float() if fill else _core.empty(tuple(t.shape), dtype=_core.float32)
        else:
            self.mem = self.tensor

    def write_back(self) -> None:
        if self.mem is not self.tensor:
            self.tensor.copy_(self.mem)

    def write_back_reduced(self, op: ReduceOp, n: int) -> None:
        """``write_back`` after a reduction with ``op`` over ``n`` ranks:
        MPI sums for ``ReduceOp.AVG``, and the sum is divided here."""
        if op is ReduceOp.AVG:
            self.mem.div_(n)
        self.write_back()


_OP_CACHE: dict[tuple[ReduceOp, Any], Any] = {}


def _mpi_op(op: ReduceOp, dtype: Any, what: str) -> Any:
    """The MPI operation for ``op`` on ``dtype`` (remembered per pair), or
    torch's error for a combination that has none."""
    try:
        return _OP_CACHE[op, dtype]
    except (KeyError, TypeError):
        pass
    mop = _find_mpi_op(op, dtype, what)
    _OP_CACHE[op, dtype] = mop
    return mop


def _find_mpi_op(op: ReduceOp, dtype: Any, what: str) -> Any:
    MPI = _mpi()
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{what}: op must be a ReduceOp, got {op!r}")
    if dtype == _core.bool:
        if op is ReduceOp.AVG:
            raise ValueError(f"{what}: ReduceOp.AVG is not defined for bool tensors")
        return {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR, ReduceOp.MIN: MPI.LAND,
                ReduceOp.PRODUCT: MPI.LAND, ReduceOp.BAND: MPI.LAND, ReduceOp.BXOR: MPI.LXOR}[op]
    if dtype.is_complex and op in (ReduceOp.MIN, ReduceOp.MAX):
        raise ValueError(f"{what}: ReduceOp.{op.name} is not defined for complex tensors ({dtype})")
    if (dtype.is_floating_point or dtype.is_complex) and op in _INT_OPS:
        raise ValueError(f"{what}: ReduceOp.{op.name} needs an integer or bool tensor, got {dtype}")
    if op is ReduceOp.AVG and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"{what}: ReduceOp.AVG needs a floating-point or complex tensor, got {dtype}")
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR,
            ReduceOp.BXOR: MPI.BXOR}[op]


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Any:
    """Combines ``tensor`` across the group's ranks with ``op``, in place:
    afterwards every rank holds the result.

    Args:
        tensor (Tensor): the input and output, of the same shape and dtype
            on every rank.
        op (ReduceOp): how the values combine. Default: ``ReduceOp.SUM``.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).

    Example::

        t = ferrograd.tensor([float(dist.get_rank())])
        dist.all_reduce(t)  # with 2 ranks: tensor([1.]) on both
    """
    return _all_reduce(tensor, op, group, async_op, True)


def _all_reduce(tensor: Tensor, op: ReduceOp, group: Any, async_op: bool, check: bool) -> Any:
    """``all_reduce``; ``check=False`` skips the ranks' agreement check
    (for callers that guarantee it, as DDP's buckets, whose sizes were
    compared when the model was wrapped)."""
    g = _resolve(group)
    if g is None:
        return None
    _check(tensor, "tensor")
    mop = _mpi_op(op, tensor.dtype, "all_reduce")
    buf = _Buffer(tensor)
    MPI = _mpi()
    n = g.size()
    work = g._run("all_reduce", lambda: g._comm.Iallreduce(MPI.IN_PLACE, buf.mem, op=mop),
                  lambda: buf.write_back_reduced(op, n), async_op,
                  check=_sig(tensor, _OP_CODES[op]) if check else None)
    if async_op and not check:
        track_backward(work)
    return work


def broadcast(tensor: Tensor, src: int | None = None, group: Any = None, async_op: bool = False,
              group_src: int | None = None) -> Any:
    """Copies ``tensor`` from the source rank to every rank of the group, in
    place.

    Args:
        tensor (Tensor): the data on the source rank; the output elsewhere
            (same shape and dtype on every rank).
        src (int, optional): the global rank of the source.
            Required unless ``group_src`` is given.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.
        group_src (int, optional): the source's rank within ``group``, instead
            of ``src``. Default: ``None``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(tensor, "tensor")
    root = _root(g, src, group_src, "broadcast")
    buf = _Buffer(tensor, fill=g.rank() == root)
    return g._run("broadcast", lambda: g._comm.Ibcast(buf.mem, root=root), buf.write_back, async_op,
                  check=_sig(tensor, root))


def _root(g: ProcessGroup, src: int | None, group_src: int | None, what: str,
          default: int | None = None) -> int:
    """The group rank of a root given as a global rank (``src``) or a group
    rank (``group_src``); ``default`` (a global rank) when neither is."""
    if group_src is not None:
        if not 0 <= group_src < g.size():
            raise ValueError(f"{what}: group rank {group_src} is outside {g!r}")
        return group_src
    if src is None:
        src = default
    if src is None:
        raise ValueError(f"{what}: give the root as src (a global rank) or group_src")
    return _group_rank(g, int(src), what)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: Any = None, async_op: bool = False) -> Any:
    """Gathers ``tensor`` from every rank: afterwards ``tensor_list[i]`` holds
    rank i's ``tensor`` on every rank.

    Args:
        tensor_list (list of Tensors): one output tensor per rank of the
            group, shaped like ``tensor``.
        tensor (Tensor): this rank's input.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(tensor, "tensor")
    n = g.size()
    if len(tensor_list) != n:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors for a group of {n} ranks")
    for i, out in enumerate(tensor_list):
        if tuple(out.shape) != tuple(tensor.shape) or out.dtype != tensor.dtype:
            raise ValueError(
                f"all_gather: tensor_list[{i}] is {out.dtype} {list(out.shape)}, the input is "
                f"{tensor.dtype} {list(tensor.shape)}"
            )
    send = _Buffer(tensor)
    recv = _core.empty((n, *tensor.shape), dtype=send.mem.dtype)

    def finish() -> None:
        for i, out in enumerate(tensor_list):
            out.detach().copy_(recv[i])

    return g._run("all_gather", lambda: g._comm.Iallgather(send.mem, recv), finish, async_op,
                  check=_sig(tensor))


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                           async_op: bool = False) -> Any:
    """Gathers ``input_tensor`` from every rank into one tensor: rank i's input
    becomes the i-th block of ``output_tensor``.

    Args:
        output_tensor (Tensor): of shape ``[world * n, ...]`` (the inputs
            concatenated along dim 0) or ``[world, *input.shape]`` (stacked).
        input_tensor (Tensor): this rank's input, the same shape on every rank.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(output_tensor, "output_tensor")
    _check(input_tensor, "input_tensor")
    n = g.size()
    _same_dtype(output_tensor, input_tensor, "all_gather_into_tensor")
    _check_blocks("all_gather_into_tensor", output_tensor, "output_tensor", input_tensor, "input", n)
    send, recv = _Buffer(input_tensor), _Buffer(output_tensor, fill=False)
    return g._run("all_gather_into_tensor", lambda: g._comm.Iallgather(send.mem, recv.mem), recv.write_back,
                  async_op, check=_sig(input_tensor, output_tensor.numel()))


def _same_dtype(a: Tensor, b: Tensor, what: str) -> None:
    if a.dtype != b.dtype:
        raise TypeError(f"{what}: output and input dtypes differ ({a.dtype} and {b.dtype})")


def _check_blocks(what: str, whole: Tensor, whole_name: str, block: Tensor, block_name: str, n: int) -> None:
    """``whole`` must have the elements of ``n`` tensors like ``block``, one per rank."""
    if whole.numel() != n * block.numel():
        raise ValueError(
            f"{what}: {whole_name} has {whole.numel()} elements, expected {n} x {block.numel()} "
            f"({block_name} shape {list(block.shape)}, {n} ranks)"
        )


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None,
                          async_op: bool = False) -> Any:
    """Combines ``input`` across ranks with ``op`` and leaves block i (of
    ``world`` equal blocks along dim 0) of the result on rank i.

    Args:
        output (Tensor): this rank's block of the result.
        input (Tensor): this rank's input, ``world`` times ``output``'s size
            along dim 0.
        op (ReduceOp): how the values combine. Default: ``ReduceOp.SUM``.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(output, "output")
    _check(input, "input")
    _same_dtype(output, input, "reduce_scatter_tensor")
    n = g.size()
    _check_blocks("reduce_scatter_tensor", input, "input", output, "output", n)
    mop = _mpi_op(op, input.dtype, "reduce_scatter_tensor")
    send, recv = _Buffer(input), _Buffer(output, fill=False)
    return g._run("reduce_scatter_tensor", lambda: g._comm.Ireduce_scatter_block(send.mem, recv.mem, op=mop),
                  lambda: recv.write_back_reduced(op, n), async_op, check=_sig(output, _OP_CODES[op]))


def reduce(tensor: Tensor, dst: int | None = None, op: ReduceOp = ReduceOp.SUM, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Any:
    """Combines ``tensor`` across ranks with ``op`` into the destination rank's
    ``tensor``; the other ranks' tensors are left as they are.

    Args:
        tensor (Tensor): the input, and the output on the destination rank.
        dst (int, optional): the global rank of the destination.
            Required unless ``group_dst`` is given.
        op (ReduceOp): how the values combine. Default: ``ReduceOp.SUM``.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.
        group_dst (int, optional): the destination's rank within ``group``, instead
            of ``dst``. Default: ``None``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(tensor, "tensor")
    root = _root(g, dst, group_dst, "reduce")
    mop = _mpi_op(op, tensor.dtype, "reduce")
    buf = _Buffer(tensor)
    MPI = _mpi()
    me = g.rank() == root

    def start() -> Any:
        if me:
            return g._comm.Ireduce(MPI.IN_PLACE, buf.mem, op=mop, root=root)
        return g._comm.Ireduce(buf.mem, None, op=mop, root=root)

    def finish() -> None:
        if me:
            buf.write_back_reduced(op, g.size())

    return g._run("reduce", start, finish, async_op, check=_sig(tensor, 1000 * _OP_CODES[op] + root))


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Any:
    """Sends every rank's ``tensor`` to the destination rank, which receives
    them in ``gather_list`` (rank i's tensor in ``gather_list[i]``).

    Args:
        tensor (Tensor): this rank's input.
        gather_list (list of Tensors, optional): on the destination rank, one
            output tensor per rank; ``None`` on the others. Default: ``None``.
        dst (int, optional): the global rank of the destination.
            Default: ``None`` (0, unless ``group_dst`` is given).
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.
        group_dst (int, optional): the destination's rank within ``group``, instead
            of ``dst``. Default: ``None``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(tensor, "tensor")
    root = _root(g, dst, group_dst, "gather", default=0)
    n = g.size()
    send = _Buffer(tensor)
    me = g.rank() == root
    if me:
        if gather_list is None or len(gather_list) != n:
            raise ValueError(f"gather: the destination rank needs a gather_list of {n} tensors")
        recv = _core.empty((n, *tensor.shape), dtype=send.mem.dtype)
    elif gather_list:
        raise ValueError("gather: gather_list is only given on the destination rank")

    def finish() -> None:
        if me:
            assert gather_list is not None
            for i, out in enumerate(gather_list):
                out.detach().copy_(recv[i])

    return g._run("gather", lambda: g._comm.Igather(send.mem, recv if me else None, root=root), finish,
                  async_op, check=_sig(tensor, root))


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: Any = None, async_op: bool = False, group_src: int | None = None) -> Any:
    """Sends ``scatter_list[i]`` of the source rank to rank i, which receives it
    into ``tensor``.

    Args:
        tensor (Tensor): the output on every rank.
        scatter_list (list of Tensors, optional): on the source rank, one
            tensor per rank; ``None`` on the others. Default: ``None``.
        src (int, optional): the global rank of the source.
            Default: ``None`` (0, unless ``group_src`` is given).
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.
        group_src (int, optional): the source's rank within ``group``, instead
            of ``src``. Default: ``None``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(tensor, "tensor")
    root = _root(g, src, group_src, "scatter", default=0)
    n = g.size()
    me = g.rank() == root
    recv = _Buffer(tensor, fill=False)
    if me:
        if scatter_list is None or len(scatter_list) != n:
            raise ValueError(f"scatter: the source rank needs a scatter_list of {n} tensors")
        send = _core.stack([t.detach() for t in scatter_list]).to(recv.mem.dtype).contiguous()
    elif scatter_list:
        raise ValueError("scatter: scatter_list is only given on the source rank")
    return g._run("scatter", lambda: g._comm.Iscatter(send if me else None, recv.mem, root=root),
                  recv.write_back, async_op, check=_sig(tensor, root))


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Any:
    """Waits until every rank of the group has reached the barrier.

    Args:
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        async_op (bool): return a :class:`Work` handle at once instead of
            waiting for completion. Default: ``False``.
        device_ids: accepted for compatibility. Default: ``None``.

    Returns:
        Work or None: the handle when ``async_op``, else ``None`` (also
            ``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    return g._run("barrier", g._comm.Ibarrier, None, async_op, check=(0, 0, 0))


def _tag(tag: int) -> int:
    if not 0 <= tag < 32767:
        raise ValueError(f"tag must be in [0, 32767), got {tag}")
    return int(tag)


def isend(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Starts sending ``tensor`` to the destination rank and returns at once;
    the tensor must not be modified until the returned :class:`Work`
    completes.

    Args:
        tensor (Tensor): the data to send.
        dst (int, optional): the global rank of the destination.
            Required unless ``group_dst`` is given.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        tag (int): matches this send with a receive of the same tag, in
            ``[0, 32767)``. Default: ``0``.
        group_dst (int, optional): the destination's rank within ``group``, instead
            of ``dst``. Default: ``None``.

    Returns:
        Work or None: the handle (``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(tensor, "tensor")
    peer = _root(g, dst, group_dst, "isend")
    buf = _Buffer(tensor)
    return g._run("send", lambda: g._comm.Isend(buf.mem, dest=peer, tag=_tag(tag)), None, True,
                  members=[g._global[peer]])


def send(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Sends ``tensor`` to the destination rank; returns once ``tensor`` may be
    reused.

    Args:
        tensor (Tensor): the data to send.
        dst (int, optional): the global rank of the destination.
            Required unless ``group_dst`` is given.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        tag (int): matches this send with a receive of the same tag, in
            ``[0, 32767)``. Default: ``0``.
        group_dst (int, optional): the destination's rank within ``group``, instead
            of ``dst``. Default: ``None``.
    """
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Starts receiving into ``tensor`` from the source rank and returns at
    once; ``tensor`` holds the data when the returned :class:`Work`
    completes.

    Args:
        tensor (Tensor): the output, shaped and typed like the sent tensor.
        src (int, optional): the global rank of the sender.
            Default: ``None`` (any rank).
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        tag (int): receive only a send with this tag, in ``[0, 32767)``.
            Default: ``0``.
        group_src (int, optional): the sender's rank within ``group``, instead
            of ``src``. Default: ``None``.

    Returns:
        Work or None: the handle (``None`` on a rank outside ``group``).
    """
    g = _resolve(group)
    if g is None:
        return None
    _check(tensor, "tensor")
    MPI = _mpi()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else _root(g, src, group_src, "irecv")
    buf = _Buffer(tensor, fill=False)
    status = MPI.Status()

    def finish() -> int:
        got = status.Get_count(MPI.BYTE)
        want = buf.mem.numel() * buf.mem.element_size()
        if got != want:
            raise ValueError(f"recv: received {got} bytes into a tensor of {want} bytes "
                             f"({tensor.dtype}, shape {list(tensor.shape)}): the sender's tensor differs")
        buf.write_back()
        return g._global[status.Get_source()] if peer == MPI.ANY_SOURCE else g._global[peer]

    return g._run("recv", lambda: g._comm.Irecv(buf.mem, source=peer, tag=_tag(tag)), finish, True, status,
                  members=[] if peer == MPI.ANY_SOURCE else [g._global[peer]])


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receives into ``tensor`` from the source rank, waiting for the data.

    Args:
        tensor (Tensor): the output, shaped and typed like the sent tensor.
        src (int, optional): the global rank of the sender.
            Default: ``None`` (any rank).
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        tag (int): receive only a send with this tag, in ``[0, 32767)``.
            Default: ``0``.
        group_src (int, optional): the sender's rank within ``group``, instead
            of ``src``. Default: ``None``.

    Returns:
        int: the sender's global rank.
    """
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    return int(work.result())


# ---------------------------------------------------------------------------
# Object collectives (serialised by ferrograd.save, read back as
# ferrograd.load(weights_only=True) reads: no arbitrary code on load)
# ---------------------------------------------------------------------------


def _dumps(obj: Any) -> bytearray:
    from ..serialization import save

    f = io.BytesIO()
    save(obj, f)
    return bytearray(f.getbuffer())


def _loads(data: Any) -> Any:
    from ..serialization import load

    return load(io.BytesIO(bytes(data)), weights_only=True)


def broadcast_object_list(object_list: list[Any], src: int | None = None, group: Any = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Replaces the items of ``object_list`` on every rank by the source rank's
    (any picklable objects; tensors inside are pickled with their data).

    Args:
        object_list (list): the objects on the source rank; a list of the same
            length (any content) on the others, filled in place.
        src (int, optional): the global rank of the source.
            Default: ``None`` (0, unless ``group_src`` is given).
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
        device: accepted for compatibility. Default: ``None``.
        group_src (int, optional): the source's rank within ``group``, instead
            of ``src``. Default: ``None``.
    """
    g = _resolve(group)
    if g is None:
        return
    root = _root(g, src, group_src, "broadcast_object_list", default=0)
    me = g.rank() == root
    payload = _dumps(list(object_list)) if me else bytearray()
    size = array.array("q", [len(payload)])
    g._run("broadcast_object_list", lambda: g._comm.Ibcast(size, root=root), None, False)
    data = payload if me else bytearray(size[0])
    g._run("broadcast_object_list", lambda: g._comm.Ibcast(data, root=root), None, False)
    if not me:
        received = _loads(data)
        if len(received) != len(object_list):
            raise ValueError(f"broadcast_object_list: rank {g._global[root]} sent {len(received)} objects, "
                             f"this rank's list has {len(object_list)}")
        object_list[:] = received


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Gathers a picklable object from every rank: afterwards
    ``object_list[i]`` holds rank i's ``obj`` on every rank.

    Args:
        object_list (list): a list of the group's size, filled in place.
        obj (Any): this rank's object.
        group (ProcessGroup, optional): the group to work in. Default: ``None``
            (the default group).
    """
    g = _resolve(group)
    if g is None:
        return
    n = g.size()
    if len(object_list) != n:
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} items for {n} ranks")
    payload = _dumps(obj)
    sizes = array.array("q", bytes(8 * n))
    mine = array.array("q", [len(payload)])
    g._run("all_gather_object", lambda: g._comm.Iallgather(mine, sizes), None, False)
    offsets = [sum(sizes[:i]) for i in range(n)]
    data = bytearray(sum(sizes))
    MPI = _mpi()
    g._run("all_gather_object",
           lambda: g._comm.Iallgatherv(payload, [data, (list(sizes), offsets), MPI.BYTE]), None, False)
    for i in range(n):
        object_list[i] = _loads(data[offsets[i]:offsets[i] + sizes[i]])
