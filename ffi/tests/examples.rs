//! The examples as tests: the C example (`examples/c/engine_loop.c`) is compiled with the
//! system C compiler (`cc`) against `include/horde.h` and the library this build made, once
//! against the static library and once against the shared one, and run; it checks its state
//! hash against the one the Rust `Simulation` computes here for the same commands. The C#
//! example (`examples/csharp/EngineLoop.cs`) is compiled with `mcs` and run with `mono` over
//! the shared library when both are installed (Debian: `mono-devel`), else it says SKIP.
//! The engine loop of `docs/ffi.md` is compiled and run as it stands on the page.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use horde::fields::CostTable;
use horde::glam::Vec2;
use horde::{
    Cell, ForceField, ForceKind, GoalSet, Grid, Map, SimConfig, Simulation, Terrain, UnitId,
    UnitSpec,
};

const W: u32 = 128;
const H: u32 = 96;
const UNITS_PER_GROUP: usize = 1500;

/// The cells of the `w x h` rectangle at `(x, y)`, row by row.
fn rect(x: u32, y: u32, w: u32, h: u32) -> GoalSet {
    GoalSet::new((y..y + h).flat_map(|cy| (x..x + w).map(move |cx| Cell::new(cx, cy))))
        .expect("a non-empty rectangle")
}

/// The C example's commands through horde's Rust API; returns the state hash at frame 300.
/// Keep in step with `examples/c/engine_loop.c` and `examples/csharp/EngineLoop.cs`.
fn scenario() -> u64 {
    let grid = Grid::new(W, H).unwrap();
    let terrain = (0..H)
        .flat_map(|y| (0..W).map(move |x| (x, y)))
        .map(|(x, y)| {
            if x == 0 || y == 0 || x == W - 1 || y == H - 1 {
                Terrain::SteelPlate
            } else if (x == 62 || x == 63) && (8..88).contains(&y) && !(40..56).contains(&y) {
                Terrain::BrickWall
            } else if (80..90).contains(&x) && (44..52).contains(&y) {
                Terrain::Water
            } else if (90..100).contains(&x) && (10..20).contains(&y) {
                Terrain::Forest
            } else {
                Terrain::Empty
            }
        })
        .collect();
    let map = Map::from_terrain(grid, terrain, CostTable::default()).unwrap();
    let mut sim = Simulation::new(map, SimConfig::default().with_seed(7)).unwrap();
    let a = sim.add_group(rect(110, 20, 5, 5)).unwrap();
    let b = sim.add_group(rect(110, 70, 5, 5)).unwrap();
    for i in 0..2 * UNITS_PER_GROUP {
        let k = i % UNITS_PER_GROUP;
        let top = if i < UNITS_PER_GROUP { 4.5 } else { 50.5 };
        let spec = UnitSpec::at(Vec2::new(4.5 + (k % 50) as f32, top + (k / 50) as f32))
            .with_radius(0.4)
            .with_group(if i < UNITS_PER_GROUP { a } else { b });
        sim.spawn(spec).unwrap();
    }
    let dt = 1.0f32 / 30.0;
    let steps = |sim: &mut Simulation, n: usize| {
        for _ in 0..n {
            sim.step(dt).unwrap();
        }
    };
    steps(&mut sim, 60);
    let blast = ForceField::new(Vec2::new(30.0, 18.0), ForceKind::Explosion, 10.0, 600.0)
        .unwrap()
        .with_duration(0.25)
        .unwrap();
    sim.add_force(blast);
    steps(&mut sim, 60);
    sim.set_group_goal(b, rect(110, 40, 5, 5)).unwrap();
    for y in 40..44 {
        for x in 62..64 {
            sim.set_terrain(Cell::new(x, y), Terrain::BrickWall)
                .unwrap();
        }
    }
    sim.set_terrain(Cell::new(62, 20), Terrain::Empty).unwrap();
    sim.set_terrain(Cell::new(63, 20), Terrain::Empty).unwrap();
    for id in (0..100).map(|i| i * 10) {
        let entity = sim.entity_of(UnitId(id)).unwrap();
        sim.despawn(entity).unwrap();
    }
    steps(&mut sim, 180);
    assert_eq!(sim.frame(), 300);
    sim.state_hash()
}

/// Where cargo put the libraries it built for this test: beside the test binary, in
/// `<target>/<profile>/deps/` (`cargo test` leaves its `cdylib` and `staticlib` there; the
/// copies in `<target>/<profile>/` are the last `cargo build`'s, which may be older).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe.parent().expect("the test binary's directory");
    assert!(
        dir.join("libhorde_ffi.a").is_file() && dir.join("libhorde_ffi.so").is_file(),
        "libhorde_ffi.a and libhorde_ffi.so are not in {}: they are built with the crate",
        dir.display()
    );
    dir.to_path_buf()
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The system C compiler (`$CC`, else `cc`) as an engine's build would call it: C11,
/// optimised, every warning an error, the header's folder on the include path.
fn c_compiler() -> Command {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut command = Command::new(cc);
    command
        .args([
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-I",
        ])
        .arg(crate_dir().join("include"));
    command
}

/// Runs `command`, panicking with its output when it fails; returns its stdout.
fn run(mut command: Command, what: &str) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not start {command:?}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{command:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    stdout
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

#[test]
fn c_example_matches_the_rust_simulation() {
    let expected = format!("{:016x}", scenario());
    let libs = library_dir();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("c_example");
    std::fs::create_dir_all(&out).unwrap();
    let source = crate_dir().join("examples/c/engine_loop.c");
    let include = crate_dir().join("include");

    // Compiles the example, linked by `link`, runs it on `threads` threads and checks that
    // it printed the hash (the example itself fails when its hash is not `expected`).
    let build_and_run = |kind: &str, library: &str, link: Vec<OsString>, threads: &str| {
        let exe = out.join(format!("engine_loop_{kind}"));
        let mut build = c_compiler();
        build.arg(&source).args(link).arg("-o").arg(&exe);
        run(build, &format!("compiling the C example against {library}"));
        let mut example = Command::new(&exe);
        example.args([expected.as_str(), threads]);
        let line = run(example, &format!("the C example ({kind})"));
        println!("{}", line.trim());
        assert!(
            line.contains(&expected),
            "the example prints the hash: {line}"
        );
    };
    // Against the static library (what the system linker needs besides it: pthread, dl, m).
    let static_link = vec![
        libs.join("libhorde_ffi.a").into(),
        "-lpthread".into(),
        "-ldl".into(),
        "-lm".into(),
    ];
    build_and_run("static", "libhorde_ffi.a", static_link, "2");
    // Against the shared library, found through the rpath, on one thread.
    let shared_link = vec![
        "-L".into(),
        libs.clone().into(),
        format!("-Wl,-rpath,{}", libs.display()).into(),
        "-lhorde_ffi".into(),
        "-lm".into(),
    ];
    build_and_run("shared", "libhorde_ffi.so", shared_link, "1");

    // The header also compiles as C++ (engines are mostly C++).
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    if on_path(&cxx) || Path::new(&cxx).is_file() {
        let mut check = Command::new(&cxx);
        check
            .args([
                "-std=c++17",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fsyntax-only",
            ])
            .args(["-x", "c++"])
            .arg(include.join("horde.h"));
        run(check, "compiling horde.h as C++");
    } else {
        println!("SKIP: horde.h as C++: no C++ compiler ({cxx}) on PATH");
    }

    // The C# example over P/Invoke, when a C# toolchain is installed.
    if !(on_path("mcs") && on_path("mono")) {
        println!(
            "SKIP: C# example: mcs and mono are not installed (Debian: apt-get install mono-devel)"
        );
        return;
    }
    let cs_exe = out.join("EngineLoop.exe");
    let mut build = Command::new("mcs");
    build
        .arg("-nologo")
        .arg("-warnaserror+")
        .arg(format!("-out:{}", cs_exe.display()))
        .arg(crate_dir().join("examples/csharp/EngineLoop.cs"));
    run(build, "compiling the C# example");
    let mut example = Command::new("mono");
    example
        .arg(&cs_exe)
        .arg(&expected)
        .env("LD_LIBRARY_PATH", &libs);
    let line = run(example, "the C# example");
    println!("{}", line.trim());
    assert!(
        line.contains(&expected),
        "the C# example prints the hash: {line}"
    );
}

/// The C block of `docs/ffi.md`'s section "An engine loop".
fn docs_engine_loop(page: &str) -> String {
    let section = page
        .split("\n## An engine loop\n")
        .nth(1)
        .expect("docs/ffi.md has the section \"An engine loop\"");
    let code = section
        .split("```c\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the section holds a ```c block");
    format!("{code}\n")
}

#[test]
fn the_engine_loop_in_the_docs_compiles_and_runs() {
    let libs = library_dir();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("docs_example");
    std::fs::create_dir_all(&out).unwrap();
    // The page is the repository's, outside the crate: a crate unpacked from its package
    // has no docs/ to check.
    let Ok(page) = std::fs::read_to_string(crate_dir().join("../docs/ffi.md")) else {
        println!("SKIP: the engine loop of docs/ffi.md: not in a horde repository");
        return;
    };
    let source = out.join("engine_loop_docs.c");
    std::fs::write(&source, docs_engine_loop(&page)).unwrap();
    let exe = out.join("engine_loop_docs");
    let mut build = c_compiler();
    build
        .arg(&source)
        .arg(libs.join("libhorde_ffi.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe);
    run(build, "compiling the engine loop of docs/ffi.md");
    let line = run(Command::new(&exe), "the engine loop of docs/ffi.md");
    println!("{}", line.trim());
    assert!(
        line.starts_with("engine loop: 990 units after 240 frames, state hash "),
        "{line}"
    );
}
