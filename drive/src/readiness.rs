//! A logical read (what the reader asked for) assembled from fragments (page-cache hits, disk
//! reads, store GETs), each delivering its bytes in offset order. The reader sees one read: its
//! bytes are ready up to the first fragment that is not complete.

use layout::ByteRange;
use smallvec::SmallVec;

#[derive(Debug, Clone)]
pub struct Fragment {
    /// Bytes of the logical read this fragment serves (inside the read's range).
    pub range: ByteRange,
    /// Bytes of `range` delivered so far, from its start.
    pub ready: u64,
}

#[derive(Debug, Clone)]
pub struct CompositeRead {
    pub range: ByteRange,
    /// Most reads are one fragment (inline; more for page-cache and filesystem-cache mixes).
    fragments: SmallVec<[Fragment; 1]>,
    /// Fragments fully delivered, from the first; readiness never goes back.
    complete_prefix: usize,
    pub first_byte_sent: bool,
    pub reported_ready: u64,
}

impl CompositeRead {
    /// `fragments` must tile `range` in offset order (checked in debug builds).
    pub fn new(range: ByteRange, fragments: impl IntoIterator<Item = ByteRange>) -> Self {
        let fragments: SmallVec<[Fragment; 1]> = fragments
            .into_iter()
            .map(|r| Fragment { range: r, ready: 0 })
            .collect();
        debug_assert!(
            tiles(range, fragments.iter().map(|f| f.range)),
            "{range} vs {fragments:?}"
        );
        Self {
            range,
            fragments,
            complete_prefix: 0,
            first_byte_sent: false,
            reported_ready: 0,
        }
    }

    pub fn fragment_count(&self) -> usize {
        self.fragments.len()
    }

    pub fn fragment(&self, i: usize) -> ByteRange {
        self.fragments[i].range
    }

    /// Fragment `i` has `ready` bytes (clamped to its length) available from its start.
    pub fn set_ready(&mut self, i: usize, ready: u64) {
        if let Some(f) = self.fragments.get_mut(i) {
            f.ready = f.ready.max(ready.min(f.range.len()));
        }
        while let Some(f) = self.fragments.get(self.complete_prefix) {
            if f.ready < f.range.len() {
                break;
            }
            self.complete_prefix += 1;
        }
    }

    pub fn complete(&mut self, i: usize) {
        let len = self.fragments.get(i).map(|f| f.range.len()).unwrap_or(0);
        self.set_ready(i, len);
    }

    /// Bytes of the logical read ready in offset order.
    pub fn bytes_ready(&self) -> u64 {
        let done: u64 = self.fragments[..self.complete_prefix]
            .iter()
            .map(|f| f.range.len())
            .sum();
        done + self
            .fragments
            .get(self.complete_prefix)
            .map(|f| f.ready)
            .unwrap_or(0)
    }

    pub fn is_complete(&self) -> bool {
        self.complete_prefix == self.fragments.len()
    }
}

fn tiles(range: ByteRange, parts: impl IntoIterator<Item = ByteRange>) -> bool {
    let mut at = range.start;
    for p in parts {
        if p.start != at || p.end < p.start {
            return false;
        }
        at = p.end;
    }
    at == range.end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_waits_for_the_first_incomplete_fragment() {
        let mut r = CompositeRead::new(
            ByteRange::new(0, 30),
            vec![
                ByteRange::new(0, 10),
                ByteRange::new(10, 20),
                ByteRange::new(20, 30),
            ],
        );
        r.complete(1);
        assert_eq!(r.bytes_ready(), 0);
        r.set_ready(0, 4);
        assert_eq!(r.bytes_ready(), 4);
        r.complete(0);
        assert_eq!(r.bytes_ready(), 20);
        assert!(!r.is_complete());
        r.set_ready(2, 100);
        assert_eq!(r.bytes_ready(), 30);
        assert!(r.is_complete());
    }
}
