//! Running commands with progress shown.

use std::process::Command;

pub fn step(msg: &str) {
    eprintln!("\n==> {msg}");
}

/// Runs a command, inheriting stdio; an error names the command.
pub fn run(program: &str, args: &[&str], env: &[(String, String)]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

/// Runs a command and returns its stdout, or `None` if it could not run or failed.
pub fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).to_string())
}

pub fn is_root() -> bool {
    output("id", &["-u"]).is_some_and(|s| s.trim() == "0")
}

/// `apt-get install` (through sudo when not root).
pub fn apt_install(packages: &[&str]) -> Result<(), String> {
    step(&format!("installing Debian packages: {}", packages.join(" ")));
    let (prog, mut args): (&str, Vec<&str>) = if is_root() {
        ("apt-get", vec![])
    } else {
        ("sudo", vec!["apt-get"])
    };
    let mut update = args.clone();
    update.extend(["update", "-qq"]);
    run(prog, &update, &[])?;
    args.extend(["install", "-y", "-qq", "--no-install-recommends"]);
    args.extend(packages);
    run(prog, &args, &[("DEBIAN_FRONTEND".into(), "noninteractive".into())])
}
