//! One run out of a `sim run --trace` (or `sim measure --trace`) file. Such a trace holds every
//! case, arm, replication and query of a run, each from virtual time 0; pooled, their requests
//! never happened together (two replications of `many-small-files` replayed as one run of
//! 19,936 GETs at 47 in flight, where each run had 9,968 at 24). [`keep_one_run`] keeps the
//! rows of one of each: the one asked for, else the first in the trace, said in a note.

use crate::parse::ParsedTrace;
use crate::record::{SimLabels, TraceRecord};

/// Which run to keep: a value for each label, or `None` for the first in the trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunChoice {
    /// The case (`--case`).
    pub case: Option<String>,
    /// The arm (`--arm`).
    pub arm: Option<String>,
    /// The replication (`--replication`).
    pub replication: Option<u32>,
    /// The query (`--query`).
    pub query: Option<String>,
}

/// A choice the trace cannot satisfy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// The trace's rows carry no run labels (an access log, a request log).
    #[error(
        "--{option} {value}: the trace has no {plural} (it is not a `sim run --trace` or \
         `sim measure --trace` trace, whose rows name the run that made them); leave --{option} out"
    )]
    NoLabels {
        /// The option (`arm`, `case`, ...).
        option: &'static str,
        /// The label's plural (`arms`, `cases`, ...).
        plural: &'static str,
        /// The value asked for.
        value: String,
    },
    /// The label asked for is not in the trace.
    #[error("the trace has no {label} `{value}`{among}; its {plural}: {present}")]
    Absent {
        /// The label (`arm`, `case`, ...).
        label: &'static str,
        /// Its plural.
        plural: &'static str,
        /// The value asked for.
        value: String,
        /// The labels already chosen, as ` in case c, arm a`, or empty.
        among: String,
        /// The values the trace holds there, in order.
        present: String,
    },
}

/// One run label: how it is named and read from a row.
struct Label {
    name: &'static str,
    plural: &'static str,
    get: fn(&SimLabels) -> String,
}

const LABELS: [Label; 4] = [
    Label {
        name: "case",
        plural: "cases",
        get: |s| s.case.clone(),
    },
    Label {
        name: "arm",
        plural: "arms",
        get: |s| s.arm.clone(),
    },
    Label {
        name: "replication",
        plural: "replications",
        get: |s| s.replication.to_string(),
    },
    Label {
        name: "query",
        plural: "queries",
        get: |s| s.query.clone(),
    },
];

fn chosen(choice: &RunChoice, label: &str) -> Option<String> {
    match label {
        "case" => choice.case.clone(),
        "arm" => choice.arm.clone(),
        "replication" => choice.replication.map(|r| r.to_string()),
        _ => choice.query.clone(),
    }
}

/// The values of `label` among `records`, in order of first appearance.
fn values(records: &[TraceRecord], label: &Label) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in records.iter().filter_map(|r| r.sim.as_ref()) {
        let v = (label.get)(s);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// Keeps the rows of one run of `trace`: for each of case, arm, replication and query, the
/// value `choice` names or, when `pick_first`, the first in the trace (a label with one value
/// is kept as it is). Returns a note for each label that was picked among several, saying
/// `doing` (e.g. `replaying case c`) and the option that picks another. A trace whose rows carry
/// no labels is kept whole; a choice it cannot satisfy is an error naming what it holds.
pub fn keep_one_run(
    trace: &mut ParsedTrace,
    choice: &RunChoice,
    pick_first: bool,
    doing: &str,
) -> Result<Vec<String>, SelectError> {
    let labelled = trace.records.iter().any(|r| r.sim.is_some());
    let mut notes = Vec::new();
    let mut among: Vec<String> = Vec::new();
    for label in &LABELS {
        let asked = chosen(choice, label.name);
        if !labelled {
            if let Some(value) = asked {
                return Err(SelectError::NoLabels {
                    option: label.name,
                    plural: label.plural,
                    value,
                });
            }
            continue;
        }
        let present = values(&trace.records, label);
        let keep = match asked {
            Some(v) if present.contains(&v) => v,
            Some(value) => {
                return Err(SelectError::Absent {
                    label: label.name,
                    plural: label.plural,
                    value,
                    among: if among.is_empty() {
                        String::new()
                    } else {
                        format!(" in {}", among.join(", "))
                    },
                    present: present.join(", "),
                })
            }
            None if present.len() > 1 && pick_first => {
                let first = present[0].clone();
                notes.push(format!(
                    "{doing} {} {first} (the trace holds {} {}; --{} picks another)",
                    label.name,
                    label.plural,
                    present.join(", "),
                    label.name
                ));
                first
            }
            None => continue,
        };
        trace
            .records
            .retain(|r| r.sim.as_ref().is_some_and(|s| (label.get)(s) == keep));
        among.push(format!("{} {keep}", label.name));
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_bytes, ParseOptions};
    use crate::sim_trace::SIM_TRACE_HEADER;

    /// Two cases x two arms x two replications x one query, one GET each, all from time 0.
    fn trace() -> ParsedTrace {
        let mut text = format!("{SIM_TRACE_HEADER}\n");
        for case in ["small", "large"] {
            for arm in ["base", "redesign"] {
                for rep in 0..2 {
                    text.push_str(&format!(
                        "{case},{arm},{rep},q,0,10,20,1,0,5,206,store,1,false,,,,,,,,,GET\n"
                    ));
                }
            }
        }
        parse_bytes(text.as_bytes(), "t.csv", &ParseOptions::default()).unwrap()
    }

    fn labels(t: &ParsedTrace) -> Vec<(String, String, u32)> {
        t.records
            .iter()
            .filter_map(|r| r.sim.as_ref())
            .map(|s| (s.case.clone(), s.arm.clone(), s.replication))
            .collect()
    }

    #[test]
    fn by_default_the_first_of_each_label_is_kept_and_said() {
        let mut t = trace();
        let notes = keep_one_run(&mut t, &RunChoice::default(), true, "replaying").unwrap();
        assert_eq!(labels(&t), vec![("small".into(), "base".into(), 0)]);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].contains("replaying case small") && notes[0].contains("--case"));
        assert!(notes[1].contains("replaying arm base") && notes[1].contains("base, redesign"));
        assert!(notes[2].contains("replication 0") && notes[2].contains("--replication"));
    }

    #[test]
    fn a_choice_keeps_its_run_and_an_absent_one_names_what_is_there() {
        let mut t = trace();
        let choice = RunChoice {
            case: Some("large".into()),
            replication: Some(1),
            ..RunChoice::default()
        };
        let notes = keep_one_run(&mut t, &choice, true, "fitting").unwrap();
        assert_eq!(labels(&t), vec![("large".into(), "base".into(), 1)]);
        assert_eq!(notes.len(), 1, "only the arm was picked: {notes:?}");
        let mut t = trace();
        let choice = RunChoice {
            case: Some("large".into()),
            replication: Some(7),
            ..RunChoice::default()
        };
        let err = keep_one_run(&mut t, &choice, true, "fitting")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no replication `7` in case large, arm base")
                && err.contains("replications: 0, 1"),
            "{err}"
        );
    }

    #[test]
    fn without_pick_first_only_the_choices_filter() {
        let mut t = trace();
        let choice = RunChoice {
            arm: Some("redesign".into()),
            ..RunChoice::default()
        };
        let notes = keep_one_run(&mut t, &choice, false, "what-if").unwrap();
        assert!(notes.is_empty());
        assert_eq!(t.records.len(), 4);
    }

    #[test]
    fn a_trace_without_labels_is_kept_whole_and_refuses_a_choice() {
        let log = "o b [10/Mar/2024:12:34:56 +0000] 1.2.3.4 r id REST.GET.OBJECT k \"GET /b/k HTTP/1.1\" 206 - 100 1000 12 10 \"-\" \"ua\" - h SigV4 c AuthHeader host TLSv1.3 - -\n";
        let mut t = parse_bytes(log.as_bytes(), "x.log", &ParseOptions::default()).unwrap();
        assert!(keep_one_run(&mut t, &RunChoice::default(), true, "fitting")
            .unwrap()
            .is_empty());
        assert_eq!(t.records.len(), 1);
        let choice = RunChoice {
            replication: Some(0),
            ..RunChoice::default()
        };
        let err = keep_one_run(&mut t, &choice, true, "fitting").unwrap_err();
        assert!(
            err.to_string()
                .contains("--replication 0: the trace has no replications"),
            "{err}"
        );
    }
}
