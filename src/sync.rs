//! Sharing an object between a host's threads without making them all write one cache line.
//!
//! A broker's network threads share one registry, one credential store and one token cache.
//! Reading shared data costs nothing extra on another core, but writing it does: every
//! `Arc::clone`, and every `RwLock::read`, writes a counter, and when two cores write the same
//! line it travels between them on each write (about 100 ns on a server CPU, against a cached
//! OAUTHBEARER login of 1-2 µs). Two tools keep the hot paths free of such writes:
//!
//! - [`Striped`]: handles on one object in several allocations, one per thread slot, so that a
//!   thread making an exchange counts a reference on its own line;
//! - [`ReadMostly`]: a reader-writer lock whose readers lock one of several locks, picked by
//!   thread, and whose (rare) writers lock them all (`crossbeam_utils::sync::ShardedLock`).

use std::cell::Cell;
use std::sync::{Arc, Mutex};

pub(crate) use crossbeam_utils::sync::{
    ShardedLock as ReadMostly, ShardedLockWriteGuard as WriteGuard,
};

/// How many slots a [`Striped`] set has (a power of two): threads past this many share slots
/// again (a broker has 3 to 16 network threads).
const SLOTS: usize = 16;

/// A value alone on its pair of cache lines (x86 fetches lines in pairs of 128 bytes).
#[repr(align(128))]
#[derive(Debug, Default, Clone)]
pub(crate) struct Padded<T>(pub T);

/// Numbers for the live threads that ask for one: the smallest not in use, given back when the
/// thread ends, so that threads alive together hold different numbers.
struct SlotNumbers {
    free: Vec<usize>,
    next: usize,
}

static SLOT_NUMBERS: Mutex<SlotNumbers> = Mutex::new(SlotNumbers {
    free: Vec::new(),
    next: 0,
});

/// A thread's number, held for the thread's life.
struct ThreadSlot(usize);

impl ThreadSlot {
    fn take() -> ThreadSlot {
        let mut numbers = SLOT_NUMBERS.lock().unwrap_or_else(|e| e.into_inner());
        let n = match numbers.free.pop() {
            Some(n) => n,
            None => {
                numbers.next += 1;
                numbers.next - 1
            }
        };
        ThreadSlot(n)
    }
}

impl Drop for ThreadSlot {
    fn drop(&mut self) {
        let mut numbers = SLOT_NUMBERS.lock().unwrap_or_else(|e| e.into_inner());
        numbers.free.push(self.0);
        // Lowest first, so a new thread reuses the smallest number free.
        numbers.free.sort_unstable_by(|a, b| b.cmp(a));
    }
}

thread_local! {
    /// Holds the number, and gives it back when the thread ends.
    static THREAD_SLOT: ThreadSlot = ThreadSlot::take();
    /// A copy of the number, read without a check of the slot's state (`usize::MAX`: none yet).
    static SLOT_NUMBER: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's number (0 while the thread is being torn down).
fn thread_slot() -> usize {
    SLOT_NUMBER.with(|n| match n.get() {
        usize::MAX => {
            let taken = THREAD_SLOT.try_with(|s| s.0).unwrap_or(0);
            n.set(taken);
            taken
        }
        known => known,
    })
}

/// Handles on one shared object: `SLOTS` allocations of a forwarding wrapper, each on its own
/// cache lines, each holding a reference to the object. [`Striped::get`] clones the handle of
/// the calling thread's slot, so threads alive together count references on different lines.
/// Cloning the set clones the handles, not the wrappers.
pub(crate) struct Striped<T: ?Sized> {
    /// Read by every `get`: padded, so on lines of its own.
    slots: Arc<Padded<[Arc<T>; SLOTS]>>,
}

impl<T: ?Sized> Clone for Striped<T> {
    fn clone(&self) -> Self {
        Striped {
            slots: self.slots.clone(),
        }
    }
}

impl<T: ?Sized> Striped<T> {
    /// Handles on `shared`, each made by `wrap` (which must return a new allocation that
    /// forwards to the object it is given: the traits whose objects are striped are
    /// implemented for [`Padded`] handles, beside the traits).
    pub(crate) fn new(shared: Arc<T>, wrap: impl Fn(Arc<T>) -> Arc<T>) -> Self {
        Striped {
            slots: Arc::new(Padded(std::array::from_fn(|_| wrap(shared.clone())))),
        }
    }

    /// A handle for the calling thread.
    pub(crate) fn get(&self) -> Arc<T> {
        // `SLOTS` is a power of two: a mask, not a division, on every exchange.
        self.slots.0[thread_slot() & (SLOTS - 1)].clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_alive_together_have_different_slots_and_give_them_back() {
        let here = thread_slot();
        let barrier = std::sync::Barrier::new(2);
        let (a, b) = std::thread::scope(|s| {
            let one = s.spawn(|| {
                let n = thread_slot();
                barrier.wait();
                n
            });
            let two = s.spawn(|| {
                let n = thread_slot();
                barrier.wait();
                n
            });
            (one.join().unwrap(), two.join().unwrap())
        });
        assert_ne!(a, b);
        assert_ne!(a, here);
        assert_ne!(b, here);
        // Both numbers are free again: a new thread gets the smaller one back (unless another
        // test's thread took it meanwhile, which only makes it larger than neither).
        let again = std::thread::spawn(thread_slot).join().unwrap();
        assert_ne!(again, here);
    }

    #[test]
    fn striped_handles_are_distinct_allocations_forwarding_to_one_object() {
        let shared: Arc<dyn Fn() -> u32 + Send + Sync> = Arc::new(|| 7);
        let wraps = std::sync::atomic::AtomicUsize::new(0);
        let set = Striped::new(shared.clone(), |inner| {
            wraps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let f: Arc<dyn Fn() -> u32 + Send + Sync> = Arc::new(move || inner() + 1);
            f
        });
        assert_eq!(wraps.into_inner(), SLOTS);
        // Every wrapper holds a reference to the object.
        assert_eq!(Arc::strong_count(&shared), SLOTS + 1);
        let mine = set.get();
        assert_eq!(mine(), 8);
        assert!(Arc::ptr_eq(&mine, &set.get()));
        let address = |h: &Arc<dyn Fn() -> u32 + Send + Sync>| Arc::as_ptr(h) as *const () as usize;
        let (slot, handle, answer) = std::thread::spawn({
            let set = set.clone();
            move || {
                let h = set.get();
                (thread_slot(), address(&h), h())
            }
        })
        .join()
        .unwrap();
        assert_eq!(answer, 8);
        // The main thread was alive, so the other thread had another number; another slot
        // unless the two numbers are `SLOTS` apart.
        assert_ne!(slot, thread_slot());
        assert_eq!(
            handle == address(&mine),
            slot % SLOTS == thread_slot() % SLOTS
        );
        drop(set);
        drop(mine);
        assert_eq!(Arc::strong_count(&shared), 1);
    }

    #[test]
    fn padded_values_sit_on_their_own_lines() {
        assert_eq!(std::mem::align_of::<Padded<u8>>(), 128);
        assert_eq!(std::mem::size_of::<Padded<[u8; 130]>>(), 256);
    }
}
