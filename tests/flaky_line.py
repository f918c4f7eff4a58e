"""A TCP line between a client and the server that fails the ways a phone's Wi-Fi does.

``cut()``: both ends see their connections close at once (the server went away, a clean drop).
``silence()``: nothing gets through any more and nobody is told; the connections stay open until an
end gives up on its own (carried out of the Wi-Fi's range: no packet says goodbye). While the line is
down, new connections are refused at once, as a phone without a network fails them.
``restore()``: new connections get through again (the connections from before stay dead).
"""

from __future__ import annotations

import socket
import threading
from typing import Any


class FlakyLine:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.up = threading.Event()
        self.up.set()
        self.closed = False
        #: connections refused while the line was down (a client's attempts to reconnect)
        self.refused = 0
        #: open connections, each with the event that says whether its bytes still get through
        self.pairs: list[tuple[socket.socket, socket.socket, threading.Event]] = []
        self.guard = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.up.is_set():
                client.close()  # no network: nothing gets through
                self.refused += 1
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            flowing = threading.Event()
            flowing.set()
            with self.guard:
                self.pairs.append((client, upstream, flowing))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b, flowing), daemon=True).start()

    @staticmethod
    def _pipe(source: Any, sink: Any, flowing: threading.Event) -> None:
        try:
            while data := source.recv(65536):
                if flowing.is_set():
                    sink.sendall(data)
                # else: lost on the way, and nobody is told
        except OSError:
            pass
        finally:
            if flowing.is_set():  # a close travels only while the line carries anything at all
                for s in (source, sink):
                    try:
                        s.close()
                    except OSError:
                        pass

    def _take_pairs(self) -> list[tuple[socket.socket, socket.socket, threading.Event]]:
        with self.guard:
            pairs, self.pairs = self.pairs, []
        return pairs

    @staticmethod
    def _close(pair: tuple[socket.socket, socket.socket, threading.Event]) -> None:
        for s in pair[:2]:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    def cut(self) -> None:
        self.up.clear()
        for pair in self._take_pairs():
            self._close(pair)

    def silence(self) -> None:
        self.up.clear()
        with self.guard:
            for _, _, flowing in self.pairs:
                flowing.clear()

    def restore(self) -> None:
        with self.guard:
            dead = [pair for pair in self.pairs if not pair[2].is_set()]
            self.pairs = [pair for pair in self.pairs if pair[2].is_set()]
        for pair in dead:  # both ends gave up on these long ago; let the test's sockets go
            self._close(pair)
        self.up.set()

    def close(self) -> None:
        self.closed = True
        self.up.clear()
        for pair in self._take_pairs():
            self._close(pair)
        self.listener.close()
