"""Arrow Flight SQL with ``server.auth = true`` and a TLS certificate, through the ADBC driver:
the handshake turns HTTP Basic into a bearer token, wrong or missing credentials are refused as
unauthenticated, statements run as the user who connected, and each connection has its own
session."""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .helpers import Server, free_port

adbc = pytest.importorskip("adbc_driver_flightsql.dbapi")
from adbc_driver_manager import AdbcStatusCode  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("flight_sql_auth")
    cert, key = _certificate(root)
    port = free_port()
    settings = {
        "auth": True,
        "flight_port": port,
        "tls_certificate": str(cert),
        "tls_private_key": str(key),
        # long enough that a retry in the throttling test surely falls inside the wait
        "login_delay": 60,
        "login_delay_max": 120,
    }
    srv = Server(root, settings)
    srv.flight_url = f"grpc+tls://127.0.0.1:{port}"  # type: ignore[attr-defined]
    srv.cert = cert.read_text()  # type: ignore[attr-defined]
    srv.passwd("alice", "wonder land")
    srv.passwd("root", "s3cret", admin=True)
    srv.passwd("eve", "right one")
    srv.start()
    yield srv
    srv.stop()


def connect(server: Server, user: str | None, password: str | None) -> Any:
    options = {"adbc.flight.sql.client_option.tls_root_certs": server.cert}  # type: ignore[attr-defined]
    if user is not None:
        options.update(username=user, password=password or "")
    return adbc.connect(server.flight_url, db_kwargs=options, autocommit=True)  # type: ignore[attr-defined]


def one(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return list(cur.fetchall())


def test_statements_run_as_the_user_who_connected(server: Server) -> None:
    with connect(server, "alice", "wonder land") as conn:
        assert one(conn, "SELECT CURRENT_USER AS u FROM (VALUES(1))") == [("alice",)]
    with connect(server, "root", "s3cret") as conn:
        assert one(conn, "SELECT CURRENT_USER AS u FROM (VALUES(1))") == [("root",)]


def test_wrong_password_is_unauthenticated(server: Server) -> None:
    with pytest.raises(adbc.Error, match="UNAUTHENTICATED") as err:
        connect(server, "alice", "nope")
    assert err.value.status_code == AdbcStatusCode.UNAUTHENTICATED
    assert "Invalid username/password credentials." in str(err.value)


def test_failed_handshakes_slow_down_like_rest_logins(server: Server) -> None:
    refused = []
    for _ in range(8):
        with pytest.raises(adbc.Error, match="UNAUTHENTICATED") as err:
            connect(server, "eve", "guess")
        refused.append(str(err.value))
    assert "Invalid username/password credentials." in refused[0]
    assert any("Too many failed logins" in text for text in refused), refused
    # while the name waits even the right password is not checked
    with pytest.raises(adbc.Error, match="Too many failed logins"):
        connect(server, "eve", "right one")
    with connect(server, "alice", "wonder land") as conn:  # other users are not affected
        assert one(conn, "SELECT CURRENT_USER AS u FROM (VALUES(1))") == [("alice",)]


def test_no_credentials_is_unauthenticated(server: Server) -> None:
    with (
        pytest.raises(adbc.Error, match="UNAUTHENTICATED"),
        connect(server, None, None) as conn,
    ):
        one(conn, "SELECT 1 AS x FROM (VALUES(1))")


def test_permissions_follow_the_user(server: Server) -> None:
    sql = "ALTER SYSTEM SET `planner.slice_target` = 5000"
    with connect(server, "alice", "wonder land") as conn:
        with pytest.raises(adbc.Error, match="PermissionDenied") as err:
            one(conn, sql)
        assert err.value.status_code == AdbcStatusCode.UNAUTHORIZED  # gRPC PERMISSION_DENIED
        assert "[FlightSQL] PERMISSION ERROR: " in str(err.value)
        assert "Traceback" not in str(err.value)
    with connect(server, "root", "s3cret") as conn:
        assert one(conn, sql)[0][0] is True
        one(conn, "ALTER SYSTEM RESET `planner.slice_target`")


def test_each_connection_has_its_own_session(server: Server) -> None:
    with connect(server, "alice", "wonder land") as first:
        one(first, "USE dfs.tmp")
        one(first, "CREATE TEMPORARY TABLE mine AS SELECT 7 AS v FROM (VALUES(1))")
        assert one(first, "SELECT v FROM mine") == [(7,)]
        with (
            connect(server, "alice", "wonder land") as second,
            pytest.raises(adbc.Error, match="VALIDATION ERROR"),
        ):
            one(second, "SELECT v FROM mine")


def test_flightsql_dbapi_logs_in_over_tls(server: Server) -> None:
    import pyarrow.flight as flight
    from flightsql import FlightSQLClient, connect

    def client(password: str) -> FlightSQLClient:
        return FlightSQLClient(
            host="127.0.0.1",
            port=int(server.flight_url.rsplit(":", 1)[1]),  # type: ignore[attr-defined]
            user="alice",
            password=password,
            tls_root_certs=server.cert,  # type: ignore[attr-defined]
        )

    conn = connect(client("wonder land"))
    cur = conn.cursor()
    cur.execute("SELECT CURRENT_USER AS u FROM (VALUES(?))", (1,))
    assert cur.fetchall() == [["alice"]]
    conn.close()
    with pytest.raises(flight.FlightUnauthenticatedError, match="Invalid username/password"):
        client("wrong")
