//! PostgreSQL storage, for hosts that outgrow one machine: several `serve` processes share one database.
//!
//! Ingest of one run is serialized across processes by the row lock on the run (`SELECT … FOR UPDATE` inside the
//! commit transaction); each commit sends `NOTIFY a13n_runs, '<run_id>'`, which [`listen`] turns into calls that
//! let other processes wake their subscribers and drop stale in-memory runs.

use std::sync::Mutex;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};

use crate::storage::{to_i64, to_u64, Batch, RunRecord, Storage, StorageError, StoredEvent, StoredItem};

/// The channel commits are announced on.
pub const CHANNEL: &str = "a13n_runs";

const MIGRATIONS: &[&str] = &["
    CREATE TABLE a13n_runs (
        run_id TEXT PRIMARY KEY,
        journal_len BIGINT NOT NULL,
        position BIGINT NOT NULL,
        complete BOOLEAN NOT NULL,
        continuation TEXT
    );
    CREATE TABLE a13n_journal (
        run_id TEXT NOT NULL,
        line_no BIGINT NOT NULL,
        line TEXT NOT NULL,
        PRIMARY KEY (run_id, line_no)
    );
    CREATE TABLE a13n_events (
        run_id TEXT NOT NULL,
        sequence BIGINT NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (run_id, sequence)
    );
    CREATE TABLE a13n_items (
        run_id TEXT NOT NULL,
        item_id TEXT NOT NULL,
        ordinal BIGINT NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (run_id, item_id)
    );
    CREATE UNIQUE INDEX a13n_items_by_ordinal ON a13n_items (run_id, ordinal);
"];

impl From<postgres::Error> for StorageError {
    fn from(error: postgres::Error) -> Self {
        StorageError::Database(error.to_string())
    }
}

/// PostgreSQL storage over one connection (reconnected when it breaks).
pub struct PostgresStorage {
    url: String,
    client: Mutex<Option<Client>>,
}

impl std::fmt::Debug for PostgresStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStorage").finish_non_exhaustive()
    }
}

impl PostgresStorage {
    /// Connect to `url` (`postgres://…`) and run pending migrations (serialized across processes).
    pub fn open(url: &str) -> Result<PostgresStorage, StorageError> {
        let storage = PostgresStorage { url: url.to_owned(), client: Mutex::new(None) };
        storage.with(|client| {
            let mut transaction = client.transaction()?;
            transaction.execute("SELECT pg_advisory_xact_lock(7102026)", &[])?;
            transaction.batch_execute("CREATE TABLE IF NOT EXISTS a13n_schema (version INTEGER NOT NULL)")?;
            let version: i32 =
                transaction.query_opt("SELECT version FROM a13n_schema", &[])?.map_or(0, |row| row.get(0));
            if version == 0 {
                transaction.execute("INSERT INTO a13n_schema (version) VALUES (0)", &[])?;
            }
            for (index, migration) in MIGRATIONS.iter().enumerate().skip(usize::try_from(version).unwrap_or(0)) {
                transaction.batch_execute(migration)?;
                let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
                transaction.execute("UPDATE a13n_schema SET version = $1", &[&version])?;
            }
            transaction.commit()?;
            Ok(())
        })?;
        Ok(storage)
    }

    fn with<T>(&self, work: impl FnOnce(&mut Client) -> Result<T, StorageError>) -> Result<T, StorageError> {
        let mut guard = self.client.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.as_ref().is_none_or(Client::is_closed) {
            *guard = Some(Client::connect(&self.url, NoTls)?);
        }
        let Some(client) = guard.as_mut() else {
            return Err(StorageError::Database("no connection".into()));
        };
        let result = work(client);
        if client.is_closed() {
            *guard = None;
        }
        result
    }
}

fn record(row: &postgres::Row) -> RunRecord {
    RunRecord {
        run_id: row.get(0),
        journal_len: to_u64(row.get(1)),
        position: to_u64(row.get(2)),
        complete: row.get(3),
        continuation: row.get(4),
    }
}

impl Storage for PostgresStorage {
    fn run(&self, run_id: &str) -> Result<Option<RunRecord>, StorageError> {
        self.with(|client| {
            let row = client.query_opt(
                "SELECT run_id, journal_len, position, complete, continuation FROM a13n_runs WHERE run_id = $1",
                &[&run_id],
            )?;
            Ok(row.as_ref().map(record))
        })
    }

    fn runs(&self) -> Result<Vec<RunRecord>, StorageError> {
        self.with(|client| {
            let rows = client.query(
                "SELECT run_id, journal_len, position, complete, NULL::TEXT FROM a13n_runs ORDER BY run_id",
                &[],
            )?;
            Ok(rows.iter().map(record).collect())
        })
    }

    fn journal(&self, run_id: &str, from: u64, to: u64) -> Result<Vec<String>, StorageError> {
        self.with(|client| {
            let rows = client.query(
                "SELECT line FROM a13n_journal WHERE run_id = $1 AND line_no >= $2 AND line_no < $3 ORDER BY line_no",
                &[&run_id, &to_i64(from), &to_i64(to)],
            )?;
            Ok(rows.iter().map(|row| row.get(0)).collect())
        })
    }

    fn commit(&self, batch: &Batch) -> Result<(), StorageError> {
        self.with(|client| {
            let mut transaction = client.transaction()?;
            transaction.execute(
                "INSERT INTO a13n_runs (run_id, journal_len, position, complete) VALUES ($1, 0, 0, FALSE)
                 ON CONFLICT (run_id) DO NOTHING",
                &[&batch.run_id],
            )?;
            let journal_len: i64 = transaction
                .query_one("SELECT journal_len FROM a13n_runs WHERE run_id = $1 FOR UPDATE", &[&batch.run_id])?
                .get(0);
            if to_u64(journal_len) != batch.offset {
                return Err(StorageError::Conflict { run_id: batch.run_id.clone(), journal_len: to_u64(journal_len) });
            }
            // One statement per table, whatever the batch size: rows travel as arrays.
            let lines: Vec<&str> = batch.lines.iter().map(String::as_str).collect();
            transaction.execute(
                "INSERT INTO a13n_journal (run_id, line_no, line)
                 SELECT $1, $2 + ordinality - 1, line FROM unnest($3::text[]) WITH ORDINALITY AS t(line, ordinality)",
                &[&batch.run_id, &to_i64(batch.offset), &lines],
            )?;
            let sequences: Vec<i64> = batch.events.iter().map(|event| to_i64(event.sequence)).collect();
            let events: Vec<&str> = batch.events.iter().map(|event| event.event.as_str()).collect();
            transaction.execute(
                "INSERT INTO a13n_events (run_id, sequence, event)
                 SELECT $1, sequence, event FROM unnest($2::bigint[], $3::text[]) AS t(sequence, event)",
                &[&batch.run_id, &sequences, &events],
            )?;
            let ids: Vec<&str> = batch.items.iter().map(|item| item.id.as_str()).collect();
            let ordinals: Vec<i64> = batch.items.iter().map(|item| to_i64(item.ordinal)).collect();
            let items: Vec<&str> = batch.items.iter().map(|item| item.item.as_str()).collect();
            transaction.execute(
                "INSERT INTO a13n_items (run_id, item_id, ordinal, item)
                 SELECT $1, item_id, ordinal, item FROM unnest($2::text[], $3::bigint[], $4::text[]) AS t(item_id, ordinal, item)
                 ON CONFLICT (run_id, item_id) DO UPDATE SET ordinal = EXCLUDED.ordinal, item = EXCLUDED.item",
                &[&batch.run_id, &ids, &ordinals, &items],
            )?;
            transaction.execute(
                "UPDATE a13n_runs SET journal_len = $2, position = $3, complete = $4, continuation = $5 WHERE run_id = $1",
                &[
                    &batch.run_id,
                    &to_i64(batch.offset + batch.lines.len() as u64),
                    &to_i64(batch.position),
                    &batch.complete,
                    &batch.continuation,
                ],
            )?;
            transaction.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &batch.run_id])?;
            transaction.commit()?;
            Ok(())
        })
    }

    fn events_after(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>, StorageError> {
        self.with(|client| {
            let rows = client.query(
                "SELECT sequence, event FROM a13n_events WHERE run_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3",
                &[&run_id, &to_i64(after), &to_i64(limit as u64)],
            )?;
            Ok(rows.iter().map(|row| StoredEvent { sequence: to_u64(row.get(0)), event: row.get(1) }).collect())
        })
    }

    fn items(
        &self,
        run_id: &str,
        after: u64,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<StoredItem>, StorageError> {
        self.with(|client| {
            let rows = client.query(
                "SELECT item_id, ordinal, item FROM a13n_items WHERE run_id = $1 AND ordinal > $2 AND ordinal < $3
                 ORDER BY ordinal LIMIT $4",
                &[&run_id, &to_i64(after), &before.map_or(i64::MAX, to_i64), &to_i64(limit as u64)],
            )?;
            Ok(rows
                .iter()
                .map(|row| StoredItem { id: row.get(0), ordinal: to_u64(row.get(1)), item: row.get(2) })
                .collect())
        })
    }
}

/// Listen for commits of any process on `url` and call `on_commit(run_id)` for each, reconnecting after failures.
/// Runs until the process ends; call it on a dedicated thread.
pub fn listen(url: &str, mut on_commit: impl FnMut(String)) {
    loop {
        let connected = Client::connect(url, NoTls).and_then(|mut client| {
            client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
            let mut notifications = client.notifications();
            let mut iter = notifications.blocking_iter();
            while let Some(notification) = iter.next()? {
                on_commit(notification.payload().to_owned());
            }
            Ok(())
        });
        if let Err(error) = connected {
            tracing::warn!(%error, "commit notifications interrupted; reconnecting");
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}
