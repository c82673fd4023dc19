//! The store model YAML: any text gives a model the client can be built from, or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rand_pcg::rand_core::SeedableRng;

fuzz_target!(|text: &str| {
    if let Ok(spec) = models::store::StoreSpec::from_yaml(text) {
        let rng = rand_pcg::Pcg64::seed_from_u64(1);
        let _ = models::store::S3Client::new(&spec, rng);
    }
});
