//! The source layout: no import circle between the modules of `src/`.
//!
//! Every file under `src/` is a node (a file is a module: `lib.rs` the
//! crate, `a/mod.rs` and `a.rs` the module `a`, `a/b.rs` the module `a::b`;
//! a `#[path = "f.rs"] mod m;` makes `f.rs` the module `m`, so `host::hops`
//! is both `hops.rs` and the browser's `nohops.rs`). A file imports another
//! when it names a path into it: in a `use` (every leaf of a `use` tree) or
//! inline in code (a serde `serialize_with = "…"` too), a path that starts
//! with `crate::`, `super::`, `self::` or the name of a child module the
//! file declares. A path resolves to the
//! file of its longest module prefix; an inline `mod tests { … }` is part
//! of its file, and its `super::` is its file's own module.
//!
//! The rules between a parent and its children:
//! - a parent declaring a child (`mod child;`) is not an import;
//! - a parent re-exporting a child's item (`pub use child::Item;`) is part
//!   of declaring it, not an import: a path that names the item through the
//!   parent (`lease::LeasedClient`) resolves to the child's file, which
//!   defines it;
//! - a child naming its parent's own items (`super::Mode`) imports the
//!   parent's file, and a parent naming its child's items in its own code
//!   (`use quota::Quota`, `client::step(…)`) imports the child's: both
//!   ways at once is a circle like any other.
//!
//! A circle makes two files one unit in all but name: neither can be read,
//! moved or left out of a module (src/host/mod.rs's feature sets) without
//! the other. The test names each circle it finds, with the line of each
//! import in it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Punct(&'static str),
}

/// Rust source as identifiers, string literals and the punctuation paths
/// and `use` trees are made of, each with its line; comments, characters
/// and lifetimes dropped.
fn tokens(source: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if at(i) == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == 'r'
            && (at(i + 1) == '"' || (at(i + 1) == '#' && (at(i + 2) == '"' || at(i + 2) == '#')))
        {
            // a raw string: r"…", r#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            let start = j;
            loop {
                if at(j) == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                    break;
                }
                if at(j) == '\n' {
                    line += 1;
                }
                j += 1;
            }
            out.push((Token::Str(chars[start..j].iter().collect()), line));
            i = j + 1 + hashes;
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') {
            let start_line = line;
            let mut j = if c == 'b' { i + 2 } else { i + 1 };
            let start = j;
            while at(j) != '"' {
                if at(j) == '\\' {
                    j += 1;
                }
                if at(j) == '\n' {
                    line += 1;
                }
                j += 1;
            }
            out.push((Token::Str(chars[start..j].iter().collect()), start_line));
            i = j + 1;
        } else if c == '\'' {
            // a character ('x', '\n', '\u{..}') or a lifetime ('a)
            if at(i + 1) == '\\' {
                let mut j = i + 3;
                while at(j) != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while at(i).is_alphanumeric() || at(i) == '_' {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while at(i).is_alphanumeric() || at(i) == '_' {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c.is_ascii_digit() {
            while at(i).is_alphanumeric() || at(i) == '_' || (at(i) == '.' && at(i + 1).is_ascii_digit()) {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push((Token::Punct("::"), line));
            i += 2;
        } else {
            let punct = match c {
                '{' => "{",
                '}' => "}",
                ',' => ",",
                ';' => ";",
                '*' => "*",
                '#' => "#",
                '=' => "=",
                '$' => "$",
                '(' => "(",
                ')' => ")",
                '[' => "[",
                ']' => "]",
                _ => "other",
            };
            out.push((Token::Punct(punct), line));
            i += 1;
        }
    }
    out
}

fn ident(token: Option<&(Token, usize)>) -> Option<&str> {
    match token {
        Some((Token::Ident(name), _)) => Some(name),
        _ => None,
    }
}

fn is(token: Option<&(Token, usize)>, punct: &str) -> bool {
    matches!(token, Some((Token::Punct(p), _)) if *p == punct)
}

/// One path a file names: where (the module the path is relative to), the
/// path's segments, the line, and whether it is a `pub use` (a re-export).
#[derive(Debug)]
struct Named {
    module: Vec<String>,
    path: Vec<String>,
    line: usize,
    reexport: Option<String>,
}

/// What one file says: the child modules it declares (with a `#[path]`'s
/// file), and every path it names.
#[derive(Debug, Default)]
struct Scan {
    children: Vec<(String, Option<String>)>,
    named: Vec<Named>,
}

/// The leaves of a `use` tree from `tokens[*i]`, each a full path (the
/// last segment the name it is bound to, or `*`), with the name it binds.
fn use_tree(
    tokens: &[(Token, usize)],
    i: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, String)>,
) {
    let mut path = prefix.to_vec();
    loop {
        if is(tokens.get(*i), "{") {
            *i += 1;
            while !is(tokens.get(*i), "}") {
                use_tree(tokens, i, &path, out);
                if is(tokens.get(*i), ",") {
                    *i += 1;
                }
            }
            *i += 1;
            return;
        }
        if is(tokens.get(*i), "*") {
            *i += 1;
            path.push("*".into());
            out.push((path, "*".into()));
            return;
        }
        let Some(segment) = ident(tokens.get(*i)) else { return };
        *i += 1;
        if is(tokens.get(*i), "::") {
            *i += 1;
            path.push(segment.into());
            continue;
        }
        let mut bound =
            if segment == "self" { path.last().cloned().unwrap_or_default() } else { segment.to_string() };
        if segment != "self" {
            path.push(segment.into());
        }
        if ident(tokens.get(*i)) == Some("as") {
            bound = ident(tokens.get(*i + 1)).unwrap_or("_").to_string();
            *i += 2;
        }
        out.push((path, bound));
        return;
    }
}

fn scan(source: &str, module: &[String]) -> Scan {
    let tokens = tokens(source);
    let mut scan = Scan::default();
    // inline modules: (name, the brace depth inside them)
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut path_attr: Option<String> = None;
    let here = |inline: &[(String, usize)]| -> Vec<String> {
        module.iter().cloned().chain(inline.iter().map(|(name, _)| name.clone())).collect()
    };
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        match &token.0 {
            Token::Punct("{") => depth += 1,
            Token::Punct("}") => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            // #[path = "…"]
            Token::Punct("#") if is(tokens.get(i + 1), "[") && ident(tokens.get(i + 2)) == Some("path") => {
                if let Some((Token::Str(file), _)) = tokens.get(i + 4) {
                    path_attr = Some(file.clone());
                }
            }
            // #[serde(serialize_with = "crate::…")]: a path in a string
            Token::Str(text)
                if is(tokens.get(i.wrapping_sub(1)), "=")
                    && matches!(
                        ident(tokens.get(i.wrapping_sub(2))),
                        Some("serialize_with" | "deserialize_with" | "with")
                    ) =>
            {
                let path = text.split("::").map(String::from).collect();
                scan.named.push(Named { module: here(&inline), path, line: token.1, reexport: None });
            }
            Token::Ident(word) if word == "mod" => {
                if let Some(name) = ident(tokens.get(i + 1)) {
                    if is(tokens.get(i + 2), ";") && inline.is_empty() {
                        scan.children.push((name.to_string(), path_attr.take()));
                    } else if is(tokens.get(i + 2), "{") {
                        inline.push((name.to_string(), depth + 1));
                    }
                }
            }
            Token::Ident(word) if word == "use" => {
                let reexport = ident(tokens.get(i.wrapping_sub(1))) == Some("pub")
                    || is(tokens.get(i.wrapping_sub(1)), ")");
                let line = token.1;
                i += 1;
                let mut leaves = Vec::new();
                use_tree(&tokens, &mut i, &[], &mut leaves);
                for (path, bound) in leaves {
                    scan.named.push(Named {
                        module: here(&inline),
                        path,
                        line,
                        reexport: reexport.then_some(bound),
                    });
                }
                continue;
            }
            Token::Ident(first)
                if !is(tokens.get(i.wrapping_sub(1)), "::") && is(tokens.get(i + 1), "::") =>
            {
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while is(tokens.get(j), "::") {
                    match ident(tokens.get(j + 1)) {
                        Some(segment) => path.push(segment.to_string()),
                        None => break,
                    }
                    j += 2;
                }
                scan.named.push(Named { module: here(&inline), path, line: token.1, reexport: None });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// The files of `src/` by module, and each file's scan.
struct Crate {
    modules: BTreeMap<Vec<String>, Vec<PathBuf>>,
    scans: BTreeMap<PathBuf, (Vec<String>, Scan)>,
    /// module → re-exported name → the path it re-exports (absolute)
    reexports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `path` (as a file names it, from `module`) as an absolute module path,
/// or None for a path outside the crate (`alloc::…`, a local binding).
fn absolute(path: &[String], module: &[String], children: &BTreeSet<String>) -> Option<Vec<String>> {
    let mut at = module.to_vec();
    let mut rest = path;
    match rest.first()?.as_str() {
        "crate" => {
            at.clear();
            rest = &rest[1..];
        }
        "self" => rest = &rest[1..],
        "super" => {
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        first if children.contains(first) => {}
        _ => return None,
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = Vec::new();
        rust_files(src, &mut files);
        files.sort();
        // #[path] first: the files it names are the modules it declares.
        let mut renamed: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
        let module_of = |file: &Path, renamed: &BTreeMap<PathBuf, Vec<String>>| -> Vec<String> {
            if let Some(module) = renamed.get(file) {
                return module.clone();
            }
            let relative = file.strip_prefix(src).unwrap().with_extension("");
            let mut module: Vec<String> = relative.iter().map(|s| s.to_string_lossy().into_owned()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            module
        };
        for file in &files {
            let module = module_of(file, &renamed);
            let source = fs::read_to_string(file).unwrap();
            for (child, path) in scan(&source, &module).children {
                if let Some(path) = path {
                    let mut named = module.clone();
                    named.push(child);
                    renamed.insert(file.parent().unwrap().join(path), named);
                }
            }
        }
        let mut krate =
            Crate { modules: BTreeMap::new(), scans: BTreeMap::new(), reexports: BTreeMap::new() };
        for file in &files {
            let module = module_of(file, &renamed);
            let scan = scan(&fs::read_to_string(file).unwrap(), &module);
            krate.modules.entry(module.clone()).or_default().push(file.clone());
            krate.scans.insert(file.clone(), (module, scan));
        }
        for (module, scan) in krate.scans.values() {
            let children: BTreeSet<String> = scan.children.iter().map(|(c, _)| c.clone()).collect();
            for named in &scan.named {
                if let (Some(bound), Some(path)) =
                    (&named.reexport, absolute(&named.path, &named.module, &children))
                {
                    krate.reexports.entry(module.clone()).or_default().insert(bound.clone(), path);
                }
            }
        }
        krate
    }

    /// The files an absolute path leads into: its longest module prefix's,
    /// or, when the next segment is an item that module re-exports, the
    /// re-exported item's.
    fn files_of(&self, path: &[String], hops: usize) -> Vec<PathBuf> {
        for len in (0..=path.len()).rev() {
            let Some(files) = self.modules.get(&path[..len]) else { continue };
            if let (Some(next), true) = (path.get(len), hops < 8) {
                if let Some(target) = self.reexports.get(&path[..len]).and_then(|r| r.get(next)) {
                    let mut target = target.clone();
                    target.extend(path[len + 1..].iter().cloned());
                    return self.files_of(&target, hops + 1);
                }
            }
            return files.clone();
        }
        Vec::new()
    }

    /// file → imported file → the first line that imports it
    fn imports(&self) -> BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> {
        let mut graph: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> = BTreeMap::new();
        for (file, (_, scan)) in &self.scans {
            let children: BTreeSet<String> = scan.children.iter().map(|(c, _)| c.clone()).collect();
            let edges = graph.entry(file.clone()).or_default();
            for named in scan.named.iter().filter(|n| n.reexport.is_none()) {
                let Some(path) = absolute(&named.path, &named.module, &children) else { continue };
                for target in self.files_of(&path, 0) {
                    if &target != file {
                        edges.entry(target).or_insert(named.line);
                    }
                }
            }
        }
        graph
    }
}

/// The strongly connected components of more than one file (Tarjan).
fn circles(graph: &BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on_stack: BTreeSet<&'g PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, node: &'g PathBuf) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flat_map(|e| e.keys()) {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                loop {
                    let top = self.stack.pop().unwrap();
                    self.on_stack.remove(top);
                    component.push(top.clone());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node) {
            walk.visit(node);
        }
    }
    walk.found
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_file_in_src_imports_itself_through_a_circle_of_other_files() {
    let krate = Crate::read(&src());
    let graph = krate.imports();
    let found = circles(&graph);
    let mut report = String::new();
    for component in &found {
        report.push_str("a circle:\n");
        for file in component {
            for (target, line) in &graph[file] {
                if component.contains(target) {
                    let name = |p: &Path| p.strip_prefix(src()).unwrap().display().to_string();
                    report.push_str(&format!("  src/{}:{} imports src/{}\n", name(file), line, name(target)));
                }
            }
        }
    }
    assert!(found.is_empty(), "import circles in src/:\n{report}");
}

#[test]
fn the_import_scan_sees_a_use_tree_an_inline_path_a_parents_items_and_a_reexport() {
    let module: Vec<String> = vec!["a".into(), "b".into()];
    let source = "//! use crate::not::this;\n\
                  mod c;\n\
                  use super::{x::{self, Y}, z as w};\n\
                  fn f() { let s = \"crate::nor::this\"; crate::p::q::r(); c::g(); }\n\
                  pub use c::Item;\n\
                  #[serde(serialize_with = \"crate::n::ms\")]\n\
                  #[cfg(test)]\nmod tests { use super::super::T; }\n";
    let scan = scan(source, &module);
    let named: Vec<(String, usize, bool)> =
        scan.named.iter().map(|n| (n.path.join("::"), n.line, n.reexport.is_some())).collect();
    let expected = [
        ("super::x", 3, false),
        ("super::x::Y", 3, false),
        ("super::z", 3, false),
        ("crate::p::q::r", 4, false),
        ("c::g", 4, false),
        ("c::Item", 5, true),
        ("crate::n::ms", 6, false),
        ("super::super::T", 8, false),
    ];
    let expected: Vec<(String, usize, bool)> =
        expected.iter().map(|(p, l, r)| (p.to_string(), *l, *r)).collect();
    assert_eq!(named, expected);
    assert_eq!(scan.children, vec![("c".to_string(), None)]);
    // inside `mod tests`, `super::super` is the file's parent
    let tests = scan.named.last().unwrap();
    let children = BTreeSet::from(["c".to_string()]);
    assert_eq!(absolute(&tests.path, &tests.module, &children), Some(vec!["a".into(), "T".into()]));
}

#[test]
fn a_circle_of_two_files_is_found_and_a_chain_is_not() {
    let edge = |from: &str, to: &str| (PathBuf::from(from), BTreeMap::from([(PathBuf::from(to), 1)]));
    let chain = BTreeMap::from([edge("a", "b"), edge("b", "c"), (PathBuf::from("c"), BTreeMap::new())]);
    assert!(circles(&chain).is_empty());
    let circle = BTreeMap::from([edge("a", "b"), edge("b", "c"), edge("c", "a"), edge("d", "a")]);
    assert_eq!(circles(&circle), vec![vec![PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c")]]);
}
