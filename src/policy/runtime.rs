//! Which `fetch` failures prove the request was never sent, per runtime.
//!
//! Measured, not assumed (`shared/runtime-errors.md`; browsers in
//! `tests/browsers/failure-matrix.md`). Where a runtime's error carries too
//! little detail to prove `NotSent`, the honest answer is `MaybeDelivered`.

use super::classify::Stage;
use super::report::find;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Node,
    Bun,
    Deno,
    Workerd,
    /// Chromium, Firefox, WebKit: a bare `TypeError` for every failure.
    Browser,
}

impl Runtime {
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Node => "node",
            Runtime::Bun => "bun",
            Runtime::Deno => "deno",
            Runtime::Workerd => "workerd",
            Runtime::Browser => "browser",
        }
    }
}

/// The fields of a rejected `fetch` that the rules look at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorShape<'a> {
    pub name: &'a str,
    /// A top-level `code` (Bun).
    pub code: Option<&'a str>,
    pub cause_code: Option<&'a str>,
    pub cause_syscall: Option<&'a str>,
    pub cause_message: Option<&'a str>,
}

impl ErrorShape<'_> {
    /// The most specific code the error offers, for the report.
    pub fn best_code(&self) -> &str {
        self.cause_code.or(self.code).unwrap_or(self.name)
    }
}

/// The request, as far as the rules need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent<'a> {
    pub url: &'a str,
    /// The body was a one-shot stream, so the runtime could not have
    /// re-sent it by itself.
    pub body_streamed: bool,
}

const NODE_CONNECT_CODES: [&str; 5] =
    ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"];
const BUN_CODES: [&str; 3] = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"];

/// How far a request got whose `fetch` rejected (not during the body read,
/// and not through one of our own signals).
pub fn fetch_failure_stage(runtime: Runtime, e: &ErrorShape, sent: Sent) -> Stage {
    let not_sent = match runtime {
        Runtime::Node => {
            let connecting = matches!(e.cause_syscall, Some("connect" | "getaddrinfo"))
                && e.cause_code.is_some_and(|c| NODE_CONNECT_CODES.contains(&c));
            connecting || e.cause_code == Some("UND_ERR_CONNECT_TIMEOUT")
        }
        Runtime::Bun => e.code.is_some_and(|c| BUN_CODES.contains(&c)),
        Runtime::Deno => {
            // Deno re-sends a buffered body by itself on a dead keep-alive
            // connection, and a refused re-send looks like this too.
            sent.body_streamed
                && e.cause_message.is_some_and(|m| {
                    let m = m.as_bytes();
                    find(m, b"client error (Connect)").is_some() && find(m, sent.url.as_bytes()).is_some()
                })
        }
        Runtime::Workerd | Runtime::Browser => false,
    };
    if not_sent {
        Stage::NotSent
    } else {
        Stage::MaybeDelivered
    }
}

#[cfg(test)]
mod tests {
    use super::Runtime::*;
    use super::Stage::*;
    use super::*;

    const URL: &str = "http://127.0.0.1:18099/x?sid=s1";
    const BUFFERED: Sent = Sent { url: URL, body_streamed: false };
    const STREAMED: Sent = Sent { url: URL, body_streamed: true };

    fn node(code: &'static str, syscall: &'static str) -> ErrorShape<'static> {
        ErrorShape {
            name: "TypeError",
            cause_code: Some(code),
            cause_syscall: Some(syscall),
            ..Default::default()
        }
    }

    #[test]
    fn measured_failures_classify_as_the_matrix_says() {
        let deno_refused = "error sending request for url (http://127.0.0.1:18099/x?sid=s1): client error (Connect): tcp connect error: Connection refused (os error 111)";
        let deno_other_url =
            "error sending request for url (http://127.0.0.1:1/): client error (Connect): tcp connect error";
        let bun = |code| ErrorShape { name: "TypeError", code: Some(code), ..Default::default() };
        let deno = |m| ErrorShape { name: "TypeError", cause_message: Some(m), ..Default::default() };
        let table: &[(Runtime, ErrorShape, Sent, Stage)] = &[
            (Node, node("ECONNREFUSED", "connect"), BUFFERED, NotSent),
            (Node, node("ENOTFOUND", "getaddrinfo"), BUFFERED, NotSent),
            (Node, node("EAI_AGAIN", "getaddrinfo"), BUFFERED, NotSent),
            (Node, node("EHOSTUNREACH", "connect"), BUFFERED, NotSent),
            (
                Node,
                ErrorShape { cause_code: Some("UND_ERR_CONNECT_TIMEOUT"), ..Default::default() },
                BUFFERED,
                NotSent,
            ),
            (Node, node("ECONNRESET", "connect"), BUFFERED, MaybeDelivered),
            (Node, node("ECONNRESET", "read"), BUFFERED, MaybeDelivered),
            (
                Node,
                ErrorShape { cause_code: Some("UND_ERR_SOCKET"), ..Default::default() },
                BUFFERED,
                MaybeDelivered,
            ),
            (
                Node,
                ErrorShape { cause_code: Some("ECONNREFUSED"), ..Default::default() },
                BUFFERED,
                MaybeDelivered,
            ),
            (Bun, bun("ECONNREFUSED"), BUFFERED, NotSent),
            (Bun, bun("ENOTFOUND"), BUFFERED, NotSent),
            (Bun, bun("ECONNRESET"), BUFFERED, MaybeDelivered),
            (Deno, deno(deno_refused), STREAMED, NotSent),
            (Deno, deno(deno_refused), BUFFERED, MaybeDelivered),
            (Deno, deno(deno_other_url), STREAMED, MaybeDelivered),
            (Deno, deno("Connection reset by peer (os error 104)"), STREAMED, MaybeDelivered),
            (Workerd, ErrorShape { name: "Error", ..Default::default() }, STREAMED, MaybeDelivered),
            (Browser, ErrorShape { name: "TypeError", ..Default::default() }, STREAMED, MaybeDelivered),
            (Browser, node("ECONNREFUSED", "connect"), BUFFERED, MaybeDelivered),
        ];
        for (i, &(rt, shape, sent, stage)) in table.iter().enumerate() {
            assert_eq!(fetch_failure_stage(rt, &shape, sent), stage, "row {i}: {rt:?} {shape:?}");
        }
    }

    #[test]
    fn the_report_code_is_the_most_specific_one() {
        assert_eq!(node("ECONNREFUSED", "connect").best_code(), "ECONNREFUSED");
        let bun = ErrorShape { name: "TypeError", code: Some("ECONNRESET"), ..Default::default() };
        assert_eq!(bun.best_code(), "ECONNRESET");
        assert_eq!(ErrorShape { name: "TypeError", ..Default::default() }.best_code(), "TypeError");
    }
}
