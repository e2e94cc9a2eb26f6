//! Tracker costs at scale: the next-deadline query and the fan-out after a refresh with
//! 1,000,000 tracked connections, and the memory each tracked connection takes.
//! Run with `make bench`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use ksasl::kafka::client::ClientSession;
use ksasl::refresh::{RefreshConfig, Refresher, Tracker, TrackerConfig};
use ksasl::*;

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const T: i64 = 1_795_000_000_000;
const N: u64 = 1_000_000;

fn install(rf: &Refresher, now: i64) {
    let t = UnsecuredTokenBuilder::for_principal("alice")
        .build(now)
        .unwrap();
    rf.poll(now);
    rf.set_token(t.value(), t.expiry_ms(), "alice", &[], now)
        .unwrap();
}

fn tracker() -> (Arc<Refresher>, Tracker) {
    let rf = Arc::new(Refresher::new(
        RefreshConfig::default(),
        SharedRandom::default(),
    ));
    install(&rf, T);
    let tracker = Tracker::new(rf.clone(), TrackerConfig::default()).unwrap();
    (rf, tracker)
}

fn bench(c: &mut Criterion) {
    let before = LIVE.load(Ordering::Relaxed);
    let (rf, tr) = tracker();
    let session = ClientSession {
        lifetime_ms: 600_000,
        reauth_at_ms: Some(T + 540_000),
        expiry_ms: Some(T + 600_000),
        latency_ms: 1,
    };
    let base = LIVE.load(Ordering::Relaxed);
    for id in 0..N {
        tr.authenticated(id, 1, &session).unwrap();
    }
    let per = (LIVE.load(Ordering::Relaxed) - base) as f64 / N as f64;
    println!(
        "refresh/tracked_connection_memory: {per:.1} bytes per connection ({} MiB for {N})",
        (LIVE.load(Ordering::Relaxed) - before) >> 20
    );

    c.bench_function("refresh/next_deadline_1m_connections", |b| {
        b.iter(|| black_box(tr.next_deadline()))
    });

    // Fan-out: a refresh, then the first poll that builds the re-authentication wave for
    // every tracked connection.
    let mut runs = Vec::new();
    let mut now = T + 1_000;
    for _ in 0..5 {
        install(&rf, now);
        let start = Instant::now();
        let p = tr.poll(now);
        runs.push(start.elapsed());
        black_box(p);
        // Move every connection to the new generation for the next round.
        let g = rf.generation();
        for id in 0..N {
            tr.authenticated(id, g, &session).unwrap();
        }
        now += 1_000;
    }
    runs.sort();
    println!(
        "refresh/fan_out_1m_connections: median {:?}, max {:?} over {} runs",
        runs[runs.len() / 2],
        runs[runs.len() - 1],
        runs.len()
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
