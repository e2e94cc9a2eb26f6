"""The client side of a SCRAM exchange's last step (RFC 5802), for the raw-socket tests."""

from __future__ import annotations

import base64
import hashlib
import hmac


def client_final(mechanism: str, password: str, bare: str, server_first: bytes) -> bytes:
    """The client-final message answering `server_first` for the client-first-bare `bare`."""
    h = hashlib.sha256 if mechanism == "SCRAM-SHA-256" else hashlib.sha512
    attrs = dict(kv.split("=", 1) for kv in server_first.decode().split(","))
    salted = hashlib.pbkdf2_hmac(h().name, password.encode(), base64.b64decode(attrs["s"]), int(attrs["i"]))
    client_key = hmac.new(salted, b"Client Key", h).digest()
    stored = h(client_key).digest()
    without_proof = f"c=biws,r={attrs['r']}"
    auth_msg = f"{bare},{server_first.decode()},{without_proof}".encode()
    proof = bytes(a ^ b for a, b in zip(client_key, hmac.new(stored, auth_msg, h).digest()))
    return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
