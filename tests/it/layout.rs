//! What the build cannot check about the layout. Cargo already rejects an import that points up
//! the crates' order or goes round a circle (each crate lists the crates below it it uses); what
//! is left is the size of a file: none passes 800 lines unless ARCHITECTURE.md says why.

use std::path::{Path, PathBuf};

/// Lines a file may have before ARCHITECTURE.md must name it under "Long files".
const MAX_LINES: usize = 800;

/// Every `.rs` file of the binary (`src/`) and of the crates (`crates/*/src/`).
fn source_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(&root.join("src"), &mut files);
    for entry in std::fs::read_dir(root.join("crates")).expect("read crates/") {
        collect(&entry.expect("read a crate").path().join("src"), &mut files);
    }
    files.sort();
    files
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read a source folder") {
        let path = entry.expect("read a source folder's entry").path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn no_file_passes_800_lines_unless_architecture_md_says_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("read ARCHITECTURE.md");
    let long_files = architecture
        .split("### Long files")
        .nth(1)
        .and_then(|section| section.split("\n#").next())
        .unwrap_or("");
    let files = source_files(root);
    assert!(
        files.len() > 100,
        "the walk found only {} files: it is not looking where the sources are",
        files.len()
    );
    let mut too_long = Vec::new();
    for path in files {
        let lines = std::fs::read_to_string(&path)
            .expect("read a source file")
            .lines()
            .count();
        let relative = path.strip_prefix(root).expect("under the workspace");
        let named = format!("`{}`", relative.display());
        if lines > MAX_LINES && !long_files.contains(&named) {
            too_long.push(format!("{} has {lines} lines", relative.display()));
        }
    }
    assert!(
        too_long.is_empty(),
        "split these files, or say why under \"### Long files\" in ARCHITECTURE.md:\n{}",
        too_long.join("\n")
    );
}
