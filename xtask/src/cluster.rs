//! `cargo xtask cluster`: three `kandev serve` replicas on one PostgreSQL and
//! one NATS (JetStream), at http://127.0.0.1:38080, :38082 and :38083, to see
//! replicas share the work (and survive one being killed). Ctrl-C stops all.

use std::process::{Child, Command};

use crate::services::{self, wait_for_port};
use crate::sh;
use crate::tools::root;

const PORTS: [u16; 3] = [38080, 38082, 38083];

struct Replicas(Vec<Child>);

impl Drop for Replicas {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn run() -> Result<(), String> {
    services::install()?;
    sh::step("building the kandev binary (release)");
    sh::run(
        "cargo",
        &["build", "--release", "-p", "kandev-server", "--bin", "kandev"],
        &[],
    )?;
    let running = services::start()?;
    let env = running.env();
    let value = |key: &str| {
        env.iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("{key} was not started"))
    };
    let (database, nats) = (value("KANDEV_TEST_POSTGRES_URL")?, value("KANDEV_TEST_NATS_URL")?);
    let dir = root().join("target/cluster");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let bin = root().join("target/release/kandev");
    let mut replicas = Replicas(vec![]);
    for (i, port) in PORTS.iter().enumerate() {
        let name = format!("r{}", i + 1);
        let log = std::fs::File::create(dir.join(format!("{name}.log"))).map_err(|e| e.to_string())?;
        let child = Command::new(&bin)
            .arg("serve")
            .env("KANDEV_LISTEN", format!("127.0.0.1:{port}"))
            .env("KANDEV_DATABASE_URL", &database)
            .env("KANDEV_NATS_URL", &nats)
            .env("KANDEV_NATS_STREAM", "kandev")
            .env("KANDEV_REPLICA_ID", &name)
            .env("KANDEV_DATA_DIR", dir.join(&name))
            .env("KANDEV_WEB_DIR", root().join("web/dist"))
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting {name}: {e}"))?;
        replicas.0.push(child);
        wait_for_port(*port, &name)?;
        sh::step(&format!("{name} serves http://127.0.0.1:{port}"));
    }
    // The first replica to start on the empty database made the admin.
    for i in 1..=PORTS.len() {
        let log = std::fs::read_to_string(dir.join(format!("r{i}.log"))).unwrap_or_default();
        for line in log
            .lines()
            .filter(|l| l.contains("password:") || l.contains("username:") || l.contains("Sign in at"))
        {
            eprintln!("r{i}: {line}");
        }
    }
    sh::step(&format!(
        "three replicas on one PostgreSQL and one NATS; logs in {}. Kill one (kill -9 <pid>) and watch the others take over. Ctrl-C stops everything.",
        dir.display()
    ));
    for (i, c) in replicas.0.iter().enumerate() {
        eprintln!("  r{} pid {}", i + 1, c.id());
    }
    // Until Ctrl-C (which reaches the children too) or every replica exits.
    for c in &mut replicas.0 {
        let _ = c.wait();
    }
    drop(running);
    Ok(())
}
