//! Dotted-path overrides of a scenario: `--set`, `cases:` and sweep points all go through here.
//!
//! An override is `path=value` where `path` walks the scenario's YAML tree (`store.first_byte.median`,
//! `table.generate.file_count`, `arms.redesign.settings.input_format_parquet_coalesce_gap_bytes`)
//! and `value` is a YAML scalar (`30ms`, `4`, `true`). A bare name that is not a top-level key of
//! the scenario is a setting for every arm that honours it (`input_format_parquet_coalesce_gap_bytes=1MiB`
//! becomes `arms.<arm>.settings.input_format_parquet_coalesce_gap_bytes=1MiB` for each such arm,
//! overriding the arm's own value), which is what sweeps vary most. In a list of named items
//! (`arms`, `queries`, `cases`) a path segment may be the item's `name` as well as its index.
//!
//! Precedence, lowest first: the preset's defaults, the scenario's `settings:`, an arm's
//! `settings:`, a case's `set:`, the command line's `--set`, a sweep axis or tune parameter
//! ([`Layer`]). Overrides apply in layer order, and in the order given within a layer, so the
//! last word is the highest layer's.

use serde_json::Value;

/// Top-level keys of a scenario file; anything else without a dot is a setting.
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "replications",
    "table",
    "query",
    "queries",
    "store",
    "caches",
    "cpu",
    "settings",
    "arms",
    "cases",
    "sweep",
];

/// Where an override comes from, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    /// A case's `set:`.
    Case,
    /// `--set` on the command line.
    CommandLine,
    /// A sweep axis or a tune parameter at one point.
    Point,
}

impl Layer {
    /// How messages name it.
    pub fn describe(self) -> &'static str {
        match self {
            Layer::Case => "the case's `set:`",
            Layer::CommandLine => "`--set`",
            Layer::Point => "the sweep axis or tune parameter",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The dotted path into the scenario tree (empty for a bare setting name).
    pub path: Vec<String>,
    /// A bare setting name: applies to every arm that honours it.
    pub setting: Option<String>,
    pub value: Value,
    /// The text the user wrote, for messages.
    pub text: String,
    pub layer: Layer,
}

impl Override {
    /// The same override at another layer.
    pub fn at(mut self, layer: Layer) -> Override {
        self.layer = layer;
        self
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum OverrideError {
    #[error("`{0}` is not of the form path=value (e.g. `store.first_byte.median=30ms`)")]
    NoEquals(String),
    #[error("`{0}`: empty path")]
    EmptyPath(String),
    #[error("`{text}`: `{segment}` does not exist under `{parent}`{hint}")]
    NoSuchKey {
        text: String,
        segment: String,
        parent: String,
        hint: String,
    },
    #[error(
        "`{text}`: `{parent}` is a value, not a section, so `{segment}` cannot be set inside it"
    )]
    NotASection {
        text: String,
        segment: String,
        parent: String,
    },
}

/// Parses `path=value` (at the command line's layer; see [`Override::at`]). The value is read
/// as a YAML scalar, so `4` is a number and `2MiB` a string.
pub fn parse_override(text: &str) -> Result<Override, OverrideError> {
    let (path, value) = text
        .split_once('=')
        .ok_or_else(|| OverrideError::NoEquals(text.to_string()))?;
    let path = path.trim();
    if path.is_empty() || path.split('.').any(|s| s.trim().is_empty()) {
        return Err(OverrideError::EmptyPath(text.to_string()));
    }
    let segments: Vec<String> = path.split('.').map(|s| s.trim().to_string()).collect();
    let bare = segments.len() == 1 && !TOP_LEVEL_KEYS.contains(&segments[0].as_str());
    Ok(Override {
        setting: bare.then(|| segments[0].clone()),
        path: if bare { Vec::new() } else { segments },
        value: scalar_value(value.trim()),
        text: text.to_string(),
        layer: Layer::CommandLine,
    })
}

/// Reads a scalar the way YAML would: integers, floats and booleans become numbers and booleans,
/// everything else stays text.
pub fn scalar_value(text: &str) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(u) = text.parse::<u64>() {
        return Value::from(u);
    }
    if let Ok(f) = text.parse::<f64>() {
        if f.is_finite() && text.chars().any(|c| c.is_ascii_digit()) {
            return Value::from(f);
        }
    }
    match text {
        "null" | "~" => Value::Null,
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(text.to_string()),
    }
}

/// Applies one override to the tree. Missing map keys are created only inside `settings` maps
/// and where the parent map exists (serde reports unknown keys afterwards, with a suggestion).
pub fn apply(root: &mut Value, ov: &Override) -> Result<(), OverrideError> {
    apply_at(root, &ov.path, ov)
}

/// Applies `ov`'s value at `path` (a bare setting's expansion, or the override's own path).
pub fn apply_at(root: &mut Value, path: &[String], ov: &Override) -> Result<(), OverrideError> {
    let mut node = root;
    let mut parent = String::from("<scenario>");
    let Some(last) = path.len().checked_sub(1) else {
        return Err(OverrideError::EmptyPath(ov.text.clone()));
    };
    for (i, seg) in path.iter().enumerate() {
        let is_last = i == last;
        node = match node {
            Value::Object(map) => {
                if is_last {
                    map.insert(seg.clone(), ov.value.clone());
                    return Ok(());
                }
                // Intermediate sections that are optional in the file (e.g. `settings`).
                map.entry(seg.clone())
                    .or_insert_with(|| Value::Object(Default::default()))
            }
            Value::Array(items) => {
                let idx = seg
                    .parse::<usize>()
                    .ok()
                    .filter(|&i| i < items.len())
                    .or_else(|| {
                        items.iter().position(|it| {
                            it.get("name").and_then(Value::as_str) == Some(seg.as_str())
                        })
                    });
                let Some(idx) = idx else {
                    let names: Vec<String> = items
                        .iter()
                        .filter_map(|it| it.get("name").and_then(Value::as_str).map(str::to_string))
                        .collect();
                    let hint = if names.is_empty() {
                        format!(" (it has {} items, indexed from 0)", items.len())
                    } else {
                        format!(" (items: {})", names.join(", "))
                    };
                    return Err(OverrideError::NoSuchKey {
                        text: ov.text.clone(),
                        segment: seg.clone(),
                        parent,
                        hint,
                    });
                };
                if is_last {
                    items[idx] = ov.value.clone();
                    return Ok(());
                }
                &mut items[idx]
            }
            _ => {
                return Err(OverrideError::NotASection {
                    text: ov.text.clone(),
                    segment: seg.clone(),
                    parent,
                });
            }
        };
        parent = seg.clone();
    }
    Ok(())
}

/// Reads the value at a dotted path (for sweeps to report what they varied).
pub fn get<'a>(root: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut node = root;
    for seg in path {
        node = match node {
            Value::Object(map) => map.get(seg)?,
            Value::Array(items) => {
                let idx = seg.parse::<usize>().ok().or_else(|| {
                    items
                        .iter()
                        .position(|it| it.get("name").and_then(Value::as_str) == Some(seg.as_str()))
                })?;
                items.get(idx)?
            }
            _ => return None,
        };
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bare_name_is_a_setting() {
        let ov = parse_override("input_format_parquet_coalesce_gap_bytes=1MiB").unwrap();
        assert!(ov.path.is_empty());
        assert_eq!(
            ov.setting.as_deref(),
            Some("input_format_parquet_coalesce_gap_bytes")
        );
        assert_eq!(ov.value, json!("1MiB"));
        let ov = parse_override("seed=7").unwrap();
        assert_eq!(ov.path, vec!["seed"]);
        assert_eq!(ov.value, json!(7));
    }

    #[test]
    fn walks_named_list_items() {
        let mut v = json!({"arms": [{"name": "base", "settings": {}}, {"name": "redesign"}]});
        apply(
            &mut v,
            &parse_override("arms.redesign.settings.max_threads=8").unwrap(),
        )
        .unwrap();
        assert_eq!(v["arms"][1]["settings"]["max_threads"], json!(8));
        apply(
            &mut v,
            &parse_override("arms.0.strategy=clickhouse-base").unwrap(),
        )
        .unwrap();
        assert_eq!(v["arms"][0]["strategy"], json!("clickhouse-base"));
        let err = apply(&mut v, &parse_override("arms.nope.strategy=x").unwrap()).unwrap_err();
        assert!(err.to_string().contains("items: base, redesign"), "{err}");
    }

    #[test]
    fn refuses_to_descend_into_a_value() {
        let mut v = json!({"seed": 4});
        let err = apply(&mut v, &parse_override("seed.x=1").unwrap()).unwrap_err();
        assert!(matches!(err, OverrideError::NotASection { .. }));
        assert!(parse_override("noequals").is_err());
        assert!(parse_override("=3").is_err());
    }
}
