//! seedledger-orders (being written).
