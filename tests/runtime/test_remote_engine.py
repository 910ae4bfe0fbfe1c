"""The docker runtime against an engine reached over ``DOCKER_HOST=tcp://`` with TLS.

The engine is this machine's real Docker daemon behind a TLS endpoint that verifies client
certificates (as ``dockerd --tlsverify`` would): a byte-level TLS terminator in front of
/var/run/docker.sock, with a CA, server and client certificate made for the test. The
runtime must treat it as remote: build and start there, and reach the service through the
relay container, because a remote engine's container IPs are not routable from the harness.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
from docker import DockerClient

from pytest_backendbench.runtime.base import RuntimeOptions
from pytest_backendbench.runtime.cleanup import count_session_objects
from pytest_backendbench.runtime.docker import DockerRuntime
from pytest_backendbench.runtime.relay import engine_is_remote, relay_host

from .test_docker import make_candidate, make_task

ENGINE_SOCKET = "/var/run/docker.sock"

pytestmark = [pytest.mark.docker]


def _certificates(folder: Path) -> None:
    """ca.pem, cert.pem/key.pem (client) and server-cert.pem/server-key.pem, as DOCKER_CERT_PATH expects."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.timezone.utc)

    def key() -> ec.EllipticCurvePrivateKey:
        return ec.generate_private_key(ec.SECP256R1())

    def write(name: str, cert: x509.Certificate, private: ec.EllipticCurvePrivateKey | None = None) -> None:
        (folder / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        if private is not None:
            key_name = "key" if name == "cert" else name.replace("cert", "key")
            (folder / f"{key_name}.pem").write_bytes(
                private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
            )

    ca_key = key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "backendbench test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=2)).add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    write("ca", ca)

    def leaf(common_name: str, usage: x509.ObjectIdentifier, san: bool) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        private = key()
        builder = (
            x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca_name).public_key(private.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(hours=2))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if san:
            import ipaddress

            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
            )
        return builder.sign(ca_key, hashes.SHA256()), private

    write("server-cert", *leaf("localhost", ExtendedKeyUsageOID.SERVER_AUTH, san=True))
    write("cert", *leaf("backendbench client", ExtendedKeyUsageOID.CLIENT_AUTH, san=False))


class TlsEngineEndpoint:
    """tcp://127.0.0.1:<port> with TLS and client-certificate verification, piped to the engine's socket."""

    def __init__(self, certs: Path) -> None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(certs / "ca.pem"))
        context.load_cert_chain(certs / "server-cert.pem", certs / "server-key.pem")
        context.verify_mode = ssl.CERT_REQUIRED
        self._context = context
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.port = 0
        self.rejected = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self._context))
        self.port = server.sockets[0].getsockname()[1]
        self._server = server
        self._ready.set()
        self._loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            engine_reader, engine_writer = await asyncio.open_unix_connection(ENGINE_SOCKET)
        except OSError:
            writer.close()
            return

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, OSError, ssl.SSLError):
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, engine_writer), pipe(engine_reader, writer))

    def close(self) -> None:
        """Stop serving and end the open pipes before the loop stops, so no coroutine is left to die in a closed loop."""

        async def shutdown() -> None:
            self._server.close()
            pipes = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in pipes:
                task.cancel()
            await asyncio.gather(*pipes, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@pytest.fixture
def tls_engine(tmp_path: Path, docker_client: DockerClient, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """DOCKER_HOST/DOCKER_TLS_VERIFY/DOCKER_CERT_PATH pointing at a TLS endpoint of the real engine."""
    certs = tmp_path / "certs"
    certs.mkdir()
    _certificates(certs)
    endpoint = TlsEngineEndpoint(certs)
    host = f"tcp://127.0.0.1:{endpoint.port}"
    monkeypatch.setenv("DOCKER_HOST", host)
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(certs))
    yield host
    endpoint.close()


def test_a_remote_engine_over_tls_builds_runs_and_is_reached_through_the_relay(
    tls_engine: str, runtime_options: RuntimeOptions, tmp_path: Path, docker_client: DockerClient
) -> None:
    assert engine_is_remote() and relay_host() == "127.0.0.1"
    # Relay ports of a remote engine default to every interface of its host; this one is ours.
    runtime = DockerRuntime(dataclasses.replace(runtime_options, relay_bind="127.0.0.1"))
    try:
        assert runtime.publish, "a tcp:// engine is remote: its services are reached through the relay"
        task = make_task(tmp_path)
        image = runtime.build(make_candidate(tmp_path), task)
        service = runtime.start(image, task, [])
        assert urlsplit(service.base_url).hostname == "127.0.0.1"
        assert requests.get(service.base_url + "/health", timeout=10).status_code == 200
        # the container fixture's view works over the same TLS connection and through the relay
        container = service.container_access()
        assert container.exec(["sh", "-c", "echo $PORT"]).text.strip() == str(task.port)
        container.put_file("/tmp/remote.txt", b"over tls")
        assert container.get_file("/tmp/remote.txt") == b"over tls"
        assert requests.get(container.localhost_url + "/health", timeout=10).status_code == 200
        forwarded = container.localhost_port
        service.stop()
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{forwarded}/health", timeout=5)
    finally:
        runtime.close()
    assert count_session_objects(docker_client, runtime_options.session_id).total == 0


def test_a_tls_engine_refuses_a_client_without_its_certificate(tls_engine: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Without the client certificate the endpoint refuses the handshake: a harness error that names the engine.
    from pytest_backendbench.errors import HarnessError

    monkeypatch.setenv("DOCKER_CERT_PATH", str(tmp_path / "nowhere"))
    runtime = DockerRuntime(RuntimeOptions(session_id="test-tls-refused", cache_dir=tmp_path / "cache"))
    with pytest.raises(HarnessError, match="does not answer"):
        runtime.build(make_candidate(tmp_path), make_task(tmp_path))
