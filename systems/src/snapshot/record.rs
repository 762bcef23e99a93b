//! The plain records snapshots and replays are made of, and their conversions to and from
//! horde's types. The file format is these records encoded with postcard: changing a record
//! changes the format, so [`super::SNAPSHOT_VERSION`] must change with it.

use glam::Vec2;
use horde_core::{
    Agent, Cell, CostTable, FlowConfig, ForceField, ForceKind, GoalSet, GroupId, KnockbackParams,
    Layer, MAX_SIZE_CLASSES, SteeringConfig, Terrain, UnitSpec,
};
use serde::{Deserialize, Serialize};

use crate::config::Navigation;
use crate::config::SimConfig;

/// `Vec2` as two floats (bit-exact: NaN payloads survive).
pub(crate) type V2 = [f32; 2];

pub(crate) fn v2(v: Vec2) -> V2 {
    [v.x, v.y]
}

pub(crate) fn vec2(v: V2) -> Vec2 {
    Vec2::new(v[0], v[1])
}

/// Every setting but the thread count (results do not depend on it; the loader picks it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConfigRecord {
    pub seed: u64,
    pub batch_size: u64,
    pub probe_length: f32,
    pub probe_inflate: f32,
    pub fan_step: f32,
    pub fan_steps: u32,
    pub avoid_weight: f32,
    pub separation_weight: f32,
    pub separation_push: f32,
    pub separation_range: f32,
    pub jitter: f32,
    pub arrival_distance: f32,
    pub slow_distance: f32,
    pub max_external_speed: f32,
    pub stun_threshold: f32,
    pub stun_per_impulse: f32,
    pub max_stun: f32,
    pub drag: f32,
    pub slippery_drag: f32,
    pub snap_speed: f32,
    pub line_of_sight_radius: u32,
    /// 0 flat, 1 hierarchical.
    pub navigation: u8,
    pub contact_passes: u32,
    pub contact_relaxation: f32,
    /// Added in snapshot version 7.
    pub size_classes: u8,
}

impl ConfigRecord {
    pub fn from_config(c: &SimConfig) -> Self {
        let s = &c.steering;
        let k = &c.knockback;
        Self {
            seed: c.seed,
            batch_size: c.batch_size as u64,
            probe_length: s.probe_length,
            probe_inflate: s.probe_inflate,
            fan_step: s.fan_step,
            fan_steps: s.fan_steps,
            avoid_weight: s.avoid_weight,
            separation_weight: s.separation_weight,
            separation_push: s.separation_push,
            separation_range: s.separation_range,
            jitter: s.jitter,
            arrival_distance: s.arrival_distance,
            slow_distance: s.slow_distance,
            max_external_speed: k.max_external_speed,
            stun_threshold: k.stun_threshold,
            stun_per_impulse: k.stun_per_impulse,
            max_stun: k.max_stun,
            drag: k.drag,
            slippery_drag: k.slippery_drag,
            snap_speed: k.snap_speed,
            line_of_sight_radius: c.flow.line_of_sight_radius,
            navigation: match c.navigation {
                Navigation::Flat => 0,
                Navigation::Hierarchical => 1,
            },
            contact_passes: c.contacts.passes,
            contact_relaxation: c.contacts.relaxation,
            size_classes: c.size_classes,
        }
    }

    /// The names of the settings other than the seed that differ between `self` and
    /// `other` (bit for bit).
    pub fn differing_settings(&self, other: &Self) -> Vec<&'static str> {
        let mut out = Vec::new();
        macro_rules! compare {
            ($($field:ident),*) => {
                $(
                    if self.$field.to_le_bytes() != other.$field.to_le_bytes() {
                        out.push(stringify!($field));
                    }
                )*
            };
        }
        compare!(
            batch_size,
            probe_length,
            probe_inflate,
            fan_step,
            fan_steps,
            avoid_weight,
            separation_weight,
            separation_push,
            separation_range,
            jitter,
            arrival_distance,
            slow_distance,
            max_external_speed,
            stun_threshold,
            stun_per_impulse,
            max_stun,
            drag,
            slippery_drag,
            snap_speed,
            line_of_sight_radius,
            navigation,
            contact_passes,
            contact_relaxation,
            size_classes
        );
        out
    }

    /// The navigation byte, checked.
    pub fn check_navigation(&self) -> Result<(), String> {
        if self.navigation > 1 {
            return Err(format!(
                "navigation {} does not exist (0 flat, 1 hierarchical)",
                self.navigation
            ));
        }
        Ok(())
    }

    /// The config with `threads` threads; the caller validates it.
    pub fn to_config(&self, threads: usize) -> SimConfig {
        SimConfig {
            seed: self.seed,
            threads,
            batch_size: usize::try_from(self.batch_size).unwrap_or(usize::MAX),
            steering: SteeringConfig {
                probe_length: self.probe_length,
                probe_inflate: self.probe_inflate,
                fan_step: self.fan_step,
                fan_steps: self.fan_steps,
                avoid_weight: self.avoid_weight,
                separation_weight: self.separation_weight,
                separation_push: self.separation_push,
                separation_range: self.separation_range,
                jitter: self.jitter,
                arrival_distance: self.arrival_distance,
                slow_distance: self.slow_distance,
            },
            knockback: KnockbackParams {
                max_external_speed: self.max_external_speed,
                stun_threshold: self.stun_threshold,
                stun_per_impulse: self.stun_per_impulse,
                max_stun: self.max_stun,
                drag: self.drag,
                slippery_drag: self.slippery_drag,
                snap_speed: self.snap_speed,
            },
            flow: FlowConfig {
                line_of_sight_radius: self.line_of_sight_radius,
            },
            navigation: match self.navigation {
                0 => Navigation::Flat,
                _ => Navigation::Hierarchical,
            },
            contacts: crate::config::ContactConfig {
                passes: self.contact_passes,
                relaxation: self.contact_relaxation,
            },
            // Not recorded: it changes what is computed ahead, never a result.
            partial_fields: SimConfig::default().partial_fields,
            size_classes: self.size_classes,
        }
    }
}

/// The map: geometry, cost table and the terrain of every cell (edits included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct MapRecord {
    pub width: u32,
    pub height: u32,
    pub cell_size: f32,
    pub origin: V2,
    /// `costs[terrain * Layer::COUNT + layer]`.
    pub costs: Vec<u8>,
    /// Row-major terrain discriminants.
    pub terrain: Vec<u8>,
}

pub(crate) fn cost_table_bytes(table: &CostTable) -> Vec<u8> {
    Terrain::ALL
        .iter()
        .flat_map(|&t| Layer::ALL.map(|l| table.cost(t, l)))
        .collect()
}

pub(crate) fn cost_table(bytes: &[u8]) -> Result<CostTable, String> {
    if bytes.len() != Terrain::COUNT * Layer::COUNT {
        return Err(format!(
            "cost table has {} entries, expected {}",
            bytes.len(),
            Terrain::COUNT * Layer::COUNT
        ));
    }
    let mut table = CostTable::default();
    for (i, &cost) in bytes.iter().enumerate() {
        let (t, l) = (Terrain::ALL[i / Layer::COUNT], Layer::ALL[i % Layer::COUNT]);
        table.set(t, l, cost).map_err(|e| e.to_string())?;
    }
    Ok(table)
}

pub(crate) fn terrain(byte: u8) -> Result<Terrain, String> {
    Terrain::ALL.get(usize::from(byte)).copied().ok_or_else(|| {
        format!(
            "terrain kind {byte} does not exist (0..={})",
            Terrain::COUNT - 1
        )
    })
}

pub(crate) fn layer(byte: u8) -> Result<Layer, String> {
    Layer::ALL
        .get(usize::from(byte))
        .copied()
        .ok_or_else(|| format!("layer {byte} does not exist (0..={})", Layer::COUNT - 1))
}

pub(crate) fn size_class(byte: u8) -> Result<u8, String> {
    if byte < MAX_SIZE_CLASSES {
        Ok(byte)
    } else {
        Err(format!(
            "size class {byte} does not exist (0..={})",
            MAX_SIZE_CLASSES - 1
        ))
    }
}

/// The bit of (layer, size class) in [`GroupRecord::fields`].
pub(crate) const fn field_bit(layer: Layer, class: u8) -> u16 {
    1 << (class as usize * Layer::COUNT + layer as usize)
}

/// The bits of [`GroupRecord::fields`] that name a (layer, size class).
pub(crate) const FIELD_BITS: u16 =
    ((1u32 << (Layer::COUNT * MAX_SIZE_CLASSES as usize)) - 1) as u16;

pub(crate) fn cells(goal: &GoalSet) -> Vec<(u32, u32)> {
    goal.cells().iter().map(|c| (c.x, c.y)).collect()
}

pub(crate) fn goal(cells: &[(u32, u32)]) -> Result<GoalSet, String> {
    GoalSet::new(cells.iter().map(|&(x, y)| Cell::new(x, y))).map_err(|e| e.to_string())
}

/// A group: its goal, and which (layer, size class) pairs have units (and so a field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct GroupRecord {
    pub goal: Vec<(u32, u32)>,
    /// Bit [`field_bit`]`(layer, class)` set: the group has a field for units of that layer
    /// and size class (snapshot version 7; a mask of layers before).
    pub fields: u16,
    /// The frame counter when its goal was last set.
    pub goal_frame: u64,
    /// The fills of the army this group is the first of (empty for the other groups of an
    /// army), in increasing (size class, layer) order (snapshot version 8: per army, with
    /// the rings around the goal; per group and size class inside goal areas before).
    pub fills: Vec<FillRecord>,
}

/// An army's rest order for one layer and size class (`GoalFill`): how far its box reaches
/// and its taken cells when it was last searched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FillRecord {
    pub layer: u8,
    pub class: u8,
    pub reach: u32,
    pub taken: Vec<u32>,
}

/// What a force field does.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum KindRecord {
    Explosion,
    Attractor,
    Push(V2),
    Vortex(bool),
}

/// A force field with every value its builders take.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ForceRecord {
    pub position: V2,
    pub kind: KindRecord,
    pub radius: f32,
    pub strength: f32,
    pub duration: f32,
    pub elapsed: f32,
    pub falloff: u32,
    pub time_decay: f32,
    pub affects_controllable: bool,
}

impl ForceRecord {
    pub fn from_field(f: &ForceField) -> Self {
        Self {
            position: v2(f.position()),
            kind: match f.kind() {
                ForceKind::Explosion => KindRecord::Explosion,
                ForceKind::Attractor => KindRecord::Attractor,
                ForceKind::Push { direction } => KindRecord::Push(v2(direction)),
                ForceKind::Vortex { clockwise } => KindRecord::Vortex(clockwise),
            },
            radius: f.radius(),
            strength: f.strength(),
            duration: f.duration(),
            elapsed: f.elapsed(),
            falloff: f.falloff(),
            time_decay: f.time_decay(),
            affects_controllable: f.affects_controllable(),
        }
    }

    /// The field, through its validating builders.
    pub fn to_field(self) -> Result<ForceField, String> {
        let kind = match self.kind {
            KindRecord::Explosion => ForceKind::Explosion,
            KindRecord::Attractor => ForceKind::Attractor,
            KindRecord::Push(d) => ForceKind::Push { direction: vec2(d) },
            KindRecord::Vortex(clockwise) => ForceKind::Vortex { clockwise },
        };
        let field = ForceField::new(vec2(self.position), kind, self.radius, self.strength)
            .and_then(|f| f.with_duration(self.duration))
            .and_then(|f| f.with_time_decay(self.time_decay))
            .and_then(|f| f.with_elapsed(self.elapsed))
            .map_err(|e| e.to_string())?
            .with_falloff(self.falloff)
            .with_affects_controllable(self.affects_controllable);
        Ok(field)
    }
}

/// A saved force field: the field, its id and whether it was live.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ForceEntryRecord {
    pub id: u64,
    pub live: bool,
    pub field: ForceRecord,
}

/// A unit's parameters, as given to spawn.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpecRecord {
    pub position: V2,
    pub radius: f32,
    pub max_speed: f32,
    pub turn_rate: f32,
    pub mass: f32,
    pub layer: u8,
    pub group: u16,
    pub controllable: bool,
}

impl SpecRecord {
    pub fn from_spec(s: &UnitSpec) -> Self {
        Self {
            position: v2(s.position),
            radius: s.radius,
            max_speed: s.max_speed,
            turn_rate: s.turn_rate,
            mass: s.mass,
            layer: s.layer as u8,
            group: s.group.0,
            controllable: s.controllable,
        }
    }

    pub fn from_agent(a: &Agent, position: Vec2, mass: f32) -> Self {
        Self {
            position: v2(position),
            radius: a.radius,
            max_speed: a.max_speed,
            turn_rate: a.turn_rate,
            mass,
            layer: a.layer as u8,
            group: a.group.0,
            controllable: a.controllable,
        }
    }

    pub fn to_spec(self) -> Result<UnitSpec, String> {
        Ok(UnitSpec {
            position: vec2(self.position),
            radius: self.radius,
            max_speed: self.max_speed,
            turn_rate: self.turn_rate,
            mass: self.mass,
            layer: layer(self.layer)?,
            group: GroupId(self.group),
            controllable: self.controllable,
        })
    }
}

/// One unit with every component horde gives it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct UnitRecord {
    pub id: u32,
    pub spec: SpecRecord,
    pub velocity: V2,
    pub external: V2,
    pub stun: f32,
    pub heading: V2,
    pub avoid_side: i8,
    pub arrived: bool,
    pub settled: bool,
    /// Seconds held in one spot, that spot, and whether it gave way (snapshot version 8).
    pub stall: f32,
    pub anchor: V2,
    /// `GiveWay` as its byte.
    pub yielding: u8,
    pub detour: bool,
    pub arrived_frame: Option<u64>,
    /// Seconds still at rest, and where it fell asleep if it sleeps (snapshot version 9).
    pub still: f32,
    pub asleep: Option<V2>,
    /// The frame it was quarantined in, if it was.
    pub quarantined: Option<u64>,
}

/// Where the simulation came from (see [`super::Origin`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OriginRecord {
    /// `Map::fingerprint` of the map the simulation was created on.
    pub map: u64,
    /// The caller's fingerprint of its scenario (0: none given).
    pub scenario: u64,
    /// The caller's name for it.
    pub name: String,
}

/// The whole simulation state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SnapshotRecord {
    /// Where it came from (added in snapshot version 6).
    pub origin: OriginRecord,
    pub frame: u64,
    pub next_unit: u32,
    pub config: ConfigRecord,
    pub map: MapRecord,
    /// Side of the neighbour buckets (grows with the largest unit ever spawned).
    pub bucket_size: f32,
    pub groups: Vec<GroupRecord>,
    pub next_force: u64,
    pub forces: Vec<ForceEntryRecord>,
    /// The sector caches of hierarchical navigation (empty with flat navigation).
    pub sector_caches: Vec<SectorCacheRecord>,
    /// What callers did since the last frame that wakes sleeping units at the next one:
    /// discs (centre, radius) around terrain edits and despawned units, and whether the
    /// terrain changed (snapshot version 9).
    pub wake_discs: Vec<(V2, f32)>,
    pub terrain_edited: bool,
    /// Units in the world's iteration order (which the stages' results depend on), the
    /// quarantined ones last.
    pub units: Vec<UnitRecord>,
}

/// One (group, layer, size class)'s cached sector fields and estimates (hierarchical
/// navigation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SectorCacheRecord {
    pub group: u16,
    pub layer: u8,
    /// The size class (added in snapshot version 7).
    pub class: u8,
    pub goal: Vec<(u32, u32)>,
    pub frame: u64,
    pub fields: Vec<(u32, u64, Vec<u8>)>,
    /// Per field, in the same order: lowest value, and every cell's value near the goals
    /// (added in snapshot version 2).
    pub distances: Vec<(u32, Vec<u32>)>,
    pub estimates: Vec<(u32, u64, Vec<u32>)>,
}
