//! Chromium through chromedriver: a desktop window, or a phone (390×844,
//! touch, mobile user agent). Helpers wait on conditions and act like a
//! person: scroll into view, then click or type.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};
use thirtyfour::common::command::{Command as WdCommand, ExtensionCommand};
use thirtyfour::prelude::*;
use thirtyfour::{ChromeCapabilities, ChromiumLikeCapabilities, DesiredCapabilities};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use crate::artifacts;
use crate::wait::{announced, eventually};

const WAIT: Duration = Duration::from_secs(15);
const MOBILE_UA: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    Desktop,
    Mobile,
    /// A desktop whose system prefers a dark colour scheme (the dark theme's checks).
    DarkDesktop,
}

impl Device {
    pub fn as_str(self) -> &'static str {
        match self {
            Device::Desktop => "desktop",
            Device::Mobile => "mobile",
            Device::DarkDesktop => "desktop-dark",
        }
    }
}

#[derive(Clone)]
pub struct Browser {
    pub driver: WebDriver,
    base: Arc<Mutex<String>>,
    chromedriver: Arc<Mutex<Option<Child>>>,
    /// chromedriver's and Chromium's temporary directory, with the profile
    /// in it: removed whole on `quit`.
    home: PathBuf,
}

/// WebDriver's "Get Computed Label": the accessible name Chromium computes.
#[derive(Debug)]
struct ComputedLabel(String);

impl ExtensionCommand for ComputedLabel {
    fn parameters_json(&self) -> Option<Value> {
        None
    }
    fn method(&self) -> http::Method {
        http::Method::GET
    }
    fn endpoint(&self) -> Arc<str> {
        format!("/element/{}/computedlabel", self.0).into()
    }
}

/// chromedriver's "execute a DevTools command".
#[derive(Debug)]
struct Cdp(String, Value);

impl ExtensionCommand for Cdp {
    fn parameters_json(&self) -> Option<Value> {
        Some(json!({"cmd": self.0, "params": self.1}))
    }
    fn method(&self) -> http::Method {
        http::Method::POST
    }
    fn endpoint(&self) -> Arc<str> {
        "/goog/cdp/execute".into()
    }
}

fn chromium_binary() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

/// Chromium's capabilities for one device, with its own profile directory.
fn capabilities(device: Device, profile: &std::path::Path) -> anyhow::Result<ChromeCapabilities> {
    let mut caps = DesiredCapabilities::chrome();
    if let Some(bin) = chromium_binary() {
        caps.set_binary(bin)?;
    }
    for arg in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--lang=en-US",
    ] {
        caps.add_arg(arg)?;
    }
    caps.add_arg(&format!("--user-data-dir={}", profile.display()))?;
    match device {
        Device::Desktop => caps.add_arg("--window-size=1280,900")?,
        Device::DarkDesktop => {
            caps.add_arg("--window-size=1280,900")?;
            // Blink's own setting: `prefers-color-scheme: dark` (0 = dark).
            caps.add_arg("--blink-settings=preferredColorScheme=0")?;
        }
        Device::Mobile => caps.add_experimental_option(
            "mobileEmulation",
            json!({"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3.0, "touch": true, "mobile": true}, "userAgent": MOBILE_UA}),
        )?,
    }
    caps.set("goog:loggingPrefs", json!({"browser": "ALL", "performance": "ALL"}))?;
    Ok(caps)
}

/// chromedriver on a port of its own choosing. Given `--port=0` it takes a
/// free port on one address family and then binds the other to the same
/// number, which another test may hold by then ("IPv4 port not available.
/// Exiting..."): that start is retried, like Chromium's below. Each gets a
/// directory of its own as `TMPDIR`, so what chromedriver and Chromium leave
/// in their temporary directory goes with it.
async fn start_chromedriver() -> anyhow::Result<(Child, u16, PathBuf)> {
    static STARTED: AtomicUsize = AtomicUsize::new(0);
    let driver_bin = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let mut attempt = 0;
    loop {
        attempt += 1;
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        // The name is how `cargo xtask test` finds a Chromium a timeout left behind.
        let home = std::env::temp_dir().join(format!("kandev-e2e-chrome-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home)?;
        let out = home.join("chromedriver.log");
        let mut child = Command::new(&driver_bin)
            .arg("--port=0")
            .env("TMPDIR", &home)
            .stdout(std::fs::File::create(&out)?)
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {driver_bin} (install chromium-driver)"))?;
        let line = announced(&mut child, &out, "ChromeDriver was started successfully on port ").await;
        match line {
            Ok(line) => {
                let port = line
                    .trim_end_matches('.')
                    .parse()
                    .context("chromedriver announced no port")?;
                return Ok((child, port, home));
            }
            Err(e) if attempt < 3 => {
                eprintln!("chromedriver did not start (attempt {attempt} of 3): {e}");
                let _ = child.kill().await;
                let _ = std::fs::remove_dir_all(&home);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

impl Browser {
    pub async fn start(device: Device) -> anyhow::Result<Browser> {
        let (child, port, home) = start_chromedriver().await?;
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let status = format!("{url}/status");
        eventually("chromedriver to be ready", WAIT, || {
            let (http, status) = (http.clone(), status.clone());
            async move {
                let body: Value = http.get(status).send().await.ok()?.json().await.ok()?;
                (body["value"]["ready"] == true).then_some(())
            }
        })
        .await?;

        // Chromium now and then exits while starting on a loaded machine
        // ("session not created: Chrome instance exited"): that is the
        // harness's problem, not the app's, so a start is tried three times,
        // each with a fresh profile.
        let mut attempt = 0;
        let driver = loop {
            attempt += 1;
            let profile = home.join(format!("profile-{attempt}"));
            // A hung page must fail the test, not stall it.
            let opened = WebDriver::builder(&url, capabilities(device, &profile)?)
                .request_timeout(Duration::from_secs(30))
                .connect()
                .await;
            match opened {
                Ok(driver) => break driver,
                Err(e) if attempt < 3 => {
                    eprintln!("Chromium did not start (attempt {attempt} of 3): {e}");
                    let _ = std::fs::remove_dir_all(&profile);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                // The directory stays: chromedriver's log says why.
                Err(e) => return Err(e).context("opening a Chromium session"),
            }
        };
        Ok(Browser {
            driver,
            base: Arc::default(),
            chromedriver: Arc::new(Mutex::new(Some(child))),
            home,
        })
    }

    pub async fn quit(&self) {
        let _ = self.driver.clone().quit().await;
        if let Some(mut c) = self.chromedriver.lock().await.take() {
            let _ = c.kill().await;
        }
        let _ = std::fs::remove_dir_all(&self.home);
    }

    pub async fn set_base(&self, base: &str) {
        *self.base.lock().await = base.to_string();
    }

    /// Opens a path of the app and waits for it to render.
    pub async fn goto(&self, path: &str) -> anyhow::Result<()> {
        let base = self.base.lock().await.clone();
        self.driver.goto(format!("{base}{path}")).await?;
        self.wait_for("#main, main").await?;
        Ok(())
    }

    pub async fn js(&self, script: &str, args: Vec<Value>) -> anyhow::Result<Value> {
        Ok(self.driver.execute(script, args).await?.json().clone())
    }

    /// The first element matching `css`, once it exists.
    pub async fn wait_for(&self, css: &str) -> anyhow::Result<WebElement> {
        let driver = self.driver.clone();
        eventually(&format!("`{css}` to appear"), WAIT, || {
            let driver = driver.clone();
            async move { driver.find(By::Css(css)).await.ok() }
        })
        .await
    }

    pub async fn wait_gone(&self, css: &str) -> anyhow::Result<()> {
        let driver = self.driver.clone();
        eventually(&format!("`{css}` to disappear"), WAIT, || {
            let driver = driver.clone();
            async move {
                driver
                    .find_all(By::Css(css))
                    .await
                    .ok()
                    .filter(|v| v.is_empty())
                    .map(|_| ())
            }
        })
        .await
    }

    pub async fn exists(&self, css: &str) -> bool {
        self.driver.find_all(By::Css(css)).await.is_ok_and(|v| !v.is_empty())
    }

    /// Waits until an element's text contains `needle`.
    pub async fn wait_text(&self, css: &str, needle: &str) -> anyhow::Result<String> {
        let driver = self.driver.clone();
        eventually(&format!("`{css}` to contain {needle:?}"), WAIT, || {
            let driver = driver.clone();
            async move {
                for el in driver.find_all(By::Css(css)).await.ok()? {
                    let text = el.text().await.ok()?;
                    if text.contains(needle) {
                        return Some(text);
                    }
                }
                None
            }
        })
        .await
    }

    pub async fn text(&self, css: &str) -> anyhow::Result<String> {
        Ok(self.wait_for(css).await?.text().await?)
    }

    /// Scrolls an element to the middle of the screen (clear of the sticky
    /// save bar), waits until it is enabled, and clicks it.
    pub async fn click(&self, css: &str) -> anyhow::Result<()> {
        let el = self.wait_for(css).await?;
        self.click_element(&el)
            .await
            .with_context(|| format!("clicking `{css}`"))
    }

    pub async fn click_element(&self, el: &WebElement) -> anyhow::Result<()> {
        self.center(el).await?;
        let e = el.clone();
        eventually("the element to be enabled and displayed", WAIT, || {
            let e = e.clone();
            async move { (e.is_enabled().await.ok()? && e.is_displayed().await.ok()?).then_some(()) }
        })
        .await?;
        el.click().await?;
        Ok(())
    }

    pub async fn center(&self, el: &WebElement) -> anyhow::Result<()> {
        self.driver
            .execute(
                "arguments[0].scrollIntoView({block: 'center', inline: 'nearest'});",
                vec![el.to_json()?],
            )
            .await?;
        Ok(())
    }

    /// Replaces an input's text by typing.
    pub async fn type_into(&self, css: &str, text: &str) -> anyhow::Result<()> {
        let el = self.wait_for(css).await?;
        self.center(&el).await?;
        el.clear().await?;
        if !text.is_empty() {
            el.send_keys(text).await?;
        }
        Ok(())
    }

    /// Picks an `<option>` of a `<select>` by its value.
    pub async fn select(&self, css: &str, value: &str) -> anyhow::Result<()> {
        let select = self.wait_for(css).await?;
        self.center(&select).await?;
        let option = self.wait_for(&format!("{css} option[value=\"{value}\"]")).await?;
        option.click().await?;
        Ok(())
    }

    pub async fn value(&self, css: &str) -> anyhow::Result<String> {
        Ok(self.wait_for(css).await?.prop("value").await?.unwrap_or_default())
    }

    pub async fn checked(&self, css: &str) -> anyhow::Result<bool> {
        Ok(self.wait_for(css).await?.prop("checked").await?.as_deref() == Some("true"))
    }

    pub async fn enabled(&self, css: &str) -> anyhow::Result<bool> {
        Ok(self.wait_for(css).await?.is_enabled().await?)
    }

    /// The accessible name Chromium computes for an element.
    pub async fn accessible_name(&self, css: &str) -> anyhow::Result<String> {
        let el = self.wait_for(css).await?;
        let resp = self
            .driver
            .handle()
            .cmd(WdCommand::ExtensionCommand(Box::new(ComputedLabel(
                el.element_id().to_string(),
            ))))
            .await?;
        Ok(resp.value_json()?.as_str().unwrap_or_default().to_string())
    }

    /// Holds the page's requests to URLs matching `pattern` (`*` wildcards)
    /// before they are sent, until [`Browser::release_requests`]: a
    /// connection that is slow to open.
    pub async fn hold_requests(&self, pattern: &str) -> anyhow::Result<()> {
        self.cdp("Fetch.enable", json!({ "patterns": [{ "urlPattern": pattern }] }))
            .await
    }

    /// Lets held requests go on.
    pub async fn release_requests(&self) -> anyhow::Result<()> {
        self.cdp("Fetch.disable", json!({})).await
    }

    /// Makes requests to URLs matching any of `patterns` (`*` wildcards) fail
    /// as a network error, until [`Browser::unblock_requests`].
    pub async fn block_requests(&self, patterns: &[&str]) -> anyhow::Result<()> {
        self.cdp("Network.enable", json!({})).await?;
        self.cdp("Network.setBlockedURLs", json!({ "urls": patterns })).await
    }

    pub async fn unblock_requests(&self) -> anyhow::Result<()> {
        self.cdp("Network.setBlockedURLs", json!({ "urls": [] })).await
    }

    /// One Chrome DevTools Protocol command, through chromedriver.
    pub async fn cdp(&self, cmd: &str, params: Value) -> anyhow::Result<()> {
        self.driver
            .handle()
            .cmd(WdCommand::ExtensionCommand(Box::new(Cdp(cmd.into(), params))))
            .await
            .with_context(|| format!("CDP {cmd}"))?;
        Ok(())
    }

    /// URLs the page requested since the last call (the performance log).
    pub async fn requests(&self) -> anyhow::Result<Vec<String>> {
        let entries = self.driver.handle().get_log("performance").await?;
        Ok(entries
            .into_iter()
            .filter_map(|e| serde_json::from_str::<Value>(&e.message).ok())
            .filter(|m| m["message"]["method"] == "Network.requestWillBeSent")
            .filter_map(|m| m["message"]["params"]["request"]["url"].as_str().map(str::to_string))
            .collect())
    }

    pub async fn console(&self) -> Vec<String> {
        self.driver
            .handle()
            .get_log("browser")
            .await
            .map(|l| l.into_iter().map(|e| format!("{} {}", e.level, e.message)).collect())
            .unwrap_or_default()
    }

    /// True when nothing scrolls sideways.
    pub async fn no_horizontal_overflow(&self) -> anyhow::Result<bool> {
        let v = self
            .js(
                "return document.documentElement.scrollWidth <= window.innerWidth;",
                vec![],
            )
            .await?;
        Ok(v == Value::Bool(true))
    }

    /// Visible interactive controls smaller than 44 px or off-screen sideways.
    pub async fn small_or_hidden_controls(&self) -> anyhow::Result<Vec<String>> {
        let v = self
            .js(
                r#"
                const out = [];
                for (const el of document.querySelectorAll('button, select, input:not([type=checkbox]), textarea, a.btn, .switch')) {
                    const r = el.getBoundingClientRect();
                    if (r.width === 0 && r.height === 0) continue; // not rendered
                    if (el.closest('.tip-body, .sr-only, [hidden]')) continue;
                    if (r.height < 43.5 || r.width < 43.5 || r.left < -1 || r.right > window.innerWidth + 1) {
                        out.push((el.id || el.className || el.tagName) + ' ' + Math.round(r.width) + 'x' + Math.round(r.height));
                    }
                }
                return out;"#,
                vec![],
            )
            .await?;
        Ok(v.as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default())
    }

    /// Runs axe-core on the page; serious and critical violations.
    pub async fn axe_violations(&self) -> anyhow::Result<Vec<String>> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../node_modules/axe-core/axe.min.js");
        let source = std::fs::read_to_string(&path).with_context(|| format!("{} (run npm install)", path.display()))?;
        self.driver.execute(&source, vec![]).await?;
        let result = self
            .driver
            .execute_async(
                r#"const done = arguments[arguments.length - 1];
                axe.run(document, {resultTypes: ['violations']}).then(r => done(
                    r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
                        .map(v => v.id + ': ' + v.help + ' @ ' + v.nodes.map(n => n.target.join(' ')).join(' | '))
                )).catch(e => done(['axe failed: ' + e]));"#,
                vec![],
            )
            .await?;
        Ok(result
            .json()
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default())
    }

    /// Saves `target/e2e-screenshots/<name>.png`.
    pub async fn screenshot(&self, name: &str) -> anyhow::Result<()> {
        let path = artifacts::dir().join(format!("{name}.png"));
        self.driver.screenshot(&path).await?;
        Ok(())
    }

    /// Hovers (desktop) or taps (phone) an element, as a person would.
    pub async fn point_at(&self, css: &str, device: Device) -> anyhow::Result<()> {
        let el = self.wait_for(css).await?;
        self.center(&el).await?;
        match device {
            Device::Desktop | Device::DarkDesktop => {
                self.driver.action_chain().move_to_element_center(&el).perform().await?
            }
            Device::Mobile => el.click().await?,
        }
        Ok(())
    }
}
