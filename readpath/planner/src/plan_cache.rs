//! Plans already made for one table, shared by every reader of that table: arms, replications,
//! cases and sweep points.
//!
//! [`crate::plan::plan_file`] is a pure function of the file's layout and its
//! [`PlanInput`](crate::plan::PlanInput), so a plan made once serves every reader that asks with
//! an equal input, and sharing it changes no result, whatever order the readers ask in. The key
//! is the input, owned ([`PlanKey`] and [`Wiring`]: every field of it, by construction); the
//! owner of a cache keeps one per table, since the layout is not part of the key. A plan is its
//! [`PlanShape`] wired, and inputs that differ only in their wiring (the base, the redesign and
//! its floor-0 arm) share the shape: the second arm to ask wires it rather than planning the
//! file again. Not a clock, a thread or IO: a memo behind a lock, so that readers on other
//! threads can share it.

use crate::plan::{plan_shape, FilePlan, PlanInput, PlanKey, PlanShape, Wiring};
use layout::FileLayout;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The most plans one cache keeps, and the most shapes: past it, they are made and not kept
/// (a run of 100,000 files must not hold every plan at once). A plan's size grows with the row
/// groups and the columns read: `many-small-files` (one row group, 5 columns) keeps 4,984 in
/// about 10 MiB.
pub const MAX_CACHED_PLANS: usize = 16_384;

/// Plans of one table's files, by the input that shaped each, and their shapes.
#[derive(Debug, Default)]
pub struct PlanCache {
    memo: Mutex<Memo>,
}

#[derive(Debug, Default)]
struct Memo {
    plans: BTreeMap<(PlanKey, Wiring), Arc<FilePlan>>,
    shapes: BTreeMap<PlanKey, Arc<PlanShape>>,
}

impl PlanCache {
    /// The plan of the file `input` names: the one made before for an equal input, else its
    /// shape made before for an input that differs only in wiring, wired now, else made now
    /// from the layout `file` gives (asked only then: an outlined file is made again).
    pub(crate) fn get_or_plan<'t, E>(
        &self,
        file: impl FnOnce() -> Result<Cow<'t, FileLayout>, E>,
        input: &PlanInput<'_>,
    ) -> Result<Arc<FilePlan>, E> {
        let key = (input.key(), input.wiring());
        let (plan, shape) = match self.memo.lock() {
            Ok(m) => (m.plans.get(&key).cloned(), m.shapes.get(&key.0).cloned()),
            Err(_) => (None, None),
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
            if m.shapes.len() < MAX_CACHED_PLANS {
                m.shapes.entry(key.0.clone()).or_insert(shape);
            }
            if m.plans.len() < MAX_CACHED_PLANS {
                m.plans.entry(key).or_insert_with(|| plan.clone());
            }
        }
        Ok(plan)
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
            cache.get_or_plan(layout, input).unwrap()
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
        let failed = cache.get_or_plan(|| Err("no layout"), &input(&[4], 0..4));
        assert_eq!(
            failed.unwrap_err(),
            "no layout",
            "a layout that cannot be made is an error"
        );
    }
}
