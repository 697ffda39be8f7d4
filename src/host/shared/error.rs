//! The one place Rust errors become JS errors. `TypeError` for a value of
//! the wrong type, `RangeError` for one outside its range; the message names
//! the field and what it accepts.

use alloc::string::String;
use js_sys::{RangeError, TypeError};
use wasm_bindgen::JsValue;

use crate::policy::options::{ErrorKind, OptionError};

impl From<OptionError> for JsValue {
    fn from(e: OptionError) -> JsValue {
        let mut message = String::from("saferetry: `");
        message.push_str(e.field);
        message.push_str("` must be ");
        message.push_str(e.expected);
        match e.kind {
            ErrorKind::Type => TypeError::new(&message).into(),
            ErrorKind::Range => RangeError::new(&message).into(),
        }
    }
}
