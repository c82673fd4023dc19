//! `docs/bounds.md` lists every bound of `limits` with its value, and nothing else.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// a test fails loudly where it stops
// The test (not the crate) reads the document it checks; the read path's no-IO rule is for
// the crate.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;

fn documented() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/bounds.md"))
        .unwrap_or_else(|e| panic!("docs/bounds.md: {e}"));
    text.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| {
            let (name, rest) = l.split_once("` | ")?;
            let value = rest.split(" | ").next()?;
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}

/// The value as the table writes it: digits with thousands separators, or a power of two.
fn written(v: u64) -> Vec<String> {
    let digits = v.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let mut forms = vec![grouped];
    if v.is_power_of_two() {
        forms.push(format!("2^{}", v.trailing_zeros()));
    }
    for (unit, shift) in [("KiB", 10), ("MiB", 20), ("GiB", 30), ("TiB", 40)] {
        if v % (1 << shift) == 0 {
            forms.push(format!("{} {unit}", v >> shift));
        }
    }
    forms
}

#[test]
fn every_bound_is_in_the_doc_with_its_value() {
    let doc = documented();
    for (name, value) in limits::ALL {
        let Some(text) = doc.get(*name) else {
            panic!("docs/bounds.md does not list `{name}`");
        };
        assert!(
            written(*value).contains(text),
            "docs/bounds.md gives `{name}` as `{text}`; it is {value} ({:?})",
            written(*value)
        );
    }
    for name in doc.keys() {
        assert!(
            limits::ALL.iter().any(|(n, _)| n == name),
            "docs/bounds.md lists `{name}`, which `limits` does not define"
        );
    }
}
