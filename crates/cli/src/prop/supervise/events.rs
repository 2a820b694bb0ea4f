//! What the supervisor learns from the worker's events, and what it does on each: a run's
//! start, progress and end (its summary reported as the receipt on disk says), a lingering
//! process, an event it cannot read.

use super::*;
use crate::prop::progress::Bars;

/// What the supervisor learnt from the events.
#[derive(Debug, Default)]
pub(super) struct Seen {
    pub(super) planned: Option<Vec<String>>,
    /// `(property id, run id)` of runs that started and have not ended, in start order.
    pub(super) in_flight: Vec<(String, String)>,
    /// Properties with an outcome (done, error, stopped).
    pub(super) ended: Vec<String>,
    pub(super) stopped: Vec<String>,
    pub(super) not_run: Vec<String>,
    pub(super) bad_events: usize,
}

/// Takes out of `seen.in_flight` the runs whose receipts on disk say they finished — closed
/// under their own run id (`finished_at` written) with no shrinking left (`shrink_status` not
/// `in_progress`) — and returns them in suite order with the summary to report. The worker
/// reports runs in suite order, so a run that finished beside a longer one sends its `done`
/// only after that one's: a process that dies meanwhile leaves finished runs without one.
/// A finished run is never what the process died in; the receipt is what is reported.
pub(super) fn finished_in_flight<'a>(
    seen: &mut Seen,
    selected: &'a [Property],
    config: &RunConfig,
) -> Vec<(&'a Property, RunSummary)> {
    let mut finished = Vec::new();
    for property in selected {
        let Some(at) = seen.in_flight.iter().position(|(id, _)| id == property.id) else {
            continue;
        };
        let run_id = seen.in_flight[at].1.as_str();
        let Ok((receipt_path, witness_path)) =
            evidence_paths(&config.out_dir, &config.patch_id, property.id)
        else {
            continue;
        };
        let closed = std::fs::read_to_string(&receipt_path)
            .ok()
            .and_then(|t| parse_receipt(&t).ok())
            .filter(|r| {
                r.run_id.as_deref() == Some(run_id)
                    && r.finished_at.is_some()
                    && r.shrink_status.as_deref() != Some("in_progress")
            });
        if let Some(receipt) = closed {
            seen.in_flight.remove(at);
            seen.ended.push(property.id.to_string());
            finished.push((
                property,
                RunSummary {
                    property_id: property.id.to_string(),
                    root: config.root.clone(),
                    receipt_path,
                    witness_path,
                    receipt,
                    // Its `done` never came: what its trials were labelled with is unknown.
                    events: Default::default(),
                    targets: Default::default(),
                },
            ));
        }
    }
    finished
}

/// Acts on one event line from the worker.
/// Whatever it prints, it prints with the progress bars (if any) hidden; a run's end takes
/// its bar away before its summary line.
pub(super) fn on_line(
    line: &[u8],
    seen: &mut Seen,
    bars: &mut Option<Bars>,
    selected: &[Property],
    config: &RunConfig,
    report: &mut impl FnMut(&Property, Result<RunSummary, String>),
) {
    let event: Option<Value> = serde_json::from_slice(line).ok();
    let kind = event.as_ref().and_then(|e| e["event"].as_str());
    let id = event.as_ref().and_then(|e| e["property_id"].as_str());
    let property = id.and_then(|id| selected.iter().find(|p| p.id == id));
    let text = |field: &str| {
        event
            .as_ref()
            .and_then(|e| e[field].as_str())
            .unwrap_or("")
            .to_string()
    };
    match (kind, property, &event) {
        (Some("plan"), _, Some(e)) => {
            seen.planned = e["properties"].as_array().map(|ids| {
                ids.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            });
        }
        (Some("start"), Some(p), _) => {
            seen.in_flight.push((p.id.to_string(), text("run_id")));
        }
        // Sent only when this supervisor asked for it (it draws bars); a run that ended
        // draws no more.
        (Some("progress"), Some(p), Some(e)) => on_progress(p, e, seen, bars),
        (Some("done"), Some(p), Some(e)) => on_done(p, e, seen, bars, config, report),
        (Some(kind @ ("error" | "stopped")), Some(p), _) => {
            seen.in_flight.retain(|(id, _)| id != p.id);
            seen.ended.push(p.id.to_string());
            if kind == "stopped" {
                seen.stopped.push(p.id.to_string());
            }
            if let Some(bars) = bars {
                bars.remove(p.id);
            }
            hidden(bars, || report(p, Err(text("error"))));
        }
        (Some("not_run"), Some(p), _) => {
            seen.not_run.push(p.id.to_string());
        }
        (Some("lingering"), Some(p), Some(e)) => on_lingering(p, e, bars),
        _ => {
            seen.bad_events += 1;
            hidden(bars, || {
                errln!(
                    "error: unreadable event from the run process: {}",
                    String::from_utf8_lossy(line).trim()
                );
            });
        }
    }
}

/// A `progress` event: the run's bar moves, while the run is under way.
fn on_progress(p: &Property, e: &Value, seen: &Seen, bars: &mut Option<Bars>) {
    let number = |field: &str| e[field].as_u64().unwrap_or(0);
    if let Some(bars) = bars
        && seen.in_flight.iter().any(|(id, _)| id == p.id)
    {
        bars.update(
            p.id,
            &crate::prop::progress::Counts {
                done: number("done"),
                planned: number("planned"),
                failed: number("failed"),
                elapsed: std::time::Duration::from_millis(number("elapsed_ms")),
            },
        );
    }
}

/// A `done` event: when the receipt on disk agrees, the run has ended and its summary is
/// reported as the receipt says; otherwise the event is ignored, with a warning.
fn on_done(
    p: &Property,
    e: &Value,
    seen: &mut Seen,
    bars: &mut Option<Bars>,
    config: &RunConfig,
    report: &mut impl FnMut(&Property, Result<RunSummary, String>),
) {
    let paths = evidence_paths(&config.out_dir, &config.patch_id, p.id).map_err(|e| e.to_string());
    // A property in the worker's process could write to the event pipe's descriptor:
    // a "done" counts only if the receipt on disk says the same (a property cannot
    // write its way out of a crash). The receipt reported is the one on disk.
    let on_disk = paths
        .as_ref()
        .ok()
        .and_then(|(path, _)| std::fs::read_to_string(path).ok())
        .and_then(|t| parse_receipt(&t).ok());
    let agrees = on_disk.as_ref().is_some_and(|d| {
        e["run_id"]
            .as_str()
            .is_some_and(|id| d.run_id.as_deref() == Some(id))
            && e["stopped_early"].as_bool() == Some(d.stopped_early)
            && e["attempted"].as_u64() == Some(d.attempted_seeds.len() as u64)
            && e["failing"].as_u64() == Some(d.failing_seeds.len() as u64)
            && e["failing_seed"].as_u64() == d.failing_seed
    });
    let receipt = on_disk.ok_or_else(|| "the run's receipt cannot be read back".to_string());
    if !agrees {
        hidden(bars, || {
            errln!(
                "warning: a report that `{}` finished does not match its receipt on disk; ignored",
                p.id
            );
        });
        return;
    }
    seen.in_flight.retain(|(id, _)| id != p.id);
    seen.ended.push(p.id.to_string());
    if let Some(bars) = bars {
        bars.remove(p.id);
    }
    hidden(bars, || {
        match receipt.and_then(|r| paths.map(|paths| (r, paths))) {
            Ok((receipt, (receipt_path, witness_path))) => {
                report(
                    p,
                    Ok(RunSummary {
                        property_id: p.id.to_string(),
                        root: config.root.clone(),
                        receipt_path,
                        witness_path,
                        receipt,
                        events: events_of(e),
                        targets: targets_of(e),
                    }),
                );
            }
            Err(e) => report(p, Err(e)),
        }
    });
}

/// The event counts a `done` event carries (`events`: `{"trials": N, "counts": {label:
/// count}}`, absent when no trial carried a label). They are not evidence and no receipt
/// holds them; counts that do not fit the run (more trials than it attempted, a count above
/// its trials) are dropped whole.
fn events_of(e: &Value) -> seedledger_runner::EventCounts {
    let mut events = seedledger_runner::EventCounts {
        trials: e["events"]["trials"].as_u64().unwrap_or(0),
        ..Default::default()
    };
    if let Some(counts) = e["events"]["counts"].as_object() {
        for (label, count) in counts {
            events
                .counts
                .insert(label.clone(), count.as_u64().unwrap_or(u64::MAX));
        }
    }
    let fits = Some(events.trials) == e["attempted"].as_u64()
        && events.counts.values().all(|&c| c <= events.trials);
    if fits { events } else { Default::default() }
}

/// A `done` event's `targets` (`{label: [score, seed]}`, the best score per
/// `TestCase::target` label): entries that are not a number and a seed are left out.
fn targets_of(e: &Value) -> seedledger_runner::TargetScores {
    let mut targets = seedledger_runner::TargetScores::default();
    for (label, best) in e["targets"].as_object().into_iter().flatten() {
        if let (Some(score), Some(seed)) = (best[0].as_f64(), best[1].as_u64()) {
            let best = seedledger_runner::BestScore { score, seed };
            targets.best.insert(label.clone(), best);
        }
    }
    targets
}

/// A `lingering` event: a process a trial of `p` left behind was killed; a note says so.
fn on_lingering(p: &Property, e: &Value, bars: &Option<Bars>) {
    let leftover = Leftover {
        pid: e["pid"]
            .as_i64()
            .and_then(|p| i32::try_from(p).ok())
            .unwrap_or(0),
        command: e["command"].as_str().unwrap_or("").to_string(),
    };
    let outlived = e["outlived"].as_str().unwrap_or("its trial");
    hidden(bars, || {
        errln!(
            "{}",
            lingering_note(&[p.id], e["seed"].as_u64(), &leftover, outlived)
        );
    });
}

/// Runs `f` (which prints) with the progress bars hidden, if there are any.
pub(super) fn hidden<R>(bars: &Option<Bars>, f: impl FnOnce() -> R) -> R {
    match bars {
        Some(bars) => bars.suspend(f),
        None => f(),
    }
}
