use clap::Parser;

// glibc's malloc showed as an eighth of the server's time under load (arenas
// contended by the runtime's threads); mimalloc keeps per-thread heaps.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = kandev_server::cli::Cli::parse();
    match kandev_server::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kandev: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
