//! A registry's factories by mechanism name, kept where no other allocation shares their cache
//! lines.
//!
//! Every new exchange reads the registry: the name it asks for, the factory, what the factory
//! holds. The thread that built the registry made those allocations in its own malloc arena,
//! and if it goes on working (a broker's network thread, a JMH worker), its short-lived
//! allocations land beside them, so each of its writes takes the line from the other threads
//! reading the registry. Here each entry (the name inline, and the handle on the factory) sits
//! alone on a 128-byte block of a vector of such blocks; the factories themselves are made
//! [`Padded`] by the registry.

use std::sync::Arc;

use crate::sync::Padded;

/// The longest mechanism name (RFC 4422 §3.1).
const MAX_NAME: usize = 20;

/// A mechanism name, inline.
#[derive(Clone, Copy)]
struct Name {
    len: u8,
    bytes: [u8; MAX_NAME],
}

impl Name {
    fn new(name: &str) -> Option<Name> {
        let mut bytes = [0; MAX_NAME];
        bytes
            .get_mut(..name.len())?
            .copy_from_slice(name.as_bytes());
        Some(Name {
            len: name.len() as u8,
            bytes,
        })
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// Factories of type `F` by name, sorted by name.
pub(super) struct Named<F: ?Sized> {
    entries: Vec<Padded<(Name, Arc<F>)>>,
}

impl<F: ?Sized> Default for Named<F> {
    fn default() -> Self {
        Named {
            entries: Vec::new(),
        }
    }
}

impl<F: ?Sized> Clone for Named<F> {
    fn clone(&self) -> Self {
        Named {
            entries: self
                .entries
                .iter()
                .map(|e| Padded((e.0 .0, e.0 .1.clone())))
                .collect(),
        }
    }
}

impl<F: ?Sized> Named<F> {
    fn position(&self, name: &[u8]) -> Result<usize, usize> {
        self.entries
            .binary_search_by(|e| e.0 .0.as_bytes().cmp(name))
    }

    pub(super) fn get(&self, name: &str) -> Option<&F> {
        // A registry has a handful of mechanisms: a scan (a slice comparison checks the
        // lengths first).
        let e = self
            .entries
            .iter()
            .find(|e| e.0 .0.as_bytes() == name.as_bytes())?;
        Some(&*e.0 .1)
    }

    /// Adds or replaces `name`'s factory; `false` (and nothing added) if the name is longer
    /// than a mechanism name can be.
    pub(super) fn insert(&mut self, name: &str, factory: Arc<F>) -> bool {
        let Some(key) = Name::new(name) else {
            return false;
        };
        self.put(key, factory);
        true
    }

    fn put(&mut self, key: Name, factory: Arc<F>) {
        match self.position(key.as_bytes()) {
            Ok(i) => self.entries[i].0 .1 = factory,
            Err(i) => self.entries.insert(i, Padded((key, factory))),
        }
    }

    /// Removes `name`; returns whether it was there.
    pub(super) fn remove(&mut self, name: &str) -> bool {
        match self.position(name.as_bytes()) {
            Ok(i) => {
                self.entries.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Adds every factory of `other`, replacing same-named ones.
    pub(super) fn extend(&mut self, other: Named<F>) {
        for Padded((name, factory)) in other.entries {
            self.put(name, factory);
        }
    }

    /// The names, sorted.
    pub(super) fn names(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| String::from_utf8_lossy(e.0 .0.as_bytes()).into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factories_are_found_replaced_merged_and_removed_by_name() {
        let mut a: Named<str> = Named::default();
        assert!(a.insert("SCRAM-SHA-256", Arc::from("s1")));
        assert!(a.insert("PLAIN", Arc::from("p1")));
        assert!(a.insert("SCRAM-SHA-256", Arc::from("s2")));
        assert!(!a.insert("A-NAME-OF-21-LETTERS-", Arc::from("x")));
        assert!(a.insert("A-NAME-OF-20-LETTERS", Arc::from("x")));
        assert_eq!(a.get("SCRAM-SHA-256"), Some("s2"));
        assert_eq!(a.get("SCRAM-SHA-25"), None);
        assert_eq!(a.get(""), None);
        let mut b: Named<str> = Named::default();
        b.insert("PLAIN", Arc::from("p2"));
        b.insert("GSSAPI", Arc::from("g"));
        let before = a.clone();
        a.extend(b);
        assert_eq!(
            a.names(),
            ["A-NAME-OF-20-LETTERS", "GSSAPI", "PLAIN", "SCRAM-SHA-256"]
        );
        assert_eq!(a.get("PLAIN"), Some("p2"));
        assert_eq!(before.get("PLAIN"), Some("p1"));
        assert!(a.remove("GSSAPI"));
        assert!(!a.remove("GSSAPI"));
        assert_eq!(a.get("GSSAPI"), None);
        assert_eq!(a.entries.as_ptr() as usize % 128, 0);
    }
}
