//! Compact on-disk layout files (see the module doc once written).
