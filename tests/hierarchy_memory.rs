//! Memory of hierarchical fields on a 4096x4096 generated level: with 100,000 units spread
//! over the whole map and a field built for every sector that holds one, the fields, sector
//! estimates and coarse route take at most 64 MiB; with a smaller budget, fields that were
//! not used this frame are dropped to stay within it.

use glam::Vec2;
use horde::hierarchy::DEFAULT_SECTOR_SIZE;
use horde::{
    Cell, Layer,
    crowd::CellMemo,
    fields::WALL,
    hierarchy::{HierarchicalField, PortalGraph},
    level::{LevelConfig, generate_level},
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

const SIDE: u32 = 4096;
const MIB: usize = 1 << 20;

#[test]
fn fields_for_100k_units_on_4096_squared_fit_in_64_mib() {
    let config = LevelConfig::default()
        .with_size(SIDE / 4, SIDE / 4)
        .with_cells_per_tile(4);
    let map = generate_level(11, &config).unwrap().into_map();
    let cost = map.cost_field(Layer::Ground);
    let grid = *map.grid();
    let graph = PortalGraph::build(cost, DEFAULT_SECTOR_SIZE).unwrap();
    let goal = (0..grid.len())
        .map(|i| grid.cell(i))
        .filter(|&c| cost.get(c) != WALL)
        .min_by_key(|c| c.x.abs_diff(SIDE / 2) + c.y.abs_diff(SIDE / 2))
        .unwrap();
    let mut rng = Pcg64::seed_from_u64(5);
    let units: Vec<Cell> =
        std::iter::repeat_with(|| Cell::new(rng.next_u32() % SIDE, rng.next_u32() % SIDE))
            .filter(|&c| cost.get(c) != WALL)
            .take(100_000)
            .collect();

    let mut nav = HierarchicalField::new(&graph, cost, &[goal], 64 * MIB).unwrap();
    nav.begin_frame();
    for &u in &units {
        nav.ensure_sector(&graph, cost, graph.sectors().sector_of(u))
            .unwrap();
    }
    let stats = nav.stats();
    println!(
        "4096x4096, 100k units: {} sector fields, {:.2} MiB in use (graph {:.2} MiB)",
        stats.fields_held,
        stats.bytes as f64 / MIB as f64,
        graph.bytes() as f64 / MIB as f64
    );
    assert!(stats.fields_held > 16_000);
    assert!(stats.bytes <= 64 * MIB, "{} bytes", stats.bytes);
    // Every unit follows a field now (or stands where no goal can be reached).
    let moving = units
        .iter()
        .filter(|&&u| {
            let (dir, _) = nav.guide(&graph, &grid, grid.cell_centre(u), &mut CellMemo::default());
            dir != Vec2::ZERO
        })
        .count();
    println!("{moving} of {} units have a field direction", units.len());
    assert!(moving * 100 >= units.len() * 95);

    // A budget of 3 MiB: the units of one frame sit in a 512x512 window that moves across
    // the map; once the frame moves on, older fields are dropped to fit the budget.
    let budget = 3 * MIB;
    let mut nav = HierarchicalField::new(&graph, cost, &[goal], budget).unwrap();
    for step in 0..8u32 {
        nav.begin_frame();
        let (x0, y0) = (step * 512, step * 512);
        for y in (y0..y0 + 512).step_by(16) {
            for x in (x0..x0 + 512).step_by(16) {
                nav.ensure_sector(&graph, cost, graph.sectors().sector_of(Cell::new(x, y)))
                    .unwrap();
            }
        }
        assert!(
            nav.bytes_in_use() <= budget,
            "frame {step}: {} bytes",
            nav.bytes_in_use()
        );
    }
    assert!(nav.stats().evicted > 0);
}
