//! `cargo xtask bench` and `cargo xtask load`: run the benchmarks against
//! real services, echo what they print, and gather their `@figure` lines
//! into one table: figure, goal, the same run's raw baseline, and the ratio.
//! Figures are never asserted: machines differ, compare within one run.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::{services, tools};

/// One `@figure name|value|unit|goal|baseline|baseline name` line.
struct Figure {
    name: String,
    value: f64,
    unit: String,
    goal: String,
    baseline: Option<(f64, String)>,
}

fn parse(line: &str) -> Option<Figure> {
    let fields: Vec<&str> = line.strip_prefix("@figure ")?.split('|').collect();
    let [name, value, unit, goal, baseline, baseline_name] = fields[..] else {
        return None;
    };
    Some(Figure {
        name: name.into(),
        value: value.parse().ok()?,
        unit: unit.into(),
        goal: goal.into(),
        baseline: baseline.parse().ok().map(|b| (b, baseline_name.to_string())),
    })
}

/// Runs `cargo bench` with `args`, echoing its output; returns the figures.
fn run_bench(args: &[&str], env: &[(String, String)]) -> Result<Vec<Figure>, String> {
    let mut child = Command::new("cargo")
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    let mut figures = vec![];
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            match parse(&line) {
                Some(f) => figures.push(f),
                None => println!("{line}"),
            }
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("`cargo {}` failed ({status})", args.join(" ")));
    }
    Ok(figures)
}

const COLUMNS: [&str; 6] = ["figure", "value", "unit", "goal", "baseline", "ratio"];

fn table(figures: &[Figure]) {
    println!("\n{}", line(COLUMNS.map(String::from)));
    for f in figures {
        println!("{}", line(row(f)));
    }
}

fn line([name, value, unit, goal, baseline, ratio]: [String; 6]) -> String {
    format!("{name:<58} {value:>12} {unit:<10} {goal:<16} {baseline:>12} {ratio:>8}")
}

/// A figure's cells: small numbers (requests per PR, seconds, a fraction of
/// a millisecond) keep their decimals, large ones lose what is noise.
fn row(f: &Figure) -> [String; 6] {
    let shown = |v: f64, large: usize| {
        if v.abs() < 10.0 {
            format!("{v:.3}")
        } else {
            format!("{v:.large$}")
        }
    };
    let (baseline, ratio) = match &f.baseline {
        Some((b, name)) => (
            format!("{} {name}", shown(*b, 0)),
            format!("{:.3}", f.value / b.max(1e-9)),
        ),
        None => ("-".into(), "-".into()),
    };
    [
        f.name.clone(),
        shown(f.value, 1),
        f.unit.clone(),
        f.goal.clone(),
        baseline,
        ratio,
    ]
}

fn with_services(f: impl FnOnce(&[(String, String)]) -> Result<Vec<Figure>, String>) -> Result<(), String> {
    tools::setup()?;
    services::install()?;
    let running = services::start()?;
    let result = f(&running.env());
    drop(running);
    table(&result?);
    Ok(())
}

/// Every benchmark; the load phases run 15 s each here (`cargo xtask load`
/// runs the full minute).
pub fn all(extra: &[String]) -> Result<(), String> {
    with_services(|env| {
        let mut env = env.to_vec();
        env.push(("KANDEV_LOAD_SECONDS".into(), "15".into()));
        // Bench targets only: `cargo bench` alone would also build every test harness optimised.
        let mut args = vec!["bench", "-p", "kandev-server", "--benches"];
        args.extend(extra.iter().map(String::as_str));
        let mut figures = run_bench(&args, &env)?;
        figures.extend(phone(&env)?);
        Ok(figures)
    })
}

/// The phone's first visit, when the web app is built (`cargo xtask web`):
/// it drives the debug `kandev` binary, as the browser suite does.
fn phone(env: &[(String, String)]) -> Result<Vec<Figure>, String> {
    if !crate::tools::root().join("web/dist/index.html").exists() {
        println!("(no web/dist: run `cargo xtask web` first to time a phone's first visit)");
        return Ok(vec![]);
    }
    crate::sh::run("cargo", &["build", "-q", "-p", "kandev-server", "--bin", "kandev"], &[])?;
    run_bench(&["bench", "-p", "kandev-e2e", "--bench", "phone"], env)
}

pub fn load() -> Result<(), String> {
    with_services(|env| run_bench(&["bench", "-p", "kandev-server", "--bench", "load"], env))
}

#[cfg(test)]
mod tests {
    use super::{parse, row};

    #[test]
    fn a_figure_line_reads_back_with_or_without_a_baseline() {
        let f = parse("@figure runs created|191.5|/s|>= 500|9000|raw inserts/s").expect("figure");
        assert_eq!(
            (f.name.as_str(), f.value, f.goal.as_str()),
            ("runs created", 191.5, ">= 500")
        );
        assert_eq!(f.baseline, Some((9000.0, "raw inserts/s".into())));
        let g = parse("@figure p99|12|ms|< 50|-|").expect("figure");
        assert_eq!(g.baseline, None);
        assert!(parse("runs created 191/s").is_none());
    }

    #[test]
    fn a_baseline_under_ten_keeps_its_decimals() {
        let f = parse("@figure lease renewal|2.501|ms|-|0.0991|ms per raw insert").expect("figure");
        let [_, value, _, _, baseline, ratio] = row(&f);
        assert_eq!(
            (value.as_str(), baseline.as_str()),
            ("2.501", "0.099 ms per raw insert")
        );
        assert_eq!(ratio, "25.237");
        let g = parse("@figure runs|1118.66|runs/s|>= 500|10086.7|raw inserts/s").expect("figure");
        let [_, value, _, _, baseline, _] = row(&g);
        assert_eq!((value.as_str(), baseline.as_str()), ("1118.7", "10087 raw inserts/s"));
    }
}
