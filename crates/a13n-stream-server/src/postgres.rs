//! PostgreSQL storage, for hosts that outgrow one machine: several `serve` processes share one database.
//!
//! Statements run on a pool of asynchronous connections (`tokio-postgres` under `deadpool-postgres`), so ingest,
//! reads and subscribers' catch-up do not queue behind one connection. Ingest of one run is serialized across
//! processes by the row lock on the run (taken by the first statement of the commit transaction); each commit
//! sends `NOTIFY a13n_runs, '<position> <run_id>'`, which [`listen`] turns into calls that let other processes
//! wake their subscribers and drop stale in-memory runs.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures_util::future::poll_fn;
use tokio_postgres::{AsyncMessage, NoTls};

use crate::chunks;
use crate::storage::{to_i64, to_u64, Batch, Rejection, RunRecord, Storage, StorageError, StoredEvent, StoredItem};

/// The channel commits are announced on.
pub const CHANNEL: &str = "a13n_runs";

/// The first word of the notice of a deleted run: `deleted <run_id>` (run ids hold no space).
pub const DELETED: &str = "deleted";

/// The `application_name` of the connection that listens for commits (so an operator can tell it apart).
pub const LISTENER_APPLICATION: &str = "a13n-stream-listen";

const MIGRATIONS: &[&str] = &[
    "
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
",
    "
    CREATE TABLE a13n_rejections (
        run_id TEXT NOT NULL,
        line_no BIGINT NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (run_id, line_no)
    );
",
    "
    ALTER TABLE a13n_items ADD COLUMN changed BIGINT NOT NULL DEFAULT 0;
    UPDATE a13n_items SET changed = split_part((item::json)->>'last_stream_id', '-', 2)::bigint;
    CREATE INDEX a13n_items_by_change ON a13n_items (run_id, changed);
",
    "
    ALTER TABLE a13n_runs ADD COLUMN item_count BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE a13n_runs ADD COLUMN updated_ms BIGINT NOT NULL DEFAULT 0;
    UPDATE a13n_runs SET item_count = (SELECT count(*) FROM a13n_items WHERE a13n_items.run_id = a13n_runs.run_id);
",
    "
    ALTER TABLE a13n_runs ADD COLUMN incarnation BIGINT NOT NULL DEFAULT 0;
",
    "
    ALTER TABLE a13n_runs ADD COLUMN thread_id TEXT;
    ALTER TABLE a13n_runs ADD COLUMN created BIGINT;
    UPDATE a13n_runs SET thread_id = (continuation::json)->'observer'->>'thread_id' WHERE continuation IS NOT NULL;
    UPDATE a13n_runs AS runs SET created = ordered.place
        FROM (SELECT run_id, row_number() OVER (ORDER BY updated_ms, run_id) AS place FROM a13n_runs) AS ordered
        WHERE runs.run_id = ordered.run_id;
    CREATE SEQUENCE a13n_runs_created;
    SELECT setval('a13n_runs_created', (SELECT coalesce(max(created), 0) + 1 FROM a13n_runs), false);
    ALTER TABLE a13n_runs ALTER COLUMN created SET DEFAULT nextval('a13n_runs_created');
    ALTER TABLE a13n_runs ALTER COLUMN created SET NOT NULL;
    CREATE INDEX a13n_runs_by_thread ON a13n_runs (thread_id, created);
",
    "
    ALTER TABLE a13n_events ADD COLUMN item TEXT;
",
    "
    ALTER TABLE a13n_runs ADD COLUMN checkpoint_len BIGINT NOT NULL DEFAULT 0;
    UPDATE a13n_runs SET checkpoint_len = journal_len WHERE continuation IS NOT NULL;
",
    // A batch's lines and events a row each (`chunks.rs`); each line or event stored before is a chunk of one.
    "
    CREATE TABLE a13n_journal_chunks (
        run_id TEXT NOT NULL,
        first BIGINT NOT NULL,
        lines TEXT[] NOT NULL,
        PRIMARY KEY (run_id, first)
    );
    INSERT INTO a13n_journal_chunks (run_id, first, lines) SELECT run_id, line_no, ARRAY[line] FROM a13n_journal;
    DROP TABLE a13n_journal;
    CREATE TABLE a13n_event_chunks (
        run_id TEXT NOT NULL,
        first BIGINT NOT NULL,
        events TEXT[] NOT NULL,
        items TEXT[] NOT NULL,
        PRIMARY KEY (run_id, first)
    );
    INSERT INTO a13n_event_chunks (run_id, first, events, items)
        SELECT run_id, sequence, ARRAY[event], ARRAY[item] FROM a13n_events;
    DROP TABLE a13n_events;
",
    // Large values (a batch's chunks, items, checkpoints) compressed with lz4 where the server has it (PostgreSQL 14
    // and later, built with lz4): the default, pglz, took a third of the server's time on ingest. Rows stored
    // before keep their compression; a server without lz4 keeps pglz.
    "
    DO $$
    BEGIN
        IF current_setting('server_version_num')::int >= 140000 AND EXISTS (
            SELECT FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)
        ) THEN
            ALTER TABLE a13n_journal_chunks ALTER COLUMN lines SET COMPRESSION lz4;
            ALTER TABLE a13n_event_chunks ALTER COLUMN events SET COMPRESSION lz4,
                ALTER COLUMN items SET COMPRESSION lz4;
            ALTER TABLE a13n_items ALTER COLUMN item SET COMPRESSION lz4;
            ALTER TABLE a13n_runs ALTER COLUMN continuation SET COMPRESSION lz4;
        END IF;
    END
    $$;
",
    "
    ALTER TABLE a13n_runs ADD COLUMN outcome TEXT;
",
    // The run list newest first (`GET /v1/runs?order=newest`).
    "
    CREATE INDEX a13n_runs_by_created ON a13n_runs (created);
",
];

/// Event chunks read a query when a page of events is still short after the chunks its sequences name.
const EVENT_CHUNKS_A_QUERY: i64 = 16;

/// The advisory lock that orders new runs' first commits (an arbitrary key of this program's own).
const CREATED_LOCK: i64 = 0x6131_336e_7275_6e73;

/// The statements of one commit, in the order `commit` destructures them.
const COMMIT: [&str; 7] = [
    "INSERT INTO a13n_runs (run_id, journal_len, position, complete, incarnation) VALUES ($1, 0, 0, FALSE, $2)
     ON CONFLICT (run_id) DO UPDATE SET run_id = EXCLUDED.run_id RETURNING journal_len, incarnation",
    "INSERT INTO a13n_journal_chunks (run_id, first, lines) VALUES ($1, $2, $3)",
    "INSERT INTO a13n_event_chunks (run_id, first, events, items) VALUES ($1, $2, $3, $4)",
    "INSERT INTO a13n_items (run_id, item_id, ordinal, changed, item)
     SELECT $1, item_id, ordinal, changed, item
     FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[]) AS t(item_id, ordinal, changed, item)
     ON CONFLICT (run_id, item_id) DO UPDATE SET ordinal = EXCLUDED.ordinal, changed = EXCLUDED.changed,
         item = EXCLUDED.item",
    "INSERT INTO a13n_rejections (run_id, line_no, kind, message)
     SELECT $1, line_no, kind, message FROM unnest($2::bigint[], $3::text[], $4::text[]) AS t(line_no, kind, message)",
    "UPDATE a13n_runs SET journal_len = $2, position = $3, complete = $4, item_count = $6, updated_ms = $7,
         thread_id = coalesce(thread_id, $8), continuation = coalesce($5::text, continuation),
         outcome = coalesce($9, outcome),
         checkpoint_len = CASE WHEN $5::text IS NULL THEN checkpoint_len ELSE $2 END WHERE run_id = $1",
    "SELECT pg_notify($1, $2)",
];

impl From<tokio_postgres::Error> for StorageError {
    fn from(error: tokio_postgres::Error) -> Self {
        StorageError::Database(describe(&error))
    }
}

/// What the database said, not only `db error` (tokio-postgres's own text for every server error), and why a
/// connection failed, not only `error connecting to server`.
fn describe(error: &tokio_postgres::Error) -> String {
    match (error.as_db_error(), std::error::Error::source(error)) {
        (Some(db), _) => format!("{error}: {}: {} (SQLSTATE {})", db.severity(), db.message(), db.code().code()),
        (None, Some(source)) => format!("{error}: {source}"),
        (None, None) => error.to_string(),
    }
}

impl From<deadpool_postgres::PoolError> for StorageError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        match &error {
            deadpool_postgres::PoolError::Backend(backend) => {
                StorageError::Database(format!("connection pool: a new connection failed: {}", describe(backend)))
            }
            _ => StorageError::Database(format!("connection pool: {error}")),
        }
    }
}

/// How the pool behaves.
#[derive(Clone, Copy, Debug)]
pub struct PoolOptions {
    /// The most connections this process holds.
    pub size: usize,
    /// How long a statement may wait for a free connection, or for a new one to connect.
    pub wait: Duration,
}

/// PostgreSQL storage over a connection pool.
pub struct PostgresStorage {
    pool: Pool,
}

impl std::fmt::Debug for PostgresStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStorage").field("pool", &self.pool.status()).finish()
    }
}

/// The server(s) a configuration names, as `host:port` (or a socket directory).
fn server_of(config: &tokio_postgres::Config) -> String {
    let ports = config.get_ports();
    let hosts = config.get_hosts().iter().enumerate().map(|(index, host)| {
        let port = ports.get(index).or(ports.first()).copied().unwrap_or(5432);
        match host {
            tokio_postgres::config::Host::Tcp(name) => format!("{name}:{port}"),
            tokio_postgres::config::Host::Unix(path) => format!("{}:{port}", path.display()),
        }
    });
    let hosts: Vec<String> = hosts.collect();
    if hosts.is_empty() {
        "PostgreSQL (no host given)".to_owned()
    } else {
        format!("PostgreSQL at {}", hosts.join(","))
    }
}

fn config(url: &str) -> Result<tokio_postgres::Config, StorageError> {
    tokio_postgres::Config::from_str(url).map_err(|error| StorageError::Database(format!("database URL: {error}")))
}

impl PostgresStorage {
    /// Connect to `url` (`postgres://…`) and run pending migrations (serialized across processes).
    pub async fn open(url: &str, options: PoolOptions) -> Result<PostgresStorage, StorageError> {
        let mut config = config(url)?;
        config.connect_timeout(options.wait);
        let server = server_of(&config);
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(options.size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.wait))
            .create_timeout(Some(options.wait))
            .build()
            .map_err(|error| StorageError::Database(format!("connection pool: {error}")))?;
        let storage = PostgresStorage { pool };
        // Where the first connection goes: a refused or unknown server is named.
        storage.migrate().await.map_err(|error| match error {
            StorageError::Database(message) => StorageError::Database(format!("{server}: {message}")),
            other => other,
        })?;
        Ok(storage)
    }

    async fn migrate(&self) -> Result<(), StorageError> {
        let mut client = self.pool.get().await?;
        let transaction = client.transaction().await?;
        transaction.execute("SELECT pg_advisory_xact_lock(7102026)", &[]).await?;
        transaction.batch_execute("CREATE TABLE IF NOT EXISTS a13n_schema (version INTEGER NOT NULL)").await?;
        let version: i32 =
            transaction.query_opt("SELECT version FROM a13n_schema", &[]).await?.map_or(0, |row| row.get(0));
        if version == 0 {
            transaction.execute("INSERT INTO a13n_schema (version) VALUES (0)", &[]).await?;
        }
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(usize::try_from(version).unwrap_or(0)) {
            transaction.batch_execute(migration).await?;
            let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
            transaction.execute("UPDATE a13n_schema SET version = $1", &[&version]).await?;
        }
        transaction.commit().await?;
        Ok(())
    }
}

fn stored_item(row: &tokio_postgres::Row) -> StoredItem {
    StoredItem { id: row.get(0), ordinal: to_u64(row.get(1)), changed: to_u64(row.get(2)), item: row.get(3) }
}

fn record(row: &tokio_postgres::Row) -> RunRecord {
    RunRecord {
        run_id: row.get(0),
        journal_len: to_u64(row.get(1)),
        position: to_u64(row.get(2)),
        complete: row.get(3),
        continuation: row.get(4),
        item_count: to_u64(row.get(5)),
        updated_ms: to_u64(row.get(6)),
        incarnation: to_u64(row.get(7)),
        thread_id: row.get(8),
        created: to_u64(row.get(9)),
        checkpoint_len: to_u64(row.get(10)),
        outcome: row.get(11),
    }
}

#[async_trait]
impl Storage for PostgresStorage {
    async fn run(&self, run_id: &str) -> Result<Option<RunRecord>, StorageError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT run_id, journal_len, position, complete, continuation, item_count, updated_ms, incarnation, thread_id,
                 created, checkpoint_len, outcome FROM a13n_runs
                 WHERE run_id = $1",
            )
            .await?;
        Ok(client.query_opt(&statement, &[&run_id]).await?.as_ref().map(record))
    }

    async fn runs(&self, after: &str, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT run_id, journal_len, position, complete, NULL::TEXT, item_count, updated_ms, incarnation, thread_id,
                 created, checkpoint_len, outcome FROM a13n_runs
                 WHERE run_id > $1
                 ORDER BY run_id LIMIT $2",
            )
            .await?;
        Ok(client.query(&statement, &[&after, &to_i64(limit as u64)]).await?.iter().map(record).collect())
    }

    async fn newest_runs(&self, before: Option<u64>, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT run_id, journal_len, position, complete, NULL::TEXT, item_count, updated_ms, incarnation, thread_id,
                 created, checkpoint_len, outcome FROM a13n_runs
                 WHERE created < $1
                 ORDER BY created DESC LIMIT $2",
            )
            .await?;
        let before = before.map_or(i64::MAX, to_i64);
        Ok(client.query(&statement, &[&before, &to_i64(limit as u64)]).await?.iter().map(record).collect())
    }

    async fn thread_runs(&self, thread_id: &str, after: u64, limit: usize) -> Result<Vec<RunRecord>, StorageError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT run_id, journal_len, position, complete, NULL::TEXT, item_count, updated_ms, incarnation, thread_id,
                 created, checkpoint_len, outcome FROM a13n_runs WHERE thread_id = $1 AND created > $2 ORDER BY created LIMIT $3",
            )
            .await?;
        let rows = client.query(&statement, &[&thread_id, &to_i64(after), &to_i64(limit as u64)]).await?;
        Ok(rows.iter().map(record).collect())
    }

    async fn journal(&self, run_id: &str, from: u64, to: u64) -> Result<Vec<String>, StorageError> {
        let client = self.pool.get().await?;
        // From the chunk holding line `from` (the last to start at or before it) to the last starting before `to`.
        let statement = client
            .prepare_cached(
                "SELECT first, lines FROM a13n_journal_chunks WHERE run_id = $1 AND first < $3 AND first >=
                     coalesce((SELECT max(first) FROM a13n_journal_chunks WHERE run_id = $1 AND first <= $2), 0)
                 ORDER BY first",
            )
            .await?;
        let mut lines = Vec::new();
        for row in client.query(&statement, &[&run_id, &to_i64(from), &to_i64(to)]).await? {
            let lines_of: Vec<String> = row.try_get(1)?;
            chunks::lines_within(to_u64(row.try_get(0)?), lines_of, (from, to), &mut lines);
        }
        Ok(lines)
    }

    async fn commit(&self, batch: Arc<Batch>) -> Result<(), StorageError> {
        let mut client = self.pool.get().await?;
        let transaction = client.transaction().await?;
        // Prepared once per pooled connection, all at once.
        let prepared = futures_util::future::try_join_all(COMMIT.iter().map(|sql| transaction.prepare_cached(sql)));
        let [lock, journal, events, items, rejections, run, notify]: [tokio_postgres::Statement; 7] =
            prepared.await?.try_into().map_err(|_| StorageError::Database("prepared statements".into()))?;
        let first_sequence = chunks::first_sequence(&batch.events)?.map_or(0, to_i64);
        let event_texts: Vec<&str> = batch.events.iter().map(|event| event.event.as_str()).collect();
        let event_items: Vec<Option<&str>> = batch.events.iter().map(|event| event.item.as_deref()).collect();
        let journal_chunks: Vec<(i64, &[String])> = (chunks::ranges(batch.lines.iter().map(String::len)).into_iter())
            .map(|range| (to_i64(batch.offset + range.start as u64), &batch.lines[range]))
            .collect();
        let event_chunks: Vec<(i64, &[&str], &[Option<&str>])> = (chunks::ranges(event_texts.iter().map(|e| e.len())))
            .into_iter()
            .map(|range| (first_sequence + range.start as i64, &event_texts[range.clone()], &event_items[range]))
            .collect();
        let ids: Vec<&str> = batch.items.iter().map(|item| item.id.as_str()).collect();
        let ordinals: Vec<i64> = batch.items.iter().map(|item| to_i64(item.ordinal)).collect();
        let changed: Vec<i64> = batch.items.iter().map(|item| to_i64(item.changed)).collect();
        let item_texts: Vec<&str> = batch.items.iter().map(|item| item.item.as_str()).collect();
        let rejected: Vec<i64> = batch.rejections.iter().map(|r| to_i64(r.line)).collect();
        let kinds: Vec<&str> = batch.rejections.iter().map(|r| r.kind.as_str()).collect();
        let messages: Vec<&str> = batch.rejections.iter().map(|r| r.message.as_str()).collect();
        let (end, position) = (to_i64(batch.offset + batch.lines.len() as u64), to_i64(batch.position));
        let notice = format!("{} {}", batch.position, batch.run_id);
        type Params<'a, const N: usize> = [&'a (dyn tokio_postgres::types::ToSql + Sync); N];
        let journal_params: Vec<Params<3>> =
            journal_chunks.iter().map(|(first, lines)| [&batch.run_id as _, first as _, lines as _]).collect();
        let event_params: Vec<Params<4>> = (event_chunks.iter())
            .map(|(first, texts, items)| [&batch.run_id as _, first as _, texts as _, items as _])
            .collect();
        let item_params: Params<5> = [&batch.run_id, &ids, &ordinals, &changed, &item_texts];
        let rejection_params: Params<4> = [&batch.run_id, &rejected, &kinds, &messages];
        let (item_count, updated_ms) = (to_i64(batch.item_count), to_i64(batch.updated_ms));
        let run_params: Params<9> = [
            &batch.run_id,
            &end,
            &position,
            &batch.complete,
            &batch.continuation,
            &item_count,
            &updated_ms,
            &batch.thread_id,
            &batch.outcome,
        ];
        let notify_params: Params<2> = [&CHANNEL, &notice];
        // The first statement creates the run row if needed (with the batch's incarnation), locks it against other
        // processes' commits and deletes, and reads the journal's length and the run's incarnation. Then one
        // statement per table (a journal and an event chunk, or more for a batch beyond `CHUNK_BYTES`; other rows
        // travel as arrays). All are sent together, the lock first: the server runs them in order, so the writes
        // run under the lock, and the connection pipelines them, so the batch costs three round trips (begin,
        // statements, commit). Writes at a position the lock shows taken are rolled back with the transaction.
        let incarnation = to_i64(batch.incarnation);
        let lock_params: Params<2> = [&batch.run_id, &incarnation];
        let locked = transaction.query_one(&lock, &lock_params);
        let mut writes = vec![transaction.execute(&run, &run_params), transaction.execute(&notify, &notify_params)];
        writes.extend(journal_params.iter().map(|params| transaction.execute(&journal, params)));
        writes.extend(event_params.iter().map(|params| transaction.execute(&events, params)));
        if !batch.items.is_empty() {
            writes.push(transaction.execute(&items, &item_params));
        }
        if !batch.rejections.is_empty() {
            writes.push(transaction.execute(&rejections, &rejection_params));
        }
        let (row, written) = futures_util::future::join(locked, futures_util::future::join_all(writes)).await;
        let row = row?;
        let (journal_len, incarnation) = (to_u64(row.get(0)), to_u64(row.get(1)));
        if journal_len != batch.offset || incarnation != batch.incarnation {
            return Err(StorageError::Conflict { run_id: batch.run_id.clone(), journal_len });
        }
        for result in written {
            result?;
        }
        if batch.offset == 0 {
            // A new run's place in the order of first ingest is drawn in commit order (a sequence alone is not:
            // a later draw may commit first, and a thread's follower past it would never see the earlier run):
            // new runs' first commits pass here one at a time, holding the lock until they commit.
            transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&CREATED_LOCK]).await?;
            let created = "UPDATE a13n_runs SET created = nextval('a13n_runs_created') WHERE run_id = $1";
            transaction.execute(created, &[&batch.run_id]).await?;
        }
        transaction.commit().await?;
        Ok(())
    }

    async fn delete(&self, run_id: &str, idle_before: Option<u64>) -> Result<bool, StorageError> {
        let mut client = self.pool.get().await?;
        let transaction = client.transaction().await?;
        // The run row's lock, which every commit of the run takes first: no commit interleaves. A commit waiting
        // for it finds no row afterwards and starts a new run (offset 0) or is a conflict.
        let locked =
            transaction.query_opt("SELECT updated_ms FROM a13n_runs WHERE run_id = $1 FOR UPDATE", &[&run_id]).await?;
        let Some(updated) = locked.map(|row| to_u64(row.get(0))) else { return Ok(false) };
        if idle_before.is_some_and(|before| updated == 0 || updated >= before) {
            return Ok(false);
        }
        for table in ["a13n_journal_chunks", "a13n_event_chunks", "a13n_items", "a13n_rejections", "a13n_runs"] {
            transaction.execute(&format!("DELETE FROM {table} WHERE run_id = $1"), &[&run_id]).await?;
        }
        let notice = format!("{DELETED} {run_id}");
        transaction.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &notice]).await?;
        transaction.commit().await?;
        Ok(true)
    }

    async fn idle_runs(&self, before: u64, after: &str, limit: usize) -> Result<Vec<String>, StorageError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT run_id FROM a13n_runs WHERE updated_ms > 0 AND updated_ms < $1 AND run_id > $2
                 ORDER BY run_id LIMIT $3",
            )
            .await?;
        let rows = client.query(&statement, &[&to_i64(before), &after, &to_i64(limit as u64)]).await?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    async fn events_after(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>, StorageError> {
        let client = self.pool.get().await?;
        // From the chunk holding the event after `after`: first the chunks that start by `after + limit` (a run's
        // sequences are consecutive, so those hold the page), then, while the page is short (a gap, or the run's
        // end), a few chunks a query after the last one read.
        let statement = client
            .prepare_cached(
                "SELECT first, events, items FROM a13n_event_chunks WHERE run_id = $1 AND first > $3 AND first <= $4
                     AND first >= coalesce((SELECT max(first) FROM a13n_event_chunks
                         WHERE run_id = $1 AND first <= $2::bigint + 1), 0)
                 ORDER BY first LIMIT $5",
            )
            .await?;
        let (mut events, mut read_to) = (Vec::new(), -1_i64);
        let (mut upto, mut rows_a_query) = (to_i64(after.saturating_add(limit as u64)), to_i64(limit as u64 + 1));
        loop {
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
                [&run_id, &to_i64(after), &read_to, &upto, &rows_a_query];
            let rows = client.query(&statement, &params).await?;
            for row in &rows {
                read_to = row.try_get(0)?;
                let texts: Vec<String> = row.try_get(1)?;
                let items: Vec<Option<String>> = row.try_get(2)?;
                let parts = texts.into_iter().zip(items.into_iter().chain(std::iter::repeat(None)));
                if chunks::events_after(to_u64(read_to), parts, after, limit, &mut events) {
                    return Ok(events);
                }
            }
            if rows.len() < rows_a_query as usize && upto == i64::MAX {
                return Ok(events);
            }
            (upto, rows_a_query) = (i64::MAX, EVENT_CHUNKS_A_QUERY);
        }
    }

    async fn items(
        &self,
        run_id: &str,
        after: u64,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<StoredItem>, StorageError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT item_id, ordinal, changed, item FROM a13n_items WHERE run_id = $1 AND ordinal > $2 AND ordinal < $3
                 ORDER BY ordinal LIMIT $4",
            )
            .await?;
        let before = before.map_or(i64::MAX, to_i64);
        let rows = client.query(&statement, &[&run_id, &to_i64(after), &before, &to_i64(limit as u64)]).await?;
        Ok(rows.iter().map(stored_item).collect())
    }

    async fn rejections(&self, run_id: &str, from: u64, limit: usize) -> Result<Vec<Rejection>, StorageError> {
        let client = self.pool.get().await?;
        let statement = client
            .prepare_cached(
                "SELECT line_no, kind, message FROM a13n_rejections WHERE run_id = $1 AND line_no >= $2
                 ORDER BY line_no LIMIT $3",
            )
            .await?;
        let rows = client.query(&statement, &[&run_id, &to_i64(from), &to_i64(limit as u64)]).await?;
        Ok(rows
            .iter()
            .map(|row| Rejection { line: to_u64(row.get(0)), kind: row.get(1), message: row.get(2) })
            .collect())
    }
}

/// One commit notice: the run and, when the sender said so, the position it committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The run.
    pub run_id: String,
    /// The display sequence after the commit (`None` from a sender that names only the run).
    pub position: Option<u64>,
}

impl Notice {
    /// Read a notice payload: `<position> <run_id>`, `deleted <run_id>` (read as a notice without a position:
    /// whoever holds the run reads it again from storage and finds it gone), or a bare run id.
    pub fn parse(payload: &str) -> Notice {
        match payload.split_once(' ') {
            Some((position, run_id)) if position.bytes().all(|b| b.is_ascii_digit()) => {
                Notice { run_id: run_id.to_owned(), position: position.parse().ok() }
            }
            Some((DELETED, run_id)) => Notice { run_id: run_id.to_owned(), position: None },
            _ => Notice { run_id: payload.to_owned(), position: None },
        }
    }
}

/// What the listener tells the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// `LISTEN` is (again) in effect: anything committed while it was not was never announced, so every run with
    /// subscribers must be read again from storage.
    Listening,
    /// Another (or this) process committed.
    Commit(Notice),
}

/// Listen for commits of any process on `url`, calling `on_heard` for each notice and after every (re)connect,
/// reconnecting after failures with a growing pause (at most `max_pause`). Runs until the task is dropped.
pub async fn listen(url: String, max_pause: Duration, on_heard: impl Fn(Heard) + Send + Sync + 'static) {
    const FIRST_PAUSE: Duration = Duration::from_millis(50);
    let mut pause = FIRST_PAUSE;
    loop {
        let mut listened = false;
        match listen_once(&url, &on_heard, &mut listened).await {
            Ok(()) => tracing::warn!("commit notifications ended; reconnecting"),
            Err(error) => tracing::warn!(%error, "commit notifications interrupted; reconnecting"),
        }
        pause = if listened { FIRST_PAUSE } else { (pause * 2).min(max_pause) };
        tokio::time::sleep(pause).await;
    }
}

async fn listen_once(
    url: &str,
    on_heard: &(impl Fn(Heard) + Send + Sync),
    listened: &mut bool,
) -> Result<(), StorageError> {
    let mut config = config(url)?;
    config.application_name(format!("{LISTENER_APPLICATION}-{}", std::process::id()));
    let (client, mut connection) = config.connect(NoTls).await?;
    let (sender, mut received) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        loop {
            match poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(notification))) => {
                    if sender.send(Ok(notification.payload().to_owned())).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    let _ = sender.send(Err(error));
                    return;
                }
                None => return,
            }
        }
    });
    let result = async {
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
        *listened = true;
        on_heard(Heard::Listening);
        while let Some(message) = received.recv().await {
            on_heard(Heard::Commit(Notice::parse(&message?)));
        }
        Ok(())
    }
    .await;
    driver.abort();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a storage 503 from PostgreSQL said `storage: database: db error`, whatever the server said.
    #[tokio::test]
    async fn a_database_error_says_what_the_server_said() {
        // The test kit's setup is a blocking client, so it runs off the runtime.
        let url = tokio::task::spawn_blocking(|| a13n_testkit::host::postgres_database("db_error")).await.unwrap();
        let (client, connection) = tokio_postgres::connect(&url, NoTls).await.expect("the test database answers");
        tokio::spawn(connection);
        let error = client.batch_execute("SELECT * FROM no_such_table").await.expect_err("no such table");
        let message = StorageError::from(error).to_string();
        assert!(message.contains("no_such_table") && message.contains("42P01"), "{message}");
    }

    /// Regression: a server that refused the connection was reported as `connection pool: Error occurred while
    /// creating a new object: error connecting to server`, naming neither the server nor why.
    #[tokio::test]
    async fn a_refused_connection_names_the_server_and_why() {
        // A port nobody listens on: bound, then let go.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let options = PoolOptions { size: 1, wait: Duration::from_secs(30) };
        let url = format!("postgres://postgres@127.0.0.1:{port}/test");
        let error = PostgresStorage::open(&url, options).await.expect_err("nobody listens there");
        let message = error.to_string();
        assert!(message.contains(&format!("127.0.0.1:{port}")) && message.contains("refused"), "{message}");
    }
}
