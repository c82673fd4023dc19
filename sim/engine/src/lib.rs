//! The discrete-event engine: virtual time, event queue, RNG streams.
