"""agents/shell.connection_of without an engine: what docker-py's ``exec_start(socket=True)`` hands
back becomes a socket object through public API only (the engine path: tests/agents/test_sandbox.py)."""

from __future__ import annotations

import socket

from pytest_backendbench.agents.shell import connection_of


def test_a_socketio_becomes_a_blocking_socket_over_a_duplicate_descriptor() -> None:
    ours, engine = socket.socketpair()
    ours.settimeout(120)  # what docker-py's client timeout leaves on the connection
    attached = socket.SocketIO(ours, "rwb")  # unix-socket and plain-tcp engines return this
    try:
        connection = connection_of(attached)
        assert connection is not attached and connection.fileno() != ours.fileno()
        assert connection.gettimeout() is None  # a silent command must not read as a dead shell
        connection.sendall(b"echo hi\n")
        assert engine.recv(100) == b"echo hi\n"
        engine.sendall(b"\x01\x00\x00\x00\x00\x00\x00\x03hi\n")
        assert connection.recv(100) == b"\x01\x00\x00\x00\x00\x00\x00\x03hi\n"
        connection.shutdown(socket.SHUT_RDWR)  # what ExecShell.close does: the engine side sees end-of-file
        assert engine.recv(100) == b""
        connection.close()
        attached.close()
    finally:
        ours.close()
        engine.close()


def test_a_socket_is_used_as_it_is() -> None:
    left, right = socket.socketpair()  # TLS engines, ssh channels and named pipes already are one
    try:
        assert connection_of(left) is left
    finally:
        left.close()
        right.close()
