//! seedledger-runner (being written).
