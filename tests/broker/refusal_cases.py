"""Request sequences that interrupt a SASL exchange, and the bytes Kafka answers with.

Each case is a list of request frames (without their length prefix). ``replay`` sends them
one at a time on a fresh connection and records each answer frame (hex, without its length
prefix) or ``"CLOSED"`` when the peer closes instead of answering, and stops there.

``tests/vectors/kafka44_refusals.json`` holds the answers of a real Kafka 4.4 broker
(``connection.failed.authentication.delay.ms=0`` makes no difference to the bytes, only to
when they come). ``test_wire_compare.py`` replays every case against the real broker and
against the example brokers and compares; the Rust and Java tests read the file. To record
it again, against a broker started with ``python3 tests/broker/broker.py``::

    python3 tests/broker/refusal_cases.py PORT > tests/vectors/kafka44_refusals.json
"""

from __future__ import annotations

import json
import socket
import struct
import sys
from typing import Dict, List


def _header(api_key: int, version: int, corr: int, flexible: bool = False, client_id=b"test") -> bytes:
    if client_id is None:
        h = struct.pack(">hhih", api_key, version, corr, -1)
    else:
        h = struct.pack(">hhih", api_key, version, corr, len(client_id)) + client_id
    return h + (b"\0" if flexible else b"")


def _s16(x: str) -> bytes:
    b = x.encode()
    return struct.pack(">h", len(b)) + b


def _compact(x: str) -> bytes:
    b = x.encode()
    return bytes([len(b) + 1]) + b


def _metadata(v: int, topics: List[str], corr: int = 2) -> bytes:
    if v < 9:
        body = struct.pack(">i", len(topics)) + b"".join(_s16(t) for t in topics)
        if v >= 4:
            body += b"\x01"  # allow_auto_topic_creation
        if v >= 8:
            body += b"\x00\x00"  # include cluster / topic authorized operations
        return _header(3, v, corr) + body
    body = bytes([len(topics) + 1])
    for t in topics:
        if v >= 10:
            body += bytes(range(16))  # topic_id
        body += _compact(t) + b"\x00"
    body += b"\x01"
    if v <= 10:
        body += b"\x00"
    body += b"\x00\x00"
    return _header(3, v, corr, True) + body


PLAIN_HANDSHAKE = _header(17, 1, 1) + _s16("PLAIN")


def _mid(request: bytes) -> List[bytes]:
    """SaslHandshake v1 PLAIN, then `request` instead of SaslAuthenticate."""
    return [PLAIN_HANDSHAKE, request]


def cases() -> Dict[str, List[bytes]]:
    c: Dict[str, List[bytes]] = {}
    for v in range(0, 15):
        c[f"metadata_v{v}"] = _mid(_metadata(v, ["t1", "t2"]))
    c["metadata_v4_all_topics"] = _mid(_header(3, 4, 2) + struct.pack(">i", -1) + b"\x01")
    c["metadata_v4_negative_length"] = _mid(_header(3, 4, 2) + struct.pack(">i", -2) + b"\x01")
    c["metadata_v0_null_topics"] = _mid(_header(3, 0, 2) + struct.pack(">i", -1))
    c["metadata_v4_trailing_bytes"] = _mid(_metadata(4, ["t"]) + b"xyz")
    c["metadata_v4_truncated"] = _mid(_metadata(4, ["t"])[:-1])
    c["metadata_v12_by_topic_id"] = _mid(_header(3, 12, 2, True) + b"\x02" + b"\x11" * 16 + b"\x00\x00\x01\x00\x00")
    c["metadata_v9_null_client_id"] = _mid(_header(3, 9, 2, True, None) + b"\x01\x01\x00\x00\x00")
    c["metadata_before_handshake"] = [_metadata(4, ["t"])]
    c["metadata_after_api_versions"] = [_header(18, 0, 1), _metadata(4, ["t"])]
    c["metadata_after_legacy_handshake"] = [_header(17, 0, 1) + _s16("PLAIN"), _metadata(4, ["t"])]
    c["metadata_after_failed_authenticate"] = _mid(_header(36, 1, 3) + struct.pack(">i", 3) + b"abc") + [_metadata(4, ["t"], 4)]
    for v in range(0, 7):
        body = b"" if v < 3 else _compact("ksasl") + _compact("1.0") + (b"\x00\xff\xff\xff\xff" if v >= 5 else b"") + b"\x00"
        c[f"api_versions_v{v}"] = _mid(_header(18, v, 2, v >= 3) + body)
    c["api_versions_v5_truncated"] = _mid(_header(18, 5, 2, True) + _compact("ksasl") + _compact("1.0") + b"\x00")
    for v in range(0, 3):
        c[f"sasl_handshake_v{v}"] = _mid(_header(17, v, 2) + _s16("PLAIN"))
    c["sasl_handshake_v1_truncated"] = _mid(_header(17, 1, 2) + b"\x00")
    for v in range(0, 5):
        flex = v >= 2
        owners = b"\x00" if flex else struct.pack(">i", -1)
        c[f"describe_delegation_token_v{v}"] = _mid(_header(41, v, 2, flex) + owners + (b"\x00" if flex else b""))
    c["describe_delegation_token_v1_owner"] = _mid(_header(41, 1, 2) + struct.pack(">i", 1) + _s16("User") + _s16("bob"))
    for v in range(0, 5):
        flex = v >= 2
        owner = (b"\x05User\x04bob" if v >= 3 else b"")
        renewers = b"\x01" if flex else struct.pack(">i", 0)
        c[f"create_delegation_token_v{v}"] = _mid(_header(38, v, 2, flex) + owner + renewers + struct.pack(">q", -1) + (b"\x00" if flex else b""))
    for key, name in ((39, "renew"), (40, "expire")):
        for v in range(0, 4):
            flex = v >= 2
            hmac = (b"\x04abc" if flex else struct.pack(">i", 3) + b"abc")
            c[f"{name}_delegation_token_v{v}"] = _mid(_header(key, v, 2, flex) + hmac + struct.pack(">q", -1) + (b"\x00" if flex else b""))
    produce = _s16("t") + struct.pack(">i", 1) + struct.pack(">ii", 0, 0)  # one topic, partition 0, empty records
    c["produce_v3_no_topics"] = _mid(_header(0, 3, 2) + struct.pack(">hhii", -1, 1, 1000, 0))
    c["produce_v3_one_partition"] = _mid(_header(0, 3, 2) + struct.pack(">hhi", -1, 1, 1000) + struct.pack(">i", 1) + produce)
    c["unknown_api_key"] = _mid(_header(999, 0, 2))
    return c


def replay(port: int, frames: List[bytes], timeout: float = 5.0) -> List[str]:
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out: List[str] = []
    try:
        for f in frames:
            s.sendall(struct.pack(">i", len(f)) + f)
            head = b""
            while len(head) < 4:
                chunk = s.recv(4 - len(head))
                if not chunk:
                    break
                head += chunk
            if len(head) < 4:
                out.append("CLOSED")
                break
            (n,) = struct.unpack(">i", head)
            body = b""
            while len(body) < n:
                chunk = s.recv(n - len(body))
                if not chunk:
                    break
                body += chunk
            out.append(body.hex())
    except ConnectionResetError:
        out.append("CLOSED")
    finally:
        s.close()
    return out


def main() -> int:
    port = int(sys.argv[1])
    record = {name: {"requests": [f.hex() for f in frames], "kafka_4_4": replay(port, frames)}
              for name, frames in cases().items()}
    json.dump(record, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
