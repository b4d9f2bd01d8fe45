//! Prometheus metrics: requests, events evaluated, runs by status, and the
//! GitHub rate-limit budget. Served at `/metrics`.

use std::sync::{Arc, Mutex};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Mutex<Registry>>,
    http_requests: Family<Labels, Counter>,
    http_duration: Family<Labels, Histogram>,
    events_evaluated: Family<Labels, Counter>,
    runs: Family<Labels, Counter>,
    github_remaining: Family<Labels, Gauge>,
    github_requests: Family<Labels, Counter>,
    outbox_published: Counter,
    outbox_waiting: Gauge,
    outbox_oldest_seconds: Gauge<f64, std::sync::atomic::AtomicU64>,
    evaluations_dropped: Counter,
    bus_messages_refused: Counter,
    runs_recovered: Family<Labels, Counter>,
    requests_shed: Family<Labels, Counter>,
    board_reads: Family<Labels, Counter>,
    lone_writes_waiting: Gauge,
    guard_reads_gathered: Counter,
    guard_statements_gathered: Counter,
    agents_confinement: Family<Labels, Gauge>,
    standing_down: Family<Labels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("kandev");
        let http_requests = Family::<Labels, Counter>::default();
        let http_duration =
            Family::<Labels, Histogram>::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.0, 14)));
        let events_evaluated = Family::<Labels, Counter>::default();
        let runs = Family::<Labels, Counter>::default();
        let github_remaining = Family::<Labels, Gauge>::default();
        let github_requests = Family::<Labels, Counter>::default();
        registry.register("http_requests", "HTTP requests served", http_requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency",
            http_duration.clone(),
        );
        registry.register(
            "events_evaluated",
            "Trigger evaluations by type and outcome",
            events_evaluated.clone(),
        );
        registry.register("runs", "Run rows written, by status", runs.clone());
        registry.register(
            "github_rate_limit_remaining",
            "GitHub rate-limit budget left, by bucket",
            github_remaining.clone(),
        );
        registry.register(
            "github_requests",
            "GitHub API requests, by status",
            github_requests.clone(),
        );
        let outbox_published = Counter::default();
        let outbox_waiting = Gauge::default();
        registry.register(
            "outbox_waiting_events",
            "Events written but not yet published, as this replica last counted them",
            outbox_waiting.clone(),
        );
        let outbox_oldest_seconds = Gauge::<f64, std::sync::atomic::AtomicU64>::default();
        registry.register(
            "outbox_oldest_waiting_seconds",
            "Age of the oldest event not yet published (0 when none waits)",
            outbox_oldest_seconds.clone(),
        );
        let evaluations_dropped = Counter::default();
        let bus_messages_refused = Counter::default();
        registry.register(
            "bus_messages_refused",
            "NATS messages refused: no valid seal, and not in the outbox",
            bus_messages_refused.clone(),
        );
        let runs_recovered = Family::<Labels, Counter>::default();
        registry.register(
            "outbox_published",
            "Events published from the outbox",
            outbox_published.clone(),
        );
        registry.register(
            "evaluation_records_dropped",
            "Evaluation records dropped because the queue was full",
            evaluations_dropped.clone(),
        );
        registry.register(
            "runs_recovered",
            "Runs whose agent died with its replica, by what recovery did",
            runs_recovered.clone(),
        );
        let requests_shed = Family::<Labels, Counter>::default();
        registry.register(
            "http_requests_shed",
            "API requests answered 503 by overload protection, by cause",
            requests_shed.clone(),
        );
        let board_reads = Family::<Labels, Counter>::default();
        registry.register(
            "board_reads",
            "Board reads, by whether the cached body answered (hit) or was rebuilt (miss)",
            board_reads.clone(),
        );
        let lone_writes_waiting = Gauge::default();
        registry.register(
            "store_lone_writes_waiting",
            "SQLite write statements queued for the writer thread when scraped (0 on PostgreSQL)",
            lone_writes_waiting.clone(),
        );
        let guard_reads_gathered = Counter::default();
        registry.register(
            "store_guard_reads_gathered",
            "PostgreSQL guard reads answered by gathered statements (0 on SQLite)",
            guard_reads_gathered.clone(),
        );
        let guard_statements_gathered = Counter::default();
        registry.register(
            "store_guard_statements_gathered",
            "Statements that answered the gathered guard reads",
            guard_statements_gathered.clone(),
        );
        let agents_confinement = Family::<Labels, Gauge>::default();
        registry.register(
            "agents_confinement",
            "How far agents are confined (1 on the state): full, partial, none (no Landlock), failed, off",
            agents_confinement.clone(),
        );
        let standing_down = Family::<Labels, Gauge>::default();
        registry.register(
            "replica_standing_down",
            "Whether this replica takes no lease and so drives no background work (1), by reason: \
             clock (its clock disagrees with the database's) or name (another process holds its name)",
            standing_down.clone(),
        );
        Metrics {
            agents_confinement,
            standing_down,
            registry: Arc::new(Mutex::new(registry)),
            board_reads,
            guard_reads_gathered,
            guard_statements_gathered,
            lone_writes_waiting,
            requests_shed,
            outbox_published,
            outbox_waiting,
            outbox_oldest_seconds,
            evaluations_dropped,
            bus_messages_refused,
            runs_recovered,
            http_requests,
            http_duration,
            events_evaluated,
            runs,
            github_remaining,
            github_requests,
        }
    }
}

impl Metrics {
    pub fn http_request(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let status = status.to_string();
        self.http_requests
            .get_or_create(&labels(&[("method", method), ("route", route), ("status", &status)]))
            .inc();
        self.http_duration
            .get_or_create(&labels(&[("method", method), ("route", route)]))
            .observe(seconds);
    }

    /// `n` evaluations of one trigger type with one outcome.
    pub fn evaluations(&self, trigger_type: &str, outcome: &str, n: u64) {
        self.events_evaluated
            .get_or_create(&labels(&[("trigger_type", trigger_type), ("outcome", outcome)]))
            .inc_by(n);
    }

    pub fn run(&self, status: &str) {
        self.runs.get_or_create(&labels(&[("status", status)])).inc();
    }

    pub fn github_budget(&self, bucket: &str, remaining: i64) {
        self.github_remaining
            .get_or_create(&labels(&[("bucket", bucket)]))
            .set(remaining);
    }

    pub fn github_request(&self, status: u16) {
        self.github_requests
            .get_or_create(&labels(&[("status", &status.to_string())]))
            .inc();
    }

    pub fn outbox_published(&self) {
        self.outbox_published.inc();
    }

    /// SQLite's writer-thread queue, read when scraped.
    pub fn lone_writes_waiting(&self, statements: usize) {
        self.lone_writes_waiting
            .set(i64::try_from(statements).unwrap_or(i64::MAX));
    }

    /// The store's gathered guard reads so far, caught up when scraped.
    pub fn guard_reads_gathered(&self, reads: u64, statements: u64) {
        // Two scrapes at once would each add the same difference: one at a time.
        let _one_at_a_time = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        for (counter, now) in [
            (&self.guard_reads_gathered, reads),
            (&self.guard_statements_gathered, statements),
        ] {
            counter.inc_by(now.saturating_sub(counter.get()));
        }
    }

    /// The outbox's backlog: events waiting and the oldest one's age.
    pub fn outbox_waiting(&self, events: i64, oldest_seconds: f64) {
        self.outbox_waiting.set(events);
        self.outbox_oldest_seconds.set(oldest_seconds);
    }

    /// `in_flight` (the concurrency limit) or `timeout`.
    pub fn shed(&self, cause: &str) {
        self.requests_shed.get_or_create(&labels(&[("cause", cause)])).inc();
    }

    pub fn evaluation_dropped(&self) {
        self.evaluations_dropped.inc();
    }

    pub fn bus_message_refused(&self) {
        self.bus_messages_refused.inc();
    }

    /// `hit` or `miss`.
    pub fn board_read(&self, how: &str) {
        self.board_reads.get_or_create(&labels(&[("cache", how)])).inc();
    }

    /// `resumed` or `failed`.
    pub fn run_recovered(&self, how: &str) {
        self.runs_recovered.get_or_create(&labels(&[("outcome", how)])).inc();
    }

    /// How far this server's agents are confined (`core::confine::posture`, or `off`).
    pub fn agents_confinement(&self, state: &str) {
        self.agents_confinement
            .get_or_create(&labels(&[("state", state)]))
            .set(1);
    }

    /// Whether this replica stands down for `reason` (`Leases::standing_down_for`).
    pub fn standing_down(&self, reason: &str, is: bool) {
        self.standing_down
            .get_or_create(&labels(&[("reason", reason)]))
            .set(i64::from(is));
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        if encode(&mut out, &registry).is_err() {
            out.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::Metrics;

    /// Scrapes that catch the gathered counts up at the same moment add the
    /// difference once, not once each.
    #[test]
    fn scrapes_catching_up_at_once_count_each_read_once() {
        for _ in 0..1000 {
            let metrics = Metrics::default();
            let start = std::sync::Barrier::new(8);
            std::thread::scope(|s| {
                for _ in 0..8 {
                    s.spawn(|| {
                        start.wait();
                        metrics.guard_reads_gathered(1000, 10);
                    });
                }
            });
            let text = metrics.render();
            assert!(
                text.contains("kandev_store_guard_reads_gathered_total 1000\n"),
                "{text}"
            );
            assert!(
                text.contains("kandev_store_guard_statements_gathered_total 10\n"),
                "{text}"
            );
        }
    }
}
