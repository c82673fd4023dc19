//! The scenario parser and its case expansion: any text gives a scenario or an error that
//! names the file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let path = Path::new("fuzz/scenario.yaml");
    match scenario::parse(path, text, &[]) {
        Ok(loaded) => {
            let _ = scenario::cases(&loaded);
        }
        Err(e) => assert!(e.to_string().contains("scenario.yaml"), "{e}"),
    }
});
