//! `occurred_at` read as Python 3.13's `datetime.fromisoformat` reads it, on every spelling
//! `tests/oracle/isoformat_cases.py` recorded (accepted ones and their near misses).

use a13n_stream_protocol::SourceTime;

#[test]
fn every_recorded_spelling_reads_as_fromisoformat_reads_it() {
    let recorded = include_str!("data/fromisoformat.jsonl");
    let mut wrong = Vec::new();
    let (mut accepted, mut refused) = (0, 0);
    for line in recorded.lines() {
        let (text, expected): (String, Option<String>) = serde_json::from_str(line).expect("a recorded case");
        let got = SourceTime::parse(&text).ok().map(SourceTime::isoformat);
        if expected.is_some() {
            accepted += 1;
        } else {
            refused += 1;
        }
        if got != expected {
            wrong.push(format!("{text:?}: Python {expected:?}, here {got:?}"));
        }
    }
    assert!(accepted > 1000 && refused > 1000, "the recording holds both: {accepted} accepted, {refused} refused");
    assert!(wrong.is_empty(), "{} of {} differ:\n{}", wrong.len(), accepted + refused, wrong.join("\n"));
}
