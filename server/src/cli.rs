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
    /// A GitHub simulator on loopback (REST API plus a `/_sim` control interface).
    GithubSim {
        /// Address and port to listen on.
        #[arg(long, default_value = "127.0.0.1:38081")]
        listen: String,
    },
}

pub async fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Serve(settings) => {
            let mut settings = *settings;
            crate::telemetry::init(settings.log_format == "json");
            crate::tls::install_crypto_provider();
            let demo = if settings.demo {
                Some(crate::demo::prepare(&mut settings).await.map_err(|e| e.to_string())?)
            } else {
                None
            };
            let app = Application::build(settings, BuildOptions::default())
                .await
                .map_err(|e| e.to_string())?;
            if let Some((sim, sim_base)) = demo {
                let kandev = format!("http://{}", app.address());
                crate::demo::seed(&app.services, &sim, &sim_base, &kandev).await?;
            }
            app.run_until_signal().await;
            Ok(())
        }
        Command::GithubSim { listen } => {
            crate::telemetry::init(false);
            crate::tls::install_crypto_provider();
            let sim = crate::github_sim::Simulator::new();
            let (addr, task) = sim
                .serve(&listen)
                .await
                .map_err(|e| format!("listen on {listen}: {e}"))?;
            println!("github simulator listening on http://{addr}");
            tracing::info!(%addr, "GitHub simulator listening");
            let _ = task.await;
            Ok(())
        }
        Command::MockAgent => {
            crate::tls::install_crypto_provider();
            crate::mock_agent::run().await
        }
    }
}
