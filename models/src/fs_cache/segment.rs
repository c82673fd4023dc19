//! One file segment of the filesystem cache and its download state.
//!
//! As in ClickHouse, a segment is filled from its start, in order: the bytes on disk are a prefix
//! `[start, downloaded_end)`. A GET that lands beyond the prefix (a background download that
//! finishes before the foreground one) waits in `arrived` until the prefix reaches it.

use layout::ByteRange;

/// A file segment: `[start, end)` of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    pub start: u64,
    pub end: u64,
    /// The on-disk prefix ends here.
    pub downloaded_end: u64,
    /// GETs that will fill parts of this segment (clipped to it), not yet completed.
    pub in_flight: Vec<ByteRange>,
    /// Completed pieces beyond the prefix, sorted and disjoint.
    pub arrived: Vec<ByteRange>,
}

impl Segment {
    pub(crate) fn new(start: u64, end: u64) -> Self {
        Self {
            start,
            end,
            downloaded_end: start,
            in_flight: Vec::new(),
            arrived: Vec::new(),
        }
    }

    /// Bytes this segment holds on disk.
    pub(crate) fn bytes(&self) -> u64 {
        self.downloaded_end - self.start + self.arrived.iter().map(|r| r.len()).sum::<u64>()
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.downloaded_end >= self.end
    }

    pub(crate) fn is_downloading(&self) -> bool {
        !self.in_flight.is_empty()
    }

    /// End of what the segment holds or will hold, contiguous from its start: the prefix
    /// extended over in-flight and arrived pieces that touch it.
    pub(crate) fn claimed_end(&self) -> u64 {
        let mut pieces: Vec<ByteRange> = self
            .in_flight
            .iter()
            .chain(self.arrived.iter())
            .copied()
            .collect();
        pieces.sort_by_key(|r| r.start);
        let mut end = self.downloaded_end;
        for p in pieces {
            if p.start <= end {
                end = end.max(p.end);
            }
        }
        end.min(self.end)
    }

    /// Registers a GET that will fill `range` (clipped to the segment).
    pub(crate) fn claim(&mut self, range: ByteRange) {
        let r = self.clip(range);
        if !r.is_empty() {
            self.in_flight.push(r);
        }
    }

    /// A GET over `range` completed: if this segment had claimed exactly those bytes for it,
    /// they land on disk. Bytes nobody claimed (a cache-bypassing read) are not cached.
    pub(crate) fn complete(&mut self, range: ByteRange) {
        let r = self.clip(range);
        if let Some(i) = self.in_flight.iter().position(|c| *c == r) {
            self.in_flight.swap_remove(i);
            self.add_arrived(r);
            self.advance_prefix();
        }
    }

    /// A GET over `range` failed: forget its claim.
    pub(crate) fn abort(&mut self, range: ByteRange) {
        let r = self.clip(range);
        if let Some(i) = self.in_flight.iter().position(|c| *c == r) {
            self.in_flight.swap_remove(i);
        }
    }

    fn clip(&self, r: ByteRange) -> ByteRange {
        ByteRange::new(r.start.max(self.start), r.end.min(self.end))
    }

    fn add_arrived(&mut self, piece: ByteRange) {
        let piece = ByteRange::new(piece.start.max(self.downloaded_end), piece.end);
        if piece.is_empty() {
            return;
        }
        self.arrived.push(piece);
        self.arrived.sort_by_key(|r| r.start);
        let mut merged: Vec<ByteRange> = Vec::with_capacity(self.arrived.len());
        for r in self.arrived.drain(..) {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        self.arrived = merged;
    }

    fn advance_prefix(&mut self) {
        while let Some(first) = self.arrived.first().copied() {
            if first.start > self.downloaded_end {
                break;
            }
            self.downloaded_end = self.downloaded_end.max(first.end);
            self.arrived.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_arrival_waits_for_the_prefix() {
        let mut s = Segment::new(0, 100);
        s.claim(ByteRange::new(0, 40));
        s.claim(ByteRange::new(40, 100));
        assert_eq!(s.claimed_end(), 100);
        s.complete(ByteRange::new(40, 100));
        assert_eq!((s.downloaded_end, s.bytes()), (0, 60));
        s.complete(ByteRange::new(0, 40));
        assert!(s.is_complete());
        assert!(!s.is_downloading());
        assert_eq!(s.bytes(), 100);
    }

    #[test]
    fn unclaimed_bytes_are_not_cached_and_abort_releases() {
        let mut s = Segment::new(0, 100);
        s.complete(ByteRange::new(0, 50));
        assert_eq!(s.bytes(), 0);
        s.claim(ByteRange::new(0, 100));
        s.abort(ByteRange::new(0, 100));
        assert!(!s.is_downloading());
        assert_eq!(s.claimed_end(), 0);
    }
}
