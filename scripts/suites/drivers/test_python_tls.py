"""The Python driver over TLS against `rhizome serve --tls-cert --tls-key`.

The suite script generates a self-signed certificate for localhost and
127.0.0.1, starts this server with it and passes the Bolt port in
RHIZOME_BOLT_TLS_PORT and the certificate in RHIZOME_TLS_CERT.
"""

import os
import subprocess
import sys

import neo4j
import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import ServiceUnavailable, UnsupportedServerProduct

PORT = os.environ["RHIZOME_BOLT_TLS_PORT"]
CERT = os.environ["RHIZOME_TLS_CERT"]
AUTH = ("neo4j", "unused")


def roundtrip(driver):
    records, _, _ = driver.execute_query("RETURN 'over tls' AS s, 40 + 2 AS n")
    return records[0]["s"], records[0]["n"]


def test_encrypted_with_the_certificate_trusted():
    with GraphDatabase.driver(
        f"bolt://localhost:{PORT}",
        auth=AUTH,
        encrypted=True,
        trusted_certificates=neo4j.TrustCustomCAs(CERT),
    ) as d:
        d.verify_connectivity()
        assert roundtrip(d) == ("over tls", 42)
        with d.session() as s:
            node = s.run("CREATE (n:TlsNode {k: 1}) RETURN n").single()["n"]
            assert "TlsNode" in node.labels and node["k"] == 1
            s.run("MATCH (n:TlsNode) DELETE n").consume()


def test_bolt_s_scheme_trusting_the_certificate():
    # `bolt+s://` trusts the system's CAs; SSL_CERT_FILE makes OpenSSL's
    # default store this certificate (a fresh interpreter reads it).
    code = (
        "from neo4j import GraphDatabase\n"
        f"with GraphDatabase.driver('bolt+s://localhost:{PORT}', auth=('neo4j', 'x')) as d:\n"
        "    r, _, _ = d.execute_query('RETURN 7 AS seven')\n"
        "    print(r[0]['seven'])\n"
    )
    env = dict(os.environ, SSL_CERT_FILE=CERT)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "7"


def test_routing_scheme_over_tls():
    with GraphDatabase.driver(
        f"neo4j://localhost:{PORT}",
        auth=AUTH,
        encrypted=True,
        trusted_certificates=neo4j.TrustCustomCAs(CERT),
    ) as d:
        assert roundtrip(d) == ("over tls", 42)


def test_an_untrusted_certificate_is_refused():
    with GraphDatabase.driver(
        f"bolt://localhost:{PORT}",
        auth=AUTH,
        encrypted=True,
        trusted_certificates=neo4j.TrustSystemCAs(),
    ) as d:
        with pytest.raises(ServiceUnavailable):
            d.verify_connectivity()


def test_a_plain_client_gets_no_service():
    # The server answers its Bolt handshake with a TLS alert, which the
    # driver reads as an unknown protocol version.
    with GraphDatabase.driver(f"bolt://localhost:{PORT}", auth=AUTH, connection_timeout=5) as d:
        with pytest.raises((ServiceUnavailable, UnsupportedServerProduct)):
            d.verify_connectivity()
