//! The durable outbox's rules (docs/outbox.md): which finished writes are
//! kept to be sent later, when a kept entry is due, and what a re-send's
//! outcome makes of it.
//!
//! Why these rules. A kept write is sent again by whichever page, tab,
//! process or Durable Object next runs the outbox, possibly after a crash
//! in the middle of a send: so every kept write must be safe to send more
//! than once. That is exactly the engine's `repeatable` (an idempotent
//! method, or an idempotency key the server deduplicates on, kept with the
//! entry and sent again unchanged); a keyless POST is never kept, even one
//! that surely was not sent, because the next send of it could be the one
//! that is interrupted. Only `try-later` endings are kept (state.rs decides
//! which reasons those are, `offline` among them): `failed` means sending
//! again would be wrong or useless, and a success needs nothing.
//!
//! Time: an entry is never due before the server's Retry-After (the
//! outcome's `retryAt` and `notBefore`); without one, before a full-jitter
//! backoff that grows with its sends. It expires `ttl` after it was kept, and
//! is never kept when it would only become due after that.
//!
//! Storage: the body is kept as bytes, bounded by [`REPLAY_BYTES`] like any
//! body kept for a re-send; a stream body cannot be kept. Credentials
//! (`Authorization`, `Cookie`, `Proxy-Authorization` headers, a URL's
//! userinfo) are written to storage only when the caller opted in.

use alloc::vec::Vec;

use super::backoff::full_jitter;
use super::classify::{normalize_method, Safety, Stage};
use super::limits::REPLAY_BYTES;
use super::schema::{Def, Kind, Unit};
use super::schema::schema;
use super::report::{find, CREDENTIAL_HEADERS};

/// How long an entry is kept when the caller names no `ttl`: a day.
pub const DEFAULT_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// The longest `ttl`: thirty days.
pub const MAX_TTL_MS: u64 = 30 * DEFAULT_TTL_MS;
/// Without a server's Retry-After, an entry waits at least this long, plus
/// a full-jitter draw whose window doubles with each send up to the cap.
pub const RESEND_BASE_MS: u64 = 2_000;
pub const RESEND_CAP_MS: u64 = 5 * 60 * 1000;

/// How long a write is kept: at most 30 days.
pub const TTL: Kind = Kind::Int(Unit::Ms, 1, MAX_TTL_MS);
/// When a write goes into the store ([`Durable`]).
pub const DURABLE: Kind = Kind::Word("after-try-later,before-send,");

schema! {
    /// `outbox(policy, name, options)`.
    pub OUTBOX, open: false;
    // The glue's (js/src/outbox.js); required where the runtime has no
    // default store (`OUTBOX_STORE`).
    "store": Kind::Object(&STORE), Def::None;
    "ttl": TTL, Def::Int(DEFAULT_TTL_MS);
    // The caller's opt-in to writing credentials to storage.
    "credentials": Kind::Bool, Def::Bool(false);
    "durable": DURABLE, Def::Word("after-try-later");
}

schema! {
    /// `syncOutbox(name, options)` (saferetry/sw, js/src/sw.js): the
    /// policy's options and the outbox's, as the pages open it.
    pub SYNC_OUTBOX, open: false;
    "policy": Kind::Object(&super::options::POLICY), Def::None;
    "ttl": TTL, Def::None;
    "credentials": Kind::Bool, Def::None;
}

schema! {
    /// `OutboxObject.send(request)` (saferetry/cloudflare): a write, as an
    /// RPC carries it.
    pub OUTBOX_OBJECT_SEND, open: false;
    "url": Kind::Text(true), Def::Required;
    "method": Kind::Text(true), Def::None;
    "headers": Kind::Any, Def::None;
    "body": Kind::Any, Def::None;
    "idempotencyKey": Kind::Or(&super::options::KEY, &Kind::Bool), Def::None;
    "durable": DURABLE, Def::None;
}

schema! {
    /// An outbox's store: what the outbox calls of it every time (its
    /// `lock`, `wake` and `close`, when it has them, are its own business).
    pub STORE, open: true;
    "list": Kind::Function, Def::Required;
    "put": Kind::Function, Def::Required;
    "delete": Kind::Function, Def::Required;
}

schema! {
    /// An outbox's `store` where the runtime has no default one (Node,
    /// Deno, Bun, workerd): required.
    pub OUTBOX_STORE, open: true;
    "store": Kind::Object(&STORE), Def::Required;
}

schema! {
    /// `send(input, init)`'s own option (the rest of `init` is a call's).
    pub SEND, open: true;
    "durable": DURABLE, Def::None;
}

/// When a write goes into the store (`durable`, per outbox or per send).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durable {
    /// Only once it ended `try-later` (the default).
    #[default]
    AfterTryLater,
    /// Before its first send, claimed (write-ahead): a page closed or a
    /// process killed mid-send leaves it for the next drainer.
    BeforeSend,
}

impl Durable {
    pub fn parse(name: &str) -> Option<Durable> {
        match name {
            "after-try-later" => Some(Durable::AfterTryLater),
            "before-send" => Some(Durable::BeforeSend),
            _ => None,
        }
    }
}

/// The outbox's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub ttl_ms: u64,
    /// The caller opted in to writing credentials to storage.
    pub keep_credentials: bool,
    /// When a write goes into the store, unless a send says otherwise.
    pub durable: Durable,
}

impl Default for Config {
    /// A day, no credentials, after `try-later`.
    fn default() -> Config {
        Config { ttl_ms: DEFAULT_TTL_MS, keep_credentials: false, durable: Durable::default() }
    }
}

impl Config {
    /// The options `schema::read` read of [`OUTBOX`] (each default in
    /// place: `ttl` a whole number of ms in range, `durable` one of its
    /// words), as the glue hands them on.
    pub fn of(ttl_ms: u64, keep_credentials: bool, durable: &str) -> Config {
        Config { ttl_ms, keep_credentials, durable: Durable::parse(durable).unwrap_or_default() }
    }
}

/// How an operation ended (the outcome's `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Succeeded,
    TryLater,
    Failed,
    Cancelled,
}

impl Ended {
    pub fn parse(kind: &str) -> Option<Ended> {
        match kind {
            "succeeded" => Some(Ended::Succeeded),
            "try-later" => Some(Ended::TryLater),
            "failed" => Some(Ended::Failed),
            "cancelled" => Some(Ended::Cancelled),
            _ => None,
        }
    }
}

/// How far the operation's last attempt got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    NotSent,
    MaybeDelivered,
    Responded,
}

impl Progress {
    /// From the last attempt's status or error stage; no attempt at all
    /// (offline from the start, or the queue) was not sent.
    pub fn of(status: Option<u16>, stage: Option<Stage>) -> Progress {
        match (status, stage) {
            (Some(_), _) => Progress::Responded,
            (None, Some(Stage::MaybeDelivered)) => Progress::MaybeDelivered,
            (None, _) => Progress::NotSent,
        }
    }
}

/// What the outbox needs of a finished operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub ended: Ended,
    pub progress: Progress,
    /// When trying again makes sense, if known (the report's `retryAt`).
    pub retry_at: Option<u64>,
    /// Before this, the server asked not to be asked again.
    pub not_before: Option<u64>,
    /// It stopped because its body could not be sent again
    /// (`body-not-replayable`: a stream, or a `Request` over the bound).
    pub body_refused: bool,
}

/// What the outbox needs of the request itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    pub safety: Safety,
    /// The body's size; `None` when it cannot be read as bytes (a stream).
    pub body_bytes: Option<u64>,
    /// It carries credentials (see [`carries_credentials`]).
    pub credentials: bool,
}

impl Write {
    /// From the method, the header names and the URL as sent.
    pub fn of<'a>(
        method: &str,
        header_names: impl Iterator<Item = &'a str> + Clone,
        url: &str,
        body_bytes: Option<u64>,
    ) -> Write {
        let has_key = header_names.clone().any(|n| n.eq_ignore_ascii_case("idempotency-key"));
        let safety = Safety::of(normalize_method(method), has_key);
        Write { safety, body_bytes, credentials: carries_credentials(header_names, url) }
    }
}

/// A credential header (any case), or userinfo in the URL.
pub fn carries_credentials<'a>(mut header_names: impl Iterator<Item = &'a str>, url: &str) -> bool {
    let header = header_names.any(|n| CREDENTIAL_HEADERS.iter().any(|c| n.eq_ignore_ascii_case(c)));
    // On bytes, with the report's plain search: `str` patterns drag panic
    // formatting into the module.
    let url = url.as_bytes();
    let rest = find(url, b"://").and_then(|at| url.get(at.saturating_add(3)..)).unwrap_or(&[]);
    let authority = rest.split(|b| matches!(b, b'/' | b'?' | b'#')).next().unwrap_or(&[]);
    header || authority.contains(&b'@')
}

/// Why a write was not kept (`notKept` in the result and the event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotKept {
    /// It did not end `try-later` (it succeeded, failed, was cancelled).
    NotTryLater,
    /// A non-idempotent request without an idempotency key that may have
    /// reached the server.
    MaybeDelivered,
    /// A non-idempotent request without an idempotency key.
    NoIdempotencyKey,
    /// Its body is a stream.
    BodyNotReplayable,
    /// Its body is larger than [`REPLAY_BYTES`].
    BodyTooLarge,
    /// It carries credentials and the caller did not opt in.
    Credentials,
    /// It would only become due after its expiry.
    ExpiresFirst,
    /// The store refused or failed to write it (decided by the host).
    Storage,
}

impl NotKept {
    pub fn name(self) -> &'static str {
        match self {
            NotKept::NotTryLater => "not-try-later",
            NotKept::MaybeDelivered => "maybe-delivered",
            NotKept::NoIdempotencyKey => "no-idempotency-key",
            NotKept::BodyNotReplayable => "body-not-replayable",
            NotKept::BodyTooLarge => "body-too-large",
            NotKept::Credentials => "credentials",
            NotKept::ExpiresFirst => "expires-first",
            NotKept::Storage => "storage",
        }
    }
}

/// A kept write's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Epoch ms before which it is not sent.
    pub retry_at: u64,
    /// Epoch ms from which it is never sent.
    pub expires_at: u64,
    /// Sends so far, the first one included.
    pub sends: u32,
}

/// The earliest time to send again after `sends` sends: never before the
/// server's word (its Retry-After), nor before [`RESEND_BASE_MS`] from now
/// (a server that says "now" again and again does not make the outbox
/// spin); without a word from the server, our full-jitter backoff. A bad
/// `random` waits the longest window (it cannot come from the host's own
/// `Math.random`).
fn earliest(outcome: &Outcome, now: u64, sends: u32, random: f64) -> u64 {
    let floor = now.saturating_add(RESEND_BASE_MS);
    match outcome.retry_at.into_iter().chain(outcome.not_before).max() {
        Some(server) => server.max(floor),
        None => {
            let jitter = full_jitter(sends, RESEND_BASE_MS, RESEND_CAP_MS, random).unwrap_or(RESEND_CAP_MS);
            floor.saturating_add(jitter)
        }
    }
}

/// Why `write`'s body cannot be stored, if it cannot.
fn body_refusal(write: &Write) -> Option<NotKept> {
    match write.body_bytes {
        None => Some(NotKept::BodyNotReplayable),
        Some(n) if n > REPLAY_BYTES => Some(NotKept::BodyTooLarge),
        Some(_) => None,
    }
}

/// Whether a write may be written to storage at all, whenever that is:
/// it may be sent again, its body is bytes within the bound, it carries
/// no credentials unless the caller opted in. `progress` (how far its last
/// send got) names why a keyless write may not.
fn storable(config: &Config, write: &Write, progress: Progress) -> Result<(), NotKept> {
    if !write.safety.repeatable() {
        return Err(match progress {
            Progress::NotSent => NotKept::NoIdempotencyKey,
            Progress::MaybeDelivered | Progress::Responded => NotKept::MaybeDelivered,
        });
    }
    if let Some(why) = body_refusal(write) {
        return Err(why);
    }
    if write.credentials && !config.keep_credentials {
        return Err(NotKept::Credentials);
    }
    Ok(())
}

/// An entry kept at `now` that is due at `retry_at`, unless it would
/// only be due once expired.
fn schedule(config: &Config, now: u64, retry_at: u64) -> Result<Entry, NotKept> {
    let expires_at = now.saturating_add(config.ttl_ms);
    if retry_at >= expires_at {
        return Err(NotKept::ExpiresFirst);
    }
    Ok(Entry { retry_at, expires_at, sends: 1 })
}

/// Whether a finished operation is kept, and its schedule. Checked in
/// this order: how it ended (a failure its body caused is named by the
/// body), whether it may be sent again, its body, its credentials, its time.
pub fn keep(config: &Config, write: &Write, outcome: &Outcome, now: u64, random: f64) -> Result<Entry, NotKept> {
    if outcome.ended != Ended::TryLater {
        // A failure its body caused is named by the body, as a try-later
        // with that body would be: the outbox could not keep it either.
        return Err(match body_refusal(write) {
            Some(why) if outcome.ended == Ended::Failed && outcome.body_refused => why,
            _ => NotKept::NotTryLater,
        });
    }
    storable(config, write, outcome.progress)?;
    schedule(config, now, earliest(outcome, now, 1, random))
}

/// Whether a write is kept before its first send (write-ahead), and its
/// schedule: when the send (`durable`) or else the outbox asks for it,
/// under the same rule as keeping (its next send could be the interrupted
/// one, so a keyless POST never qualifies). It is written claimed (its
/// first send counted) and due only once that send has surely ended —
/// `hold_ms`, the operation's whole bound (`totalMs`), plus
/// [`RESEND_BASE_MS`] — so no drainer sends it while it is in flight, and
/// the next drainer after a crash sends it then. `Ok(None)`: not asked.
pub fn ahead(
    config: &Config,
    durable: Option<Durable>,
    write: &Write,
    now: u64,
    hold_ms: u64,
) -> Result<Option<Entry>, NotKept> {
    if durable.unwrap_or(config.durable) != Durable::BeforeSend {
        return Ok(None);
    }
    storable(config, write, Progress::NotSent)?;
    let retry_at = now.saturating_add(hold_ms).saturating_add(RESEND_BASE_MS);
    schedule(config, now, retry_at).map(Some)
}

/// Where one entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Due,
    Expired,
    /// Look again at this time (its `retryAt`, or its expiry while offline:
    /// coming back online wakes the outbox anyway).
    Wait(u64),
}

pub fn when(entry: &Entry, now: u64, online: bool) -> When {
    if now >= entry.expires_at {
        When::Expired
    } else if !online {
        When::Wait(entry.expires_at)
    } else if now >= entry.retry_at {
        When::Due
    } else {
        When::Wait(entry.retry_at)
    }
}

/// What a drain does now, over every entry: indices into `entries`. One
/// entry is sent at a time, and the drain plans again after each send
/// (time passes, the network comes and goes, other entries change).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The due entry to send next: the earliest `retryAt` (the order they
    /// were meant to go), the first kept among equals.
    pub next: Option<usize>,
    pub expired: Vec<usize>,
    /// When to look again, if anything else waits (one timer).
    pub wake_at: Option<u64>,
}

pub fn plan(entries: &[Entry], now: u64, online: bool) -> Plan {
    let mut p = Plan::default();
    let mut next: Option<(usize, u64)> = None;
    for (i, entry) in entries.iter().enumerate() {
        match when(entry, now, online) {
            When::Due if next.is_none_or(|(_, at)| entry.retry_at < at) => next = Some((i, entry.retry_at)),
            When::Due => {}
            When::Expired => p.expired.push(i),
            When::Wait(at) => p.wake_at = Some(p.wake_at.map_or(at, |w| w.min(at))),
        }
    }
    p.next = next.map(|(i, _)| i);
    p
}

/// The entry as claimed for one more send, written before that send: a
/// drainer that finds it claimed later knows a send may have happened
/// (harmless: every entry is repeatable).
pub fn claim(entry: &Entry) -> Entry {
    Entry { sends: entry.sends.saturating_add(1), ..*entry }
}

/// What an entry becomes after a re-send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Sent,
    Failed,
    Expired,
    /// Kept, to be sent again from its new `retryAt`.
    Kept(Entry),
    /// The send was cancelled (the outbox closed): kept as it was.
    Unchanged,
}

impl Next {
    pub fn name(&self) -> &'static str {
        match self {
            Next::Sent => "sent",
            Next::Failed => "failed",
            Next::Expired => "expired",
            Next::Kept(_) => "kept",
            Next::Unchanged => "unchanged",
        }
    }
}

/// `entry` (as claimed) after a re-send ended in `outcome`.
pub fn after(entry: &Entry, outcome: &Outcome, now: u64, random: f64) -> Next {
    match outcome.ended {
        Ended::Succeeded => Next::Sent,
        Ended::Failed => Next::Failed,
        Ended::Cancelled => Next::Unchanged,
        Ended::TryLater => {
            let retry_at = earliest(outcome, now, entry.sends, random);
            if retry_at >= entry.expires_at {
                Next::Expired
            } else {
                Next::Kept(Entry { retry_at, ..*entry })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_000_000;

    fn later(retry_at: Option<u64>, not_before: Option<u64>) -> Outcome {
        Outcome { ended: Ended::TryLater, progress: Progress::Responded, retry_at, not_before, body_refused: false }
    }

    #[test]
    fn earliest_never_precedes_the_server_nor_the_base_delay() {
        let o = later(Some(NOW + 5_000), Some(NOW + 9_000));
        assert_eq!(earliest(&o, NOW, 1, 0.5), NOW + 9_000);
        assert_eq!(earliest(&later(Some(NOW - 5), None), NOW, 1, 0.5), NOW + RESEND_BASE_MS);
        assert_eq!(earliest(&later(None, None), NOW, 1, 0.0), NOW + RESEND_BASE_MS);
        assert_eq!(earliest(&later(None, None), NOW, 1, f64::NAN), NOW + RESEND_BASE_MS + RESEND_CAP_MS);
    }
}
