//! A `Request` body kept for a possible re-send is kept only up to
//! [`REPLAY_BYTES`] (DESIGN rule 13).
//!
//! Why: a `Request`'s body is a stream, so keeping it for a second attempt
//! means cloning (teeing) it — and the branch we keep fills up with
//! everything the attempt sends: a large upload doubles memory. So before
//! the first attempt we read a copy up to the bound. A body that ends there
//! is kept as bytes (every attempt sends them); a longer one is sent once,
//! from the caller's own stream, and a retry stops with
//! `body-not-replayable`. A URL input's `init.body` needs none of this: it
//! is the caller's own value (string, buffer, Blob, FormData), which `fetch`
//! reads anew for each attempt.

use crate::host::operation::glue::Glue;
use crate::host::operation::io::{read, Answer, COPY_UP_TO, COPY_WHOLE};
use super::request::{Body, Prepared};
use crate::policy::limits::REPLAY_BYTES;

/// Whether `prepared` keeps a `Request` body for a re-send: a `Request`
/// whose body is a stream or, where the host shows none (Firefox), whose
/// method carries one.
pub fn needed(prepared: &Prepared) -> bool {
    let hidden = prepared.body == Body::Hidden && !matches!(prepared.method.as_str(), "GET" | "HEAD");
    prepared.replayable && prepared.is_request && (prepared.body == Body::Stream || hidden)
}

/// Bounds what `prepared` keeps for a re-send (see the module docs): a copy
/// is read up to the bound (without streams, as Firefox, read whole and
/// then bounded), and a body that ends there is what the call sends from
/// now on; otherwise it is sent once. Asks the executor for the copy, whose
/// step (`io::step` of the call) [`kept`] answers; `false`: none is needed.
/// Plain fns, the step awaited by the caller: no generator of their own.
pub fn bound(prepared: &Prepared) -> bool {
    if !needed(prepared) {
        return false;
    }
    read(prepared.call, if prepared.body == Body::Hidden { COPY_WHOLE } else { COPY_UP_TO }, REPLAY_BYTES);
    true
}

/// What the copy's step answered (`None`: it failed, or it did not end in
/// time): whether the body is kept for a re-send.
pub fn kept(prepared: &mut Prepared, glue: &Glue, step: Option<Answer>) {
    let length = step.and_then(Result::ok).and_then(|n| n.number()).filter(|n| *n >= 0.0);
    let kept = length.is_some_and(|n| n as u64 <= REPLAY_BYTES) && glue.replay_keep(prepared.call);
    if !kept {
        prepared.replayable = false;
    }
}
