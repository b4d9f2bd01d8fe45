//! Logging set up once: human-readable by default, JSON with
//! `KANDEV_LOG_FORMAT=json`; the level from `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

pub fn init(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,rmcp=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(true);
    // A second init (tests) is harmless: the first subscriber stays.
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
