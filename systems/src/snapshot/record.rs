//! The plain records snapshots and replays are made of, and their conversions to and from
//! horde's types. The file format is these records encoded with postcard: changing a record
//! changes the format, so [`super::SNAPSHOT_VERSION`] must change with it (settings are saved
//! by name, so adding one does not).

use glam::Vec2;
use horde_core::config::{Place, Setting, Value};
use horde_core::{
    Agent, Cell, CostTable, ForceField, ForceKind, GoalSet, GroupId, Layer, MAX_SIZE_CLASSES,
    SETTINGS, SimConfig, Terrain, UnitSpec,
};
use serde::{Deserialize, Serialize};

/// `Vec2` as two floats (bit-exact: NaN payloads survive).
pub(crate) type V2 = [f32; 2];

pub(crate) fn v2(v: Vec2) -> V2 {
    [v.x, v.y]
}

pub(crate) fn vec2(v: V2) -> Vec2 {
    Vec2::new(v[0], v[1])
}

/// The settings that change results ([`Place::Snapshot`]), each by its name: a setting this
/// build has and the file lacks reads as its default, one the file has and this build lacks
/// is refused by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConfigRecord {
    pub settings: Vec<SettingRecord>,
}

/// One saved setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SettingRecord {
    pub name: String,
    pub value: ValueRecord,
}

/// [`Value`] as saved (bit-exact: reals keep their bits).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum ValueRecord {
    Int(u64),
    Real(f32),
}

impl From<Value> for ValueRecord {
    fn from(v: Value) -> Self {
        match v {
            Value::Int(i) => ValueRecord::Int(i),
            Value::Real(r) => ValueRecord::Real(r),
        }
    }
}

impl From<ValueRecord> for Value {
    fn from(v: ValueRecord) -> Self {
        match v {
            ValueRecord::Int(i) => Value::Int(i),
            ValueRecord::Real(r) => Value::Real(r),
        }
    }
}

impl ConfigRecord {
    pub fn from_config(c: &SimConfig) -> Self {
        let settings = SETTINGS
            .iter()
            .filter(|s| s.is_in(Place::Snapshot))
            .map(|s| SettingRecord {
                name: s.name.to_owned(),
                value: s.get(c).into(),
            })
            .collect();
        Self { settings }
    }

    /// The config with `threads` threads and the saved settings, each checked; the error
    /// names the first setting refused.
    pub fn to_config(&self, threads: usize) -> Result<SimConfig, String> {
        let mut c = SimConfig {
            threads,
            ..SimConfig::default()
        };
        let mut seen = Vec::with_capacity(self.settings.len());
        for entry in &self.settings {
            let setting = Setting::named(&entry.name)
                .filter(|s| s.is_in(Place::Snapshot))
                .ok_or_else(|| {
                    format!(
                        "settings: {:?} is not a setting this build saves",
                        entry.name
                    )
                })?;
            if seen.contains(&setting.name) {
                return Err(format!("settings: {} is given twice", setting.name));
            }
            seen.push(setting.name);
            setting
                .apply(&mut c, entry.value.into())
                .map_err(|e| format!("settings: {e}"))?;
        }
        Ok(c)
    }
}

/// The names of the saved settings other than the seed that differ between `a` and `b`
/// (bit for bit).
pub(crate) fn differing_settings(a: &SimConfig, b: &SimConfig) -> Vec<&'static str> {
    let bits = |v: Value| match v {
        Value::Int(i) => i,
        Value::Real(r) => u64::from(r.to_bits()),
    };
    SETTINGS
        .iter()
        .filter(|s| s.is_in(Place::Snapshot) && s.name != "seed")
        .filter(|s| bits(s.get(a)) != bits(s.get(b)))
        .map(|s| s.name)
        .collect()
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
    /// The unit it follows and the distance (snapshot version 12).
    pub target: Option<(u32, f32)>,
    /// What the crowd fields of the army this group is the first of were built from, while
    /// it has them (snapshot version 13).
    pub crowd: Option<CrowdRecord>,
    /// Where it stands with it: 0 none, 1 following, 2 lost (gone), 3 lost (out of reach);
    /// and the unit.
    pub target_state: (u8, u32),
    /// The followed unit's cell its goal was last set for, and where the unit stood.
    pub target_seen: Option<((u32, u32), V2)>,
}

impl GroupRecord {
    /// The saved target state.
    pub(crate) fn target_state(&self) -> Result<crate::TargetState, String> {
        let (code, unit) = self.target_state;
        crate::TargetState::from_code(code, horde_core::UnitId(unit))
            .ok_or_else(|| format!("target state {code} is not 0 to 3"))
    }
}

/// An army's rest order for one layer and size class (`GoalFill`): how far its box reaches,
/// its taken cells when it was last searched, and whether the army has stood whole on its
/// goal since it was sent (`GoalFill::whole_on_goal`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FillRecord {
    pub layer: u8,
    pub class: u8,
    pub reach: u32,
    pub taken: Vec<u32>,
    pub whole: bool,
}

/// What an army's crowd fields were built from: the box (first cell, width and height) and
/// its cells of non-zero density as (index in the box, density), in increasing index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CrowdRecord {
    pub min: (u32, u32),
    pub size: (u32, u32),
    pub density: Vec<(u32, u8)>,
}

/// A formation order ([`horde_core::FormationOrder`]): shape 0 a line of `width`, 1 a box,
/// 2 a wedge, 3 the `custom` slots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct OrderRecord {
    pub shape: u8,
    pub width: u32,
    pub custom: Vec<V2>,
    pub spacing: Option<f32>,
    pub facing: Option<V2>,
}

impl OrderRecord {
    pub(crate) fn from_order(order: &horde_core::FormationOrder) -> Self {
        use horde_core::Shape;
        let (shape, width, custom) = match &order.shape {
            Shape::Line { width } => (0, *width, Vec::new()),
            Shape::Box => (1, 0, Vec::new()),
            Shape::Wedge => (2, 0, Vec::new()),
            Shape::Custom(slots) => (3, 0, slots.iter().map(|&s| v2(s)).collect()),
        };
        Self {
            shape,
            width,
            custom,
            spacing: order.spacing,
            facing: order.facing.map(v2),
        }
    }

    pub(crate) fn to_order(&self) -> Result<horde_core::FormationOrder, String> {
        use horde_core::Shape;
        let shape = match self.shape {
            0 => Shape::Line { width: self.width },
            1 => Shape::Box,
            2 => Shape::Wedge,
            3 => Shape::Custom(self.custom.iter().map(|&s| vec2(s)).collect()),
            other => return Err(format!("formation shape {other} is not 0 to 3")),
        };
        let order = horde_core::FormationOrder {
            shape,
            spacing: self.spacing,
            facing: self.facing.map(vec2),
        };
        order.validate().map_err(|e| e.to_string())?;
        Ok(order)
    }
}

/// A group's formation as it stands ([`crate::Formation`]); its slots' offsets are made
/// again from the order, the spacing and the number of members.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FormationRecord {
    pub group: u16,
    pub order: OrderRecord,
    pub spacing: f32,
    pub width: u32,
    pub slots: Vec<(u32, u32)>,
    pub members: Vec<u32>,
    pub anchor: V2,
    pub heading: V2,
    pub speed: f32,
    pub pace: f32,
    pub radius: f32,
    pub layer: u8,
    pub arrived: bool,
    /// Whether the anchor set off for the group's goal as it is now.
    pub goal_seen: bool,
    pub targets: Vec<V2>,
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
    /// The groups' formations (snapshot version 12).
    pub formations: Vec<FormationRecord>,
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
