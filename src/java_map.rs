//! Java's `HashMap` iteration order, for output that must equal a Java program's byte for byte:
//! Kafka's KIP-554 results (`credential::scram_admin`) and the JSON of the AWS_MSK_IAM payload
//! (`aws::msk_iam`), which Jackson writes in the order of a `HashMap`.

/// The iteration order of a `java.util.HashMap<String, V>` built by the same puts and
/// removes: buckets by `(h ^ h >>> 16) & (capacity - 1)` of `String.hashCode`, entries of a
/// bucket in the order they were (last) inserted, a capacity of 16 doubled whenever the size
/// passes three quarters of it. (Java turns a bucket of 8 or more colliding names into a tree
/// ordered differently; that takes deliberately colliding names and is not reproduced.)
#[derive(Debug)]
pub struct JavaOrder<V> {
    entries: Vec<(String, V, u64)>,
    capacity: usize,
    seq: u64,
}

impl<V> Default for JavaOrder<V> {
    fn default() -> Self {
        JavaOrder {
            entries: Vec::new(),
            capacity: 16,
            seq: 0,
        }
    }
}

/// Java's `String.hashCode`: over UTF-16 code units, wrapping.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32))
}

impl<V> JavaOrder<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _, _)| k == key)
    }

    /// `put`: replaces the value of a present key in place, or appends.
    pub fn put(&mut self, key: &str, value: V) {
        if let Some(e) = self.entries.iter_mut().find(|(k, _, _)| k == key) {
            e.1 = value;
            return;
        }
        self.seq += 1;
        self.entries.push((key.to_string(), value, self.seq));
        if self.entries.len() > self.capacity / 4 * 3 {
            self.capacity *= 2;
        }
    }

    /// `remove`: the value, if the key was present.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.entries.iter().position(|(k, _, _)| k == key)?;
        Some(self.entries.remove(i).1)
    }

    /// The entries in Java's iteration order.
    pub fn into_ordered(self) -> Vec<(String, V)> {
        let mask = self.capacity as u32 - 1;
        let mut v: Vec<(u32, u64, String, V)> = self
            .entries
            .into_iter()
            .map(|(k, v, seq)| {
                let h = java_string_hash(&k) as u32;
                ((h ^ (h >> 16)) & mask, seq, k, v)
            })
            .collect();
        v.sort_by_key(|(bucket, seq, _, _)| (*bucket, *seq));
        v.into_iter().map(|(_, _, k, v)| (k, v)).collect()
    }
}
