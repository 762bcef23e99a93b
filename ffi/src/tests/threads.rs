//! A handle moves between threads, and results do not depend on the thread count or the
//! navigation mode.

use super::*;

#[test]
fn a_simulation_moves_between_threads() {
    fn send<T: Send>() {}
    send::<HordeSim>();
    let sim = sim_with(3) as usize;
    let frame = std::thread::Builder::new()
        .name("other".into())
        .spawn(move || {
            let sim = sim as *mut HordeSim;
            assert_eq!(step(sim), HORDE_OK);
            // The other thread's error message is its own.
            // SAFETY: NaN is refused.
            unsafe { horde_step(sim, f32::NAN) };
            let mut frame = 0;
            // SAFETY: a local.
            unsafe { horde_frame(sim, &mut frame) };
            frame
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(frame, 1);
    assert_eq!(last_error(), "");
    free(sim as *mut HordeSim);
}

/// The same commands through the boundary give the same state hash on 1 and 3 threads,
/// with hierarchical navigation on a Moving AI map, and a snapshot taken on 3 threads goes
/// on identically on 1.
#[test]
fn thread_counts_and_navigation_modes_agree() {
    let mut text = String::from("type octile\nheight 40\nwidth 70\nmap\n");
    for y in 0..40 {
        for x in 0..70 {
            let wall = x == 35 && !(18..22).contains(&y);
            text.push(if y == 0 || y == 39 || x == 0 || x == 69 || wall {
                '@'
            } else {
                '.'
            });
        }
        text.push('\n');
    }
    let run = |threads: u32, navigation: u32| {
        let mut config = HordeConfig::from_sim_config(&SimConfig::default());
        config.threads = threads;
        config.navigation = navigation;
        config.seed = 3;
        let mut sim = null_mut();
        // SAFETY: `text` holds its length; locals.
        let status = unsafe {
            horde_sim_create_movingai(text.as_ptr().cast(), text.len(), &config, &mut sim)
        };
        assert_eq!(status, HORDE_OK, "{}", last_error());
        let goal = [HordeCell { x: 65, y: 30 }, HordeCell { x: 66, y: 30 }];
        let mut group = 0;
        // SAFETY: live handle; two cells.
        let status = unsafe { horde_add_group(sim, goal.as_ptr(), 2, &mut group) };
        assert_eq!(status, HORDE_OK);
        let specs: Vec<HordeUnitSpec> = (0..300)
            .map(|i| spec(2.5 + (i % 20) as f32, 2.5 + (i / 20) as f32))
            .collect();
        // SAFETY: 300 specs.
        let status = unsafe { horde_spawn(sim, specs.as_ptr(), 300, null_mut(), null_mut()) };
        assert_eq!(status, HORDE_OK, "{}", last_error());
        for _ in 0..40 {
            assert_eq!(step(sim), HORDE_OK, "{}", last_error());
        }
        sim
    };
    for navigation in [HORDE_NAVIGATION_FLAT, HORDE_NAVIGATION_HIERARCHICAL] {
        let one = run(1, navigation);
        let three = run(3, navigation);
        assert_eq!(hash(one), hash(three), "navigation {navigation}");
        let bytes = snapshot(three);
        let mut copy = null_mut();
        // SAFETY: `bytes` holds its length.
        let status =
            unsafe { horde_sim_create_from_snapshot(bytes.as_ptr(), bytes.len(), 1, &mut copy) };
        assert_eq!(status, HORDE_OK, "{}", last_error());
        let before = hash(one);
        for sim in [one, three, copy] {
            for _ in 0..20 {
                assert_eq!(step(sim), HORDE_OK);
            }
        }
        assert_ne!(hash(one), before, "the units move");
        assert_eq!(hash(one), hash(three));
        assert_eq!(hash(copy), hash(three));
        for sim in [one, three, copy] {
            free(sim);
        }
    }
}
