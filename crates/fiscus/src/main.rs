//! The `fiscus` command: serve the API, migrate, administer, check the catalogue, verify the audit chain.
//! Every command is a thin shell over `fiscus-server`, so tests reach the same code through the library.

mod cli;
mod import;
mod settings;

use clap::Parser;

/// A request allocates and frees many small buffers across the runtime's threads (bodies, JSON values, SQL
/// binds); mimalloc's per-thread free lists cost less CPU there than the system allocator
/// (`bench/http.sh` measures CPU per request).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(cli)) {
        Ok(code) => code,
        Err(e) => {
            // One clear line; the chain of causes after a colon.
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
