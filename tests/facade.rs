//! The facade is the way in, for the project itself too: every crate above the library
//! (the scenario format, the fixtures, the app, the C ABI) and the fuzz targets depend on
//! `horde`, never on its implementation crates `horde-core` and `horde-systems`; their code
//! names neither.

use std::path::Path;

const ABOVE_THE_LIBRARY: [&str; 5] = ["scenario", "fixtures", "app", "ffi", "fuzz"];
const IMPLEMENTATION: [&str; 2] = ["horde-core", "horde-systems"];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
        let path = entry.path();
        if path.is_dir() && path.file_name().is_some_and(|n| n != "target") {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn crates_above_the_library_use_the_facade_only() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for krate in ABOVE_THE_LIBRARY {
        let manifest = std::fs::read_to_string(root.join(krate).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{krate}/Cargo.toml: {e}"));
        for line in manifest.lines() {
            let name = line.split(['=', '.', ' ']).next().unwrap_or("");
            assert!(
                !IMPLEMENTATION.contains(&name),
                "{krate}/Cargo.toml depends on {name}; use `horde` instead: {line}"
            );
        }
        let mut files = Vec::new();
        rust_files(&root.join(krate), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            for (i, line) in text.lines().enumerate() {
                assert!(
                    !line.contains("horde_core::") && !line.contains("horde_systems::"),
                    "{}:{}: names an implementation crate; use `horde`'s path: {line}",
                    file.display(),
                    i + 1
                );
            }
        }
    }
}
