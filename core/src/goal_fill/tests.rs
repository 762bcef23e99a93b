//! Tests of the rest order, the fill and the ways it gives.

use super::*;

fn area(w: u32, h: u32, cells: impl Iterator<Item = (u32, u32)>) -> (Grid, CostField, GoalSet) {
    let grid = Grid::new(w, h).unwrap();
    let cost = CostField::filled(&grid, 1);
    let goal = GoalSet::new(cells.map(|(x, y)| Cell::new(x, y))).unwrap();
    (grid, cost, goal)
}

fn at(grid: &Grid, x: u32, y: u32) -> Vec2 {
    grid.cell_centre(Cell::new(x, y))
}

#[test]
fn an_area_fills_from_its_middle_out() {
    let (grid, cost, goal) = area(20, 20, (5..10).flat_map(|x| (5..10).map(move |y| (x, y))));
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    // A unit of the army still outside the area: the area fills in order.
    let outside = [at(&grid, 0, 0)];
    fill.update(&grid, [], outside);
    // The middle cell is the deepest: the only target.
    let middle = at(&grid, 7, 7);
    assert_eq!(
        fill.way(&grid, middle, false),
        FillWay::Rest { in_goal: true }
    );
    let corner = at(&grid, 5, 5);
    assert!(matches!(fill.way(&grid, corner, false), FillWay::Toward(_)));
    // Far outside the goal (past the rest area) a unit follows its field.
    assert_eq!(fill.way(&grid, at(&grid, 0, 0), false), FillWay::Outside);
    // Next to the goal it is led in.
    assert!(matches!(
        fill.way(&grid, at(&grid, 4, 7), false),
        FillWay::Toward(_)
    ));
    // Once a unit rests in the middle, the ring around it is next.
    fill.update(&grid, [(middle, 0.45)], outside);
    assert_eq!(
        fill.way(&grid, middle, true),
        FillWay::Rest { in_goal: true }
    );
    // A unit that walks onto the resting blob rests there too (it reached the blob).
    assert_eq!(
        fill.way(&grid, middle, false),
        FillWay::Rest { in_goal: true }
    );
    let ring = at(&grid, 6, 7);
    assert_eq!(
        fill.way(&grid, ring, false),
        FillWay::Rest { in_goal: true }
    );
    assert_eq!(fill.to_target(&grid, corner), Some(2));
}

#[test]
fn a_full_area_grows_a_blob_outside_it_ring_by_ring() {
    let (grid, cost, goal) = area(20, 20, (5..8).flat_map(|x| (5..8).map(move |y| (x, y))));
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    let all: Vec<(Vec2, f32)> = goal
        .cells()
        .iter()
        .map(|&c| (grid.cell_centre(c), 0.45))
        .collect();
    fill.update(&grid, all.iter().copied(), []);
    for &c in goal.cells() {
        assert_eq!(
            fill.way(&grid, grid.cell_centre(c), true),
            FillWay::Rest { in_goal: true }
        );
    }
    // The first ring outside is the target now: a unit there settles, one two rings out
    // walks in to it.
    assert_eq!(
        fill.way(&grid, at(&grid, 8, 6), false),
        FillWay::Rest { in_goal: false }
    );
    assert_eq!(
        fill.way(&grid, at(&grid, 9, 6), false),
        FillWay::Toward(at(&grid, 8, 6))
    );
    assert_eq!(fill.to_target(&grid, at(&grid, 10, 6)), Some(2));
    // Small units: one does not take a cell, four do.
    assert_eq!(cell_share(0.45, 1.0), 1.0);
    assert_eq!(cell_share(0.2, 1.0), 0.25);
    assert_eq!(cell_share(3.0, 1.0), 1.0);
}

#[test]
fn a_one_cell_goal_fills_its_cell_then_the_rings_around_it() {
    let (grid, cost, goal) = area(40, 40, [(20, 20)].into_iter());
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    fill.update(&grid, [], []);
    let goal_cell = at(&grid, 20, 20);
    assert_eq!(
        fill.way(&grid, goal_cell, false),
        FillWay::Rest { in_goal: true }
    );
    assert_eq!(
        fill.way(&grid, at(&grid, 22, 20), false),
        FillWay::Toward(at(&grid, 21, 20))
    );
    fill.update(&grid, [(goal_cell, 0.5)], []);
    assert_eq!(
        fill.way(&grid, at(&grid, 21, 20), false),
        FillWay::Rest { in_goal: false }
    );
    // The diagonal cells are 1.41 cells away: the second ring.
    assert!(matches!(
        fill.way(&grid, at(&grid, 21, 21), false),
        FillWay::Toward(_)
    ));
    assert_eq!(
        fill.way(&grid, goal_cell, true),
        FillWay::Rest { in_goal: true }
    );
}

#[test]
fn units_behind_a_queue_walk_round_it_and_a_detached_unit_wakes() {
    let (grid, cost, goal) = area(60, 30, [(10, 15)].into_iter());
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    // A queue from the goal along +x: (10..=16, 15) all resting.
    let queue: Vec<(Vec2, f32)> = (10..=16).map(|x| (at(&grid, x, 15), 0.5)).collect();
    // Units still coming stand farther out.
    let coming = [at(&grid, 22, 15)];
    fill.update(&grid, queue.iter().copied(), coming);
    // The unit behind the queue's end does not rest there: room beside the queue is
    // nearer the goal.
    let behind = at(&grid, 17, 15);
    assert!(
        matches!(fill.way(&grid, behind, false), FillWay::Toward(_)),
        "{:?}",
        fill.way(&grid, behind, false)
    );
    // The queue's tail is supported (it touches the goal through resting units): while
    // units come in it stays.
    assert_eq!(
        fill.way(&grid, at(&grid, 16, 15), true),
        FillWay::Rest { in_goal: false }
    );
    // With nobody coming, the open room beside the queue, nearer the goal than its tail,
    // draws it: the queue flows into a blob.
    fill.update(&grid, queue.iter().copied(), []);
    assert!(matches!(
        fill.way(&grid, at(&grid, 16, 15), true),
        FillWay::Toward(_)
    ));
    // A unit resting away from the blob is not supported: it walks on.
    let mut resting = queue.clone();
    resting.push((at(&grid, 14, 19), 0.5));
    fill.update(&grid, resting.iter().copied(), coming);
    assert!(matches!(
        fill.way(&grid, at(&grid, 14, 19), true),
        FillWay::Toward(_)
    ));
}

#[test]
fn a_part_of_the_blob_cut_off_drains_from_its_front() {
    let (grid, cost, goal) = area(60, 40, [(10, 20)].into_iter());
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    // The blob: the goal cell and an arm north of it (x = 10, y 5..=20), which keeps the
    // rest area wide, and a file east out to x = 13 joining a block beyond it (x 14..=20,
    // y 18..=22) to the goal. All at rest.
    let arm: Vec<(Vec2, f32)> = (5..=20).map(|y| (at(&grid, 10, y), 0.5)).collect();
    let file: Vec<(Vec2, f32)> = (11..=13).map(|x| (at(&grid, x, 20), 0.5)).collect();
    let block: Vec<(Vec2, f32)> = (14..=20)
        .flat_map(|x| (18..=22).map(move |y| (x, y)))
        .map(|(x, y)| (at(&grid, x, y), 0.5))
        .collect();
    // Enough of the army still coming that it is not settling yet.
    let coming: Vec<Vec2> = (16..=24).map(|y| at(&grid, 26, y)).collect();
    let blob = |parts: &[&[(Vec2, f32)]]| -> Vec<(Vec2, f32)> {
        parts.iter().flat_map(|p| p.iter().copied()).collect()
    };
    fill.update(&grid, blob(&[&arm, &file, &block]), coming.iter().copied());
    for &(pos, _) in &block {
        assert!(matches!(fill.way(&grid, pos, true), FillWay::Rest { .. }));
    }
    // The file's unit at x = 13 walks on: the block has lost its support. Only its front
    // (free cells nearer the goal beside it) gets up; its middle and its back stay at
    // rest until room opens beside them.
    let cut = blob(&[&arm, &file[..2], &block]);
    fill.update(&grid, cut.iter().copied(), coming.iter().copied());
    let front = at(&grid, 14, 20);
    assert!(
        matches!(fill.way(&grid, front, true), FillWay::Toward(_)),
        "{:?}",
        fill.way(&grid, front, true)
    );
    for (x, y) in [(17, 20), (20, 20), (20, 18), (16, 19)] {
        assert_eq!(
            fill.way(&grid, at(&grid, x, y), true),
            FillWay::Rest { in_goal: false },
            "({x}, {y})"
        );
    }
    // Once the front has walked on, the unit behind it has free room nearer the goal
    // beside it, and follows.
    let drained: Vec<(Vec2, f32)> = cut.iter().copied().filter(|&(p, _)| p != front).collect();
    fill.update(&grid, drained.iter().copied(), coming.iter().copied());
    assert!(matches!(
        fill.way(&grid, at(&grid, 15, 20), true),
        FillWay::Toward(_)
    ));
    assert_eq!(
        fill.way(&grid, at(&grid, 20, 20), true),
        FillWay::Rest { in_goal: false }
    );
    // A blob with nobody on its goal any more (the unit on it pushed off) gets up whole:
    // the rim of a square round the free goal cell, with no free room nearer beside it,
    // does not stay.
    let square: Vec<(Vec2, f32)> = (7..=13)
        .flat_map(|x| (17..=23).map(move |y| (x, y)))
        .filter(|&c| c != (10, 20))
        .map(|(x, y)| (at(&grid, x, y), 0.5))
        .collect();
    fill.update(&grid, square.iter().copied(), coming.iter().copied());
    assert!(!matches!(
        fill.way(&grid, at(&grid, 13, 20), true),
        FillWay::Rest { .. }
    ));
}

#[test]
fn the_box_grows_as_the_army_nears_its_edge() {
    let (grid, cost, goal) = area(200, 200, [(100, 100)].into_iter());
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    assert_eq!(fill.reach(), FIRST_REACH);
    fill.update(&grid, [], []);
    assert!(!fill.wants_more_reach());
    // A resting disc of 12 cells' radius around the goal.
    let blob: Vec<(Vec2, f32)> = (88..=112)
        .flat_map(|x| (88..=112).map(move |y| (x, y)))
        .filter(|&(x, y)| (x as i32 - 100).pow(2) + (y as i32 - 100).pow(2) <= 144)
        .map(|(x, y)| (at(&grid, x, y), 0.5))
        .collect();
    fill.update(&grid, blob.iter().copied(), []);
    assert!(fill.wants_more_reach());
    let mut bigger = GoalFill::with_reach(&goal, &cost, fill.grown_reach()).unwrap();
    bigger.update(&grid, blob.iter().copied(), []);
    assert!(!bigger.wants_more_reach());
    assert_eq!(
        bigger.way(&grid, at(&grid, 100, 100), true),
        FillWay::Rest { in_goal: true }
    );
}

#[test]
fn a_search_is_repeated_exactly_from_its_taken_cells() {
    let (grid, cost, goal) = area(30, 30, (3..20).flat_map(|x| (4..15).map(move |y| (x, y))));
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    let resting: Vec<(Vec2, f32)> = (5..12).map(|x| (at(&grid, x, 9), 0.45)).collect();
    fill.update(&grid, resting.iter().copied(), []);
    let taken = fill.searched().unwrap().to_vec();
    assert_eq!(taken.len(), 7);
    GoalFill::check_taken(&goal, fill.reach(), (30, 30), &taken).unwrap();
    let mut again = GoalFill::with_reach(&goal, &cost, fill.reach()).unwrap();
    again.search_with(taken).unwrap();
    assert_eq!(again.to_target, fill.to_target);
    assert_eq!(again.targets, fill.targets);
    assert!(again.search_with(vec![5, 3]).is_err());
    assert!(again.search_with(vec![100_000]).is_err());
    assert!(GoalFill::check_taken(&goal, fill.reach(), (30, 30), &[100_000]).is_err());
    assert!(GoalFill::check_taken(&goal, MAX_REACH + 1, (30, 30), &[]).is_err());
}

#[test]
fn terrain_changes_are_noticed() {
    let (_, mut cost, goal) = area(10, 10, (2..5).map(|x| (x, 2)));
    let fill = GoalFill::new(&goal, &cost).unwrap();
    assert!(fill.is_current(&cost));
    cost.set(Cell::new(3, 2), WALL);
    assert!(!fill.is_current(&cost));
}

#[test]
fn a_goal_with_no_open_cell_has_no_fill() {
    let (_, mut cost, goal) = area(10, 10, [(3, 3)].into_iter());
    cost.set(Cell::new(3, 3), WALL);
    assert!(GoalFill::new(&goal, &cost).is_none());
}

#[test]
fn a_room_cut_off_by_the_blob_draws_the_resting_units_beside_it() {
    // A goal area of two rooms joined by a door at (10, 5); the army came in from the
    // west and holds the west room and the door: the east room is cut off.
    let grid = Grid::new(22, 11).unwrap();
    let mut cost = CostField::filled(&grid, 1);
    for y in 0..11 {
        if y != 5 {
            cost.set(Cell::new(10, y), WALL);
        }
    }
    let goal = GoalSet::new((1..21).flat_map(|x| (1..10).map(move |y| Cell::new(x, y)))).unwrap();
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    let west: Vec<(Vec2, f32)> = (1..11)
        .flat_map(|x| (1..10).map(move |y| (x, y)))
        .filter(|&(x, y)| x < 10 || y == 5)
        .map(|(x, y)| (at(&grid, x, y), 0.5))
        .collect();
    // Units still coming stand west of the goal.
    fill.update(&grid, west.iter().copied(), [at(&grid, 0, 5)]);
    // The unit resting in the door walks on into the east room.
    assert!(matches!(fill.way(&grid, at(&grid, 10, 5), true), FillWay::Toward(p) if p.x > 10.5));
    // One deep in the west room stays.
    assert_eq!(
        fill.way(&grid, at(&grid, 3, 3), true),
        FillWay::Rest { in_goal: true }
    );
}

#[test]
fn nothing_nearer_looks_only_where_a_unit_can_step() {
    // A corridor along y = 2, the goal at its west end; the parallel corridor y = 4 is
    // behind a wall and holds free cells of lower rank.
    let grid = Grid::new(12, 7).unwrap();
    let mut cost = CostField::filled(&grid, 1);
    for x in 0..12 {
        for y in [1, 3, 5] {
            cost.set(Cell::new(x, y), WALL);
        }
    }
    cost.set(Cell::new(0, 3), 1);
    let goal = GoalSet::single(Cell::new(0, 2));
    let mut fill = GoalFill::with_reach(&goal, &cost, 16).unwrap();
    let queue: Vec<(Vec2, f32)> = (0..5).map(|x| (at(&grid, x, 2), 0.5)).collect();
    fill.update(&grid, queue.iter().copied(), []);
    // Behind the queue's tail nothing nearer is in reach (the other corridor is behind a
    // wall), though its cells are nearer the goal.
    assert!(fill.nothing_nearer(&grid, at(&grid, 5, 2), 2));
    // Beside an open cell of a lower rank there is.
    assert!(!fill.nothing_nearer(&grid, at(&grid, 1, 4), 1));
}

#[test]
fn the_way_round_does_not_cut_corners() {
    let grid = Grid::new(30, 30).unwrap();
    let mut cost = CostField::filled(&grid, 1);
    cost.set(Cell::new(14, 15), WALL);
    let goal = GoalSet::single(Cell::new(5, 5));
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    fill.update(&grid, [], []);
    // From (15, 15), the step to (14, 14) would cut the wall's corner.
    let to = fill.way_round(&grid, at(&grid, 15, 15)).unwrap();
    assert_ne!(to, at(&grid, 14, 14));
    assert!(fill.to_target(&grid, to) < fill.to_target(&grid, at(&grid, 15, 15)));
}

#[test]
fn a_big_body_covering_a_goal_cell_stands_on_the_goal() {
    let (grid, cost, _) = area(20, 20, [(10, 10)].into_iter());
    let goal = GoalSet::single(Cell::new(10, 10));
    let fill = GoalFill::new(&goal, &cost).unwrap();
    let beside = at(&grid, 11, 10);
    assert!(!fill.covers_goal(&grid, beside, 0.4));
    assert!(fill.covers_goal(&grid, beside, 1.5));
    assert!(fill.covers_goal(&grid, at(&grid, 10, 10), 0.4));
}

/// Counting the resting units in bands of rows gives the fill that one band gives, for
/// crowds of small, mixed and large units (a large one covers cells of several bands), over
/// several frames, whatever the number of bands and the order the bands run in.
#[test]
fn bands_count_as_one_band_does() {
    use rand_core::{RngCore, SeedableRng};
    let (grid, cost, goal) = area(40, 36, (12..28).flat_map(|x| (10..24).map(move |y| (x, y))));
    let mut rng = rand_pcg::Pcg32::seed_from_u64(3);
    let mut unit = move || (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32;
    let mut one = GoalFill::new(&goal, &cost).unwrap();
    let mut banded: Vec<GoalFill> = (0..6).map(|_| one.clone()).collect();
    for frame in 0..8 {
        let crowd: Vec<(Vec2, f32)> = (0..150 + 40 * frame)
            .map(|_| {
                let pos = Vec2::new(4.0 + 32.0 * unit(), 3.0 + 30.0 * unit());
                let radius = [0.2, 0.3, 0.45, 0.45, 0.7, 1.6][(unit() * 6.0) as usize % 6];
                (pos, radius)
            })
            .collect();
        let coming = [Vec2::new(2.5, 2.5), Vec2::new(30.5, 4.5)];
        one.update(&grid, crowd.iter().copied(), coming);
        for (k, fill) in banded.iter_mut().enumerate() {
            let bands = [2, 3, 5, 7, 36, 100][k];
            // Bands run last to first.
            let backwards = |jobs: usize, job: &crate::Job<'_>| (0..jobs).rev().for_each(job);
            fill.update_in(
                &grid,
                || crowd.iter().copied(),
                [],
                coming,
                2,
                bands,
                backwards,
            );
            assert_eq!(*fill, one, "{bands} bands differ from one at frame {frame}");
        }
    }
}

/// A crowd at rest whose bodies move only within their cells keeps its counts, and the fill
/// is then the one a fresh count makes; once a body changes cell, or another army's unit
/// rests in the box, the count is taken again. Mixed radii: a body wider than a cell is
/// counted again whenever its centre moves.
#[test]
fn counts_are_kept_while_the_resting_units_keep_their_cells() {
    let (grid, cost, goal) = area(40, 36, (12..28).flat_map(|x| (10..24).map(move |y| (x, y))));
    let crowd = |nudge: f32, big: bool| -> Vec<(Vec2, f32)> {
        let mut units: Vec<(Vec2, f32)> = (12..28)
            .flat_map(|x| (10..24).map(move |y| (x, y)))
            .map(|(x, y)| (at(&grid, x, y) + Vec2::splat(nudge), 0.45))
            .collect();
        if big {
            units.push((at(&grid, 20, 30) + Vec2::splat(nudge), 1.2));
        }
        units
    };
    let coming = [Vec2::new(2.5, 2.5)];
    let update = |fill: &mut GoalFill, units: &[(Vec2, f32)], foreign: &[(Vec2, f32)]| {
        let one = |jobs: usize, job: &crate::Job<'_>| (0..jobs).for_each(job);
        fill.update_in(
            &grid,
            || units.iter().copied(),
            foreign.iter().copied(),
            coming,
            1,
            2,
            one,
        );
    };
    let fresh = |units: &[(Vec2, f32)], foreign: &[(Vec2, f32)]| {
        let mut f = GoalFill::new(&goal, &cost).unwrap();
        update(&mut f, units, foreign);
        f
    };
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    update(&mut fill, &crowd(0.0, false), &[]);
    // Nudged within their cells: the counts hold, and equal a fresh count's.
    let nudged = crowd(0.2, false);
    assert!(fill.counts_again(&grid, &|| nudged.iter().copied()));
    update(&mut fill, &nudged, &[]);
    assert_eq!(fill, fresh(&nudged, &[]));
    // One body in another cell: counted again.
    let mut moved = nudged.clone();
    moved[7].0 += Vec2::new(1.0, 0.0);
    assert!(!fill.counts_again(&grid, &|| moved.iter().copied()));
    update(&mut fill, &moved, &[]);
    assert_eq!(fill, fresh(&moved, &[]));
    // Another army's unit at rest in the box: its share is in the counts, so the next
    // update counts again, with or without it.
    let foreign = [(at(&grid, 14, 12), 0.45)];
    update(&mut fill, &moved, &foreign);
    assert!(!fill.counts_again(&grid, &|| moved.iter().copied()));
    update(&mut fill, &moved, &[]);
    assert_eq!(fill, fresh(&moved, &[]));
    // A body wider than a cell: its centre is part of what was counted.
    let (big, big_nudged) = (crowd(0.0, true), crowd(0.1, true));
    update(&mut fill, &big, &[]);
    assert!(fill.counts_again(&grid, &|| big.iter().copied()));
    assert!(!fill.counts_again(&grid, &|| big_nudged.iter().copied()));
    update(&mut fill, &big_nudged, &[]);
    assert_eq!(fill, fresh(&big_nudged, &[]));
}

/// An army that has stood whole on its goal since it was sent rests where it stands; one
/// with a unit coming from outside sends the units at the area's edge on to its deepest free
/// cells, so the way in stays open, and keeps to that order once the last unit is in.
#[test]
fn an_army_whole_on_its_goal_rests_where_it_stands() {
    let (grid, cost, goal) = area(30, 30, (5..25).flat_map(|x| (5..25).map(move |y| (x, y))));
    // Units walking on the area's edge cells (nobody rests yet), one per cell.
    let edge: Vec<Vec2> = (5..25).map(|x| at(&grid, x, 5)).collect();
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    fill.update(&grid, [], edge.iter().copied());
    assert!(fill.whole_on_goal());
    for &pos in &edge {
        assert_eq!(fill.way(&grid, pos, false), FillWay::Rest { in_goal: true });
    }
    // A unit on a taken cell does not rest there: it is not free.
    let resting = [(edge[3], 0.45)];
    fill.update(&grid, resting, edge.iter().copied());
    assert!(fill.whole_on_goal());
    assert_ne!(
        fill.way(&grid, edge[3], false),
        FillWay::Rest { in_goal: true }
    );
    // One more unit, outside the area: the edge walks deeper, and goes on doing so after
    // that unit came in.
    let outside = at(&grid, 2, 2);
    fill.update(&grid, [], edge.iter().copied().chain([outside]));
    assert!(!fill.whole_on_goal());
    fill.update(&grid, [], edge.iter().copied());
    assert!(!fill.whole_on_goal());
    for &pos in &edge {
        assert!(
            matches!(fill.way(&grid, pos, false), FillWay::Toward(_)),
            "{pos}"
        );
    }
    // A fill that replaces it keeps that.
    let mut grown = GoalFill::with_reach(&goal, &cost, 2 * FIRST_REACH).unwrap();
    grown.keep_whole_from(fill.whole_on_goal());
    grown.update(&grid, [], edge.iter().copied());
    assert!(!grown.whole_on_goal());
    // A unit outside the fill's box counts too: `coming_total` counts it.
    let mut far = GoalFill::new(&goal, &cost).unwrap();
    far.update_in(
        &grid,
        std::iter::empty,
        [],
        edge.iter().copied(),
        21,
        1,
        crate::in_order,
    );
    assert!(!far.whole_on_goal());
    // A unit resting outside the goal (settled): the goal does not hold the army.
    let mut settled = GoalFill::new(&goal, &cost).unwrap();
    settled.update(&grid, [(at(&grid, 4, 10), 0.45)], edge.iter().copied());
    assert!(!settled.whole_on_goal());
}

/// A walking unit hemmed in on a cell of the resting blob (every cell beside it taken, no
/// way to a target) rests there, even while a hole nearer the goal holds the blob's lowest
/// target; beside the blob's edge, with free room to walk to, it walks on.
#[test]
fn a_unit_hemmed_in_inside_the_blob_rests_there() {
    let (grid, cost, goal) = area(30, 30, [(15, 15)].into_iter());
    // A blob of resting units on every cell within 6 of the goal but one hole, 2 from it.
    let hole = (17, 15);
    let blob: Vec<(Vec2, f32)> = (9..=21)
        .flat_map(|x| (9..=21).map(move |y| (x, y)))
        .filter(|&c| c != hole)
        .map(|(x, y)| (at(&grid, x, y), 0.45))
        .collect();
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    let outside = [at(&grid, 1, 1)];
    fill.update(&grid, blob.iter().copied(), outside);
    // Deep in the blob, 5 cells out, away from the hole.
    let hemmed = at(&grid, 10, 15) + Vec2::new(0.2, 0.1);
    assert_eq!(
        fill.way(&grid, hemmed, false),
        FillWay::Rest { in_goal: false }
    );
    // On the blob's edge, free room beside it: it walks round to a target.
    let edge = at(&grid, 21, 9);
    assert!(matches!(fill.way(&grid, edge, false), FillWay::Toward(_)));
}

/// A lopsided blob: a disc round a one-cell goal and a tail along +x.
fn lopsided(grid: &Grid) -> Vec<(Vec2, f32)> {
    let disc = (8..=12).flat_map(|x| (13..=17).map(move |y| (x, y)));
    let tail = (13..=18).map(|x| (x, 15));
    disc.chain(tail)
        .map(|(x, y)| (at(grid, x, y), 0.5))
        .collect()
}

#[test]
fn a_settling_blob_keeps_its_near_rim_and_moves_its_far_rim_round() {
    let (grid, cost, goal) = area(40, 30, [(10, 15)].into_iter());
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    let resting = lopsided(&grid);
    // Nobody coming: the ground round the blob is no room. The rim beside the goal stays
    // at rest (it was drawn a cell outward, and the blob got up every few seconds)...
    fill.update(&grid, resting.iter().copied(), []);
    assert!(fill.settling);
    for (x, y) in [(8, 15), (10, 13), (12, 17)] {
        assert_eq!(
            fill.way(&grid, at(&grid, x, y), true),
            FillWay::Rest { in_goal: false },
            "({x}, {y})"
        );
    }
    // ...and the tail's end, far beyond the free room beside the disc, walks round to it.
    assert!(matches!(
        fill.way(&grid, at(&grid, 18, 15), true),
        FillWay::Toward(_)
    ));
    // Walking round, past the rest area, it keeps to the fill's way.
    let out = at(&grid, 23, 18);
    assert!(!fill.in_area(fill.index_of(&grid, out).unwrap()));
    assert!(
        matches!(fill.way(&grid, out, false), FillWay::Toward(_)),
        "{:?}",
        fill.way(&grid, out, false)
    );
    // While the army still arrives (one unit coming for fewer than `SETTLING_SHARE`
    // resting), the tail stays and the blob grows in order.
    let coming: Vec<Vec2> = (0..5).map(|k| at(&grid, 30, 10 + k)).collect();
    fill.update(&grid, resting.iter().copied(), coming);
    assert!(!fill.settling);
    assert_eq!(
        fill.way(&grid, at(&grid, 18, 15), true),
        FillWay::Rest { in_goal: false }
    );
    assert_eq!(fill.way(&grid, out, false), FillWay::Outside);
}

/// Units of radius 0.5 on the eight cells round `centre`, but for `open`.
fn ring_round(grid: &Grid, centre: (u32, u32), open: Option<(u32, u32)>) -> Vec<(Vec2, f32)> {
    let (cx, cy) = centre;
    (cx - 1..=cx + 1)
        .flat_map(|x| (cy - 1..=cy + 1).map(move |y| (x, y)))
        .filter(|&c| c != centre && Some(c) != open)
        .map(|(x, y)| (at(grid, x, y), 0.5))
        .collect()
}

/// Updates `fill` with its army's resting units `own` and other armies' `others`, nobody
/// coming, in one band.
fn update_beside(fill: &mut GoalFill, grid: &Grid, own: &[(Vec2, f32)], others: &[(Vec2, f32)]) {
    let (own, others) = (own.iter().copied(), others.iter().copied());
    fill.update_in(grid, || own.clone(), others, [], 0, 1, crate::in_order);
}

#[test]
fn cells_other_armies_rest_on_are_no_free_room() {
    let (grid, cost, goal) = area(30, 30, [(10, 10)].into_iter());
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    // The army rests on its goal cell; another army rests on the ring round it, but for
    // its east cell.
    let own = [(at(&grid, 10, 10), 0.5)];
    update_beside(
        &mut fill,
        &grid,
        &own,
        &ring_round(&grid, (10, 10), Some((11, 10))),
    );
    // The one free cell of the ring is the target: a unit beside a cell the other army
    // holds does not rest there.
    assert_eq!(fill.to_target(&grid, at(&grid, 11, 10)), Some(0));
    assert_eq!(fill.to_target(&grid, at(&grid, 9, 10)), None);
    assert_eq!(
        fill.way(&grid, at(&grid, 11, 10), false),
        FillWay::Rest { in_goal: false }
    );
    // The other army's cells are no support: its units are not this army's blob.
    assert!(!fill.supported[fill.index_of(&grid, at(&grid, 9, 10)).unwrap()]);
    // Once it leaves, its cells are free again.
    update_beside(&mut fill, &grid, &own, &[]);
    assert_eq!(fill.to_target(&grid, at(&grid, 9, 10)), Some(0));
}

#[test]
fn a_walker_does_not_rest_on_a_target_outside_the_rest_area() {
    let (grid, cost, goal) = area(40, 30, [(10, 15)].into_iter());
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    let own = lopsided(&grid);
    // Another army rests in a ring far out, round one free cell: a piece of its own, whose
    // one cell is its target.
    let pocket = (25, 15);
    update_beside(&mut fill, &grid, &own, &ring_round(&grid, pocket, None));
    assert!(fill.settling);
    let p = at(&grid, pocket.0, pocket.1);
    assert_eq!(fill.to_target(&grid, p), Some(0));
    assert!(!fill.in_area(fill.index_of(&grid, p).unwrap()));
    // A unit walking round there does not rest: at rest it would be outside the area and
    // get up again the next frame (it flipped between settled and moving for good).
    assert_eq!(fill.way(&grid, p, false), FillWay::Outside);
    assert_eq!(fill.way(&grid, p, true), FillWay::Outside);
}

/// A goal area filling a corridor (rows 1 to 5 of 40 columns, walls above and below), its
/// cells x = 10..30; the army holds its west half and three columns outside it to the west.
fn corridor_goal() -> (Grid, CostField, GoalSet) {
    corridor(40, 7, 10..30)
}

/// A corridor of `width` columns and `height` rows, walls on its first and last rows, its
/// goal the open cells of columns `goal`.
fn corridor(width: u32, height: u32, goal: std::ops::Range<u32>) -> (Grid, CostField, GoalSet) {
    let grid = Grid::new(width, height).unwrap();
    let mut cost = CostField::filled(&grid, 1);
    for x in 0..width {
        cost.set(Cell::new(x, 0), WALL);
        cost.set(Cell::new(x, height - 1), WALL);
    }
    let cells = goal.flat_map(|x| (1..height - 1).map(move |y| Cell::new(x, y)));
    (grid, cost, GoalSet::new(cells).unwrap())
}

fn resting_in(grid: &Grid, xs: std::ops::Range<u32>) -> Vec<(Vec2, f32)> {
    xs.flat_map(|x| (1..6).map(move |y| (at(grid, x, y), 0.5)))
        .collect()
}

#[test]
fn a_goal_that_holds_its_army_draws_in_the_units_resting_outside_it() {
    let (grid, cost, goal) = corridor_goal();
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    // Fed from both ends, more from the west: the west half and 15 units outside it rest,
    // the east half of the goal is free and cut off from them by the blob.
    let mut resting = resting_in(&grid, 7..20);
    fill.update(&grid, resting.iter().copied(), []);
    // The blob's east face steps on into the free goal cells...
    assert!(matches!(fill.way(&grid, at(&grid, 19, 3), true), FillWay::Toward(p) if p.x > 19.5));
    // ...one deep inside it, and one outside it with no free goal cell beside it, stay.
    let stays = [(15, 3, true), (8, 3, false)];
    for (x, y, in_goal) in stays {
        assert_eq!(
            fill.way(&grid, at(&grid, x, y), true),
            FillWay::Rest { in_goal }
        );
    }
    // A hole left in the blob is filled from the side of the units outside: the hole
    // moves toward them, and the one beside the goal's edge steps in.
    resting.retain(|&(p, _)| p != at(&grid, 12, 3));
    fill.update(&grid, resting.iter().copied(), []);
    assert_eq!(
        fill.way(&grid, at(&grid, 11, 3), true),
        FillWay::Toward(at(&grid, 12, 3))
    );
    assert_eq!(
        fill.way(&grid, at(&grid, 13, 3), true),
        FillWay::Rest { in_goal: true }
    );
    resting.retain(|&(p, _)| p != at(&grid, 10, 3));
    fill.update(&grid, resting.iter().copied(), []);
    assert_eq!(
        fill.way(&grid, at(&grid, 9, 3), true),
        FillWay::Toward(at(&grid, 10, 3))
    );
}

#[test]
fn an_army_wholly_in_its_goal_does_not_flow() {
    let (grid, cost, goal) = corridor_goal();
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    // The same blob with nobody outside the goal, once the army (which came from the
    // west) has stopped arriving: the east face stays at rest.
    let resting = resting_in(&grid, 10..20);
    fill.update(&grid, resting.iter().copied(), [at(&grid, 0, 3)]);
    fill.update(&grid, resting.iter().copied(), []);
    assert_eq!(
        fill.way(&grid, at(&grid, 19, 3), true),
        FillWay::Rest { in_goal: true }
    );
}

#[test]
fn a_blob_of_bodies_bigger_than_a_cell_flows_on_past_their_own_rims() {
    // The corridor is rows 1 to 7 of 60 columns, its goal x = 10..40. Bodies of radius 1,
    // two cells apart, rest from x = 5 to x = 21: each covers the 3x3 cells round its own,
    // so the cell beside the blob's east face is under the face's own rim, and the free
    // goal cells begin one further on.
    let (grid, cost, goal) = corridor(60, 9, 10..40);
    let mut fill = GoalFill::new(&goal, &cost).unwrap();
    let resting: Vec<(Vec2, f32)> = (5..=21)
        .step_by(2)
        .flat_map(|x| [2, 4, 6].map(|y| (at(&grid, x, y), 1.0)))
        .collect();
    fill.update(&grid, resting.iter().copied(), []);
    // The goal holds the army, part of which rests outside it: the face steps east into
    // the cell its own rim covers, toward the free room past it.
    assert_eq!(
        fill.way(&grid, at(&grid, 21, 4), true),
        FillWay::Toward(at(&grid, 22, 4))
    );
    // A body inside the blob, whose rim touches its neighbours', stays.
    assert_eq!(
        fill.way(&grid, at(&grid, 15, 4), true),
        FillWay::Rest { in_goal: true }
    );
}
