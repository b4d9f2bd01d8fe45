//! Sign-in: one argon2id verification per attempt whether or not the user
//! exists (same answer, same work), and consecutive failures per username
//! slowed down by `kandev_core::access::login_delay_secs`, recorded in the
//! database so every replica sees them. Each attempt is counted before its
//! check, in the statement that finds it need not wait, so replicas cannot
//! race past a wait together.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, Duration, Utc};
use kandev_core::access::{LOGIN_CHECK_HOLD_SECS, login_delay_secs, login_retry_after_secs, normalise_username};

use super::credentials::{self, hash_password, random_hex, verify_password};
use super::{Access, Caller, Via};
use crate::error::{ServiceError, ServiceResult};
use crate::store::UserRecord;

/// How long a browser session lasts.
pub const SESSION_DAYS: i64 = 14;

const STRIPES: usize = 64;

/// How many password verifications run at once in this process: one per
/// core (at least two, at most eight). Each argon2id check holds 19 MiB for
/// its duration, so anyone able to reach the sign-in route could otherwise
/// make the server hold hundreds of them at once; the rest wait their turn.
pub fn password_check_slots() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8)
}

/// Serialises attempts per username within this process (striped, so memory
/// does not grow with the names an attacker tries), bounds the password
/// checks running at once, and keeps the hash that unknown usernames are
/// verified against.
pub(super) struct Throttle {
    stripes: Vec<tokio::sync::Mutex<()>>,
    decoy_hash: String,
    checks: Arc<tokio::sync::Semaphore>,
    running: Arc<AtomicUsize>,
    peak: AtomicUsize,
}

impl Throttle {
    pub(super) fn new() -> ServiceResult<Throttle> {
        Ok(Throttle {
            stripes: (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
            decoy_hash: hash_password(&random_hex::<16>()?)?,
            checks: Arc::new(tokio::sync::Semaphore::new(password_check_slots())),
            running: Arc::new(AtomicUsize::new(0)),
            peak: AtomicUsize::new(0),
        })
    }

    /// One argon2id verification, off the async threads, within the bound.
    /// The slot travels with the check itself: a request dropped while its
    /// check runs (the client hung up) frees the slot only when the check ends.
    async fn verify(&self, attempt: String, phc: String) -> bool {
        let Ok(slot) = self.checks.clone().acquire_owned().await else {
            return false;
        };
        let running = Running::enter(self.running.clone());
        self.peak.fetch_max(running.now, Ordering::SeqCst);
        tokio::task::spawn_blocking(move || {
            let (_slot, _running) = (slot, running);
            verify_password(&attempt, &phc)
        })
        .await
        .unwrap_or(false)
    }

    fn stripe(&self, username: &str) -> &tokio::sync::Mutex<()> {
        let mut h = DefaultHasher::new();
        username.hash(&mut h);
        &self.stripes[(h.finish() as usize) % STRIPES]
    }
}

/// One check counted as running until it ends.
struct Running {
    count: Arc<AtomicUsize>,
    now: usize,
}

impl Running {
    fn enter(count: Arc<AtomicUsize>) -> Running {
        let now = count.fetch_add(1, Ordering::SeqCst) + 1;
        Running { count, now }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The credentials were wrong; the same text for an unknown user.
pub const BAD_CREDENTIALS: &str = "unknown username or wrong password";

/// A new browser session: the cookie value and when it ends.
pub struct NewSession {
    pub caller: Caller,
    pub cookie: String,
    pub expires_at: DateTime<Utc>,
}

impl Access {
    pub async fn login(&self, username: &str, password: &str) -> ServiceResult<NewSession> {
        // A name that cannot exist is still throttled and verified like one that does.
        let name = normalise_username(username).unwrap_or_else(|_| username.trim().to_ascii_lowercase());
        let name: String = name.chars().take(64).collect();
        let _serial = self.login.stripe(&name).lock().await;
        let now = self.clock.now();
        // Counted before the check, and other attempts held meanwhile: a
        // guess sent to every replica at once is still one guess at a time.
        let hold_until = now + Duration::seconds(LOGIN_CHECK_HOLD_SECS as i64);
        let failures = match self.store.claim_login_attempt(&name, now, hold_until).await? {
            Ok(failures) => failures,
            Err((failures, until)) => {
                let secs = login_retry_after_secs(failures, (until - now).num_milliseconds());
                return Err(ServiceError::Throttled(secs));
            }
        };
        let checked: ServiceResult<Option<UserRecord>> = async {
            let user = self.store.user_by_name(&name).await?;
            let phc = user
                .as_ref()
                .map(|u| u.password_hash.clone())
                .unwrap_or_else(|| self.login.decoy_hash.clone());
            let matches = self.login.verify(password.to_string(), phc).await;
            Ok(user.filter(|_| matches))
        }
        .await;
        match checked {
            Ok(Some(u)) => {
                self.store.clear_login_throttle(&name).await?;
                self.store.prune_access(now).await?;
                let cookie = credentials::random_hex::<32>()?;
                let expires_at = now + Duration::days(SESSION_DAYS);
                self.store
                    .create_web_session(&credentials::hash_secret(&cookie), &u.user.id, now, expires_at)
                    .await?;
                Ok(NewSession {
                    caller: Caller {
                        user_id: Some(u.user.id),
                        username: u.user.username,
                        admin: u.user.admin,
                        via: Via::Cookie,
                    },
                    cookie,
                    expires_at,
                })
            }
            // An attempt that could not be checked still ends its hold.
            refused => {
                let until = now + Duration::seconds(login_delay_secs(failures) as i64);
                self.store.settle_login_failure(&name, failures, until).await?;
                refused?;
                tracing::info!(username = %name, failures, "sign-in refused");
                Err(ServiceError::Unauthorized(BAD_CREDENTIALS.into()))
            }
        }
    }

    /// The most password checks that have run at once in this process
    /// (never above [`password_check_slots`]).
    pub fn password_checks_peak(&self) -> usize {
        self.login.peak.load(Ordering::SeqCst)
    }

    /// Ends the browser session behind a cookie value (if any).
    pub async fn logout(&self, cookie: &str) -> ServiceResult<()> {
        let now = self.clock.now();
        self.store
            .delete_web_session(&credentials::hash_secret(cookie), now)
            .await?;
        Ok(())
    }
}
