//! The docs' picture of the stage graph is the graph's own.

use std::path::{Path, PathBuf};

use super::build_graph;

const BEGIN: &str = "<!-- stage table: generated from the built stage graph \
                     (JobGraph::markdown_table); a test checks it, HORDE_BLESS=1 rewrites it -->";
const END: &str = "<!-- end of the stage table -->";

fn workspace_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name)
}

/// The text between the markers of `doc`.
fn generated_part(doc: &str) -> Option<&str> {
    let start = doc.find(BEGIN)? + BEGIN.len();
    let end = start + doc[start..].find(END)?;
    Some(doc[start..end].trim_matches('\n'))
}

/// README.md and ARCHITECTURE.md hold the graph's table, as the built graph writes it
/// (`HORDE_BLESS=1 cargo test -p horde-systems stage_table` writes it there).
#[test]
fn the_stage_table_in_the_docs_is_the_built_graphs() {
    let table = build_graph()
        .expect("the stage graph builds")
        .markdown_table();
    for name in ["README.md", "ARCHITECTURE.md"] {
        let path = workspace_file(name);
        let Ok(doc) = std::fs::read_to_string(&path) else {
            eprintln!("skipped: {} is not here (a packaged crate)", path.display());
            continue;
        };
        let found = generated_part(&doc)
            .unwrap_or_else(|| panic!("{name} has no stage table between\n{BEGIN}\n{END}"));
        if found == table.trim_matches('\n') {
            continue;
        }
        if std::env::var_os("HORDE_BLESS").is_some() {
            let updated = doc.replacen(found, table.trim_matches('\n'), 1);
            std::fs::write(&path, updated).expect("the doc is writable");
            continue;
        }
        panic!(
            "{name}'s stage table is not the graph's (HORDE_BLESS=1 rewrites it); the graph's:\n{table}"
        );
    }
}

/// ARCHITECTURE.md's table of what each stage does names exactly the graph's stages, in
/// its order.
#[test]
fn the_stage_descriptions_name_every_stage_in_order() {
    let Ok(doc) = std::fs::read_to_string(workspace_file("ARCHITECTURE.md")) else {
        eprintln!("skipped: ARCHITECTURE.md is not here (a packaged crate)");
        return;
    };
    let header = "| stage | file | what it does |";
    let start = doc
        .find(header)
        .expect("ARCHITECTURE.md describes the stages");
    let described: Vec<&str> = doc[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| line.split('`').nth(1))
        .collect();
    let graph = build_graph().expect("the stage graph builds");
    let stages: Vec<&str> = graph.stage_names().collect();
    assert_eq!(described, stages);
}
