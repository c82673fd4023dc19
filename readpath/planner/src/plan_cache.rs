//! Plans already made for one table, shared by every reader of that table: arms, replications,
//! cases and sweep points.
//!
//! [`crate::plan::plan_file`] is a pure function of the file's layout and its
//! [`PlanInput`](crate::plan::PlanInput), so a plan made once serves every reader that asks with
//! an equal input, and sharing it changes no result, whatever order the readers ask in. The key
//! is the input, owned ([`QueryKey`], [`UnitKey`] and [`Wiring`]: every field of it, by
//! construction); the owner of a cache keeps one per table, since the layout is not part of the
//! key. The part of the input that is the same for every file a reader plans (its
//! [`QueryKey`]: columns, fractions, predicate, seed...) is interned once per reader
//! ([`PlanCache::query_id`]), so that a file's lookup hashes four integers rather than
//! comparing column lists (the comparisons were 1.4% of `iceberg-bench`). A plan is its
//! [`PlanShape`] wired, and inputs that differ only in their wiring (the base, the redesign
//! and its floor-0 arm) share the shape: the second arm to ask wires it rather than planning
//! the file again. Not a clock, a thread or IO: a memo behind a lock, so that readers on other
//! threads can share it. Its hash maps are looked up and counted, never walked.

use crate::plan::{plan_shape, FilePlan, PlanInput, PlanShape, QueryKey, UnitKey, Wiring};
use layout::FileLayout;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The most plans one cache keeps, and the most shapes: past it, they are made and not kept
/// (a run of 100,000 files must not hold every plan at once). A plan's size grows with the row
/// groups and the columns read: `many-small-files` (one row group, 5 columns) keeps 4,984 in
/// about 10 MiB.
pub const MAX_CACHED_PLANS: usize = 16_384;

/// The most distinct queries one cache interns (a sweep point's settings may make another):
/// past it, a reader's plans are made and not kept.
pub const MAX_CACHED_QUERIES: usize = 4_096;

/// The id of a query that was not interned (the cache was full): its plans are not kept.
const NOT_INTERNED: u32 = u32::MAX;

/// Plans of one table's files, by the input that shaped each, and their shapes.
#[derive(Debug, Default)]
pub struct PlanCache {
    memo: Mutex<Memo>,
}

#[derive(Debug, Default)]
struct Memo {
    queries: BTreeMap<QueryKey, u32>,
    plans: FxHashMap<(UnitKey, Wiring), Arc<FilePlan>>,
    shapes: FxHashMap<UnitKey, Arc<PlanShape>>,
}

impl PlanCache {
    /// The id of `input`'s [`QueryKey`], interned now if it is new. A reader asks once and
    /// passes it to [`Self::get_or_plan`] for every file it plans (all share the query key).
    pub(crate) fn query_id(&self, input: &PlanInput<'_>) -> u32 {
        let key = input.query_key();
        let Ok(mut m) = self.memo.lock() else {
            return NOT_INTERNED;
        };
        if let Some(&id) = m.queries.get(&key) {
            return id;
        }
        let id = limits::u32_of(m.queries.len());
        if m.queries.len() >= MAX_CACHED_QUERIES {
            return NOT_INTERNED;
        }
        m.queries.insert(key, id);
        id
    }

    /// The plan of the file `input` names, whose query key was interned as `query`: the one
    /// made before for an equal input, else its shape made before for an input that differs
    /// only in wiring, wired now, else made now from the layout `file` gives (asked only then:
    /// an outlined file is made again).
    pub(crate) fn get_or_plan<'t, E>(
        &self,
        query: u32,
        file: impl FnOnce() -> Result<Cow<'t, FileLayout>, E>,
        input: &PlanInput<'_>,
    ) -> Result<Arc<FilePlan>, E> {
        self.debug_check_query(query, input);
        let key = (input.unit_key(query), input.wiring());
        let cached = query != NOT_INTERNED;
        let (plan, shape) = match self.memo.lock() {
            Ok(m) if cached => (m.plans.get(&key).cloned(), m.shapes.get(&key.0).cloned()),
            _ => (None, None),
        };
        if let Some(plan) = plan {
            return Ok(plan);
        }
        let shape = match shape {
            Some(shape) => shape,
            None => Arc::new(plan_shape(&*file()?, input)),
        };
        let plan = Arc::new(shape.wired(key.1));
        if let Ok(mut m) = self.memo.lock() {
            if cached && m.shapes.len() < MAX_CACHED_PLANS {
                m.shapes.entry(key.0).or_insert(shape);
            }
            if cached && m.plans.len() < MAX_CACHED_PLANS {
                m.plans.entry(key).or_insert_with(|| plan.clone());
            }
        }
        Ok(plan)
    }

    /// Debug builds check that `query` is the id of `input`'s query key: a reader that passed
    /// another's would get plans made for other columns.
    fn debug_check_query(&self, query: u32, input: &PlanInput<'_>) {
        if cfg!(debug_assertions) && query != NOT_INTERNED {
            if let Ok(m) = self.memo.lock() {
                assert_eq!(
                    m.queries.get(&input.query_key()),
                    Some(&query),
                    "a plan asked for under another query's id"
                );
            }
        }
    }

    /// Plans kept.
    pub fn len(&self) -> usize {
        self.memo.lock().map_or(0, |m| m.plans.len())
    }

    /// Shapes kept.
    pub fn shapes(&self) -> usize {
        self.memo.lock().map_or(0, |m| m.shapes.len())
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::plan_file;
    use crate::plan::tests::input;
    use crate::testing::{table, TableShape};

    #[test]
    fn equal_inputs_share_one_plan_and_others_get_their_own() {
        let t = table(&TableShape::default());
        let file = &t.files[0];
        let cache = PlanCache::default();
        let made = std::cell::Cell::new(0);
        let get = |input: &PlanInput<'_>| {
            let layout = || -> Result<_, ()> {
                made.set(made.get() + 1);
                Ok(Cow::Borrowed(file))
            };
            cache
                .get_or_plan(cache.query_id(input), layout, input)
                .unwrap()
        };
        let a = get(&input(&[1, 3], 0..4));
        let b = get(&input(&[1, 3], 0..4));
        assert!(Arc::ptr_eq(&a, &b), "the second reader gets the first plan");
        assert_eq!(made.get(), 1, "the layout is asked for only to make a plan");
        assert_eq!(
            *a,
            plan_file(file, &input(&[1, 3], 0..4)),
            "the plan plan_file makes"
        );
        // Any field that shapes the plan makes another key: columns, row groups, a flag.
        let mut planned = input(&[1, 3], 0..4);
        planned.planned = true;
        planned.sequential_subgroups = true;
        let others = [
            get(&input(&[1, 2], 0..4)),
            get(&input(&[1, 3], 0..2)),
            get(&planned),
        ];
        for o in &others {
            assert!(!Arc::ptr_eq(&a, o));
        }
        assert_eq!(cache.len(), 4);
        assert_eq!(
            cache.shapes(),
            3,
            "the input wired otherwise shares the first shape"
        );
        assert_eq!(
            *others[2],
            plan_file(file, &planned),
            "a shape wired again is the plan plan_file makes"
        );
        assert_ne!(*others[2], *a, "its subgroups wait for the one before");
        assert_ne!(*others[0], *a, "other columns, another plan");
        let other = input(&[4], 0..4);
        let failed = cache.get_or_plan(cache.query_id(&other), || Err("no layout"), &other);
        assert_eq!(
            failed.unwrap_err(),
            "no layout",
            "a layout that cannot be made is an error"
        );
    }

    #[test]
    fn a_query_is_interned_once_whatever_file_it_plans() {
        let cache = PlanCache::default();
        let a = input(&[1, 3], 0..4);
        let mut other_file = input(&[1, 3], 0..2);
        other_file.file_index = 1;
        let other_columns = input(&[1, 2], 0..4);
        assert_eq!(cache.query_id(&a), 0);
        assert_eq!(
            cache.query_id(&other_file),
            0,
            "files and row groups are the unit's"
        );
        assert_eq!(cache.query_id(&other_columns), 1);
        assert_eq!(cache.query_id(&a), 0, "asked again, the same id");
    }

    #[test]
    fn past_the_query_bound_plans_are_made_and_not_kept() {
        let t = table(&TableShape::default());
        let file = &t.files[0];
        let cache = PlanCache::default();
        for seed in 0..MAX_CACHED_QUERIES as u64 {
            let mut q = input(&[1], 0..4);
            q.seed = seed;
            assert_ne!(cache.query_id(&q), NOT_INTERNED);
        }
        let mut late = input(&[1], 0..4);
        late.seed = u64::MAX;
        let id = cache.query_id(&late);
        assert_eq!(id, NOT_INTERNED, "the bound is reached");
        let plan = cache
            .get_or_plan(id, || -> Result<_, ()> { Ok(Cow::Borrowed(file)) }, &late)
            .unwrap();
        assert_eq!(*plan, plan_file(file, &late), "still the right plan");
        assert!(cache.is_empty(), "but not kept");
    }
}
