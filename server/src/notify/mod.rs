//! The notification sender every replica runs: claims due deliveries (one
//! replica per attempt), posts each body to its target — signed with
//! `X-Kandev-Signature-256` where the target has a secret — and logs the
//! attempt, retrying on the schedule of `kandev_core::notify::retry_at`.

mod guard;

use std::sync::Arc;
use std::time::Duration;

use kandev_core::notify::{self, TargetKind};

use crate::clock::Clock;
use crate::periodic::Periodic;
use crate::store::Store;
use crate::store::notifications::DueDelivery;

/// How often due deliveries are looked for.
const TICK: Duration = Duration::from_millis(250);
/// How long a claim keeps other replicas off a delivery: past the send timeout.
const HOLD: chrono::Duration = chrono::Duration::seconds(30);
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
const BATCH: i64 = 16;

pub use guard::internal_literal;

pub struct Notifier {
    store: Store,
    clock: Arc<dyn Clock>,
    /// The client, or why it could not be built (then every send fails).
    http: Result<reqwest::Client, String>,
    /// Whether targets may be loopback, private or link-local addresses.
    private_ok: bool,
    running: Periodic,
}

impl Notifier {
    pub fn new(store: Store, clock: Arc<dyn Clock>, private_ok: bool) -> Arc<Self> {
        // Redirects are not followed: a target answers for itself, and a
        // redirect must not steer a signed body somewhere else. No proxy: it
        // would connect on our behalf, past the resolver's check.
        let mut http = reqwest::Client::builder()
            .timeout(SEND_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(concat!("kandev/", env!("CARGO_PKG_VERSION")));
        if !private_ok {
            http = http.dns_resolver(Arc::new(guard::PublicOnly));
        }
        // Never a default client in its place: that one would skip the guard.
        let http = http.build().map_err(|e| {
            tracing::error!(error = %e, "could not build the notification client; notifications will fail");
            format!("the notification client could not be built: {e}")
        });
        Arc::new(Notifier {
            store,
            clock,
            http,
            private_ok,
            running: Periodic::default(),
        })
    }

    pub async fn start(self: &Arc<Self>) {
        let me = self.clone();
        self.running
            .start(TICK, move || {
                let me = me.clone();
                async move { me.pass().await }
            })
            .await;
    }

    pub async fn stop(&self) {
        self.running.stop().await;
    }

    /// Sends every delivery due now.
    pub async fn pass(&self) {
        let due = match self.store.claim_due_deliveries(self.clock.now(), HOLD, BATCH).await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e, "could not read due notifications");
                return;
            }
        };
        for d in due {
            let (status, error) = self.send(&d).await;
            let attempts = u32::try_from(d.attempts + 1).unwrap_or(u32::MAX);
            let now = self.clock.now();
            // A deleted target never answers: no point retrying.
            let retry = if d.target.is_some() {
                notify::retry_at(attempts, now)
            } else {
                None
            };
            if let Err(e) = self.store.record_attempt(&d, status, &error, retry, now).await {
                tracing::warn!(delivery = %d.id, error = %e, "could not record a notification attempt");
            }
        }
    }

    async fn send(&self, d: &DueDelivery) -> (Option<u16>, String) {
        let Some(t) = &d.target else {
            return (None, "the target was deleted".into());
        };
        if !self.private_ok
            && let Some(ip) = guard::internal_literal(&t.target.url)
        {
            tracing::warn!(delivery = %d.id, "a notification target names an internal address; not sent");
            return (None, guard::refusal(&ip.to_string()));
        }
        let http = match &self.http {
            Ok(c) => c,
            Err(e) => return (None, e.clone()),
        };
        let mut req = http
            .post(&t.target.url)
            .header("content-type", "application/json")
            .header("x-kandev-event", &d.event)
            .header("x-kandev-delivery", &d.id);
        if t.target.kind == TargetKind::Webhook && !t.secret.is_empty() {
            req = req.header(
                "x-kandev-signature-256",
                crate::signature::sign(&t.secret, d.body.as_bytes()),
            );
        }
        match req.body(d.body.clone()).send().await {
            Ok(resp) if notify::delivered(resp.status().as_u16()) => (Some(resp.status().as_u16()), String::new()),
            Ok(resp) => {
                let code = resp.status().as_u16();
                tracing::info!(delivery = %d.id, status = code, "a notification target refused a delivery");
                (Some(code), format!("the target answered {code}"))
            }
            Err(e) => {
                let cause = root(&e);
                let what = if e.is_timeout() {
                    "timed out".to_string()
                } else if cause.starts_with("refused: ") {
                    cause
                } else {
                    format!("could not connect: {cause}")
                };
                tracing::info!(delivery = %d.id, error = %what, "a notification delivery failed");
                (None, what)
            }
        }
    }
}

/// The innermost cause, which names what actually went wrong.
fn root(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
