//! wasm32 only: translates between JavaScript and the policy.
//!
//! Nothing here decides anything: it reads what the executor reports into
//! policy data, asks the executor (js/src/executor.js, js/src/attempts.js)
//! for the work the engine waits on — a step of an attempt, a timer, a
//! hook's call — and writes the engine's results back as JS values. The
//! objects of a call and of its attempts stay in JavaScript: the machine
//! names them by number (`glue::Held`).
//!
//! One crate, six wasm modules (DESIGN §3, "Pay for what you use"): the
//! default build exports the policy, the engine and the host (`Policy`),
//! for Node, Deno, Bun and workerd; `--features browser` builds the same
//! for browsers without the redirect hops (`hops.rs`, the `Chain` export:
//! a browser's `fetch` follows redirects itself, so
//! `policy::redirect::follower` never says we do there), `nohops.rs` in
//! their place, loaded by js/src/web.js and sw.js (4.9 KB gzip less for a
//! page). `--features authority` builds the fleet's module: the authority
//! (`BudgetAuthority`, the readers of lease requests and of its saved
//! state) and the policies' leased clients (`fleet.rs`: a policy with a
//! shared budget reaches its client there by number, `leased.rs`), which
//! only `saferetry/cloudflare`, a policy with a shared budget (a
//! `tabBudget`'s, a carrier of one's own) and `import { BudgetAuthority }`
//! load: a page that only retries carries none of it (4.5 KB gzip);
//! `--features outbox` builds the durable outbox's rules alone
//! (`OutboxRules`), loaded only at a first outbox (js/src/outbox.js): a
//! page that only retries, a leader tab or a `RetryBudget` pays for none
//! of it (7.7 KB gzip); `--features poll` builds submit-then-poll's loop
//! alone (`Poller`, over `policy::poll::Poll`), loaded only at a first
//! `policy.poll()` (js/src/core.js): the submit and each status query are
//! the default module's own operations, so a page that never polls
//! carries no poll loop (issue 37). `--features redis` (which implies
//! `authority`) builds a module for `saferetry/redis` alone: the fleet's
//! module plus the Redis budget's read–decide–write loop (`redis`), the
//! one place where Rust waits on JavaScript by nature (the Redis client's
//! answers, each under a gloo-timers time limit); the policies that take a
//! `redisBudget` run their clients there. Only a server that imports
//! `saferetry/redis` loads it; the default and the authority's modules
//! are unchanged by it. Each module links only what its exports reach;
//! the helpers they share are compiled into each.

#[cfg(feature = "authority")]
mod authority;
#[cfg_attr(any(feature = "authority", feature = "outbox", feature = "poll"), allow(dead_code))]
mod bind;
#[cfg(not(feature = "poll"))]
#[cfg_attr(any(feature = "authority", feature = "outbox"), allow(dead_code))]
mod caller;
#[cfg_attr(any(feature = "authority", feature = "outbox", feature = "poll"), allow(dead_code))]
mod convert;
mod error;
// The Redis budget's time limits (gloo-timers).
#[cfg(feature = "redis")]
mod expiry;
// The leased client (the fleet's module: with the authority, and the Redis
// module's too).
#[cfg(feature = "authority")]
mod fleet;
#[cfg(feature = "outbox")]
mod outbox;
#[cfg(feature = "poll")]
mod poller;
#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "authority")]
mod wire;

// The default module's own parts: every one is left out of the authority's,
// the outbox's and the poll's modules.
macro_rules! default_module_only {
    ($($item:item)*) => { $(#[cfg(not(any(feature = "authority", feature = "outbox", feature = "poll")))] $item)* };
}
default_module_only! {
    mod clock;
    mod exports;
    mod failure;
    mod glue;
    #[cfg(not(feature = "browser"))]
    mod hops;
    #[cfg(feature = "browser")]
    #[path = "nohops.rs"]
    mod hops;
    mod io;
    mod leased;
    mod machine;
    mod options;
    mod outcome;
    mod poll;
    mod read;
    mod replay;
    mod request;
    mod transport;
}
