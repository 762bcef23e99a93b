//! [`EditLog`]: the cost edits of each layer since the fields were last brought up to date,
//! so the field stage can repair fields instead of rebuilding them.

use horde_core::{Cell, Layer, MAX_SIZE_CLASSES};

/// Entries kept per layer before the oldest half is dropped (fields older than what is
/// left are rebuilt in full).
const MAX_ENTRIES: usize = 1 << 16;

#[derive(Clone, Debug, Default, PartialEq)]
struct LayerLog {
    /// `(version after the edit, cell, cost before)`, in edit order.
    entries: Vec<(u64, Cell, u8)>,
    /// The log holds every edit with a version above this.
    start: u64,
}

/// Cost edits per layer, with the cost each cell had before; and per layer and size class
/// above 0, the edits of the class's cost field (docs/behaviour.md, "Unit sizes").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EditLog {
    layers: [LayerLog; Layer::COUNT],
    /// The log of layer `l` and class `c >= 1` at `(c - 1) * Layer::COUNT + l`.
    classes: [LayerLog; Layer::COUNT * (MAX_SIZE_CLASSES as usize - 1)],
}

impl EditLog {
    /// Records that `cell` of `layer` had cost `before` until the edit that brought the
    /// layer's cost field to `version`.
    pub fn record(&mut self, layer: Layer, version: u64, cell: Cell, before: u8) {
        self.record_class(layer, 0, version, cell, before);
    }

    fn log(&self, layer: Layer, class: u8) -> &LayerLog {
        match class {
            0 => &self.layers[layer as usize],
            c => &self.classes[(usize::from(c) - 1) * Layer::COUNT + layer as usize],
        }
    }

    fn log_mut(&mut self, layer: Layer, class: u8) -> &mut LayerLog {
        match class {
            0 => &mut self.layers[layer as usize],
            c => &mut self.classes[(usize::from(c) - 1) * Layer::COUNT + layer as usize],
        }
    }

    /// Records that `cell` of size class `class`'s cost field on `layer` had cost `before`
    /// until the edit that brought that field to `version` (class 0: [`Self::record`]).
    pub fn record_class(&mut self, layer: Layer, class: u8, version: u64, cell: Cell, before: u8) {
        let log = self.log_mut(layer, class);
        log.entries.push((version, cell, before));
        if log.entries.len() > MAX_ENTRIES {
            let keep = log.entries.split_off(MAX_ENTRIES / 2);
            log.start = log.entries.last().map_or(log.start, |e| e.0);
            log.entries = keep;
        }
    }

    /// The edits of the cost field of size class `class` on `layer` (class 0: the layer's
    /// own) made after version `since` (oldest first), or `None` when the log no longer
    /// reaches back that far.
    #[must_use]
    pub fn since_class(&self, layer: Layer, class: u8, since: u64) -> Option<Vec<(Cell, u8)>> {
        let log = self.log(layer, class);
        (since >= log.start).then(|| {
            let first = log.entries.partition_point(|e| e.0 <= since);
            log.entries[first..]
                .iter()
                .map(|&(_, c, b)| (c, b))
                .collect()
        })
    }

    /// Drops the edits of `layer` up to and including version `version` (no field needs
    /// them any more).
    pub fn prune(&mut self, layer: Layer, version: u64) {
        self.prune_class(layer, 0, version);
    }

    /// [`Self::prune`] for the cost field of size class `class` on `layer`.
    pub fn prune_class(&mut self, layer: Layer, class: u8, version: u64) {
        let log = self.log_mut(layer, class);
        let cut = log.entries.partition_point(|e| e.0 <= version);
        log.entries.drain(..cut);
        log.start = log.start.max(version);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_and_prune() {
        let mut log = EditLog::default();
        log.record(Layer::Ground, 1, Cell::new(1, 1), 1);
        log.record(Layer::Ground, 2, Cell::new(2, 1), 255);
        log.record(Layer::Hover, 1, Cell::new(3, 1), 1);
        assert_eq!(
            log.since_class(Layer::Ground, 0, 0),
            Some(vec![(Cell::new(1, 1), 1), (Cell::new(2, 1), 255)])
        );
        assert_eq!(
            log.since_class(Layer::Ground, 0, 1),
            Some(vec![(Cell::new(2, 1), 255)])
        );
        assert_eq!(log.since_class(Layer::Ground, 0, 2), Some(vec![]));
        log.prune(Layer::Ground, 1);
        assert_eq!(
            log.since_class(Layer::Ground, 0, 0),
            None,
            "pruned history is gone"
        );
        assert_eq!(
            log.since_class(Layer::Ground, 0, 1),
            Some(vec![(Cell::new(2, 1), 255)])
        );
        assert_eq!(
            log.since_class(Layer::Hover, 0, 0).map(|v| v.len()),
            Some(1)
        );
    }

    #[test]
    fn overflow_drops_the_oldest_half() {
        let mut log = EditLog::default();
        for v in 1..=(MAX_ENTRIES as u64 + 1) {
            log.record(Layer::Air, v, Cell::new(0, 0), 1);
        }
        assert_eq!(log.since_class(Layer::Air, 0, 0), None);
        let recent = log
            .since_class(Layer::Air, 0, MAX_ENTRIES as u64 - 10)
            .unwrap();
        assert_eq!(recent.len(), 11);
    }
}
