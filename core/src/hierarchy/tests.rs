//! Tests of the hierarchy against things it did not compute itself: the binary-heap
//! Dijkstra of `reference.rs` and a graph built from scratch.

use crate::Job;
use proptest::prelude::*;

use super::*;
use crate::cell_memo::CellMemo;
use crate::cost_field::CostField;
use crate::direction::Direction;
use crate::grid::{Cell, Grid};
use crate::integration::UNREACHABLE;
use crate::reference::dijkstra_binary_heap;
use crate::terrain::WALL;

/// Width, height, sector size, costs.
type Map = (u32, u32, u32, Vec<u8>);

fn arb_map() -> impl Strategy<Value = Map> {
    (2u32..48, 2u32..48, 2u32..12).prop_flat_map(|(w, h, s)| {
        let cost = prop_oneof![
            8 => Just(1u8),
            1 => 2u8..=40,
            3 => Just(WALL),
        ];
        (
            Just(w),
            Just(h),
            Just(s),
            proptest::collection::vec(cost, (w * h) as usize),
        )
    })
}

/// A runner for `*_on` methods: the jobs on two threads, each taking every other one,
/// last first.
pub(super) fn on_two_threads_in_reverse(jobs: usize, job: &Job<'_>) {
    std::thread::scope(|scope| {
        scope.spawn(|| (0..jobs).rev().filter(|i| i % 2 == 0).for_each(job));
        scope.spawn(|| (0..jobs).rev().filter(|i| i % 2 == 1).for_each(job));
    });
}

fn field(w: u32, h: u32, costs: &[u8]) -> CostField {
    CostField::from_costs(&Grid::new(w, h).unwrap(), costs).unwrap()
}

/// The cost field with every cell outside sector `b` made a wall.
fn only_sector(cost: &CostField, b: SectorBounds) -> CostField {
    let g = Grid::new(cost.width(), cost.height()).unwrap();
    let costs: Vec<u8> = (0..g.len())
        .map(|i| {
            let c = g.cell(i);
            if b.contains(i64::from(c.x), i64::from(c.y)) {
                cost.get(c)
            } else {
                WALL
            }
        })
        .collect();
    CostField::from_costs(&g, &costs).unwrap()
}

/// The move the sector fields give from `cell`, its sector's field built first: `None` at
/// goals, in walls and where no goal can be reached.
fn field_move(
    nav: &mut HierarchicalField,
    graph: &PortalGraph,
    cost: &CostField,
    cell: Cell,
) -> Option<Direction> {
    nav.ensure_sector(graph, cost, graph.sectors().sector_of(cell))
        .unwrap();
    let grid = Grid::new(cost.width(), cost.height()).unwrap();
    let (dir, _) = nav.guide(
        graph,
        &grid,
        grid.cell_centre(cell),
        &mut CellMemo::default(),
    );
    Direction::ALL.into_iter().find(|d| d.unit_vector() == dir)
}

/// Walks sector fields from `start`; returns the walked cost (or `None` if it did not reach
/// a goal within a generous number of steps).
fn walk(
    nav: &mut HierarchicalField,
    graph: &PortalGraph,
    cost: &CostField,
    start: Cell,
) -> Option<u32> {
    let mut cell = start;
    let mut total = 0u32;
    for _ in 0..(cost.width() * cost.height() * 2) {
        nav.begin_frame();
        match field_move(nav, graph, cost, cell) {
            None => return nav.route().goals().contains(&cell).then_some(total),
            Some(d) => {
                assert!(cost.moves(cell) & (1 << d as u8) != 0, "illegal move");
                let (dx, dy) = d.offset();
                cell = Cell::new((cell.x as i32 + dx) as u32, (cell.y as i32 + dy) as u32);
                total += u32::from(cost.get(cell)) * d.step();
            }
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn intra_costs_equal_the_reference_inside_each_sector((w, h, s, costs) in arb_map()) {
        let cost = field(w, h, &costs);
        let graph = PortalGraph::build(&cost, s).unwrap();
        for sector in 0..graph.sectors().len() {
            let b = graph.sectors().bounds(sector);
            let masked = only_sector(&cost, b);
            for to in graph.sector_nodes(sector) {
                let reference = dijkstra_binary_heap(&masked, &[graph.node_cell(to)]);
                for from in graph.sector_nodes(sector) {
                    let c = graph.node_cell(from);
                    prop_assert_eq!(
                        graph.intra_cost(from, to),
                        reference[(c.y * w + c.x) as usize]
                    );
                }
            }
        }
        // Portals: partners are one orthogonal step apart, in edge-adjacent sectors, both
        // passable, and every partner links back.
        for n in 0..graph.node_count() as u32 {
            let a = graph.node_cell(n);
            prop_assert!(cost.is_passable(a));
            for &p in graph.portal_partners(n) {
                let b = graph.node_cell(p);
                prop_assert_eq!(a.x.abs_diff(b.x) + a.y.abs_diff(b.y), 1);
                prop_assert!(graph.node_sector(n) != graph.node_sector(p));
                prop_assert!(graph.portal_partners(p).contains(&n));
            }
        }
    }

    #[test]
    fn updated_graph_equals_a_rebuilt_one(
        (w, h, s, costs) in arb_map(),
        batches in proptest::collection::vec(
            proptest::collection::vec((0u32..48, 0u32..48, prop_oneof![Just(1u8), Just(WALL), 2u8..=40]), 1..6),
            1..5,
        ),
    ) {
        let mut cost = field(w, h, &costs);
        let mut graph = PortalGraph::build(&cost, s).unwrap();
        for batch in batches {
            let mut edited = Vec::new();
            for (x, y, c) in batch {
                let cell = Cell::new(x % w, y % h);
                if cost.set(cell, c) {
                    edited.push(cell);
                }
            }
            let redone = graph.update(&cost, &edited).unwrap();
            prop_assert!(redone <= 5 * edited.len());
            prop_assert_eq!(&graph, &PortalGraph::build(&cost, s).unwrap());
        }
    }

    #[test]
    fn route_distances_equal_a_binary_heap_dijkstra_on_the_graph(
        (w, h, s, costs) in arb_map(),
        goal in (0u32..48, 0u32..48),
    ) {
        // The route's bucket ring against a textbook search over the graph's public edges:
        // portal crossings (entered cell's cost times ORTHO_STEP) and intra-sector costs,
        // seeded with the reference distances inside the goal's sector.
        let cost = field(w, h, &costs);
        let goal = Cell::new(goal.0 % w, goal.1 % h);
        prop_assume!(cost.is_passable(goal));
        let graph = PortalGraph::build(&cost, s).unwrap();
        let route = CoarseRoute::search(&graph, &cost, &[goal]).unwrap();
        // Its search in bands and its per-sector pass (in batches of 256 sectors: up to 3
        // here) spread over threads give the same route.
        let spread = CoarseRoute::search_on(&graph, &cost, &[goal], on_two_threads_in_reverse);
        prop_assert_eq!(spread.as_ref(), Ok(&route));
        let gs = graph.sectors().sector_of(goal);
        let inside = dijkstra_binary_heap(&only_sector(&cost, graph.sectors().bounds(gs)), &[goal]);
        let n = graph.node_count();
        let mut dist = vec![UNREACHABLE; n];
        let mut heap = std::collections::BinaryHeap::new();
        for node in graph.sector_nodes(gs) {
            let c = graph.node_cell(node);
            dist[node as usize] = inside[(c.y * w + c.x) as usize];
            heap.push(std::cmp::Reverse((dist[node as usize], node)));
        }
        while let Some(std::cmp::Reverse((d, m))) = heap.pop() {
            if d > dist[m as usize] || d == UNREACHABLE {
                continue;
            }
            let enter = u32::from(cost.get(graph.node_cell(m))) * crate::direction::ORTHO_STEP;
            let partners = graph.portal_partners(m).iter().map(|&p| (p, enter));
            let sector = graph.sector_nodes(graph.node_sector(m));
            let intra = sector.map(|p| (p, graph.intra_cost(p, m)));
            for (p, c) in partners.chain(intra) {
                if p == m || c == UNREACHABLE {
                    continue;
                }
                if d + c < dist[p as usize] {
                    dist[p as usize] = d + c;
                    heap.push(std::cmp::Reverse((d + c, p)));
                }
            }
        }
        for node in 0..n as u32 {
            prop_assert_eq!(route.distance(node), dist[node as usize], "node {}", node);
        }
        // Every next node is one edge of a cheapest path; a node without one walks to a
        // goal inside its own sector or has no route.
        for node in 0..n as u32 {
            let d = dist[node as usize];
            match route.next(&graph, node) {
                Some(q) => {
                    let step = if graph.portal_partners(node).contains(&q) {
                        u32::from(cost.get(graph.node_cell(q))) * crate::direction::ORTHO_STEP
                    } else {
                        graph.intra_cost(node, q)
                    };
                    prop_assert!(q != node && step != UNREACHABLE);
                    prop_assert_eq!(step + dist[q as usize], d, "node {} -> {}", node, q);
                }
                None => {
                    let c = graph.node_cell(node);
                    let walks_to_goal =
                        graph.node_sector(node) == gs && inside[(c.y * w + c.x) as usize] == d;
                    prop_assert!(d == UNREACHABLE || walks_to_goal, "node {} has no next", node);
                }
            }
        }
    }

    #[test]
    fn sector_fields_built_together_on_threads_equal_those_built_one_by_one(
        (w, h, s, costs) in arb_map(),
        goal in (0u32..48, 0u32..48),
        order in proptest::collection::vec(0usize..1000, 1..40),
    ) {
        // The same sectors (some twice) through `ensure_sector` one at a time, and through
        // `ensure_sectors` with its jobs run on two threads in reverse order: the same
        // fields and estimates, built and used in the same frame.
        let cost = field(w, h, &costs);
        let goal = Cell::new(goal.0 % w, goal.1 % h);
        prop_assume!(cost.is_passable(goal));
        let graph = PortalGraph::build(&cost, s).unwrap();
        let sectors: Vec<usize> = order.iter().map(|&i| i % graph.sectors().len()).collect();
        let mut one_by_one = HierarchicalField::new(&graph, &cost, &[goal], usize::MAX).unwrap();
        let mut together = HierarchicalField::new(&graph, &cost, &[goal], usize::MAX).unwrap();
        for &sector in &sectors {
            one_by_one.ensure_sector(&graph, &cost, sector).unwrap();
        }
        together.ensure_sectors(&graph, &cost, &sectors, on_two_threads_in_reverse).unwrap();
        prop_assert_eq!(one_by_one.cache(), together.cache());
        prop_assert_eq!(one_by_one.stats(), together.stats());
    }

    #[test]
    fn retargeted_fields_equal_a_fresh_request(
        (w, h, s, costs) in arb_map(),
        goal in (0u32..48, 0u32..48),
        moves in proptest::collection::vec((-2i32..=2, -2i32..=2), 1..4),
    ) {
        // A goal that moves a cell or two a few times: after each retarget, every kept
        // field gives the values a request made from scratch for the new goal gives, and
        // walking the fields from anywhere still reaches the new goal.
        let cost = field(w, h, &costs);
        let mut goal = Cell::new(goal.0 % w, goal.1 % h);
        prop_assume!(cost.is_passable(goal));
        let graph = PortalGraph::build(&cost, s).unwrap();
        let grid = Grid::new(w, h).unwrap();
        let mut nav = HierarchicalField::new(&graph, &cost, &[goal], usize::MAX).unwrap();
        for (dx, dy) in moves {
            for sector in 0..graph.sectors().len() {
                nav.ensure_sector(&graph, &cost, sector).unwrap();
            }
            let x = (goal.x as i32 + dx).clamp(0, w as i32 - 1) as u32;
            let y = (goal.y as i32 + dy).clamp(0, h as i32 - 1) as u32;
            if !cost.is_passable(Cell::new(x, y)) {
                continue;
            }
            goal = Cell::new(x, y);
            nav.retarget(&graph, &cost, &[goal]).unwrap();
            let mut fresh = HierarchicalField::new(&graph, &cost, &[goal], usize::MAX).unwrap();
            prop_assert_eq!(nav.route(), fresh.route());
            for sector in 0..graph.sectors().len() {
                fresh.ensure_sector(&graph, &cost, sector).unwrap();
            }
            for i in 0..grid.len() {
                let c = grid.cell(i);
                if nav.has_field(graph.sectors().sector_of(c)) {
                    let centre = grid.cell_centre(c);
                    prop_assert_eq!(
                        nav.guide(&graph, &grid, centre, &mut CellMemo::default()).1,
                        fresh.guide(&graph, &grid, centre, &mut CellMemo::default()).1,
                        "cell {}", c
                    );
                }
            }
            let exact = dijkstra_binary_heap(&cost, &[goal]);
            for (i, &best) in exact.iter().enumerate() {
                let c = grid.cell(i);
                if best != UNREACHABLE {
                    let walked = walk(&mut nav, &graph, &cost, c);
                    prop_assert!(walked.is_some_and(|d| d >= best), "from {}", c);
                }
            }
        }
    }

    #[test]
    fn route_costs_are_real_paths_and_fields_always_reach_the_goal(
        (w, h, s, costs) in arb_map(),
        goal in (0u32..48, 0u32..48),
        budget in prop_oneof![Just(0usize), Just(usize::MAX)],
    ) {
        let cost = field(w, h, &costs);
        let goal = Cell::new(goal.0 % w, goal.1 % h);
        prop_assume!(cost.is_passable(goal));
        let graph = PortalGraph::build(&cost, s).unwrap();
        let exact = dijkstra_binary_heap(&cost, &[goal]);
        let mut nav = HierarchicalField::new(&graph, &cost, &[goal], budget).unwrap();
        for n in 0..graph.node_count() as u32 {
            let c = graph.node_cell(n);
            let d = nav.route().distance(n);
            // Never below the true distance; reachable exactly where the true one is.
            prop_assert!(d >= exact[(c.y * w + c.x) as usize]);
            prop_assert_eq!(d == UNREACHABLE, exact[(c.y * w + c.x) as usize] == UNREACHABLE);
        }
        for y in 0..h {
            for x in 0..w {
                let start = Cell::new(x, y);
                let best = exact[(y * w + x) as usize];
                if best == UNREACHABLE {
                    continue;
                }
                let walked = walk(&mut nav, &graph, &cost, start);
                prop_assert!(walked.is_some(), "no arrival from {start}");
                prop_assert!(walked.unwrap() >= best);
            }
        }
    }
}

#[test]
fn one_sector_is_exact_and_fields_respect_the_budget() {
    // A 64x64 open map with a wall across the middle that has one gap.
    let (w, h) = (64u32, 64u32);
    let costs: Vec<u8> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            if y == 31 && x != 50 { WALL } else { 1 }
        })
        .collect();
    let cost = field(w, h, &costs);
    let graph = PortalGraph::build(&cost, DEFAULT_SECTOR_SIZE).unwrap();
    assert_eq!(graph.sectors().len(), 4);
    let goal = Cell::new(5, 60);
    let exact = dijkstra_binary_heap(&cost, &[goal]);
    // Budget for about two sector fields (1 byte a cell, and 4 more for their values: every
    // sector lies within EXACT_DISTANCE of the goal here) and a few estimates.
    let budget = 10 * 1024;
    let mut nav = HierarchicalField::new(&graph, &cost, &[goal], budget).unwrap();
    let before = nav.bytes_in_use();
    // A walk from the far side: the only way is the gap at x = 50.
    let walked = walk(&mut nav, &graph, &cost, Cell::new(5, 2)).unwrap();
    assert!(walked >= exact[2 * w as usize + 5]);
    assert!(
        f64::from(walked) <= 1.05 * f64::from(exact[2 * w as usize + 5]),
        "{walked} vs {}",
        exact[2 * w as usize + 5]
    );
    let stats = nav.stats();
    assert!(stats.fields_built >= 2 && stats.evicted > 0, "{stats:?}");
    // Every frame used at most one field and its neighbours' estimates: the budget holds
    // once the frame moves on.
    nav.begin_frame();
    nav.begin_frame();
    nav.ensure_sector(&graph, &cost, 0).unwrap();
    assert!(
        nav.bytes_in_use() <= before + budget,
        "{}",
        nav.bytes_in_use()
    );
    // Inside the goal's own sector, with the path inside it, the field is exact.
    let mut nav = HierarchicalField::new(&graph, &cost, &[goal], usize::MAX).unwrap();
    let start = Cell::new(20, 40);
    let walked = walk(&mut nav, &graph, &cost, start).unwrap();
    assert_eq!(walked, exact[(start.y * w + start.x) as usize]);
}

#[test]
fn every_unit_has_a_direction_before_any_field_exists() {
    let (w, h) = (96u32, 64u32);
    let grid = Grid::new(w, h).unwrap();
    let goal = Cell::new(90, 3);
    let goal_centre = grid.cell_centre(goal);
    // Open ground: a unit that walks straight along `guide` in quarter-cell steps, with no
    // field ever built, reaches the goal cell from everywhere.
    let open = CostField::filled(&grid, 1);
    let graph = PortalGraph::build(&open, 16).unwrap();
    let nav = HierarchicalField::new(&graph, &open, &[goal], usize::MAX).unwrap();
    for y in (0..h).step_by(3) {
        for x in (0..w).step_by(3) {
            let cell = Cell::new(x, y);
            let mut pos = grid.cell_centre(cell);
            let mut steps = 0;
            while grid.cell_at(pos) != Some(goal) {
                let v = nav.guide(&graph, &grid, pos, &mut CellMemo::default()).0;
                assert!((v.length() - 1.0).abs() < 1e-4, "no direction at {pos}");
                pos += v * 0.25;
                steps += 1;
                assert!(steps < 4 * 4 * (w + h), "from {cell}: stuck at {pos}");
            }
        }
    }
    assert_eq!(
        nav.guide(&graph, &grid, goal_centre, &mut CellMemo::default())
            .0,
        glam::Vec2::ZERO
    );
    // Behind a wall with one gap, every passable cell still has a direction at once (the
    // straight line to the waypoint may cross a sector's inner walls: steering slides along
    // them until the sector's field is built).
    let costs: Vec<u8> = (0..w * h)
        .map(|i| if i % w == 40 && i / w != 50 { WALL } else { 1 })
        .collect();
    let walled = CostField::from_costs(&grid, &costs).unwrap();
    let graph = PortalGraph::build(&walled, 16).unwrap();
    let nav = HierarchicalField::new(&graph, &walled, &[goal], usize::MAX).unwrap();
    for i in 0..grid.len() {
        let cell = grid.cell(i);
        if walled.is_passable(cell) && cell != goal {
            let v = nav
                .guide(
                    &graph,
                    &grid,
                    grid.cell_centre(cell),
                    &mut CellMemo::default(),
                )
                .0;
            assert!((v.length() - 1.0).abs() < 1e-4, "no direction at {cell}");
        }
    }
    assert_eq!(nav.stats().fields_built, 0);
}

#[test]
fn bad_input_is_an_error() {
    let cost = CostField::filled(&Grid::new(10, 10).unwrap(), 1);
    assert_eq!(
        PortalGraph::build(&cost, 1),
        Err(HierarchyError::BadSectorSize(1))
    );
    let graph = PortalGraph::build(&cost, 4).unwrap();
    assert!(matches!(
        HierarchicalField::new(&graph, &cost, &[Cell::new(10, 0)], 0),
        Err(HierarchyError::CellOutside { .. })
    ));
    assert_eq!(
        HierarchicalField::new(&graph, &cost, &[], 0).err(),
        Some(HierarchyError::NoGoal)
    );
    let other = CostField::filled(&Grid::new(9, 10).unwrap(), 1);
    assert!(matches!(
        HierarchicalField::new(&graph, &other, &[Cell::new(1, 1)], 0),
        Err(HierarchyError::SizeMismatch { .. })
    ));
    let mut edited = cost.clone();
    edited.set(Cell::new(3, 3), WALL);
    assert!(matches!(
        HierarchicalField::new(&graph, &edited, &[Cell::new(1, 1)], 0),
        Err(HierarchyError::Stale { .. })
    ));
    let mut walled = cost.clone();
    walled.set(Cell::new(1, 1), WALL);
    let g2 = PortalGraph::build(&walled, 4).unwrap();
    assert_eq!(
        HierarchicalField::new(&g2, &walled, &[Cell::new(1, 1)], 0).err(),
        Some(HierarchyError::NoPassableGoal)
    );
    let mut nav = HierarchicalField::new(&graph, &cost, &[Cell::new(1, 1)], 0).unwrap();
    assert!(nav.ensure_sector(&graph, &edited, 0).is_err());
    assert_eq!(
        nav.ensure_sector(&graph, &cost, 9),
        Err(HierarchyError::NoSuchSector {
            sector: 9,
            count: 9
        })
    );
    let mut g3 = graph.clone();
    assert!(g3.update(&cost, &[Cell::new(10, 10)]).is_err());
}

#[test]
fn a_goal_moving_one_cell_keeps_the_far_sector_fields() {
    // A 256x256 open map with a few wall strips: the goal walks 20 cells east, one cell a
    // move; far sectors keep their fields (shifted), and they equal fresh ones.
    let (w, h) = (256u32, 256u32);
    let costs: Vec<u8> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            if (x % 64 == 40 && y % 50 > 10) || (y % 80 == 30 && x % 70 > 20) {
                WALL
            } else {
                1 + (x / 100) as u8
            }
        })
        .collect();
    let cost = field(w, h, &costs);
    let grid = Grid::new(w, h).unwrap();
    let graph = PortalGraph::build(&cost, DEFAULT_SECTOR_SIZE).unwrap();
    let mut goal = Cell::new(100, 156);
    assert!(cost.is_passable(goal));
    let mut nav = HierarchicalField::new(&graph, &cost, &[goal], usize::MAX).unwrap();
    let mut kept = 0;
    for _ in 0..20 {
        for sector in 0..graph.sectors().len() {
            nav.ensure_sector(&graph, &cost, sector).unwrap();
        }
        goal = Cell::new(goal.x + 1, goal.y);
        assert!(cost.is_passable(goal));
        kept += nav.retarget(&graph, &cost, &[goal]).unwrap();
    }
    let mut fresh = HierarchicalField::new(&graph, &cost, &[goal], usize::MAX).unwrap();
    for sector in 0..graph.sectors().len() {
        fresh.ensure_sector(&graph, &cost, sector).unwrap();
    }
    let mut compared = 0;
    for i in 0..grid.len() {
        let c = grid.cell(i);
        if nav.has_field(graph.sectors().sector_of(c)) {
            let centre = grid.cell_centre(c);
            assert_eq!(
                nav.guide(&graph, &grid, centre, &mut CellMemo::default()).1,
                fresh
                    .guide(&graph, &grid, centre, &mut CellMemo::default())
                    .1,
                "cell {c}"
            );
            compared += 1;
        }
    }
    // 64 sectors; the goal's sector, its neighbours and the sectors where routes leaving
    // the goal's sector by different portals meet are rebuilt; a good share is kept.
    assert!(kept >= 20 * 16, "only {kept} fields kept over 20 moves");
    assert!(compared >= 16 * 1024, "{compared} cells compared");
    assert_eq!(nav.stats().fields_kept, kept as u64);
}

#[test]
fn fields_marked_used_this_frame_outlive_the_others() {
    let (w, h) = (64u32, 64u32);
    let cost = field(w, h, &vec![1; (w * h) as usize]);
    let graph = PortalGraph::build(&cost, DEFAULT_SECTOR_SIZE).unwrap();
    let goal = Cell::new(60, 60);
    // The bytes of the route, two fields and the estimates around them: a third field is
    // over budget and must drop one that this frame did not use.
    let mut probe = HierarchicalField::new(&graph, &cost, &[goal], usize::MAX).unwrap();
    probe.ensure_sector(&graph, &cost, 0).unwrap();
    probe.ensure_sector(&graph, &cost, 1).unwrap();
    let budget = probe.bytes_in_use() + 64;
    for marked in [0, 1] {
        let mut nav = HierarchicalField::new(&graph, &cost, &[goal], budget).unwrap();
        nav.ensure_sector(&graph, &cost, 0).unwrap();
        nav.ensure_sector(&graph, &cost, 1).unwrap();
        nav.begin_frame();
        // Sector 3 has no field: marking it builds nothing.
        nav.mark_used(&graph, &cost, &[marked, 3]).unwrap();
        assert!(!nav.has_field(3));
        nav.ensure_sector(&graph, &cost, 2).unwrap();
        assert!(nav.has_field(marked) && nav.has_field(2), "marked {marked}");
        assert!(!nav.has_field(1 - marked), "marked {marked}");
    }
    // Marking against a map of another size is refused, like building.
    let other = field(w, h / 2, &vec![1; (w * h / 2) as usize]);
    let mut nav = HierarchicalField::new(&graph, &cost, &[goal], budget).unwrap();
    assert!(nav.mark_used(&graph, &other, &[0]).is_err());
}

/// A sector field's stamp says whether its contents changed: through goal moves (fields
/// kept as they are, kept with shifted values, or dropped) and rebuilds, a sector whose
/// stamp is unchanged guides every cell exactly as before, and one whose guidance changed
/// has a new stamp.
#[test]
fn sector_stamps_change_exactly_with_the_fields_contents() {
    let (w, h) = (160u32, 96u32);
    // A wall with two gaps, so that goal moves change some sectors' fields and not others.
    let costs: Vec<u8> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            if x == 79 && y != 10 && y != 80 {
                WALL
            } else {
                1
            }
        })
        .collect();
    let cost = field(w, h, &costs);
    let graph = PortalGraph::build(&cost, DEFAULT_SECTOR_SIZE).unwrap();
    let grid = Grid::new(w, h).unwrap();
    let sectors = graph.sectors().len();
    let guidance = |nav: &HierarchicalField, s: usize| -> Vec<(glam::Vec2, u32)> {
        let b = graph.sectors().bounds(s);
        (b.y0..b.y1)
            .flat_map(|y| (b.x0..b.x1).map(move |x| Cell::new(x, y)))
            .map(|c| nav.guide(&graph, &grid, grid.cell_centre(c), &mut CellMemo::default()))
            .collect()
    };
    // Left of the wall, level with the middle of the two gaps: one step left adds the same
    // to every path through either gap, so the fields right of the wall keep their
    // directions and shift their values.
    let mut nav = HierarchicalField::new(&graph, &cost, &[Cell::new(10, 45)], usize::MAX).unwrap();
    for s in 0..sectors {
        nav.ensure_sector(&graph, &cost, s).unwrap();
    }
    let (mut same, mut renewed) = (0, 0);
    for goal in [(9, 45), (8, 45), (8, 46), (60, 70), (61, 70), (61, 70)] {
        let before: Vec<(u32, Vec<(glam::Vec2, u32)>)> = (0..sectors)
            .map(|s| (nav.sector_stamp(s), guidance(&nav, s)))
            .collect();
        nav.retarget(&graph, &cost, &[Cell::new(goal.0, goal.1)])
            .unwrap();
        for (s, (stamp, guided)) in before.iter().enumerate() {
            if !nav.has_field(s) {
                assert_eq!(nav.sector_stamp(s), 0, "sector {s} has no field");
                nav.ensure_sector(&graph, &cost, s).unwrap();
                assert_ne!(nav.sector_stamp(s), *stamp, "rebuilt sector {s}");
                continue;
            }
            let now = guidance(&nav, s);
            if nav.sector_stamp(s) == *stamp {
                assert_eq!(&now, guided, "sector {s} kept its stamp, goal {goal:?}");
                same += 1;
            } else {
                renewed += 1;
            }
        }
    }
    assert!(same > 0 && renewed > 0, "kept {same}, renewed {renewed}");
}
