//! One attempt on the host, as steps the executor performs and holds
//! (js/src/attempts.js): `fetch` under the attempt's own `AbortController`,
//! then the body as `policy::body` decides — read inside the attempt under
//! the same signal and a `Response` rebuilt with the original status,
//! status text, headers, URL and `redirected`; or the host's own `Response`
//! handed over as soon as its headers arrived, its body still streaming.
//! The machine holds the attempt's number only, never its objects: each
//! step answers plain values (the response's facts, a length, a failure's
//! facts), and what they mean is decided here and in `policy`.
//!
//! Dropping an attempt aborts it: the engine drops the loser of the race
//! against our timers and the caller's signal, so the request and its body
//! read stop at once, whichever fired. `fetch` gets our controller's
//! signal; a body handed over as a stream keeps following the caller's
//! after the hand-over through one listener per caller signal, which aborts
//! the controllers of the bodies still alive (js/src/attempts.js `handed`).

use alloc::rc::Rc;
use alloc::string::String;
use core::future::{poll_fn, Future};
use core::pin::Pin;
use core::task::Poll;

use crate::host::shared::bind::date_now;
use super::failure::{delivered_by, failed, fetch_failed, not_sent, StepFailure, REJECTED, THREW};
use crate::host::operation::glue::{end, reserve, Glue, Held, ABORT, BESIDE, CANCEL, HELD, KEEP};
use super::hops;
use crate::host::operation::chain::Followed;
use crate::host::operation::io::{self, sleep, step, Io, CLONE, CONTROLLED, HAS_BODY, JOIN, LENGTH, MANUAL, READ_NEXT, READ_UP_TO, READ_WHOLE, TYPE};
use super::request::Prepared;
use crate::engine::{race, Answer, Either, Failed, Transport};
use crate::policy::body::{folded, handling, Handling, Inside, Next, ResponseBody};
use crate::policy::classify::{Failure, Stage};
use crate::policy::redirect::{follower, Follower};
use crate::policy::report::{secrets_of, snippet, SNIPPET_READ_BYTES};
use crate::policy::runtime::{body_abort, body_known, holding, short_body_is_cut, BodyAbort, BodyKnown, Holding, Runtime};
use wasm_bindgen::JsValue;

pub struct FetchTransport<'a> {
    /// The `fetch` to call: the policy's `fetch` option, held by the
    /// executor; 0: the global one as core.js resolved it for the call.
    pub fetch: u32,
    pub glue: &'a Glue,
    pub prepared: Prepared,
    pub runtime: Runtime,
    pub max_body_bytes: u64,
    pub response_body: ResponseBody,
}

/// A response ready for the caller, held by the executor as attempt `id`:
/// rebuilt around its buffered body, or the host's own with its body still
/// streaming. Dropped (the operation retries), a body nobody has read is
/// cancelled, not drained.
pub struct Received {
    id: u32,
    /// The buffered body's length.
    buffered: Option<u32>,
    /// The body streams to whoever reads it (none read it yet).
    unread: bool,
    /// For a streamed body: how long after the headers it was handed over
    /// (0 at the headers; later when `auto` read some of it first).
    after_headers_ms: u64,
}

impl Received {
    /// Whether the caller gets the body as it streams.
    pub fn streamed(&self) -> bool {
        self.buffered.is_none() && self.unread
    }

    /// For a streamed body, how long after the headers it was handed over.
    pub fn handed_over_ms(&self) -> Option<u64> {
        self.streamed().then_some(self.after_headers_ms)
    }

    /// The response for the caller (the executor's `handed`): its body is
    /// theirs from here on.
    pub fn hand_over(self) -> u32 {
        let id = self.id;
        core::mem::forget(self);
        id
    }
}

impl Drop for Received {
    fn drop(&mut self) {
        end(self.id, if self.unread { CANCEL } else { 0 });
    }
}

/// An attempt in progress, aborted and let go if dropped before it ended
/// (its start taken back if the executor has not read it yet).
pub(in crate::host) struct Attempt {
    id: u32,
    io: Option<Rc<Io>>,
}

impl Attempt {
    /// Has the executor start attempt `bits` (`crate::host::operation::io::FETCH`'s) of
    /// call `call` with the `fetch` it holds as `fetch` (0: the call's
    /// own). Its step answers the response's facts, or fails where the
    /// start failed.
    pub(in crate::host) fn start(call: u32, fetch: u32, bits: u32) -> Attempt {
        let id = reserve();
        Attempt { id, io: io::fetch(id, call, fetch, bits) }
    }

    pub(in crate::host) fn id(&self) -> u32 {
        self.id
    }

    /// The attempt's number, from here on its holder's to end.
    pub(in crate::host) fn take(mut self) -> u32 {
        let id = self.id;
        self.io = None;
        core::mem::forget(self);
        id
    }

    /// The attempt's response is ready: it is the [`Received`]'s now.
    fn received(self, buffered: Option<u32>, unread: bool, after_headers_ms: u64) -> Received {
        Received { id: self.take(), buffered, unread, after_headers_ms }
    }

    /// The attempt failed: aborted, and kept while the value that failed
    /// it is held as its own.
    pub(in crate::host) fn failed(self, failure: Failed<Held>) -> Failed<Held> {
        let id = self.take();
        let kept = failure.error.as_ref().is_some_and(|e| e.id() == id);
        end(id, if kept { ABORT | KEEP } else { ABORT });
        failure
    }

    /// The attempt ended as the caller's: what it holds is the caller's
    /// to take (a pass-through's response), or its failure, held.
    pub(in crate::host) fn kept(self) -> Held {
        Held::new(self.take())
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        if let Some(io) = &self.io {
            io.unqueue(self.id);
        }
        end(self.id, ABORT);
    }
}

type Outcome = Result<Answer<Received>, Failed<Held>>;

fn too_large() -> Failed<Held> {
    failed(Failure::BodyTooLarge, "body-too-large", "RangeError", None)
}

/// Statuses whose responses never have a body.
fn null_body(status: u16) -> bool {
    matches!(status, 101 | 103 | 204 | 205 | 304)
}

impl FetchTransport<'_> {
    /// A failure after the response started: the request was delivered.
    pub(in crate::host) fn delivered(&self, id: u32, e: &str) -> Failed<Held> {
        delivered_by(id, StepFailure::parse(e))
    }

    /// Starts the attempt (js/src/attempts.js `attempt`): a clone of a
    /// `Request` while its body may be needed again, otherwise the input
    /// itself (a URL, whose `init` body is replayable, or a one-shot stream
    /// sent once); with `redirect: "manual"` where `policy::redirect` says
    /// we follow redirects. [`JOIN`] where the body may be handed over as
    /// a stream (which must follow the caller's signal after the
    /// hand-over): a body read inside the attempt, and the request itself,
    /// stop through the machine when the caller aborts, and a buffered
    /// response follows the caller's signal by itself (`rebuild`).
    /// [`HAS_BODY`] only where whether the response has a body is asked
    /// (`known`, [`FetchTransport::body_known`]).
    fn start(&self, manual: bool, known: BodyKnown) -> Attempt {
        let p = &self.prepared;
        let again = if p.is_request && p.replayable { CLONE } else { 0 };
        let join = if p.signal && self.response_body != ResponseBody::Buffer { JOIN } else { 0 };
        let manual = if manual { MANUAL } else { 0 };
        let body = match self.response_body {
            ResponseBody::Stream => 0,
            ResponseBody::Buffer => LENGTH,
            ResponseBody::Auto => LENGTH | TYPE,
        };
        let asks = if known == BodyKnown::Asked { HAS_BODY } else { 0 };
        let attempt = Attempt::start(p.call, self.fetch, CONTROLLED | again | join | manual | body | asks);
        // A small document the rule names is read in the same step: what
        // `handling` buffers at once (the bound as `read_body` refuses). A
        // HEAD's response has none.
        if let (Some((bound, json)), false) = (folded(self.response_body, self.max_body_bytes), p.method == "HEAD") {
            io::whole(attempt.id(), bound, json);
        }
        attempt
    }

    /// What is known without asking of whether this attempt's response has
    /// a body (`policy::runtime::body_known`): the host's own `fetch`'s
    /// rule, unless another `fetch` may answer (an option, or a wrapper:
    /// `Prepared::wrapped`).
    fn body_known(&self) -> BodyKnown {
        match self.fetch == 0 && !self.prepared.wrapped {
            true => body_known(self.runtime),
            false => BodyKnown::Asked,
        }
    }

    /// A step of the attempt failed: where, by what the redirect chain (if
    /// one was followed) last did.
    fn step_failed(&self, id: u32, e: &str, followed: Option<&Rc<Followed>>) -> Failed<Held> {
        let f = StepFailure::parse(e);
        match (f.at, followed) {
            (THREW, _) => not_sent(Held::new(id)),
            (REJECTED, Some(followed)) => hops::failed(&self.prepared, self.runtime, followed, id, f),
            (REJECTED, None) => fetch_failed(&self.prepared, self.runtime, id, f),
            _ => delivered_by(id, f),
        }
    }

    async fn attempt(&self) -> Outcome {
        let manual = match follower(self.runtime, self.prepared.redirect.as_deref()) {
            #[cfg(not(feature = "browser"))]
            Follower::Us => true,
            #[cfg(feature = "browser")]
            Follower::Us => return Err(hops::unfollowed(self.glue)),
            Follower::Host => false,
        };
        let known = self.body_known();
        let attempt = self.start(manual, known);
        let id = attempt.id();
        // The first response may be a redirect to follow: hop by hop from
        // there (no chain is made for a call that is not redirected), and
        // the step answers the final response's facts. One await for both.
        let mut followed = None;
        let mut facts = loop {
            let facts = match step(id).await {
                Ok(answer) => answer.facts(),
                Err(e) => return Err(attempt.failed(self.step_failed(id, &e.into_text(), followed.as_ref()))),
            };
            let first = followed.is_none() && manual;
            match first.then(|| hops::redirected(&self.prepared, self.runtime, &facts)).flatten() {
                Some((chain, chained)) => {
                    io::follow(id, chain);
                    followed = Some(chained);
                }
                None => break facts,
            }
        };
        if let Err(e) = facts.rate_limit(self.glue, id) {
            let failure = self.delivered(id, &e);
            return Err(attempt.failed(failure));
        }
        let status = facts.status;
        // A HEAD's answer has no body to read, whatever its
        // `Content-Length` says (a browser gives it an empty one, which
        // read as declared would be cut short). Otherwise asked, or known:
        // by Deno's and Bun's rule null for a null body status (an opaque
        // one is `facts.opaque`).
        let head = self.prepared.method == "HEAD";
        let has_body = facts.has_body && !head && !(known == BodyKnown::ByStatus && null_body(status));
        let (cross_origin, declared) = (facts.cors, facts.content_length);
        let handling = match null_body(status) {
            true => Handling::Stream,
            false => handling(self.response_body, facts.content_type.as_deref(), declared),
        };
        // Opaque responses (manual redirects, no-cors) have no readable body.
        let body = match (facts.opaque || !has_body, handling, facts.read) {
            (true, _, _) => attempt.received(None, false, 0),
            (false, Handling::Stream, _) => attempt.received(None, true, 0),
            (false, Handling::Buffer, read) => {
                let length = match read {
                    // Read whole in the step already (`io::WHOLE`'s rule, a
                    // subset of what `handling` buffers at once).
                    Some(got) => self.whole_read(got, declared.unwrap_or(0)),
                    None => match self.read_body(id, declared, cross_origin || facts.content_encoding) {
                        Ok(whole) => self.read_step(id).await.and_then(|got| self.body_read(got, whole)),
                        Err(failure) => Err(failure),
                    },
                };
                match length {
                    Ok(length) => {
                        self.rebuild(id, length);
                        attempt.received(Some(length), false, 0)
                    }
                    Err(failure) => return Err(attempt.failed(failure)),
                }
            }
            (false, Handling::BufferUpTo(inside), _) => match self.read_up_to(id, inside).await {
                Ok(Ok(length)) => {
                    self.rebuild(id, length);
                    attempt.received(Some(length), false, 0)
                }
                Ok(Err(since)) => attempt.received(None, true, since),
                Err(failure) => return Err(attempt.failed(failure)),
            },
        };
        Ok(Answer { status, floor_headers: facts.floor_headers, cross_origin, body })
    }

    /// Reads the whole body, refusing more than `maxBodyBytes`: at once from
    /// `Content-Length` when it describes the body, else while streaming. A
    /// cross-origin response hides `Content-Encoding` unless exposed, so its
    /// `Content-Length` may count compressed bytes: it is streamed. Asks the
    /// executor for the read, whose step [`Self::body_read`] answers: the
    /// `Content-Length` a whole read is to match (`None`: read while
    /// streaming). A plain fn, the step awaited by the attempt itself: no
    /// generator of its own.
    fn read_body(&self, id: u32, declared: Option<u64>, encoded: bool) -> Result<Option<u64>, Failed<Held>> {
        let max = self.max_body_bytes;
        if let (Some(len), false) = (declared, encoded) {
            if len > max {
                return Err(too_large());
            }
            io::read(id, READ_WHOLE, 0);
            return Ok(Some(len));
        }
        // Read while streaming (−1: more than `max` arrived).
        io::read(id, READ_UP_TO, max);
        Ok(None)
    }

    /// The body's length from the step [`Self::read_body`] asked for
    /// (the bytes stay with the attempt): `got` of what a whole read's
    /// `Content-Length` declared, or of a read while streaming.
    fn body_read(&self, got: Option<u32>, whole: Option<u64>) -> Result<u32, Failed<Held>> {
        match whole {
            Some(len) => self.whole_read(got.unwrap_or(0), len),
            None => got.ok_or_else(too_large),
        }
    }

    /// A body read whole (`arrayBuffer()`): `got` bytes of the `len` its
    /// `Content-Length` declared.
    fn whole_read(&self, got: u32, len: u64) -> Result<u32, Failed<Held>> {
        if u64::from(got) < len && short_body_is_cut(self.runtime) {
            // WebKit resolves a body cut short by a clean close: the
            // connection broke after the request was delivered.
            let short = JsValue::from_str("the body ended before its Content-Length");
            let short = Held::hold(self.glue, &short);
            return Err(failed(Failure::Network(Stage::MaybeDelivered), "body-truncated", "TypeError", Some(short)));
        }
        if u64::from(got) > self.max_body_bytes {
            Err(too_large())
        } else {
            Ok(got)
        }
    }

    /// The length a body step of attempt `id` resolved with (`None`: −1,
    /// more than the bound arrived, or the end of the chunks); a failure
    /// after the response started is maybe-delivered.
    /// A plain future, not an `async fn`: no generator around the step.
    fn read_step(&self, id: u32) -> impl Future<Output = Result<Option<u32>, Failed<Held>>> + '_ {
        let mut read = step(id);
        poll_fn(move |cx| {
            Pin::new(&mut read).poll(cx).map(|read| {
                let read = read.map_err(|e| self.delivered(id, &e.into_text()))?;
                Ok(read.number().filter(|n| *n >= 0.0).map(|n| n as u32))
            })
        })
    }

    /// `auto` for a chunked document: read inside the attempt, a chunk per
    /// event, while it arrives as a document does (`policy::body::Inside`
    /// says what next after each chunk). A body that ends meanwhile is
    /// buffered (`Ok(length)`); one still arriving is handed over (`Err(ms
    /// after the headers)`) as what was read followed by the rest (js/src/
    /// body.js `joined`): the network is read once, and the chunks read are
    /// handed out as they are (not copied). A read raced against its
    /// deadline (a text's: `Next::Read { within }`) on the machine's own
    /// timer is handed over still waiting: its chunk goes to the caller.
    /// That timer is set once, at the first read the deadline bounds, for
    /// the deadline itself, and every later read races the same one: one
    /// timer per body, not one per chunk, cleared (dropped) when the read
    /// ends — buffered, handed over, failed, or dropped with its attempt or
    /// operation.
    async fn read_up_to(&self, id: u32, inside: Inside) -> Result<Result<u32, u64>, Failed<Held>> {
        let headers_at = date_now();
        let since = || if inside.timed() { (date_now() - headers_at).max(0.0) as u64 } else { 0 };
        let mut total: u64 = 0;
        let mut at = 0;
        // The deadline's timer once set, and when it fires (ms after the
        // headers).
        let mut deadline: Option<(io::Sleep, u64)> = None;
        loop {
            let within = match inside.next(total, at) {
                Next::Read { within } => within,
                Next::HandOver => return self.hand_over(id, at),
            };
            io::read(id, READ_NEXT, 0);
            // The read, raced against the deadline's timer when one bounds
            // it (one await for both: an unbounded read's never fires).
            let mut timer = within.map(|ms| deadline.get_or_insert_with(|| (sleep(ms, 0, false), at.saturating_add(ms))));
            let fired = poll_fn(|cx| match timer.as_mut() {
                Some((timer, _)) => Pin::new(timer).poll(cx),
                None => Poll::Pending,
            });
            let raced = race(self.read_step(id), fired).await;
            let read = match raced {
                Either::Left(read) => read?,
                // Handed over at the deadline by the timer's own clock at
                // least (`Date.now()` may read a millisecond short of it).
                Either::Right(_) => return self.hand_over(id, since().max(timer.map_or(0, |(_, ends)| *ends))),
            };
            let Some(len) = read else {
                return Ok(Ok(total as u32));
            };
            total = total.saturating_add(u64::from(len));
            at = since();
        }
    }

    /// Hands attempt `id`'s body over, `since` ms after its headers: what
    /// was read, then the rest (the glue's `hand_over`).
    fn hand_over(&self, id: u32, since: u64) -> Result<Result<u32, u64>, Failed<Held>> {
        let failure = self.glue.hand_over(id);
        if !failure.is_empty() {
            return Err(self.delivered(id, &failure));
        }
        Ok(Err(since))
    }

    /// The attempt's response again around its buffered body of `length`
    /// bytes (the glue's `rebuild`). With a caller signal, reading that
    /// body once the signal has aborted fails as `fetch`'s body does
    /// (`policy::runtime::body_abort`); it is checked when read, so no
    /// listener outlives the call. Where the host allows it, the bytes are
    /// held and a body stream made only when asked for
    /// (`policy::runtime::holding`).
    fn rebuild(&self, id: u32, length: u32) {
        let abort = match self.prepared.signal.then(|| body_abort(self.runtime, length == 0)) {
            Some(BodyAbort::AbortError) => 1,
            Some(BodyAbort::Reason) => 2,
            Some(BodyAbort::Unaffected) | None => 0,
        };
        let held = match holding(self.runtime) {
            Holding::Built => 0,
            Holding::Held => HELD,
            Holding::HeldBeside => HELD | BESIDE,
        };
        self.glue.rebuild(id, abort | held);
    }
}

impl Transport for FetchTransport<'_> {
    type Body = Received;
    type Error = Held;

    fn send(&self, _attempt: u32) -> impl Future<Output = Outcome> {
        self.attempt()
    }

    fn snippet(&self, body: &Received) -> Option<String> {
        let length = body.buffered?;
        let head = self.glue.head(body.id, length.min(SNIPPET_READ_BYTES as u32));
        let mut secrets = self.prepared.secrets(self.glue);
        if let Some(cookies) = self.glue.header(body.id, "set-cookie") {
            secrets_of(&cookies, &mut secrets);
        }
        snippet(&head, &secrets)
    }
}
