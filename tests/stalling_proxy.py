"""A TCP proxy in front of a local server that can be made to stall or vanish, then recover: an object
store that stops answering mid-call, or goes away, as the server meets one."""

from __future__ import annotations

import socket
import threading


class StallingProxy:
    """Forwards connections on `port` to `target_port` on the loopback.

    `stall()`: connections are accepted and bytes taken in, but nothing is forwarded either way.
    `vanish()`: the listener closes (connections are refused) and open connections are dropped.
    `recover()`: forwarding again, on the same port."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._resumed = threading.Event()
        self._resumed.set()
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._serve(self._listener)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stall(self) -> None:
        self._resumed.clear()

    def vanish(self) -> None:
        self._resumed.clear()
        with self._lock:
            listener, self._listener = self._listener, None
            dropped, self._open = self._open, []
        if listener is not None:
            _close(listener)  # shut down first: a close alone leaves the accept in progress listening
        for connection in dropped:
            _close(connection)

    def recover(self) -> None:
        with self._lock:
            if self._listener is None:
                self._listener = socket.create_server(("127.0.0.1", self.port))
                self._serve(self._listener)
        self._resumed.set()

    def close(self) -> None:
        self.vanish()
        self._resumed.set()  # held pumps run on and end on their closed sockets

    def _serve(self, listener: socket.socket) -> None:
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed by vanish
                return
            with self._lock:
                self._open.append(client)
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        self._resumed.wait()
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
        except OSError:
            _close(client)
            return
        with self._lock:
            self._open.append(upstream)
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                self._resumed.wait()
                sink.sendall(data)
        except OSError:
            pass
        finally:
            _close(source)
            _close(sink)


def _close(connection: socket.socket) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    connection.close()
