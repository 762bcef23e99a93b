//! Snapshots: the whole simulation state in a versioned, checksummed binary file, and back.
//!
//! A [`Snapshot`] holds the map (terrain after every edit, cost table, geometry), the
//! settings (all but the thread count, which results do not depend on), the groups and their
//! goals, the force fields (with their ages and ids), every unit with all of horde's
//! components (quarantined ones too), the frame number and the unit counter. Components the
//! caller added to its units are the caller's to save, keyed by [`UnitId`](horde_core::UnitId);
//! [`Horde::from_snapshot_with`](crate::Horde::from_snapshot_with) puts them back. The per-unit random numbers
//! come from `(seed, unit id, frame)`, so the seed and the frame are the whole random state.
//! Flow fields, clearance and the neighbour buckets are not saved: they are functions of the
//! above (the fields are exact, so a rebuilt field equals a repaired one bit for bit).
//!
//! Units are saved in the world's iteration order and restored in it, because the order in
//! which neighbours are summed is part of the result. A simulation restored from a snapshot
//! therefore continues with the same state hash, frame by frame, as the one that was saved,
//! on any thread count (`tests/snapshots.rs`).
//!
//! The file layout is described in [`container`](self); [`Snapshot::save`] writes atomically.

pub(crate) mod container;
pub(crate) mod record;
mod replay;

use std::path::Path;

use horde_core::hierarchy::DEFAULT_SECTOR_SIZE;
use horde_core::{GoalFill, Grid, Map, SectorCache, SectorGrid, SpatialGrid, Terrain};

pub use container::{FileError, FileKind, MAX_SNAPSHOT_FILE_BYTES, write_atomic};
use record::{MapRecord, OriginRecord, SectorCacheRecord, SnapshotRecord, UnitRecord, vec2};
pub(crate) use replay::{CommandRecord, ReplayRecord};
pub use replay::{REPLAY_VERSION, Replay};

/// The snapshot format version this build reads and writes (2: hierarchical sector caches
/// also hold their fields' distances, which arrival uses; 3: the contact settings; 6: the
/// [`Origin`], and quarantined units saved whatever they hold; 7: the size classes, and
/// sector caches per size class; 8: each army's rest order, each unit's stall and giving
/// way; 9: each unit's stillness and sleep).
pub const SNAPSHOT_VERSION: u32 = 13;

/// The longest [`Origin::name`] a snapshot holds, in bytes (longer names are cut).
pub const MAX_ORIGIN_NAME_BYTES: usize = 256;

/// Where a simulation came from, saved in its snapshots so that a snapshot resumed into
/// another run is detected ([`Snapshot::differences`]): the fingerprint of the map it was
/// created on ([`Map::fingerprint`], taken by [`Horde::new`](crate::Horde::new): the terrain before any edit,
/// the cost table, the geometry) and a fingerprint and name of the scenario, which the
/// caller gives ([`Horde::set_scenario`](crate::Horde::set_scenario); `horde run` hashes the whole initial state and the
/// plan's events). A restored simulation keeps the snapshot's origin.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Origin {
    /// [`Map::fingerprint`] of the map the simulation was created on.
    pub map: u64,
    /// The caller's fingerprint of its scenario; 0 when none was given.
    pub scenario: u64,
    /// The caller's name of its scenario (at most [`MAX_ORIGIN_NAME_BYTES`]).
    pub name: String,
}

impl Origin {
    pub(crate) fn record(&self) -> OriginRecord {
        OriginRecord {
            map: self.map,
            scenario: self.scenario,
            name: self.name.clone(),
        }
    }

    pub(crate) fn from_record(r: &OriginRecord) -> Self {
        Self {
            map: r.map,
            scenario: r.scenario,
            name: r.name.clone(),
        }
    }
}

/// `name` cut to at most [`MAX_ORIGIN_NAME_BYTES`], at a character boundary.
pub(crate) fn origin_name(name: &str) -> String {
    let mut end = name.len().min(MAX_ORIGIN_NAME_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// The whole state of a simulation at the start of a frame (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub(crate) record: SnapshotRecord,
}

impl Snapshot {
    /// Number of frames run before the snapshot was taken (the next frame's number).
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.record.frame
    }

    /// Number of units saved (quarantined ones included).
    #[must_use]
    pub fn unit_count(&self) -> usize {
        self.record.units.len()
    }

    /// Map width and height in cells.
    #[must_use]
    pub fn map_size(&self) -> (u32, u32) {
        (self.record.map.width, self.record.map.height)
    }

    /// Where the simulation the snapshot was taken of came from.
    #[must_use]
    pub fn origin(&self) -> Origin {
        Origin::from_record(&self.record.origin)
    }

    /// The snapshot as the bytes of a snapshot file.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FileError> {
        container::encode(FileKind::Snapshot, SNAPSHOT_VERSION, &self.record)
    }

    /// Reads the bytes of a snapshot file, checking the header, the checksum and every value.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FileError> {
        let kind = FileKind::Snapshot;
        let payload = container::unwrap(kind, SNAPSHOT_VERSION, bytes)?;
        let record: SnapshotRecord = decode(kind, payload)?;
        validate(&record).map_err(|detail| FileError::Invalid { kind, detail })?;
        Ok(Self { record })
    }

    /// Writes the snapshot to `path` atomically (see [`write_atomic`]).
    pub fn save(&self, path: &Path) -> Result<(), FileError> {
        container::save(path, &self.to_bytes()?)
    }

    /// Reads the snapshot file at `path`; errors name the file.
    pub fn load(path: &Path) -> Result<Self, FileError> {
        container::load(path, Self::from_bytes)
    }

    pub(crate) fn record(&self) -> &SnapshotRecord {
        &self.record
    }

    pub(crate) fn from_record(record: SnapshotRecord) -> Self {
        Self { record }
    }
}

/// Decodes a postcard payload that must be used up exactly.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    kind: FileKind,
    payload: &[u8],
) -> Result<T, FileError> {
    let (value, rest) = postcard::take_from_bytes(payload).map_err(|e| FileError::Malformed {
        kind,
        detail: e.to_string(),
    })?;
    if !rest.is_empty() {
        return Err(FileError::Malformed {
            kind,
            detail: format!("{} bytes left over after the contents", rest.len()),
        });
    }
    Ok(value)
}

/// Checks every value of a decoded snapshot; the error says which value and why.
pub(crate) fn validate(r: &SnapshotRecord) -> Result<(), String> {
    if r.origin.name.len() > MAX_ORIGIN_NAME_BYTES {
        return Err(format!(
            "origin: a scenario name of {} bytes (at most {MAX_ORIGIN_NAME_BYTES})",
            r.origin.name.len()
        ));
    }
    let config = r.config.to_config(1)?;
    let grid = check_map(&r.map)?;
    if !(r.bucket_size.is_finite() && r.bucket_size > 0.0) {
        return Err(format!(
            "bucket size {} must be finite and > 0",
            r.bucket_size
        ));
    }
    let smallest = crate::frame::bucket_side(0.5, config.steering.separation_range);
    for size in [smallest, r.bucket_size] {
        SpatialGrid::new(&grid, size).map_err(|e| format!("bucket size {size}: {e}"))?;
    }
    for (i, g) in r.groups.iter().enumerate() {
        goal_on_map(&g.goal, &grid).map_err(|e| format!("group {i}: {e}"))?;
        if g.goal_frame > r.frame {
            return Err(format!(
                "group {i}: goal set at frame {}, after the snapshot's frame {}",
                g.goal_frame, r.frame
            ));
        }
        if g.fields & !record::FIELD_BITS != 0 {
            return Err(format!(
                "group {i}: field mask {:#b} names no layer and size class",
                g.fields
            ));
        }
        let first_of_army = r.groups[..i]
            .iter()
            .all(|o| record::goal(&o.goal) != record::goal(&g.goal));
        check_fills(g, first_of_army, &grid).map_err(|e| format!("group {i}: {e}"))?;
        if let Some(c) = &g.crowd {
            check_crowd(c, first_of_army, &grid).map_err(|e| format!("group {i}: {e}"))?;
        }
        g.target_state().map_err(|e| format!("group {i}: {e}"))?;
        if let Some((unit, distance)) = g.target {
            (horde_core::UnitTarget {
                unit: horde_core::UnitId(unit),
                distance,
            })
            .validate()
            .map_err(|e| format!("group {i}: {e}"))?;
        }
        if let Some(((x, y), p)) = g.target_seen
            && (x >= grid.width() || y >= grid.height() || !vec2(p).is_finite())
        {
            return Err(format!("group {i}: its target was seen off the map"));
        }
        // A fill is made on its class's costs, which the map prepares only for the
        // (layer, class) pairs some group has units of.
        for f in &g.fills {
            let layer = record::layer(f.layer)?;
            let bit = record::field_bit(layer, f.class);
            if f.class > 0 && !r.groups.iter().any(|o| o.fields & bit != 0) {
                return Err(format!(
                    "group {i}: a fill is saved for size class {} on layer {}, which has no units",
                    f.class, f.layer
                ));
            }
        }
    }
    let sectors = SectorGrid::new(grid.width(), grid.height(), DEFAULT_SECTOR_SIZE)
        .map_err(|e| format!("sectors: {e}"))?;
    for c in &r.sector_caches {
        let what = format!(
            "sector fields of group {} on layer {} for size class {}",
            c.group, c.layer, c.class
        );
        let layer = record::layer(c.layer).map_err(|e| format!("{what}: {e}"))?;
        let class = record::size_class(c.class).map_err(|e| format!("{what}: {e}"))?;
        let group = r
            .groups
            .get(usize::from(c.group))
            .ok_or_else(|| format!("{what}: the group does not exist"))?;
        if group.fields & record::field_bit(layer, class) == 0 {
            return Err(format!(
                "{what}: the group has no field on that layer for that class"
            ));
        }
        goal_on_map(&c.goal, &grid).map_err(|e| format!("{what}: {e}"))?;
        cache(c)
            .check(&sectors)
            .map_err(|e| format!("{what}: {e}"))?;
    }
    for &(centre, radius) in &r.wake_discs {
        if !(vec2(centre).is_finite() && radius.is_finite() && radius >= 0.0) {
            return Err(format!(
                "a waking disc at {:?} of radius {radius} is not finite",
                centre
            ));
        }
    }
    let mut last_group = None;
    for f in &r.formations {
        if usize::from(f.group) >= r.groups.len() || last_group.is_some_and(|g| f.group <= g) {
            return Err(format!(
                "a formation of group {}: no such group, or not in increasing group order",
                f.group
            ));
        }
        last_group = Some(f.group);
        check_formation(f).map_err(|e| format!("the formation of group {}: {e}", f.group))?;
    }
    let mut previous = None;
    for f in &r.forces {
        f.field
            .to_field()
            .map_err(|e| format!("force field {}: {e}", f.id))?;
        if f.id >= r.next_force || previous.is_some_and(|p| f.id <= p) {
            return Err(format!(
                "force field id {} is out of order or not below the next id {}",
                f.id, r.next_force
            ));
        }
        previous = Some(f.id);
    }
    let mut ids: Vec<u32> = Vec::with_capacity(r.units.len());
    for u in &r.units {
        validate_unit(u, r, &config, &grid).map_err(|e| format!("unit {}: {e}", u.id))?;
        // A quarantined unit may share its id (that may be why it was quarantined).
        if u.quarantined.is_none() {
            ids.push(u.id);
        }
    }
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("unit id {} appears twice", w[0]));
    }
    Ok(())
}

pub(crate) fn cache(c: &SectorCacheRecord) -> SectorCache {
    SectorCache {
        frame: c.frame,
        fields: c.fields.clone(),
        distances: c.distances.clone(),
        estimates: c.estimates.clone(),
    }
}

/// A saved goal that is a goal set with every cell on the map.
/// A group's saved fills: only on the first group of its army, in increasing (size class,
/// layer) order, each for a valid layer and class, with taken cells a fill of its goal
/// with the saved reach accepts ([`GoalFill::check_taken`]). Whether the army has units
/// of that class (so the map prepares its costs) is checked when the fill is restored.
fn check_fills(g: &record::GroupRecord, first_of_army: bool, grid: &Grid) -> Result<(), String> {
    if g.fills.is_empty() {
        return Ok(());
    }
    if !first_of_army {
        return Err("fills are saved for a group that is not the first of its army".into());
    }
    let key = |f: &record::FillRecord| (f.class, f.layer);
    if !g.fills.windows(2).all(|w| key(&w[0]) < key(&w[1])) {
        return Err("fills are not saved in increasing size class and layer order".into());
    }
    let goal = record::goal(&g.goal)?;
    for f in &g.fills {
        let layer = record::layer(f.layer)?;
        let class = record::size_class(f.class)?;
        GoalFill::check_taken(&goal, f.reach, (grid.width(), grid.height()), &f.taken)
            .map_err(|e| format!("the {} fill of size class {class}: {e}", layer.name()))?;
    }
    Ok(())
}

/// A group's saved crowd input: only on the first group of its army, its box inside the
/// map, its cells inside the box in increasing order, each with a density above zero.
fn check_crowd(c: &record::CrowdRecord, first_of_army: bool, grid: &Grid) -> Result<(), String> {
    if !first_of_army {
        return Err(
            "crowd densities are saved for a group that is not the first of its army".into(),
        );
    }
    let ((x, y), (w, h)) = (c.min, c.size);
    let inside = w > 0
        && h > 0
        && u64::from(x) + u64::from(w) <= u64::from(grid.width())
        && u64::from(y) + u64::from(h) <= u64::from(grid.height());
    if !inside {
        return Err(format!(
            "the crowd densities' box ({x}, {y}) {w}x{h} is not inside the {}x{} map",
            grid.width(),
            grid.height()
        ));
    }
    let cells = u64::from(w) * u64::from(h);
    if !c.density.windows(2).all(|p| p[0].0 < p[1].0) {
        return Err("the crowd densities are not saved in increasing cell order".into());
    }
    if let Some(&(i, d)) = c
        .density
        .iter()
        .find(|&&(i, d)| u64::from(i) >= cells || d == 0)
    {
        return Err(format!(
            "crowd density {d} at cell {i} of a box of {cells} cells: expected a cell of the box and a density of 1 to 255"
        ));
    }
    Ok(())
}

/// A saved formation's numbers: a valid order, finite positions and speeds, slots held
/// once each by members in id order.
fn check_formation(f: &record::FormationRecord) -> Result<(), String> {
    let order = f.order.to_order()?;
    record::layer(f.layer)?;
    let finite = [f.anchor, f.heading]
        .into_iter()
        .chain(f.targets.iter().copied());
    if !(finite.flatten().all(f32::is_finite)
        && [f.speed, f.pace, f.radius]
            .iter()
            .all(|v| v.is_finite() && *v >= 0.0))
    {
        return Err("a position, heading or speed is not finite".into());
    }
    let slots = match &order.shape {
        horde_core::Shape::Custom(c) => c.len().min(f.members.len()),
        _ => f.members.len(),
    };
    if !(f.members.is_empty() || f.spacing.is_finite() && f.spacing > 0.0) {
        return Err(format!("spacing {} must be finite and above 0", f.spacing));
    }
    if !f.members.windows(2).all(|w| w[0] < w[1]) || !f.slots.windows(2).all(|w| w[0].0 < w[1].0) {
        return Err("members or slots are not in increasing id order".into());
    }
    let mut taken = vec![false; slots];
    for &(id, slot) in &f.slots {
        let free = taken.get_mut(slot as usize).filter(|t| !**t);
        match free {
            Some(t) if f.members.binary_search(&id).is_ok() => *t = true,
            _ => return Err(format!("unit {id} holds slot {slot}, which is not free")),
        }
    }
    if !(f.targets.is_empty() || f.targets.len() == slots) {
        return Err(format!(
            "{} slot targets for {slots} slots",
            f.targets.len()
        ));
    }
    Ok(())
}

fn goal_on_map(cells: &[(u32, u32)], grid: &Grid) -> Result<(), String> {
    let goal = record::goal(cells)?;
    match goal
        .cells()
        .iter()
        .find(|c| c.x >= grid.width() || c.y >= grid.height())
    {
        Some(c) => Err(format!("goal cell {c} lies outside the map")),
        None => Ok(()),
    }
}

fn validate_unit(
    u: &UnitRecord,
    r: &SnapshotRecord,
    config: &crate::SimConfig,
    grid: &Grid,
) -> Result<(), String> {
    let spec = u.spec.to_spec()?;
    if let Some(frame) = u.quarantined {
        // A quarantined unit holds whatever made it break the rules (a NaN top speed, mass
        // 0, a huge radius, a group that does not exist, an id another unit has): no stage
        // reads it, so only its frame must make sense.
        if frame > r.frame {
            return Err(format!("quarantined in frame {frame}, after the snapshot"));
        }
        return Ok(());
    }
    let goal_frames: Vec<u64> = r.groups.iter().map(|g| g.goal_frame).collect();
    let rules = crate::unit_check::Rules {
        frame: r.frame,
        next_unit: r.next_unit,
        grid,
        goal_frames: &goal_frames,
    };
    let view = crate::unit_check::UnitView {
        id: u.id,
        spec,
        external: vec2(u.external),
        stun: u.stun,
        heading: vec2(u.heading),
        avoid_side: u.avoid_side,
        stall: u.stall,
        anchor: vec2(u.anchor),
        arrived_frame: u.arrived_frame,
        still: u.still,
        asleep: u.asleep.map(vec2),
    };
    crate::unit_check::unit_problem(&view, &rules)?;
    if horde_core::GiveWay::from_u8(u.yielding).is_none() {
        return Err(format!(
            "giving way {} names no kind (0 ..= {})",
            u.yielding,
            2 + horde_core::GiveWay::MAX_HOPS
        ));
    }
    let group = &r.groups[usize::from(spec.group.0)];
    let class = config.size_class(spec.radius, grid.cell_size());
    if group.fields & record::field_bit(spec.layer, class) == 0 {
        return Err(format!(
            "group {} has no {} field for size class {class} (radius {})",
            spec.group.0,
            spec.layer.name(),
            spec.radius
        ));
    }
    let velocity = vec2(u.velocity);
    if !velocity.is_finite() {
        return Err(format!("velocity {velocity} is not finite"));
    }
    Ok(())
}

/// Checks the map record without building the map (no cost fields): its grid, terrain kinds
/// and cost table. Returns the grid.
fn check_map(m: &MapRecord) -> Result<Grid, String> {
    let grid = Grid::new(m.width, m.height)
        .and_then(|g| g.with_placement(m.cell_size, vec2(m.origin)))
        .map_err(|e| format!("map: {e}"))?;
    if m.terrain.len() != grid.len() {
        return Err(format!(
            "map: expected {} terrain cells for the grid, got {}",
            grid.len(),
            m.terrain.len()
        ));
    }
    if let Some(&b) = m
        .terrain
        .iter()
        .find(|&&b| usize::from(b) >= Terrain::COUNT)
    {
        record::terrain(b).map_err(|e| format!("map: {e}"))?;
    }
    record::cost_table(&m.costs).map_err(|e| format!("map: {e}"))?;
    Ok(grid)
}

pub(crate) fn map_from(m: &MapRecord) -> Result<Map, String> {
    let grid = Grid::new(m.width, m.height)
        .and_then(|g| g.with_placement(m.cell_size, vec2(m.origin)))
        .map_err(|e| format!("map: {e}"))?;
    let table = record::cost_table(&m.costs).map_err(|e| format!("map: {e}"))?;
    let terrain = m
        .terrain
        .iter()
        .map(|&b| record::terrain(b))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("map: {e}"))?;
    Map::from_terrain(grid, terrain, table).map_err(|e| format!("map: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulation;
    use glam::Vec2;
    use horde_core::SimConfig;
    use horde_core::{Cell, GoalSet, UnitSpec};

    fn record() -> SnapshotRecord {
        let mut sim =
            Simulation::new(Map::new(Grid::new(8, 8).unwrap()), SimConfig::default()).unwrap();
        let g = sim.add_group(GoalSet::single(Cell::new(6, 6))).unwrap();
        sim.spawn(UnitSpec::at(Vec2::splat(1.5)).with_group(g))
            .unwrap();
        sim.spawn(UnitSpec::at(Vec2::splat(2.5)).with_group(g))
            .unwrap();
        sim.step(0.05).unwrap();
        sim.snapshot().record
    }

    /// A crowd record that does not fit the map, or names a cell twice, out of its box or
    /// with no density, is refused with what was expected.
    #[test]
    fn bad_crowd_densities_are_refused() {
        let good = record::CrowdRecord {
            min: (1, 1),
            size: (4, 3),
            density: vec![(0, 10), (11, 255)],
        };
        let with = |c: record::CrowdRecord| {
            let mut r = record();
            r.groups[0].crowd = Some(c);
            validate(&r)
        };
        assert_eq!(with(good.clone()), Ok(()));
        let cases = [
            (
                record::CrowdRecord {
                    min: (6, 1),
                    ..good.clone()
                },
                "is not inside the 8x8 map",
            ),
            (
                record::CrowdRecord {
                    size: (0, 3),
                    ..good.clone()
                },
                "is not inside",
            ),
            (
                record::CrowdRecord {
                    density: vec![(3, 1), (3, 2)],
                    ..good.clone()
                },
                "increasing cell order",
            ),
            (
                record::CrowdRecord {
                    density: vec![(12, 1)],
                    ..good.clone()
                },
                "expected a cell of the box",
            ),
            (
                record::CrowdRecord {
                    density: vec![(2, 0)],
                    ..good.clone()
                },
                "a density of 1 to 255",
            ),
        ];
        for (c, expected) in cases {
            let e = with(c).unwrap_err();
            assert!(e.contains(expected) && e.contains("group 0"), "{e}");
        }
    }

    /// Settings are saved by name: one a file lacks (saved before the setting existed) reads
    /// as its default, and the others keep their saved values.
    #[test]
    fn a_setting_the_file_lacks_reads_as_its_default() {
        let mut r = record();
        let at = |r: &SnapshotRecord, name: &str| {
            r.config
                .settings
                .iter()
                .position(|s| s.name == name)
                .unwrap()
        };
        let jitter = at(&r, "jitter");
        r.config.settings[jitter].value = record::ValueRecord::Real(0.25);
        let fan_steps = at(&r, "fan_steps");
        r.config.settings.remove(fan_steps);
        let bytes = Snapshot { record: r }.to_bytes().unwrap();
        let config = Snapshot::from_bytes(&bytes)
            .unwrap()
            .record
            .config
            .to_config(1)
            .unwrap();
        assert_eq!(config.steering.jitter, 0.25);
        assert_eq!(
            config.steering.fan_steps,
            SimConfig::default().steering.fan_steps
        );
    }

    /// Every impossible value in an otherwise well-formed file is refused, naming it.
    #[test]
    fn impossible_values_are_refused_by_name() {
        type Edit = Box<dyn Fn(&mut SnapshotRecord)>;
        let cases: Vec<(&str, Edit)> = vec![
            ("radius", Box::new(|r| r.units[0].spec.radius = f32::NAN)),
            ("mass", Box::new(|r| r.units[1].spec.mass = -1.0)),
            (
                "outside the map",
                Box::new(|r| r.units[0].spec.position = [99.0, 1.0]),
            ),
            (
                "velocity",
                Box::new(|r| r.units[0].velocity = [f32::INFINITY, 0.0]),
            ),
            ("stun", Box::new(|r| r.units[0].stun = -2.0)),
            ("avoidance side", Box::new(|r| r.units[0].avoid_side = 0)),
            ("appears twice", Box::new(|r| r.units[1].id = r.units[0].id)),
            ("unit counter", Box::new(|r| r.next_unit = 1)),
            ("group 4", Box::new(|r| r.units[0].spec.group = 4)),
            ("layer 7", Box::new(|r| r.units[0].spec.layer = 7)),
            ("no hover field", Box::new(|r| r.units[0].spec.layer = 1)),
            ("terrain kind 42", Box::new(|r| r.map.terrain[3] = 42)),
            (
                "terrain cells",
                Box::new(|r| r.map.terrain.pop().map(|_| ()).unwrap_or(())),
            ),
            ("cost 0", Box::new(|r| r.map.costs[0] = 0)),
            ("cell size", Box::new(|r| r.map.cell_size = 0.0)),
            (
                "goal cell",
                Box::new(|r| r.groups[0].goal = vec![(100, 100)]),
            ),
            ("at least one", Box::new(|r| r.groups[0].goal.clear())),
            (
                "separation_range",
                Box::new(|r| set_saved(r, "separation_range", record::ValueRecord::Real(f32::NAN))),
            ),
            (
                "\"sepration_range\" is not a setting",
                Box::new(|r| r.config.settings[0].name = "sepration_range".into()),
            ),
            (
                "seed is given twice",
                Box::new(|r| {
                    let seed = r.config.settings[0].clone();
                    r.config.settings.push(seed);
                }),
            ),
            ("bucket size", Box::new(|r| r.bucket_size = f32::INFINITY)),
        ];
        fn set_saved(r: &mut SnapshotRecord, name: &str, value: record::ValueRecord) {
            let entry = r.config.settings.iter_mut().find(|s| s.name == name);
            entry.expect("a saved setting").value = value;
        }
        for (needle, edit) in cases {
            let mut r = record();
            edit(&mut r);
            let bytes = Snapshot { record: r }.to_bytes().unwrap();
            let e = Snapshot::from_bytes(&bytes).unwrap_err();
            assert!(matches!(e, FileError::Invalid { .. }), "{needle}: {e}");
            assert!(e.to_string().contains(needle), "{needle}: {e}");
        }
    }
}
