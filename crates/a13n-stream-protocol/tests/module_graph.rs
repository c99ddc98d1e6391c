//! The core's modules name each other without a circle: a module never names, through any chain of `crate::`
//! paths outside comments and tests, a module that names it. A circle means two rooms that cannot be read, or
//! changed, one without the other. And a module names what it uses: no glob import (`use super::*`) outside unit
//! tests, which would hand a room every private name of its parent and hide what it depends on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every `.rs` file under `src`, with its text before its unit tests (`#[cfg(test)]`).
fn code_files() -> Vec<(std::path::PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut pending = vec![src];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or_default().to_owned();
                files.push((path, code));
            }
        }
    }
    files
}

/// The glob imports (`use …::*;`, also inside a list that spans lines) in `code`, outside comments, by the
/// line their `use` statement starts on.
fn glob_imports(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut statement: Option<(usize, String)> = None;
    for (at, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or_default().trim();
        let starts = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "].iter().any(|s| line.starts_with(s));
        if statement.is_none() && starts {
            statement = Some((at + 1, String::new()));
        }
        let Some((first, text)) = statement.as_mut() else { continue };
        text.extend(line.chars().filter(|c| !c.is_whitespace()));
        if line.ends_with(';') {
            if text.contains("::*") || text.contains(",*") || text.contains("{*") {
                found.push((*first, text.clone()));
            }
            statement = None;
        }
    }
    found
}

#[test]
fn the_core_names_what_it_imports() {
    let files = code_files();
    assert!(files.len() > 20, "the core's files were not found");
    let globs: Vec<String> = files
        .iter()
        .flat_map(|(path, code)| {
            glob_imports(code).into_iter().map(move |(at, line)| format!("{}:{at}: {line}", path.display()))
        })
        .collect();
    assert!(globs.is_empty(), "glob imports outside unit tests:\n{}", globs.join("\n"));
}

#[test]
fn a_glob_import_is_found() {
    let code = "//! docs\nuse super::*;\nuse crate::json::{self, *};\n// use super::*;\nuse std::fmt;\nuse crate::{\n    a,\n    b::*,\n};\n";
    assert_eq!(glob_imports(code).iter().map(|(at, _)| *at).collect::<Vec<_>>(), [2, 3, 6]);
}

/// Each top-level module of `src` (a file or a folder) and the top-level modules its code names.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut pending = vec![src.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let relative = path.strip_prefix(&src).unwrap();
            let top = relative.iter().next().unwrap().to_string_lossy().trim_end_matches(".rs").to_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            // A module's unit tests may name anything.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let named = graph.entry(top.clone()).or_default();
            for line in code.lines() {
                let line = line.split("//").next().unwrap_or_default();
                for (at, _) in line.match_indices("crate::") {
                    let name: String =
                        line[at + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                    if !name.is_empty() && name != top {
                        named.insert(name);
                    }
                }
            }
        }
    }
    graph
}

/// A circle of modules in `graph`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        graph: &BTreeMap<String, BTreeSet<String>>,
        module: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|seen| seen == module) {
            let mut found = path[at..].to_vec();
            found.push(module.to_owned());
            return Some(found);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in graph.get(module).into_iter().flatten() {
            if let Some(found) = visit(graph, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|module| visit(graph, module, &mut Vec::new(), &mut done))
}

#[test]
fn the_core_has_no_import_circle() {
    let graph = module_graph();
    assert!(graph.len() > 20, "the core's modules were not found: {:?}", graph.keys());
    assert_eq!(circle(&graph), None, "modules naming each other in a circle");
}

#[test]
fn a_circle_is_found() {
    let graph = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(circle(&graph), Some(["a", "b", "c", "a"].map(str::to_owned).to_vec()));
}
