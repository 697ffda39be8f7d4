//! The browser's module (`--features browser`, `saferetry_web`) in place of
//! `hops.rs`: a browser's `fetch` follows redirects itself, so
//! `policy::redirect::follower` never says we follow them there, and the
//! module carries no chain. Where it does say so — the browser entry
//! loaded outside a browser — the attempt fails before sending.

use crate::host::operation::chain::{Chain, Followed};
use crate::host::operation::glue::{Facts, Glue, Held};
use super::failure::{not_sent, StepFailure};
use super::request::Prepared;
use crate::engine::Failed;
use crate::policy::runtime::Runtime;

/// The attempt where `follower` says we follow: not sent.
pub fn unfollowed(glue: &Glue) -> Failed<Held> {
    let why = "saferetry: this entry cannot follow redirects hop by hop (the browser entry, src/web.js, loaded outside a browser?); \
               see \"Install and bundle\" in saferetry's README";
    not_sent(Held::hold(glue, &js_sys::Error::new(why)))
}

/// No chain here: the attempt never follows redirects itself.
pub fn redirected(_: &Prepared, _: Runtime, _: &Facts) -> Option<(Chain, alloc::rc::Rc<Followed>)> {
    None
}

/// Never called: no attempt here has a chain.
pub fn failed(_: &Prepared, _: Runtime, followed: &Followed, _: u32, _: StepFailure) -> Failed<Held> {
    match *followed {}
}
