//! A lower bound of a run's wall time from the work the run had to do: no schedule of that
//! work finishes faster. Three terms, the largest wins:
//!
//! - **bytes**: the bytes the query needs (data ranges; footers and metadata are not counted,
//!   which only lowers the bound) over the node's NIC, or the bytes that came from the store if
//!   fewer (caches served the rest; those bytes did cross the NIC within the run);
//! - **chain**: the store round trips that must follow one another, each at least the store's
//!   smallest first-byte time (`first_byte.min`, or a constant distribution's value; 0 when the
//!   distribution has no floor): the Iceberg metadata stages fetched from the store (metadata
//!   JSON -> manifest list -> manifests), then, for one data file, its footer and then its other
//!   bytes, each counted only if a GET of it went to the store ([`StoreRoundTrips`]); a read a
//!   cache served makes no round trip;
//! - **decode**: the decode work over the threads that ran it at most at once (the cores if
//!   there are more: the CPU model does not cap decodes at the cores, so the parsing threads, or
//!   a peer's CPU pool, can run more at once).
//!
//! A measured run (`sim measure`) has no store model: its chain takes the smallest first byte
//! it measured, and its bytes term is 0 (the machine's NIC is not known), see [`StoreFloor`].
//!
//! It depends on the arm: its needed bytes, what its caches served, its decode work. So an
//! arm's efficiency (bound / wall time) says how much a better schedule of the same reads and
//! decodes could still win, not what another strategy could. `drive/tests/bound.rs` asserts no
//! run beats it, and debug builds assert it after every simulated run.

use models::store::DistKind;
use planner::{Object, ReadKind};
use scenario::Resolved;

/// The three terms, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LowerBound {
    pub bytes_ns: u64,
    pub chain_ns: u64,
    pub decode_ns: u64,
}

impl LowerBound {
    /// The bound: the largest term.
    pub fn ns(&self) -> u64 {
        self.bytes_ns.max(self.chain_ns).max(self.decode_ns)
    }
}

/// What the run did that the bound reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunWork {
    /// Bytes of the data ranges the reader needed, each once.
    pub needed_bytes: u64,
    /// Body bytes that came from the store.
    pub fetched_bytes: u64,
    /// Decode time, summed over decodes.
    pub decode_busy_ns: u64,
    /// The most decodes that ran at once.
    pub peak_decodes: u32,
}

/// Where the bound's store figures come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StoreFloor {
    /// The store model's NIC and smallest first byte: a simulated run, which they govern.
    #[default]
    Model,
    /// What a measured run (`sim measure`) saw: the smallest first byte of its successful
    /// GETs, a floor under every round trip of the chain. Its NIC is not known, so the bytes
    /// term is 0. (The store model's figures, which the real run never used, made a 75 ms
    /// measurement's bound 2.063 s, "efficiency 27.21x", with `--set store.nic=1MiB/s`.)
    Measured {
        /// The smallest time to first byte of a successful GET, ns (0 without one).
        first_byte_ns: u64,
    },
}

/// The smallest first byte the store model allows: a constant's value, or the distribution's
/// `min` (0 without one).
fn model_first_byte_floor_ns(r: &Resolved) -> u64 {
    let fb = &r.store.first_byte;
    match (fb.distribution, fb.value, fb.min) {
        (DistKind::Constant, Some(v), _) => v.0,
        (_, _, Some(m)) => m.0,
        _ => 0,
    }
}

/// The bound of one run; `floor` says whose store figures it takes.
pub fn lower_bound(
    r: &Resolved,
    work: &RunWork,
    trips: &StoreRoundTrips,
    floor: StoreFloor,
) -> LowerBound {
    let (nic, min_first_byte_ns) = match floor {
        StoreFloor::Model => (r.store.nic.bytes_per_s(), model_first_byte_floor_ns(r)),
        StoreFloor::Measured { first_byte_ns } => (f64::INFINITY, first_byte_ns),
    };
    let bytes = work.needed_bytes.min(work.fetched_bytes);
    let bytes_ns = if nic.is_finite() && nic > 0.0 {
        (bytes as f64 * 1e9 / nic).floor() as u64
    } else {
        0
    };
    let chain_ns = min_first_byte_ns.saturating_mul(trips.hops());
    let cores = r.cpu.cores.unwrap_or(models::cpu::CpuSpec::DEFAULT_CORES);
    let parallel = u64::from(cores.max(work.peak_decodes).max(1));
    LowerBound {
        bytes_ns,
        chain_ns,
        decode_ns: work.decode_busy_ns / parallel,
    }
}

/// The store round trips of a run that must follow one another: the Iceberg metadata stages
/// (each needs the one before it) and, per data file, its footer then its other bytes (their
/// offsets come from the footer). Only reads that sent a request to the store count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreRoundTrips {
    /// Bits: metadata JSON, manifest list, a manifest.
    metadata_stages: u8,
    /// By data file: bit 0 its footer, bit 1 its other bytes.
    by_file: Vec<u8>,
    /// The most hops of one data file.
    most_file_hops: u8,
}

impl StoreRoundTrips {
    /// A read of `kind` from `object` sent a GET (or HEAD, LIST) to the store.
    pub fn record(&mut self, object: &Object, kind: ReadKind) {
        let file = match *object {
            Object::IcebergMetadataJson => return self.metadata_stages |= 1,
            Object::IcebergManifestList => return self.metadata_stages |= 2,
            Object::IcebergManifest(_) => return self.metadata_stages |= 4,
            // A listing or a HEAD precedes the footer but is not counted (readers differ in
            // whether they wait for it): the bound stays a bound without them.
            Object::Listing(_) => return,
            Object::Data(f) => f as usize,
        };
        let bit = match kind {
            ReadKind::Head | ReadKind::List | ReadKind::IcebergMetadata => return,
            ReadKind::Footer => 1,
            _ => 2,
        };
        if self.by_file.len() <= file {
            self.by_file.resize(file + 1, 0);
        }
        if let Some(m) = self.by_file.get_mut(file) {
            *m |= bit;
            self.most_file_hops = self.most_file_hops.max(m.count_ones() as u8);
        }
    }

    /// The round trips in the longest chain.
    pub fn hops(&self) -> u64 {
        u64::from(self.metadata_stages.count_ones()) + u64::from(self.most_file_hops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_counts_metadata_stages_and_one_files_footer_then_data() {
        let mut t = StoreRoundTrips::default();
        assert_eq!(t.hops(), 0);
        t.record(&Object::Data(3), ReadKind::DataPages);
        assert_eq!(t.hops(), 1, "data without a footer read: one hop");
        t.record(&Object::Data(5), ReadKind::Footer);
        assert_eq!(
            t.hops(),
            1,
            "another file's footer does not precede file 3's data"
        );
        t.record(&Object::Data(3), ReadKind::OffsetIndex);
        assert_eq!(t.hops(), 1, "index and data of one file count once");
        t.record(&Object::Data(5), ReadKind::Dictionary);
        assert_eq!(t.hops(), 2, "file 5: footer, then its other bytes");
        t.record(&Object::Data(5), ReadKind::Head);
        assert_eq!(t.hops(), 2, "a HEAD is not counted");
        t.record(&Object::IcebergManifest(7), ReadKind::IcebergMetadata);
        t.record(&Object::IcebergManifest(8), ReadKind::IcebergMetadata);
        assert_eq!(t.hops(), 3, "manifests are one stage");
        t.record(&Object::IcebergMetadataJson, ReadKind::IcebergMetadata);
        t.record(&Object::IcebergManifestList, ReadKind::IcebergMetadata);
        assert_eq!(t.hops(), 5);
    }
}
