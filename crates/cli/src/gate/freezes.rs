//! `gate freezes`: the freeze store listed, each citation with its state and authenticity.

use super::*;

pub(super) fn freezes(args: &FreezesArgs) -> ExitStatus {
    let root = args
        .root
        .clone()
        .unwrap_or_else(crate::common::discover_root);
    let dir = crate::common::store::store_dir(&root, args.store.as_deref());
    if let Some(base) = &args.base {
        return super::store_diff::run(&root, &dir, base);
    }
    let read = crate::common::keys::Roles::load(&root).and_then(|trust| {
        let store = crate::common::store::read_store(&dir, trust.keys()).map_err(|e| anyhow!(e))?;
        Ok((trust, store))
    });
    let (trust, store) = match read {
        Ok(read) => read,
        Err(e) => {
            err_line(&format!("error: {e:#}"));
            return ExitStatus::Error;
        }
    };
    if store.is_empty() && args.format == Format::Human {
        err_line(&format!("note: no citations in `{}`", dir.display()));
    }
    if trust.keys().is_none() && !store.is_empty() {
        err_line(&format!(
            "note: no `{}` declares who may cite: every citation here is an {} (anyone who can write the store can freeze)",
            seedledger_format::TRUST_FILE,
            seedledger_gate::UNAUTHENTICATED
        ));
    }
    let now = match args.at.as_deref().map(parse_rfc3339) {
        None => crate::common::store::now_checked(&store),
        Some(Some(at)) if at >= 0 => Ok(at),
        Some(_) => Err(format!(
            "`--at {}` is not an RFC 3339 time since 1970 such as 2030-01-01T00:00:00Z",
            args.at.as_deref().unwrap_or("")
        )),
    };
    let now = match now {
        Ok(now) => now,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return ExitStatus::Error;
        }
    };
    let mut currents = Currents::new(&root);
    let mut status = ExitStatus::Success;
    for stored in &store {
        let shown = stored.path.display().to_string();
        match &stored.citation {
            Ok((c, auth)) => print_freeze(&shown, c, auth, currents.judge(c, now), args.format),
            Err(e) => {
                status = ExitStatus::Error;
                err_line(&format!("error: citation `{shown}`: {e}"));
                match args.format {
                    Format::Human => out_line(&format!("{shown}: invalid  ({e})")),
                    Format::Json => json::print(&FreezeLine {
                        citation: &shown,
                        state: "invalid",
                        property_id: None,
                        signature: None,
                        expires_at: None,
                        patch_id: None,
                        seed: None,
                        same_seed_review: None,
                        flake: None,
                        authenticity: None,
                        key_id: None,
                        error: Some(e),
                    }),
                }
            }
        }
    }
    status
}

/// One citation that may be honoured, as `gate freezes` lists it.
pub(super) fn print_freeze(
    shown: &str,
    c: &Citation,
    auth: &seedledger_gate::Authenticity,
    state: seedledger_gate::CitationState,
    format: Format,
) {
    match format {
        Format::Human => out_line(&format!(
            "{shown}: {state}  property {} [{}] expires {}, patch {}, same-seed review {}, {}; {}",
            c.property_id,
            c.signature,
            c.expires_at,
            c.patch_id,
            c.same_seed_review.as_str(),
            auth.label(),
            c.flake_label()
        )),
        Format::Json => json::print(&FreezeLine {
            citation: shown,
            state: state.as_str(),
            property_id: Some(&c.property_id),
            signature: Some(&c.signature),
            expires_at: Some(&c.expires_at),
            patch_id: Some(&c.patch_id),
            seed: Some(c.seed),
            same_seed_review: Some(c.same_seed_review.as_str()),
            flake: c.flake.as_ref(),
            authenticity: Some(match auth {
                seedledger_gate::Authenticity::Signed { .. } => "signed",
                seedledger_gate::Authenticity::Unauthenticated => "unauthenticated",
            }),
            key_id: match auth {
                seedledger_gate::Authenticity::Signed { key_id } => Some(key_id),
                seedledger_gate::Authenticity::Unauthenticated => None,
            },
            error: None,
        }),
    }
}
