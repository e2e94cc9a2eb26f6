"""Issue 17, defect 2, against a running example broker: a frame declaring 100 MiB from an
anonymous client is refused on its 4-byte length alone (the broker closes without waiting for
the body). Usage: oversize_prefix.py PORT"""

import socket
import struct
import sys

port = int(sys.argv[1])
with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
    sock.sendall(struct.pack(">i", 100 * 1024 * 1024))
    try:
        answer = sock.recv(1)
    except socket.timeout:
        sys.exit("oversize_prefix: the broker waited for the body instead of closing")
    if answer != b"":
        sys.exit(f"oversize_prefix: the broker answered {answer!r} instead of closing")
print("oversize_prefix: the broker closed after the 4-byte length of a 100 MiB frame")
