//! Captured object-store traces: parse them (S3 server access logs and the simulator's own
//! request trace, into one record type), fit a store model to them (first-byte latency,
//! per-stream bandwidth, size dependence, request and error rates), plot the fits, and replay a
//! trace against a model.

pub mod access_log;
pub mod error;
pub mod fit;
pub mod parse;
pub mod plot;
pub mod record;
pub mod replay;
pub mod request_log;
pub mod select;
pub mod sim_trace;

pub use error::{LineError, Malformed, TraceError};
pub use fit::{fit_store, FitOptions, StoreFit};
pub use parse::{
    parse_bytes, parse_file, parse_reader, ParseOptions, ParsedTrace, RunMeta, TraceFormat,
    RUN_META_PREFIX,
};
pub use plot::{plot_ecdf, plot_store_fit, PlotUnit};
pub use record::{
    FirstByteSource, NeededKind, NeededPart, Operation, ServedBy, SimLabels, TraceRecord,
};
pub use replay::{replay_closed_loop, replay_open_loop, PercentileRow, ReplayMode, ReplayReport};
pub use select::{keep_one_run, RunChoice, SelectError};
pub use sim_trace::{needed_columns, write_sim_trace, SIM_TRACE_HEADER};
