"""Connecting to Ray for the jobs that outgrow one machine (docs/scale.md); ray is imported lazily.

``connect(address, num_cpus, modules)`` starts a local Ray (``address`` ``"local"``), joins the
cluster of ``RAY_ADDRESS`` (``"auto"``) or the one at ``HOST:PORT`` / ``ray://HOST:PORT``, and
ships the driver's own code (``modules``, e.g. ``allfives_env`` and ``allfives_agents``) to every worker
with Ray's ``py_modules`` (a package whose folder is named otherwise, as ``agents/`` of the checkout
is, goes by a link named as it imports), so the workers run exactly what the driver runs, whatever is installed
on their node. Without ray installed, or for an address that is not one of those forms or has no
cluster behind it, it raises ``ClusterError`` with one line saying what to do.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from types import ModuleType
from typing import Sequence

#: what ``--ray`` with no address means: a Ray started here, for this run only
LOCAL = "local"
INSTALL_HINT = "pip install '.[scale]' (or 'allfives[scale]')"
_ADDRESS = re.compile(r"(ray://)?[A-Za-z0-9.\-]+:\d{1,5}")


class ClusterError(RuntimeError):
    """Ray is missing, or the address names no reachable cluster; the message says which."""


def check_address(address: str) -> str:
    """``address`` if it is ``local``, ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``; ``ClusterError`` otherwise."""
    if not isinstance(address, str) or not (address in (LOCAL, "auto") or _ADDRESS.fullmatch(address)):
        raise ClusterError(
            f"bad Ray address {address!r}: give none (start a local Ray), 'auto' (the cluster of RAY_ADDRESS), "
            "HOST:PORT or ray://HOST:PORT"
        )
    return address


def _probe(address: str) -> None:
    """``ClusterError`` at once when nothing listens at ``HOST:PORT`` (ray.init would retry for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise ClusterError(f"no Ray cluster at {address}: {exc.strerror or exc} (is `ray start --head` running there?)") from None


def import_ray() -> ModuleType:
    """The ``ray`` module, or ``ClusterError`` telling how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError(f"the Ray backend needs ray, which is not installed ({exc}): {INSTALL_HINT}") from None
    return ray


def connect(address: str, num_cpus: int | None = None, modules: Sequence[ModuleType] = ()) -> tuple[ModuleType, bool]:
    """``(ray, started)``: Ray ready to take tasks; ``started`` is true when this call initialised it
    (the caller then shuts it down). ``num_cpus`` sizes a local Ray only (default: every core).
    An already initialised Ray (a notebook, a test) is used as it is."""
    check_address(address)
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    runtime_env = {"py_modules": [_package_dir(m) for m in modules]} if modules else None
    options = dict(runtime_env=runtime_env, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    target = os.environ.get("RAY_ADDRESS", "") if address == "auto" else address
    if _ADDRESS.fullmatch(target):
        _probe(target)
    try:
        if address == LOCAL:
            # Ray's own "local": a new Ray, even with RAY_ADDRESS set or a cluster started here
            ray.init(address="local", num_cpus=num_cpus, **options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, TimeoutError, ValueError, RuntimeError) as exc:
        where = f"RAY_ADDRESS={os.environ.get('RAY_ADDRESS')!r}" if address == "auto" else repr(address)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ClusterError(
            f"cannot connect to the Ray cluster at {where}: {first} (is `ray start --head` running there? a cluster "
            "with token authentication also needs RAY_AUTH_MODE=token and its token: docs/scale.md)"
        ) from None
    return ray, True


def _package_dir(module: ModuleType) -> str:
    """The folder Ray ships for ``module``: its own where it is named as the package imports, else a link
    to it of that name (Ray names a shipped package by its folder; the checkout's ``agents/`` imports as
    ``allfives_agents``)."""
    folder = os.path.dirname(os.path.abspath(module.__file__))
    if os.path.basename(folder) == module.__name__:
        return folder
    link = os.path.join(tempfile.mkdtemp(prefix="allfives-ray-"), module.__name__)
    os.symlink(folder, link)
    return link


def cluster_cpus(ray: ModuleType) -> int:
    """The CPUs the cluster offers now (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
