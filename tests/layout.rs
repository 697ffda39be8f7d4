//! The source layout: no import circle between the files of `src/`, nor
//! between the folders of `src/host`, nor between the top-level modules of
//! `src/` (`engine`, `policy`, `host`, …).
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
//!
//! The same holds one level up: a folder of `src/host` (with its files) or
//! a top-level module of `src/` (a folder and the file of the same name
//! are one: `engine.rs` and `engine/`) imports another when one of its
//! files imports one of the other's; the parent's own file (`mod.rs`,
//! `lib.rs`) is a node of its own. Each folder's mod.rs says which folders
//! it may import; a circle between folders makes them one unit as surely
//! as between files, even when no two files import each other. Test code
//! (`#[cfg(test)] mod tests { … }`) is left out at this level: it is built
//! into no module, and a folder's tests may drive it with a folder above
//! it (`operation/machine.rs`'s tests start a real `attempt::transport`
//! attempt). The failure names each circle of folders (a → b → a) and
//! every file-level import along it.

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
    /// Inside a `#[cfg(test)] mod … { … }`: test code, built into no module.
    test: bool,
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
    // inline modules: (name, the brace depth inside them, whether under
    // `#[cfg(test)]`)
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0;
    let mut path_attr: Option<String> = None;
    // a `#[cfg(test)]` not yet followed by the item it is on
    let mut cfg_test = false;
    let here = |inline: &[(String, usize, bool)]| -> Vec<String> {
        module.iter().cloned().chain(inline.iter().map(|(name, _, _)| name.clone())).collect()
    };
    let tested = |inline: &[(String, usize, bool)]| inline.iter().any(|(_, _, test)| *test);
    // a path named in code (not in a `use`), where `inline` says
    let inline_path = |inline: &[(String, usize, bool)], path: Vec<String>, line: usize| Named {
        module: here(inline),
        path,
        line,
        reexport: None,
        test: tested(inline),
    };
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        match &token.0 {
            Token::Punct("{") => {
                depth += 1;
                cfg_test = false;
            }
            Token::Punct(";") => cfg_test = false,
            // #[cfg(test)]
            Token::Punct("#")
                if is(tokens.get(i + 1), "[")
                    && ident(tokens.get(i + 2)) == Some("cfg")
                    && is(tokens.get(i + 3), "(")
                    && ident(tokens.get(i + 4)) == Some("test")
                    && is(tokens.get(i + 5), ")") =>
            {
                cfg_test = true
            }
            Token::Punct("}") => {
                if inline.last().is_some_and(|(_, d, _)| *d == depth) {
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
                scan.named.push(inline_path(&inline, path, token.1));
            }
            Token::Ident(word) if word == "mod" => {
                if let Some(name) = ident(tokens.get(i + 1)) {
                    if is(tokens.get(i + 2), ";") && inline.is_empty() {
                        scan.children.push((name.to_string(), path_attr.take()));
                    } else if is(tokens.get(i + 2), "{") {
                        inline.push((name.to_string(), depth + 1, cfg_test));
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
                        test: tested(&inline),
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
                scan.named.push(inline_path(&inline, path, token.1));
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

    /// file → imported file → the first line that imports it; `tests`:
    /// with the imports of test code (`#[cfg(test)] mod tests`).
    fn imports(&self, tests: bool) -> BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> {
        let mut graph: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> = BTreeMap::new();
        for (file, (_, scan)) in &self.scans {
            let children: BTreeSet<String> = scan.children.iter().map(|(c, _)| c.clone()).collect();
            let edges = graph.entry(file.clone()).or_default();
            for named in scan.named.iter().filter(|n| n.reexport.is_none() && (tests || !n.test)) {
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
    let graph = krate.imports(true);
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

/// The graph of `graph`'s files grouped by `group` (a file it returns
/// `None` for is left out): group → imported group → every file-level
/// import that crosses between the two (file, line, imported file).
type Crossings = BTreeMap<PathBuf, BTreeMap<PathBuf, Vec<(PathBuf, usize, PathBuf)>>>;

fn grouped(
    graph: &BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>,
    group: impl Fn(&Path) -> Option<PathBuf>,
) -> Crossings {
    let mut out: Crossings = BTreeMap::new();
    for (file, edges) in graph {
        let Some(from) = group(file) else { continue };
        let crossing = out.entry(from.clone()).or_default();
        for (target, line) in edges {
            match group(target) {
                Some(to) if to != from => {
                    crossing.entry(to).or_default().push((file.clone(), *line, target.clone()))
                }
                _ => {}
            }
        }
    }
    out
}

/// The module of `file` one level under `dir` (a file of `src/`): a
/// folder and the file of the same name are one (`engine.rs` and
/// `engine/`); the parent's own file (`mod.rs`, `lib.rs`) is a node of its
/// own. `None` for a file outside `dir`.
fn top_module(file: &Path, dir: &Path) -> Option<PathBuf> {
    let first = file.strip_prefix(dir).ok()?.iter().next()?;
    let first = Path::new(first);
    Some(match first.to_str() {
        Some("mod.rs" | "lib.rs") => dir.join(first),
        _ => dir.join(first.with_extension("")),
    })
}

/// The shortest way round through each edge of `component` (a strongly
/// connected set of nodes of `graph`), each once: `[a, b, c]` is a → b →
/// c → a, from its least node.
fn cycles(
    graph: &BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>,
    component: &[PathBuf],
) -> BTreeSet<Vec<PathBuf>> {
    let mut found = BTreeSet::new();
    for from in component {
        for to in graph[from].keys().filter(|to| component.contains(to)) {
            // breadth first from `to` back to `from`, inside the component
            let mut came: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([to]);
            while let Some(at) = queue.pop_front() {
                if at == from {
                    break;
                }
                for next in graph[at].keys().filter(|n| component.contains(n)) {
                    if next != to && !came.contains_key(next) {
                        came.insert(next, at);
                        queue.push_back(next);
                    }
                }
            }
            let mut cycle = vec![from.clone()];
            let mut at = from;
            while at != to {
                at = came[at];
                cycle.push(at.clone());
            }
            cycle[1..].reverse();
            let least = (0..cycle.len()).min_by_key(|&i| &cycle[i]).unwrap();
            cycle.rotate_left(least);
            found.insert(cycle);
        }
    }
    found
}

/// The circles between the groups of `graph`, each named as its groups in
/// order and with every file-level import in it, the message a failing
/// test shows; empty when the groups form a DAG.
fn group_circles(graph: &BTreeMap<PathBuf, BTreeMap<PathBuf, usize>>, dir: &Path) -> String {
    let crossings = grouped(graph, |file| top_module(file, dir));
    let edges: BTreeMap<PathBuf, BTreeMap<PathBuf, usize>> = crossings
        .iter()
        .map(|(from, to)| (from.clone(), to.iter().map(|(t, lines)| (t.clone(), lines.len())).collect()))
        .collect();
    let name = |p: &Path| p.strip_prefix(src().parent().unwrap()).unwrap_or(p).display().to_string();
    let mut report = String::new();
    for component in circles(&edges) {
        let names: Vec<String> = component.iter().map(|p| name(p)).collect();
        report.push_str(&format!("a circle between {}:\n", names.join(", ")));
        for cycle in cycles(&edges, &component) {
            let cycle: Vec<String> = cycle.iter().chain(cycle.first()).map(|p| name(p)).collect();
            report.push_str(&format!("  {}\n", cycle.join(" → ")));
        }
        for from in &component {
            for (to, lines) in &crossings[from] {
                if component.contains(to) {
                    report.push_str(&format!("  {} imports {}:\n", name(from), name(to)));
                    for (file, line, target) in lines {
                        report.push_str(&format!("    {}:{} imports {}\n", name(file), line, name(target)));
                    }
                }
            }
        }
    }
    report
}

#[test]
fn no_folder_of_src_host_imports_itself_through_a_circle_of_other_folders() {
    let report = group_circles(&Crate::read(&src()).imports(false), &src().join("host"));
    assert!(report.is_empty(), "import circles between the folders of src/host:\n{report}");
}

#[test]
fn no_top_level_module_of_src_imports_itself_through_a_circle_of_other_modules() {
    let report = group_circles(&Crate::read(&src()).imports(false), &src());
    assert!(report.is_empty(), "import circles between the modules of src/:\n{report}");
}

#[test]
fn a_circle_between_folders_is_found_though_no_two_files_import_each_other() {
    let dir = src().join("host");
    let file = |f: &str| dir.join(f);
    let edge = |from: &str, to: &str, line| (file(from), BTreeMap::from([(file(to), line)]));
    // a/x.rs → b/y.rs → b/z.rs → a/w.rs: no file circle, a circle of folders
    let graph = BTreeMap::from([
        edge("a/x.rs", "b/y.rs", 3),
        edge("b/y.rs", "b/z.rs", 4),
        edge("b/z.rs", "a/w.rs", 5),
        (file("a/w.rs"), BTreeMap::new()),
        edge("c.rs", "a/x.rs", 6),
    ]);
    assert!(circles(&graph).is_empty());
    assert_eq!(
        group_circles(&graph, &dir),
        "a circle between src/host/a, src/host/b:\n  \
         src/host/a → src/host/b → src/host/a\n  \
         src/host/a imports src/host/b:\n    src/host/a/x.rs:3 imports src/host/b/y.rs\n  \
         src/host/b imports src/host/a:\n    src/host/b/z.rs:5 imports src/host/a/w.rs\n"
    );
    // without the way back, a chain: nothing to report
    let chain: BTreeMap<_, _> = graph.into_iter().filter(|(f, _)| f != &file("b/z.rs")).collect();
    assert_eq!(group_circles(&chain, &dir), "");
}

#[test]
fn the_import_scan_sees_a_use_tree_an_inline_path_a_parents_items_a_reexport_and_test_code() {
    let module: Vec<String> = vec!["a".into(), "b".into()];
    let source = "//! use crate::not::this;\n\
                  mod c;\n\
                  use super::{x::{self, Y}, z as w};\n\
                  fn f() { let s = \"crate::nor::this\"; crate::p::q::r(); c::g(); }\n\
                  pub use c::Item;\n\
                  #[serde(serialize_with = \"crate::n::ms\")]\n\
                  #[cfg(test)]\nmod tests { use super::super::T; }\n\
                  mod more { use crate::u::V; }\n";
    let scan = scan(source, &module);
    let named: Vec<(String, usize, bool, bool)> =
        scan.named.iter().map(|n| (n.path.join("::"), n.line, n.reexport.is_some(), n.test)).collect();
    let expected = [
        ("super::x", 3, false, false),
        ("super::x::Y", 3, false, false),
        ("super::z", 3, false, false),
        ("crate::p::q::r", 4, false, false),
        ("c::g", 4, false, false),
        ("c::Item", 5, true, false),
        ("crate::n::ms", 6, false, false),
        ("super::super::T", 8, false, true),
        ("crate::u::V", 9, false, false),
    ];
    let expected: Vec<(String, usize, bool, bool)> =
        expected.iter().map(|(p, l, r, t)| (p.to_string(), *l, *r, *t)).collect();
    assert_eq!(named, expected);
    assert_eq!(scan.children, vec![("c".to_string(), None)]);
    // inside `mod tests`, `super::super` is the file's parent
    let tests = &scan.named[7];
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
