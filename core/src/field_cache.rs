//! [`FieldCache`]: integration and flow fields keyed by (goal set, layer, size class), rebuilt
//! only when their goals or the costs they depend on change.

use std::collections::HashMap;

use crate::config::FlowConfig;
use crate::cost_field::CostField;
use crate::flow::{FlowField, fill_direction_rows};
use crate::grid::Cell;
use crate::integration::{FieldError, IntegrationField};
use crate::map::Map;
use crate::stamp::next_stamp;
use crate::terrain::Layer;

/// A non-empty, sorted, duplicate-free set of goal cells.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoalSet(Vec<Cell>);

/// A goal set was empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a goal set needs at least one cell")]
pub struct EmptyGoalSet;

impl GoalSet {
    /// The set of `cells` (sorted and deduplicated).
    pub fn new(cells: impl IntoIterator<Item = Cell>) -> Result<Self, EmptyGoalSet> {
        let mut cells: Vec<Cell> = cells.into_iter().collect();
        if cells.is_empty() {
            return Err(EmptyGoalSet);
        }
        cells.sort_unstable_by_key(|c| (c.y, c.x));
        cells.dedup();
        Ok(Self(cells))
    }

    /// A single goal cell.
    #[must_use]
    pub fn single(cell: Cell) -> Self {
        Self(vec![cell])
    }

    /// The cells, sorted by row then column.
    #[must_use]
    pub fn cells(&self) -> &[Cell] {
        &self.0
    }
}

/// What a cached field is for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldKey {
    /// Where units go.
    pub goals: GoalSet,
    /// Which cost field they follow.
    pub layer: Layer,
    /// The size class of the units that follow it ([`crate::size_class`]): its fields are
    /// built on [`Map::class_cost_field`] of the layer and class, so they lead only where
    /// the class's bodies fit. 0 (radius up to half a cell) is the layer's own costs.
    pub class: u8,
}

impl FieldKey {
    /// The key of class 0 (bodies up to half a cell across the radius: the layer's costs).
    #[must_use]
    pub fn new(goals: GoalSet, layer: Layer) -> Self {
        Self::sized(goals, layer, 0)
    }

    /// The key of size class `class`.
    #[must_use]
    pub fn sized(goals: GoalSet, layer: Layer, class: u8) -> Self {
        Self {
            goals,
            layer,
            class,
        }
    }

    /// The cost field the fields of this key are built on.
    #[must_use]
    pub fn cost<'a>(&self, map: &'a Map) -> &'a CostField {
        map.class_cost_field(self.layer, self.class)
    }
}

/// Handle of a field in a [`FieldCache`]; stable for the cache's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldId(pub u32);

/// An integration field and the flow field derived from it, for one [`FieldKey`].
#[derive(Clone, Debug)]
pub struct NavField {
    key: FieldKey,
    integration: IntegrationField,
    flow: FlowField,
    /// Version of the layer's cost field the field was built from; `None` = never built.
    built_from: Option<u64>,
    /// Its goals moved ([`FieldCache::rekey`]) since it was last complete: it is rebuilt
    /// only as far as its followers need ([`Self::rebuild_for`]).
    moved: bool,
    /// See [`Self::stamp`].
    stamp: u32,
}

impl NavField {
    fn new(key: FieldKey, map: &Map) -> Self {
        let cost = key.cost(map);
        Self {
            integration: IntegrationField::unreachable(cost),
            flow: FlowField::empty(cost.width(), cost.height()),
            key,
            built_from: None,
            moved: false,
            stamp: next_stamp(),
        }
    }

    /// A number that changes whenever the field's contents may change, unique among all
    /// stamped data of the process: equal stamps mean the same field with the same bytes.
    /// So a unit can remember the flow byte it read with the stamp, and skip the read while
    /// it stays in its cell (see [`crate::CellMemo`]). 0 (which matches nothing) once the
    /// process has given 2^32 - 1 stamps.
    #[must_use]
    #[inline]
    pub fn stamp(&self) -> u32 {
        self.stamp
    }

    /// Gives the field a new [`Self::stamp`]: every method that may change it calls this.
    fn touch(&mut self) {
        self.stamp = next_stamp();
    }

    /// What the field is for.
    #[must_use]
    pub fn key(&self) -> &FieldKey {
        &self.key
    }

    /// Cost-to-goal of every cell.
    #[must_use]
    #[inline]
    pub fn integration(&self) -> &IntegrationField {
        &self.integration
    }

    /// Direction to walk from every cell.
    #[must_use]
    #[inline]
    pub fn flow(&self) -> &FlowField {
        &self.flow
    }

    /// Whether the field is out of date for `map` (never built, or the costs it is built on
    /// changed: its layer's, or its size class's on that layer).
    #[must_use]
    pub fn is_dirty(&self, map: &Map) -> bool {
        self.built_from != Some(self.key.cost(map).version())
    }

    /// Whether the field should be rebuilt only as far as its followers need
    /// ([`Self::rebuild_for`]): its goals moved since it was last complete, or it is partial.
    #[must_use]
    pub fn wants_partial(&self) -> bool {
        self.moved || !self.integration.is_complete()
    }

    /// Bytes held by the field's per-cell arrays: none until it is first built (a slot that
    /// hierarchical navigation never builds costs nothing).
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.integration.padded_values().len() * 4 + self.flow.bytes().len()
    }

    /// Whether every value is final (see [`IntegrationField::rebuild_for`]).
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.integration.is_complete()
    }

    /// Rebuilds both fields from `map`, but only as far as the cells in `demand` need (the
    /// cells its followers stand in): their integration values and flow bytes are exactly a
    /// complete build's, other cells are left unreached (see
    /// [`IntegrationField::rebuild_for`]). A goal that moves every frame then costs the
    /// region its followers stand in, not the map. [`Self::serve`] keeps it going.
    pub fn rebuild_for(
        &mut self,
        map: &Map,
        config: &FlowConfig,
        demand: &[Cell],
    ) -> Result<(), FieldError> {
        self.touch();
        let cost = self.key.cost(map);
        let goals = self.key.goals.cells();
        self.integration.rebuild_for(cost, goals, demand)?;
        self.built_from = Some(cost.version());
        if self.integration.is_complete() {
            self.finish(map, config);
        } else {
            self.flow
                .rebuild_cells(cost, &self.integration, goals, config, demand);
        }
        Ok(())
    }

    /// For a partial field that is not dirty: extends its search to the cells of `demand`
    /// (and fills their flow bytes), then goes on toward completion for about `budget`
    /// more cells; once complete, fills the whole flow field. Equal, on every cell it has
    /// served, to a complete build; nothing to do on a complete field.
    pub fn serve(
        &mut self,
        map: &Map,
        config: &FlowConfig,
        demand: &[Cell],
        budget: usize,
    ) -> Result<(), FieldError> {
        if self.integration.is_complete() {
            self.moved = false;
            return Ok(());
        }
        self.touch();
        let cost = self.key.cost(map);
        self.integration.settle(cost, demand)?;
        if self.integration.advance(cost, budget)? {
            self.finish(map, config);
        } else {
            let goals = self.key.goals.cells();
            self.flow
                .fill_cells(cost, &self.integration, goals, config, demand);
        }
        Ok(())
    }

    /// Fills the whole flow field from a complete integration field.
    fn finish(&mut self, map: &Map, config: &FlowConfig) {
        self.touch();
        let cost = self.key.cost(map);
        let goals = self.key.goals.cells();
        self.flow.resize(cost.width(), cost.height());
        fill_direction_rows(
            cost,
            &self.integration,
            0..cost.height(),
            self.flow.bytes_mut(),
        );
        self.flow
            .mark_line_of_sight(cost, &self.integration, goals, config);
        self.moved = false;
    }

    /// Rebuilds both fields from `map` (whether or not they are dirty).
    pub fn rebuild(&mut self, map: &Map, config: &FlowConfig) -> Result<(), FieldError> {
        self.rebuild_with(
            map,
            config,
            |cost, goals, integration| integration.rebuild(cost, goals),
            |cost, integration, out| fill_direction_rows(cost, integration, 0..cost.height(), out),
        )
    }

    /// Brings both fields up to date after the cost edits in `edits` (every cell of this
    /// field's layer whose cost changed since the field was built, with its cost before; see
    /// [`IntegrationField::repair`]), touching only what the edits can change. Equal to
    /// [`Self::rebuild`].
    pub fn repair(
        &mut self,
        map: &Map,
        config: &FlowConfig,
        edits: &[(Cell, u8)],
    ) -> Result<(), FieldError> {
        self.touch();
        if self.built_from.is_none() || !self.integration.is_complete() {
            return self.rebuild(map, config);
        }
        let cost = self.key.cost(map);
        let goals = self.key.goals.cells();
        let rows = self.integration.repair(cost, goals, edits)?;
        if let Some(rows) = rows {
            self.flow
                .repair_rows(cost, &self.integration, goals, config, rows);
        }
        self.built_from = Some(cost.version());
        Ok(())
    }

    /// Version of the layer's cost field the fields were built from (`None`: never built).
    #[must_use]
    pub fn built_from(&self) -> Option<u64> {
        self.built_from
    }

    /// Like [`Self::rebuild`], with the two heavy steps supplied by the caller (a caller with
    /// threads builds the integration field and fills flow row bands in parallel):
    /// `integrate(cost, goals, field)` must leave what [`IntegrationField::rebuild`] would,
    /// and `fill_rows(cost, integration, bytes)` what [`fill_direction_rows`] gives over
    /// every row.
    pub fn rebuild_with(
        &mut self,
        map: &Map,
        config: &FlowConfig,
        integrate: impl FnOnce(&CostField, &[Cell], &mut IntegrationField) -> Result<(), FieldError>,
        fill_rows: impl FnOnce(&CostField, &IntegrationField, &mut [u8]),
    ) -> Result<(), FieldError> {
        self.touch();
        let cost = self.key.cost(map);
        let goals = self.key.goals.cells();
        integrate(cost, goals, &mut self.integration)?;
        self.flow.resize(cost.width(), cost.height());
        fill_rows(cost, &self.integration, self.flow.bytes_mut());
        self.flow
            .mark_line_of_sight(cost, &self.integration, goals, config);
        self.built_from = Some(cost.version());
        self.moved = false;
        Ok(())
    }
}

/// Fields keyed by (goal set, layer, size class). Asking for a key that is already cached returns the
/// same [`FieldId`]; a field is rebuilt only when it is dirty (new, or its layer's costs
/// changed since it was built). Fields nobody uses any more are dropped with
/// [`Self::release`] or [`Self::retain`]; their slots are reused by later requests.
///
/// Iteration is always in [`FieldId`] order, never hash-map order, so the cache is
/// deterministic.
#[derive(Clone, Debug, Default)]
pub struct FieldCache {
    fields: Vec<Option<NavField>>,
    /// Released slots, reused lowest first.
    free: Vec<u32>,
    lookup: HashMap<FieldKey, FieldId>,
    config: FlowConfig,
}

impl FieldCache {
    /// An empty cache building flow fields with `config`.
    #[must_use]
    pub fn new(config: FlowConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// How flow fields are built.
    #[must_use]
    pub fn config(&self) -> &FlowConfig {
        &self.config
    }

    /// The field for `key`, created (dirty) if it is not cached yet. Goals outside the map
    /// are an error.
    pub fn request(&mut self, key: FieldKey, map: &Map) -> Result<FieldId, FieldError> {
        if let Some(&id) = self.lookup.get(&key) {
            return Ok(id);
        }
        for &cell in key.goals.cells() {
            if cell.x >= map.width() || cell.y >= map.height() {
                return Err(FieldError::GoalOutside {
                    cell,
                    width: map.width(),
                    height: map.height(),
                });
            }
        }
        let field = Some(NavField::new(key.clone(), map));
        let id = match self.free.pop() {
            Some(slot) => {
                self.fields[slot as usize] = field;
                FieldId(slot)
            }
            None => {
                self.fields.push(field);
                FieldId(self.fields.len() as u32 - 1)
            }
        };
        self.lookup.insert(key, id);
        Ok(id)
    }

    /// Gives field `id` the new key `key` in place, keeping its buffers (a goal that moves
    /// every frame then reuses one field's memory instead of allocating full-map arrays
    /// each frame); the field is dirty until rebuilt. When `key` is cached already, or `id`
    /// is not a field, this is [`Self::request`] and `id` is left alone. The caller must be
    /// the field's only user. Goals outside the map are an error.
    pub fn rekey(&mut self, id: FieldId, key: FieldKey, map: &Map) -> Result<FieldId, FieldError> {
        let slot = self.fields.get(id.0 as usize).and_then(Option::as_ref);
        let same_grid = slot.is_some_and(|f| {
            let cost = f.key.cost(map);
            (f.integration.width(), f.integration.height()) == (cost.width(), cost.height())
        });
        if self.lookup.contains_key(&key) || !same_grid {
            return self.request(key, map);
        }
        for &cell in key.goals.cells() {
            if cell.x >= map.width() || cell.y >= map.height() {
                return Err(FieldError::GoalOutside {
                    cell,
                    width: map.width(),
                    height: map.height(),
                });
            }
        }
        let Some(field) = self.fields[id.0 as usize].as_mut() else {
            return self.request(key, map);
        };
        self.lookup.remove(&field.key);
        field.touch();
        field.key = key.clone();
        field.built_from = None;
        field.moved = true;
        self.lookup.insert(key, id);
        Ok(id)
    }

    /// Marks field `id`, not built yet, as following a goal that moves: it is built only as
    /// far as its followers need ([`NavField::wants_partial`]), like a field that took a new
    /// goal with [`Self::rekey`]. Does nothing to a field already built or a released id.
    pub fn mark_moved(&mut self, id: FieldId) {
        if let Some(field) = self.fields.get_mut(id.0 as usize).and_then(Option::as_mut)
            && field.built_from.is_none()
        {
            field.touch();
            field.moved = true;
        }
    }

    /// The field with handle `id`.
    ///
    /// # Panics
    /// If `id` did not come from this cache or was released.
    #[must_use]
    #[inline]
    pub fn get(&self, id: FieldId) -> &NavField {
        self.fields[id.0 as usize]
            .as_ref()
            .expect("the field id was released")
    }

    /// Drops field `id` (its memory is freed and its slot reused). Returns whether it existed.
    pub fn release(&mut self, id: FieldId) -> bool {
        let Some(field) = self.fields.get_mut(id.0 as usize).and_then(Option::take) else {
            return false;
        };
        self.lookup.remove(&field.key);
        self.free.push(id.0);
        // Reuse the lowest free slot first, so ids stay small and the order deterministic.
        self.free.sort_unstable_by(|a, b| b.cmp(a));
        true
    }

    /// Drops every field for which `keep(id, field)` is false.
    pub fn retain(&mut self, mut keep: impl FnMut(FieldId, &NavField) -> bool) {
        let unused: Vec<FieldId> = self
            .iter()
            .filter(|&(id, f)| !keep(id, f))
            .map(|(id, _)| id)
            .collect();
        for id in unused {
            self.release(id);
        }
    }

    /// Number of cached fields.
    #[must_use]
    pub fn len(&self) -> usize {
        self.fields.len() - self.free.len()
    }

    /// Whether the cache holds no field.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every field, in [`FieldId`] order.
    pub fn iter(&self) -> impl Iterator<Item = (FieldId, &NavField)> {
        self.fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (FieldId(i as u32), f)))
    }

    /// The dirty fields, in [`FieldId`] order, for callers that rebuild them in parallel
    /// with [`NavField::rebuild`].
    pub fn dirty_mut<'a>(&'a mut self, map: &'a Map) -> impl Iterator<Item = &'a mut NavField> {
        self.fields
            .iter_mut()
            .flatten()
            .filter(move |f| f.is_dirty(map))
    }

    /// The fields that need work this frame, in [`FieldId`] order: the dirty ones, and the
    /// partial ones ([`NavField::wants_partial`]) to [`NavField::serve`].
    pub fn pending_mut<'a>(
        &'a mut self,
        map: &'a Map,
    ) -> impl Iterator<Item = (FieldId, &'a mut NavField)> {
        self.fields
            .iter_mut()
            .enumerate()
            .filter_map(|(i, f)| f.as_mut().map(|f| (FieldId(i as u32), f)))
            .filter(move |(_, f)| f.is_dirty(map) || !f.is_complete())
    }

    /// Rebuilds every dirty field, one after another. Returns how many were rebuilt.
    pub fn rebuild_dirty(&mut self, map: &Map) -> Result<usize, FieldError> {
        let config = self.config;
        let mut rebuilt = 0;
        for field in self.dirty_mut(map) {
            field.rebuild(map, &config)?;
            rebuilt += 1;
        }
        Ok(rebuilt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use crate::integration::UNREACHABLE;
    use crate::terrain::{Terrain, WALL};

    #[test]
    fn a_fields_stamp_changes_with_its_contents_only() {
        let mut map = Map::new(Grid::new(16, 16).unwrap());
        let config = FlowConfig::default();
        let key = |x| FieldKey {
            goals: GoalSet::single(Cell::new(x, 3)),
            layer: Layer::Ground,
            class: 0,
        };
        let mut cache = FieldCache::default();
        let a = cache.request(key(3), &map).unwrap();
        let b = cache.request(key(9), &map).unwrap();
        let stamp = |cache: &FieldCache, id| cache.get(id).stamp();
        assert_ne!(
            stamp(&cache, a),
            stamp(&cache, b),
            "two fields share a stamp"
        );
        assert_ne!(stamp(&cache, a), 0);
        let mut last = stamp(&cache, a);
        let changed = |cache: &FieldCache, last: &mut u32, what: &str| {
            let now = stamp(cache, a);
            assert_ne!(now, *last, "{what} kept the stamp");
            *last = now;
        };
        cache.rebuild_dirty(&map).unwrap();
        changed(&cache, &mut last, "a build");
        // Reading, and rebuilding nothing, keep it.
        let _ = cache.get(a).flow().byte_at(Cell::new(5, 5));
        cache.rebuild_dirty(&map).unwrap();
        assert_eq!(stamp(&cache, a), last);
        map.set_terrain(Cell::new(6, 6), Terrain::BrickWall);
        let edits = [(Cell::new(6, 6), 1)];
        cache.fields[a.0 as usize]
            .as_mut()
            .unwrap()
            .repair(&map, &config, &edits)
            .unwrap();
        changed(&cache, &mut last, "a repair");
        let a2 = cache.rekey(a, key(4), &map).unwrap();
        assert_eq!(a2, a);
        changed(&cache, &mut last, "a new goal in place");
        let field = cache.fields[a.0 as usize].as_mut().unwrap();
        field
            .rebuild_for(&map, &config, &[Cell::new(4, 10)])
            .unwrap();
        changed(&cache, &mut last, "a partial build");
        let field = cache.fields[a.0 as usize].as_mut().unwrap();
        assert!(!field.is_complete(), "built as far as one cell needs");
        field.serve(&map, &config, &[Cell::new(12, 12)], 1).unwrap();
        changed(&cache, &mut last, "serving a partial field");
        let field = cache.fields[a.0 as usize].as_mut().unwrap();
        while !field.is_complete() {
            field.serve(&map, &config, &[], 1 << 20).unwrap();
        }
        last = field.stamp();
        field.serve(&map, &config, &[Cell::new(1, 1)], 1).unwrap();
        assert_eq!(
            field.stamp(),
            last,
            "serving a complete field changes nothing"
        );
    }

    #[test]
    fn fields_are_shared_and_rebuilt_only_when_dirty() {
        let mut map = Map::new(Grid::new(16, 16).unwrap());
        let mut cache = FieldCache::default();
        let key = |x, layer| FieldKey {
            goals: GoalSet::new([Cell::new(x, 3), Cell::new(x, 3)]).unwrap(),
            layer,
            class: 0,
        };
        let a = cache.request(key(3, Layer::Ground), &map).unwrap();
        assert_eq!(cache.request(key(3, Layer::Ground), &map).unwrap(), a);
        let air = cache.request(key(3, Layer::Air), &map).unwrap();
        assert_ne!(a, air);
        assert_eq!(cache.rebuild_dirty(&map).unwrap(), 2);
        assert_eq!(cache.rebuild_dirty(&map).unwrap(), 0);
        assert_eq!(cache.get(a).integration().get(Cell::new(3, 3)), 0);

        // A wall on the ground layer dirties the ground field only.
        assert_ne!(map.set_terrain(Cell::new(4, 3), Terrain::BrickWall), 0);
        assert!(cache.get(a).is_dirty(&map));
        assert!(!cache.get(air).is_dirty(&map));
        assert_eq!(cache.rebuild_dirty(&map).unwrap(), 1);
        let fresh =
            IntegrationField::build(map.cost_field(Layer::Ground), &[Cell::new(3, 3)]).unwrap();
        assert_eq!(cache.get(a).integration(), &fresh);
    }

    #[test]
    fn released_fields_free_their_slot() {
        let map = Map::new(Grid::new(8, 8).unwrap());
        let mut cache = FieldCache::default();
        let key = |x| FieldKey {
            goals: GoalSet::single(Cell::new(x, 0)),
            layer: Layer::Ground,
            class: 0,
        };
        let a = cache.request(key(1), &map).unwrap();
        let b = cache.request(key(2), &map).unwrap();
        assert!(cache.release(a));
        assert!(!cache.release(a));
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.iter().map(|(id, _)| id).collect::<Vec<_>>(), vec![b]);
        // A new key takes the freed slot; the released key is a new field again.
        let c = cache.request(key(3), &map).unwrap();
        assert_eq!(c, a);
        assert_eq!(cache.get(c).key(), &key(3));
        cache.retain(|id, _| id == b);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.rebuild_dirty(&map).unwrap(), 1);
    }

    #[test]
    fn a_rekeyed_field_keeps_its_slot_and_equals_a_fresh_one() {
        let map = Map::new(Grid::new(16, 16).unwrap());
        let mut cache = FieldCache::default();
        let key = |x| FieldKey {
            goals: GoalSet::single(Cell::new(x, 3)),
            layer: Layer::Ground,
            class: 0,
        };
        let a = cache.request(key(1), &map).unwrap();
        let b = cache.request(key(5), &map).unwrap();
        cache.rebuild_dirty(&map).unwrap();
        // A new key: same slot, dirty, and after a rebuild equal to a field built for it.
        assert_eq!(cache.rekey(a, key(2), &map).unwrap(), a);
        assert_eq!(cache.get(a).key(), &key(2));
        assert!(cache.get(a).is_dirty(&map));
        assert_eq!(cache.request(key(2), &map).unwrap(), a);
        assert_eq!(cache.rebuild_dirty(&map).unwrap(), 1);
        let cost = map.cost_field(Layer::Ground);
        let fresh = IntegrationField::build(cost, &[Cell::new(2, 3)]).unwrap();
        assert!(cache.get(a).integration() == &fresh);
        // The key of another field: that field, and this one is left alone.
        assert_eq!(cache.rekey(a, key(5), &map).unwrap(), b);
        assert_eq!(cache.get(a).key(), &key(2));
        // Goals outside the map are an error.
        assert!(cache.rekey(a, key(40), &map).is_err());
        assert_eq!(cache.get(a).key(), &key(2));
    }

    #[test]
    fn an_unbuilt_field_takes_no_memory_and_reads_as_unreachable() {
        let map = Map::new(Grid::new(64, 64).unwrap());
        let mut cache = FieldCache::default();
        let key = FieldKey {
            goals: GoalSet::single(Cell::new(3, 3)),
            layer: Layer::Ground,
            class: 0,
        };
        let id = cache.request(key, &map).unwrap();
        let field = cache.get(id);
        assert_eq!(field.bytes(), 0);
        assert_eq!(field.integration().get(Cell::new(10, 10)), UNREACHABLE);
        assert_eq!(field.integration().to_values(), vec![UNREACHABLE; 64 * 64]);
        assert_eq!(field.flow().direction(Cell::new(10, 10)), None);
        let cost = map.cost_field(Layer::Ground);
        assert!(field.integration() == &IntegrationField::unreachable(cost));
        let mut allocated = IntegrationField::unreachable(cost);
        allocated.padded_values_mut(cost);
        assert!(field.integration() == &allocated);
        assert!(
            field.flow()
                == &FlowField::build(cost, field.integration(), &[], &FlowConfig::default())
        );
        cache.rebuild_dirty(&map).unwrap();
        assert_eq!(cache.get(id).bytes(), 66 * 66 * 4 + 64 * 64);
        assert!(cache.get(id).flow().direction(Cell::new(10, 10)).is_some());
    }

    /// A size class's field leads around a gap too narrow for it, gives cells too close to
    /// walls the way out, and is repaired after terrain edits exactly as a rebuild builds it
    /// (with the class cost edits the map reports: a wider area than the edited cells).
    #[test]
    fn a_size_class_field_avoids_narrow_gaps_and_repairs_exactly() {
        use crate::map::ClassCostChange;
        let grid = Grid::new(24, 16).unwrap();
        let mut map = Map::new(grid);
        // A wall across x = 10, with a one-cell gap at y = 3 and a three-cell gap at 11..14.
        for y in 0..16 {
            if y != 3 && !(11..14).contains(&y) {
                map.set_terrain(Cell::new(10, y), Terrain::BrickWall);
            }
        }
        map.prepare_size_class(Layer::Ground, 1);
        let config = FlowConfig::default();
        let goal = GoalSet::single(Cell::new(20, 3));
        let mut cache = FieldCache::new(config);
        let small = cache
            .request(FieldKey::new(goal.clone(), Layer::Ground), &map)
            .unwrap();
        let big = cache
            .request(FieldKey::sized(goal.clone(), Layer::Ground, 1), &map)
            .unwrap();
        assert_ne!(small, big);
        assert_eq!(cache.rebuild_dirty(&map).unwrap(), 2);
        let walk = |cache: &FieldCache, id, from: Cell| {
            let mut c = from;
            let mut path = vec![c];
            while let Some(d) = cache.get(id).flow().direction(c) {
                let (dx, dy) = d.offset();
                c = Cell::new((c.x as i32 + dx) as u32, (c.y as i32 + dy) as u32);
                path.push(c);
                assert!(path.len() < 200, "the walk loops");
            }
            path
        };
        let start = Cell::new(3, 3);
        let narrow = walk(&cache, small, start);
        assert!(
            narrow.contains(&Cell::new(10, 3)),
            "class 0 takes the short gap"
        );
        let wide = walk(&cache, big, start);
        assert_eq!(wide.last(), Some(&Cell::new(20, 3)), "class 1 arrives");
        assert!(
            wide.contains(&Cell::new(10, 12)),
            "class 1 takes the middle of the wide gap"
        );
        for &c in &wide {
            assert!(
                c.x == 3 || map.class_cost_field(Layer::Ground, 1).get(c) != WALL,
                "{c}"
            );
        }
        // A cell next to a wall (open, but blocked for class 1) has no direction in the
        // class's field; the unit's way out (`escape_from`) leads to a cell whose way
        // arrives.
        let hugging = Cell::new(9, 6);
        assert_eq!(walk(&cache, big, hugging), vec![hugging]);
        let ground = map.cost_field(Layer::Ground);
        let out = crate::escape_from(ground, map.class_cost_field(Layer::Ground, 1), hugging, 1)
            .expect("a way out");
        assert_eq!(walk(&cache, big, out.to).last(), Some(&Cell::new(20, 3)));
        // Edits: repairs with the reported class cost changes equal rebuilds.
        let edits = [
            (Cell::new(15, 5), Terrain::BrickWall),
            (Cell::new(10, 12), Terrain::BrickWall),
            (Cell::new(10, 12), Terrain::Empty),
            (Cell::new(10, 3), Terrain::Forest),
        ];
        for (cell, terrain) in edits {
            let before = map.cost_field(Layer::Ground).get(cell);
            let mut class_edits: Vec<(Cell, u8)> = Vec::new();
            map.set_terrain_with(cell, terrain, |c: ClassCostChange| {
                assert_eq!((c.layer, c.class), (Layer::Ground, 1));
                class_edits.push((c.cell, c.before));
            });
            for (id, log) in [(small, vec![(cell, before)]), (big, class_edits)] {
                let mut field = cache.get(id).clone();
                field.repair(&map, &config, &log).unwrap();
                let mut fresh = NavField::new(cache.get(id).key().clone(), &map);
                fresh.rebuild(&map, &config).unwrap();
                assert!(field.integration() == fresh.integration(), "{cell}");
                assert!(field.flow() == fresh.flow(), "{cell}");
                *cache.fields[id.0 as usize].as_mut().unwrap() = field;
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(120))]
        /// After any batches of terrain edits, every size class's fields repaired from the
        /// class cost changes the map reports equal fields built afresh (integration values
        /// and flow bytes, escapes included).
        #[test]
        fn class_fields_repair_like_a_rebuild(
            w in 3u32..20, h in 3u32..20,
            walls in proptest::collection::vec((0u32..20, 0u32..20), 0..40),
            goal in (0u32..20, 0u32..20),
            batches in proptest::collection::vec(
                proptest::collection::vec((0u32..20, 0u32..20, 0u8..3), 1..6), 1..6),
        ) {
            let mut map = Map::new(Grid::new(w, h).unwrap());
            for (x, y) in walls {
                map.set_terrain(Cell::new(x % w, y % h), Terrain::BrickWall);
            }
            let config = FlowConfig::default();
            let goal = GoalSet::single(Cell::new(goal.0 % w, goal.1 % h));
            let mut fields: Vec<NavField> = (0..4u8)
                .map(|class| {
                    map.prepare_size_class(Layer::Ground, class);
                    let mut f = NavField::new(FieldKey::sized(goal.clone(), Layer::Ground, class), &map);
                    f.rebuild(&map, &config).unwrap();
                    f
                })
                .collect();
            for batch in batches {
                let mut logs: Vec<Vec<(Cell, u8)>> = vec![Vec::new(); 4];
                for (x, y, kind) in batch {
                    let cell = Cell::new(x % w, y % h);
                    let terrain = [Terrain::BrickWall, Terrain::Empty, Terrain::Forest][usize::from(kind)];
                    let before = map.cost_field(Layer::Ground).get(cell);
                    let changed = map.set_terrain_with(cell, terrain, |c| {
                        if c.layer == Layer::Ground {
                            logs[usize::from(c.class)].push((c.cell, c.before));
                        }
                    });
                    if changed & (1 << Layer::Ground as u8) != 0 {
                        logs[0].push((cell, before));
                    }
                }
                for (field, log) in fields.iter_mut().zip(&logs) {
                    field.repair(&map, &config, log).unwrap();
                    let mut fresh = NavField::new(field.key().clone(), &map);
                    fresh.rebuild(&map, &config).unwrap();
                    proptest::prop_assert!(field.integration() == fresh.integration());
                    proptest::prop_assert!(field.flow() == fresh.flow());
                    proptest::prop_assert!(!field.is_dirty(&map));
                }
            }
        }
    }

    #[test]
    fn bad_requests() {
        let map = Map::new(Grid::new(4, 4).unwrap());
        let mut cache = FieldCache::default();
        assert_eq!(GoalSet::new([]), Err(EmptyGoalSet));
        let key = FieldKey {
            goals: GoalSet::single(Cell::new(9, 0)),
            layer: Layer::Ground,
            class: 0,
        };
        assert!(matches!(
            cache.request(key, &map),
            Err(FieldError::GoalOutside { .. })
        ));
        assert!(cache.is_empty());
    }
}
