//! seedledger-gate (being written).
