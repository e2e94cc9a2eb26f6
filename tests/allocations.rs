//! Heap allocations of a SCRAM server login, counted (deterministic, unlike a timing): the
//! work every binding's server login does. The bound is today's count; a change that adds
//! allocations to this path fails here and has to say why.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use ksasl::random::OsRandom;
use ksasl::*;

/// Counts the allocations of the current thread while `COUNTING` is set on it.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: the thread-locals may be gone while a thread exits.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note();
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        note();
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the number of allocations it made on this thread.
fn counted<T>(f: impl FnOnce() -> T) -> (T, usize) {
    COUNT.with(|c| c.set(0));
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    (r, COUNT.with(Cell::get))
}

fn send(step: ClientStep) -> Vec<u8> {
    match step {
        ClientStep::Send(m) => m,
        other => panic!("expected a message, got {other:?}"),
    }
}

#[test]
fn a_scram_server_login_from_the_registry_stays_within_its_allocations() {
    let store = Arc::new(CredentialStore::new());
    store
        .add_user("alice", "alice-secret", 4096, &OsRandom)
        .unwrap();
    let servers = MechanismRegistry::password_servers(Some(store));
    let keys = Arc::new(PasswordCredential::new("alice", "alice-secret").unwrap());
    let clients = MechanismRegistry::password_clients(keys);
    // (mechanism, allocations counted on 2026-12-01, the principal's string included, after
    // removing the credential copies, the per-exchange random source, the heap buffers of the
    // HMACs and the intermediate strings of the server's messages: 47 before; since
    // 2026-12-04 a login copies the user's credential again, so that logins on different
    // threads share no reference count, which costs one allocation for the salt, and the
    // combined nonce is no longer a string of its own)
    for (mech, most) in [("SCRAM-SHA-256", 29), ("SCRAM-SHA-512", 29)] {
        let mut spent = Vec::new();
        for _ in 0..3 {
            let mut client = clients.client(mech).unwrap();
            let first = send(client.start(0).unwrap());
            let ((mut server, challenge), a) = counted(|| {
                let mut s = servers.server(mech).unwrap();
                let c = match s.step(&first, 0).unwrap() {
                    ServerStep::Challenge(c) => c,
                    other => panic!("expected a challenge, got {other:?}"),
                };
                (s, c)
            });
            let last = send(client.step(&challenge, 0).unwrap());
            let (done, b) = counted(|| {
                let done = server.step(&last, 0).unwrap();
                let who = server.outcome().map(|o| o.principal.to_string());
                drop(server);
                (done, who)
            });
            assert!(
                matches!(done.0, ServerStep::Done { .. }),
                "{mech}: not done"
            );
            assert_eq!(done.1.as_deref(), Some("User:alice"));
            spent.push(a + b);
        }
        // The first login may fill lazily made state (the shared random source).
        let steady = *spent.last().unwrap();
        assert!(
            steady <= most,
            "{mech}: a server login made {steady} allocations (at most {most}; logins: {spent:?})"
        );
        assert!(steady > 0, "the counting allocator counted nothing");
    }
}
