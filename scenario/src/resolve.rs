//! From a parsed scenario to what a run needs: the table, the queries as the planner takes
//! them, the store model, the cache and CPU models, and each arm's strategy.

use super::file::{ColumnRef, QueryConfig, ScenarioFile, Warmth};
use super::load::{find_item_line, nearest, override_error, LoadedScenario, ScenarioError};
use super::overrides::Override;
use layout::{FileIndex, Table};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use units::Bytes;

/// The most replications a scenario may ask for (each is a whole run of every arm).
pub use limits::MAX_REPLICATIONS;

/// A query ready for the planner.
#[derive(Debug, Clone)]
pub struct ResolvedQuery {
    pub name: String,
    pub spec: planner::QuerySpec,
}

#[derive(Debug, Clone)]
pub struct ResolvedArm {
    pub name: String,
    pub strategy_name: String,
    pub strategy: planner::Strategy,
}

impl ResolvedArm {
    /// `name = value` of every setting whose effective value differs from the preset's default
    /// and that does something on this arm, in listing order: what it ran with beyond its
    /// preset.
    pub fn changed_settings(&self) -> Vec<String> {
        self.changed()
            .filter(|(s, _)| s.applies_to(&self.strategy))
            .map(|(s, v)| format!("{} = {}", s.name, v.text()))
            .collect()
    }

    /// Settings changed from the preset's default that do nothing on this arm (their
    /// mechanism is off), with why: for a note, since a setting that did not apply must not
    /// look as if it had.
    pub fn inert_settings(&self) -> Vec<String> {
        self.changed()
            .filter_map(|(s, v)| {
                s.inert_because(&self.strategy).map(|why| {
                    format!(
                        "arm {}: {} = {} does nothing ({why})",
                        self.name,
                        s.name,
                        v.text()
                    )
                })
            })
            .collect()
    }

    fn changed(
        &self,
    ) -> impl Iterator<
        Item = (
            &'static planner::settings::Setting,
            planner::settings::Value,
        ),
    > + '_ {
        let preset = planner::Strategy::preset(&self.strategy_name).ok();
        self.strategy
            .settings()
            .into_iter()
            .filter(move |(s, v)| preset.as_ref().is_some_and(|p| s.get(p) != *v))
    }
}

/// Everything one case of a scenario needs to run.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub name: String,
    pub seed: u64,
    pub replications: u32,
    pub table: Arc<Table>,
    /// Plans of `table`'s files, shared by every reader of it (`planner::PlanCache`).
    pub plans: Arc<planner::PlanCache>,
    pub queries: Vec<ResolvedQuery>,
    pub store: models::store::StoreSpec,
    pub page_cache: Option<models::page_cache::PageCacheSpec>,
    pub fs_cache: Option<models::fs_cache::FsCacheSpec>,
    pub cpu: models::cpu::CpuSpec,
    pub arms: Vec<ResolvedArm>,
    /// What the resolution found the user should know: pruning clauses the queried files
    /// cannot use (see [`inert_pruning`]).
    pub notes: Vec<String>,
}

/// Past this many column chunks in the files a run's queries touch (files x row groups x
/// columns, at most), a generated table keeps an outline of each and makes a file again when a
/// reader opens it (`tablegen::generate_outlines`): memory no longer grows with the table's
/// width, at the cost of making a file once more for each reader that plans it while the plan
/// cache cannot hold its plan, and once for each reader's check of the query. 16 M chunks is
/// about 1.3 GB kept whole; `many-small-files` at 10x its queried files (10.9 M) stays whole,
/// at 100x (109 M) keeps outlines. The runs are the same either way
/// (`sim/tests/outlined_tables.rs`).
pub const KEEP_WHOLE_UP_TO_CHUNKS: u64 = 16 << 20;

/// The tables a [`TableCache`] keeps, counted in column chunks held (a file counts one more for
/// its path, an outlined row group one): past it the least recently used tables are let go (a
/// point that needs one again builds it again, the same table). About 2.7 GB at 80 bytes a
/// chunk. Until 2026-12-07 a sweep kept every point's table (8 points of 400,000 generated files
/// held 815 MB; a sweep over the table's size grew without bound).
pub const CACHED_TABLES_UP_TO_CHUNKS: u64 = 32 << 20;

/// Tables already built in this process, keyed by their source, so that cases and sweep points
/// that share a table build it once; at most [`CACHED_TABLES_UP_TO_CHUNKS`] of them are kept.
pub struct TableCache {
    tables: Mutex<TableLru>,
    /// Recorded layout files opened (body and skeleton), by path.
    layouts: Mutex<BTreeMap<String, Arc<RecordedLayout>>>,
    /// One plan cache per table, by the table's key.
    plans: Mutex<BTreeMap<String, Arc<planner::PlanCache>>>,
    /// See [`KEEP_WHOLE_UP_TO_CHUNKS`].
    keep_whole_up_to_chunks: u64,
}

/// The kept tables with the chunks each holds and when it was last asked for.
#[derive(Default)]
struct TableLru {
    by_key: BTreeMap<String, CachedTable>,
    held_chunks: u64,
    budget_chunks: u64,
    tick: u64,
}

struct CachedTable {
    table: Arc<Table>,
    chunks: u64,
    last_use: u64,
}

impl TableLru {
    fn get(&mut self, key: &str) -> Option<Arc<Table>> {
        self.tick += 1;
        let tick = self.tick;
        self.by_key.get_mut(key).map(|c| {
            c.last_use = tick;
            c.table.clone()
        })
    }

    /// Keeps `table` under `key` (another thread's, if it got there first) and lets the least
    /// recently used others go while the kept chunks are over the budget; returns the table
    /// and the keys let go.
    fn insert(&mut self, key: String, table: Arc<Table>) -> (Arc<Table>, Vec<String>) {
        if let Some(kept) = self.get(&key) {
            return (kept, Vec::new());
        }
        let chunks = held_chunks(&table);
        self.held_chunks = self.held_chunks.saturating_add(chunks);
        self.by_key.insert(
            key.clone(),
            CachedTable {
                table: table.clone(),
                chunks,
                last_use: self.tick,
            },
        );
        let mut evicted = Vec::new();
        while self.held_chunks > self.budget_chunks {
            let oldest = self
                .by_key
                .iter()
                .filter(|(k, _)| **k != key)
                .min_by_key(|(_, c)| c.last_use)
                .map(|(k, _)| k.clone());
            let Some(oldest) = oldest else { break };
            if let Some(c) = self.by_key.remove(&oldest) {
                self.held_chunks -= c.chunks;
            }
            evicted.push(oldest);
        }
        debug_assert_eq!(
            self.held_chunks,
            self.by_key.values().map(|c| c.chunks).sum::<u64>()
        );
        (table, evicted)
    }
}

/// What a table holds, in column chunks: each row group's chunks (one for an outline's) and one
/// for each file's path.
fn held_chunks(table: &Table) -> u64 {
    table
        .files
        .iter()
        .map(|f| {
            1 + f
                .row_groups
                .iter()
                .map(|rg| (rg.columns.len() as u64).max(1))
                .sum::<u64>()
        })
        .sum()
}

impl Default for TableCache {
    fn default() -> Self {
        Self::keeping_whole_up_to(KEEP_WHOLE_UP_TO_CHUNKS)
    }
}

impl TableCache {
    /// A cache whose generated tables keep outlines past `chunks` column chunks
    /// ([`KEEP_WHOLE_UP_TO_CHUNKS`] by default; tests lower it to compare both).
    pub fn keeping_whole_up_to(chunks: u64) -> Self {
        Self::with_budget(chunks, CACHED_TABLES_UP_TO_CHUNKS)
    }

    /// A cache that keeps tables up to `budget_chunks` ([`CACHED_TABLES_UP_TO_CHUNKS`] by
    /// default; tests lower it).
    fn with_budget(keep_whole_up_to_chunks: u64, budget_chunks: u64) -> Self {
        TableCache {
            tables: Mutex::new(TableLru {
                budget_chunks,
                ..TableLru::default()
            }),
            layouts: Mutex::default(),
            plans: Mutex::default(),
            keep_whole_up_to_chunks,
        }
    }

    fn get_or_build(
        &self,
        key: String,
        build: impl FnOnce() -> Result<Table, ScenarioError>,
    ) -> Result<Arc<Table>, ScenarioError> {
        if let Some(t) = self.tables.lock().map_err(|_| poisoned())?.get(&key) {
            return Ok(t);
        }
        // Built outside the lock: points building other tables go on meanwhile.
        let built = Arc::new(build()?);
        let (table, evicted) = self
            .tables
            .lock()
            .map_err(|_| poisoned())?
            .insert(key, built);
        if !evicted.is_empty() {
            // A table let go takes its plans along.
            let mut plans = self.plans.lock().map_err(|_| poisoned())?;
            for key in &evicted {
                plans.remove(key);
            }
        }
        Ok(table)
    }

    fn get_or_open(
        &self,
        key: String,
        open: impl FnOnce() -> Result<RecordedLayout, ScenarioError>,
    ) -> Result<Arc<RecordedLayout>, ScenarioError> {
        cached(&self.layouts, key, open)
    }

    /// The plan cache of the table built under `key`.
    fn plans(&self, key: &str) -> Result<Arc<planner::PlanCache>, ScenarioError> {
        let mut plans = self.plans.lock().map_err(|_| poisoned())?;
        Ok(plans.entry(key.to_owned()).or_default().clone())
    }
}

/// The value under `key` in `map`, built (outside the lock) if it is not there yet.
fn cached<T>(
    map: &Mutex<BTreeMap<String, Arc<T>>>,
    key: String,
    build: impl FnOnce() -> Result<T, ScenarioError>,
) -> Result<Arc<T>, ScenarioError> {
    if let Some(v) = map.lock().map_err(|_| poisoned())?.get(&key) {
        return Ok(v.clone());
    }
    let built = Arc::new(build()?);
    map.lock()
        .map_err(|_| poisoned())?
        .insert(key, built.clone());
    Ok(built)
}

fn poisoned() -> ScenarioError {
    ScenarioError::new(
        Path::new("<table cache>"),
        "a worker thread panicked while building a table",
    )
}

/// A recorded layout file opened once per run: its body and skeleton (every file's path).
struct RecordedLayout {
    body: layout::format::LayoutBody,
    skeleton: layout::format::Skeleton,
}

/// The files the queries touch, and a key naming that set (FNV-1a over the indexes).
fn wanted_files(queries: &[ResolvedQuery]) -> (std::collections::BTreeSet<FileIndex>, String) {
    let wanted: std::collections::BTreeSet<FileIndex> = queries
        .iter()
        .flat_map(|q| q.spec.files.iter().copied())
        .collect();
    let hash = wanted.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, f| {
        (h ^ u64::from(*f)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let key = format!("files:{}:{hash:016x}", wanted.len());
    (wanted, key)
}

/// The table, its cache key and the queries. Both kinds of table are built in two steps: a
/// skeleton (schema and file paths, no file laid out) tells which files the queries touch;
/// then only those are laid out: a generated table generates them, each from its own random
/// stream, so the result is the same as for the whole table (tablegen::generate_files); a
/// recorded one decodes them from the layout file ([`layout::format::LayoutBody`]).
fn resolve_table(
    loaded: &LoadedScenario,
    tables: &TableCache,
) -> Result<(Arc<Table>, String, Vec<ResolvedQuery>), ScenarioError> {
    let f: &ScenarioFile = &loaded.file;
    let err = |key: &str, msg: String| loaded.error_at(key, msg);
    match (&f.table.generate, &f.table.layout) {
        (Some(spec), None) => {
            let key = format!("generate:{}:{}", f.seed, serde_json::to_string(&loaded.tree["table"]).unwrap_or_default());
            let skeleton = tables.get_or_build(format!("{key}:skeleton"), || {
                tablegen::generate_files(spec, f.seed, |_| false)
                    .map_err(|e| err("generate", format!("cannot generate the table: {e}")))
            })?;
            let queries = resolve_queries(f, &skeleton, true).map_err(|(key, msg)| err(&key, msg))?;
            let (wanted, files_key) = wanted_files(&queries);
            let files_key = format!("{key}:{files_key}");
            let table = tables.get_or_build(files_key.clone(), || {
                let t = tablegen::generate_kept(
                    spec,
                    f.seed,
                    |i| u32::try_from(i).is_ok_and(|i| wanted.contains(&i)),
                    tables.keep_whole_up_to_chunks,
                )
                .map_err(|e| err("generate", format!("cannot generate the table: {e}")))?;
                // Checked once, where the table is built (cases and sweep points share it):
                // the generator checks each file whole as it makes it, kept or outlined, and
                // the table's counts before it makes any.
                Ok(t)
            })?;
            Ok((table, files_key, queries))
        }
        (None, Some(rel)) => {
            let full = if rel.is_absolute() { rel.clone() } else { loaded.base_dir().join(rel) };
            let key = format!("layout:{}", full.display());
            let recorded = tables.get_or_open(key.clone(), || {
                let bad = |e: layout::format::FormatError| err("layout", format!("{}: {e}", full.display()));
                let bytes = crate::layout_file::read(&full).map_err(|e| match e {
                    crate::layout_file::ReadLayoutError::NotALayout(e) => bad(e),
                    crate::layout_file::ReadLayoutError::Io(e) => err("layout", format!("cannot read the layout file {}: {e} (record one with `sim record parquet PATH`)", full.display())),
                })?;
                let body = layout::format::LayoutBody::open(&bytes).map_err(bad)?;
                let skeleton = body.skeleton().map_err(bad)?;
                Ok(RecordedLayout { body, skeleton })
            })?;
            // The files by path; a predicate prunes them once their statistics are read.
            let touched = resolve_queries(f, &recorded.skeleton.table, false).map_err(|(key, msg)| err(&key, msg))?;
            let (wanted, files_key) = wanted_files(&touched);
            let files_key = format!("{key}:{files_key}");
            let table = tables.get_or_build(files_key.clone(), || {
                let t = recorded
                    .body
                    .table_keeping(&recorded.skeleton, |i| u32::try_from(i).is_ok_and(|i| wanted.contains(&i)))
                    .map_err(|e| err("layout", format!("{}: {e}", full.display())))?;
                // Once, where the table is loaded: cases and sweep points share it.
                t.validate().map_err(|e| err("table", format!("{}: the layout is inconsistent: {e}", full.display())))?;
                Ok(t)
            })?;
            let queries = resolve_queries(f, &table, true).map_err(|(key, msg)| err(&key, msg))?;
            Ok((table, files_key, queries))
        }
        _ => Err(err("table", "give exactly one of `generate:` (a synthetic layout) or `layout:` (a recorded layout file)".into())),
    }
}

pub fn resolve(loaded: &LoadedScenario, tables: &TableCache) -> Result<Resolved, ScenarioError> {
    let f: &ScenarioFile = &loaded.file;
    let path = loaded.path.as_path();
    let text = loaded.text.as_str();
    let err = |key: &str, msg: String| loaded.error_at(key, msg);

    let (table, table_key, queries) = resolve_table(loaded, tables)?;
    // Checked here, with the scenario's line, as well as by each reader the runs build (a
    // query past the subgroup bound passed `sim validate` and failed every run).
    for q in &queries {
        q.spec.validate(&table).map_err(|e| {
            let key = if f.queries.is_empty() {
                "query"
            } else {
                "queries"
            };
            err(key, format!("query {}: {e}", q.name))
        })?;
    }
    let plans = tables.plans(&table_key)?;

    // Store.
    let store = resolve_store(&f.store).map_err(|m| err("store", m))?;

    // Arms.
    if f.arms.is_empty() {
        return Err(err(
            "arms",
            "the scenario has no arms: add at least one `- name: ..., strategy: ...`".into(),
        ));
    }
    let mut arms = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for arm in &f.arms {
        if !seen.insert(arm.name.clone()) {
            let mut e = err(
                "name",
                format!("two arms are called `{}`; arm names must differ", arm.name),
            );
            e.line = find_item_line(text, "arms", "name", &arm.name, 2);
            return Err(e);
        }
        let mut strategy =
            planner::Strategy::preset(&arm.strategy).map_err(|e| err("strategy", e.to_string()))?;
        // The scenario's shared settings reach every arm that honours them; an arm's own
        // settings must all be honoured by its preset. A refused value is reported where it
        // came from: an override, else the file.
        let setting_err = |k: &str, e: planner::StrategyError| {
            let msg = format!("arm {}: {e}", arm.name);
            match override_of_setting(loaded, &arm.name, arms.len(), k) {
                Some(ov) => override_error(path, ov, msg),
                None => err(k, msg),
            }
        };
        for (k, v) in &f.settings {
            if strategy.honours(k) {
                strategy.set(k, &v.0).map_err(|e| setting_err(k, e))?;
            }
        }
        for (k, v) in &arm.settings {
            strategy.set(k, &v.0).map_err(|e| setting_err(k, e))?;
        }
        arms.push(ResolvedArm {
            name: arm.name.clone(),
            strategy_name: arm.strategy.clone(),
            strategy,
        });
    }
    for k in f.settings.keys() {
        if !arms.iter().any(|a| a.strategy.honours(k)) {
            // Say why with the first arm's own refusal (unknown name, or not honoured).
            let why = arms
                .first()
                .and_then(|a| a.strategy.honoured_setting(k).err())
                .map(|e| e.to_string())
                .unwrap_or_default();
            return Err(err(
                k,
                format!("the shared setting `{k}` applies to no arm: {why}"),
            ));
        }
    }

    if f.replications == 0 || f.replications > MAX_REPLICATIONS {
        return Err(err(
            "replications",
            format!(
                "{} replications; give between 1 and {MAX_REPLICATIONS}",
                f.replications
            ),
        ));
    }
    let cpu = f.cpu.clone().unwrap_or_default();
    cpu.validate().map_err(|e| err("cpu", e.to_string()))?;
    if let Some(pc) = &f.caches.page_cache {
        pc.validate()
            .map_err(|e| err("page_cache", e.to_string()))?;
        check_warm_units(
            &table,
            pc.warm.fraction,
            pc.page_cache_block_size,
            "page_cache_block_size",
        )
        .map_err(|m| err("page_cache", m))?;
    }
    if let Some(fc) = &f.caches.filesystem_cache {
        fc.validate()
            .map_err(|e| err("filesystem_cache", e.to_string()))?;
        check_warm_units(
            &table,
            fc.warm.fraction,
            fc.boundary_alignment,
            "boundary_alignment",
        )
        .map_err(|m| err("filesystem_cache", m))?;
    }
    let notes = queries
        .iter()
        .flat_map(|q| inert_pruning(q, &table))
        .collect();
    Ok(Resolved {
        name: f.name.clone(),
        seed: f.seed,
        replications: f.replications,
        plans,
        table,
        queries,
        store,
        page_cache: f.caches.page_cache.clone(),
        fs_cache: f.caches.filesystem_cache.clone(),
        cpu,
        notes,
        arms,
    })
}

/// A query's `column_index:` or `bloom:` columns for which no queried file holds a column index
/// or bloom filter: the clause prunes nothing, where a user would expect it to. Files kept as
/// outlines are not opened for this (nothing is said of them).
pub fn inert_pruning(q: &ResolvedQuery, table: &Table) -> Vec<String> {
    let laid_out = || {
        q.spec
            .files
            .iter()
            .filter_map(|&f| table.files.get(f as usize))
            .filter(|f| !f.is_placeholder() && !f.row_groups.is_empty())
    };
    if laid_out().next().is_none() {
        return Vec::new();
    }
    let has = |c: u32, part: fn(&layout::ColumnChunk) -> bool| {
        laid_out().any(|f| {
            f.row_groups
                .iter()
                .any(|rg| rg.columns.get(c as usize).is_some_and(part))
        })
    };
    let schema = table
        .columns()
        .map(|s| s.columns.clone())
        .unwrap_or_default();
    let name = |c: u32| {
        schema
            .get(c as usize)
            .cloned()
            .unwrap_or_else(|| c.to_string())
    };
    let mut notes = Vec::new();
    for (clause, columns, part, what) in [
        (
            "column_index",
            &q.spec.column_index_columns,
            (|c: &layout::ColumnChunk| c.column_index().is_some())
                as fn(&layout::ColumnChunk) -> bool,
            "a column index",
        ),
        (
            "bloom",
            &q.spec.bloom_columns,
            |c: &layout::ColumnChunk| c.bloom_filter().is_some(),
            "a bloom filter",
        ),
    ] {
        let missing: Vec<String> = columns
            .iter()
            .filter(|&&c| !has(c, part))
            .map(|&c| name(c))
            .collect();
        if !missing.is_empty() {
            notes.push(format!(
                "query {}: `{clause}:` lists {}, for which no queried file has {what}: the clause prunes nothing",
                q.name,
                missing.join(", ")
            ));
        }
    }
    notes
}

/// A warm cache walks every `unit` of the table's laid-out files (the ones the queries touch)
/// and keeps each warm one: their count is held to `limits::MAX_WARM_CACHE_UNITS`.
/// The last override (the one that won) that set setting `k` of arm `name` (at position `index`):
/// a bare setting name, the shared `settings.k`, or `arms.<name or index>.settings.k`.
fn override_of_setting<'a>(
    loaded: &'a LoadedScenario,
    name: &str,
    index: usize,
    k: &str,
) -> Option<&'a Override> {
    let index = index.to_string();
    loaded.overrides.iter().rev().find(|ov| {
        let p: Vec<&str> = ov.path.iter().map(String::as_str).collect();
        ov.setting.as_deref() == Some(k)
            || p == ["settings", k]
            || (p.len() == 4
                && p[0] == "arms"
                && (p[1] == name || p[1] == index)
                && p[2] == "settings"
                && p[3] == k)
    })
}

fn check_warm_units(table: &Table, fraction: f64, unit: Bytes, key: &str) -> Result<(), String> {
    if fraction <= 0.0 {
        return Ok(());
    }
    let units: u128 = table
        .files
        .iter()
        .filter(|f| !f.is_placeholder())
        .map(|f| u128::from(f.size_bytes.div_ceil(unit.get().max(1))))
        .sum();
    if units > u128::from(limits::MAX_WARM_CACHE_UNITS) {
        return Err(format!(
            "the warm state covers {units} units of {unit} (the queried files' bytes over \
             {key}), past the bound of {} (limits::MAX_WARM_CACHE_UNITS); raise {key}",
            limits::MAX_WARM_CACHE_UNITS
        ));
    }
    Ok(())
}

/// `store:` is a preset name, `{preset: name, ...refinements}`, or a whole inline model.
fn resolve_store(v: &serde_json::Value) -> Result<models::store::StoreSpec, String> {
    use serde_json::Value;
    let merged = match v {
        Value::String(name) => return models::store::StoreSpec::preset(name).map_err(|e| e.to_string()),
        Value::Object(map) => match map.get("preset") {
            Some(Value::String(name)) => {
                let text = models::store::StoreSpec::preset_text(name).map_err(|e| e.to_string())?;
                let mut base: Value = serde_saphyr::from_str(text).map_err(|e| format!("preset {name}: {e}"))?;
                let mut rest = map.clone();
                rest.remove("preset");
                merge(&mut base, &Value::Object(rest));
                base
            }
            Some(_) => return Err("`preset` must be a preset name such as `s3-standard`".into()),
            None => v.clone(),
        },
        _ => return Err("`store` must be a preset name (s3-standard, s3-express-one-zone, local-nvme) or a store model".into()),
    };
    let spec: models::store::StoreSpec = serde_path_to_error::deserialize(merged).map_err(|e| {
        format!(
            "store.{}: {}",
            e.path(),
            super::load::with_suggestion(&e.inner().to_string())
        )
    })?;
    spec.validate().map_err(|e| e.to_string())?;
    Ok(spec)
}

/// Deep merge: maps merge key by key, anything else replaces.
fn merge(base: &mut serde_json::Value, over: &serde_json::Value) {
    match (base, over) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            if b.contains_key("distribution") {
                reparameterise(b, o);
            }
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}

/// A preset's distribution refined to another parameterisation: a refinement naming another
/// `distribution` drops the preset's parameters (its `min`/`max` clamps stay), and one giving
/// `sigma` or `p95` drops the other (the two are alternatives), where a plain merge kept both
/// and the store refused the user a key they never wrote.
fn reparameterise(
    base: &mut serde_json::Map<String, serde_json::Value>,
    over: &serde_json::Map<String, serde_json::Value>,
) {
    const PARAMETERS: [&str; 7] = [
        "median",
        "p95",
        "sigma",
        "mean",
        "shape",
        "quantiles",
        "value",
    ];
    if over
        .get("distribution")
        .is_some_and(|d| Some(d) != base.get("distribution"))
    {
        for p in PARAMETERS {
            base.remove(p);
        }
    }
    for (given, dropped) in [("sigma", "p95"), ("p95", "sigma")] {
        if over.contains_key(given) && !over.contains_key(dropped) {
            base.remove(dropped);
        }
    }
}

fn column_index(c: &ColumnRef, columns: &[String]) -> Result<u32, String> {
    match c {
        ColumnRef::Index(i) if (*i as usize) < columns.len() => Ok(*i),
        ColumnRef::Index(i) => Err(format!(
            "column {i} does not exist: the table has {} columns (0..{})",
            columns.len(),
            columns.len().saturating_sub(1)
        )),
        ColumnRef::Name(n) => columns
            .iter()
            .position(|c| c == n)
            .map(|i| i as u32)
            .ok_or_else(|| match nearest(n, columns.iter().map(String::as_str)) {
                Some(best) => format!("no column `{n}` (did you mean `{best}`?)"),
                None => format!("no column `{n}` in a table of {} columns", columns.len()),
            }),
    }
}

fn columns(
    list: &[ColumnRef],
    columns_: &[String],
    key: &str,
) -> Result<Vec<u32>, (String, String)> {
    let out: Vec<u32> = list
        .iter()
        .map(|c| column_index(c, columns_).map_err(|m| (key.to_string(), m)))
        .collect::<Result<_, _>>()?;
    // A column read twice is one column: a repeated entry is a slip, said rather than kept.
    for (i, c) in out.iter().enumerate() {
        if out[..i].contains(c) {
            let name = columns_.get(*c as usize).map_or("?", String::as_str);
            return Err((
                key.to_string(),
                format!("column {c} (`{name}`) is listed twice; list each column once"),
            ));
        }
    }
    Ok(out)
}

fn fraction(v: f64, key: &str) -> Result<f64, (String, String)> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err((
            key.to_string(),
            format!("{v} is not a fraction between 0 and 1"),
        ))
    }
}

/// The scenario's queries against `table` (a generated table's skeleton is enough: only the
/// file count and the schema matter here). Without `predicates` a query's predicate is left for
/// a second resolution once the files it may prune are laid out (a recorded table's skeleton
/// has no statistics yet), so its files are a superset of the pruned ones.
fn resolve_queries(
    f: &ScenarioFile,
    table: &Table,
    predicates: bool,
) -> Result<Vec<ResolvedQuery>, (String, String)> {
    let mut query_configs: Vec<QueryConfig> = f.queries.clone();
    if let Some(q) = &f.query {
        if !query_configs.is_empty() {
            return Err((
                "queries".into(),
                "give either `query:` or `queries:`, not both".into(),
            ));
        }
        query_configs.push(q.clone());
    }
    if query_configs.is_empty() {
        return Err((
            "query".into(),
            "the scenario has no query: add `query:` with at least `columns:`".into(),
        ));
    }
    let schema_columns: Vec<String> = table
        .columns()
        .map_err(|e| ("table".to_string(), format!("the table's columns: {e}")))?
        .columns
        .clone();
    let mut queries: Vec<ResolvedQuery> = Vec::new();
    for (qi, q) in query_configs.iter().enumerate() {
        let name = q.name.clone().unwrap_or_else(|| format!("q{:02}", qi + 1));
        if queries.iter().any(|other| other.name == name) {
            return Err((
                "queries".into(),
                format!(
                    "the {} query is called `{name}`, as an earlier one is{}; query names must \
                     differ (reports, traces and `--set queries.NAME...` tell queries apart by \
                     name)",
                    ordinal(qi + 1),
                    if q.name.is_none() {
                        " (a query without `name:` is called `q` and its place)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        let spec = query_spec(q, f, table, &schema_columns, predicates)
            .map_err(|(key, msg)| (key, format!("query {name}: {msg}")))?;
        queries.push(ResolvedQuery { name, spec });
    }
    Ok(queries)
}

/// `1st`, `2nd`, `3rd`, `4th`...
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The files with a directory of their path that is one of `partitions` (a trailing `*`
/// matching any rest), in table order.
fn partition_files(
    table: &Table,
    partitions: &[String],
) -> Result<Vec<FileIndex>, (String, String)> {
    // A path's directories: its components but the last (the file name), borrowed (a vector
    // of them per file was 7% of `many-small-files-iceberg`).
    fn dirs(path: &str) -> impl Iterator<Item = &str> {
        path.rsplit_once('/')
            .into_iter()
            .flat_map(|(dir, _)| dir.split('/'))
    }
    // Each partition as (prefix, whether a trailing `*` lets the rest be anything).
    let patterns: Vec<(&str, bool)> = partitions
        .iter()
        .map(|p| match p.strip_suffix('*') {
            Some(prefix) => (prefix, true),
            None => (p.as_str(), false),
        })
        .collect();
    let in_partition = |path: &str| {
        dirs(path).any(|d| {
            patterns
                .iter()
                .any(|&(p, any_rest)| if any_rest { d.starts_with(p) } else { d == p })
        })
    };
    let files: Vec<FileIndex> = (0..table.files.len() as u32)
        .filter(|&i| in_partition(&table.files[i as usize].path))
        .collect();
    if files.is_empty() {
        let example = table
            .files
            .iter()
            .find_map(|f| dirs(&f.path).last().map(str::to_string))
            .unwrap_or_else(|| "(no directories)".into());
        return Err((
            "files.partitions".into(),
            format!(
                "no file of the table's {} lies in a directory {partitions:?}; \
                 its files' directories look like `{example}`",
                table.files.len()
            ),
        ));
    }
    Ok(files)
}

/// Sets the query's predicate; on an Iceberg table, drops the files none of whose row groups
/// may match (a scan plans files from manifest bounds, which are the union of row-group
/// bounds). The error names `predicate` and the byte of the text.
fn apply_predicate(
    spec: &mut planner::QuerySpec,
    text: &str,
    table: &Table,
) -> Result<(), (String, String)> {
    if spec.row_group_keep_fraction != 1.0 {
        return Err((
            "predicate".into(),
            format!(
                "`row_groups: {}` and `predicate:` both decide which row groups survive; keep one",
                spec.row_group_keep_fraction
            ),
        ));
    }
    let p = crate::predicate::parse(text, table)
        .map_err(|e| ("predicate".into(), format!("{e} of `{text}`")))?;
    if table.iceberg.is_some() {
        spec.files.retain(|&f| {
            table
                .files
                .get(f as usize)
                .is_some_and(|file| p.file_may_match(file))
        });
        if spec.files.is_empty() {
            return Err((
                "predicate".into(),
                format!("`{text}` excludes every file of the query by their recorded min/max: the query reads nothing"),
            ));
        }
    }
    spec.predicate = Some(std::sync::Arc::new(p));
    Ok(())
}

fn query_spec(
    q: &QueryConfig,
    f: &ScenarioFile,
    table: &Table,
    schema: &[String],
    predicates: bool,
) -> Result<planner::QuerySpec, (String, String)> {
    let n_files = table.files.len() as u32;
    let files: Vec<FileIndex> = match (q.files.first, q.files.count, q.files.fraction) {
        _ if !q.files.partitions.is_empty() => {
            if q.files.first.is_some() || q.files.count.is_some() || q.files.fraction.is_some() {
                return Err((
                    "files".into(),
                    "give `partitions` or `first`/`count` or `fraction`, not two of them".into(),
                ));
            }
            partition_files(table, &q.files.partitions)?
        }
        (None, None, None) => (0..n_files).collect(),
        (first, count, None) => {
            let first = first.unwrap_or(0);
            let count = count.unwrap_or(n_files.saturating_sub(first));
            if first.saturating_add(count) > n_files || count == 0 {
                return Err((
                    "files".into(),
                    format!(
                        "files {first}..{} are not within the table's {n_files} files",
                        first.saturating_add(count)
                    ),
                ));
            }
            (first..first + count).collect()
        }
        (None, None, Some(frac)) => {
            let frac = fraction(frac, "fraction")?;
            let count = ((n_files as f64) * frac).round() as u32;
            if count == 0 {
                return Err((
                    "fraction".into(),
                    format!(
                        "{frac} of {n_files} files rounds to no file; give at least {} (one \
                         file)",
                        0.5 / n_files.max(1) as f64
                    ),
                ));
            }
            // Spread evenly: file i*n/count.
            (0..count)
                .map(|i| ((i as u64 * n_files as u64) / count.max(1) as u64) as u32)
                .collect()
        }
        _ => {
            return Err((
                "files".into(),
                "give `first`/`count` or `fraction`, not both".into(),
            ))
        }
    };
    if q.columns.is_empty() {
        return Err((
            "columns".into(),
            "`columns: []` reads nothing; list at least one column (by name or index)".into(),
        ));
    }
    let mut spec = planner::QuerySpec::new(columns(&q.columns, schema, "columns")?, files);
    spec.row_group_keep_fraction = fraction(q.row_groups, "row_groups")?;
    if let Some(text) = q.predicate.as_ref().filter(|_| predicates) {
        apply_predicate(&mut spec, text, table)?;
    }
    if let Some(p) = &q.prewhere {
        spec.prewhere_columns = columns(&p.columns, schema, "prewhere")?;
        spec.prewhere_selectivity = fraction(p.selectivity, "selectivity")?;
    }
    if let Some(ci) = &q.column_index {
        spec.column_index_columns = columns(&ci.columns, schema, "column_index")?;
        spec.page_keep_fraction = fraction(ci.keep_fraction, "keep_fraction")?;
    }
    if let Some(b) = &q.bloom {
        spec.bloom_columns = columns(&b.columns, schema, "bloom")?;
        spec.bloom_drop_fraction = fraction(b.drop_fraction, "drop_fraction")?;
        if b.probes > limits::MAX_BLOOM_PROBES {
            return Err((
                "probes".into(),
                format!(
                    "{} bloom probes, past the bound of {} (limits::MAX_BLOOM_PROBES: one a \
                     value of an `IN` list)",
                    b.probes,
                    limits::MAX_BLOOM_PROBES
                ),
            ));
        }
        spec.bloom_probes = b.probes;
    }
    spec.parquet_metadata_cache_warm = f.caches.parquet_metadata == Warmth::Warm;
    spec.iceberg_metadata_cache_warm = f.caches.iceberg_metadata == Warmth::Warm;
    spec.seed = f.seed;
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::FileLayout;

    /// Past its budget the cache lets the least recently used table go (and its plans); a
    /// table asked for again is built again; one in use is kept by its users.
    #[test]
    fn the_table_cache_keeps_tables_up_to_its_budget() {
        // Each table of `n` placeholder files holds `n` chunks (a path each); budget 10.
        let cache = TableCache::with_budget(KEEP_WHOLE_UP_TO_CHUNKS, 10);
        let builds = std::cell::Cell::new(0);
        let get = |key: &str, n: usize| {
            cache
                .get_or_build(key.to_string(), || {
                    builds.set(builds.get() + 1);
                    let paths: Vec<String> = (0..n).map(|i| format!("{key}-{i}")).collect();
                    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
                    Ok(table(&refs))
                })
                .unwrap()
        };
        let a = get("a", 4);
        let plans_a = cache.plans("a").unwrap();
        get("b", 4);
        let plans_b = cache.plans("b").unwrap();
        get("a", 4); // a is the most recent now
        assert_eq!(builds.get(), 2);
        get("c", 4); // 12 > 10: b, the least recently used, goes, with its plans
        assert_eq!(builds.get(), 3);
        assert!(!Arc::ptr_eq(&plans_b, &cache.plans("b").unwrap()));
        assert!(Arc::ptr_eq(&plans_a, &cache.plans("a").unwrap()));
        get("a", 4);
        assert_eq!(builds.get(), 3, "a was kept");
        get("b", 4);
        assert_eq!(builds.get(), 4, "b was let go and is built again");
        // A table let go stays whole for whoever still holds it.
        assert_eq!(a.files.len(), 4);
        let held = cache.tables.lock().unwrap().held_chunks;
        assert!(held <= 10, "{held} chunks held over a budget of 10");
    }

    fn table(paths: &[&str]) -> Table {
        Table {
            files: paths
                .iter()
                .map(|p| FileLayout::placeholder(p.to_string()))
                .collect(),
            ..Table::default()
        }
    }

    #[test]
    fn a_warm_cache_walks_at_most_the_bound_of_units() {
        let mut t = table(&["a", "b", "c"]);
        let unit = Bytes(4096);
        let per_file = limits::MAX_WARM_CACHE_UNITS / 2;
        for f in &mut t.files[..2] {
            f.materialized = true;
            f.size_bytes = per_file * unit.get();
        }
        // Two laid-out files at half the bound each: the bound, accepted; the placeholder
        // (`c`) is not warmed and does not count.
        check_warm_units(&t, 0.5, unit, "page_cache_block_size").unwrap();
        t.files[1].size_bytes += 1;
        let e = check_warm_units(&t, 0.5, unit, "page_cache_block_size").unwrap_err();
        assert!(
            e.contains("MAX_WARM_CACHE_UNITS") && e.contains("page_cache_block_size"),
            "{e}"
        );
        // A cold cache walks nothing.
        check_warm_units(&t, 0.0, unit, "page_cache_block_size").unwrap();
    }

    #[test]
    fn partitions_match_directories_not_file_names() {
        let t = table(&[
            "db/events/month=2024-01/a.parquet",
            "db/events/month=2024-02/b.parquet",
            "month=2024-01.parquet",
            "/month=2024-01/c.parquet",
            "d.parquet",
        ]);
        let p = |ps: &[&str]| {
            let ps: Vec<String> = ps.iter().map(|s| s.to_string()).collect();
            partition_files(&t, &ps)
        };
        assert_eq!(p(&["month=2024-01"]).unwrap(), vec![0, 3]);
        assert_eq!(p(&["month=2024-*"]).unwrap(), vec![0, 1, 3]);
        assert_eq!(p(&["events"]).unwrap(), vec![0, 1]);
        // The empty component before a leading `/` is a directory of its own.
        assert_eq!(p(&[""]).unwrap(), vec![3]);
        let (key, msg) = p(&["month=2023-*"]).unwrap_err();
        assert_eq!(key, "files.partitions");
        assert!(msg.contains("look like `month=2024-01`"), "{msg}");
    }

    #[test]
    fn a_preset_distribution_takes_another_parameterisation() {
        let refine = |yaml: &str| {
            let v: serde_json::Value = serde_saphyr::from_str(yaml).unwrap();
            resolve_store(&v)
        };
        let sigma = refine("{preset: s3-standard, first_byte: {sigma: 0.1}}").unwrap();
        assert_eq!(sigma.first_byte.sigma, Some(0.1));
        assert_eq!(sigma.first_byte.p95, None);
        let gamma = refine(
            "{preset: s3-standard, first_byte: {distribution: gamma, mean: 30ms, shape: 4}}",
        )
        .unwrap();
        assert_eq!(gamma.first_byte.median, None);
        assert_eq!(gamma.first_byte.shape, Some(4.0));
        // The same distribution refined keeps what it does not name.
        let median = refine("{preset: s3-standard, first_byte: {median: 20ms}}").unwrap();
        assert!(median.first_byte.p95.is_some() || median.first_byte.sigma.is_some());
        // Both alternatives at once are still refused.
        assert!(refine("{preset: s3-standard, first_byte: {sigma: 0.1, p95: 90ms}}").is_err());
    }
}
