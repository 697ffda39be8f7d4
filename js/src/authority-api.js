// `BudgetAuthority`'s snapshots as objects. The module answers them as JSON
// text: no export of ours answers a lone JS value, which Node 20's V8 can
// abort the process over (src/host/api/exports.rs `PolicyStats`, issue 38).
const parsed = (text) => (text === undefined ? undefined : JSON.parse(text));

/** The glue's `Authority` class with `state()`, `config()` and `stats()` answering objects. */
export const withObjects = (Authority) =>
  class extends Authority {
    state() {
      return parsed(super.state());
    }
    config() {
      return parsed(super.config());
    }
    stats() {
      return JSON.parse(super.stats());
    }
  };
