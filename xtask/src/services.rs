//! Services the tests need, from Debian packages: PostgreSQL, nats-server,
//! Chromium and ChromeDriver. Installed when missing, started on free
//! loopback ports for the length of the test run, and stopped afterwards.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::sh;
use crate::tools::root;

fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .collect();
    versions.sort();
    versions.into_iter().rev().find(|b| b.join("postgres").exists())
}

fn on_path(name: &str) -> bool {
    sh::output("which", &[name]).is_some()
}

pub fn install() -> Result<(), String> {
    let mut missing = vec![];
    if postgres_bin().is_none() {
        missing.push("postgresql");
    }
    if !on_path("nats-server") {
        missing.push("nats-server");
    }
    if !Path::new("/usr/bin/chromium").exists() {
        missing.push("chromium");
    }
    if !Path::new("/usr/bin/chromedriver").exists() {
        missing.push("chromium-driver");
    }
    if !on_path("git") {
        missing.push("git");
    }
    if missing.is_empty() {
        Ok(())
    } else {
        sh::apt_install(&missing)
    }
}

pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

pub fn wait_for_port(port: u16, what: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("{what} did not start on port {port}"))
}

/// Running services; dropping this stops them.
pub struct Running {
    children: Vec<Child>,
    env: Vec<(String, String)>,
}

impl Running {
    pub fn env(&self) -> Vec<(String, String)> {
        self.env.clone()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn start() -> Result<Running, String> {
    let mut running = Running {
        children: vec![],
        env: vec![],
    };
    let base = root().join("target/test-services");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).map_err(|e| e.to_string())?;

    sh::step("starting PostgreSQL");
    let bin = postgres_bin().ok_or("PostgreSQL is not installed")?;
    let data = base.join("pg");
    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
    // initdb and postgres refuse to run as root: use the postgres account then.
    let as_postgres = sh::is_root();
    if as_postgres {
        sh::run("chown", &["-R", "postgres", &base.display().to_string()], &[])?;
        // The account must be able to reach the directory.
        let mut dir = base.clone();
        while let Some(parent) = dir.parent() {
            let _ = sh::run("chmod", &["o+x", &parent.display().to_string()], &[]);
            dir = parent.to_path_buf();
        }
    }
    // `setpriv` becomes the program (`runuser` would stay its parent, and
    // killing that at the end left PostgreSQL running).
    let pg = |program: &Path| -> Command {
        if as_postgres {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=postgres", "--regid=postgres", "--init-groups", "--"])
                .arg(program);
            c
        } else {
            Command::new(program)
        }
    };
    let status = pg(&bin.join("initdb"))
        .args(["-D", &data.display().to_string(), "-A", "trust", "-U", "postgres"])
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("initdb: {e}"))?;
    if !status.success() {
        return Err("initdb failed".into());
    }
    let pg_port = free_port()?;
    let child = pg(&bin.join("postgres"))
        .args([
            "-D",
            &data.display().to_string(),
            "-p",
            &pg_port.to_string(),
            "-k",
            &data.display().to_string(),
        ])
        .args([
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "max_connections=300",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("postgres: {e}"))?;
    running.children.push(child);
    wait_for_port(pg_port, "PostgreSQL")?;
    running.env.push((
        "KANDEV_TEST_POSTGRES_URL".into(),
        format!("postgres://postgres@127.0.0.1:{pg_port}/postgres"),
    ));

    sh::step("starting nats-server");
    let nats_port = free_port()?;
    let child = Command::new("nats-server")
        // JetStream on: the bus keeps events in a stream with durable consumers.
        .args(["-a", "127.0.0.1", "-p", &nats_port.to_string(), "-js", "-sd"])
        .arg(base.join("nats"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("nats-server: {e}"))?;
    running.children.push(child);
    wait_for_port(nats_port, "nats-server")?;
    running
        .env
        .push(("KANDEV_TEST_NATS_URL".into(), format!("nats://127.0.0.1:{nats_port}")));
    Ok(running)
}
