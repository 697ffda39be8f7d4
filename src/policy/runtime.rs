//! Which `fetch` failures prove the request was never sent, per runtime.
//!
//! Measured, not assumed (`docs/runtime-errors.md`; browsers in
//! `tests/browsers/failure-matrix.md`). Where a runtime's error carries too
//! little detail to prove `NotSent`, the honest answer is `MaybeDelivered`.

use super::classify::{Failure, Stage};
use super::report::find;

/// A policy's `runtime` is named by its code (`as u8`), in this order, by
/// js/src/shape.js's `RUNTIMES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Node,
    Bun,
    Deno,
    Workerd,
    /// Chromium, Firefox, WebKit: a bare `TypeError` for every failure.
    Browser,
}

/// The fields of a rejected `fetch` that the rules look at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorShape<'a> {
    pub name: &'a str,
    /// The error's own `message`.
    pub message: Option<&'a str>,
    /// It has a `cause` at all.
    pub has_cause: bool,
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
    /// The request fails whatever the network does ([`doomed`]).
    pub doomed: bool,
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

/// What a rejected `fetch` was: a refusal that will repeat ([`refused`]) or
/// a network failure, at the stage [`fetch_failure_stage`] proves; a
/// request the host would not build or send is `NotSent` (rule 2: it surely
/// never reached the server).
pub fn fetch_failure(runtime: Runtime, e: &ErrorShape, sent: Sent) -> Failure {
    let stage = fetch_failure_stage(runtime, e, sent);
    match refused(runtime, e) {
        Some(Refusal::Unsent) => Failure::Refused(Stage::NotSent),
        Some(Refusal::Other) => Failure::Refused(stage),
        None if sent.doomed => Failure::Refused(stage),
        None => Failure::Network(stage),
    }
}

/// Whether a request fails in every attempt, whatever the network does,
/// so that `fetch`'s rejection of it is a refusal even where it looks like
/// a lost connection (a browser's bare `TypeError`, a failed TLS handshake).
/// By the Fetch standard's main fetch: `mode: "same-origin"` to another
/// origin than the caller's is a network error before anything is sent,
/// and a `"no-cors"` request to another origin has an opaque response,
/// which integrity metadata never matches. `cross_origin`: the URL's origin
/// is not the caller's (`None`: the caller has none — Node without undici's
/// global origin, Deno without `--location`, Bun, workerd). Only the
/// browsers enforce the caller's origin (measured: Node, Deno, Bun and
/// workerd send both): elsewhere such a request that is answered passes as
/// the host gives it, and one that fails is not retried all the same.
pub fn doomed(mode: Option<&str>, integrity: bool, cross_origin: Option<bool>) -> bool {
    let fails = match mode {
        Some("same-origin") => true,
        Some("no-cors") => integrity,
        _ => false,
    };
    fails && cross_origin == Some(true)
}

/// Causes undici gives a `fetch failed` that will fail the same way on
/// every attempt: the first [`NODE_ANSWERED`] refuse what came back (a
/// redirect the request's mode refuses, an integrity mismatch, a `Location`
/// it will not follow, too many redirects: measured `sent 1` or more), the
/// others a URL `fetch` will not fetch (its scheme, a blocked port: `sent
/// 0`). (Measured with Node 20.20's undici; transient failures carry a
/// `code` instead, and never one of these messages.)
const NODE_REFUSALS: [&str; 8] = [
    "unexpected redirect",
    "integrity mismatch",
    "URL scheme must be a HTTP(S) scheme",
    "redirect count exceeded",
    "unknown scheme",
    "bad port",
    "about scheme is not supported",
    "not implemented... yet...",
];
const NODE_ANSWERED: usize = 4;

/// What reading a response's body does once the caller's signal aborted
/// (after `fetch` resolved), measured per runtime by the fidelity tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyAbort {
    /// Rejects with the signal's reason (the Fetch standard).
    Reason,
    /// Rejects with a fresh `AbortError` (Node's undici, for a body).
    AbortError,
    /// Reads as usual: the abort no longer reaches it.
    Unaffected,
}

/// `empty`: the body has no bytes. Node rejects with the reason itself for
/// an empty body and with its own `AbortError` otherwise; Bun reads an
/// empty body to its end; everywhere else the reason (workerd and WebKit
/// give a copy or their own error: README, the deliberate differences).
pub fn body_abort(runtime: Runtime, empty: bool) -> BodyAbort {
    match (runtime, empty) {
        (Runtime::Node, false) => BodyAbort::AbortError,
        (Runtime::Bun, true) => BodyAbort::Unaffected,
        _ => BodyAbort::Reason,
    }
}

/// How a buffered body reaches the caller: as a `Response` built around the
/// bytes, or as one that holds them, answers `text()`, `json()`,
/// `arrayBuffer()` and `bytes()` from them and builds its body stream only
/// when someone asks for `body` (or a read the bytes do not answer at once:
/// `blob()`, `formData()`, `clone()`). A body stream costs Node 20 ~25 µs
/// to build (its `ReadableStream` is made transferable), as much as the
/// rest of a buffered call's own work; in workerd, its own read of a
/// `Response` built with the bytes (under a caller's signal, of a stream
/// of ours that checks it) costs 15–27 µs a call more than answering from
/// them (BENCHMARKS.md "A buffered body held in workerd").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holding {
    /// A `Response` built with the bytes (under a caller's signal, a
    /// stream of them that checks it when read).
    Built,
    /// The bytes held, the `Response` built without a body: Node, where
    /// nothing takes a `Response`'s body but through its public methods
    /// and getters.
    Held,
    /// The bytes held, and the `Response` built with them as well: the
    /// body the host's own readers take. Deno's and Bun's servers,
    /// workerd's and a service worker's `respondWith` and the Cache API
    /// read the body a `Response` was built with, not its getters. In
    /// workerd, where it was measured; those readers take the bytes even
    /// once the caller's signal aborted, or the body was read through its
    /// methods (a `Response` read and then returned or cached).
    HeldBeside,
}

/// How a buffered body reaches the caller in `runtime` ([`Holding`]).
pub fn holding(runtime: Runtime) -> Holding {
    match runtime {
        Runtime::Node => Holding::Held,
        Runtime::Workerd => Holding::HeldBeside,
        _ => Holding::Built,
    }
}

/// What the machine knows, without asking, of whether a response of the
/// host's own `fetch` has a body. Asking (its `body` getter) costs where
/// the getter builds a stream the body's later read goes through: Deno's
/// and Bun's `arrayBuffer()` then read through it, and so does WebKit's
/// (BENCHMARKS.md "A successful call in every runtime"). Node's getter
/// costs nothing (its stream is built with the response); workerd's is
/// asked. A `fetch` option or a wrapper in the global slot may answer any
/// `Response`, a 200 without a body too: asked there
/// (src/host/attempt/transport.rs). Checked in every runtime by
/// tests/e2e/suite.mjs ("fetch gives a null body exactly to a null body
/// status…"), and in the browsers under a service worker, which may answer
/// with a `Response` of its own, by tests/browsers/service-worker.mjs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKnown {
    /// Asked of each response.
    Asked,
    /// Null exactly where the Fetch standard says: a null body status, a
    /// HEAD's answer, an opaque response (Deno, Bun).
    ByStatus,
    /// Always there, if empty (browsers): a 204's, 205's and 304's answer
    /// has an empty body, and so has a service worker's answer without one.
    /// Firefox gives a HEAD's answer none and Chromium an opaque one none:
    /// the machine reads neither's either way.
    Always,
}

/// How `runtime`'s own `fetch` tells whether a response has a body ([`BodyKnown`]).
pub fn body_known(runtime: Runtime) -> BodyKnown {
    match runtime {
        Runtime::Deno | Runtime::Bun => BodyKnown::ByStatus,
        Runtime::Browser => BodyKnown::Always,
        _ => BodyKnown::Asked,
    }
}

/// Whether a body shorter than its `Content-Length` can reach us as a
/// clean end: WebKit resolves one cut by a clean close, so we must call it
/// a broken attempt ourselves. The other runtimes reject such a read on
/// their own, and Bun answers a TRACE with a body it never reads: there a
/// short body is what `fetch` gives.
pub fn short_body_is_cut(runtime: Runtime) -> bool {
    runtime == Runtime::Browser
}

/// Whether `fetch` rejects a call whose signal had already aborted with a
/// promise that is rejected when it returns (measured: Deno, Bun and the
/// browsers), rather than one microtask later (Node, workerd).
pub fn fetch_settles_at_once(runtime: Runtime) -> bool {
    !matches!(runtime, Runtime::Node | Runtime::Workerd)
}

/// Whether a response reached through a redirect to another origin has
/// `type` `"cors"` (Node's undici taints it, as the standard does for a
/// CORS request; the others measured answer `"basic"`).
pub fn cross_origin_redirect_is_cors(runtime: Runtime) -> bool {
    runtime == Runtime::Node
}

/// Bun's codes for a redirect it refuses to follow or a response head it
/// will not parse (the first [`BUN_ANSWERED`]), or a request it refuses to
/// send (its network failures carry `ECONNREFUSED`, `ECONNRESET`, …).
const BUN_REFUSALS: [&str; 8] = [
    "UnexpectedRedirect",
    "UnsupportedRedirectProtocol",
    "RedirectURLInvalid",
    "Malformed_HTTP_Response",
    "ERR_INVALID_ARG_VALUE",
    "ERR_INVALID_ARG_TYPE",
    "ERR_INVALID_URL",
    "ERR_BODY_ALREADY_USED",
];
const BUN_ANSWERED: usize = 4;

/// A response head the host's HTTP parser refuses — a header value with a
/// NUL or another byte no value may hold (WPT header-value-null-byte):
/// the server answers the same way every time. Node's `fetch failed` cause
/// carries this code, Deno's this in its message; Bun's is a code above;
/// workerd's ("Network connection lost.") and a browser's cannot be told
/// from a lost connection.
const NODE_BAD_HEAD: &str = "HPE_INVALID_HEADER_TOKEN";
const DENO_BAD_HEAD: &[u8] = b"invalid HTTP header parsed";

/// The only messages of a browser's network failure: Chromium's, Firefox's
/// (and its cut body's) and WebKit's. Every other `TypeError` from `fetch`
/// is a request the browser refused to build (measured in all three:
/// tests/fidelity/error-shapes.md, tests/browsers/failure-matrix.md).
const BROWSER_NETWORK_FAILURES: [&str; 4] = [
    "Failed to fetch",
    "NetworkError when attempting to fetch resource.",
    "Load failed",
    "Content-Length header of network response exceeds response Body.",
];

/// How far a request `fetch` refused ([`refused`]) got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The host would not build or send it: nothing left (every shape
    /// counted here measured `sent 0`, tests/fidelity/error-shapes.md).
    Unsent,
    /// It refused what came back (a redirect its mode forbids, an integrity
    /// mismatch, a `Location` it will not follow), or we cannot tell which:
    /// the failure's own stage applies ([`fetch_failure_stage`]).
    Other,
}

/// Whether a rejected `fetch` failed for a reason that will not change, and
/// how far it got: the host refused the request before anything left (an
/// invalid header, method, mode or URL, a body `fetch` cannot send) or for
/// what the answer was (`redirect: "error"` meeting a redirect, an
/// integrity mismatch, a `Location` it will not follow). Repeating such a
/// request fails the same way, so it ends at once with the host's own
/// error. Only shapes measured in each runtime count
/// (tests/fidelity/error-shapes.md); anything else is an ordinary network
/// failure (`None`), and the stage rules above still say whether it may
/// have been delivered.
pub fn refused(runtime: Runtime, e: &ErrorShape) -> Option<Refusal> {
    let type_error = e.name == "TypeError";
    // Node and Deno: every network failure is `TypeError: fetch failed`
    // with a cause; a request they refuse has its own message and no cause
    // (or, for a URL Node cannot parse, an `ERR_INVALID_URL` one).
    let failed = e.message == Some("fetch failed");
    let own_message = type_error && !failed && (!e.has_cause || e.cause_code == Some("ERR_INVALID_URL"));
    // Node: a `Location` undici could not parse.
    let location = failed && e.cause_code == Some("ERR_INVALID_URL");
    let node_cause = |of: &[&str]| failed && e.cause_message.is_some_and(|m| of.contains(&m));
    let bun_code = |of: &[&str]| e.code.is_some_and(|c| of.contains(&c));
    // The response's head was refused (see [`NODE_BAD_HEAD`]).
    let bad_head = failed
        && match runtime {
            Runtime::Node => e.cause_code == Some(NODE_BAD_HEAD),
            Runtime::Deno => e.cause_message.is_some_and(|m| find(m.as_bytes(), DENO_BAD_HEAD).is_some()),
            _ => false,
        };
    let refuses = match runtime {
        Runtime::Node => own_message || location || bad_head || node_cause(&NODE_REFUSALS),
        Runtime::Deno => own_message || bad_head,
        // Every network failure has a code.
        Runtime::Bun => bun_code(&BUN_REFUSALS) || (own_message && e.code.is_none()),
        // Network failures are plain `Error`s ("Network connection lost.").
        Runtime::Workerd => type_error && !e.has_cause,
        // WebKit refuses a stream upload with a `NotSupportedError`.
        Runtime::Browser => {
            (type_error && !e.message.is_some_and(|m| BROWSER_NETWORK_FAILURES.contains(&m)))
                || e.name == "NotSupportedError"
        }
    };
    // Whether it may have refused what came back.
    let answered = match runtime {
        Runtime::Node => location || bad_head || node_cause(&NODE_REFUSALS[..NODE_ANSWERED]),
        // Deno and workerd refuse an answer with their own message too; each
        // one measured names the redirect, or the base URL its `Location`
        // was resolved against.
        Runtime::Deno | Runtime::Workerd => {
            bad_head
                || e.message.map(str::as_bytes).is_some_and(|m| find(m, b"redirect").or(find(m, b" with base ")).is_some())
        }
        Runtime::Bun => bun_code(&BUN_REFUSALS[..BUN_ANSWERED]),
        // Every failure after sending has one of the network failure
        // messages (a refused redirect or integrity mismatch included): any
        // other is a request the browser would not build.
        Runtime::Browser => false,
    };
    refuses.then_some(if answered { Refusal::Other } else { Refusal::Unsent })
}

#[cfg(test)]
mod tests {
    use super::Runtime::*;
    use super::Stage::*;
    use super::*;

    const URL: &str = "http://127.0.0.1:18099/x?sid=s1";
    const BUFFERED: Sent = Sent { url: URL, body_streamed: false, doomed: false };
    const STREAMED: Sent = Sent { url: URL, body_streamed: true, doomed: false };

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

    /// A measured rejection: name, message, whether it had a cause, and the
    /// cause's code and message.
    fn shape(
        name: &'static str,
        message: &'static str,
        cause: Option<(Option<&'static str>, &'static str)>,
    ) -> ErrorShape<'static> {
        ErrorShape {
            name,
            message: Some(message),
            has_cause: cause.is_some(),
            cause_code: cause.and_then(|c| c.0),
            cause_message: cause.map(|c| c.1),
            ..Default::default()
        }
    }

    #[test]
    fn node_rejections_that_repeat_are_refused_and_network_failures_are_not() {
        let failed = |code, message| shape("TypeError", "fetch failed", Some((code, message)));
        let table: &[(ErrorShape, bool)] = &[
            (failed(None, "unexpected redirect"), true),
            (failed(None, "integrity mismatch"), true),
            (failed(None, "URL scheme must be a HTTP(S) scheme"), true),
            (failed(Some("ERR_INVALID_URL"), "Invalid URL"), true),
            (failed(None, "unknown scheme"), true),
            (failed(None, "bad port"), true),
            (failed(None, "redirect count exceeded"), true),
            (shape("TypeError", "Headers.append: \"a\u{0}b\" is an invalid header value.", None), true),
            (shape("TypeError", "Request with GET/HEAD method cannot have body.", None), true),
            (shape("TypeError", "RequestInit: duplex option is required when sending a body.", None), true),
            (shape("TypeError", "'CONNECT' HTTP method is unsupported.", None), true),
            (
                shape("TypeError", "Failed to parse URL from http://[bad/", Some((Some("ERR_INVALID_URL"), "Invalid URL"))),
                true,
            ),
            (failed(Some("ECONNREFUSED"), "connect ECONNREFUSED 127.0.0.1:9"), false),
            (failed(Some("UND_ERR_SOCKET"), "other side closed"), false),
            (failed(Some("ECONNRESET"), "read ECONNRESET"), false),
            (failed(Some("UND_ERR_HEADERS_TIMEOUT"), "Headers Timeout Error"), false),
            // A response head with a NUL in a header value (measured, Node 20.20).
            (failed(Some("HPE_INVALID_HEADER_TOKEN"), "Response does not match the HTTP/1.1 protocol (Invalid header value char)"), true),
            (failed(Some("HPE_INVALID_CONSTANT"), "Response does not match the HTTP/1.1 protocol (Expected HTTP/)"), false),
            // A test tool's simulated network error (MSW) carries a cause.
            (shape("TypeError", "Failed to fetch", Some((None, "Response.error()"))), false),
            (shape("TypeError", "fetch failed", None), false),
            (shape("Error", "boom", None), false),
        ];
        for (i, (e, refuses)) in table.iter().enumerate() {
            assert_eq!(refused(Node, e).is_some(), *refuses, "row {i}: {e:?}");
        }
    }

    #[test]
    fn deno_bun_workerd_and_browser_refusals_are_told_from_network_failures() {
        let bun = |code: Option<&'static str>, message| ErrorShape { code, ..shape("TypeError", message, None) };
        let deno_net = "error sending request for url (http://127.0.0.1:18099/x): client error (Connect)";
        let deno_bad_head = "error sending request from 127.0.0.1:37344 for http://127.0.0.1:47311/x (127.0.0.1:47311): client error (SendRequest): invalid HTTP header parsed";
        let table: &[(Runtime, ErrorShape, bool)] = &[
            (Deno, shape("TypeError", "Fetch failed: Encountered redirect while redirect mode is set to 'error'", None), true),
            (Deno, shape("TypeError", "Fetch failed: Can not redirect to a non HTTP(s) url", None), true),
            (Deno, shape("TypeError", "Invalid header value: \"a\u{0}b\"", None), true),
            (Deno, shape("TypeError", "Fetch failed: Requests to port 1 are blocked", None), true),
            (Deno, shape("TypeError", "Url scheme 'ftp' not supported", None), true),
            (Deno, shape("TypeError", "fetch failed", Some((None, deno_net))), false),
            (Deno, shape("TypeError", "error reading a body from connection", Some((None, "x"))), false),
            // A response head with a NUL in a header value (measured, Deno 2.9).
            (Deno, shape("TypeError", "fetch failed", Some((None, deno_bad_head))), true),
            (Bun, bun(Some("Malformed_HTTP_Response"), "Malformed_HTTP_Response fetching \"http://127.0.0.1/x\"."), true),
            (Bun, bun(Some("UnexpectedRedirect"), "UnexpectedRedirect fetching \"http://127.0.0.1/x\"."), true),
            (Bun, bun(Some("UnsupportedRedirectProtocol"), "UnsupportedRedirectProtocol fetching"), true),
            (Bun, bun(Some("RedirectURLInvalid"), "RedirectURLInvalid: Redirect URL in Location header is invalid."), true),
            (Bun, bun(Some("ERR_INVALID_ARG_VALUE"), "fetch() request with GET/HEAD method cannot have body."), true),
            (Bun, bun(None, "Header 'x-a' has invalid value"), true),
            (Bun, bun(Some("ERR_INVALID_ARG_TYPE"), "redirect must be one of 'follow', 'manual' or 'error'"), true),
            (Bun, bun(Some("ERR_BODY_ALREADY_USED"), "Request body already used"), true),
            (Bun, bun(Some("ECONNREFUSED"), "ECONNREFUSED: Unable to connect."), false),
            (Bun, bun(Some("ECONNRESET"), "ECONNRESET: The socket connection was closed unexpectedly."), false),
            (Bun, bun(Some("ENOTFOUND"), "getaddrinfo ENOTFOUND nonexistent.invalid"), false),
            (Workerd, shape("TypeError", "Invalid redirect value, must be one of \"follow\" or \"manual\"", None), true),
            (Workerd, shape("Error", "Network connection lost.", None), false),
            (Workerd, shape("Error", "internal error; reference = tqi2c2cjlgke36t50lhv085p", None), false),
            (Browser, shape("TypeError", "Failed to execute 'fetch' on 'Window': Invalid value", None), true),
            (Browser, shape("TypeError", "Window.fetch: Request cannot have a body", None), true),
            (Browser, shape("TypeError", "Failed to fetch", None), false),
            (Browser, shape("TypeError", "NetworkError when attempting to fetch resource.", None), false),
            (Browser, shape("TypeError", "Load failed", None), false),
            (Browser, shape("TypeError", "Header 'X-Test' has invalid value: 'a\u{0}b'", None), true),
            (Browser, shape("TypeError", "URL is not valid or contains user credentials.", None), true),
            (Browser, shape("TypeError", "Type error", None), true),
            (Browser, shape("NotSupportedError", "ReadableStream uploading is not supported", None), true),
            (Browser, shape("AbortError", "Fetch is aborted", None), false),
        ];
        for (i, (rt, e, refuses)) in table.iter().enumerate() {
            assert_eq!(refused(*rt, e).is_some(), *refuses, "row {i}: {rt:?} {e:?}");
        }
    }

    #[test]
    fn a_request_the_host_would_not_build_is_refused_not_sent_and_a_refused_answer_keeps_its_stage() {
        use Failure::{Network, Refused};
        let failed = |code, message| shape("TypeError", "fetch failed", Some((code, message)));
        let bun = |code: Option<&'static str>, message| ErrorShape { code, ..shape("TypeError", message, None) };
        let credentials = "Request cannot be constructed from a URL that includes credentials: http://user:pass@127.0.0.1/x";
        let bad_url = shape("TypeError", "Failed to parse URL from http://[bad/", Some((Some("ERR_INVALID_URL"), "Invalid URL")));
        let chromium_credentials = "Failed to execute 'fetch' on 'Window': Request cannot be constructed from a URL that includes credentials: http://user:pass@127.0.0.1/x";
        let doomed = Sent { doomed: true, ..BUFFERED };
        // Measured (tests/fidelity/error-shapes.md): the first of each runtime's rows sent nothing.
        let table: &[(Runtime, ErrorShape, Sent, Failure)] = &[
            (Node, shape("TypeError", credentials, None), BUFFERED, Refused(NotSent)),
            (Node, shape("TypeError", "'CONNECT' HTTP method is unsupported.", None), BUFFERED, Refused(NotSent)),
            (Node, bad_url, BUFFERED, Refused(NotSent)),
            (Node, failed(None, "bad port"), BUFFERED, Refused(NotSent)),
            (Node, failed(None, "unknown scheme"), BUFFERED, Refused(NotSent)),
            (Node, failed(None, "unexpected redirect"), BUFFERED, Refused(MaybeDelivered)),
            (Node, failed(None, "integrity mismatch"), BUFFERED, Refused(MaybeDelivered)),
            (Node, failed(Some("ERR_INVALID_URL"), "Invalid URL"), BUFFERED, Refused(MaybeDelivered)),
            (Node, failed(None, "redirect count exceeded"), BUFFERED, Refused(MaybeDelivered)),
            (Node, failed(Some("UND_ERR_SOCKET"), "other side closed"), BUFFERED, Network(MaybeDelivered)),
            (Node, failed(Some("HPE_INVALID_HEADER_TOKEN"), "Response does not match the HTTP/1.1 protocol (Invalid header value char)"), BUFFERED, Refused(MaybeDelivered)),
            (Deno, shape("TypeError", "Invalid header value: \"a\u{0}b\"", None), BUFFERED, Refused(NotSent)),
            (Deno, shape("TypeError", "Fetch failed: Requests to port 25 are blocked", None), BUFFERED, Refused(NotSent)),
            (
                Deno,
                shape("TypeError", "Fetch failed: Encountered redirect while redirect mode is set to 'error'", None),
                BUFFERED,
                Refused(MaybeDelivered),
            ),
            (Deno, shape("TypeError", "Fetch failed: Maximum number of redirects (20) reached", None), BUFFERED, Refused(MaybeDelivered)),
            (Bun, bun(Some("ERR_INVALID_ARG_VALUE"), "fetch() request with GET/HEAD method cannot have body."), BUFFERED, Refused(NotSent)),
            (Bun, bun(None, "Header 'X-Test' has invalid value"), BUFFERED, Refused(NotSent)),
            (Bun, bun(Some("UnexpectedRedirect"), "UnexpectedRedirect fetching \"http://127.0.0.1/x\"."), BUFFERED, Refused(MaybeDelivered)),
            (Bun, bun(Some("Malformed_HTTP_Response"), "Malformed_HTTP_Response fetching \"http://127.0.0.1/x\"."), BUFFERED, Refused(MaybeDelivered)),
            (Workerd, shape("TypeError", "Invalid header value.", None), BUFFERED, Refused(NotSent)),
            (Workerd, shape("TypeError", "Invalid HTTP method string: CONNECT", None), BUFFERED, Refused(NotSent)),
            (Workerd, shape("TypeError", "Invalid Location header; unable to follow redirect.", None), BUFFERED, Refused(MaybeDelivered)),
            (Workerd, shape("TypeError", "Too many redirects.http://127.0.0.1/r?hops=1", None), BUFFERED, Refused(MaybeDelivered)),
            (Browser, shape("TypeError", chromium_credentials, None), BUFFERED, Refused(NotSent)),
            (Browser, shape("TypeError", "URL is not valid or contains user credentials.", None), BUFFERED, Refused(NotSent)),
            (Browser, shape("NotSupportedError", "ReadableStream uploading is not supported", None), STREAMED, Refused(NotSent)),
            (Browser, shape("TypeError", "Failed to fetch", None), doomed, Refused(MaybeDelivered)),
            (Browser, shape("TypeError", "Failed to fetch", None), BUFFERED, Network(MaybeDelivered)),
        ];
        for (i, &(rt, e, sent, failure)) in table.iter().enumerate() {
            assert_eq!(fetch_failure(rt, &e, sent), failure, "row {i}: {rt:?} {e:?}");
        }
    }

    #[test]
    fn a_request_that_fails_whatever_the_network_does_is_doomed_wherever_the_caller_has_an_origin() {
        // Mode, integrity, cross-origin (None: the caller has no origin), doomed.
        type Row = (Option<&'static str>, bool, Option<bool>, bool);
        let table: &[Row] = &[
            (Some("same-origin"), false, Some(true), true),
            (Some("same-origin"), true, Some(true), true),
            (Some("same-origin"), false, Some(false), false),
            (Some("same-origin"), false, None, false),
            (Some("no-cors"), true, Some(true), true),
            (Some("no-cors"), false, Some(true), false),
            (Some("no-cors"), true, Some(false), false),
            (Some("no-cors"), true, None, false),
            (Some("cors"), true, Some(true), false),
            (None, true, Some(true), false),
        ];
        for &(mode, integrity, cross, expected) in table {
            assert_eq!(doomed(mode, integrity, cross), expected, "{mode:?} {integrity} {cross:?}");
        }
    }

    #[test]
    fn a_doomed_request_s_rejection_is_refused_even_when_it_looks_like_a_lost_connection() {
        let lost = ErrorShape { name: "TypeError", message: Some("Failed to fetch"), ..Default::default() };
        let doomed = Sent { doomed: true, ..BUFFERED };
        assert_eq!(fetch_failure(Browser, &lost, BUFFERED), Failure::Network(MaybeDelivered));
        assert_eq!(fetch_failure(Browser, &lost, doomed), Failure::Refused(MaybeDelivered));
        // Node with undici's global origin: https to a plain-HTTP port (a
        // failed TLS handshake) is a network failure unless doomed.
        let tls = shape("TypeError", "fetch failed", Some((Some("EPROTO"), "write EPROTO")));
        assert_eq!(fetch_failure(Node, &tls, BUFFERED), Failure::Network(MaybeDelivered));
        assert_eq!(fetch_failure(Node, &tls, doomed), Failure::Refused(MaybeDelivered));
    }

    #[test]
    fn a_body_read_after_the_abort_fails_as_each_runtime_measured() {
        use BodyAbort::*;
        let table = [
            (Node, false, AbortError),
            (Node, true, Reason),
            (Bun, false, Reason),
            (Bun, true, Unaffected),
            (Deno, false, Reason),
            (Deno, true, Reason),
            (Workerd, false, Reason),
            (Browser, false, Reason),
            (Browser, true, Reason),
        ];
        for (rt, empty, expected) in table {
            assert_eq!(body_abort(rt, empty), expected, "{rt:?} empty {empty}");
        }
        assert!(short_body_is_cut(Browser) && !short_body_is_cut(Bun) && !short_body_is_cut(Node));
        let held = [Node, Bun, Deno, Workerd, Browser].map(holding);
        use Holding::*;
        assert_eq!(held, [Held, Built, Built, HeldBeside, Built], "bytes held in Node, and beside the body in workerd");
        let known = [Node, Bun, Deno, Workerd, Browser].map(body_known);
        use BodyKnown::*;
        assert_eq!(known, [Asked, ByStatus, ByStatus, Asked, Always], "a body asked of Node's and workerd's responses only");
        assert!(cross_origin_redirect_is_cors(Node) && !cross_origin_redirect_is_cors(Deno));
        assert!(fetch_settles_at_once(Deno) && fetch_settles_at_once(Browser) && !fetch_settles_at_once(Node));
    }

    #[test]
    fn the_report_code_is_the_most_specific_one() {
        assert_eq!(node("ECONNREFUSED", "connect").best_code(), "ECONNREFUSED");
        let bun = ErrorShape { name: "TypeError", code: Some("ECONNRESET"), ..Default::default() };
        assert_eq!(bun.best_code(), "ECONNRESET");
        assert_eq!(ErrorShape { name: "TypeError", ..Default::default() }.best_code(), "TypeError");
    }
}
