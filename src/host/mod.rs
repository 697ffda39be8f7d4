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
//! for browsers without the redirect hops (`attempt/hops.rs` and
//! `operation/chain.rs`, the `Chain` export: a browser's `fetch` follows
//! redirects itself, so `policy::redirect::follower` never says we do
//! there), `attempt/nohops.rs` and `operation/nochain.rs` in their place, loaded by js/src/web.js and sw.js (4.9 KB gzip less for a
//! page). `--features authority` builds the fleet's module: the authority
//! (`BudgetAuthority`, the readers of lease requests and of its saved
//! state) and the policies' leased clients (`lease/fleet.rs`: a policy with a
//! shared budget reaches its client there by number, `api/leased.rs`), which
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
//! module plus the Redis budget's read–decide–write loop (`lease/redis.rs`), the
//! one place where Rust waits on JavaScript by nature (the Redis client's
//! answers, each under a gloo-timers time limit); the policies that take a
//! `redisBudget` run their clients there. Only a server that imports
//! `saferetry/redis` loads it; the default and the authority's modules
//! are unchanged by it. Each module links only what its exports reach;
//! the helpers they share are compiled into each.
//!
//! One folder per job, each with its module doc: `shared` (what every
//! module links), `operation` (the machine and its mailbox), `attempt`
//! (one attempt's mechanics), `api` (the default module's exports),
//! `lease` (the fleet's module and the Redis one), `extra` (the outbox's
//! and the poll's modules). The default module's folders import `shared`
//! and each other one way only, `api` → `attempt` → `operation`: a type
//! two of them share lives in the lower one (the mailbox's `Chain` in
//! `operation`, the idempotency `Key` a prepared request carries in
//! `attempt`); `lease` and `extra` import `shared` only. No file imports
//! itself through others, nor a folder through other folders
//! (tests/layout.rs).

// What every module shares.
mod shared;
// The fleet's module (with the authority; the Redis module's too).
#[cfg(feature = "authority")]
mod lease;
// The outbox's and the poll's modules.
#[cfg(any(feature = "outbox", feature = "poll"))]
mod extra;

// The default module's own parts: every one is left out of the authority's,
// the outbox's and the poll's modules.
macro_rules! default_module_only {
    ($($item:item)*) => { $(#[cfg(not(any(feature = "authority", feature = "outbox", feature = "poll")))] $item)* };
}
default_module_only! {
    mod api;
    mod attempt;
    mod operation;
}
