//! Building sector fields: the sectors a frame needs (`ensure_sectors`, on the caller's
//! runner), each sector's field and its neighbours' estimates, and eviction past the byte
//! budget.

use super::*;

impl HierarchicalField {
    /// Builds sector `sector`'s field if it has none, and marks it used this frame.
    pub fn ensure_sector(
        &mut self,
        graph: &PortalGraph,
        cost: &CostField,
        sector: usize,
    ) -> Result<(), HierarchyError> {
        self.check(graph, cost)?;
        if let Some(Some(f)) = self.fields.get_mut(sector) {
            f.last_used = self.frame;
            return Ok(());
        }
        self.ensure_sectors(graph, cost, &[sector], in_order)
    }

    /// Marks the fields of `sectors` used this frame, as [`Self::ensure_sector`] does, but
    /// builds nothing: sectors without a field are left alone.
    pub fn mark_used(
        &mut self,
        graph: &PortalGraph,
        cost: &CostField,
        sectors: &[usize],
    ) -> Result<(), HierarchyError> {
        self.check(graph, cost)?;
        for &sector in sectors {
            if let Some(Some(f)) = self.fields.get_mut(sector) {
                f.last_used = self.frame;
            }
        }
        Ok(())
    }

    /// [`Self::ensure_sector`] for each of `sectors`, with the searches spread over threads:
    /// `run(jobs, job)` must call `job(i)` once for every `i` in `0..jobs`, on any threads
    /// and in any order (a caller without threads runs them in a loop). First the missing
    /// estimates of all their neighbours are built, then the fields; each is stored in a
    /// fixed order, so the result does not depend on how `run` spreads the work.
    ///
    /// The fields and estimates are those `ensure_sector` builds one sector at a time. Only
    /// when the cache is over its budget can it differ in which old entries it drops, since
    /// the new estimates are all counted before the first field.
    pub fn ensure_sectors<R>(
        &mut self,
        graph: &PortalGraph,
        cost: &CostField,
        sectors: &[usize],
        run: R,
    ) -> Result<(), HierarchyError>
    where
        R: RunJobs,
    {
        self.check(graph, cost)?;
        if let Some(&sector) = sectors.iter().find(|&&s| s >= self.fields.len()) {
            return Err(HierarchyError::NoSuchSector {
                sector,
                count: self.fields.len(),
            });
        }
        // The sectors still without a field (once each, first come first), their existing
        // fields marked used.
        let mut queued = HashSet::new();
        let mut wanted: Vec<usize> = Vec::with_capacity(sectors.len());
        for &sector in sectors {
            match &mut self.fields[sector] {
                Some(f) => f.last_used = self.frame,
                None if queued.insert(sector) => wanted.push(sector),
                None => {}
            }
        }
        // The estimates of all eight neighbours of each (corner moves reach the diagonal
        // ones): existing ones marked used, missing ones built.
        let sector_grid = *graph.sectors();
        let mut missing: Vec<usize> = Vec::new();
        queued.clear();
        for &sector in &wanted {
            for n in neighbours(&sector_grid, sector) {
                match &mut self.estimates[n] {
                    Some(e) => e.last_used = self.frame,
                    None if queued.insert(n) => missing.push(n),
                    None => {}
                }
            }
        }
        let estimates = build_all(&missing, &run, |search, n| {
            self.estimate(graph, cost, n, search)
        });
        for (n, estimate) in missing.into_iter().zip(estimates) {
            self.held += estimate.ring.len() * 4;
            self.estimates[n] = Some(estimate);
            self.stats.estimates_built += 1;
        }
        let fields = build_all(&wanted, &run, |search, sector| {
            self.sector_field(graph, cost, sector, search)
        });
        for (sector, field) in wanted.into_iter().zip(fields) {
            self.held += field.bytes();
            self.set_has_field(sector, true);
            self.fields[sector] = Some(Box::new(field));
            self.stats.fields_built += 1;
            self.evict();
        }
        Ok(())
    }

    /// The field of `sector`: a search inside it from its goals and from just outside its
    /// border, each outside cell at its sector's estimate (every neighbour's estimate must
    /// be built).
    pub(super) fn sector_field(
        &self,
        graph: &PortalGraph,
        cost: &CostField,
        sector: usize,
        search: &mut LocalSearch,
    ) -> SectorField {
        let sectors = *graph.sectors();
        let b = sectors.bounds(sector);
        let mut seeds = self.goal_seeds(b, sector);
        let (w, h) = (i64::from(cost.width()), i64::from(cost.height()));
        for local in border_locals(b) {
            let c = b.cell(local);
            let moves = cost.moves(c);
            for d in Direction::ALL {
                if moves & (1 << d as u8) == 0 {
                    continue;
                }
                let (dx, dy) = d.offset();
                let (tx, ty) = (
                    i64::from(c.x) + i64::from(dx),
                    i64::from(c.y) + i64::from(dy),
                );
                if b.contains(tx, ty) || tx < 0 || ty < 0 || tx >= w || ty >= h {
                    continue;
                }
                let t = Cell::new(tx as u32, ty as u32);
                let n = sectors.sector_of(t);
                let Some(e) = &self.estimates[n] else {
                    continue;
                };
                let value = e.ring[ring_index(sectors.bounds(n), t)];
                if value == UNREACHABLE {
                    continue;
                }
                let step = if d.is_diagonal() {
                    DIAG_STEP
                } else {
                    ORTHO_STEP
                };
                let v = value.saturating_add(u32::from(cost.get(t)) * step);
                seeds.push((local, v, d as u8));
            }
        }
        search.run(cost, b, &seeds);
        let min = search.values.iter().copied().min().unwrap_or(UNREACHABLE);
        SectorField {
            dirs: search.dirs.clone().into_boxed_slice(),
            min,
            values: (min <= EXACT_DISTANCE).then(|| search.values.clone().into_boxed_slice()),
            last_used: self.frame,
        }
    }

    /// The goal cells in `sector` (bounds `b`), as zero-distance seeds of a local search.
    pub(super) fn goal_seeds(&self, b: SectorBounds, sector: usize) -> Vec<Seed> {
        self.route
            .goals_in(sector)
            .iter()
            .map(|&g| (b.local(g), 0, NO_DIRECTION))
            .collect()
    }

    /// Sector `sector`'s estimate: a search inside it from its goals and its nodes, each at
    /// the route's distance; its border ring is kept.
    pub(super) fn estimate(
        &self,
        graph: &PortalGraph,
        cost: &CostField,
        sector: usize,
        search: &mut LocalSearch,
    ) -> Estimate {
        let b = graph.sectors().bounds(sector);
        let mut seeds = self.goal_seeds(b, sector);
        for node in graph.sector_nodes(sector) {
            let d = self.route.distance(node);
            if d != UNREACHABLE {
                seeds.push((b.local(graph.node_cell(node)), d, NO_DIRECTION));
            }
        }
        search.run(cost, b, &seeds);
        let values = &search.values;
        let ring: Box<[u32]> = ring_cells(b)
            .map(|c| values[b.local(c)])
            .collect::<Vec<_>>()
            .into_boxed_slice();
        Estimate {
            ring,
            last_used: self.frame,
        }
    }

    /// Drops least recently used fields and estimates not used this frame while the cache is
    /// over budget (down to three quarters of it, so the scan is not repeated at every build).
    pub(super) fn evict(&mut self) {
        if self.bytes_in_use() <= self.budget {
            return;
        }
        let frame = self.frame;
        let mut old: Vec<(u64, bool, usize)> = self
            .fields
            .iter()
            .enumerate()
            .filter_map(|(s, f)| f.as_ref().map(|f| (f.last_used, false, s)))
            .chain(
                self.estimates
                    .iter()
                    .enumerate()
                    .filter_map(|(s, e)| e.as_ref().map(|e| (e.last_used, true, s))),
            )
            .filter(|&(used, _, _)| used < frame)
            .collect();
        old.sort_unstable();
        let target = self.budget / 4 * 3;
        for (_, estimate, s) in old {
            if self.bytes_in_use() <= target {
                break;
            }
            if estimate {
                if let Some(e) = self.estimates[s].take() {
                    self.held -= e.ring.len() * 4;
                }
            } else if let Some(f) = self.fields[s].take() {
                self.held -= f.bytes();
                self.set_has_field(s, false);
            }
            self.stats.evicted += 1;
        }
    }
}

/// The sectors around `sector` (up to eight), row by row.
fn neighbours(sectors: &SectorGrid, sector: usize) -> Vec<usize> {
    let (cols, rows) = (sectors.columns() as usize, sectors.rows() as usize);
    let (sx, sy) = (sector % cols, sector / cols);
    let mut around = Vec::with_capacity(8);
    for ny in sy.saturating_sub(1)..=(sy + 1).min(rows - 1) {
        for nx in sx.saturating_sub(1)..=(sx + 1).min(cols - 1) {
            if ny * cols + nx != sector {
                around.push(ny * cols + nx);
            }
        }
    }
    around
}

/// `build(search, item)` for every item, spread by `run` (see
/// [`HierarchicalField::ensure_sectors`]), in the items' order; each job with a search of
/// its own.
fn build_all<T: Send, R>(
    items: &[usize],
    run: &R,
    build: impl Fn(&mut LocalSearch, usize) -> T + Sync,
) -> Vec<T>
where
    R: RunJobs,
{
    let slots: Vec<Mutex<Option<T>>> = items.iter().map(|_| Mutex::new(None)).collect();
    run(items.len(), &|i| {
        let mut search = LocalSearch::default();
        *slots[i].lock() = Some(build(&mut search, items[i]));
    });
    slots
        .into_iter()
        .map(|slot| slot.into_inner().expect("`run` ran every job"))
        .collect()
}

/// Local indices of the cells on the border of `b` (each once).
fn border_locals(b: SectorBounds) -> impl Iterator<Item = usize> {
    let (w, h) = (b.width() as usize, b.height() as usize);
    (0..w * h).filter(move |&i| {
        let (x, y) = (i % w, i / w);
        x == 0 || y == 0 || x + 1 == w || y + 1 == h
    })
}

/// Index in the ring of `b` of border cell `c`.
fn ring_index(b: SectorBounds, c: Cell) -> usize {
    let (w, h) = (b.width() as usize, b.height() as usize);
    if c.y == b.y0 {
        (c.x - b.x0) as usize
    } else if c.y + 1 == b.y1 {
        w + (c.x - b.x0) as usize
    } else if c.x == b.x0 {
        2 * w + (c.y - b.y0) as usize
    } else {
        2 * w + h + (c.y - b.y0) as usize
    }
}
