use clap::Parser;

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
