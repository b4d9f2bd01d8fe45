//! A phone's first visit, timed: Chromium emulating a phone, its CPU slowed
//! four times, on DevTools' "Fast 4G" and "Slow 4G" networks with an empty
//! cache. Measures when the board, the new-automation editor and a task page
//! (opened by its address: a shared link, a reload) become usable (their
//! first control is on the page; Leptos attaches the handlers as it creates
//! the element), counted from the start of navigation in the page's own
//! clock. Prints figures only.
//!
//! Needs `cargo xtask web` and the `kandev` debug binary (or `KANDEV_BIN`);
//! run: `cargo bench -p kandev-e2e --bench phone`. `KANDEV_PHONE_WATERFALL=1`
//! also prints each visit's requests (start, first byte, end in ms; bytes).

use anyhow::Context;
use kandev_e2e::{Browser, Device, Stack, sign_in};
use serde_json::{Value, json};

/// A network as DevTools throttles it: latency in ms, throughput in bytes/s
/// (DevTools' presets, with the adjustments it applies to them).
struct Network {
    name: &'static str,
    latency_ms: f64,
    down: f64,
    up: f64,
    /// The goals, seconds.
    editor_goal: &'static str,
}

const NETWORKS: [Network; 2] = [
    Network {
        name: "fast 4G",
        latency_ms: 60.0 * 2.75,
        down: 9.0 * 1000.0 * 1000.0 / 8.0 * 0.9,
        up: 1.5 * 1000.0 * 1000.0 / 8.0 * 0.9,
        editor_goal: "<= 1",
    },
    Network {
        name: "slow 4G",
        latency_ms: 150.0 * 3.75,
        down: 1.6 * 1000.0 * 1000.0 / 8.0 * 0.9,
        up: 750.0 * 1000.0 / 8.0 * 0.9,
        editor_goal: "<= 2",
    },
];

/// How much slower than this machine the phone's CPU is taken to be.
const CPU_SLOWDOWN: f64 = 4.0;

/// Sets `window.__usable` to the page's clock when `css` first matches on
/// `path` (the script stays registered for every later page of the browser).
fn watch_for(path: &str, css: &str) -> String {
    format!(
        "(() => {{ if (location.pathname !== {path:?}) return; const css = {css:?}; const seen = () => {{ if (window.__usable === undefined && document.querySelector(css)) {{ window.__usable = performance.now(); return true; }} return false; }}; \
         new MutationObserver((_, o) => {{ if (seen()) o.disconnect(); }}).observe(document, {{ childList: true, subtree: true }}); }})();"
    )
}

/// Loads `base` + `path` cold on `network` and returns seconds until `css` appears.
async fn first_visit(browser: &Browser, network: &Network, base: &str, path: &str, css: &str) -> anyhow::Result<f64> {
    browser.driver.goto("about:blank").await?;
    browser.cdp("Network.enable", json!({})).await?;
    browser.cdp("Network.clearBrowserCache", json!({})).await?;
    browser
        .cdp(
            "Network.emulateNetworkConditions",
            json!({"offline": false, "latency": network.latency_ms,
                   "downloadThroughput": network.down, "uploadThroughput": network.up}),
        )
        .await?;
    browser
        .cdp("Emulation.setCPUThrottlingRate", json!({"rate": CPU_SLOWDOWN}))
        .await?;
    browser
        .cdp(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": watch_for(path, css)}),
        )
        .await?;
    browser.driver.goto(format!("{base}{path}")).await?;
    let started = std::time::Instant::now();
    let usable = loop {
        let v: Value = browser.js("return window.__usable ?? null", vec![]).await?;
        if let Some(ms) = v.as_f64() {
            break ms;
        }
        anyhow::ensure!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{css} did not appear on {path} within a minute"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    if std::env::var_os("KANDEV_PHONE_WATERFALL").is_some() {
        let entries: Value = browser
            .js(
                "return performance.getEntriesByType('resource').map(e => [e.name.replace(location.origin, ''), Math.round(e.startTime), Math.round(e.responseStart), Math.round(e.responseEnd), e.encodedBodySize])",
                vec![],
            )
            .await?;
        println!("  {} {path}: usable at {usable:.0} ms", network.name);
        for e in entries.as_array().into_iter().flatten() {
            println!("    {e}");
        }
    }
    browser
        .cdp("Emulation.setCPUThrottlingRate", json!({"rate": 1}))
        .await?;
    browser
        .cdp(
            "Network.emulateNetworkConditions",
            json!({"offline": false, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}),
        )
        .await?;
    Ok(usable / 1000.0)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let stack = Stack::start("phone-bench").await.context("the stack")?;
    let ws = stack.workspace("Phone").await?;
    stack.repository(&ws, "acme", "api").await?;
    let task = stack.task(&ws, "A card", "todo").await?;
    println!("kandev phone benchmark: Chromium emulating a phone, CPU slowed {CPU_SLOWDOWN}x, empty cache\n");
    for network in &NETWORKS {
        // A fresh browser per network: nothing cached or compiled from before.
        let browser = Browser::start(Device::Mobile).await?;
        browser.set_base(&stack.base).await;
        sign_in(&browser).await?;
        let board = first_visit(&browser, network, &stack.base, &format!("/w/{ws}"), "[data-task-id]").await;
        let editor = first_visit(
            &browser,
            network,
            &stack.base,
            &format!("/settings/workspace/{ws}/automations/new"),
            "#automation-name",
        )
        .await;
        let task_page = first_visit(
            &browser,
            network,
            &stack.base,
            &format!("/w/{ws}/tasks/{task}"),
            "#delete-task",
        )
        .await;
        browser.quit().await;
        for (page, seconds, goal) in [
            ("board", board?, "-"),
            ("new-automation editor", editor?, network.editor_goal),
            ("task page", task_page?, "-"),
        ] {
            println!("{:<58} {seconds:>8.2} s", format!("{page} usable, {}", network.name));
            println!(
                "@figure web: {page} usable on a phone, {}|{seconds:.3}|s|{goal}|-|-",
                network.name
            );
        }
    }
    Ok(())
}
