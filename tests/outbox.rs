//! The durable outbox's rules (src/policy/outbox.rs) as tables: what is
//! kept, when it is due, and what a re-send's outcome makes of it.

use saferetry::policy::classify::{Safety, Stage};
use saferetry::policy::limits::REPLAY_BYTES;
use saferetry::policy::outbox::*;

const NOW: u64 = 1_700_000_000_000;
const HOUR: u64 = 3_600_000;

fn config() -> Config {
    Config { ttl_ms: HOUR, ..Config::default() }
}

fn outcome(ended: Ended, progress: Progress, retry_at: Option<u64>) -> Outcome {
    Outcome { ended, progress, retry_at, not_before: None, body_refused: false }
}

fn write(safety: Safety) -> Write {
    Write { safety, body_bytes: Some(120), credentials: false }
}

#[test]
fn only_try_later_endings_of_repeatable_writes_are_kept() {
    use Ended::*;
    use Progress::*;
    use Safety::*;
    let table: [(Ended, Progress, Safety, Result<(), NotKept>); 14] = [
        (TryLater, Responded, Idempotent, Ok(())),
        (TryLater, Responded, Keyed, Ok(())),
        (TryLater, NotSent, Keyed, Ok(())),
        (TryLater, MaybeDelivered, Keyed, Ok(())),
        (TryLater, MaybeDelivered, Idempotent, Ok(())),
        // A keyless POST: never kept, however far it got.
        (TryLater, MaybeDelivered, Unsafe, Err(NotKept::MaybeDelivered)),
        (TryLater, Responded, Unsafe, Err(NotKept::MaybeDelivered)),
        (TryLater, NotSent, Unsafe, Err(NotKept::NoIdempotencyKey)),
        (Failed, MaybeDelivered, Unsafe, Err(NotKept::NotTryLater)),
        (Failed, Responded, Keyed, Err(NotKept::NotTryLater)),
        (Failed, NotSent, Idempotent, Err(NotKept::NotTryLater)),
        (Succeeded, Responded, Keyed, Err(NotKept::NotTryLater)),
        (Cancelled, NotSent, Keyed, Err(NotKept::NotTryLater)),
        (Cancelled, MaybeDelivered, Idempotent, Err(NotKept::NotTryLater)),
    ];
    for (i, (ended, progress, safety, want)) in table.into_iter().enumerate() {
        let got = keep(&config(), &write(safety), &outcome(ended, progress, Some(NOW + 1_000)), NOW, 0.5);
        assert_eq!(got.map(|_| ()), want, "row {i}: {ended:?} {progress:?} {safety:?}");
    }
}

#[test]
fn a_body_is_kept_as_bytes_up_to_the_replay_bound() {
    let table: [(Option<u64>, Result<(), NotKept>); 5] = [
        (Some(0), Ok(())),
        (Some(REPLAY_BYTES), Ok(())),
        (Some(REPLAY_BYTES + 1), Err(NotKept::BodyTooLarge)),
        (Some(u64::MAX), Err(NotKept::BodyTooLarge)),
        (None, Err(NotKept::BodyNotReplayable)),
    ];
    let later = outcome(Ended::TryLater, Progress::Responded, None);
    for (body_bytes, want) in table {
        let w = Write { body_bytes, ..write(Safety::Keyed) };
        assert_eq!(keep(&config(), &w, &later, NOW, 0.5).map(|_| ()), want, "{body_bytes:?}");
    }
}

#[test]
fn a_failure_its_body_caused_is_named_by_the_body_and_any_other_ending_is_not_try_later() {
    use Ended::*;
    let too_large = Some(REPLAY_BYTES + 1);
    let table: [(Ended, bool, Option<u64>, NotKept); 7] = [
        // A `Request` over the bound or a stream: its retry stopped `body-not-replayable`.
        (Failed, true, too_large, NotKept::BodyTooLarge),
        (Failed, true, None, NotKept::BodyNotReplayable),
        // Failed for another reason, or with a body that fits: the ending.
        (Failed, false, too_large, NotKept::NotTryLater),
        (Failed, true, Some(10), NotKept::NotTryLater),
        (Succeeded, false, too_large, NotKept::NotTryLater),
        (Cancelled, true, None, NotKept::NotTryLater),
        (TryLater, false, too_large, NotKept::BodyTooLarge),
    ];
    for (ended, body_refused, body_bytes, want) in table {
        let o = Outcome { body_refused, ..outcome(ended, Progress::Responded, None) };
        let w = Write { body_bytes, ..write(Safety::Keyed) };
        assert_eq!(keep(&config(), &w, &o, NOW, 0.5), Err(want), "{ended:?} {body_refused} {body_bytes:?}");
    }
}

#[test]
fn credentials_are_kept_only_when_the_caller_opted_in() {
    let later = outcome(Ended::TryLater, Progress::Responded, None);
    let w = Write { credentials: true, ..write(Safety::Idempotent) };
    assert_eq!(keep(&config(), &w, &later, NOW, 0.5), Err(NotKept::Credentials));
    let opted_in = Config { keep_credentials: true, ..Config::default() };
    assert!(keep(&opted_in, &w, &later, NOW, 0.5).is_ok());
}

#[test]
fn credential_headers_and_url_userinfo_are_recognised() {
    let table: [(&[&str], &str, bool); 10] = [
        (&["content-type"], "https://api.example/orders", false),
        (&["Authorization"], "https://api.example/", true),
        (&["cookie"], "https://api.example/", true),
        (&["PROXY-AUTHORIZATION"], "https://api.example/", true),
        (&["authorization-hint"], "https://api.example/", false),
        (&[], "https://user:pw@api.example/", true),
        (&[], "https://user@api.example/", true),
        (&[], "https://api.example/a@b", false),
        (&[], "https://api.example/?to=a@b#c@d", false),
        (&[], "not a url @ all", false),
    ];
    for (headers, url, want) in table {
        assert_eq!(carries_credentials(headers.iter().copied(), url), want, "{headers:?} {url}");
    }
}

#[test]
fn the_method_and_the_key_header_make_the_safety() {
    let table: [(&str, &[&str], Safety); 7] = [
        ("POST", &["content-type"], Safety::Unsafe),
        ("post", &["Idempotency-Key"], Safety::Keyed),
        ("PATCH", &["idempotency-key"], Safety::Keyed),
        ("patch", &[], Safety::Unsafe),
        ("put", &[], Safety::Idempotent),
        ("DELETE", &[], Safety::Idempotent),
        ("GET", &[], Safety::Idempotent),
    ];
    for (method, headers, want) in table {
        let w = Write::of(method, headers.iter().copied(), "https://api.example/", Some(0));
        assert_eq!(w.safety, want, "{method} {headers:?}");
    }
}

#[test]
fn how_far_the_last_attempt_got_comes_from_its_status_or_stage() {
    assert_eq!(Progress::of(Some(503), None), Progress::Responded);
    assert_eq!(Progress::of(None, Some(Stage::MaybeDelivered)), Progress::MaybeDelivered);
    assert_eq!(Progress::of(None, Some(Stage::NotSent)), Progress::NotSent);
    assert_eq!(Progress::of(None, None), Progress::NotSent);
}

#[test]
fn retry_at_is_never_before_the_server_asked_and_expires_at_is_the_ttl() {
    let keyed = write(Safety::Keyed);
    let server = Outcome {
        not_before: Some(NOW + 9_000),
        ..outcome(Ended::TryLater, Progress::Responded, Some(NOW + 5_000))
    };
    let e = keep(&config(), &keyed, &server, NOW, 0.5).unwrap();
    assert_eq!(e, Entry { retry_at: NOW + 9_000, expires_at: NOW + HOUR, sends: 1 });
    // No word from the server: our own backoff, at least RESEND_BASE_MS.
    let unknown = outcome(Ended::TryLater, Progress::NotSent, None);
    let e = keep(&config(), &keyed, &unknown, NOW, 0.0).unwrap();
    assert_eq!(e.retry_at, NOW + RESEND_BASE_MS);
    let e = keep(&config(), &keyed, &unknown, NOW, 0.5).unwrap();
    assert_eq!(e.retry_at, NOW + RESEND_BASE_MS + RESEND_BASE_MS / 2);
    // A Retry-After in the past (or of 0) does not make it due at once.
    let past = outcome(Ended::TryLater, Progress::Responded, Some(NOW - 10));
    assert_eq!(keep(&config(), &keyed, &past, NOW, 0.5).unwrap().retry_at, NOW + RESEND_BASE_MS);
    // Due only after its expiry: not kept.
    let far = outcome(Ended::TryLater, Progress::Responded, Some(NOW + HOUR));
    assert_eq!(keep(&config(), &keyed, &far, NOW, 0.5), Err(NotKept::ExpiresFirst));
    let never = outcome(Ended::TryLater, Progress::Responded, Some(u64::MAX));
    assert_eq!(keep(&config(), &keyed, &never, NOW, 0.5), Err(NotKept::ExpiresFirst));
}

#[test]
fn an_entry_is_due_expired_or_waits_until_a_time() {
    let e = Entry { retry_at: NOW + 1_000, expires_at: NOW + HOUR, sends: 1 };
    let table: [(u64, bool, When); 7] = [
        (NOW, true, When::Wait(NOW + 1_000)),
        (NOW + 999, true, When::Wait(NOW + 1_000)),
        (NOW + 1_000, true, When::Due),
        (NOW + 1_000, false, When::Wait(NOW + HOUR)),
        (NOW, false, When::Wait(NOW + HOUR)),
        (NOW + HOUR, true, When::Expired),
        (NOW + HOUR, false, When::Expired),
    ];
    for (now, online, want) in table {
        assert_eq!(when(&e, now, online), want, "{} {online}", now - NOW);
    }
}

#[test]
fn a_plan_sends_the_earliest_due_first_and_wakes_once_at_the_next_time() {
    let at = |retry: u64, expires: u64| Entry { retry_at: NOW + retry, expires_at: NOW + expires, sends: 1 };
    let entries = [at(500, HOUR), at(5_000, HOUR), at(100, HOUR), at(0, 50), at(3_000, HOUR), at(100, HOUR)];
    let p = plan(&entries, NOW + 1_000, true);
    assert_eq!(p, Plan { next: Some(2), expired: vec![3], wake_at: Some(NOW + 3_000) });
    // Once it is gone, the next earliest.
    let p = plan(&[entries[0], entries[1], entries[5]], NOW + 1_000, true);
    assert_eq!(p.next, Some(2));
    let offline = plan(&entries, NOW + 1_000, false);
    assert_eq!(offline, Plan { next: None, expired: vec![3], wake_at: Some(NOW + HOUR) });
    assert_eq!(plan(&[], NOW, true), Plan::default());
}

#[test]
fn a_claim_counts_the_send_before_it_happens() {
    let e = Entry { retry_at: NOW, expires_at: NOW + HOUR, sends: 1 };
    assert_eq!(claim(&e).sends, 2);
    assert_eq!(claim(&Entry { sends: u32::MAX, ..e }).sends, u32::MAX);
}

#[test]
fn after_a_resend_the_entry_is_sent_failed_expired_or_kept_later() {
    use Ended::*;
    let e = Entry { retry_at: NOW, expires_at: NOW + HOUR, sends: 2 };
    let table: [(Outcome, Next); 7] = [
        (outcome(Succeeded, Progress::Responded, None), Next::Sent),
        (outcome(Failed, Progress::Responded, None), Next::Failed),
        (outcome(Failed, Progress::MaybeDelivered, None), Next::Failed),
        (outcome(Cancelled, Progress::MaybeDelivered, None), Next::Unchanged),
        (
            outcome(TryLater, Progress::Responded, Some(NOW + 7_000)),
            Next::Kept(Entry { retry_at: NOW + 7_000, ..e }),
        ),
        (outcome(TryLater, Progress::Responded, Some(NOW + HOUR)), Next::Expired),
        // No Retry-After: the backoff window has doubled with the sends.
        (
            outcome(TryLater, Progress::NotSent, None),
            Next::Kept(Entry { retry_at: NOW + RESEND_BASE_MS + RESEND_BASE_MS, ..e }),
        ),
    ];
    for (i, (o, want)) in table.into_iter().enumerate() {
        assert_eq!(after(&e, &o, NOW, 0.5), want, "row {i}");
    }
    assert_eq!(after(&e, &outcome(TryLater, Progress::NotSent, None), NOW + HOUR, 0.5), Next::Expired);
}

#[test]
fn every_reason_not_to_keep_has_a_distinct_public_name() {
    let all = [
        NotKept::NotTryLater,
        NotKept::MaybeDelivered,
        NotKept::NoIdempotencyKey,
        NotKept::BodyNotReplayable,
        NotKept::BodyTooLarge,
        NotKept::Credentials,
        NotKept::ExpiresFirst,
        NotKept::Storage,
    ];
    let names: std::collections::BTreeSet<&str> = all.iter().map(|n| n.name()).collect();
    assert_eq!(names.len(), all.len());
}
