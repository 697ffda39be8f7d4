//! `RedisExchange`: a fleet's authority kept in Redis (or Valkey) for
//! `saferetry/redis` (`--features redis`, a module of its own). Redis is
//! the storage and the atomicity; every grant is decided here, by the same
//! `Authority` the Durable Object runs, in a read–decide–write loop
//! (`policy::budget::lease::swap`):
//!
//! 1. `store.read(key)`: the saved state and Redis's `TIME`, pipelined
//!    into one round trip;
//! 2. the authority restored from it decides the grant at Redis's time;
//! 3. `store.swap(key, read, next)`: a compare-and-set (a three-line
//!    script that compares and sets, nothing else) writes the new state only
//!    if the key still holds what was read; on a conflict, a jittered wait
//!    and again from 1.
//!
//! Two round trips a grant when nobody else wrote in between. The store
//! (js/src/redis.js) only performs those two commands on a node-redis or
//! ioredis client; each is awaited here (wasm-bindgen-futures) under a
//! gloo-timers limit, `commandMs`, cleared when the answer comes. A command
//! that throws, rejects or is late fails the exchange: the leased client
//! then reports the authority unreachable and falls back. A value under
//! the key that is not a budget's state answers `{ unavailable }` with the
//! `TypeError`'s message naming the field: the client falls back on a
//! budget of its own and `stats().shared.reason` says why.

use alloc::rc::Rc;
use alloc::string::String;
use core::cell::Cell;
use js_sys::{Array, Error, Function, Object, Promise, Reflect, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::authority::{fresh, restored};
use super::expiry::expiry;
use super::wire;
use crate::engine::{race, Either};
use crate::host::shared::bind::{date_now, get, math_random};
use crate::host::shared::convert::to_js;
use crate::policy::budget::lease::swap::{conflict_wait_ms, store_time_ms, StoreClock};
use crate::policy::budget::lease::LeaseRequest;
use crate::policy::number::floor_in;
use crate::policy::schema::MAX_COMMAND_MS;

#[wasm_bindgen]
pub struct RedisExchange {
    store: JsValue,
    key: String,
    command_ms: u64,
    /// Redis's clock as this process sees it (every read refines it).
    clock: Rc<Cell<StoreClock>>,
}

#[wasm_bindgen]
impl RedisExchange {
    /// `store`: `{ read(key), swap(key, expected, next) }` (js/src/redis.js);
    /// `key` and `commandMs`: `redisBudget`'s options as the default
    /// module's reader checked them (`policy::schema::REDIS_BUDGET`,
    /// `commandMs`'s default in place); without a `key`, the budget
    /// `name`'s, `"saferetry:budget:<name>"`.
    #[wasm_bindgen(constructor)]
    pub fn new(store: JsValue, name: &str, key: Option<String>, command_ms: f64) -> RedisExchange {
        let key = key.unwrap_or_else(|| {
            let mut key = String::from("saferetry:budget:");
            key.push_str(name);
            key
        });
        let command_ms = floor_in(command_ms, 1, MAX_COMMAND_MS).unwrap_or(MAX_COMMAND_MS);
        RedisExchange { store, key, command_ms, clock: Rc::default() }
    }

    /// One lease request → a promise of its grant (or `{ unavailable }`).
    /// A malformed request throws a `TypeError` naming the field, before
    /// any command.
    pub fn exchange(&self, request: JsValue) -> Result<Promise, JsValue> {
        let request = wire::request(&request)?;
        let (store, key, ms, clock) =
            (self.store.clone(), self.key.clone(), self.command_ms, self.clock.clone());
        Ok(future_to_promise(async move { exchange(&store, &key, &request, ms, &clock).await }))
    }
}

async fn exchange(
    store: &JsValue,
    key: &str,
    request: &LeaseRequest,
    ms: u64,
    clock: &Cell<StoreClock>,
) -> Result<JsValue, JsValue> {
    let mut conflicts = 0;
    loop {
        let sent = date_now() as u64;
        let read = command(store, "read", &Array::of1(&JsValue::from_str(key)), ms).await?;
        let back = date_now() as u64;
        let time = |i: &str| get(&read, i).as_string();
        let now = time("1").zip(time("2")).and_then(|(s, us)| store_time_ms(&s, &us));
        let now = now.ok_or_else(|| {
            Error::new("saferetry: redis `TIME` answered something other than [seconds, microseconds]")
        })?;
        let mut seen = clock.get();
        seen.observe(now, sent, back);
        clock.set(seen);
        let saved = get(&read, "0").as_string().unwrap_or_default();
        let mut authority = if saved.is_empty() {
            fresh()
        } else {
            let state = JSON::parse(&saved).map_err(|_| not_state(key, "saferetry: the value is not JSON"));
            match state.and_then(|js| wire::state(&js).map_err(|e| not_state(key, &message(e.into())))) {
                Ok(state) => restored(&state),
                Err(reason) => return Ok(unavailable(&reason)),
            }
        };
        let grant = authority.grant(request, now);
        let next = JSON::stringify(&to_js(&authority.state()))?;
        let args = Array::of3(&JsValue::from_str(key), &JsValue::from_str(&saved), &next);
        if command(store, "swap", &args, ms).await?.as_f64() == Some(1.0) {
            return Ok(to_js(&clock.get().local(grant)));
        }
        conflicts += 1;
        let wait = conflict_wait_ms(conflicts, math_random());
        expiry(wait.ok_or_else(|| Error::new("saferetry: redis budget: the key changed under every try"))?)
            .await;
    }
}

/// Calls `store[method](...args)` and awaits its answer within `ms`.
async fn command(store: &JsValue, method: &str, args: &Array, ms: u64) -> Result<JsValue, JsValue> {
    let call = get(store, method).dyn_into::<Function>()?;
    let answer = call.apply(store, args)?;
    match race(adopt(&answer), expiry(ms)).await {
        Either::Left(answer) => answer,
        Either::Right(()) => {
            let mut message = String::from("saferetry: redis did not answer `");
            message.push_str(method);
            message.push_str("` within commandMs");
            Err(Error::new(&message).into())
        }
    }
}

/// An error's `message` (the `TypeError` naming the field).
fn message(error: JsValue) -> String {
    get(&error, "message").as_string().unwrap_or_default()
}

/// Why the value under `key` cannot be this budget's state.
fn not_state(key: &str, why: &str) -> String {
    let mut reason = String::from(why);
    reason.push_str(" (under the redis key `");
    reason.push_str(key);
    reason.push_str("`: not a saferetry budget's state)");
    reason
}

/// `{ unavailable: reason }`: no authority can run on this key.
fn unavailable(reason: &str) -> JsValue {
    let answer = Object::new();
    let _ = Reflect::set(&answer, &JsValue::from_str("unavailable"), &JsValue::from_str(reason));
    answer.into()
}

/// A command's answer, or any value, as a future, as `Promise.resolve`
/// would take it: `JsFuture` calls a promise's `then` directly, and a
/// subclass (or the instance) may override `then` to throw; a fresh
/// promise resolved with the value reads and calls that `then` inside the
/// engine's own resolve function and job, where a throw becomes a
/// rejection.
fn adopt(value: &JsValue) -> JsFuture {
    JsFuture::from(Promise::new(&mut |resolve, _| {
        let _ = resolve.call1(&JsValue::UNDEFINED, value);
    }))
}
