// saferetry/redis: a fleet budget kept in Redis (or Valkey), for Node, Deno
// and Bun services run as many processes or containers (docs/fleet-budgets.md "Fleet
// budgets"). Glue only: the Rust `RedisExchange` (its own wasm module,
// src/host/lease/redis.rs) reads the state, decides each grant with the same
// authority a Durable Object runs, and writes it back with a
// compare-and-set; this file only adapts a node-redis or ioredis client to
// the two commands it performs. Neither client is imported here: the
// caller's connected client is passed in. The same module runs the leased
// clients of the policies that take a `redisBudget` (js/src/lease-relay.js,
// which comes with the "saferetry" entry such a service imports for
// `RetryPolicy`: src/node.js, through authority-node.js).
import { readFileSync } from "node:fs";
import * as fleet from "./saferetry_redis.js";
import { loadFailed } from "./load.js";
import { check } from "./options.js";
// The package's own module (its options reader, `check`): every process
// that shares a budget has a policy, and so has it loaded already.
import "./node.js";

const wasm = new URL("./saferetry_redis_bg.wasm", import.meta.url);
try {
  fleet.initSync({ module: readFileSync(wasm) });
} catch (error) {
  throw loadFailed(wasm, error);
}

// Where a policy's leased client runs (js/src/lease-relay.js `LEASE`).
const LEASE = Symbol.for("saferetry.lease");
const lease = () => fleet;

// Sets the key to ARGV[2] only if it still holds ARGV[1] ("" for none):
// it compares and sets, and knows nothing of budgets.
const SWAP = "if (redis.call('GET', KEYS[1]) or '') == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0";

/** `{ read(key) → [value, seconds, micros], swap(key, expected, next) → 1 | 0 }` over the client. */
function storeOf(client) {
  // ioredis: GET and TIME in one pipeline (one write, one round trip).
  if (typeof client?.pipeline === "function" && typeof client.eval === "function") {
    return {
      read: (key) => client.pipeline().get(key).time().exec().then((replies) => {
        for (const [error] of replies) if (error) throw error;
        return [replies[0][1], ...replies[1][1]];
      }),
      swap: (key, expected, next) => client.eval(SWAP, 1, key, expected, next),
    };
  }
  // node-redis: commands sent in the same tick go out in one write.
  if (typeof client?.sendCommand === "function") {
    return {
      read: (key) => Promise.all([client.sendCommand(["GET", key]), client.sendCommand(["TIME"])]).then(([value, time]) => [value, ...time]),
      swap: (key, expected, next) => client.sendCommand(["EVAL", SWAP, "1", key, expected, next]),
    };
  }
  throw new TypeError("redisBudget: client must be a node-redis (`redis`) or ioredis client");
}

/** A `shared` budget for `new RetryPolicy({ shared })`, kept in Redis under
 * `options.key` (default "saferetry:budget:<name>") through `client`, a
 * node-redis or ioredis client (connected; its errors are the caller's to
 * listen to). Every process that names the same budget on the same Redis
 * shares one retry quota and one start rate. One name per upstream. */
export function redisBudget(client, name, options) {
  if (typeof name !== "string" || name === "") throw new TypeError("redisBudget: name must be a non-empty string (one budget per upstream)");
  // Checked by the package's reader (src/policy/schema.rs `REDIS_BUDGET`), defaults in place.
  const [fleetSize, key, commandMs] = check("redisBudget", options);
  const carrier = new fleet.RedisExchange(storeOf(client), name, key, commandMs);
  const budget = { scope: "fleet", exchange: (request) => carrier.exchange(request), [LEASE]: lease };
  if (fleetSize !== undefined) budget.fleetSize = fleetSize;
  return budget;
}
