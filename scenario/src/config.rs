//! The `[config]` table of a scenario file: the simulation's settings ([`SimConfig`]), each
//! key named as the field it sets (documented in `docs/scenario.md`). Unknown keys are
//! refused like everywhere in the file; a value out of its range names its key, its line
//! and the range, as [`SimConfig::validate`] states it.

use std::ops::Range;

use horde::{ConfigError, Navigation, SimConfig};
use toml::Spanned;

use crate::ctx::{Ctx, integer_in};
use crate::error::ScenarioError;
use crate::raw::RawConfig;

/// Where each key given in the table stands, to name it when its value is refused.
#[derive(Default)]
struct Spans(Vec<(&'static str, Range<usize>)>);

impl Spans {
    fn find(&self, key: &str) -> Option<Range<usize>> {
        self.0
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, s)| s.clone())
    }
}

/// Copies the listed number keys of `$raw` into the same-named fields of `$into`, noting each
/// key's place under `$table`.
macro_rules! numbers {
    ($raw:expr, $into:expr, $spans:expr, $table:literal, [$($field:ident),* $(,)?]) => {
        $(
            if let Some(v) = &$raw.$field {
                $into.$field = *v.get_ref() as f32;
                $spans.0.push((concat!($table, ".", stringify!($field)), v.span()));
            }
        )*
    };
}

/// `config` with the `[config]` table's values applied, checked as the simulation checks
/// them.
pub(super) fn apply(
    ctx: &Ctx<'_>,
    raw: &Spanned<RawConfig>,
    mut config: SimConfig,
) -> Result<SimConfig, ScenarioError> {
    let table = raw.span();
    let raw = raw.get_ref();
    let mut spans = Spans::default();
    if let Some(n) = &raw.navigation {
        config.navigation = match n.get_ref().as_str() {
            "flat" => Navigation::Flat,
            "hierarchical" => Navigation::Hierarchical,
            other => {
                return Err(ctx.bad(
                    n.span(),
                    "config.navigation",
                    format!("expected \"flat\" or \"hierarchical\", found {other:?}"),
                ));
            }
        };
    }
    if let Some(on) = raw.partial_fields {
        config.partial_fields = on;
    }
    if let Some(n) = &raw.size_classes {
        let max = i64::from(horde::fields::MAX_SIZE_CLASSES);
        let key = "config.size_classes";
        config.size_classes = integer_in(ctx, n, key, "a number of size classes", 1, max)? as u8;
    }
    if let Some(b) = &raw.batch_size {
        let max = i64::from(u32::MAX);
        config.batch_size =
            integer_in(ctx, b, "config.batch_size", "a batch size", 1, max)? as usize;
    }
    if let Some(r) = &raw.line_of_sight_radius {
        let max = i64::from(u32::MAX);
        let key = "config.line_of_sight_radius";
        config.flow.line_of_sight_radius =
            integer_in(ctx, r, key, "a radius in cells", 0, max)? as u32;
    }
    if let Some(s) = &raw.steering {
        numbers!(
            s,
            config.steering,
            spans,
            "steering",
            [
                probe_length,
                probe_inflate,
                fan_step,
                avoid_weight,
                separation_weight,
                separation_push,
                separation_range,
                jitter,
                arrival_distance,
                slow_distance,
            ]
        );
        if let Some(n) = &s.fan_steps {
            let key = "config.steering.fan_steps";
            config.steering.fan_steps = integer_in(ctx, n, key, "a step count", 0, 180)? as u32;
        }
    }
    if let Some(c) = &raw.contacts {
        numbers!(c, config.contacts, spans, "contacts", [relaxation]);
        if let Some(n) = &c.passes {
            let max = i64::from(horde::steering::ContactConfig::MAX_PASSES);
            let key = "config.contacts.passes";
            config.contacts.passes = integer_in(ctx, n, key, "a pass count", 0, max)? as u32;
        }
    }
    if let Some(k) = &raw.knockback {
        numbers!(
            k,
            config.knockback,
            spans,
            "knockback",
            [
                max_external_speed,
                stun_threshold,
                stun_per_impulse,
                max_stun,
                drag,
                slippery_drag,
                snap_speed,
            ]
        );
    }
    config.validate().map_err(|e| {
        let key = match &e {
            ConfigError::Steering(s) => format!("steering.{}", s.name),
            ConfigError::Knockback(k) => format!("knockback.{}", k.name),
            ConfigError::ContactRelaxation(_) => "contacts.relaxation".into(),
            _ => String::new(),
        };
        let span = spans.find(&key).unwrap_or(table);
        let key = if key.is_empty() {
            "config".into()
        } else {
            format!("config.{key}")
        };
        ctx.bad(span, &key, e.to_string())
    })?;
    Ok(config)
}
