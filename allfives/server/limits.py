"""What keeps one client from locking the others out of the bot server: the limits and their checks.

- ``Limits``: the numbers (``allfives serve`` flags): how long a request's head, its body and an
  idle connection may take, how many connections are open at once (in all and per client), and how
  much analysis work (``/analyze``, the web page's hints) runs or waits (in all and per client).
- ``ConnectionLimits``: the open connections, counted per client address as uvicorn accepts them.
- ``WorkQueue``: a few threads of its own for heavy work, refusing a job at once (429 or 503 with
  ``Retry-After``) instead of queuing it without end.
- ``HostCheck``: the ``Host`` header must name this server (DNS rebinding: a page of
  ``attacker.example`` whose name the attacker points at 127.0.0.1 would otherwise drive it).
- ``AddressSet``: the reverse proxies' addresses (``--behind-proxy``).

A client is its remote address (behind a trusted proxy, the address the proxy forwards).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .service import ApiError

#: the names a browser only sends for this machine (not a name an attacker's DNS can point here)
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
#: the addresses that mean "every interface"
WILDCARDS = ("", "0.0.0.0", "::")
#: the proxy addresses ``--behind-proxy`` trusts when it names none (a proxy on this machine)
LOCAL_PROXY = "127.0.0.1,::1"


@dataclass(frozen=True)
class Limits:
    """The server's limits; each is an ``allfives serve`` flag of the same name."""

    #: seconds from a connection's opening (or a request's first byte on a kept-alive one) to the
    #: end of the request's headers; then a 408 and the connection is closed
    header_timeout: float = 10.0
    #: seconds a request's body may take to arrive (408, or 413 for one over the limit)
    body_timeout: float = 10.0
    #: seconds a kept-alive connection may wait for its next request
    idle_timeout: float = 30.0
    #: connections open at once, in all (a new one beyond gets a 503); lowered to fit the
    #: process's open-file limit
    max_connections: int = 512
    #: connections open at once from one client address (429 beyond; a trusted proxy is exempt)
    max_client_connections: int = 64
    #: threads running move analyses (``/analyze`` and the web page's hints)
    analysis_workers: int = 1
    #: analyses that may wait for a worker (503 beyond)
    analysis_queue: int = 16
    #: analyses of one client running or waiting at once (429 beyond)
    client_analyses: int = 2

    def check(self) -> None:
        """``ValueError`` naming the first limit out of range by its flag."""
        for name in ("header_timeout", "body_timeout", "idle_timeout"):
            value = getattr(self, name)
            if not 0 < value <= 3600:
                raise ValueError(f"{flag(name)} must be in (0, 3600] seconds, got {value:g}")
        for name in ("max_connections", "max_client_connections", "analysis_workers", "client_analyses", "analysis_queue"):
            least = 0 if name == "analysis_queue" else 1
            if getattr(self, name) < least:
                raise ValueError(f"{flag(name)} must be at least {least}, got {getattr(self, name)}")


def flag(name: str) -> str:
    """A limit's command-line flag (``header_timeout`` -> ``--header-timeout``)."""
    return "--" + name.replace("_", "-")


class AddressSet:
    """IP addresses and networks (``127.0.0.1,10.0.0.0/8``; ``*``: any)."""

    def __init__(self, text: str) -> None:
        items = [item.strip() for item in text.split(",") if item.strip()]
        if not items:
            raise ValueError("expected IP addresses or networks separated by commas, got nothing")
        self.any = "*" in items
        try:
            self.networks = [ipaddress.ip_network(item, strict=False) for item in items if item != "*"]
        except ValueError as exc:
            raise ValueError(f"not an IP address or network: {exc}") from None
        self.text = ",".join(items)

    def __contains__(self, host) -> bool:
        if self.any:
            return True
        try:
            address = ipaddress.ip_address(host)
        except (TypeError, ValueError):
            return False
        return any(address in network for network in self.networks)


class ConnectionLimits:
    """The open connections, in all and per client address; called from the event loop only.

    A connection is a protocol object with ``waiting_since()`` (when it began waiting on its client:
    for a request's head, the rest of a body, or its next request; ``None`` while a request of its
    is being answered) and ``evict()`` (close it). At the cap, a new connection takes the place of the
    one that has waited on its client the longest, so connections that never finish a request
    cannot keep others out; only when every connection has a request being answered is it refused."""

    def __init__(self, limits: Limits, proxies: AddressSet | None = None) -> None:
        self.limits = limits
        self.proxies = proxies
        self.members: dict = {}  # connection -> its client's address
        self.by_client: Counter = Counter()

    def admit(self, connection, host: str) -> tuple[int, str] | None:
        """Count a new connection from ``host``, or say why not: ``(status, message)``."""
        limits = self.limits
        exempt = self.proxies is not None and host in self.proxies
        if not exempt and self.by_client[host] >= limits.max_client_connections:
            return 429, (f"client {host} holds {limits.max_client_connections} open connections, the limit per client "
                         f"({flag('max_client_connections')}); close one or reuse it")
        if len(self.members) >= limits.max_connections and not self._make_room():
            return 503, (f"the server holds its limit of {limits.max_connections} open connections "
                         f"({flag('max_connections')}), each with a request being answered; try again shortly")
        self.members[connection] = host
        self.by_client[host] += 1
        return None

    def _make_room(self) -> bool:
        """Evict the connection that has waited on its client the longest, if one is waiting."""
        waiting = ((since, connection) for connection in self.members if (since := connection.waiting_since()) is not None)
        oldest = min(waiting, key=lambda pair: pair[0], default=None)
        if oldest is None:
            return False
        self.release(oldest[1])
        oldest[1].evict()
        return True

    def release(self, connection) -> None:
        """Stop counting ``connection`` (once; again does nothing)."""
        host = self.members.pop(connection, None)
        if host is None:
            return
        self.by_client[host] -= 1
        if self.by_client[host] <= 0:
            del self.by_client[host]


class WorkQueue:
    """A job runs on one of ``workers`` threads; at most ``workers + waiting`` jobs are held in all
    (503 beyond) and ``per_client`` of one client (429 beyond), each counted until its thread is
    done with it. ``None``: no bound."""

    def __init__(self, workers: int, waiting: int | None = None, per_client: int | None = None,
                 what: str = "jobs", flags: tuple[str, str] = ("", "")) -> None:
        """``what``: the jobs, plural, for messages; ``flags``: the flags of the total and per-client bounds."""
        self.executor = ThreadPoolExecutor(workers, thread_name_prefix=what.replace(" ", "-"))
        self.capacity = None if waiting is None else workers + waiting
        self.per_client = per_client
        self.what = what
        self.flags = flags
        self.held = 0
        self.by_client: Counter = Counter()
        self._lock = threading.Lock()

    def submit(self, client: str, fn, *args) -> asyncio.Future:
        """``fn(*args)`` on a worker thread, as an awaitable; ``ApiError`` 429/503 when over a bound."""
        with self._lock:
            if self.per_client is not None and self.by_client[client] >= self.per_client:
                raise ApiError(429, f"client {client} has {self.per_client} {self.what} running or waiting, the limit "
                                    f"per client ({self.flags[1]}); wait for an answer before asking again",
                               {"Retry-After": "1"})
            if self.capacity is not None and self.held >= self.capacity:
                raise ApiError(503, f"the server is busy: {self.capacity} {self.what} are running or waiting, its limit "
                                    f"({self.flags[0]}); try again shortly", {"Retry-After": "2"})
            self.held += 1
            self.by_client[client] += 1
        future = self.executor.submit(fn, *args)
        future.add_done_callback(lambda _: self._release(client))
        return asyncio.wrap_future(future)

    def _release(self, client: str) -> None:
        with self._lock:
            self.held -= 1
            self.by_client[client] -= 1
            if self.by_client[client] <= 0:
                del self.by_client[client]


def split_host(value: str) -> tuple[str, str | None]:
    """``(name, port)`` of a Host header (``[::1]:8000`` -> ``("::1", "8000")``); ``ValueError``
    for one that is not a host name or address with an optional port."""
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError("a bracketed IPv6 address must end with ']' (then ':PORT' or nothing)")
        port = rest[1:] if rest else None
    elif value.count(":") == 1:
        name, port = value.split(":")
    else:
        name, port = value, None
    if port is not None and not (port.isascii() and port.isdigit() and len(port) <= 5):
        raise ValueError(f"the port {port[:12]!r} is not a number")
    name = name.lower().rstrip(".")
    if not name or not all(ch.isascii() and (ch.isalnum() or ch in "-._:") for ch in name):
        raise ValueError("it is not a host name or an IP address")
    return name, port


def is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """Which ``Host`` headers the server answers: this machine's local names, the address it is
    bound to (``--host``, as given and as an address), any IP address and the machine's name when it
    is bound to every interface, and the names of ``--allowed-hosts`` (``*.example.com``: any name
    under it; ``*``: any Host at all). The port is not compared: a proxy or a container's port
    mapping changes it, and it plays no part in DNS rebinding. A request without a Host header
    (HTTP/1.0; no browser sends one) passes."""

    def __init__(self, bound: str, allowed: tuple[str, ...] = ()) -> None:
        self.any = "*" in allowed
        self.any_ip = bound in WILDCARDS
        names = set(LOCAL_NAMES)
        if bound not in WILDCARDS:
            names.add(bound.lower().strip("[]"))
        else:
            names.add(socket.gethostname().lower())
        suffixes = []
        for entry in allowed:
            entry = entry.strip().lower().rstrip(".")
            if entry.startswith("*."):
                suffixes.append(entry[1:])
            elif entry and entry != "*":
                try:
                    names.add(split_host(entry)[0])
                except ValueError as exc:
                    raise ValueError(f"{entry[:80]!r}: {exc}") from None
        self.names = frozenset(names)
        self.suffixes = tuple(suffixes)

    def describe(self) -> str:
        shown = sorted(f"[{n}]" if ":" in n else n for n in self.names) + ["*" + s for s in self.suffixes]
        return ", ".join(shown) + (", any IP address" if self.any_ip else "")

    def refusal(self, value: str | None) -> str | None:
        """Why a request with this Host header is refused, or ``None``."""
        if self.any or value is None:
            return None
        try:
            name, _ = split_host(value)
        except ValueError as exc:
            return f"invalid Host header {value[:80]!r}: {exc}"
        if name in self.names or name.endswith(self.suffixes) or (self.any_ip and is_ip(name)):
            return None
        return (f"Host {value[:80]!r} is not a name of this server ({self.describe()}); a server reached by "
                f"another name is started with --allowed-hosts NAME (this check stops DNS rebinding)")
