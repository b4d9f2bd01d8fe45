//! The `kandev` command line.

use clap::{Parser, Subcommand};

use crate::app::{Application, BuildOptions};
use crate::config::Settings;

#[derive(Parser)]
#[command(name = "kandev", version, about = "Kandev: a task board for AI coding agents")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run the server (API, engine, GitHub poller, web app).
    Serve(Box<Settings>),
    /// An ACP agent on stdio that runs `e2e:` scripts (tests and demos).
    MockAgent,
}

pub async fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Serve(settings) => {
            crate::telemetry::init(settings.log_format == "json");
            let app = Application::build(*settings, BuildOptions::default())
                .await
                .map_err(|e| e.to_string())?;
            app.run_until_signal().await;
            Ok(())
        }
        Command::MockAgent => {
            crate::tls::install_crypto_provider();
            crate::mock_agent::run().await
        }
    }
}
