//! The host side of submit-then-poll: reads the poll spec, finds the status
//! request from the submit's response, and asks the caller's `verdict`
//! hook about each poll.
//!
//! The hooks themselves are the executor's (js/src/core.js reads them off
//! the spec and hands them to `drive`): here they are work
//! (`super::io::called`) — "call the status hook with the submit's
//! response", "call the verdict hook with this poll's" — and what they
//! answered comes back as an event, held by the executor: the machine
//! asks what it is (a promise to await, a word) by number. What an answer
//! means stays here and in `policy::poll`.

use wasm_bindgen::{JsCast, JsValue};

use super::glue::{Glue, Held};
use super::io::{awaited, called, held, STATUS_HOOK, VERDICT_HOOK};
use super::options::Key;
use super::read::Reader;
use super::request::{prepare, Given, Prepared};
use super::transport::Received;
use crate::engine::poll::Judge;
use crate::engine::Answer;
use crate::policy::poll::{default_verdict, Poll, PollSchedule, PollVerdict, POLL};

pub struct Spec {
    pub schedule: PollSchedule,
    /// The status request's URL or `Request`, held by the executor; `None`
    /// when the status hook finds it from the submit's `Response`.
    pub target: Option<Held>,
    /// Whether the caller gave a `verdict` hook.
    pub verdict: bool,
}

/// Reads the spec `js`, whose `status` and `verdict` js/src/core.js read
/// (once, for the executor) and hands here to be checked: every check is
/// `policy::poll::POLL`'s.
pub fn read(glue: &Glue, js: &JsValue, status: JsValue, verdict: JsValue) -> Result<Spec, JsValue> {
    let reader: &Reader = glue.unchecked_ref();
    let values = reader.read(&POLL, js, "poll", false)?;
    let status = reader.given(&POLL, Poll::Status.into(), status, "poll")?;
    let verdict = reader.given(&POLL, Poll::Verdict.into(), verdict, "poll")?;
    let target = status.raw().filter(|s| !s.is_function()).map(|s| Held::keep(s, &JsValue::UNDEFINED));
    Ok(Spec { schedule: PollSchedule::of(&values), target, verdict: verdict.raw().is_some() })
}

/// The status request: the spec's URL or `Request`, or what its hook
/// returns for (a clone of) the response of the submit's attempt
/// `submitted`. It is a `GET` with the headers and signal of the caller's
/// `init`, held as `init` (authorization usually applies to both). With it,
/// the owner of the call the executor holds for it; or what failed, held.
pub async fn status_request(
    glue: &Glue,
    spec: &Spec,
    submitted: u32,
    init: &Held,
) -> Result<(Prepared, Held), Held> {
    let found;
    let target = match &spec.target {
        Some(target) => target,
        None => {
            found = settle(glue, held(called(STATUS_HOOK, submitted).await)?).await?;
            &found
        }
    };
    let (given, owner) = Given::from_array(&glue.status_call(target.id(), init.id(), "GET"));
    prepare(glue, given, &Key::None).map(|p| (p, owner)).map_err(|u| Held::hold(glue, &u.error))
}

/// The caller's `verdict(response)` (sync or async), when it gave one
/// (`true`); without one, the status decides. A throwing hook (or a
/// response that cannot be cloned for it) or an unknown answer is `fatal`:
/// a poll loop must never spin on a verdict nobody can read. The response
/// is the executor's, named by the attempt's number.
pub struct JsJudge(pub bool, pub Glue);

impl Judge<Received> for JsJudge {
    async fn judge(&self, answer: &Answer<Received>) -> PollVerdict {
        if !self.0 {
            return default_verdict(answer.status);
        }
        let said = match held(called(VERDICT_HOOK, answer.body.id()).await) {
            Ok(v) => settle(&self.1, v).await.ok(),
            Err(_) => None,
        };
        let word = said.and_then(|v| self.1.text(v.id()));
        word.and_then(|s| PollVerdict::parse(&s)).unwrap_or(PollVerdict::Fatal)
    }
}

/// Awaits `value` when it is a promise (a poll hook may answer either way;
/// a thenable that is not a `Promise` is an answer, not a promise), through
/// the operation's executor, which adopts it by a fresh promise of its own
/// (a `then` that throws becomes a rejection).
pub async fn settle(glue: &Glue, value: Held) -> Result<Held, Held> {
    match glue.is_promise(value.id()) {
        true => held(awaited(value.id()).await),
        false => Ok(value),
    }
}
