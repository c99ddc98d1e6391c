//! A host process for tests: `a13n-stream serve` started on a free loopback port, killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `serve` process.
pub struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub address: String,
}

impl Server {
    /// Start `exe serve --listen 127.0.0.1:0 --db DATABASE EXTRA...` and wait (at most 60 s) for its address.
    pub fn start(exe: &str, database: &str, extra: &[&str]) -> Server {
        let mut child = Command::new(exe)
            .args(["serve", "--listen", "127.0.0.1:0", "--db", database])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        // A server that never says where it listens (storage unreachable, a lock never granted) fails the test
        // instead of stalling it.
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let Ok(line) = receiver.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            panic!("`a13n-stream serve --db {database}` did not start listening within 60 s");
        };
        let address = line.trim().strip_prefix("listening on http://").expect("the address line").to_owned();
        Server { child, address }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`), on Linux.
    pub fn memory_kib(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|line| line.starts_with(&format!("{field}:")))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// Send a signal (`INT`, `TERM`) and wait at most `within` for the process to exit; its exit code, or
    /// `None` if it was still running (it is then killed).
    pub fn signal(mut self, name: &str, within: Duration) -> Option<i32> {
        let _ = Command::new("kill").args([&format!("-{name}"), &self.pid().to_string()]).status();
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.code().unwrap_or(-1));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// SIGKILL: no shutdown path runs.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The PostgreSQL server tests use: `A13N_TEST_POSTGRES`, else the local server of this machine kind.
pub const LOCAL_POSTGRES: &str = "postgres://postgres@127.0.0.1/test";

/// A fresh schema in the test PostgreSQL database (`A13N_TEST_POSTGRES`, else [`LOCAL_POSTGRES`]), as a URL whose
/// connections use it. A PostgreSQL test needs a server: without one it fails, saying how to point it at one.
pub fn postgres_database(name: &str) -> String {
    let url = std::env::var("A13N_TEST_POSTGRES").unwrap_or_else(|_| LOCAL_POSTGRES.to_owned());
    let schema = format!("a13n_test_{name}_{}", std::process::id());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap_or_else(|error| {
        panic!(
            "this test needs PostgreSQL and none answers at {url} ({error}); start one or set \
             A13N_TEST_POSTGRES=postgres://USER@HOST/DB (to leave PostgreSQL tests out: cargo test -- --skip postgres)"
        )
    });
    client
        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"))
        .expect("the test database accepts a schema");
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}options=-csearch_path%3D{schema}")
}

/// Run `sql` on the test PostgreSQL database (for tests that act as an operator would, e.g. terminating a
/// backend).
pub fn postgres_execute(sql: &str) {
    let url = std::env::var("A13N_TEST_POSTGRES").unwrap_or_else(|_| LOCAL_POSTGRES.to_owned());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("the test database answers");
    client.batch_execute(sql).expect("the statement runs");
}
