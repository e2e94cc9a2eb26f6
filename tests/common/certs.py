"""Throw-away TLS material for the test harnesses (tests/oidc/keycloak.py's HTTPS server,
tests/broker/broker.py's SASL_SSL listener), made with the ``openssl`` command. Standard
library only.

    make_ca(d, "ca", "ksasl test CA")                 # d/ca.pem, d/ca.key
    make_server_cert(d, "server", ca="ca")           # d/server.pem, d/server.key signed by d/ca

Keys are RSA 2048, unencrypted PKCS#8 (``-----BEGIN PRIVATE KEY-----``, OpenSSL 3's default);
certificates are valid for two days.
"""

from __future__ import annotations

import subprocess
from pathlib import Path


class CertError(RuntimeError):
    """An ``openssl`` command failed; the message carries its stderr."""


def openssl(*args: str, cwd: Path) -> str:
    try:
        p = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    except FileNotFoundError as e:
        raise CertError("the 'openssl' command is needed to make test certificates") from e
    if p.returncode != 0:
        raise CertError(f"openssl {args[0]} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return p.stdout


def make_ca(d: Path, name: str = "ca", cn: str = "ksasl test CA") -> Path:
    """A self-signed CA: d/<name>.pem and its key d/<name>.key. Returns the certificate's path."""
    d.mkdir(parents=True, exist_ok=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={cn}",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    return d / f"{name}.pem"


def make_server_cert(d: Path, name: str = "server", *, ca: str = "ca", cn: str = "127.0.0.1",
                     ips=("127.0.0.1",), dns=("localhost",)) -> tuple[Path, Path]:
    """A TLS server certificate d/<name>.pem (+ key d/<name>.key) for the IP and DNS
    subjectAltNames given, signed by the CA d/<ca>.pem (d/<ca>.key; see make_ca).
    Returns (certificate, key)."""
    sans = ",".join([f"IP:{ip}" for ip in ips] + [f"DNS:{n}" for n in dns])
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
            f"{name}.csr", "-subj", f"/CN={cn}", cwd=d)
    (d / f"{name}.ext").write_text(f"subjectAltName={sans}\n"
                                   "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext", cwd=d)
    return d / f"{name}.pem", d / f"{name}.key"
