"""An async credential lookup from asyncio, through the pull form."""

import asyncio
import struct

import ksasl
from ksasl.aio import AsyncServerConnection


def frames(data: bytes):
    while data:
        (n,) = struct.unpack(">i", data[:4])
        yield data[4 : 4 + n]
        data = data[4 + n :]


def test_async_credential_lookup():
    looked_up = []

    async def lookup(mechanism, username, token_auth):
        await asyncio.sleep(0.01)  # a database query
        looked_up.append((mechanism, username))
        return "alice-secret" if username == "alice" else None

    async def main():
        servers = ksasl.MechanismRegistry()
        servers.add_password_servers()  # pull form
        clients = ksasl.MechanismRegistry()
        clients.add_password_clients("alice", "alice-secret")
        results = []
        for mech in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]:
            server = AsyncServerConnection(ksasl.ServerConfig(servers, max_reauth_ms=60_000), lookup)
            client = ksasl.ClientConnection(ksasl.ClientConfig(clients, mech))
            client.start()
            out = client.transmit()
            events = []
            while out:
                back = b""
                for f in frames(out):
                    action, data, _, _ = await server.handle_frame(f)
                    assert action in ("continue", "authenticated"), action
                    back += data
                for f in frames(back):
                    ev, _, _ = client.handle_frame(f)
                    events.append(ev)
                out = client.transmit()
            results.append((mech, events[-1], server.session()["principal"]))
        return results

    results = asyncio.run(main())
    assert results == [(m, "authenticated", "User:alice") for m in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]]
    assert [u for _, u in looked_up] == ["alice", "alice", "alice"]
