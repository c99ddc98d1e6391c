//! The host's counters and gauges, served at `/metrics` in the OpenMetrics text format (which Prometheus reads)
//! by `prometheus-client`.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Everything the host counts. Each field is cheap to update from any thread.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Source lines committed.
    pub lines: Counter,
    /// Batches committed.
    pub batches: Counter,
    /// Batches refused (bad line, offset, identity, storage).
    pub refused: Counter,
    /// Retried batches acknowledged without effect.
    pub duplicates: Counter,
    /// Lines journaled as rejected and skipped.
    pub rejected_lines: Counter,
    /// Events delivered to subscribers.
    pub delivered: Counter,
    /// Subscribers connected now.
    pub subscribers: Gauge,
    /// Times a subscriber fell behind the live buffer and caught up from storage.
    pub lagged: Counter,
    /// Runs rebuilt from storage.
    pub recoveries: Counter,
    /// Runs in memory brought up to storage by folding the lines another process committed.
    pub catch_ups: Counter,
    /// Runs whose checkpoint was missing or unreadable, rebuilt from their journal.
    pub journal_rebuilds: Counter,
    /// Runs held in memory now.
    pub resident_runs: Gauge,
    /// Runs dropped from memory (idle, or the least recently used beyond the limit).
    pub evictions: Counter,
    /// Connections open now.
    pub connections: Gauge,
    /// Connections refused because the limit was reached.
    pub connections_refused: Counter,
    /// Connections closed for idleness or a request head that did not arrive in time.
    pub connections_timed_out: Counter,
    /// Ingest requests refused with 503 because too many body bytes were in flight.
    pub ingest_busy: Counter,
    /// Runs deleted by this process (`DELETE`, or retention).
    pub runs_deleted: Counter,
}

impl Metrics {
    /// The registry naming every metric.
    fn registry(&self) -> Registry {
        let mut registry = Registry::with_prefix("a13n");
        let counters: [(&str, &str, &Counter); 14] = [
            ("ingest_lines", "Source lines committed", &self.lines),
            ("ingest_batches", "Batches committed", &self.batches),
            ("ingest_refused", "Batches refused", &self.refused),
            ("ingest_duplicates", "Retried batches acknowledged without effect", &self.duplicates),
            ("ingest_rejected_lines", "Lines journaled as rejected and skipped", &self.rejected_lines),
            ("events_delivered", "Events delivered to subscribers", &self.delivered),
            ("subscribers_lagged", "Subscribers that caught up from storage after falling behind", &self.lagged),
            ("run_recoveries", "Runs rebuilt from storage", &self.recoveries),
            ("run_catch_ups", "Runs in memory that folded lines another process committed", &self.catch_ups),
            ("run_journal_rebuilds", "Runs rebuilt from their journal", &self.journal_rebuilds),
            ("run_evictions", "Runs dropped from memory", &self.evictions),
            ("connections_refused", "Connections refused at the connection limit", &self.connections_refused),
            ("connections_timed_out", "Connections closed by a timeout", &self.connections_timed_out),
            ("runs_deleted", "Runs deleted (DELETE, or retention)", &self.runs_deleted),
        ];
        for (name, help, counter) in counters {
            registry.register(name, help, counter.clone());
        }
        registry.register(
            "ingest_busy",
            "Ingest requests refused while the body budget was spent",
            self.ingest_busy.clone(),
        );
        let gauges: [(&str, &str, &Gauge); 3] = [
            ("subscribers", "Subscribers connected now", &self.subscribers),
            ("resident_runs", "Runs held in memory now", &self.resident_runs),
            ("connections", "Connections open now", &self.connections),
        ];
        for (name, help, gauge) in gauges {
            registry.register(name, help, gauge.clone());
        }
        registry
    }

    /// The OpenMetrics text of every metric.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut text, &self.registry());
        text
    }
}

/// Counts one subscriber for as long as it lives, however its stream ends.
#[derive(Debug)]
pub struct SubscriberGuard(Gauge);

impl SubscriberGuard {
    /// Count a subscriber on `gauge`.
    pub fn new(gauge: &Gauge) -> SubscriberGuard {
        gauge.inc();
        SubscriberGuard(gauge.clone())
    }
}

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_carry_type_lines_and_the_subscriber_gauge_follows_its_guards() {
        let metrics = Metrics::default();
        metrics.lines.inc_by(3);
        let first = SubscriberGuard::new(&metrics.subscribers);
        let second = SubscriberGuard::new(&metrics.subscribers);
        drop(first);
        let text = metrics.encode();
        assert!(text.contains("# TYPE a13n_ingest_lines counter\n"), "{text}");
        assert!(text.contains("a13n_ingest_lines_total 3\n"), "{text}");
        assert!(text.contains("# TYPE a13n_subscribers gauge\na13n_subscribers 1\n"), "{text}");
        assert!(text.ends_with("# EOF\n"));
        drop(second);
        assert!(metrics.encode().contains("a13n_subscribers 0\n"));
    }
}
