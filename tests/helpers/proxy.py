"""A TCP proxy in front of a test endpoint, to take the endpoint away and bring it back.

`TcpProxy(port).start()` listens on 127.0.0.1:<a free port> and forwards every connection to
127.0.0.1:`port` (moto's S3 server), one thread per direction. `cut()` is the endpoint going
away: the listener closes (new connections are refused, as by a host that is down) and every open
connection is reset mid-request. `restore()` listens again on the same port: clients that keep
their endpoint URL reach the server again, with everything it stored. `upload_bytes_per_s`: a slow
uplink (each connection forwards at most that many bytes a second towards the server), so that a
test sees a big upload in flight for seconds.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from dataclasses import dataclass

_CHUNK = 64 * 1024
_ACCEPT_POLL_S = 0.05


class TcpProxy:
    """127.0.0.1:`port` (see `url`) forwarding to 127.0.0.1:`target_port`, until `cut()`."""

    def __init__(
        self,
        target_port: int,
        *,
        target_host: str = "127.0.0.1",
        upload_bytes_per_s: int | None = None,
    ) -> None:
        self.target = (target_host, target_port)
        self.upload_bytes_per_s = upload_bytes_per_s
        self.port = 0
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> TcpProxy:
        """Listen (on a free port the first time, on the same port after a `cut`)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(_ACCEPT_POLL_S)
        self.port = listener.getsockname()[1]
        self._stop = threading.Event()
        self._listener = listener
        self._accepting = threading.Thread(
            target=self._accept, args=(listener, self._stop), name="proxy-accept", daemon=True
        )
        self._accepting.start()
        return self

    restore = start

    def cut(self) -> None:
        """Refuse new connections and reset every open one (both sides see the connection die)."""
        listener, self._listener = self._listener, None
        if listener is None:
            return
        self._stop.set()
        if self._accepting is not None:
            self._accepting.join()
        listener.close()
        with self._lock:
            doomed, self._open = self._open, set()
        for sock in doomed:
            _reset(sock)

    close = cut

    def _accept(self, listener: socket.socket, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                _reset(client)
                continue
            client.settimeout(None)
            upstream.settimeout(None)
            with self._lock:
                if stop.is_set():  # cut while connecting: this one dies too
                    _reset(client)
                    _reset(upstream)
                    return
                self._open.update((client, upstream))
            pair = _Pair(client, upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._pump, args=(pair, source, sink), name="proxy-pump", daemon=True
                ).start()

    def _pump(self, pair: _Pair, source: socket.socket, sink: socket.socket) -> None:
        """Copy one direction until its source closes (the half-close travels on; the second
        direction to end closes both) or fails (both are reset)."""
        pace = self.upload_bytes_per_s if source is pair.client else None
        try:
            while data := source.recv(_CHUNK):
                sink.sendall(data)
                if pace:
                    time.sleep(len(data) / pace)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            self._end(pair, reset=True)
            return
        with self._lock:
            pair.ended += 1
            last = pair.ended == 2
        if last:
            self._end(pair, reset=False)

    def _end(self, pair: _Pair, *, reset: bool) -> None:
        with self._lock:
            self._open.difference_update((pair.client, pair.upstream))
        for sock in (pair.client, pair.upstream):
            if reset:
                _reset(sock)
            else:
                with contextlib.suppress(OSError):
                    sock.close()


@dataclass
class _Pair:
    """A client's connection and its connection to the target."""

    client: socket.socket
    upstream: socket.socket
    ended: int = 0  # directions that ended cleanly


def _reset(sock: socket.socket) -> None:
    """End a connection as one to a host that went away ends: a reset (SO_LINGER 0), after a
    shutdown that also wakes a thread blocked reading it (a close alone would not)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
