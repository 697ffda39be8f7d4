//! The hand-over of a chunked document that outgrew what `auto` reads inside
//! the attempt: a `ReadableStream` of the chunks already read, then the rest
//! of the host's body, pulled chunk by chunk as the caller reads (issue 18).
//!
//! It is a pull source, not a task of ours: `pull` hands out the next chunk
//! read earlier, or asks the host's reader for one, only when the caller
//! asks (high-water mark 0: nothing is read ahead of the caller, the host's
//! own stream applies its backpressure); `cancel` is the host reader's own.
//! Its state (the host's reader, the chunks not handed out yet, the
//! caller's signal) lives only in the arguments bound to those functions,
//! so it is reachable only through the caller's stream: nothing in wasm
//! holds it, no promise of ours waits on it. A caller that drops the
//! response lets the whole of it be collected.
//!
//! Collecting it is not enough everywhere (measured, tests/leaks/README.md):
//! Deno, Bun and workerd then release the host's body and its connection,
//! but in Node and Chromium the connection holds the host's body, which our
//! reader has locked, and a locked body is one undici does not cancel when
//! it is collected (Chromium never does). So a `FinalizationRegistry`
//! does it: our state is registered with the host's reader as the held
//! value, and once the state is collected the reader is cancelled, which
//! releases the connection. Where the host has no `FinalizationRegistry`
//! the stream still works; only that release is lost.
//!
//! The functions are made once per module instance and shared by every
//! stream (`Function.prototype.bind` supplies each stream's state), so a
//! stream costs no wasm closure, and none can be left behind.

use js_sys::{Array, Object, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortSignal, ReadableStream, ReadableStreamDefaultReader};

use super::props::ReadResult;

#[wasm_bindgen]
extern "C" {
    /// `FinalizationRegistry` (missing in some hosts: caught).
    type Registry;
    #[wasm_bindgen(catch, constructor, js_class = "FinalizationRegistry")]
    fn new_registry(cleanup: &JsValue) -> Result<Registry, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn register(this: &Registry, target: &JsValue, held: &JsValue, token: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn unregister(this: &Registry, token: &JsValue) -> Result<bool, JsValue>;

    /// One of our shared functions (or a host reader, for its `cancel`).
    type Shared;
    #[wasm_bindgen(method, getter, js_name = cancel)]
    fn cancel_of(this: &Shared) -> Shared;
    #[wasm_bindgen(method, js_name = bind)]
    fn bind0(this: &Shared, this_arg: &JsValue) -> JsValue;
    #[wasm_bindgen(method, js_name = bind)]
    fn bind2(this: &Shared, this_arg: &JsValue, a: &JsValue, b: &JsValue) -> JsValue;
    #[wasm_bindgen(method, js_name = bind)]
    fn bind3(this: &Shared, this_arg: &JsValue, a: &JsValue, b: &JsValue, c: &JsValue) -> JsValue;

    /// A `ReadableStreamDefaultController`; each call is caught (the stream
    /// may have been cancelled or errored meanwhile).
    type Controller;
    #[wasm_bindgen(method, catch)]
    fn enqueue(this: &Controller, chunk: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn close(this: &Controller) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn error(this: &Controller, reason: &JsValue) -> Result<(), JsValue>;

    /// A host promise, given functions of ours.
    type Pending;
    #[wasm_bindgen(method, js_name = then)]
    fn then_do(this: &Pending, f: &JsValue) -> Promise;
    #[wasm_bindgen(method, js_name = catch)]
    fn catch_do(this: &Pending, f: &JsValue) -> Promise;

    /// A `ReadableStream` from a source and a strategy of ours.
    #[wasm_bindgen(extends = ReadableStream)]
    type Pulled;
    #[wasm_bindgen(catch, constructor, js_class = "ReadableStream")]
    fn new_pulled(source: &Object, strategy: &Object) -> Result<Pulled, JsValue>;

    /// The plain objects we build: an underlying source and a strategy.
    #[wasm_bindgen(extends = Object)]
    type Source;
    #[wasm_bindgen(method, setter)]
    fn set_pull(this: &Source, f: &JsValue);
    #[wasm_bindgen(method, setter)]
    fn set_cancel(this: &Source, f: &JsValue);
    #[wasm_bindgen(method, setter, js_name = highWaterMark)]
    fn set_high_water_mark(this: &Source, n: f64);
}

/// The functions every hand-over shares, and the registry.
struct Kit {
    /// `(reader, chunks, signal, controller)`: the caller asked for a chunk.
    pull: Shared,
    /// `(controller, chunks, step)`: the host's reader answered.
    step: Shared,
    /// Swallows a rejection nobody else could hear: `Function.prototype`,
    /// a function that does nothing (not one more closure of ours).
    ignore: JsValue,
    registry: Option<Registry>,
}

thread_local! {
    static KIT: Kit = Kit::new();
}

/// The one shape of our shared functions: one closure type (one set of
/// wasm-bindgen shims) serves all three. JS passes `undefined` for the
/// arguments a function does not take.
type Shape = dyn Fn(JsValue, JsValue, JsValue, JsValue) -> JsValue;

fn shared(f: fn(JsValue, JsValue, JsValue, JsValue) -> JsValue) -> JsValue {
    Closure::<Shape>::new(f).into_js_value()
}

impl Kit {
    fn new() -> Kit {
        let pull = shared(pull);
        let ignore = Object::get_prototype_of(&pull).into();
        Kit {
            pull: pull.unchecked_into(),
            step: shared(step).unchecked_into(),
            ignore,
            registry: Registry::new_registry(&shared(finalize)).ok(),
        }
    }

    /// The hand-over is over (the body ended, or the caller's signal
    /// errored it): its reader needs no cancelling when its state is
    /// collected.
    fn forget(&self, chunks: &JsValue) {
        if let Some(r) = &self.registry {
            let _ = r.unregister(chunks);
        }
    }
}

/// A stream of the chunks already `read`, then the rest of `reader`: every
/// byte once, in order; the host's error (a body cut short, the caller's
/// abort) rejects the caller's read; the caller's cancel cancels the host's
/// body. `signal` (the caller's) also stops the chunks read earlier, as it
/// would have stopped them in the host's body.
pub(super) fn joined(
    read: Vec<js_sys::Uint8Array>,
    reader: ReadableStreamDefaultReader,
    signal: Option<&AbortSignal>,
) -> Result<ReadableStream, JsValue> {
    let chunks = Array::new();
    for chunk in read {
        chunks.push(&chunk);
    }
    let signal = signal.map_or(JsValue::UNDEFINED, |s| JsValue::from(s.clone()));
    KIT.with(|kit| {
        let source: Source = Object::new().unchecked_into();
        source.set_pull(&kit.pull.bind3(&JsValue::UNDEFINED, &reader, &chunks, &signal));
        // The caller's cancel is the host reader's own (`reader.cancel.bind(reader)`):
        // its registration then stays until the state is collected, and
        // cancelling a cancelled reader again does nothing.
        source.set_cancel(&reader.unchecked_ref::<Shared>().cancel_of().bind0(&reader));
        let strategy: Source = Object::new().unchecked_into();
        strategy.set_high_water_mark(0.0);
        let stream: ReadableStream = Pulled::new_pulled(&source, &strategy)?.into();
        if let Some(r) = &kit.registry {
            // Target and token: the chunks array, reachable only from the
            // stream's own algorithms; held: the reader (which knows nothing
            // of the array, so holding it keeps nothing of ours alive).
            let _ = r.register(&chunks, &reader, &chunks);
        }
        Ok(stream)
    })
}

fn pull(reader: JsValue, chunks: JsValue, signal: JsValue, controller: JsValue) -> JsValue {
    let controller: Controller = controller.unchecked_into();
    let chunks: Array = chunks.unchecked_into();
    // `signal` is the caller's, checked to be an `AbortSignal` (request.rs).
    let signal: Option<&AbortSignal> = Some(signal.unchecked_ref()).filter(|_| !signal.is_undefined());
    if let Some(signal) = signal.filter(|s| s.aborted()) {
        // The host's body is errored with the reason already; the chunks
        // read earlier go with it.
        KIT.with(|kit| kit.forget(&chunks));
        let _ = controller.error(&signal.reason());
        return JsValue::UNDEFINED;
    }
    if chunks.length() > 0 {
        let _ = controller.enqueue(&chunks.shift());
        return JsValue::UNDEFINED;
    }
    let reader: ReadableStreamDefaultReader = reader.unchecked_into();
    // A rejection (the body cut short, the caller's abort) rejects the pull,
    // which errors the caller's stream with the host's own error.
    KIT.with(|kit| {
        reader
            .read()
            .unchecked_ref::<Pending>()
            .then_do(&kit.step.bind2(&JsValue::UNDEFINED, &controller, &chunks))
            .into()
    })
}

fn step(controller: JsValue, chunks: JsValue, step: JsValue, _: JsValue) -> JsValue {
    let controller: Controller = controller.unchecked_into();
    let step: ReadResult = step.unchecked_into();
    if step.done() {
        KIT.with(|kit| kit.forget(&chunks));
        let _ = controller.close();
    } else {
        let _ = controller.enqueue(&step.value());
    }
    JsValue::UNDEFINED
}

/// The state of a stream the caller dropped was collected: cancel the host's
/// body so the host can close the connection.
fn finalize(reader: JsValue, _: JsValue, _: JsValue, _: JsValue) -> JsValue {
    let reader: ReadableStreamDefaultReader = reader.unchecked_into();
    KIT.with(|kit| {
        let _ = reader.cancel().unchecked_ref::<Pending>().catch_do(&kit.ignore);
    });
    JsValue::UNDEFINED
}
