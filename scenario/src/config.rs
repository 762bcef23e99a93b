//! The `[config]` table of a scenario file: the simulation's settings ([`SimConfig`]), each
//! key its path in `SimConfig` (`steering.jitter` is `jitter` in `[config.steering]`). The
//! keys and their ranges are the settings' own ([`horde::settings::SETTINGS`]); an unknown
//! key is refused like everywhere in the file, a value of the wrong type or out of its range
//! names its key, its line and what it must be.

use std::ops::Range;

use horde::SimConfig;
use horde::settings::{Kind, Place, Range as Accepts, SETTINGS, Setting, Value};
use toml::Spanned;

use crate::ctx::Ctx;
use crate::error::{ScenarioError, ScenarioErrorKind};
use crate::raw::RawConfig;

/// `config` with the `[config]` table's values applied, each checked as the simulation
/// checks it.
pub(super) fn apply(
    ctx: &Ctx<'_>,
    raw: &Spanned<RawConfig>,
    mut config: SimConfig,
) -> Result<SimConfig, ScenarioError> {
    for (key, span, value) in &raw.get_ref().entries {
        let name = format!("config.{key}");
        let setting = Setting::at_key(key)
            .filter(|s| s.is_in(Place::Scenario))
            .ok_or_else(|| unknown(ctx, span, &name))?;
        let refused = |detail: String| ctx.bad(span.clone(), &name, detail);
        let written = written(ctx, span);
        let value = read(setting, value, written).map_err(&refused)?;
        setting
            .apply(&mut config, value)
            .map_err(|e| refused(format!("expected {}, found {written}", e.expected)))?;
    }
    // What the table does not hold (the seed, the thread count) is checked too.
    config
        .validate()
        .map_err(|e| ctx.bad(raw.span(), "config", e.to_string()))?;
    Ok(config)
}

fn unknown(ctx: &Ctx<'_>, span: &Range<usize>, name: &str) -> ScenarioError {
    let keys: Vec<&str> = SETTINGS
        .iter()
        .filter(|s| s.is_in(Place::Scenario))
        .map(|s| s.key)
        .collect();
    ctx.error(
        Some(span.clone()),
        Some(name.to_owned()),
        ScenarioErrorKind::UnknownKey,
        format!("unknown key `{name}`, expected one of {}", keys.join(", ")),
    )
}

/// The value's text as the file writes it.
fn written<'a>(ctx: &Ctx<'a>, span: &Range<usize>) -> &'a str {
    let start = ctx.original(span.start);
    ctx.text.get(start..start + span.len()).unwrap_or("").trim()
}

/// The TOML value as the setting's value: a name for a choice, a bool for a switch, an
/// integer for a count, a number for a real.
fn read(setting: &Setting, value: &toml::Value, written: &str) -> Result<Value, String> {
    let found = |what: &str| format!("expected {what}, found {written}");
    match (setting.range, setting.kind, value) {
        (Accepts::Choice(names), _, toml::Value::String(s)) => names
            .iter()
            .position(|n| n == s)
            .map(|i| Value::Int(i as u64))
            .ok_or_else(|| found(&quoted(names))),
        (Accepts::Choice(names), _, _) => Err(found(&quoted(names))),
        (Accepts::Flag, _, toml::Value::Boolean(on)) => Ok(Value::Int(u64::from(*on))),
        (Accepts::Flag, _, _) => Err(found("true or false")),
        (_, Kind::Int { .. }, toml::Value::Integer(i)) => u64::try_from(*i)
            .map(Value::Int)
            .map_err(|_| found(&setting.range.describe(setting.kind))),
        (_, Kind::Int { .. }, _) => Err(found("an integer")),
        (_, Kind::Real, toml::Value::Float(x)) => Ok(Value::Real(*x as f32)),
        (_, Kind::Real, toml::Value::Integer(i)) => Ok(Value::Real(*i as f32)),
        (_, Kind::Real, _) => Err(found("a number")),
    }
}

/// `"flat" or "hierarchical"`.
fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(" or ")
}
