//! The API contract, checked from outside: schemathesis (from PyPI, in a
//! virtual environment under `target/`) generates requests from the served
//! OpenAPI document and runs every check against the real server, wired to
//! the GitHub simulator so the GitHub helpers answer too.

use std::process::{Child, Command, Stdio};

use crate::services::{free_port, wait_for_port};
use crate::sh;
use crate::tools::root;

const SCHEMATHESIS: &str = "schemathesis==4.32.5";
const ADMIN_TOKEN: &str = "contract-admin-token-0123456789";
/// A fixed seed keeps CI reproducible; `KANDEV_SCHEMATHESIS_SEED` explores others.
const DEFAULT_SEED: &str = "20261130";

/// Processes that stop when dropped.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The virtual environment's `schemathesis`, installed once.
fn schemathesis() -> Result<std::path::PathBuf, String> {
    let venv = root().join("target/schemathesis-venv");
    let bin = venv.join("bin/schemathesis");
    let installed = sh::output(&bin.display().to_string(), &["--version"])
        .is_some_and(|v| v.contains(SCHEMATHESIS.trim_start_matches("schemathesis==")));
    if !installed {
        sh::step(&format!("installing {SCHEMATHESIS} in {}", venv.display()));
        sh::run("python3", &["-m", "venv", &venv.display().to_string()], &[])?;
        let pip = venv.join("bin/pip").display().to_string();
        sh::run(&pip, &["install", "-q", SCHEMATHESIS], &[])?;
    }
    Ok(bin)
}

pub fn check() -> Result<(), String> {
    let bin = schemathesis()?;
    let kandev = root().join("target/debug/kandev");
    if !kandev.exists() {
        sh::run("cargo", &["build", "-p", "kandev-server", "--bin", "kandev"], &[])?;
    }
    let dir = root().join("target/contract");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let log = |name: &str| -> Result<Stdio, String> {
        std::fs::File::create(dir.join(name))
            .map(Stdio::from)
            .map_err(|e| e.to_string())
    };
    let (sim_port, port) = (free_port()?, free_port()?);
    let sim = Command::new(&kandev)
        .args(["github-sim", "--listen", &format!("127.0.0.1:{sim_port}")])
        .stdout(log("sim.log")?)
        .stderr(log("sim.err")?)
        .spawn()
        .map_err(|e| format!("github-sim: {e}"))?;
    let mut children = Children(vec![sim]);
    let server = Command::new(&kandev)
        .arg("serve")
        .env("KANDEV_LISTEN", format!("127.0.0.1:{port}"))
        .env("KANDEV_DATABASE_URL", format!("sqlite://{}/kandev.db", dir.display()))
        .env("KANDEV_DATA_DIR", dir.join("data"))
        .env("KANDEV_WEB_DIR", root().join("web/dist"))
        .env("KANDEV_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("KANDEV_GITHUB_API_URL", format!("http://127.0.0.1:{sim_port}"))
        .env("GITHUB_TOKEN", "contract-token")
        .env("KANDEV_GITHUB_WEBHOOK_SECRET", "contract-webhook-secret")
        .env("KANDEV_NATS_URL", "")
        .stdout(log("server.log")?)
        .stderr(log("server.err")?)
        .spawn()
        .map_err(|e| format!("kandev serve: {e}"))?;
    children.0.push(server);
    wait_for_port(sim_port, "the GitHub simulator")?;
    wait_for_port(port, "kandev")?;
    let base = format!("http://127.0.0.1:{port}");
    let seed = std::env::var("KANDEV_SCHEMATHESIS_SEED").unwrap_or_else(|_| DEFAULT_SEED.into());
    sh::step(&format!("API contract: schemathesis, every check, seed {seed}"));
    let result = sh::run(
        &bin.display().to_string(),
        &[
            "run",
            &format!("{base}/api/v1/openapi.json"),
            "--url",
            &base,
            "--checks",
            "all",
            "--seed",
            &seed,
            "--header",
            &format!("Authorization: Bearer {ADMIN_TOKEN}"),
        ],
        &[("NO_COLOR".into(), "1".into())],
    );
    drop(children);
    result.map_err(|e| format!("{e}; server log in {}", dir.display()))
}
