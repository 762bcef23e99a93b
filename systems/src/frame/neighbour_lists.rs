//! Each unit's neighbours, listed once a frame by the one walk of the 3x3 buckets that
//! steering makes anyway ([`NeighbourLists`]): the body limits of `apply_knockback` and the
//! contact search read the short list instead of walking the buckets again. A packed crowd
//! of radius 0.45 has about thirteen units in those buckets and four or five in a list.

use glam::Vec2;

/// The lists of one batch of steering's query: the units of storage indices
/// `start..start + spans.len()`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ListPart {
    /// Storage index of its first unit.
    pub(crate) start: u32,
    /// Per unit: its first entry, how many (`NO_LIST`: it has none), and its id.
    spans: Vec<(u32, u32, u32)>,
    /// Slots of the neighbour snapshot ([`crate::frame::Neighbours::for_each_candidate_slots`]).
    entries: Vec<u32>,
}

/// The count of a unit without a list.
const NO_LIST: u32 = u32::MAX;

/// Each unit's neighbours as the frame began, found by steering's walk of the neighbour
/// snapshot and read by the stages after it.
///
/// The list of a unit of radius `r` at `p` holds, in the walk's order (so every sum over it
/// adds in the order a walk would), every other unit of its buckets within
/// `(r + r_o) * separation_range + slack` of `p`. A stage asks
/// [`crate::frame::Neighbours::for_each_near`] for the units within `(r + r_o) * times + plus`; the
/// list answers when it holds them all ([`Self::covers`]), the buckets otherwise, so each
/// stage sees the same units in the same order either way and its result is bit for bit
/// the walk's. Units that steering does not steer (asleep, stunned, position not finite)
/// have no list, and ask the buckets.
#[derive(Debug, Default)]
pub struct NeighbourLists {
    parts: Vec<ListPart>,
    /// How much farther than the separation range a list reaches: twice the distance the
    /// fastest unit walks in the frame, so that the contacts, found after the units moved,
    /// are in their lists too.
    slack: f32,
    separation_range: f32,
    /// The smallest and largest radius of the snapshot's units.
    radii: (f32, f32),
    /// Builds no lists (the tests compare frames with and without them).
    #[cfg(test)]
    pub(crate) off: bool,
}

/// A unit asking for its neighbours ([`crate::frame::Neighbours::for_each_near`]).
#[derive(Clone, Copy, Debug)]
pub struct Asker {
    /// Its place in the world's storage order (the order of the frame's unit queries).
    pub storage: usize,
    /// Its [`horde_core::UnitId`].
    pub id: u32,
    /// Its position as the frame began.
    pub pos: Vec2,
    /// Its radius.
    pub radius: f32,
}

impl NeighbourLists {
    /// Keeps a frame's lists: `parts`, filled by [`ListWriter`]s, one per batch of
    /// steering's query, in batch order.
    pub(crate) fn set(
        &mut self,
        parts: Vec<ListPart>,
        separation_range: f32,
        slack: f32,
        radii: (f32, f32),
    ) {
        self.parts = parts;
        let mut start = 0u32;
        for part in &mut self.parts {
            part.start = start;
            start = start.saturating_add(part.spans.len() as u32);
        }
        (self.separation_range, self.slack, self.radii) = (separation_range, slack, radii);
        let sane = slack.is_finite() && slack >= 0.0 && radii.0 <= radii.1;
        #[cfg(test)]
        let sane = sane && !self.off;
        if !sane {
            self.parts.clear();
        }
    }

    /// The storage index of the `k`-th unit of batch `batch` of a query that matches the
    /// units steering's does with the same batch size (hecs cuts the same batches); past
    /// the end when there is no such batch.
    #[must_use]
    #[inline]
    pub fn storage_of(&self, batch: usize, k: usize) -> usize {
        self.parts
            .get(batch)
            .map_or(usize::MAX, |p| p.start as usize + k)
    }

    /// Takes the parts out, to be filled again (their buffers are kept).
    pub(crate) fn take_parts(&mut self) -> Vec<ListPart> {
        std::mem::take(&mut self.parts)
    }

    /// Whether a unit's list holds every unit within `(radius + r_o) * times + plus` of it
    /// (`r_o` the other's radius): whether that reach lies within the list's
    /// `(radius + r_o) * separation_range + slack` for every radius in the snapshot. The
    /// list's own test is a hair wider than its reach ([`list_reach_squared`]), so rounding
    /// here loses no unit.
    #[must_use]
    #[inline]
    pub fn covers(&self, radius: f32, times: f32, plus: f32) -> bool {
        let spare = |other: f32| (radius + other) * (self.separation_range - times);
        plus <= self.slack + spare(self.radii.0).min(spare(self.radii.1))
    }

    /// The list of the unit at storage index `who.storage`, when it has one and it is
    /// `who`'s (a stage whose query walks other units gets none).
    #[must_use]
    #[inline]
    pub fn list(&self, who: Asker) -> Option<&[u32]> {
        let storage = u32::try_from(who.storage).ok()?;
        // Every batch but an archetype's last is as long as the first: its index is then
        // the storage index over that length (a search costs more than the list saves).
        let first = self.parts.first()?;
        let guess = self.parts.get(who.storage / first.spans.len().max(1));
        let holds = |p: &ListPart| p.start <= storage && storage - p.start < p.spans.len() as u32;
        let part = match guess {
            Some(part) if holds(part) => part,
            _ => {
                let after = self.parts.partition_point(|p| p.start <= storage);
                &self.parts[after.checked_sub(1)?]
            }
        };
        let &(start, len, id) = part.spans.get((storage - part.start) as usize)?;
        (len != NO_LIST && id == who.id)
            .then(|| &part.entries[start as usize..(start + len) as usize])
    }

    /// `who`'s list when it holds `reach` ([`crate::frame::Neighbours::for_each_near`]).
    #[inline(always)]
    pub(crate) fn within(&self, who: Asker, reach: Option<(f32, f32)>) -> Option<&[u32]> {
        let (times, plus) = reach?;
        if self.covers(who.radius, times, plus) {
            self.list(who)
        } else {
            None
        }
    }
}

/// The square of a list's reach for two units whose radii add up to `touch`, a hair wider
/// than `touch * separation_range + slack` (one part in 10,000 of its square), so that no
/// unit a stage tests with its own rounding falls just outside.
#[inline(always)]
fn list_reach_squared(touch: f32, separation_range: f32, slack: f32) -> f32 {
    let reach = touch * separation_range + slack;
    reach * reach * 1.0001
}

/// Fills one [`ListPart`] as steering walks its units, in storage order.
pub(crate) struct ListWriter {
    part: ListPart,
    separation_range: f32,
    slack: f32,
    /// The unit being walked: its id and first entry.
    me: (u32, usize),
}

impl ListWriter {
    /// A writer for a batch's part, reusing `part`'s buffers.
    pub(crate) fn new(mut part: ListPart, separation_range: f32, slack: f32) -> Self {
        part.spans.clear();
        part.entries.clear();
        Self {
            part,
            separation_range,
            slack,
            me: (0, 0),
        }
    }

    /// The next unit in storage order has no list.
    pub(crate) fn skip(&mut self, id: u32) {
        self.part.spans.push((0, NO_LIST, id));
    }

    /// The next unit in storage order, `id`, is walked: [`Self::see`] each candidate,
    /// then [`Self::end`].
    #[inline(always)]
    pub(crate) fn begin(&mut self, id: u32) {
        self.me = (id, self.part.entries.len());
    }

    /// A candidate of the walk, at `slot`, `d2` from the unit squared, their radii adding
    /// up to `touch`; `other`: not the unit itself. A branch: the walk's own test of the
    /// separation range agrees with it for nearly every candidate, so both are predicted
    /// together (measured: writing every slot to a buffer and moving the count only past
    /// the kept ones was no faster).
    #[inline(always)]
    pub(crate) fn see(&mut self, slot: u32, d2: f32, touch: f32, other: bool) {
        if other && d2 < list_reach_squared(touch, self.separation_range, self.slack) {
            self.part.entries.push(slot);
        }
    }

    /// Ends the unit's walk.
    #[inline(always)]
    pub(crate) fn end(&mut self) {
        let (id, first) = self.me;
        let len = self.part.entries.len() - first;
        self.part.spans.push((first as u32, len as u32, id));
    }

    /// The filled part.
    pub(crate) fn finish(self) -> ListPart {
        self.part
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec2;
    use horde_core::{
        Cell, ForceField, ForceKind, GoalSet, Grid, Map, SimConfig, Terrain, UnitSpec, unit_noise,
    };

    use crate::Simulation;

    /// A crowd of one generated family member: two armies crossing a 48x48 map with rocks,
    /// radii from 0.25 to 0.9 with a few units too big for the buckets, speeds 1 to 6 and
    /// masses 1 to 3, and a blast and a vortex in the middle of the crossing.
    fn crossing(seed: u64, threads: usize, lists: bool) -> Simulation {
        let noise = |unit: u32, k: u64| 0.5 + 0.5 * unit_noise(seed, unit, k);
        let mut map = Map::new(Grid::new(48, 48).unwrap());
        for k in 0..40 {
            let (x, y) = (
                4 + (noise(k, 1) * 40.0) as u32,
                4 + (noise(k, 2) * 40.0) as u32,
            );
            if !(14..34).contains(&y) {
                map.set_terrain(Cell::new(x, y), Terrain::BrickWall);
            }
        }
        let config = SimConfig::default().with_threads(threads);
        let mut sim = Simulation::new(map, config).unwrap();
        sim.horde().data.lists.write().off = !lists;
        let east = sim.add_group(GoalSet::single(Cell::new(44, 24))).unwrap();
        let west = sim.add_group(GoalSet::single(Cell::new(3, 24))).unwrap();
        for unit in 0..320u32 {
            let (group, x) = if unit % 2 == 0 {
                (east, 8.0)
            } else {
                (west, 40.0)
            };
            let at = Vec2::new(x + noise(unit, 3) * 6.0 - 3.0, 16.0 + noise(unit, 4) * 16.0);
            let radius = if unit % 53 == 7 {
                2.0
            } else {
                0.25 + 0.65 * noise(unit, 5)
            };
            let spec = UnitSpec::at(at)
                .with_radius(radius)
                .with_max_speed(1.0 + 5.0 * noise(unit, 6))
                .with_mass(1.0 + 2.0 * noise(unit, 7))
                .with_group(group);
            sim.spawn(spec).unwrap();
        }
        sim
    }

    fn run(seed: u64, threads: usize, lists: bool) -> (u64, usize) {
        let mut sim = crossing(seed, threads, lists);
        let mut listed = 0;
        for frame in 0..150 {
            if frame == 60 {
                let centre = Vec2::new(24.0, 24.0);
                let blast = ForceField::new(centre, ForceKind::Explosion, 6.0, 400.0).unwrap();
                sim.add_force(blast);
                let swirl =
                    ForceField::new(centre, ForceKind::Vortex { clockwise: true }, 10.0, 30.0)
                        .unwrap();
                sim.add_force(swirl.with_duration(1.0).unwrap());
            }
            sim.step(1.0 / 30.0).unwrap();
            let lists = sim.horde().data.lists.read();
            listed += lists
                .parts
                .iter()
                .flat_map(|p| &p.spans)
                .filter(|s| s.1 != super::NO_LIST)
                .count();
        }
        (sim.state_hash(), listed)
    }

    #[test]
    fn the_lists_change_no_frame_on_any_thread_count() {
        for seed in 0..6 {
            let (without, none) = run(seed, 1, false);
            assert_eq!(none, 0);
            for threads in [1, 2, 3] {
                let (with, listed) = run(seed, threads, true);
                assert_eq!(with, without, "seed {seed}, {threads} threads");
                // Nearly every unit has its list every frame.
                assert!(listed > 150 * 300, "seed {seed}: {listed} lists");
            }
        }
    }

    #[test]
    fn lists_are_found_by_storage_index_in_parts_of_any_length() {
        // Parts as hecs cuts two archetypes into batches of 4: 4 + 2, then 4 + 3.
        let lengths = [4u32, 2, 4, 3];
        let mut parts = Vec::new();
        let mut id = 100;
        for len in lengths {
            let mut writer = super::ListWriter::new(super::ListPart::default(), 1.2, 0.1);
            for _ in 0..len {
                if id % 5 == 0 {
                    writer.skip(id);
                } else {
                    writer.begin(id);
                    // Each unit lists its own id as a slot, once.
                    writer.see(id, 0.0, 1.0, true);
                    writer.end();
                }
                id += 1;
            }
            parts.push(writer.finish());
        }
        let mut lists = super::NeighbourLists::default();
        lists.set(parts, 1.2, 0.1, (0.5, 0.5));
        let who = |storage: usize, id: u32| super::Asker {
            storage,
            id,
            pos: Vec2::ZERO,
            radius: 0.5,
        };
        for storage in 0..13 {
            let id = 100 + storage as u32;
            let own = [id];
            let expected = (id % 5 != 0).then_some(&own[..]);
            assert_eq!(lists.list(who(storage, id)), expected, "storage {storage}");
            // Another unit's id at that place: no list.
            assert_eq!(lists.list(who(storage, id + 1)), None);
        }
        assert_eq!(lists.list(who(13, 113)), None);
        assert_eq!(lists.storage_of(2, 1), 7);
        assert_eq!(lists.storage_of(4, 0), usize::MAX);
    }

    #[test]
    fn a_list_covers_what_its_reach_holds() {
        let lists = super::NeighbourLists {
            slack: 0.2,
            separation_range: 1.2,
            radii: (0.3, 1.0),
            ..Default::default()
        };
        // Steering's range, and a touch plus a travel within the slack and the range.
        assert!(lists.covers(0.5, 1.2, 0.0));
        assert!(lists.covers(0.5, 1.0, 0.2 + 0.2 * 0.8 - 1e-4));
        assert!(!lists.covers(0.5, 1.0, 0.2 + 0.2 * 0.8 + 1e-3));
        // Past the separation range nothing is covered beyond the slack.
        assert!(!lists.covers(0.5, 2.5, 0.0));
        // A range below 1 is held by the largest radius.
        let narrow = super::NeighbourLists {
            separation_range: 0.9,
            ..lists
        };
        assert!(!narrow.covers(0.5, 1.0, 0.2 - 0.15 + 1e-4));
        assert!(narrow.covers(0.5, 1.0, 0.2 - 0.15 - 1e-4));
    }
}
