//! Write-ahead (src/policy/outbox.rs `ahead`, docs/outbox.md): which
//! writes are in the store before their first send, and when a drainer
//! may send one that a crash left behind.

use saferetry::policy::classify::Safety;
use saferetry::policy::limits::REPLAY_BYTES;
use saferetry::policy::outbox::*;

const NOW: u64 = 1_700_000_000_000;
const HOUR: u64 = 3_600_000;
const HOLD: u64 = 4_000;

fn config(durable: Durable) -> Config {
    Config { durable, ttl_ms: HOUR, ..Config::default() }
}

fn write(safety: Safety) -> Write {
    Write { safety, body_bytes: Some(120), credentials: false }
}

#[test]
fn the_durable_option_parses_its_two_names_and_nothing_else() {
    let table: [(&str, Option<Durable>); 6] = [
        ("before-send", Some(Durable::BeforeSend)),
        ("after-try-later", Some(Durable::AfterTryLater)),
        ("Before-Send", None),
        ("before_send", None),
        ("", None),
        ("always", None),
    ];
    for (name, want) in table {
        assert_eq!(Durable::parse(name), want, "{name:?}");
    }
    assert_eq!(Config::default().durable, Durable::AfterTryLater);
}

#[test]
fn a_write_goes_ahead_only_when_the_send_or_else_the_outbox_asks() {
    use Durable::*;
    let table: [(Durable, Option<Durable>, bool); 6] = [
        (AfterTryLater, None, false),
        (BeforeSend, None, true),
        (AfterTryLater, Some(BeforeSend), true),
        (BeforeSend, Some(AfterTryLater), false),
        (BeforeSend, Some(BeforeSend), true),
        (AfterTryLater, Some(AfterTryLater), false),
    ];
    for (outbox, send, want) in table {
        let got = ahead(&config(outbox), send, &write(Safety::Keyed), NOW, HOLD).unwrap();
        assert_eq!(got.is_some(), want, "{outbox:?} {send:?}");
    }
}

#[test]
fn only_a_write_that_may_be_kept_goes_ahead() {
    let table: [(Write, Result<(), NotKept>); 8] = [
        (write(Safety::Keyed), Ok(())),
        (write(Safety::Idempotent), Ok(())),
        // A keyless POST: the send about to start could be the interrupted one.
        (write(Safety::Unsafe), Err(NotKept::NoIdempotencyKey)),
        (Write { body_bytes: None, ..write(Safety::Keyed) }, Err(NotKept::BodyNotReplayable)),
        (Write { body_bytes: Some(REPLAY_BYTES), ..write(Safety::Keyed) }, Ok(())),
        (Write { body_bytes: Some(REPLAY_BYTES + 1), ..write(Safety::Keyed) }, Err(NotKept::BodyTooLarge)),
        (Write { credentials: true, ..write(Safety::Idempotent) }, Err(NotKept::Credentials)),
        (Write { body_bytes: Some(0), ..write(Safety::Idempotent) }, Ok(())),
    ];
    for (i, (w, want)) in table.into_iter().enumerate() {
        let got = ahead(&config(Durable::BeforeSend), None, &w, NOW, HOLD);
        assert_eq!(got.map(|_| ()), want, "row {i}: {w:?}");
    }
    let opted_in = Config { keep_credentials: true, ..config(Durable::BeforeSend) };
    let w = Write { credentials: true, ..write(Safety::Idempotent) };
    assert!(ahead(&opted_in, None, &w, NOW, HOLD).unwrap().is_some());
}

#[test]
fn an_entry_written_ahead_is_claimed_and_due_only_once_its_send_has_surely_ended() {
    let e = ahead(&config(Durable::BeforeSend), None, &write(Safety::Keyed), NOW, HOLD).unwrap().unwrap();
    assert_eq!(e, Entry { retry_at: NOW + HOLD + RESEND_BASE_MS, expires_at: NOW + HOUR, sends: 1 });
    // While the send may still run, a drainer does not send it; after, it does.
    assert_eq!(when(&e, NOW + HOLD, true), When::Wait(NOW + HOLD + RESEND_BASE_MS));
    assert_eq!(when(&e, NOW + HOLD + RESEND_BASE_MS, true), When::Due);
}

#[test]
fn a_send_whose_bound_outlasts_the_ttl_is_not_written_ahead() {
    let c = config(Durable::BeforeSend);
    assert_eq!(ahead(&c, None, &write(Safety::Keyed), NOW, HOUR), Err(NotKept::ExpiresFirst));
    assert_eq!(ahead(&c, None, &write(Safety::Keyed), NOW, u64::MAX), Err(NotKept::ExpiresFirst));
    assert!(ahead(&c, None, &write(Safety::Keyed), NOW, HOUR - RESEND_BASE_MS - 1).unwrap().is_some());
}
