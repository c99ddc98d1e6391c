//! The display fold names every JSON field through `fields` (and every event type through `EventType`): no
//! field access in `src/display/` spells a key as a string literal outside its tests.

use std::fs;
use std::path::Path;

/// Map and scanner accessors that take a key.
const ACCESSORS: [&str; 9] = [
    ".get(\"",
    ".get_mut(\"",
    ".insert(\"",
    ".contains_key(\"",
    ".entry(\"",
    ".remove(\"",
    "require_str(\"",
    "_bounded(content, \"",
    ".object(\"",
];

#[test]
fn the_display_fold_names_no_field_by_a_string_literal() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/display");
    let mut found = Vec::new();
    let mut files = 0;
    for entry in fs::read_dir(&dir).expect("src/display is readable") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        files += 1;
        let text = fs::read_to_string(&path).expect("a source file");
        // Tests may spell their fixtures' fields.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (number, line) in code.lines().enumerate() {
            let spelled = ACCESSORS.iter().any(|accessor| line.contains(accessor))
                || ["\"TEXT_MESSAGE", "\"TOOL_CALL_", "\"REASONING_", "\"RUN_", "\"CUSTOM\""]
                    .iter()
                    .any(|event_type| line.contains(event_type));
            if spelled && !line.trim_start().starts_with("//") {
                found.push(format!("{}:{}: {}", path.display(), number + 1, line.trim()));
            }
        }
    }
    assert!(files >= 10, "expected the display module's files in {}", dir.display());
    assert!(found.is_empty(), "fields spelled as string literals:\n{}", found.join("\n"));
}
