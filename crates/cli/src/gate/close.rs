//! `gate close`, `gate close --verify` and `gate counts`: receipts closed, checked against their rows, counted per patch.

use super::*;

pub(super) fn close(args: &CloseArgs) -> ExitStatus {
    let mut worst = ExitStatus::Success;
    for file in &args.files {
        match read_receipt(file) {
            Ok(ReadReceipt { shown, closing, .. }) => {
                let eligible = closing.status == CloseStatus::FreezeEligible;
                if !eligible {
                    worst = worst.max(ExitStatus::No);
                }
                let verified = args.verify.then(|| super::reading::verify_beside(file));
                if let Some(Err(_)) = &verified {
                    worst = worst.max(ExitStatus::No);
                }
                match args.format {
                    Format::Human => {
                        if eligible {
                            out_line(&format!("{shown}: {}", closing.status));
                        } else {
                            out_line(&format!("{shown}: {} ({})", closing.status, closing.detail));
                        }
                        match &verified {
                            Some(Ok(agrees)) => {
                                out_line(&format!("{shown}: rows agree ({agrees})"))
                            }
                            Some(Err(why)) => out_line(&format!("{shown}: rows disagree: {why}")),
                            None => {}
                        }
                    }
                    Format::Json => json::print(&CloseLine {
                        file: &shown,
                        status: Some(closing.status.as_str()),
                        detail: Some(&closing.detail),
                        verified: verified.as_ref().map(Result::is_ok),
                        disagreement: verified
                            .as_ref()
                            .map(|v| v.as_ref().err().map(String::as_str)),
                        error: None,
                    }),
                }
            }
            Err(message) => {
                worst = ExitStatus::Error;
                err_line(&format!("error: {message}"));
                if args.format == Format::Json {
                    let shown = file.display().to_string();
                    json::print(&CloseLine {
                        file: &shown,
                        status: None,
                        detail: None,
                        verified: None,
                        disagreement: None,
                        error: Some(&message),
                    });
                }
            }
        }
    }
    worst
}

pub(super) fn counts(args: &CountsArgs) -> ExitStatus {
    let mut errors = false;
    let mut read = Vec::new();
    for file in &args.files {
        match read_receipt(file) {
            Ok(r) => match r.patch_id.clone() {
                Some(patch_id) => read.push((patch_id, r)),
                None => {
                    errors = true;
                    err_line(&format!("error: {}", no_patch_id(&r.shown)));
                }
            },
            Err(message) => {
                errors = true;
                err_line(&format!("error: {message}"));
            }
        }
    }
    let mut currents = Currents::new(
        &args
            .root
            .clone()
            .unwrap_or_else(crate::common::discover_root),
    );
    let mut judged = Vec::with_capacity(read.len());
    for (patch_id, r) in &read {
        let retired = retirement(&mut currents, r);
        if let Some(why) = retired {
            err_line(&format!(
                "note: patch `{patch_id}`: receipt `{}` is {why}: listed, never counted as evidence",
                r.shown
            ));
        } else if r.closing.status.is_open() {
            err_line(&format!(
                "note: patch `{patch_id}`: receipt `{}` is open: {} ({})",
                r.shown, r.closing.status, r.closing.detail
            ));
        }
        judged.push((patch_id.as_str(), r.closing.status, retired.is_some()));
    }
    let counts = patch_counts(judged);
    let mut any_open = false;
    for c in &counts {
        any_open |= !c.freeze_enabled();
        match args.format {
            Format::Human => out_line(&format!(
                "{}: open {}, closed failures {}, budget passes {}{}; freeze path {}",
                c.patch_id,
                c.open_receipts,
                c.closed_failures,
                c.budget_passes,
                if c.retired > 0 {
                    format!(", retired {}", c.retired)
                } else {
                    String::new()
                },
                if c.freeze_enabled() {
                    "enabled"
                } else {
                    "disabled"
                }
            )),
            Format::Json => json::print(&CountsLine {
                patch_id: &c.patch_id,
                open_receipts: c.open_receipts,
                closed_failures: c.closed_failures,
                budget_passes: c.budget_passes,
                retired_receipts: c.retired,
                freeze_enabled: c.freeze_enabled(),
            }),
        }
    }
    if errors {
        ExitStatus::Error
    } else if any_open {
        ExitStatus::No
    } else {
        ExitStatus::Success
    }
}
