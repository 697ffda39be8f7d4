// A value kept on an object itself, as a private field only its keeper
// reads: a `WeakMap`'s semantics (invisible to everyone else, collected
// with the object) without a `WeakMap` entry per object, which costs Node
// 1–5 µs a call with the collector's share (an ephemeron per entry). The
// field is added by a class whose base constructor returns the object it
// is given. An object an engine refuses a field (a non-extensible one,
// where a later engine may refuse it) keeps its value in a `WeakMap`.
class Given {
  constructor(object) {
    return object;
  }
}

/** A new keeper: `get(object)` the value `set(object, value)` kept on it. */
export function keeper() {
  class Field extends Given {
    #value;

    constructor(object, value) {
      super(object);
      this.#value = value;
    }

    static set(object, value) {
      if (#value in object) object.#value = value;
      else new Field(object, value);
    }

    static get(object) {
      return #value in object ? object.#value : undefined;
    }
  }
  const refused = new WeakMap();
  return {
    set(object, value) {
      try {
        Field.set(object, value);
      } catch {
        refused.set(object, value);
      }
    },
    get: (object) => Field.get(object) ?? refused.get(object),
  };
}
