//! A sweep's fingerprint: everything that decides its rows, so that `--resume` keeps rows only
//! from the same sweep. It is written as the CSV's first line:
//!
//! ```text
//! # sim sweep 5c1f0e3a9b27d4c8; program=0.1.0+2afc48b; scenario=many-small-files; case=default; ...
//! ```
//!
//! The hash is FNV-1a (64 bits) over the fields in order: a named algorithm, so the same sweep
//! has the same fingerprint on every machine and release. Each field is also written out, so a
//! refusal can say which one differs.

use super::values::Axis;
use super::SweepError;
use scenario::LoadedScenario;

/// The fields of a fingerprint, in the order they are hashed and written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    pub fields: Vec<(&'static str, String)>,
}

/// The line's prefix; anything else in the first line is not a sweep file of ours.
pub const PREFIX: &str = "# sim sweep ";

/// The program that writes rows: its version and the commit it was built from.
pub fn program() -> String {
    format!(
        "{}+{}",
        env!("CARGO_PKG_VERSION"),
        option_env!("SIM_BUILD_COMMIT").unwrap_or("unknown")
    )
}

fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Fingerprint {
    /// Of the case's scenario (its tree after the case's and the command line's overrides, and
    /// the recorded layout file's bytes when it names one), the axes, replications and seed.
    pub fn of(
        case_scenario: &LoadedScenario,
        case: &str,
        axes: &[Axis],
        reps: u32,
        seed: u64,
    ) -> Result<Fingerprint, SweepError> {
        let tree = serde_json::to_string(&case_scenario.tree).unwrap_or_default();
        let layout = match &case_scenario.file.table.layout {
            Some(rel) => {
                let full = case_scenario.base_dir().join(rel);
                let bytes = std::fs::read(&full).map_err(|e| SweepError::Output {
                    path: full.clone(),
                    message: format!("cannot read the layout to fingerprint the sweep: {e}"),
                })?;
                format!("{:016x}", fnv1a(&bytes, 0xcbf2_9ce4_8422_2325))
            }
            None => "-".into(),
        };
        let overrides: Vec<&str> = case_scenario
            .overrides
            .iter()
            .map(|o| o.text.as_str())
            .collect();
        Ok(Fingerprint {
            fields: vec![
                ("program", program()),
                ("scenario", case_scenario.file.name.clone()),
                ("case", case.to_string()),
                ("overrides", overrides.join(" ")),
                (
                    "scenario_tree",
                    format!("{:016x}", fnv1a(tree.as_bytes(), 0xcbf2_9ce4_8422_2325)),
                ),
                ("layout", layout),
                (
                    "axes",
                    axes.iter()
                        .map(|a| format!("{}={}", a.name, a.values.join(",")))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                ("reps", reps.to_string()),
                ("seed", seed.to_string()),
            ],
        })
    }

    /// The hash of every field.
    pub fn hash(&self) -> u64 {
        self.fields.iter().fold(0xcbf2_9ce4_8422_2325, |h, (k, v)| {
            fnv1a(v.as_bytes(), fnv1a(&[0], fnv1a(k.as_bytes(), h)))
        })
    }

    /// The CSV's first line (without its newline). Field values never hold `;` or a newline.
    pub fn line(&self) -> String {
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|(k, v)| format!("{k}={}", v.replace([';', '\n', '\r'], " ")))
            .collect();
        format!("{PREFIX}{:016x}; {}", self.hash(), fields.join("; "))
    }

    /// What differs between this fingerprint and a file's first line, or `None` when they
    /// match. A line that is not a fingerprint at all says so.
    pub fn differences(&self, line: &str) -> Option<String> {
        line_differences(line, &self.line())
    }
}

/// What differs between the fingerprint line `theirs` (a file's) and `mine`, field by field,
/// or `None` when their hashes match. A line that is not a fingerprint at all says so.
pub fn line_differences(theirs: &str, mine: &str) -> Option<String> {
    let Some(rest) = theirs.strip_prefix(PREFIX) else {
        return Some("its first line is not a `# sim sweep` fingerprint (not a sweep file, or one written before fingerprints)".into());
    };
    let fields = |rest: &str| -> (Option<String>, Vec<(String, String)>) {
        let mut parts = rest.split(';');
        let hash = parts.next().map(|h| h.trim().to_string());
        let kv = parts
            .filter_map(|f| f.trim().split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (hash, kv)
    };
    let (their_hash, theirs) = fields(rest);
    let (my_hash, mine) = fields(mine.strip_prefix(PREFIX).unwrap_or(""));
    if their_hash.is_some() && their_hash == my_hash {
        return None;
    }
    let mut diffs = Vec::new();
    for (k, v) in &mine {
        match theirs.iter().find(|(tk, _)| tk == k) {
            Some((_, tv)) if tv == v => {}
            Some((_, tv)) => diffs.push(format!("{k}: `{tv}` in the file, `{v}` now")),
            None => diffs.push(format!("{k}: absent in the file, `{v}` now")),
        }
    }
    if diffs.is_empty() {
        diffs.push("the hash differs".into());
    }
    Some(diffs.join("; "))
}
