//! Byte-count fields written with units (`2MiB`, `256KiB`) in scenario files, as the project
//! writes every size; a bare number other than 0 is refused (see the `units` crate).

/// `#[serde(with = "crate::serde_units::bytes")]` for `u64` byte counts.
pub(crate) mod bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(value: &u64, s: S) -> Result<S::Ok, S::Error> {
        // The short binary form when it is exact, otherwise plain bytes.
        let short = units::format_bytes(*value);
        let text = if units::parse_bytes(&short).ok() == Some(*value) {
            short
        } else {
            format!("{value}B")
        };
        s.serialize_str(&text)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        units::Bytes::deserialize(d).map(|b| b.get())
    }
}
