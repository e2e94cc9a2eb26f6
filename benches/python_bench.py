"""Python binding costs, run by `make bench`: the per-call overhead of the binding (the gate,
whose Rust body costs about half a nanosecond, and a PLAIN server step), and SCRAM-SHA-256
logins per second through ksasl next to the pure-Python scramp (hashlib's PBKDF2)."""

import timeit

import ksasl
from scramp import ScramClient, ScramMechanism

NOW = 1_800_000_000_000


def best(stmt, number, repeat=5):
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number


store = ksasl.CredentialStore()
store.add_user("alice", "alice-secret")
servers = ksasl.MechanismRegistry()
servers.add_password_servers(store)
clients = ksasl.MechanismRegistry()
clients.add_password_clients("alice", "alice-secret")

# An authenticated server connection, to time the gate.
cfg = ksasl.ServerConfig(servers, max_reauth_ms=600_000)
conn = ksasl.ServerConnection(cfg)
client = ksasl.ClientConnection(ksasl.ClientConfig(clients, "PLAIN"))
client.start(NOW)
out = client.transmit()
while not conn.ready:
    import struct

    nxt = b""
    while out:
        (n,) = struct.unpack(">i", out[:4])
        _, o, _, _ = conn.handle_frame(out[4 : 4 + n], NOW)
        nxt += o
        out = out[4 + n :]
    while nxt:
        (n,) = struct.unpack(">i", nxt[:4])
        client.handle_frame(nxt[4 : 4 + n], NOW)
        nxt = nxt[4 + n :]
    out = client.transmit()

gate = best(lambda: conn.gate(3, NOW), 1_000_000)
print(f"python/gate: {gate * 1e9:.0f} ns per ServerConnection.gate call (Rust: 0.55 ns)")

plain_msg = b"\x00alice\x00alice-secret"


def plain_step():
    s = ksasl.ServerExchange(servers, "PLAIN")
    s.step(plain_msg, NOW)


step = best(plain_step, 20_000)
print(f"python/plain_server_exchange: {step * 1e6:.2f} us per ServerExchange(...) + step() from Python")


def ksasl_login():
    c = ksasl.ClientExchange(clients, "SCRAM-SHA-256")
    s = ksasl.ServerExchange(servers, "SCRAM-SHA-256")
    m, _ = c.start(NOW)
    _, r = s.step(m, NOW)
    m, _ = c.step(r, NOW)
    _, r = s.step(m, NOW)
    c.step(r, NOW)


def ksasl_login_fresh():
    reg = ksasl.MechanismRegistry()
    reg.add_password_clients("alice", "alice-secret")
    c = ksasl.ClientExchange(reg, "SCRAM-SHA-256")
    s = ksasl.ServerExchange(servers, "SCRAM-SHA-256")
    m, _ = c.start(NOW)
    _, r = s.step(m, NOW)
    m, _ = c.step(r, NOW)
    _, r = s.step(m, NOW)
    c.step(r, NOW)


mech = ScramMechanism("SCRAM-SHA-256")
auth_info = mech.make_auth_info("alice-secret", iteration_count=4096)


def scramp_login():
    c = ScramClient(["SCRAM-SHA-256"], "alice", "alice-secret")
    s = mech.make_server(lambda username: auth_info)
    s.set_client_first(c.get_client_first())
    c.set_server_first(s.get_server_first())
    s.set_client_final(c.get_client_final())
    c.set_server_final(s.get_server_final())


for name, fn, n in [
    ("ksasl, client keys cached (re-authentication)", ksasl_login, 2000),
    ("ksasl, fresh client credential (one PBKDF2)", ksasl_login_fresh, 200),
    ("scramp (hashlib PBKDF2, pure-Python SCRAM)", scramp_login, 200),
]:
    t = best(fn, n, repeat=3)
    print(f"python/scram_sha256_login: {1 / t:8.0f} logins/s  ({t * 1e6:.0f} us each) {name}")


# A mechanism written in Python, through both connection drivers: answering at once, and as
# `async def` methods awaited by ksasl.aio on one event loop (the pending/resume path).
import asyncio  # noqa: E402

from ksasl.aio import AsyncClientConnection, AsyncServerConnection  # noqa: E402


class EchoClient:
    def start(self, now_ms):
        return (b"alice", False)

    def step(self, challenge, now_ms):
        return (None, True)


class EchoServer:
    def step(self, response, now_ms):
        return ("done", b"", response.decode(), None)


class AsyncEchoClient:
    async def start(self, now_ms):
        return (b"alice", False)

    async def step(self, challenge, now_ms):
        return (None, True)


class AsyncEchoServer:
    async def step(self, response, now_ms):
        return ("done", b"", response.decode(), None)


def echo_configs(client_cls, server_cls):
    cr, sr = ksasl.MechanismRegistry(), ksasl.MechanismRegistry()
    cr.add_client_mechanism("X-ECHO", client_cls)
    sr.add_server_mechanism("X-ECHO", server_cls)
    return ksasl.ClientConfig(cr, "X-ECHO"), ksasl.ServerConfig(sr)


def split(data):
    while data:
        (n,) = struct.unpack(">i", data[:4])
        yield data[4 : 4 + n]
        data = data[4 + n :]


sync_cfg = echo_configs(EchoClient, EchoServer)
async_cfg = echo_configs(AsyncEchoClient, AsyncEchoServer)


def host_login():
    c, s = ksasl.ClientConnection(sync_cfg[0]), ksasl.ServerConnection(sync_cfg[1])
    c.start(NOW)
    while not s.ready:
        back = b"".join(s.handle_frame(f, NOW)[1] for f in split(c.transmit()))
        for f in split(back):
            c.handle_frame(f, NOW)


async def async_host_login():
    c, s = AsyncClientConnection(async_cfg[0]), AsyncServerConnection(async_cfg[1])
    c.start(NOW)
    while not s.ready:
        back = b""
        for f in split(c.transmit()):
            back += (await s.handle_frame(f, NOW))[1]
        for f in split(back):
            await c.handle_frame(f, NOW)


async def async_logins(n):
    for _ in range(n):
        await async_host_login()


loop = asyncio.new_event_loop()
t_sync = best(host_login, 5000, repeat=3)
t_async = min(
    timeit.repeat(lambda: loop.run_until_complete(async_logins(5000)), number=1, repeat=3)
) / 5000
loop.close()
print(f"python/host_mechanism_login: {t_sync * 1e6:.1f} us per login, sync methods, both drivers")
print(f"python/host_mechanism_login: {t_async * 1e6:.1f} us per login, async def methods via ksasl.aio")
