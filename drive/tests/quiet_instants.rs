//! The driver loop skips two things: advancing a world that is quiet up to an instant where
//! only a CPU stand-in acts, such as a source thread handing a chunk to a consumer
//! (`World::quiet_through`), and polling a quiescent reader (`Reader::is_quiescent`: nothing
//! reached it, or only what changes nothing a pump reads). Neither may change a run: for the first case of every shipped
//! scenario, each arm's first query runs in the simulated world and in the same world behind a
//! wrapper that never promises quiet (the trait's default, as a real world), and the two give
//! the same metrics, parsing-thread time, trace and timeline. (Debug builds also check every
//! skipped poll: it must answer `None`.)

use drive::world::World;
use drive::{run_in, Recording, SimWorld};
use planner::{CacheView, Event, ReadRequest};

/// `SimWorld` without `quiet_through`: the loop advances it at every instant.
struct NeverQuiet(SimWorld);

impl World for NeverQuiet {
    fn now(&self, now_ns: u64) -> u64 {
        self.0.now(now_ns)
    }
    fn start_read(&mut self, now_ns: u64, req: ReadRequest) -> Result<(), drive::RunError> {
        self.0.start_read(now_ns, req)
    }
    fn wait(
        &mut self,
        now_ns: u64,
        deadline_ns: Option<u64>,
        events: &mut Vec<(u64, Event)>,
    ) -> Result<Option<u64>, drive::RunError> {
        self.0.wait(now_ns, deadline_ns, events)
    }
    fn reads_open(&self) -> u64 {
        self.0.reads_open()
    }
    fn cache_view(&self) -> &dyn CacheView {
        self.0.cache_view()
    }
    fn store_figures(&mut self, wall_ns: u64) -> drive::metrics::StoreFigures {
        self.0.store_figures(wall_ns)
    }
    fn take_trace(&mut self) -> Vec<drive::TraceRow> {
        self.0.take_trace()
    }
}

mod common;
use common::scenarios;

#[test]
fn skipping_quiet_instants_changes_no_run() {
    let rec = Recording {
        trace: true,
        timeline: true,
    };
    let mut runs = 0;
    for path in scenarios() {
        let loaded = scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
        let tables = scenario::TableCache::default();
        let cases = scenario::cases(&loaded).unwrap_or_else(|e| panic!("{e}"));
        let Some((case, overrides)) = cases.first() else {
            continue;
        };
        let r = scenario::resolve(
            &loaded
                .with_overrides(overrides)
                .unwrap_or_else(|e| panic!("{e}")),
            &tables,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for arm in &r.arms {
            let at = format!("{} / {case} / {}", path.display(), arm.name);
            let query = &r.queries[0];
            let world =
                || SimWorld::new(&r, arm, 0, 0, rec.trace).unwrap_or_else(|e| panic!("{e}"));
            let skipping =
                run_in(&mut world(), &r, arm, query, rec).unwrap_or_else(|e| panic!("{at}: {e}"));
            let stepping = run_in(&mut NeverQuiet(world()), &r, arm, query, rec)
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            // Debug text compares the metrics' f64s exactly (NaN included).
            assert_eq!(
                format!("{:?}", skipping.metrics),
                format!("{:?}", stepping.metrics),
                "{at}: metrics"
            );
            assert_eq!(
                skipping.thread_time, stepping.thread_time,
                "{at}: thread time"
            );
            assert_eq!(skipping.trace, stepping.trace, "{at}: trace");
            assert_eq!(skipping.timeline, stepping.timeline, "{at}: timeline");
            assert!(!skipping.trace.is_empty(), "{at}: a run with no request");
            runs += 1;
        }
    }
    assert!(runs >= 16, "only {runs} runs compared");
}
