"""An HTTP/2 client on a raw socket (the h2 library, which the server's hypercorn stands on too),
for the tests of the web entrypoint over cleartext HTTP/2 by prior knowledge: requests on
streams of one connection, answers read frame by frame, and what the server does to a
connection that sends too little."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.events

from tests.web.wire import GRPC_WEB_TRAILERS, frames


@dataclass
class H2Answer:
    headers: dict[str, str]
    body: bytes = b""
    reset: bool = False  # the server reset the stream

    @property
    def status(self) -> int:
        return int(self.headers.get(":status", "0"))

    def grpc_web_trailers(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for flags, payload in frames(self.body):
            if flags & GRPC_WEB_TRAILERS:
                for line in payload.decode().split("\r\n"):
                    name, _, value = line.partition(":")
                    if name:
                        found[name.strip().lower()] = value.strip()
        return found


@dataclass
class H2Client:
    """One HTTP/2 connection by prior knowledge: the preface and our settings are sent at
    once."""

    address: str
    source: str = "127.0.0.1"
    timeout: float = 10.0
    answers: dict[int, H2Answer] = field(default_factory=dict)
    ended: set[int] = field(default_factory=set)
    closed: bool = False  # the server closed the connection (or sent GOAWAY)
    settings: dict[int, int] = field(default_factory=dict)  # the server's, by code

    def __post_init__(self) -> None:
        host, _, port = self.address.rpartition(":")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.bind((self.source, 0))
        self.sock.connect((host, int(port)))
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        self.flush()

    def flush(self) -> None:
        self.sock.sendall(self.conn.data_to_send())

    def close(self) -> None:
        self.sock.close()

    def request(
        self,
        path: str,
        headers: dict[str, str],
        body: bytes | None = None,
        *,
        end: bool = True,
        method: str = "POST",
    ) -> int:
        """Opens a stream with this request; `end=False` leaves its body unfinished."""
        stream = self.conn.get_next_available_stream_id()
        pseudo = [(":method", method), (":path", path), (":scheme", "http")]
        sent = [*pseudo, (":authority", "web.example"), *headers.items()]
        self.conn.send_headers(stream, sent, end_stream=end and body is None)
        if body is not None:
            self.conn.send_data(stream, body, end_stream=end)
        self.flush()
        return stream

    def answer(self, stream: int) -> H2Answer:
        """The whole answer on `stream` (reading what else comes meanwhile)."""
        while stream not in self.ended:
            assert not self.closed, f"the connection closed before stream {stream} ended"
            self.read()
        return self.answers[stream]

    def read(self) -> None:
        """One read of the socket, its frames handled; `closed` once the server closes."""
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        if not data:
            self.closed = True
            return
        for event in self.conn.receive_data(data):
            self._handle(event)
        self.flush()

    def _handle(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
            answer = self.answers.setdefault(event.stream_id, H2Answer({}))
            for name, value in event.headers:  # str: the connection decodes them
                answer.headers[str(name)] = str(value)
        elif isinstance(event, h2.events.DataReceived):
            self.answers[event.stream_id].body += event.data
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.ended.add(event.stream_id)
        elif isinstance(event, h2.events.StreamReset):
            self.answers.setdefault(event.stream_id, H2Answer({})).reset = True
            self.ended.add(event.stream_id)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.closed = True
        elif isinstance(event, h2.events.RemoteSettingsChanged):
            self.settings.update({code: s.new_value for code, s in event.changed_settings.items()})

    def closed_after(self, since: float) -> float:
        """Seconds from `since` until the server closed the connection (socket.timeout if it
        does not within the socket's timeout)."""
        while not self.closed:
            self.read()
        return time.monotonic() - since

    def server_settings(self) -> dict[int, int]:
        """The settings the server sent first (read until they have come)."""
        while not self.settings and not self.closed:
            self.read()
        return self.settings
