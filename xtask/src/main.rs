//! `cargo xtask <command>`: the project's build and test orchestration.
//!
//! - `run [serve flags]`: set up tools, build the web app, run `kandev serve`
//! - `test`: set up tools and test services, build the web app, run every test
//! - `web`: build the web bundle into `web/dist`
//! - `weight [route]`: each route's wasm, and the main module's (or that
//!   route's) by crate (twiggy; after `web`)
//! - `setup`: install the build tools only
//! - `bench`: run the benchmarks and print one table of figures, goals and
//!   baselines (printed, never asserted)
//! - `load`: 200 clients against a running server for a minute a phase
//! - `contract`: schemathesis against the running server (part of `test`)
//! - `cluster`: three replicas on one PostgreSQL and one NATS, to try

mod bench;
mod cluster;
mod contract;
mod services;
mod sh;
mod tools;
mod web;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = args
        .split_first()
        .map(|(c, r)| (c.as_str(), r.to_vec()))
        .unwrap_or(("help", vec![]));
    let result = match command {
        "setup" => tools::setup().and_then(|_| tools::github_openapi().map(|_| ())),
        "web" => tools::setup().and_then(|_| web::build()),
        "weight" => web::weight(&rest),
        "run" => tools::setup().and_then(|_| web::build()).and_then(|_| run(&rest)),
        "test" => test(&rest),
        "bench" => bench::all(&rest),
        "load" => bench::load(),
        "contract" => tools::setup().and_then(|_| contract::check()),
        "cluster" => tools::setup().and_then(|_| web::build()).and_then(|_| cluster::run()),
        _ => {
            eprintln!("usage: cargo xtask <setup|web|weight|run|test|bench|load|contract|cluster>");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(extra: &[String]) -> Result<(), String> {
    sh::step("starting kandev at http://127.0.0.1:38080 (Ctrl-C stops it)");
    let mut args = vec![
        "run",
        "--release",
        "-p",
        "kandev-server",
        "--bin",
        "kandev",
        "--",
        "serve",
    ];
    args.extend(extra.iter().map(String::as_str));
    sh::run("cargo", &args, &[])
}

fn test(extra: &[String]) -> Result<(), String> {
    let started = std::time::Instant::now();
    tools::setup()?;
    services::install()?;
    web::build()?;
    // A library is not linked, so a check proves as much as a build (with
    // core's default features, which the web build does not use).
    sh::step("core compiles for wasm32-unknown-unknown");
    sh::run(
        "cargo",
        &["check", "-p", "kandev-core", "--target", "wasm32-unknown-unknown"],
        &[],
    )?;
    sh::step("formatting and lints");
    sh::run("cargo", &["fmt", "--all", "--", "--check"], &[])?;
    sh::run(
        "cargo",
        &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"],
        &[],
    )?;
    sh::run(
        "cargo",
        &[
            "clippy",
            "-p",
            "kandev-web",
            "--target",
            "wasm32-unknown-unknown",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    let openapi = tools::github_openapi()?;
    let running = services::start()?;
    // nextest builds every test target first, and the server's integration
    // tests make cargo build `target/debug/kandev` too: the browser suite
    // drives that binary. A separate `cargo build -p kandev-server` would
    // compile ~90 crates a second time with other features (dev-dependencies
    // unify differently), which cost CI five minutes.
    sh::step("tests (cargo nextest; builds the kandev binary the browser suite drives)");
    let mut args = vec!["nextest", "run", "--workspace", "--no-fail-fast"];
    args.extend(extra.iter().map(String::as_str));
    let mut env = running.env();
    env.push(("KANDEV_GITHUB_OPENAPI".into(), openapi.display().to_string()));
    let result = sh::run("cargo", &args, &env);
    drop(running);
    // A browser killed by a timeout can leave Chromium behind; ours are
    // recognisable by their profile directory.
    let _ = sh::output("pkill", &["-f", "kandev-e2e-chrome"]);
    // The contract runs last: a failing test above is the more useful news.
    let result = result.and_then(|_| contract::check());
    sh::step(&format!("test command finished in {:.0?}", started.elapsed()));
    result
}
