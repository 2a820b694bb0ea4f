//! How a run's evidence reaches the disk ([`Durability`]).
//!
//! A run writes its receipt and witness rows in crash-consistent order: the open receipt is
//! in place before the first trial, each trial's seed is recorded before it starts, its row
//! is appended after it ends, the rows are all appended before the final receipt replaces the
//! open one (`ledger.rs`, `run.rs`). That order is what every guarantee about a process that
//! dies rests on (`kill -9`, an abort, an exit, a signal: book/src/guarantees.md), and none
//! of it needs an `fsync`, since the page cache outlives the process. A power loss is the
//! one event an `fsync` guards against, and by default a run does not wait for one: the
//! evidence is made durable where it is used, by the command that grants something on its
//! strength (`gate cite` syncs the receipts and rows it cites before it writes the
//! citation). A power loss before that loses at most a run the next run redoes; whatever it
//! leaves is read as a refusal, never as a permissive answer (a receipt left open, or a
//! closed receipt whose rows were lost, which `gate close --verify` and `gate cite` find in
//! disagreement with its rows).

/// How a run's evidence reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Crash safe, no `fsync` (the default): the open receipt before the first trial, the
    /// writes in crash-consistent order; the evidence becomes durable where it is used.
    #[default]
    CrashSafe,
    /// Crash safe, and synced at the end of the run: the rows, then the final receipt, then
    /// its directory (never before the first trial). `SEEDLEDGER_SYNC=1` asks for it
    /// ([`Durability::from_env`]).
    Synced,
    /// No open receipt: nothing is on disk until the run ends, so a crash leaves no receipt
    /// at all. Only for benchmarks measuring what crash safety costs.
    NoOpenReceipt,
}

impl Durability {
    /// [`Durability::Synced`] when the environment variable `SEEDLEDGER_SYNC` is `1` (or
    /// `true`, `yes`, `on`), else [`Durability::CrashSafe`]. Read from the environment the
    /// process started with (`anchor.rs`), not one a trial may have changed since.
    pub fn from_env() -> Durability {
        let value = crate::anchor::start_env()
            .iter()
            .find(|(key, _)| key == "SEEDLEDGER_SYNC")
            .and_then(|(_, value)| value.to_str());
        match value.map(str::trim) {
            Some("1" | "true" | "yes" | "on") => Durability::Synced,
            _ => Durability::CrashSafe,
        }
    }

    /// Whether the run writes its open receipt before the first trial.
    pub(crate) fn open_receipt(self) -> bool {
        self != Durability::NoOpenReceipt
    }

    /// Whether the run syncs its evidence at its end.
    pub(crate) fn fsync(self) -> seedledger_format::Fsync {
        seedledger_format::Fsync::wait_if(self == Durability::Synced)
    }
}
