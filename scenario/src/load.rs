//! Reading a scenario file: typed parse with line and column, overrides, and errors that name
//! the file, the line, the key and the nearest valid key.

use super::file::ScenarioFile;
use super::overrides::{self, Override};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

/// A scenario error: where (file, line, key) and what would be right.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// The key or override the error is about, when known.
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        if let Some(k) = &self.key {
            write!(f, ": `{k}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// The same error, saying which of the scenario's `cases:` it is about (none for a scenario
    /// without cases, whose one case is `default`).
    pub fn in_case(mut self, case: &str) -> Self {
        if case != "default" {
            self.message = format!("case {case}: {}", self.message);
        }
        self
    }
}

impl ScenarioError {
    pub fn new(file: &Path, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line: None,
            column: None,
            key: None,
            message: message.into(),
        }
    }
    pub fn at_key(file: &Path, text: &str, key: &str, message: impl Into<String>) -> Self {
        let line = find_key_line(text, key);
        Self {
            file: file.to_path_buf(),
            line,
            column: None,
            key: Some(key.to_string()),
            message: message.into(),
        }
    }
}

/// A parsed scenario with the tree it came from (for overrides, sweeps and `sim validate`).
#[derive(Debug, Clone)]
pub struct LoadedScenario {
    pub path: PathBuf,
    pub text: String,
    /// The tree as the file states it.
    pub base_tree: Value,
    /// The tree after overrides.
    pub tree: Value,
    pub file: ScenarioFile,
    /// Every override, in the order they apply (by layer, then as given).
    pub overrides: Vec<Override>,
    /// What a user should know about how the overrides landed: a setting that some arms do not
    /// honour, a value shadowed by a higher layer. The command prints them on stderr.
    pub notes: Vec<String>,
    /// The `sweep: vary:` axes in the order the file writes them: the tree the file is read
    /// back from sorts its maps, and the first axis is the plots' x axis.
    vary_order: Vec<String>,
}

impl LoadedScenario {
    /// An error about `key`: where the file states it, or, when the last override that wrote a
    /// key of that name came from a case's `set:`, `--set` or a sweep point, that override (the
    /// file's line would point at a value that was not the one refused).
    pub fn error_at(&self, key: &str, message: String) -> ScenarioError {
        let by_override = self.overrides.iter().rev().find(|ov| {
            ov.path.last().map(String::as_str) == Some(key) || ov.setting.as_deref() == Some(key)
        });
        match by_override {
            Some(ov) => override_error(
                &self.path,
                ov,
                format!("{message} (set by {})", ov.layer.describe()),
            ),
            None => ScenarioError::at_key(&self.path, &self.text, key, message),
        }
    }

    /// The directory relative paths in the scenario are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        self.path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// The same scenario with more overrides, each at its own layer: a case's `set:` lands
    /// below `--set`, a sweep point above it, whatever the order of the calls.
    pub fn with_overrides(&self, more: &[Override]) -> Result<LoadedScenario, ScenarioError> {
        let mut all = self.overrides.clone();
        all.extend(more.iter().cloned());
        build(
            &self.path,
            &self.text,
            self.base_tree.clone(),
            all,
            self.vary_order.clone(),
        )
    }

    /// The same scenario with its arms replaced (`sim run --ablation`): overrides apply to
    /// the new arms as they would have to the old.
    pub fn with_arms(&self, arms: Value) -> Result<LoadedScenario, ScenarioError> {
        let mut base = self.base_tree.clone();
        if let Value::Object(map) = &mut base {
            map.insert("arms".into(), arms);
        }
        build(
            &self.path,
            &self.text,
            base,
            self.overrides.clone(),
            self.vary_order.clone(),
        )
    }
}

/// Loads and parses a scenario, then applies `overrides` (from `--set`) in order.
pub fn load(path: &Path, overrides: &[Override]) -> Result<LoadedScenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ScenarioError::new(path, format!("cannot read the scenario file: {e} (is the path right? scenarios ship in scenarios/)"))
    })?;
    parse(path, &text, overrides)
}

/// Parses scenario text (`path` is used for messages and relative paths).
pub fn parse(
    path: &Path,
    text: &str,
    overrides: &[Override],
) -> Result<LoadedScenario, ScenarioError> {
    // The typed parse first: its errors carry the line and column.
    let typed: ScenarioFile =
        serde_saphyr::from_str(text).map_err(|e| saphyr_error(path, text, &e))?;
    let tree: Value = serde_saphyr::from_str(text).map_err(|e| saphyr_error(path, text, &e))?;
    let vary_order = typed
        .sweep
        .map(|s| s.vary.0.into_iter().map(|(k, _)| k).collect())
        .unwrap_or_default();
    build(path, text, tree, overrides.to_vec(), vary_order)
}

fn build(
    path: &Path,
    text: &str,
    base_tree: Value,
    mut overrides: Vec<Override>,
    vary_order: Vec<String>,
) -> Result<LoadedScenario, ScenarioError> {
    // Stable: within a layer, the order given.
    overrides.sort_by_key(|o| o.layer);
    let mut tree = base_tree.clone();
    let mut notes = Vec::new();
    let mut file = apply_overrides(path, &mut tree, &overrides, &mut notes)?;
    check_unique_case_names(path, text, &file)?;
    note_shared_settings_not_honoured(&file, &mut notes);
    if let Some(sweep) = &mut file.sweep {
        // Stable: an axis an override added (not in the file) keeps its place after them.
        sweep
            .vary
            .0
            .sort_by_key(|(k, _)| vary_order.iter().position(|o| o == k).unwrap_or(usize::MAX));
    }
    Ok(LoadedScenario {
        path: path.to_path_buf(),
        text: text.to_string(),
        base_tree,
        tree,
        file,
        overrides,
        notes,
        vary_order,
    })
}

/// A shared `settings:` entry reaches only the arms whose preset honours it (as `--set NAME=..`
/// does): the others are named in a note, as `--set` names them. (None honouring it is an
/// error, in `resolve`.)
fn note_shared_settings_not_honoured(file: &ScenarioFile, notes: &mut Vec<String>) {
    for k in file.settings.keys() {
        let not_honoured: Vec<String> = file
            .arms
            .iter()
            .filter(|a| planner::Strategy::preset(&a.strategy).is_ok_and(|s| !s.honours(k)))
            .map(|a| format!("{} ({})", a.name, a.strategy))
            .collect();
        if !not_honoured.is_empty() && not_honoured.len() < file.arms.len() {
            notes.push(format!(
                "the shared setting `{k}` applies to {} of {} arms; not to {}, which do not honour `{k}`",
                file.arms.len() - not_honoured.len(),
                file.arms.len(),
                not_honoured.join(", ")
            ));
        }
    }
}

/// Two cases of one name would print two reports under one label, and `--case NAME` would run
/// both: refused where the second one is.
fn check_unique_case_names(
    path: &Path,
    text: &str,
    file: &ScenarioFile,
) -> Result<(), ScenarioError> {
    let mut seen = std::collections::BTreeSet::new();
    for case in &file.cases {
        if !seen.insert(case.name.as_str()) {
            return Err(ScenarioError {
                file: path.to_path_buf(),
                line: find_item_line(text, "cases", "name", &case.name, 2),
                column: None,
                key: Some("name".into()),
                message: format!(
                    "two cases are called `{}`; case names must differ",
                    case.name
                ),
            });
        }
    }
    Ok(())
}

pub(crate) fn override_error(path: &Path, ov: &Override, message: String) -> ScenarioError {
    ScenarioError {
        file: path.to_path_buf(),
        line: None,
        column: None,
        key: Some(ov.text.clone()),
        message,
    }
}

/// `(arm name, strategy preset)` of every arm in the tree.
fn arms_of(tree: &Value) -> Vec<(String, String)> {
    tree.get("arms")
        .and_then(Value::as_array)
        .map(|arms| {
            arms.iter()
                .map(|a| {
                    let s = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                    (s("name"), s("strategy"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The dotted paths a bare setting expands to: that setting of every arm that honours it.
fn expand_setting(
    path: &Path,
    tree: &Value,
    ov: &Override,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Vec<String>>, ScenarioError> {
    let arms = arms_of(tree);
    let mut paths = Vec::new();
    let mut not_honoured = Vec::new();
    for (i, (arm, preset)) in arms.iter().enumerate() {
        // An unknown preset is reported, with its line, when the scenario resolves.
        let Ok(strategy) = planner::Strategy::preset(preset) else {
            continue;
        };
        if strategy.honours(name) {
            paths.push(vec![
                "arms".into(),
                i.to_string(),
                "settings".into(),
                name.into(),
            ]);
        } else {
            not_honoured.push(format!("{arm} ({preset})"));
        }
    }
    if paths.is_empty() && !arms.is_empty() {
        let why = match planner::settings::setting(name) {
            Some(_) => "no arm honours it".to_string(),
            None => {
                let known = planner::settings::SETTINGS.iter().map(|s| s.name);
                match nearest(name, known) {
                    Some(best) => format!("no such setting (did you mean `{best}`?)"),
                    None => "no such setting; `sim settings PRESET` lists every setting a preset honours"
                        .to_string(),
                }
            }
        };
        return Err(override_error(
            path,
            ov,
            format!(
                "`{name}` applies to no arm: {why} (arms: {})",
                arms.iter()
                    .map(|(a, p)| format!("{a} ({p})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if !not_honoured.is_empty() {
        notes.push(format!(
            "`{}` applies to {} of {} arms; not to {}, which do not honour `{name}`",
            ov.text,
            paths.len(),
            arms.len(),
            not_honoured.join(", ")
        ));
    }
    Ok(paths)
}

fn apply_overrides(
    path: &Path,
    tree: &mut Value,
    overrides: &[Override],
    notes: &mut Vec<String>,
) -> Result<ScenarioFile, ScenarioError> {
    // Who wrote each path last, to say when a higher layer shadows a lower one.
    let mut written: std::collections::BTreeMap<String, (overrides::Layer, String)> =
        Default::default();
    for ov in overrides {
        // `store: s3-standard` becomes `store: {preset: s3-standard}` so that `store.x=..` can
        // refine a preset.
        if ov.path.first().map(String::as_str) == Some("store") && ov.path.len() > 1 {
            if let Some(Value::String(name)) = tree.get("store") {
                let name = name.clone();
                tree["store"] = serde_json::json!({ "preset": name });
            }
        }
        // `settings.K` above the file is the bare `K`: it reaches every arm that honours it,
        // over the arm's own value (written to the shared map, an arm's own would beat it).
        let setting = ov.setting.as_deref().or(match ov.path.as_slice() {
            [settings, name] if settings == "settings" => Some(name.as_str()),
            _ => None,
        });
        let targets = match setting {
            Some(name) => expand_setting(path, tree, ov, name, notes)?,
            None => vec![ov.path.clone()],
        };
        for target in targets {
            let key = target.join(".");
            if let Some(existing) = overrides::get(tree, &target) {
                if setting.is_some() && target.first().map(String::as_str) == Some("arms") {
                    if let Some((layer, text)) = written.get(&key) {
                        if *layer < ov.layer {
                            notes.push(format!(
                                "`{text}` ({}) is shadowed by `{}` ({})",
                                layer.describe(),
                                ov.text,
                                ov.layer.describe()
                            ));
                        }
                    } else if existing != &ov.value {
                        let arm = arms_of(tree)
                            .get(
                                target
                                    .get(1)
                                    .and_then(|i| i.parse::<usize>().ok())
                                    .unwrap_or(0),
                            )
                            .map(|a| a.0.clone())
                            .unwrap_or_default();
                        notes.push(format!(
                            "`{}` ({}) overrides arm {arm}'s own {} = {}",
                            ov.text,
                            ov.layer.describe(),
                            target.last().map(String::as_str).unwrap_or(""),
                            scalar_text(existing)
                        ));
                    }
                } else if let Some((layer, text)) = written.get(&key) {
                    if *layer < ov.layer {
                        notes.push(format!(
                            "`{text}` ({}) is shadowed by `{}` ({})",
                            layer.describe(),
                            ov.text,
                            ov.layer.describe()
                        ));
                    }
                }
            }
            overrides::apply_at(tree, &target, ov)
                .map_err(|e| override_error(path, ov, e.to_string()))?;
            written.insert(key, (ov.layer, ov.text.clone()));
        }
    }
    let de = tree.clone();
    serde_path_to_error::deserialize::<_, ScenarioFile>(de).map_err(|e| {
        let at = e.path().to_string();
        let msg = with_suggestion(&e.inner().to_string());
        let keys: Vec<&str> = overrides.iter().map(|o| o.text.as_str()).collect();
        ScenarioError {
            file: path.to_path_buf(),
            line: None,
            column: None,
            key: Some(at),
            message: if keys.is_empty() {
                msg
            } else {
                format!("{msg} (after applying {})", keys.join(", "))
            },
        }
    })
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn saphyr_error(path: &Path, text: &str, e: &serde_saphyr::Error) -> ScenarioError {
    // serde-saphyr renders `line L column C: message` followed by a snippet; keep the first line
    // for the message and the location for the fields.
    let full = e.to_string();
    let first = full
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string();
    let (line, column, message) = split_location(&first);
    // A type error names neither the key nor what would be right (`invalid u64`): both come
    // from the line it points at.
    let at = line.and_then(|l| key_and_value_on_line(text, l));
    let key = unknown_name(&message).or_else(|| at.as_ref().map(|(k, _)| k.clone()));
    let message = match (&at, plain_type_error(&message)) {
        (Some((_, value)), Some(expected)) => format!("`{value}` is not {expected}"),
        _ => with_suggestion(&message),
    };
    ScenarioError {
        file: path.to_path_buf(),
        line,
        column,
        key,
        message,
    }
}

/// `(key, value)` written on line `line` (1-based) as `key: value` (or `- key: value`).
fn key_and_value_on_line(text: &str, line: usize) -> Option<(String, String)> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let t = l.trim().trim_start_matches("- ");
    let (k, v) = t.split_once(':')?;
    let k = k.trim();
    let v = v.split(" #").next().unwrap_or("").trim();
    if k.is_empty() || k.contains(' ') || v.is_empty() {
        return None;
    }
    Some((k.to_string(), v.to_string()))
}

/// What serde's bare type errors expect, in words, with the type's range (the value may be
/// fractional, negative or too large for it): `invalid u32` is "a whole number from 0 to
/// 4294967295", an unmatched column reference is "a column". `None` for any other message.
fn plain_type_error(msg: &str) -> Option<&'static str> {
    Some(match msg.trim() {
        "invalid u8" => "a whole number from 0 to 255",
        "invalid u16" => "a whole number from 0 to 65535",
        "invalid u32" => "a whole number from 0 to 4294967295",
        "invalid u64" | "invalid usize" => "a whole number from 0 to 18446744073709551615",
        "invalid i32" => "a whole number from -2147483648 to 2147483647",
        "invalid i64" => "a whole number from -9223372036854775808 to 9223372036854775807",
        m => return plain_column_error(m),
    })
}

/// An unmatched column reference, in words.
fn plain_column_error(m: &str) -> Option<&'static str> {
    if m.contains("untagged enum ColumnRef") {
        return Some("a list of columns, each its 0-based index or its name (e.g. `[0, 3]` or `[l_shipdate]`)");
    }
    None
}

fn split_location(s: &str) -> (Option<usize>, Option<usize>, String) {
    // "line 10 column 5: unknown field ..."
    if let Some(rest) = s.strip_prefix("line ") {
        let mut it = rest.splitn(2, ": ");
        let loc = it.next().unwrap_or("");
        let msg = it.next().unwrap_or("").to_string();
        let mut parts = loc.split(" column ");
        let line = parts.next().and_then(|l| l.trim().parse().ok());
        let col = parts.next().and_then(|c| c.trim().parse().ok());
        if line.is_some() {
            return (line, col, msg);
        }
    }
    (None, None, s.to_string())
}

/// The unknown name in a serde "unknown field/variant" message.
fn unknown_name(msg: &str) -> Option<String> {
    let rest = msg
        .split_once("unknown field `")
        .or_else(|| msg.split_once("unknown variant `"))?
        .1;
    Some(rest.split('`').next()?.to_string())
}

/// Adds "did you mean `x`?" to serde's "unknown field `y`, expected one of ..." messages.
pub fn with_suggestion(msg: &str) -> String {
    let Some(unknown) = unknown_name(msg) else {
        return msg.to_string();
    };
    let Some((_, list)) = msg
        .split_once("expected one of ")
        .or_else(|| msg.split_once("expected "))
    else {
        return msg.to_string();
    };
    let candidates: Vec<String> = list
        .split(',')
        .map(|s| s.trim().trim_matches('`').trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    match nearest(&unknown, candidates.iter().map(String::as_str)) {
        Some(best) => format!("{msg} (did you mean `{best}`?)"),
        None => msg.to_string(),
    }
}

/// The candidate closest to `name`, if any is close enough to be a plausible typo.
pub fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score > 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The 1-based line where `key:` first appears as a YAML key, for errors found after parsing.
pub fn find_key_line(text: &str, key: &str) -> Option<usize> {
    let last = key.rsplit('.').next().unwrap_or(key);
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with(&format!("{last}:")) || t.starts_with(&format!("\"{last}\":"))
        })
        .map(|i| i + 1)
}

/// The line (1-based) of the `nth` (1-based) item of the top-level list `section` whose `key`
/// is `value` (`- name: base`, `name: "base"`): where a duplicate name is, for its message.
pub fn find_item_line(
    text: &str,
    section: &str,
    key: &str,
    value: &str,
    nth: usize,
) -> Option<usize> {
    let header = format!("{section}:");
    let start = text.lines().position(|l| l.trim_end() == header)?;
    let wanted = [
        format!("{key}: {value}"),
        format!("{key}: \"{value}\""),
        format!("{key}: '{value}'"),
    ];
    text.lines()
        .enumerate()
        .skip(start + 1)
        // The section ends at the next top-level key.
        .take_while(|(_, l)| {
            l.is_empty() || l.starts_with(' ') || l.starts_with('-') || l.starts_with('#')
        })
        .filter(|(_, l)| {
            let t = l.trim().trim_start_matches("- ").trim_start();
            wanted.iter().any(|w| t == w.as_str())
        })
        .nth(nth.checked_sub(1)?)
        .map(|(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_errors_name_the_key_and_what_is_expected() {
        let text = "name: x\nreplications: 2.5\nquery:\n  columns: [0, -2]  # two\n";
        assert_eq!(
            key_and_value_on_line(text, 2),
            Some(("replications".into(), "2.5".into()))
        );
        assert_eq!(
            key_and_value_on_line(text, 4),
            Some(("columns".into(), "[0, -2]".into()))
        );
        assert_eq!(key_and_value_on_line(text, 3), None);
        assert_eq!(
            plain_type_error("invalid u32"),
            Some("a whole number from 0 to 4294967295")
        );
        assert!(
            plain_type_error("data did not match any variant of untagged enum ColumnRef")
                .is_some_and(|m| m.contains("0-based index"))
        );
        assert_eq!(plain_type_error("unknown field `x`"), None);
    }

    #[test]
    fn item_lines() {
        let text = "name: base\narms:\n  - name: base\n    strategy: a\n  - name: \"base\"\ncases:\n  - name: x\n";
        assert_eq!(find_item_line(text, "arms", "name", "base", 1), Some(3));
        assert_eq!(find_item_line(text, "arms", "name", "base", 2), Some(5));
        assert_eq!(find_item_line(text, "arms", "name", "base", 3), None);
        assert_eq!(find_item_line(text, "cases", "name", "x", 1), Some(7));
        assert_eq!(find_item_line(text, "arms", "name", "x", 1), None);
    }

    #[test]
    fn suggestion_for_misspelled_key() {
        let m =
            with_suggestion("unknown field `stratgy`, expected one of name, strategy, settings");
        assert!(m.ends_with("(did you mean `strategy`?)"), "{m}");
        let m = with_suggestion("unknown field `zzz`, expected one of `name`, `strategy`");
        assert!(!m.contains("did you mean"), "{m}");
    }

    #[test]
    fn location_is_split_out() {
        let (l, c, m) = split_location("line 10 column 5: unknown field `x`");
        assert_eq!((l, c, m.as_str()), (Some(10), Some(5), "unknown field `x`"));
    }

    #[test]
    fn key_lines() {
        let text = "name: a\narms:\n  - name: b\n    strategy: c\n";
        assert_eq!(find_key_line(text, "strategy"), Some(4));
        assert_eq!(find_key_line(text, "arms.0.strategy"), Some(4));
        assert_eq!(find_key_line(text, "nope"), None);
    }
}
