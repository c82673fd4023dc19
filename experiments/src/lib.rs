//! Experiments over scenarios: runs (cases x arms x replications) and ablations, sweeps,
//! tuning, what-if replays of traces, and their reports and plots. Everything here goes through
//! [`drive::run_once`]; nothing here touches the reader's internals.

pub mod plots;
pub mod report;
pub mod run;
pub mod sweep;
pub mod tune;
pub mod whatif;
