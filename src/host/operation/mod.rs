//! An operation as a sans-IO machine, and its mailbox (the default
//! module's): `machine` holds the machines by number and answers
//! js/src/executor.js what each waits on (`machineWork`, `onSettled`, …),
//! and how it ended with the event that ended it (`outcomeText`); `io` is the mailbox of work a machine's futures queue (an
//! attempt's step, a timer, a read) and of the answers that wake them;
//! `glue` the executor's helpers and `Held` (a JS object named by number);
//! `clock` the engine's clock on the executor's timers; `outcome` what an
//! operation ends with, as JS receives it; `chain` an attempt's redirect
//! chain (`Chain`), which the mailbox holds until js/src/attempts.js takes
//! it for js/src/hops.js (`nochain` in its place in the browser's module,
//! `--features browser`).
//!
//! Imports: `shared` only, of `host`. Imported by `attempt` (its steps are
//! the mailbox's work; `attempt::hops` makes and reads the chains) and
//! `api` (the exports start the machines).

#[cfg(not(feature = "browser"))]
pub(super) mod chain;
#[cfg(feature = "browser")]
#[path = "nochain.rs"]
pub(super) mod chain;
pub(super) mod clock;
pub(super) mod glue;
pub(super) mod io;
pub(super) mod machine;
pub(super) mod outcome;
