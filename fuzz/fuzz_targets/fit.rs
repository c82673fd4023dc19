//! `sim fit` followed by loading its output: a fit either writes a model that loads or says
//! why it cannot.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracefit::{fit_store, parse_bytes, FitOptions, ParseOptions};

fuzz_target!(|bytes: &[u8]| {
    let Ok(trace) = parse_bytes(bytes, "fuzz.log", &ParseOptions::default()) else {
        return;
    };
    let Ok(fit) = fit_store(&trace, &FitOptions::default()) else {
        return;
    };
    if let Ok(yaml) = fit.to_checked_yaml("fuzz") {
        if let Err(e) = models::store::StoreSpec::from_yaml(&yaml) {
            panic!("a checked model does not load: {e}\n{yaml}");
        }
    }
});
