//! The token cache's table: verdicts by the SHA-256 of their token, in memory that shares no
//! cache line with any other allocation.
//!
//! The thread that validates a token first allocates its verdict, in its own malloc arena,
//! beside that thread's short-lived allocations. When another thread later finds the verdict,
//! every write the first thread makes next to it (malloc's free-list links, a new string) takes
//! the line away from the reader's core, and the reader waits for it again. With a standard
//! `HashMap` and `String`s, two threads hitting one shared cache ran 5-10 % slower than two
//! threads with a cache each (BENCHMARKS.md, "Scaling across cores"). Here the slots and each
//! verdict's text are vectors of whole 128-byte blocks aligned to 128 bytes: the pair of lines
//! an x86 core fetches together belongs to the table alone.

use super::validator::ValidatedToken;

/// 128 bytes aligned to 128 bytes.
#[repr(align(128))]
#[derive(Clone, Copy)]
struct Block([u8; 128]);

/// A cached verdict.
pub(super) struct Verdict {
    /// The inner validator's generation when the verdict was made.
    pub(super) generation: u64,
    expiry_ms: i64,
    start_ms: Option<i64>,
    valid_from_ms: Option<i64>,
    /// When the verdict stops holding (the cache's eviction order).
    pub(super) valid_until_ms: i64,
    principal_len: u32,
    scopes: u32,
    /// The principal's bytes, then each scope as its length (4 bytes, little-endian) and its
    /// bytes.
    text: Box<[Block]>,
}

impl Verdict {
    /// `token` stored for `generation`, or `None` if a string is too long to store (4 GiB),
    /// in which case the verdict is simply not cached.
    pub(super) fn new(token: &ValidatedToken, generation: u64) -> Option<Verdict> {
        let principal_len = u32::try_from(token.principal.len()).ok()?;
        let scopes = u32::try_from(token.scope.len()).ok()?;
        let mut bytes = token.principal.as_bytes().to_vec();
        for s in &token.scope {
            bytes.extend_from_slice(&u32::try_from(s.len()).ok()?.to_le_bytes());
            bytes.extend_from_slice(s.as_bytes());
        }
        let mut text = vec![Block([0; 128]); bytes.len().div_ceil(128)];
        for (block, chunk) in text.iter_mut().zip(bytes.chunks(128)) {
            block.0[..chunk.len()].copy_from_slice(chunk);
        }
        Some(Verdict {
            generation,
            expiry_ms: token.expiry_ms,
            start_ms: token.start_ms,
            valid_from_ms: token.valid_from_ms,
            valid_until_ms: token.valid_until_ms,
            principal_len,
            scopes,
            text: text.into_boxed_slice(),
        })
    }

    /// Whether the verdict holds at `now_ms`.
    pub(super) fn holds(&self, now_ms: i64) -> bool {
        now_ms < self.valid_until_ms && self.valid_from_ms.map_or(true, |f| now_ms >= f)
    }

    /// A copy of the verdict in the caller's memory (`None` only if the text were damaged,
    /// which the cache treats as a miss).
    pub(super) fn token(&self) -> Option<ValidatedToken> {
        let mut text = Reader {
            blocks: &self.text,
            at: 0,
        };
        let principal = text.string(self.principal_len as usize)?;
        let mut scope = Vec::with_capacity(self.scopes as usize);
        for _ in 0..self.scopes {
            let mut len = [0; 4];
            text.copy(&mut len)?;
            scope.push(text.string(u32::from_le_bytes(len) as usize)?);
        }
        Some(ValidatedToken {
            principal,
            expiry_ms: self.expiry_ms,
            start_ms: self.start_ms,
            scope,
            valid_from_ms: self.valid_from_ms,
            valid_until_ms: self.valid_until_ms,
        })
    }
}

/// Reads a verdict's text across its blocks.
struct Reader<'a> {
    blocks: &'a [Block],
    at: usize,
}

impl Reader<'_> {
    /// Fills `out` with the next bytes.
    fn copy(&mut self, out: &mut [u8]) -> Option<()> {
        let mut done = 0;
        while done < out.len() {
            let block = &self.blocks.get(self.at / 128)?.0[self.at % 128..];
            let n = block.len().min(out.len() - done);
            out[done..done + n].copy_from_slice(&block[..n]);
            done += n;
            self.at += n;
        }
        Some(())
    }

    /// The next `len` bytes as a string.
    fn string(&mut self, len: usize) -> Option<String> {
        // Never more than the text holds, whatever `len` says.
        if len > self.blocks.len() * 128 - self.at {
            return None;
        }
        let mut bytes = vec![0; len];
        self.copy(&mut bytes)?;
        String::from_utf8(bytes).ok()
    }
}

/// A slot of the table: empty, or a key and its verdict.
#[repr(align(128))]
struct Slot(Option<([u8; 32], Verdict)>);

/// An open-addressing table (linear probing, at most three quarters full) of verdicts by key.
/// The keys are SHA-256 digests, so their bytes are already uniform: the slot is read from
/// bytes 8 to 16 (the shards use byte 0).
pub(super) struct Verdicts {
    slots: Vec<Slot>,
    len: usize,
}

impl Verdicts {
    pub(super) fn new() -> Self {
        Verdicts {
            slots: Vec::new(),
            len: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Drops every verdict, and the table's memory.
    pub(super) fn clear(&mut self) {
        *self = Verdicts::new();
    }

    fn home(&self, key: &[u8; 32]) -> usize {
        let mut b = [0; 8];
        b.copy_from_slice(&key[8..16]);
        u64::from_le_bytes(b) as usize & (self.slots.len() - 1)
    }

    /// The slot holding `key`, or the empty slot where it would go (`slots` must not be empty).
    fn find(&self, key: &[u8; 32]) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            match &self.slots[i].0 {
                None => return Err(i),
                Some((k, _)) if k == key => return Ok(i),
                Some(_) => i = (i + 1) & mask,
            }
        }
    }

    pub(super) fn get(&self, key: &[u8; 32]) -> Option<&Verdict> {
        if self.slots.is_empty() {
            return None;
        }
        let i = self.find(key).ok()?;
        self.slots[i].0.as_ref().map(|(_, v)| v)
    }

    /// Puts `verdict` under `key`, replacing what was there.
    pub(super) fn insert(&mut self, key: [u8; 32], verdict: Verdict) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.rebuild((self.slots.len() * 2).max(8));
        }
        match self.find(&key) {
            Ok(i) => self.slots[i].0 = Some((key, verdict)),
            Err(i) => {
                self.slots[i].0 = Some((key, verdict));
                self.len += 1;
            }
        }
    }

    /// Drops the verdict under `key`, if there is one.
    pub(super) fn remove(&mut self, key: &[u8; 32]) {
        if self.slots.is_empty() {
            return;
        }
        let Ok(mut hole) = self.find(key) else {
            return;
        };
        self.slots[hole].0 = None;
        self.len -= 1;
        // Shift back the entries after the hole that may not stay behind it (their home is
        // not between the hole and them), so that every probe still reaches its key.
        let mask = self.slots.len() - 1;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let home = match &self.slots[j].0 {
                None => return,
                Some((k, _)) => self.home(k),
            };
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.slots.swap(hole, j);
                hole = j;
            }
        }
    }

    /// Keeps the verdicts for which `keep` holds (a read of every slot when all stay).
    pub(super) fn retain(&mut self, keep: impl Fn(&Verdict) -> bool) {
        let gone: Vec<[u8; 32]> = self
            .slots
            .iter()
            .filter_map(|s| s.0.as_ref())
            .filter(|(_, v)| !keep(v))
            .map(|(k, _)| *k)
            .collect();
        for key in &gone {
            self.remove(key);
        }
    }

    /// The key of the verdict that stops holding first.
    pub(super) fn first_to_end(&self) -> Option<[u8; 32]> {
        self.slots
            .iter()
            .filter_map(|s| s.0.as_ref())
            .min_by_key(|(_, v)| v.valid_until_ms)
            .map(|(k, _)| *k)
    }

    /// Moves every entry into a new table of `size` slots.
    fn rebuild(&mut self, size: usize) {
        let old = std::mem::replace(&mut self.slots, empty_slots(size));
        self.len = 0;
        for (key, verdict) in old.into_iter().filter_map(|s| s.0) {
            self.insert(key, verdict);
        }
    }
}

/// `size` empty slots in one allocation of exactly that many.
fn empty_slots(size: usize) -> Vec<Slot> {
    let mut slots = Vec::with_capacity(size);
    slots.resize_with(size, || Slot(None));
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(principal: &str, scope: &[&str], until: i64) -> ValidatedToken {
        ValidatedToken {
            principal: principal.into(),
            expiry_ms: until + 5,
            start_ms: Some(3),
            scope: scope.iter().map(|s| s.to_string()).collect(),
            valid_from_ms: Some(1),
            valid_until_ms: until,
        }
    }

    /// Keys whose slot bytes collide in a small table, so probing and removal are exercised.
    fn key(n: u8, home: u8) -> [u8; 32] {
        let mut k = [0; 32];
        k[0] = n;
        k[8] = home;
        k
    }

    #[test]
    fn a_verdict_reads_back_as_it_was_stored_across_blocks() {
        let long = "é".repeat(200); // 400 bytes: four blocks
        for t in [
            token("", &[], 10),
            token("alice", &["read", "", "write"], 10),
            token(&long, &[&long, "x"], 10),
            token("p", &[&"s".repeat(127)], 10),
        ] {
            let v = Verdict::new(&t, 7).unwrap();
            assert_eq!(v.generation, 7);
            assert_eq!(v.token().unwrap(), t);
        }
    }

    #[test]
    fn a_damaged_text_is_a_miss_not_a_panic() {
        let mut v = Verdict::new(&token("alice", &["read"], 10), 1).unwrap();
        v.principal_len = 10_000;
        assert!(v.token().is_none());
        let mut v = Verdict::new(&token("alice", &["read"], 10), 1).unwrap();
        v.scopes = 1000; // past the zero padding of the block
        assert!(v.token().is_none());
        let mut v = Verdict::new(&token("ab", &[], 10), 1).unwrap();
        v.text[0].0[0] = 0xff;
        assert!(v.token().is_none());
    }

    #[test]
    fn slots_and_text_are_whole_aligned_blocks() {
        assert_eq!(std::mem::size_of::<Slot>(), 128);
        assert_eq!(std::mem::align_of::<Slot>(), 128);
        let mut table = Verdicts::new();
        table.insert(key(1, 0), Verdict::new(&token("a", &[], 10), 1).unwrap());
        assert_eq!(table.slots.as_ptr() as usize % 128, 0);
        let v = table.get(&key(1, 0)).unwrap();
        assert_eq!(v.text.as_ptr() as usize % 128, 0);
    }

    #[test]
    fn colliding_keys_are_found_after_removals_and_growth() {
        let mut table = Verdicts::new();
        let mut live = std::collections::BTreeSet::new();
        // Deterministic shuffle of inserts and removals over 40 keys with 4 homes.
        let mut x: u32 = 12345;
        for step in 0..2000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let n = ((x >> 16) % 40) as u8;
            let k = key(n, n % 4);
            if (x >> 8) % 3 == 0 {
                table.remove(&k);
                live.remove(&n);
            } else {
                let t = token(&format!("p{n}"), &[], i64::from(n));
                table.insert(k, Verdict::new(&t, 1).unwrap());
                live.insert(n);
            }
            assert_eq!(table.len(), live.len(), "step {step}");
            for m in 0..40u8 {
                let found = table
                    .get(&key(m, m % 4))
                    .map(|v| v.token().unwrap().principal);
                assert_eq!(
                    found,
                    live.contains(&m).then(|| format!("p{m}")),
                    "{step} {m}"
                );
            }
        }
        assert!(table.slots.len() * 3 >= table.len() * 4);
    }

    #[test]
    fn retain_and_first_to_end_see_every_entry() {
        let mut table = Verdicts::new();
        for n in 0..20u8 {
            let t = token("p", &[], 100 - i64::from(n));
            table.insert(key(n, n % 3), Verdict::new(&t, u64::from(n % 2)).unwrap());
        }
        assert_eq!(table.first_to_end(), Some(key(19, 1)));
        table.retain(|v| v.generation == 0);
        assert_eq!(table.len(), 10);
        for n in 0..20u8 {
            assert_eq!(table.get(&key(n, n % 3)).is_some(), n % 2 == 0, "{n}");
        }
        assert_eq!(table.first_to_end(), Some(key(18, 0)));
        table.clear();
        assert_eq!((table.len(), table.first_to_end()), (0, None));
        assert!(table.get(&key(0, 0)).is_none());
        table.remove(&key(0, 0));
    }
}
