//! Which URLs the retry rules apply to (DESIGN rule 14).
//!
//! Retrying is about a network round trip that may or may not have reached
//! a server. A `data:`, `blob:`, `about:` or `file:` URL has none: `fetch`
//! answers it from memory or disk, the same way every time. So such a call
//! goes to `fetch` once, untouched, and the caller gets exactly what `fetch`
//! answers or throws. Only `http:` and `https:` URLs — and relative ones,
//! which a page resolves against its own (HTTP) location — are retried.

/// Whether `url` (as the caller wrote it) is fetched over HTTP(S) and so
/// falls under the retry rules. A scheme is what the URL standard accepts:
/// an ASCII letter, then letters, digits, `+`, `-` or `.`, then `:`, after
/// `fetch`'s own trimming of leading C0 controls and spaces. Anything else
/// (no scheme: a relative URL) is resolved against the page, so it is HTTP(S)
/// wherever it can be fetched at all.
pub fn is_http(url: &str) -> bool {
    // By byte: a character that is not ASCII is neither trimmed nor part
    // of a scheme, and its first byte is not ASCII either.
    let start = url.bytes().position(|b| b > b' ').unwrap_or(url.len());
    let url = url.get(start..).unwrap_or_default();
    let end = url.bytes().position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')));
    let scheme = match end {
        Some(i) if url.as_bytes().get(i) == Some(&b':') && url.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()) => {
            url.get(..i).unwrap_or_default()
        }
        _ => return true,
    };
    // Tabs and newlines inside a scheme are removed by the URL parser.
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}

#[cfg(test)]
mod tests {
    use super::is_http;

    #[test]
    fn only_http_and_https_urls_fall_under_the_retry_rules() {
        let table: &[(&str, bool)] = &[
            ("http://127.0.0.1:8080/x", true),
            ("https://example.com/", true),
            ("HTTPS://example.com/", true),
            ("  http://example.com/", true),
            ("/api/items", true),
            ("api/items?x=1:2", true),
            ("//example.com/x", true),
            ("", true),
            ("data:,hello", false),
            ("DATA:text/plain;base64,aGk=", false),
            (" data:,x", false),
            ("blob:http://127.0.0.1/5e1c", false),
            ("blob:nodedata:06d6f432", false),
            ("about:blank", false),
            ("file:///etc/hostname", false),
            ("ftp://127.0.0.1/", false),
            ("ws://127.0.0.1/", false),
            ("httpx://x/", false),
            ("1http://x/", true),
            ("ht+tp.-1:x", false),
        ];
        for &(url, http) in table {
            assert_eq!(is_http(url), http, "{url:?}");
        }
    }
}
