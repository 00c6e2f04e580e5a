"""A loopback TCP forwarder a test can cut: the database "stops" for whoever connects through
it, while the cluster behind it (shared with every other test) runs on.

Why not stop a real cluster: the embedded cluster serves the other tests and the Prefect server,
and a throwaway cluster (initdb, PostGIS, migrations, the demo) costs tens of seconds. Cutting
the forwarder does to a client what a stopped server does: open connections end (the client
reads end-of-file: "server closed the connection unexpectedly") and new ones are refused.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    """Forwards 127.0.0.1:<port> to target; `cut()` drops every connection and stops listening,
    `restore()` listens on the same port again."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._accepting = threading.Event()
        self._thread: threading.Thread | None = None

    def restore(self) -> TcpProxy:
        """Listen (again, on the same port once one was chosen) and forward what arrives."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(0.2)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._accepting.set()
        self._thread = threading.Thread(target=self._accept, args=(listener,), daemon=True,
                                        name=f"proxy-{self.port}")
        self._thread.start()
        return self

    def cut(self) -> None:
        """Refuse new connections and end the open ones, as a stopped server would."""
        self._accepting.clear()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            doomed, self._sockets = self._sockets, set()
        for sock in doomed:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        try:
            while self._accepting.is_set():
                try:
                    client, _ = listener.accept()
                except TimeoutError:
                    continue
                try:
                    upstream = socket.create_connection(self.target)
                except OSError:
                    client.close()
                    continue
                with self._lock:
                    self._sockets.update((client, upstream))
                for a, b in ((client, upstream), (upstream, client)):
                    threading.Thread(target=self._pump, args=(a, b), daemon=True).start()
        finally:
            listener.close()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):  # wakes the other direction's pump too
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        with self._lock:
            self._sockets.discard(source)
        source.close()
