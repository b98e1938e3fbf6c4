// Embeds the migrations: writes `$OUT_DIR/migrations.rs` listing every file of `migrations/` and
// `migrations_evidence/` as `(file name, include_str!(path))`, in name order. `src/migrations.rs` turns them
// into sqlx migrations exactly as sqlx's own `migrate!` macro would (same versions, descriptions and
// checksums), without that macro: it is what compiled sqlx's drivers a second time for the build machine.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let mut out = String::new();
    for (name, dir) in [("MAIN", "migrations"), ("EVIDENCE", "migrations_evidence")] {
        let dir = Path::new(&root).join(dir);
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("a migrations folder")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "sql"))
            .collect();
        files.sort();
        writeln!(out, "pub(crate) const {name}: &[(&str, &str)] = &[").expect("write");
        for path in files {
            let file = path.file_name().expect("a name").to_string_lossy().into_owned();
            writeln!(out, "    ({file:?}, include_str!({:?})),", path.display().to_string()).expect("write");
        }
        writeln!(out, "];").expect("write");
    }
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("migrations.rs");
    std::fs::write(dest, out).expect("write migrations.rs");
}
