//! The fast path of reading a witness line: straight into a [`WitnessRow`] (typed fields, no
//! intermediate JSON value), for the rows a runner writes. It accepts a line only when the
//! exact reading would accept it with the same row: any surprise — a repeated key, a field
//! missing, `null`, empty or of another type, a verdict or runner outside its values — makes
//! it give up (`None`), and the exact reading decides and names the problem.

use super::{Runner, Verdict, WitnessRow};
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use std::fmt;

/// The row `line` holds, when the fast path can tell; `None`: read it exactly.
pub(super) fn row(line: &str) -> Option<WitnessRow> {
    serde_json::from_str::<Fast>(line).ok().map(|f| f.0)
}

struct Fast(WitnessRow);

impl<'de> serde::Deserialize<'de> for Fast {
    fn deserialize<D: de::Deserializer<'de>>(de: D) -> Result<Fast, D::Error> {
        de.deserialize_map(RowVisitor)
    }
}

/// The members a row is read from, in the order of `KEYS`.
const KEYS: [&str; 16] = [
    "witness_id",
    "property_id",
    "property_digest",
    "fixture_pin",
    "bound",
    "seed",
    "verdict",
    "signature",
    "runner",
    "freeze_writer",
    "run_id",
    "patch_id",
    "code",
    "replayed_signature",
    "rng",
    "attempt",
];

enum Key {
    Known(usize),
    Other(String),
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Key, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(match KEYS.iter().position(|k| *k == v) {
            Some(i) => Key::Known(i),
            None => Key::Other(v.to_string()),
        })
    }
}

/// A string member that must be one of `words`: its index.
struct OneOf(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for OneOf {
    type Value = usize;
    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<usize, D::Error> {
        de.deserialize_str(self)
    }
}

impl Visitor<'_> for OneOf {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("one of the words")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|w| *w == v)
            .ok_or_else(|| E::custom("another word"))
    }
}

struct RowVisitor;

impl<'de> Visitor<'de> for RowVisitor {
    type Value = Fast;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a witness row")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fast, A::Error> {
        let give_up = || de::Error::custom("read exactly");
        let mut seen = [false; KEYS.len()];
        let mut others: Vec<String> = Vec::new();
        let mut text: [Option<String>; 5] = Default::default();
        let mut signature = None;
        let mut seed = None;
        let mut verdict = None;
        let mut runner = None;
        let mut freeze_writer = None;
        let mut extensions: [Option<String>; 4] = Default::default();
        let mut rng = None;
        let mut attempt = None;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let i = match key {
                Key::Known(i) => i,
                Key::Other(name) => {
                    if others.contains(&name) {
                        return Err(give_up());
                    }
                    others.push(name);
                    map.next_value::<crate::json::Unique>()?;
                    continue;
                }
            };
            if std::mem::replace(&mut seen[i], true) {
                return Err(give_up());
            }
            let non_empty = |s: String| if s.is_empty() { Err(give_up()) } else { Ok(s) };
            match i {
                0..=4 => text[i] = Some(non_empty(map.next_value::<String>()?)?),
                5 => seed = Some(map.next_value::<u64>()?),
                6 => verdict = Some(map.next_value_seed(OneOf(&["pass", "fail"]))?),
                7 => signature = Some(non_empty(map.next_value::<String>()?)?),
                8 => runner = Some(map.next_value_seed(OneOf(&["local", "remote"]))?),
                9 => freeze_writer = Some(map.next_value::<bool>()?),
                // Present, `rng` must be a non-empty string (else: malformed, read exactly).
                14 => rng = Some(non_empty(map.next_value::<String>()?)?),
                // Present, `attempt` must be a replay number (else: malformed, read exactly).
                15 => {
                    let n = map.next_value::<u64>()?;
                    attempt = Some(
                        u32::try_from(n)
                            .ok()
                            .filter(|&n| n >= 1)
                            .ok_or_else(give_up)?,
                    );
                }
                _ => {
                    let crate::json::Unique(v) = map.next_value()?;
                    extensions[i - 10] = v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
                }
            }
        }
        let [
            Some(witness_id),
            Some(property_id),
            Some(property_digest),
            Some(fixture_pin),
            Some(bound),
        ] = text
        else {
            return Err(give_up());
        };
        let (Some(seed), Some(verdict), Some(signature), Some(runner), Some(freeze_writer)) =
            (seed, verdict, signature, runner, freeze_writer)
        else {
            return Err(give_up());
        };
        let [run_id, patch_id, code, replayed_signature] = extensions;
        Ok(Fast(WitnessRow {
            witness_id,
            property_id,
            property_digest,
            fixture_pin,
            bound,
            seed,
            verdict: [Verdict::Pass, Verdict::Fail][verdict],
            signature,
            runner: [Runner::Local, Runner::Remote][runner],
            freeze_writer,
            run_id,
            patch_id,
            code,
            replayed_signature,
            rng,
            attempt,
        }))
    }
}
