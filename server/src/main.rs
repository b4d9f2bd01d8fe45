use clap::Parser;

// glibc's malloc showed as an eighth of the server's time under load (arenas
// contended by the runtime's threads); mimalloc keeps per-thread heaps.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = kandev_server::cli::confine_if_asked(kandev_server::cli::Cli::parse());
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kandev: could not start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(kandev_server::cli::run(cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kandev: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
