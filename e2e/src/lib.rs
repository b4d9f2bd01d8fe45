//! The browser suite's harness: the real `kandev serve` and `kandev
//! github-sim` as child processes, chromedriver with Debian's Chromium
//! (desktop or phone emulation), condition waits, and artifacts.
//!
//! Each test gets its own stack and browser, so tests never share state.

mod artifacts;
mod browser;
mod scratch;
mod stack;
mod wait;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;

pub use browser::{Browser, Device};
pub use stack::{E2E_USER, Stack};
pub use wait::eventually;

/// What a scenario gets: the stack, the browser and which device it is.
#[derive(Clone)]
pub struct Ctx {
    pub stack: Arc<Stack>,
    pub browser: Browser,
    pub device: Device,
    pub name: String,
}

/// Runs a scenario: starts everything, runs the body, and on failure saves
/// a screenshot, the page HTML and the browser console before failing.
pub async fn run<F, Fut>(name: &str, device: Device, body: F)
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    let _ = rustls::crypto::ring::default_provider().install_default();
    let name = format!("{name}-{}", device.as_str());
    let stack = match Stack::start(&name).await {
        Ok(s) => Arc::new(s),
        Err(e) => panic!("{name}: the stack did not start: {e:#}"),
    };
    let browser = match Browser::start(device).await {
        Ok(b) => b,
        Err(e) => panic!("{name}: the browser did not start: {e:#}\n{}", stack.log_tail()),
    };
    browser.set_base(&stack.base).await;
    if let Err(e) = sign_in(&browser).await {
        artifacts::on_failure(&browser, &name).await;
        browser.quit().await;
        panic!("{name}: signing in failed: {e:#}\n{}", stack.log_tail());
    }
    let ctx = Ctx {
        stack: stack.clone(),
        browser: browser.clone(),
        device,
        name: name.clone(),
    };
    let outcome = AssertUnwindSafe(body(ctx)).catch_unwind().await;
    let failure = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(format!("{e:#}")),
        Err(panic) => Some(
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panicked".into()),
        ),
    };
    if let Some(message) = &failure {
        artifacts::on_failure(&browser, &name).await;
        browser.quit().await;
        panic!(
            "{name} failed: {message}\n--- server log (tail) ---\n{}",
            stack.log_tail()
        );
    }
    browser.quit().await;
}

/// Signs in on the sign-in page, as a person would, and waits for the app.
pub async fn sign_in(browser: &Browser) -> anyhow::Result<()> {
    browser.goto("/login").await?;
    sign_in_here(browser, stack::E2E_USER, stack::E2E_PASSWORD).await
}

/// Fills in the sign-in form the browser is on and submits it.
pub async fn sign_in_here(browser: &Browser, username: &str, password: &str) -> anyhow::Result<()> {
    browser.wait_for("#login-username").await?;
    browser.type_into("#login-username", username).await?;
    browser.type_into("#login-password", password).await?;
    browser.click("#login-submit").await?;
    // The form sends the browser on to the app once the cookie is set.
    browser.wait_gone("#login-username").await?;
    Ok(())
}

/// Declares a scenario twice: once on a desktop, once on a phone.
#[macro_export]
macro_rules! scenario {
    ($(#[$meta:meta])* $name:ident, $body:path) => {
        $(#[$meta])*
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn desktop() {
                $crate::run(stringify!($name), $crate::Device::Desktop, $body).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn mobile() {
                $crate::run(stringify!($name), $crate::Device::Mobile, $body).await
            }
        }
    };
}
