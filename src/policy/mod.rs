//! Pure decisions, as data in and data out. Nothing here knows JavaScript,
//! reads a clock or draws a random number: `now` and `random` are parameters,
//! so every rule is exact under test.
//!
//! No arithmetic here may overflow, for any argument: a trap would kill the
//! wasm module and a wrap would corrupt a limiter (README, "Overflow").
//! Clippy enforces it in every module declared through
//! [`checked_arithmetic!`]: each `+ - * /` and narrowing cast there is
//! checked, saturating or widened, or carries an `allow` stating its bound.

/// Declares modules in which clippy denies arithmetic that can overflow and
/// casts that can truncate (test code excepted). A new module belongs here
/// once its arithmetic is explicit.
macro_rules! checked_arithmetic {
    ($($v:vis mod $name:ident;)*) => {
        $(
            #[cfg_attr(
                not(test),
                deny(
                    clippy::arithmetic_side_effects,
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_possible_wrap
                )
            )]
            $v mod $name;
        )*
    };
}

pub mod budget;

checked_arithmetic! {
    pub mod backoff;
    pub mod body;
    pub mod chain;
    pub mod classify;
    pub mod limits;
    pub mod number;
    pub mod options;
    pub mod outbox;
    pub mod poll;
    pub mod rate_limit;
    pub mod reason;
    pub mod redirect;
    pub mod referrer;
    pub mod report;
    pub mod retry;
    pub mod retry_after;
    pub mod runtime;
    pub mod schema;
    pub mod scheme;
    pub mod state;
    pub mod text;
    pub mod throttle;
}
