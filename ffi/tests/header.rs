//! `include/horde.h` is what cbindgen generates from the crate now: the test fails, naming
//! the way to rewrite it, when a change to the boundary was not carried into the header.
//! `HORDE_BLESS=1 cargo test -p horde-ffi --test header` rewrites it (`HORDE_WRITE_HEADER=1`
//! too).

use std::path::Path;

#[test]
fn header_is_current() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include/horde.h");
    if std::env::var_os("HORDE_WRITE_HEADER").is_some() || std::env::var_os("HORDE_BLESS").is_some()
    {
        std::fs::write(&path, &generated).expect("write include/horde.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is not what cbindgen generates from the crate now: rewrite it with \
         HORDE_WRITE_HEADER=1 cargo test -p horde-ffi --test header, and commit it",
        path.display()
    );
}
