//! What the resting army holds each frame: the taken cells, the supported ones, the free
//! pieces and their targets, and the rooms arriving units would pass by.

use parking_lot::Mutex;

use super::*;

/// Box cells per occupied cell up to which a band finds its occupied cells by reading its
/// rows in order rather than by sorting them.
const SCAN_PER_UNIT: usize = 16;

/// One band of rows of the box while its resting units are counted.
struct Band<'a> {
    /// Its cells' shares.
    cells: &'a mut [f32],
    /// Its occupied cells.
    touched: Vec<u32>,
    /// The first band only: the resting units in the box, and the cells they fill.
    units: u32,
    held: f64,
    /// The first band only: the most cells a resting body's rim reaches past its own cell.
    rim: u32,
    /// The first band only: what it counted ([`GoalFill::counted`]).
    counted: Vec<u64>,
}

/// A resting unit as [`GoalFill::counted`] lists it: its box cell and radius, and for a body
/// wider than a cell its centre as well.
fn counted_as(i: usize, pos: Vec2, radius: f32, size: f32) -> (u64, Option<u64>) {
    let centre = u64::from(pos.x.to_bits()) << 32 | u64::from(pos.y.to_bits());
    (
        (i as u64) << 32 | u64::from(radius.to_bits()),
        (!covers_a_share(radius, size)).then_some(centre),
    )
}

impl GoalFill {
    /// This frame's targets, steps, supported cells and rooms from the units of the fill's
    /// army as the frame began: `resting` (each one's position and radius) and `coming`
    /// (the positions of the others).
    pub fn update(
        &mut self,
        grid: &Grid,
        resting: impl IntoIterator<Item = (Vec2, f32)>,
        coming: impl IntoIterator<Item = Vec2>,
    ) {
        let resting: Vec<(Vec2, f32)> = resting.into_iter().collect();
        let coming: Vec<Vec2> = coming.into_iter().collect();
        let total = u32::try_from(coming.len()).unwrap_or(u32::MAX);
        self.update_in(
            grid,
            || resting.iter().copied(),
            [],
            coming,
            total,
            1,
            crate::in_order,
        );
    }

    /// [`Self::update`] with the resting units counted in `bands` bands of the box's rows,
    /// run by `run` ([`crate::RunJobs`]); `resting()` gives the resting units, the same ones
    /// in the same order every call (each band reads them all). The result is the same for
    /// any number of bands: each cell adds its units' shares in the order `resting` gives
    /// them. `foreign` gives the units of other armies at rest in the box: the cells they
    /// fill are no free room for this army (but no support either). `coming` need give only
    /// the units still coming that stand in the box ([`Self::world_box`]); `coming_total`
    /// counts all of them.
    #[allow(clippy::too_many_arguments)]
    pub fn update_in<I>(
        &mut self,
        grid: &Grid,
        resting: impl Fn() -> I + Sync,
        foreign: impl IntoIterator<Item = (Vec2, f32)>,
        coming: impl IntoIterator<Item = Vec2>,
        coming_total: u32,
        bands: usize,
        run: impl crate::RunJobs,
    ) where
        I: Iterator<Item = (Vec2, f32)>,
    {
        // An army at rest but for a few walkers rests on the same cells frame after frame
        // (their nudges move bodies within their cells): the counts are kept.
        if !self.counts_again(grid, &resting) {
            for &i in &self.foreign_cells {
                self.covered[i as usize] = 0.0;
            }
            self.cover_cells(grid, resting, bands, &run);
        }
        self.support_cells();
        if self.cover_foreign(grid, foreign) {
            // Other armies' shares are in the counts: the next update takes them again.
            self.counted.clear();
        }
        self.take_cells();
        self.find_rooms(grid, coming, coming_total);
    }

    /// Whether the army has stood whole on its goal in every update since this fill was
    /// built (or the fills it replaced, [`Self::keep_whole_from`]): every unit of it still
    /// coming stood on a goal cell and no resting unit outside the goal. Nobody then needs
    /// to pass anyone, and a unit on a free goal cell rests where it stands ([`Self::way`]).
    /// An army that came from outside never was: its goal area fills in order, so the
    /// units resting first never close the way in.
    #[must_use]
    pub fn whole_on_goal(&self) -> bool {
        self.whole
    }

    /// Carries [`Self::whole_on_goal`] over from the fill this one replaces (a longer
    /// reach, new terrain), or from a snapshot.
    pub fn keep_whole_from(&mut self, whole: bool) {
        self.whole = whole;
    }

    /// Whether the resting units stand where the last count found them (the same box cells
    /// and radii, in the same order; bodies wider than a cell at the same centres), so that
    /// its counts hold. Stops at the first that does not.
    pub(super) fn counts_again<I>(&self, grid: &Grid, resting: &impl Fn() -> I) -> bool
    where
        I: Iterator<Item = (Vec2, f32)>,
    {
        let size = grid.cell_size();
        let mut before = self.counted.iter();
        for (pos, radius) in resting() {
            let Some(i) = self.index_of(grid, pos) else {
                continue;
            };
            let (cell, centre) = counted_as(i, pos, radius, size);
            if before.next() != Some(&cell) || centre.is_some_and(|c| before.next() != Some(&c)) {
                return false;
            }
        }
        !self.counted.is_empty() && before.next().is_none()
    }

    /// Counts the resting units' shares into `covered` and lists the occupied cells (sorted)
    /// in `touched`, one job per band of rows.
    fn cover_cells<I>(
        &mut self,
        grid: &Grid,
        resting: impl Fn() -> I + Sync,
        bands: usize,
        run: &impl crate::RunJobs,
    ) where
        I: Iterator<Item = (Vec2, f32)>,
    {
        let w = self.width as usize;
        let band_rows = (self.height as usize).div_ceil(bands.max(1)).max(1);
        let mut covered = std::mem::take(&mut self.covered);
        let last = std::mem::take(&mut self.touched);
        let parts: Vec<Mutex<Band<'_>>> = covered
            .chunks_mut(band_rows * w)
            .map(|cells| {
                Mutex::new(Band {
                    cells,
                    touched: Vec::new(),
                    units: 0,
                    held: 0.0,
                    rim: 0,
                    counted: Vec::new(),
                })
            })
            .collect();
        let this = &*self;
        let size = grid.cell_size();
        let band = |b: usize| {
            let mut part = parts[b].lock();
            let Band {
                cells,
                touched,
                units,
                held,
                rim,
                counted,
            } = &mut *part;
            let first = b * band_rows * w;
            let rows = first / w..first / w + cells.len() / w;
            // Last frame's counts in this band start again from nothing.
            let end = first + cells.len();
            let from = last.partition_point(|&i| (i as usize) < first);
            for &i in last[from..].iter().take_while(|&&i| (i as usize) < end) {
                cells[i as usize - first] = 0.0;
            }
            let mut cover = |i: usize, share: f32| {
                let c = &mut cells[i - first];
                if *c == 0.0 {
                    touched.push(i as u32);
                }
                *c += share;
            };
            // Most units of a crowd share a radius: its share is worked out once.
            let mut share = (f32::NAN, 0.0);
            for (pos, radius) in resting() {
                let Some((i, row)) = this.index_and_row(grid, pos) else {
                    continue;
                };
                // Every band reads every unit; the first counts them and the cells they fill.
                let first_band = b == 0;
                *units += u32::from(first_band);
                if first_band {
                    let (cell, centre) = counted_as(i, pos, radius, size);
                    counted.push(cell);
                    counted.extend(centre);
                }
                if covers_a_share(radius, size) {
                    if share.0.to_bits() != radius.to_bits() {
                        share = (radius, cell_share(radius, size));
                    }
                    if first_band {
                        *held += f64::from(share.1);
                    }
                    if rows.contains(&row) {
                        cover(i, share.1);
                    }
                    continue;
                }
                if first_band {
                    *held += f64::from(2.0 * radius / size).powi(2);
                    let own = ((radius + 0.5 * size) / size)
                        .floor()
                        .min(f32::from(u16::MAX));
                    *rim = (*rim).max(own as u32);
                }
                let reach = ((radius + 0.5 * size) / size)
                    .ceil()
                    .min(f32::from(u16::MAX)) as usize;
                if row + reach < rows.start || row >= rows.end + reach {
                    continue;
                }
                for j in this.cells_under(grid, i, pos, radius) {
                    if rows.contains(&(j / w)) {
                        cover(j, 1.0);
                    }
                }
            }
            if cells.len() <= SCAN_PER_UNIT * touched.len() {
                // A dense band: reading it in order is cheaper than sorting (25,000 units at
                // rest in 50,000 cells, one band: the count went from 0.79 to 0.63 ms a
                // frame). Same result.
                touched.clear();
                let occupied = cells.iter().enumerate().filter(|&(_, &c)| c != 0.0);
                touched.extend(occupied.map(|(i, _)| (first + i) as u32));
            } else {
                touched.sort_unstable();
            }
        };
        run(parts.len(), &band);
        let mut occupied = last;
        occupied.clear();
        (self.resting_units, self.held, self.rim) = (0, 0.0, 0);
        self.counted.clear();
        for part in parts {
            let Band {
                touched,
                units,
                held,
                rim,
                counted,
                ..
            } = part.into_inner();
            occupied.extend(touched);
            self.resting_units += units;
            self.held += held;
            self.rim = self.rim.max(rim);
            self.counted.extend(counted);
        }
        self.covered = covered;
        self.touched = occupied;
    }

    /// The supported cells from this frame's own counts (before other armies' are added).
    fn support_cells(&mut self) {
        let occupied = self.touched.clone();
        if occupied != self.occupied {
            self.find_support(&occupied);
        }
        self.occupied = occupied;
    }

    /// Adds the shares of other armies' resting units to `covered`, and lists the cells
    /// they alone cover (sorted) in `foreign_cells`; whether it added any.
    fn cover_foreign(
        &mut self,
        grid: &Grid,
        foreign: impl IntoIterator<Item = (Vec2, f32)>,
    ) -> bool {
        self.foreign_cells.clear();
        let size = grid.cell_size();
        let mut shares: Vec<(u32, f32)> = Vec::new();
        for (pos, radius) in foreign {
            let Some(i) = self.index_of(grid, pos) else {
                continue;
            };
            if covers_a_share(radius, size) {
                shares.push((i as u32, cell_share(radius, size)));
            } else {
                shares.extend(
                    self.cells_under(grid, i, pos, radius)
                        .map(|j| (j as u32, 1.0)),
                );
            }
        }
        // In cell order, each cell's shares in the order given: the same sums every run.
        shares.sort_by_key(|&(i, _)| i);
        let added = !shares.is_empty();
        for (i, share) in shares {
            let c = &mut self.covered[i as usize];
            if *c == 0.0 && self.foreign_cells.last() != Some(&i) {
                self.foreign_cells.push(i);
            }
            *c += share;
        }
        added
    }

    /// The taken cells from this frame's counts, and a new search when they call for one.
    pub(super) fn take_cells(&mut self) {
        let mut taken: Vec<u32> = (self.occupied.iter().chain(&self.foreign_cells))
            .copied()
            .filter(|&i| self.covered[i as usize] >= TAKEN)
            .collect();
        if !self.foreign_cells.is_empty() {
            taken.sort_unstable();
        }
        // The steps are searched again only when the taken cells changed: when one was
        // freed, or a target was taken since the last search (a quarter of the targets
        // once there are more than `THROTTLE_FROM`), or there were no targets left: between
        // searches a unit walks to a target that is still free, or rests next to the ones
        // that were taken (see `way`). Measured on a 300x600-cell area filled by 100k
        // units: searching every frame cost 5 ms a frame.
        if self.searched.as_ref() == Some(&taken) {
            return;
        }
        let targets_taken = self
            .targets
            .iter()
            .filter(|&&i| self.covered[i as usize] >= TAKEN)
            .count();
        let only_added = self
            .searched
            .as_ref()
            .is_some_and(|before| is_subset(before, &taken));
        if only_added && !self.targets.is_empty() && targets_taken < self.targets_to_wait_for() {
            return;
        }
        self.search(taken);
    }

    /// How many targets must be taken before the steps are searched again.
    pub(super) fn targets_to_wait_for(&self) -> usize {
        if self.targets.len() > THROTTLE_FROM {
            self.targets.len().div_ceil(4)
        } else {
            1
        }
    }

    /// Marks the occupied cells joined to the goal's occupied cells (8 neighbours, through
    /// occupied ranked cells).
    pub(super) fn find_support(&mut self, occupied: &[u32]) {
        for &i in &self.occupied {
            self.supported[i as usize] = false;
        }
        self.far_supported = None;
        self.queue.clear();
        for &i in occupied {
            let rank = self.rank[i as usize];
            if rank < self.goal_ranks {
                self.supported[i as usize] = true;
                self.queue.push(i);
            }
        }
        let (w, h) = (self.width as i64, self.height as i64);
        let mut head = 0;
        while head < self.queue.len() {
            let i = self.queue[head] as usize;
            head += 1;
            let rank = self.rank[i];
            self.far_supported = Some(self.far_supported.map_or(rank, |f| f.max(rank)));
            let (x, y) = ((i as i64) % w, (i as i64) / w);
            for (dx, dy) in NEIGHBOURS {
                let (nx, ny) = (x + dx, y + dy);
                if !((0..w).contains(&nx) && (0..h).contains(&ny)) {
                    continue;
                }
                let j = (ny * w + nx) as usize;
                if !self.supported[j] && self.covered[j] > 0.0 && self.rank[j] != UNRANKED {
                    self.supported[j] = true;
                    self.queue.push(j as u32);
                }
            }
        }
        self.queue.clear();
    }

    /// The taken cells (box indices, sorted) the steps were last searched with (`None`:
    /// never): what a snapshot saves, so that a restored run searches as the saved one did.
    #[must_use]
    pub fn searched(&self) -> Option<&[u32]> {
        self.searched.as_deref()
    }

    /// Whether `taken` could be the taken cells of a fill of `goal` with `reach` over a map
    /// of `width` x `height` cells (what [`Self::search_with`] accepts), without building
    /// the fill: `Err` says why not (an index outside the box, indices out of order).
    pub fn check_taken(
        goal: &GoalSet,
        reach: u32,
        (width, height): (u32, u32),
        taken: &[u32],
    ) -> Result<(), String> {
        if reach > MAX_REACH {
            return Err(format!(
                "a fill reaches {reach} cells, more than {MAX_REACH}"
            ));
        }
        let cells = goal.cells();
        let first = cells.first().ok_or("a fill is saved for an empty goal")?;
        let (mut lo, mut hi) = (*first, *first);
        for c in cells {
            lo = Cell::new(lo.x.min(c.x), lo.y.min(c.y));
            hi = Cell::new(hi.x.max(c.x), hi.y.max(c.y));
        }
        if hi.x >= width || hi.y >= height {
            return Err("the goal is outside the map".into());
        }
        let w = hi.x.saturating_add(reach).min(width - 1) - lo.x.saturating_sub(reach) + 1;
        let h = hi.y.saturating_add(reach).min(height - 1) - lo.y.saturating_sub(reach) + 1;
        Self::check_taken_in(w as usize * h as usize, taken)
    }

    pub(super) fn check_taken_in(size: usize, taken: &[u32]) -> Result<(), String> {
        if let Some(&bad) = taken.iter().find(|&&i| i as usize >= size) {
            return Err(format!(
                "taken cell {bad} is outside the fill's {size} cells"
            ));
        }
        if !taken.windows(2).all(|w| w[0] < w[1]) {
            return Err("taken cells are not in increasing order".into());
        }
        Ok(())
    }

    /// Searches the steps as if `taken` (box indices, as [`Self::searched`] gives them) were
    /// the taken cells: a restored fill then continues exactly. `Err` names an index
    /// outside the box or out of order.
    pub fn search_with(&mut self, taken: Vec<u32>) -> Result<(), String> {
        Self::check_taken_in(self.rank.len(), &taken)?;
        self.search(taken);
        Ok(())
    }

    /// The targets and steps with `taken` (sorted box indices) taken.
    pub(super) fn search(&mut self, taken: Vec<u32>) {
        self.is_taken.clear();
        self.is_taken.resize(self.rank.len(), false);
        for &i in &taken {
            self.is_taken[i as usize] = true;
        }
        self.searched = Some(taken);
        let free = |i: usize, rank: &[u32], is_taken: &[bool]| rank[i] != UNRANKED && !is_taken[i];
        // The free cells in pieces (4-connected): each piece's targets are its cells of the
        // lowest rank, so a free hole left deep inside a filled part does not draw every unit.
        let (w, h) = (self.width, self.height);
        let (rank, is_taken) = (&self.rank, &self.is_taken);
        self.to_target.fill(u32::MAX);
        self.piece.fill(u32::MAX);
        // Per piece: its lowest-rank cells, its highest rank and how many cells it has.
        let mut pieces: Vec<(Vec<u32>, u32, usize)> = Vec::new();
        for start in 0..rank.len() {
            if self.to_target[start] != u32::MAX || !free(start, rank, is_taken) {
                continue;
            }
            // Mark the piece (steps 0 for now), and find its lowest rank.
            self.queue.clear();
            self.queue.push(start as u32);
            self.to_target[start] = 0;
            bfs_keep(&mut self.queue, &mut self.to_target, w, h, 0, |i| {
                free(i, rank, is_taken)
            });
            let level = self.queue.iter().map(|&i| rank[i as usize]).min();
            let high = self.queue.iter().map(|&i| rank[i as usize]).max();
            let lowest = (self.queue.iter().copied())
                .filter(|&i| Some(rank[i as usize]) == level)
                .collect();
            let cells = self.queue.len();
            for &i in &self.queue {
                self.to_target[i as usize] = u32::MAX - 1;
                self.piece[i as usize] = pieces.len() as u32;
            }
            pieces.push((lowest, high.unwrap_or(0), cells));
        }
        for t in self.to_target.iter_mut() {
            if *t == u32::MAX - 1 {
                *t = u32::MAX;
            }
        }
        let mut seeds = Vec::new();
        self.piece_low.clear();
        self.piece_high.clear();
        self.piece_cells.clear();
        for (lowest, high, cells) in pieces {
            self.piece_low
                .push(lowest.first().map_or(u32::MAX, |&i| self.rank[i as usize]));
            self.piece_high.push(high);
            self.piece_cells.push(cells as u32);
            seeds.extend(lowest);
        }
        seeds.sort_unstable();
        self.low_target = seeds.iter().map(|&i| self.rank[i as usize]).min();
        self.queue.clear();
        self.queue.extend(seeds.iter().copied());
        for &i in &seeds {
            self.to_target[i as usize] = 0;
        }
        bfs(&mut self.queue, &mut self.to_target, w, h, |i| {
            free(i, rank, is_taken)
        });
        self.targets = seeds;
    }

    /// The rank by which the open cells in order hold the army's resting units and the
    /// `coming` still on their way (each taking the share of a cell its resting friends take
    /// on average); `u32::MAX` when the box's cells do not hold them.
    fn rank_holding(&self, coming: u32) -> u32 {
        let per_unit = self.held / f64::from(self.resting_units.max(1));
        let needed = (self.held + per_unit * f64::from(coming)).ceil() as u32;
        match self.open_up_to.partition_point(|&n| n < needed) {
            r if r < self.open_up_to.len() => r as u32,
            _ => u32::MAX,
        }
    }

    /// Whether the army still stands whole on its goal ([`Self::whole_on_goal`]: the units
    /// coming counted here, `coming_total` of them in all), and this frame's rooms. The
    /// pieces where the army's units still coming stand (`coming`;
    /// at least one in [`ARRIVING_SHARE`] of those in the box) are where it arrives; the lowest of their
    /// lowest ranks is the edge the blob grows at now (without units coming: the resting
    /// blob's far edge). A piece where the army does not arrive, of at least `PASS_PIECE`
    /// free cells, whose lowest rank comes `FLOW_SLACK` or more before that edge is a
    /// *room*: nearer the goal, but cut off from the units coming by the army's resting
    /// units (a side room whose door the blob reached first, the deep part of a goal area
    /// beyond a door). It draws the resting units beside it in (see `way`), and the blob
    /// flows into it until the way in opens.
    pub(super) fn find_rooms(
        &mut self,
        grid: &Grid,
        coming: impl IntoIterator<Item = Vec2>,
        coming_total: u32,
    ) {
        self.rooms.clear();
        let mut count = vec![0u32; self.piece_low.len()];
        let (mut total, mut on_goal) = (0u32, 0u32);
        for pos in coming {
            if let Some(i) = self.index_of(grid, pos) {
                total += 1;
                on_goal += u32::from(self.rank[i] < self.goal_ranks);
                if let Some(n) = count.get_mut(self.piece[i] as usize) {
                    *n += 1;
                }
            }
        }
        let goal_ranks = self.goal_ranks;
        self.whole = self.whole
            && on_goal == coming_total
            && (self.occupied.iter()).all(|&i| self.rank[i as usize] < goal_ranks);
        if self.piece_low.is_empty() {
            return;
        }
        // A few stragglers in a piece do not make it where the army arrives.
        let arriving = (total / ARRIVING_SHARE).max(1);
        let reached: Vec<bool> = count.iter().map(|&n| n >= arriving).collect();
        let coming_to = (self.piece_low.iter().zip(&reached))
            .filter(|&(_, &r)| r)
            .map(|(&low, _)| low)
            .min();
        // Settling: the few still coming, if any, are stragglers (those walking round the
        // blob to free room among them). Units still coming from outside the box count.
        self.settling = coming_total.saturating_mul(SETTLING_SHARE) <= self.resting_units;
        self.fit_rank = self.rank_holding(coming_total);
        self.find_flow();
        let Some(arrival) = coming_to.or_else(|| self.far_supported.map(|f| f.saturating_add(1)))
        else {
            return;
        };
        for (k, ((&low, &cells), &r)) in
            (self.piece_low.iter().zip(&self.piece_cells).zip(&reached)).enumerate()
        {
            // With nobody coming, the piece that reaches past the blob's far edge is the
            // ground round the blob, where anyone would arrive: not a room. (Counted as one,
            // it drew the whole rim of a lopsided blob a cell outward, and the blob got up
            // and rested again every few seconds for ever.)
            let outside = coming_to.is_none() && self.piece_high[k] > arrival;
            if !r
                && !outside
                && cells as usize >= PASS_PIECE
                && low.saturating_add(FLOW_SLACK) <= arrival
            {
                self.rooms.push(k as u32);
            }
        }
    }

    /// The steps the blob flows along (`flow_from_outside`) while the goal holds the army
    /// and part of it rests outside (cut off from the goal's free cells by its own blob: a
    /// goal area fed from two sides, more from one); none otherwise.
    fn find_flow(&mut self) {
        let goal_ranks = self.goal_ranks;
        self.flow_from_outside.clear();
        if !(self.fit_rank < goal_ranks && self.far_supported >= Some(goal_ranks)) {
            return;
        }
        self.flow_from_outside.resize(self.rank.len(), u32::MAX);
        self.queue.clear();
        for &i in &self.occupied {
            if self.supported[i as usize] && self.rank[i as usize] >= goal_ranks {
                self.flow_from_outside[i as usize] = 0;
                self.queue.push(i);
            }
        }
        let rank = &self.rank;
        bfs(
            &mut self.queue,
            &mut self.flow_from_outside,
            self.width,
            self.height,
            |i| rank[i] < goal_ranks,
        );
    }
}
