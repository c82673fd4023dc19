//! Deterministic synthetic layout generators.
