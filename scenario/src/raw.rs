//! The scenario file as serde reads it: every value [`Spanned`], so that a check made later
//! can name the value's line. Unknown keys are refused here.

use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use toml::Spanned;

/// One batch of `[[force]]` tables as serde reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawForces {
    #[serde(default)]
    pub(crate) force: Vec<Spanned<RawForce>>,
}

/// The file but its `[[force]]` tables.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario {
    pub(crate) name: Option<String>,
    pub(crate) seed: Option<Spanned<i64>>,
    pub(crate) dt: Option<Spanned<f64>>,
    pub(crate) frames: Option<Spanned<i64>>,
    pub(crate) threads: Option<Spanned<i64>>,
    pub(crate) require_reachable: Option<Spanned<bool>>,
    pub(crate) config: Option<Spanned<RawConfig>>,
    pub(crate) map: Spanned<RawMap>,
    #[serde(default)]
    pub(crate) group: Vec<Spanned<RawGroup>>,
    #[serde(default)]
    pub(crate) force: Vec<Spanned<RawForce>>,
    #[serde(default)]
    pub(crate) terrain_edit: Vec<Spanned<RawTerrainEdit>>,
    #[serde(default)]
    pub(crate) goal_change: Vec<Spanned<RawGoalChange>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMap {
    pub(crate) file: Option<Spanned<String>>,
    pub(crate) rows: Option<Spanned<String>>,
    pub(crate) generate: Option<Spanned<RawGenerate>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGenerate {
    pub(crate) seed: Option<Spanned<i64>>,
    pub(crate) width: Spanned<i64>,
    pub(crate) height: Spanned<i64>,
    pub(crate) cells_per_tile: Option<Spanned<i64>>,
    pub(crate) guarantee_reachable: Option<bool>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRect {
    pub(crate) x: i64,
    pub(crate) y: i64,
    pub(crate) w: i64,
    pub(crate) h: i64,
}

/// A cell `[x, y]` or a named site of the map.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum RawPlace {
    Cell([i64; 2]),
    Site(String),
}

/// One number, or a list cycled through the group's units.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    One(f64),
    Many(Vec<f64>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGroup {
    pub(crate) name: Option<String>,
    pub(crate) count: Spanned<i64>,
    pub(crate) spawn: Option<Spanned<RawRect>>,
    pub(crate) spawn_near: Option<Spanned<RawPlace>>,
    pub(crate) goal: Option<Spanned<Vec<Spanned<[i64; 2]>>>>,
    pub(crate) goal_area: Option<Spanned<RawRect>>,
    pub(crate) goal_near: Option<Spanned<RawPlace>>,
    pub(crate) goal_cells: Option<Spanned<i64>>,
    pub(crate) goal_site: Option<Spanned<String>>,
    pub(crate) radius: Option<Spanned<OneOrMany>>,
    pub(crate) speed: Option<Spanned<f64>>,
    pub(crate) mass: Option<Spanned<OneOrMany>>,
    pub(crate) layer: Option<Spanned<String>>,
    pub(crate) controllable: Option<bool>,
    pub(crate) formation: Option<Spanned<RawFormation>>,
    pub(crate) follow: Option<Spanned<RawFollow>>,
}

/// A group's `follow` table: the `unit`-th unit (in spawn order) of group `group`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFollow {
    pub(crate) group: RawGroupRef,
    pub(crate) unit: Option<i64>,
    pub(crate) distance: f64,
}

/// A group's `formation` table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFormation {
    pub(crate) shape: String,
    pub(crate) width: Option<i64>,
    pub(crate) spacing: Option<f64>,
    pub(crate) facing: Option<[f64; 2]>,
    pub(crate) slots: Option<Vec<[f64; 2]>>,
}

/// The goal keys of a group or goal change.
pub(crate) struct RawGoal<'a> {
    pub(crate) goal: Option<&'a Spanned<Vec<Spanned<[i64; 2]>>>>,
    pub(crate) goal_area: Option<&'a Spanned<RawRect>>,
    pub(crate) goal_near: Option<&'a Spanned<RawPlace>>,
    pub(crate) goal_cells: Option<&'a Spanned<i64>>,
    pub(crate) goal_site: Option<&'a Spanned<String>>,
}

/// The goal keys of a group and of a goal change, read alike.
macro_rules! goal_keys {
    ($($t:ty),*) => {$(
        impl $t {
            pub(crate) fn goal_keys(&self) -> RawGoal<'_> {
                RawGoal {
                    goal: self.goal.as_ref(),
                    goal_area: self.goal_area.as_ref(),
                    goal_near: self.goal_near.as_ref(),
                    goal_cells: self.goal_cells.as_ref(),
                    goal_site: self.goal_site.as_ref(),
                }
            }
        }
    )*};
}
goal_keys!(RawGroup, RawGoalChange);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawForce {
    pub(crate) kind: Spanned<String>,
    pub(crate) x: Spanned<f64>,
    pub(crate) y: Spanned<f64>,
    pub(crate) radius: Spanned<f64>,
    pub(crate) strength: Spanned<f64>,
    pub(crate) duration: Option<Spanned<f64>>,
    pub(crate) falloff: Option<Spanned<i64>>,
    pub(crate) time_decay: Option<Spanned<f64>>,
    pub(crate) affects_controllable: Option<bool>,
    pub(crate) direction: Option<Spanned<[f64; 2]>>,
    pub(crate) clockwise: Option<Spanned<bool>>,
    pub(crate) at: Option<Spanned<f64>>,
    pub(crate) frame: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTerrainEdit {
    pub(crate) cells: Option<Spanned<Vec<Spanned<[i64; 2]>>>>,
    pub(crate) rect: Option<Spanned<RawRect>>,
    pub(crate) first_of: Option<Spanned<String>>,
    pub(crate) terrain: Spanned<String>,
    pub(crate) time: Option<Spanned<f64>>,
    pub(crate) frame: Option<Spanned<i64>>,
}

/// A group by index (from 0, in file order) or by name.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum RawGroupRef {
    Index(i64),
    Name(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGoalChange {
    pub(crate) group: Spanned<RawGroupRef>,
    pub(crate) goal: Option<Spanned<Vec<Spanned<[i64; 2]>>>>,
    pub(crate) goal_area: Option<Spanned<RawRect>>,
    pub(crate) goal_near: Option<Spanned<RawPlace>>,
    pub(crate) goal_cells: Option<Spanned<i64>>,
    pub(crate) goal_site: Option<Spanned<String>>,
    pub(crate) time: Option<Spanned<f64>>,
    pub(crate) frame: Option<Spanned<i64>>,
}

/// The `[config]` table: every key with where it stands and its value, a sub-table's keys
/// under the table's name (`steering.jitter` for `jitter` in `[config.steering]`). Which keys
/// exist is the settings' business (`config.rs`), not serde's.
pub(crate) struct RawConfig {
    pub(crate) entries: Vec<(String, Range<usize>, toml::Value)>,
}

/// A `[config]` value: a sub-table's keys or one value.
enum RawConfigItem {
    Table(Vec<(String, Spanned<toml::Value>)>),
    Value(toml::Value),
}

impl<'de> Deserialize<'de> for RawConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = RawConfig;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of settings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawConfig, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    let item = map.next_value::<Spanned<RawConfigItem>>()?;
                    let span = item.span();
                    match item.into_inner() {
                        RawConfigItem::Value(v) => entries.push((key, span, v)),
                        RawConfigItem::Table(keys) => {
                            for (name, v) in keys {
                                let span = v.span();
                                entries.push((format!("{key}.{name}"), span, v.into_inner()));
                            }
                        }
                    }
                }
                Ok(RawConfig { entries })
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

impl<'de> Deserialize<'de> for RawConfigItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Item;
        impl<'de> Visitor<'de> for Item {
            type Value = RawConfigItem;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a setting's value or a table of them")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawConfigItem, E> {
                Ok(RawConfigItem::Value(toml::Value::Boolean(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawConfigItem, E> {
                Ok(RawConfigItem::Value(toml::Value::Integer(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawConfigItem, E> {
                let v = i64::try_from(v).map_err(|_| E::custom("integer out of range"))?;
                Ok(RawConfigItem::Value(toml::Value::Integer(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawConfigItem, E> {
                Ok(RawConfigItem::Value(toml::Value::Float(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawConfigItem, E> {
                Ok(RawConfigItem::Value(toml::Value::String(v.to_owned())))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<RawConfigItem, A::Error> {
                let v = toml::Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                Ok(RawConfigItem::Value(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawConfigItem, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    keys.push((key, map.next_value::<Spanned<toml::Value>>()?));
                }
                Ok(RawConfigItem::Table(keys))
            }
        }
        deserializer.deserialize_any(Item)
    }
}
