"""OpenSSL's PBKDF2 (through Python's hashlib) at 4096 iterations, the yardstick for ksasl's
client login benchmark. `make bench` runs it right after the criterion benchmarks, so both
figures come from the same run on the same machine."""

import hashlib
import ssl
import timeit

assert hashlib.pbkdf2_hmac.__module__ == "_hashlib", "hashlib is not backed by OpenSSL here"

print(f"hashlib.pbkdf2_hmac backed by {ssl.OPENSSL_VERSION}")
for name in ("sha256", "sha512"):
    def run():
        hashlib.pbkdf2_hmac(name, b"pencil", b"W22ZaJ0SNY7soEsUEjb6gQ==", 4096)

    number = 200
    best = min(timeit.repeat(run, number=number, repeat=7)) / number
    print(f"openssl/{name}/pbkdf2_4096: {best * 1e6:.1f} us per call (best of 7 x {number})")
