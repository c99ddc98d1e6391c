//! The command-line tool, run as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use a13n_stream_bench::generate::{Generator, StreamKind};
use a13n_stream_protocol::{recorded, DisplayFold, FoldError, HarnessAguiStreamObserver, InputError, SourceItem};
use a13n_testkit::{own_cases, workspace_root};

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_a13n-stream"))
}

fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut command = binary();
    command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("the binary starts");
    if let Some(input) = stdin {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn example() -> PathBuf {
    workspace_root().join("examples/streams/tools.jsonl")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("a13n-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn observe_prints_agui_events() {
    let output = run(&["observe", example().to_str().unwrap()], None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    let first: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "RUN_STARTED");
    assert!(stdout.lines().any(|line| line.contains("\"TOOL_CALL_RESULT\"")));
}

#[test]
fn per_item_output_reports_errors_and_goes_on() {
    let good = std::fs::read_to_string(example()).unwrap();
    let mut lines: Vec<&str> = good.lines().take(3).collect();
    lines.insert(1, "{\"thread_id\": 5}");
    let input = lines.join("\n") + "\n";
    let output = run(&["observe", "--per-item", "-"], Some(&input));
    assert_eq!(output.status.code(), Some(3), "malformed input exits 3");
    let stdout = text(&output.stdout);
    let rows: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 4, "one line per source line");
    assert_eq!(rows[1]["error"]["type"], "InputError");
    assert!(rows[1]["error"]["message"].as_str().unwrap().contains("thread_id"));
    assert!(rows[2]["events"].is_array());
    assert!(text(&output.stderr).contains("line 2:"), "stderr names the line: {}", text(&output.stderr));
}

#[test]
fn observation_errors_exit_4() {
    let case = own_cases().join("extra-parts/source.jsonl");
    let output = run(&["observe", "--per-item", case.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(4));
    assert!(text(&output.stdout).contains(r#"{"error":{"type":"AguiObservationError","message":"#));
}

/// The example's checkpoint after its first 20 lines, written to `dir/cut.json`.
fn cut_at_20(dir: &Path) -> PathBuf {
    let checkpoint = dir.join("cut.json");
    let out =
        run(&["fold", example().to_str().unwrap(), "--stop", "20", "--export", checkpoint.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    checkpoint
}

#[test]
fn fold_checkpoint_restore_and_continue_equals_uninterrupted() {
    let dir = temp_dir("fold");
    let path = example();
    let example = path.to_str().unwrap();
    let checkpoint = cut_at_20(&dir);
    let whole = dir.join("whole.json");
    let resumed = dir.join("resumed.json");
    let observed = dir.join("observed.jsonl");
    let out = run(
        &[
            "fold",
            example,
            "--restore",
            checkpoint.to_str().unwrap(),
            "--start",
            "20",
            "--export",
            resumed.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out =
        run(&["fold", example, "--export", whole.to_str().unwrap(), "--observed", observed.to_str().unwrap()], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&resumed).unwrap(), std::fs::read(&whole).unwrap());
    let source_lines = std::fs::read_to_string(&path).unwrap().lines().count();
    assert_eq!(std::fs::read_to_string(&observed).unwrap().lines().count(), source_lines);
}

/// `fold --lanes` names the path of every source line, the first included, and changes nothing else: the
/// checkpoint is the same with and without it. A line in another key order is taken laid out in its model's order,
/// and one with a key given twice takes the general path; each says so.
#[test]
fn fold_lanes_accounts_for_every_line() {
    let path = example();
    let lines: Vec<String> = std::fs::read_to_string(&path).unwrap().lines().map(str::to_owned).collect();
    // One delta line of the example with its delta's keys in another order.
    let delta = lines.iter().position(|line| line.contains(r#""event_kind":"part_delta""#)).unwrap();
    let mut reordered = lines.clone();
    let value: serde_json::Value = serde_json::from_str(&lines[delta]).unwrap();
    let mut event: Vec<(String, serde_json::Value)> = value["event"].as_object().unwrap().clone().into_iter().collect();
    event.reverse();
    let event: String = event.iter().map(|(key, value)| format!("{key:?}:{value}")).collect::<Vec<_>>().join(",");
    let head = lines[delta].split(r#","event":"#).next().unwrap();
    reordered[delta] = format!("{head},\"event\":{{{event}}}}}");
    // The next delta line with its index given twice: only decoding reads it as the writer meant.
    let next =
        delta + 1 + lines[delta + 1..].iter().position(|line| line.contains(r#""event_kind":"part_delta""#)).unwrap();
    reordered[next] = lines[next].replacen(r#""index":"#, r#""index":0,"index":"#, 1);
    let input = reordered.join("\n") + "\n";
    let plain = run(&["fold", "-"], Some(&input));
    let counted = run(&["fold", "-", "--lanes"], Some(&input));
    assert!(counted.status.success(), "{}", text(&counted.stderr));
    assert_eq!(plain.stdout, counted.stdout, "the checkpoint does not depend on --lanes");
    let report = text(&counted.stderr);
    let counts: Vec<(String, u64)> = report
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields[0].to_owned(), fields[1].parse().unwrap())
        })
        .collect();
    assert_eq!(counts.iter().map(|(_, count)| count).sum::<u64>(), lines.len() as u64, "{report}");
    assert!(counts.iter().any(|(path, count)| path.starts_with("laid-out/") && *count >= 1), "{report}");
    assert!(counts.iter().any(|(path, count)| path == "general/not-in-layout" && *count >= 1), "{report}");
    assert!(counts.iter().any(|(path, _)| path.starts_with("taken/")), "{report}");
}

/// `observe` and `fold` read their input on a second thread, in blocks: on a journal of many blocks, with a line
/// that is not JSON and one that is not UTF-8 among them, what they write is what the library writes taking the
/// lines one by one.
#[test]
fn observe_and_fold_read_ahead_write_what_the_library_writes_line_by_line() {
    let mut generator = Generator::for_run(StreamKind::Tools, 8000, "run-ahead");
    let mut lines: Vec<Option<String>> =
        std::iter::from_fn(|| generator.next_line().map(|l| Some(l.to_owned()))).collect();
    lines.insert(3000, Some("{not json".into()));
    lines.insert(5000, None);
    let journal: Vec<u8> = (lines.iter())
        .flat_map(|line| line.as_deref().map_or(&b"\xff\xfe"[..], str::as_bytes).iter().chain(b"\n"))
        .copied()
        .collect();
    assert!(journal.len() > 1 << 20, "the journal spans several blocks");
    let dir = temp_dir("read-ahead");
    let path = dir.join("journal.jsonl");
    std::fs::write(&path, &journal).unwrap();

    let mut observer = HarnessAguiStreamObserver::new().retain_events(false);
    let mut events = Vec::new();
    let first = SourceItem::from_json(lines[0].as_deref().unwrap()).unwrap();
    let mut fold = DisplayFold::new(first.run_id);
    let mut observed = Vec::new();
    for line in &lines {
        let (mut entries, mut written) = (Vec::new(), Vec::new());
        let result = match line {
            Some(line) => {
                let _ = observer.observe_line(line, &mut written);
                fold.fold_line(line, &mut entries)
            }
            None => Err(FoldError::from(InputError::new("", "the line is not UTF-8 (invalid after byte 0)"))),
        };
        events.extend(written);
        match result {
            Ok(_) => recorded::write_observed_line(&entries, &mut observed),
            Err(error) => {
                let (kind, message) = recorded::fold_error_parts(&error);
                recorded::write_error_line(kind, &message, &mut observed);
            }
        }
        observed.push(b'\n');
    }

    // Both report the two bad lines by their numbers, and exit 3 (malformed input).
    let bad: Vec<String> = (lines.iter().enumerate())
        .filter(|(_, line)| line.as_deref().is_none_or(|line| line.starts_with("{not")))
        .map(|(at, _)| format!("line {}", at + 1))
        .collect();
    let reported = |output: &Output| -> Vec<String> {
        text(&output.stderr).lines().filter_map(|line| line.split(':').next().map(str::to_owned)).collect()
    };
    let output = run(&["observe", path.to_str().unwrap()], None);
    assert!(output.stdout == events, "observe wrote what observe_line writes");
    assert_eq!((output.status.code(), reported(&output)), (Some(3), bad.clone()), "{}", text(&output.stderr));
    let (observed_path, export_path) = (dir.join("observed.jsonl"), dir.join("checkpoint.json"));
    let args = ["fold", path.to_str().unwrap(), "--observed", observed_path.to_str().unwrap(), "--export"];
    let output = run(&[&args[..], &[export_path.to_str().unwrap()]].concat(), None);
    assert_eq!((output.status.code(), reported(&output)), (Some(3), bad), "{}", text(&output.stderr));
    assert!(std::fs::read(&observed_path).unwrap() == observed, "fold wrote what fold_line writes");
    assert_eq!(std::fs::read_to_string(&export_path).unwrap(), fold.export_json() + "\n");

    // From standard input, stopped part way (`--stop`): the fold of the lines before the stop.
    let text_lines: Vec<&str> = lines[..4500].iter().map(|line| line.as_deref().unwrap()).collect();
    let mut stopped = DisplayFold::new(SourceItem::from_json(text_lines[0]).unwrap().run_id);
    for line in &text_lines[..4000] {
        let _ = stopped.fold_line(line, &mut Vec::new());
    }
    let output = run(&["fold", "-", "--stop", "4000"], Some(&(text_lines.join("\n") + "\n")));
    assert_eq!(text(&output.stdout), stopped.export_json() + "\n", "{}", text(&output.stderr));
}

#[test]
fn fold_agui_events_directly() {
    let input = concat!(
        r#"{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","timestamp":1000}"#,
        "\n",
        r#"{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"Hi","timestamp":1001}"#,
        "\n"
    );
    let output = run(&["fold", "--agui", "--run-id", "r"], Some(input));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let snapshot: serde_json::Value = serde_json::from_str(text(&output.stdout).trim()).unwrap();
    assert_eq!(snapshot["items"][0]["content"]["text"], "Hi");
    assert_eq!(snapshot["items"][0]["state"], "in_progress");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["observe", "--bogus"], None).status.code(), Some(2));
    assert_eq!(run(&["nonsense"], None).status.code(), Some(2));
    assert_eq!(run(&["fold", "--agui"], None).status.code(), Some(2));
    assert_eq!(run(&["observe", "/no/such/file"], None).status.code(), Some(5));
    assert!(run(&["help"], None).status.success());
    // Regression: --retain-interval without --retain was taken and did nothing.
    let interval = run(&["serve", "--retain-interval", "1s"], None);
    assert_eq!(interval.status.code(), Some(2));
    assert!(text(&interval.stderr).contains("--retain"), "{}", text(&interval.stderr));
    // A usage error pointed at the tool's help, not at the help of the command that refused the arguments.
    let example = example();
    for (args, hint) in [
        (&["fold", "--bogus"][..], "(see `a13n-stream fold --help`)"),
        (&["fold", example.to_str().unwrap(), "--stop", "0"], "(see `a13n-stream fold --help`)"),
        (&["nonsense"], "(see `a13n-stream --help`)"),
    ] {
        let stderr = text(&run(args, None).stderr);
        assert!(stderr.trim_end().ends_with(hint), "{args:?}: {stderr}");
    }
}

/// Regression: the hand-written parser had no `--version` or per-command `--help`, a bare `a13n-stream`
/// printed help and exited 0, and an unknown flag named the help twice.
#[test]
fn the_command_line_behaves_like_other_tools() {
    let version = run(&["--version"], None);
    assert!(version.status.success());
    assert!(text(&version.stdout).starts_with("a13n-stream "), "{}", text(&version.stdout));
    for command in ["observe", "fold", "conformance", "serve", "bench", "bench-serve", "completions"] {
        let help = run(&[command, "--help"], None);
        assert!(help.status.success(), "{command} --help");
        assert!(text(&help.stdout).contains("Usage: a13n-stream"), "{command} --help");
    }
    for args in
        [&[][..], &["observe", "--bogus"][..], &["fold", "--agui"][..], &["serve", "--idle-timeout", "soon"][..]]
    {
        let output = run(args, None);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = text(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert_eq!(stderr.matches("--help").count(), 1, "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    let completions = run(&["completions", "bash"], None);
    assert!(completions.status.success() && text(&completions.stdout).contains("a13n-stream"));
}

#[test]
fn a_corrupted_expected_file_fails_conformance() {
    let dir = temp_dir("corrupt");
    let case = dir.join("extra-failed");
    copy_dir(&own_cases().join("extra-failed"), &case);
    let output = run(&["conformance", dir.to_str().unwrap()], None);
    assert!(output.status.success(), "the intact copy passes: {}", text(&output.stdout));
    let agui = case.join("agui.jsonl");
    let corrupted = std::fs::read_to_string(&agui).unwrap().replacen("RUN_STARTED", "RUN_FINISHED", 1);
    std::fs::write(&agui, corrupted).unwrap();
    let checkpoint = case.join("display.json");
    let corrupted = std::fs::read_to_string(&checkpoint).unwrap().replacen("\"ordinal\":1", "\"ordinal\":9", 1);
    std::fs::write(&checkpoint, corrupted).unwrap();
    let output = run(&["conformance", dir.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("FAIL extra-failed/agui.jsonl:1"), "{stdout}");
    assert!(stdout.contains("FAIL extra-failed/display.json"), "{stdout}");
    assert!(stdout.lines().last().unwrap().ends_with("failed") && !stdout.contains(" 0 failed"), "{stdout}");
}

/// Flags that could only give a wrong display or lose output used to be accepted with exit status 0: a restore
/// without the line it was cut at (every line folded twice), a source cut at 0 (a checkpoint of no run), a stop
/// before the start, both outputs in one file (the observed lines overwritten), a run id the fold ignores.
#[test]
fn fold_refuses_flags_that_cannot_give_the_uninterrupted_display() {
    let dir = temp_dir("refused-flags");
    let path = example();
    let example = path.to_str().unwrap();
    let checkpoint = cut_at_20(&dir);
    let cut = checkpoint.to_str().unwrap();
    let same = dir.join("same.json");
    let same_again = dir.join("../").join(dir.file_name().unwrap()).join("same.json");
    let input = dir.join("in.jsonl");
    std::fs::copy(&path, &input).unwrap();
    let (input, hard, linked) = (input.to_str().unwrap(), dir.join("hard.json"), dir.join("linked.json"));
    std::fs::write(&hard, "").unwrap();
    std::fs::hard_link(&hard, &linked).unwrap();
    let refused: [&[&str]; 9] = [
        &["fold", example, "--restore", cut],
        &["fold", example, "--stop", "0"],
        &["fold", example, "--restore", cut, "--start", "20", "--stop", "20"],
        &["fold", example, "--observed", same.to_str().unwrap(), "--export", same_again.to_str().unwrap()],
        &["fold", example, "--run-id", "other"],
        &["fold", example, "--agui", "--run-id", "other", "--restore", cut, "--start", "20"],
        &["bench", "--runs", "0"],
        // The input emptied before it was read.
        &["fold", input, "--observed", input],
        &["fold", example, "--observed", linked.to_str().unwrap(), "--export", hard.to_str().unwrap()],
    ];
    for args in refused {
        let out = run(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert_eq!(text(&out.stderr).lines().count(), 1, "{args:?}: {}", text(&out.stderr));
    }
    assert!(!same.exists(), "a refused fold writes nothing");
    assert_eq!(std::fs::read(input).unwrap(), std::fs::read(&path).unwrap(), "the input is intact");
    // A cut at 0 is sound where the run is given.
    let events = run(&["observe", example], None);
    let out = run(&["fold", "--agui", "--run-id", "r", "--stop", "0", "-"], Some(&text(&events.stdout)));
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Errors name what failed, once: a directory given as input (it failed at the first read, unnamed), a file that
/// could not be written (unnamed), a checkpoint that is not one ("bad input: …: bad input: …").
#[test]
fn file_errors_name_the_file_once() {
    let dir = temp_dir("named-errors");
    let path = example();
    let example = path.to_str().unwrap();
    let out = run(&["observe", dir.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(5));
    assert!(text(&out.stderr).contains(&format!("{}: is a directory", dir.display())), "{}", text(&out.stderr));
    if Path::new("/dev/full").exists() {
        for args in [&["fold", example, "--export", "/dev/full"][..], &["fold", example, "--observed", "/dev/full"]] {
            let out = run(args, None);
            assert_eq!(out.status.code(), Some(5), "{args:?}");
            assert!(text(&out.stderr).contains("/dev/full: No space left"), "{args:?}: {}", text(&out.stderr));
        }
        for command in ["observe", "fold"] {
            let full = std::fs::File::create("/dev/full").unwrap();
            let out = binary().args([command, example]).stdout(full).output().unwrap();
            assert_eq!(out.status.code(), Some(5), "{command}");
            assert!(text(&out.stderr).contains("standard output: No space left"), "{}", text(&out.stderr));
        }
    }
    let truncated = dir.join("truncated.json");
    let whole = run(&["fold", example], None);
    std::fs::write(&truncated, &whole.stdout[..whole.stdout.len() / 2]).unwrap();
    let out = run(&["fold", example, "--restore", truncated.to_str().unwrap(), "--start", "3"], None);
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(truncated.to_str().unwrap()) && stderr.matches("bad input").count() == 1, "{stderr}");
}

/// `observe ... | head` printed "I/O error: standard output: Broken pipe" and exited 5: a command whose reader went
/// away stops quietly, with success, as the other commands of a pipeline do.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let dir = temp_dir("closed-pipe");
    let journal = dir.join("long.jsonl");
    let stream = run(&["bench", "--emit", "text", "20000"], None);
    std::fs::write(&journal, &stream.stdout).unwrap();
    for command in ["observe", "fold"] {
        let mut child = binary()
            .args([command, journal.to_str().unwrap()])
            .args(if command == "fold" { &["--observed", "-", "--export", "/dev/null"][..] } else { &[] })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 16];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{command}: {}", text(&out.stderr));
        assert!(out.stderr.is_empty(), "{command}: {}", text(&out.stderr));
    }
}

/// `tail -f journal | a13n-stream observe` showed nothing until 64 KiB of events were made: a live producer's
/// events (and a fold's observed lines) are written once the input has nothing more ready, not when a buffer fills.
#[test]
fn a_live_producer_sees_the_output_of_each_line_it_wrote() {
    use std::io::{BufRead, BufReader, Write};
    use std::time::{Duration, Instant};
    let dir = temp_dir("live");
    let journal = std::fs::read_to_string(example()).unwrap();
    let lines: Vec<&str> = journal.lines().take(4).collect();
    // How many event lines each source line makes, from the per-item output of the same lines.
    let per_item = run(&["observe", "--per-item"], Some(&(lines.join("\n") + "\n")));
    let events: Vec<usize> = text(&per_item.stdout)
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["events"].as_array().unwrap().len())
        .collect();
    assert!(events.len() == lines.len() && events.iter().all(|&count| count > 0), "{events:?}");
    let export = dir.join("checkpoint.json");
    let fold = ["fold", "--observed", "-", "--export", export.to_str().unwrap()];
    for args in [&["observe"][..], &["observe", "--per-item"], &fold] {
        let mut child = binary().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let (mut input, output) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        // Output lines are read on a thread of their own, so a missing one fails at the deadline, not by hanging.
        let (send, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines() {
                let _ = send.send(line.unwrap());
            }
        });
        for (line, count) in lines.iter().zip(&events) {
            writeln!(input, "{line}").unwrap();
            input.flush().unwrap();
            // The producer has not ended: all of this line's output arrives while the input stays open.
            let expected = if args[0] == "observe" && args.len() == 1 { *count } else { 1 };
            for _ in 0..expected {
                let out = received.recv_timeout(Duration::from_secs(60));
                assert!(out.is_ok_and(|out| out.starts_with('{')), "{args:?}: output held while the input was open");
            }
        }
        drop(input);
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "{args:?}: the command ends when its input does");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(child.wait().unwrap().success(), "{args:?}");
        assert!(received.recv_timeout(Duration::from_secs(60)).is_err(), "{args:?}: no output after the lines");
    }
}

/// With the observed lines written after the checkpoint, a failure writing them came after the checkpoint at the
/// export path had been replaced, and was lost if the export failed first.
#[test]
fn a_failure_writing_observed_lines_leaves_the_checkpoint_untouched() {
    if !Path::new("/dev/full").exists() {
        panic!("this test needs /dev/full");
    }
    let dir = temp_dir("observed-full");
    let export = dir.join("checkpoint.json");
    std::fs::write(&export, "the checkpoint before\n").unwrap();
    let example = example();
    let out = run(
        &["fold", example.to_str().unwrap(), "--observed", "/dev/full", "--export", export.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("/dev/full: No space left"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&export).unwrap(), "the checkpoint before\n");
}

/// Outputs are written by a thread of their own: a previous, longer file at an output's path is still replaced
/// whole, and a device (`/dev/null`) still takes the output.
#[test]
fn outputs_replace_a_longer_file_whole() {
    let dir = temp_dir("replace");
    let (observed, export) = (dir.join("observed.jsonl"), dir.join("checkpoint.json"));
    let (observed, export) = (observed.to_str().unwrap(), export.to_str().unwrap());
    let example = example();
    let args = ["fold", example.to_str().unwrap(), "--observed", observed, "--export", export];
    assert!(run(&args, None).status.success());
    let first = (std::fs::read(observed).unwrap(), std::fs::read(export).unwrap());
    let long = vec![b'x'; 4 * first.0.len().max(first.1.len())];
    std::fs::write(observed, &long).unwrap();
    std::fs::write(export, &long).unwrap();
    assert!(run(&args, None).status.success());
    assert!(std::fs::read(observed).unwrap() == first.0, "the observed lines replaced the longer file");
    assert!(std::fs::read(export).unwrap() == first.1, "the checkpoint replaced the longer file");
    let out = run(&["fold", example.to_str().unwrap(), "--observed", "/dev/null", "--export", export], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// The checkpoint was written over the file at `--export`: a write failing halfway (a full disk, here a file size
/// limit) left neither the checkpoint before nor the new one.
#[test]
fn a_failure_writing_the_checkpoint_leaves_the_one_before() {
    use std::os::unix::process::CommandExt;
    let dir = temp_dir("export-fails");
    let export = dir.join("checkpoint.json");
    std::fs::write(&export, "the checkpoint before\n").unwrap();
    let whole = run(&["fold", example().to_str().unwrap()], None).stdout;
    let limit = (whole.len() / 2) as libc::rlim_t;
    let mut command = binary();
    command.args(["fold", example().to_str().unwrap(), "--export", export.to_str().unwrap()]);
    // SAFETY: between fork and exec the child calls only `signal` and `setrlimit`, both async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            // A write past the limit fails with EFBIG instead of ending the process.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let bound = libc::rlimit { rlim_cur: limit, rlim_max: limit };
            match libc::setrlimit(libc::RLIMIT_FSIZE, &bound) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let out = command.stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("{}: File too large", export.display())), "{stderr}");
    let after = std::fs::read(&export).unwrap();
    assert!(after == b"the checkpoint before\n", "replaced by {} bytes of the new checkpoint", after.len());
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert_eq!(names, ["checkpoint.json"], "the new file is removed");
}

/// A checkpoint moves on in place (`--restore` and `--export` one file), and a replaced checkpoint keeps the link
/// that names it and its permissions.
#[test]
fn a_checkpoint_is_replaced_in_place_through_its_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("export-in-place");
    let (real, link, whole) = (dir.join("real.json"), dir.join("cut.json"), dir.join("whole.json"));
    let example = example();
    let (example, link_arg) = (example.to_str().unwrap(), link.to_str().unwrap());
    std::fs::write(&real, "").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    assert!(run(&["fold", example, "--stop", "20", "--export", link_arg], None).status.success());
    let out = run(&["fold", example, "--restore", link_arg, "--start", "20", "--export", link_arg], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(run(&["fold", example, "--export", whole.to_str().unwrap()], None).status.success());
    assert_eq!(std::fs::read(&real).unwrap(), std::fs::read(&whole).unwrap());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
    let out = run(&["fold", example, "--export", "/dev/null"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["cut.json", "real.json", "whole.json"]);
}

/// Found by a review of the replacing export: a new file in the checkpoint's place changed what writing in place
/// kept. Another user's checkpoint became the exporting user's, another hard link kept the old checkpoint,
/// `--export /dev/stdout` with standard output in a file replaced the file (and what the shell had written to it),
/// and a name long enough left no room for the new file's.
#[test]
fn a_replaced_checkpoint_keeps_what_writing_in_place_kept() {
    use std::os::unix::fs::MetadataExt;
    let dir = temp_dir("export-keeps");
    let example = example();
    let example = example.to_str().unwrap();
    let whole = run(&["fold", example], None).stdout;
    let owned = dir.join("owned.json");
    std::fs::write(&owned, "before\n").unwrap();
    let (uid, gid) = (65534, 65534);
    let chowned = std::os::unix::fs::chown(&owned, Some(uid), Some(gid));
    let linked = (dir.join("linked.json"), dir.join("other-name.json"));
    std::fs::write(&linked.0, "before\n").unwrap();
    std::fs::hard_link(&linked.0, &linked.1).unwrap();
    let long = dir.join(format!("{}.json", "c".repeat(250)));
    for path in [&owned, &linked.0, &long] {
        let out = run(&["fold", example, "--export", path.to_str().unwrap()], None);
        assert!(out.status.success(), "{}: {}", path.display(), text(&out.stderr));
        assert!(std::fs::read(path).unwrap() == whole, "{}", path.display());
    }
    if chowned.is_ok() {
        let metadata = std::fs::metadata(&owned).unwrap();
        assert_eq!((metadata.uid(), metadata.gid()), (uid, gid), "the owner and group are kept");
    }
    assert!(std::fs::read(&linked.1).unwrap() == whole, "every hard link names the new checkpoint");
    let captured = dir.join("captured.txt");
    std::fs::write(&captured, "before\n").unwrap();
    let stdout = std::fs::OpenOptions::new().append(true).open(&captured).unwrap();
    let out = binary()
        .args(["fold", example, "--export", "/dev/stdout"])
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut expected = b"before\n".to_vec();
    expected.extend_from_slice(&whole);
    assert!(std::fs::read(&captured).unwrap() == expected, "standard output's file was replaced");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    names.retain(|name| name.to_string_lossy().ends_with(".tmp"));
    assert!(names.is_empty(), "left behind: {names:?}");
}

/// `bench-serve` against a database its server could not open said only "I/O error: unexpected: ": the server's
/// own reason was thrown away with its standard error.
#[test]
fn bench_serve_says_why_its_server_did_not_start() {
    let dir = temp_dir("bench-serve-db");
    let database = dir.join("missing").join("load.db");
    let out = run(&["bench-serve", "--lines", "10", "--processes", "1", "--db", database.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("the server did not start") && stderr.contains("unable to open database file"), "{stderr}");
}

/// Paths with no case are a usage error (2), not a failed case (1), which the exit status kept for conformance.
#[test]
fn conformance_on_paths_without_cases_is_a_usage_error() {
    let dir = temp_dir("no-cases");
    let output = run(&["conformance", dir.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("no case directories"), "{}", text(&output.stderr));
}

/// The flags that give a case's fold options on the command line.
fn case_flags(dir: &Path) -> Vec<String> {
    let options = a13n_testkit::case_options(dir);
    let mut flags = Vec::new();
    for (key, flag) in [("full_content", "--full-content"), ("retain_content", "--retain-content")] {
        if options[key].as_bool() == Some(true) {
            flags.push(flag.to_owned());
        }
    }
    if let Some(processor) = options["processor"].as_str() {
        flags.extend(["--processor".to_owned(), processor.to_owned()]);
    }
    flags
}

/// Regression: `observe --per-item` wrote `{"kind":"observation",...}` errors and `fold --observed` wrote floats
/// as `0.00001`, so neither was the recording the README said they wrote.
#[test]
fn per_item_and_observed_output_are_the_recordings_byte_for_byte() {
    let dir = temp_dir("recordings");
    let mut checked = 0;
    for case in a13n_testkit::source_cases() {
        let source = case.join("source.jsonl");
        let flags = case_flags(&case);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let processor: Vec<&str> =
            flags.iter().position(|f| *f == "--processor").map_or(vec![], |i| flags[i..i + 2].to_vec());
        let mut args = vec!["observe", "--per-item", source.to_str().unwrap()];
        args.extend(&processor);
        let output = run(&args, None);
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            text(&output.stdout),
            std::fs::read_to_string(case.join("agui.jsonl")).unwrap(),
            "{name}: agui.jsonl"
        );
        let observed = dir.join(format!("{name}.observed.jsonl"));
        let mut args =
            vec!["fold", source.to_str().unwrap(), "--observed", observed.to_str().unwrap(), "--export", "/dev/null"];
        args.extend(&flags);
        run(&args, None);
        assert_eq!(
            std::fs::read_to_string(&observed).unwrap(),
            std::fs::read_to_string(case.join("observed.jsonl")).unwrap(),
            "{name}: observed.jsonl"
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} cases");
}

/// Regression: conformance compared recorded lines as parsed JSON, so a reordered line, another float spelling
/// or another error message still passed.
#[test]
fn conformance_fails_on_reordered_keys_float_spelling_and_error_messages() {
    type Corruption = fn(&str) -> String;
    let corruptions: [(&str, Corruption); 3] = [
        ("key order", |text| {
            let (first, rest) = text.split_once('\n').unwrap();
            let mut line: serde_json::Value = serde_json::from_str(first).unwrap();
            let event = line["events"][0].as_object_mut().unwrap();
            let reversed: serde_json::Map<String, serde_json::Value> =
                event.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect();
            *event = reversed;
            format!("{line}\n{rest}")
        }),
        ("float spelling", |text| text.replacen("e-0", "e-", 1)),
        ("error message", |text| {
            text.replacen(r#""AguiObservationError","message":""#, r#""AguiObservationError","message":"x"#, 1)
        }),
    ];
    for (what, corrupt) in corruptions {
        let dir = temp_dir(&format!("corrupt-{}", what.replace(' ', "-")));
        let case = dir.join("extra-parts");
        copy_dir(&own_cases().join("extra-parts"), &case);
        let agui = case.join("agui.jsonl");
        let original = std::fs::read_to_string(&agui).unwrap();
        let corrupted = corrupt(&original);
        assert_ne!(corrupted, original, "{what}: the corruption changes the file");
        std::fs::write(&agui, corrupted).unwrap();
        let output = run(&["conformance", dir.to_str().unwrap()], None);
        assert_eq!(output.status.code(), Some(1), "{what}: {}", text(&output.stdout));
        assert!(text(&output.stdout).contains("FAIL extra-parts/agui.jsonl:"), "{what}");
    }
}
