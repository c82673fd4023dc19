//! Send times for one paced direction of one connection: a token bucket whose burst is one
//! piece. Pure arithmetic on nanoseconds since an epoch, so it is tested without sockets.

/// Nanoseconds in a second.
const NS_PER_S: u128 = 1_000_000_000;

/// How long one paced piece should take on the wire. Short enough that pacing is smooth at the
/// millisecond scale; long enough that a thread sleeping between pieces is not the bottleneck.
pub const PIECE_TARGET_NS: u64 = 500_000;
/// Smallest piece: below this the per-write cost dominates.
pub const MIN_PIECE_BYTES: usize = 1024;
/// Largest piece: one read of the proxy's buffer.
pub const MAX_PIECE_BYTES: usize = 256 * 1024;
/// How far behind its schedule a sender may catch up by sending back to back (the bucket's
/// depth, in wire time): enough to absorb a late wake-up, not enough to burst after the
/// reader stalled.
pub const CATCH_UP_NS: u64 = 1_000_000;

/// Pacing state of one direction: when the wire is next free.
///
/// A piece of `len` bytes that is ready at `ready_ns` is sent at
/// `max(ready_ns, free_at_ns, now_ns - CATCH_UP_NS)`, and then occupies the wire for
/// `len / bandwidth`. The bytes of a piece leave at the start of its slot. A sender that fell
/// behind (a late wake-up, a blocked write) catches up by at most [`CATCH_UP_NS`] of wire time;
/// an idle connection builds up no credit, so a new response starts at the set rate rather
/// than with a burst.
#[derive(Debug, Clone)]
pub struct Pacer {
    bandwidth_bytes_per_s: u64,
    free_at_ns: u64,
}

impl Pacer {
    /// A pacer for `bandwidth_bytes_per_s` (must be above 0; 0 means unpaced and needs no pacer).
    pub fn new(bandwidth_bytes_per_s: u64) -> Option<Pacer> {
        (bandwidth_bytes_per_s > 0).then_some(Pacer {
            bandwidth_bytes_per_s,
            free_at_ns: 0,
        })
    }

    /// The bandwidth paced to.
    pub fn bandwidth_bytes_per_s(&self) -> u64 {
        self.bandwidth_bytes_per_s
    }

    /// Bytes per piece at this bandwidth: about [`PIECE_TARGET_NS`] of wire time, within
    /// [`MIN_PIECE_BYTES`]..=[`MAX_PIECE_BYTES`].
    pub fn piece_bytes(&self) -> usize {
        let bytes = u128::from(self.bandwidth_bytes_per_s) * u128::from(PIECE_TARGET_NS) / NS_PER_S;
        usize::try_from(bytes)
            .unwrap_or(MAX_PIECE_BYTES)
            .clamp(MIN_PIECE_BYTES, MAX_PIECE_BYTES)
    }

    /// The time at which a piece of `len_bytes` ready at `ready_ns` is sent, asked at
    /// `now_ns`; the wire is then busy until that time plus the piece's duration.
    pub fn schedule(&mut self, now_ns: u64, ready_ns: u64, len_bytes: usize) -> u64 {
        let free_ns = self.free_at_ns.max(now_ns.saturating_sub(CATCH_UP_NS));
        let send_at_ns = ready_ns.max(free_ns);
        let wire_ns =
            (len_bytes as u128 * NS_PER_S).div_ceil(u128::from(self.bandwidth_bytes_per_s));
        self.free_at_ns = send_at_ns.saturating_add(u64::try_from(wire_ns).unwrap_or(u64::MAX));
        send_at_ns
    }

    /// When the wire is next free.
    pub fn free_at_ns(&self) -> u64 {
        self.free_at_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_bandwidth_means_no_pacer() {
        assert!(Pacer::new(0).is_none());
        assert!(Pacer::new(1).is_some());
    }

    #[test]
    fn back_to_back_pieces_are_spaced_by_their_wire_time() {
        // 1 MB/s: 1,000 bytes take exactly 1 ms.
        let mut p = Pacer::new(1_000_000).unwrap();
        let t0 = 5_000_000;
        assert_eq!(p.schedule(t0, t0, 1000), t0);
        assert_eq!(p.schedule(t0, t0, 1000), t0 + 1_000_000);
        assert_eq!(p.schedule(t0, t0, 500), t0 + 2_000_000);
        assert_eq!(p.free_at_ns(), t0 + 2_500_000);
    }

    #[test]
    fn an_idle_wire_builds_no_credit() {
        let mut p = Pacer::new(1_000_000).unwrap();
        p.schedule(0, 0, 1000);
        // Ready long after the wire went free: sent when ready, and the next piece waits its
        // full wire time rather than bursting.
        assert_eq!(p.schedule(10_000_000, 10_000_000, 1000), 10_000_000);
        assert_eq!(p.schedule(10_000_000, 10_000_000, 1000), 11_000_000);
    }

    #[test]
    fn a_sender_that_fell_behind_catches_up_by_at_most_the_bucket_depth() {
        // 1 MB/s: 1,000 bytes take 1 ms, and the bucket holds 1 ms.
        let mut p = Pacer::new(1_000_000).unwrap();
        assert_eq!(p.schedule(0, 0, 1000), 0);
        // The writer was blocked until 50 ms: one piece's worth of backlog may go at once...
        assert_eq!(p.schedule(50_000_000, 0, 1000), 49_000_000);
        assert_eq!(p.schedule(50_000_000, 0, 1000), 50_000_000);
        // ...and then the set rate again.
        assert_eq!(p.schedule(50_000_000, 0, 1000), 51_000_000);
    }

    #[test]
    fn piece_size_follows_bandwidth_within_bounds() {
        let slow = Pacer::new(1_000).unwrap();
        assert_eq!(slow.piece_bytes(), MIN_PIECE_BYTES);
        let fast = Pacer::new(100_000_000_000).unwrap();
        assert_eq!(fast.piece_bytes(), MAX_PIECE_BYTES);
        // 50 MiB/s for 500 us is 26,214 bytes.
        let mid = Pacer::new(50 * 1024 * 1024).unwrap();
        assert_eq!(mid.piece_bytes(), 26_214);
    }

    #[test]
    fn total_time_matches_bandwidth_for_any_split() {
        // However a transfer is cut into pieces, the wire is busy for size / bandwidth.
        for piece in [1usize, 7, 1000, 4096, 65_536] {
            let mut p = Pacer::new(3_000_000).unwrap();
            let total = 300_000usize;
            let mut left = total;
            while left > 0 {
                let n = left.min(piece);
                p.schedule(0, 0, n);
                left -= n;
            }
            let expect_ns = total as u64 * 1_000_000_000 / 3_000_000;
            let got = p.free_at_ns();
            // Each piece rounds up by under 1 ns.
            let pieces = total.div_ceil(piece) as u64;
            assert!(
                got >= expect_ns && got <= expect_ns + pieces,
                "piece {piece}: {got} vs {expect_ns}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn sends_are_ordered_never_early_and_never_faster_than_the_bucket_allows(
            bw in 1_000u64..10_000_000_000,
            steps in proptest::collection::vec((0u64..5_000_000, 0u64..5_000_000, 1usize..300_000), 1..50),
        ) {
            let mut p = Pacer::new(bw).unwrap();
            let (mut now, mut last_send) = (0u64, 0u64);
            let mut first_send = None;
            let mut bytes_before_last = 0u128;
            let mut last_len = 0usize;
            for (advance, ready_lead, len) in steps {
                now += advance;
                let ready = now.saturating_sub(ready_lead);
                let send = p.schedule(now, ready, len);
                proptest::prop_assert!(send >= ready);
                proptest::prop_assert!(send >= last_send);
                proptest::prop_assert!(send + CATCH_UP_NS >= now);
                first_send.get_or_insert(send);
                bytes_before_last += last_len as u128;
                last_len = len;
                last_send = send;
            }
            // Between the first and the last send, the bytes sent before the last piece took
            // their wire time, less at most the bucket depth (for every catch-up, once each).
            let span = u128::from(last_send - first_send.unwrap_or(0));
            let wire = bytes_before_last * NS_PER_S / u128::from(bw);
            proptest::prop_assert!(span + u128::from(CATCH_UP_NS) * 50 >= wire);
        }
    }
}
