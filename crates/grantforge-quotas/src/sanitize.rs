//! Kafka's `Sanitizer.sanitize`: a principal name made safe for JMX names and metric tags.

/// URL-encodes `name` as UTF-8 the way Java's `URLEncoder` does (letters, digits, `.`, `-`, `_`
/// kept; everything else `%XX`, upper-case hex), then writes `*` as `%2A` and a space as `%20`, as
/// Kafka's `Sanitizer` does, so that `*`, `,`, `=` and `:` never reach a JMX name.
pub fn sanitize(name: &str) -> String {
    if name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len() + 8);
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'_') {
            out.push(byte as char);
        } else {
            out.push('%');
            out.push(
                char::from_digit(u32::from(byte >> 4), 16)
                    .expect("hex digit")
                    .to_ascii_uppercase(),
            );
            out.push(
                char::from_digit(u32::from(byte & 15), 16)
                    .expect("hex digit")
                    .to_ascii_uppercase(),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka's `SanitizerTest.testSanitize` cases, and the characters JMX names cannot hold.
    #[test]
    fn names_are_encoded_as_kafkas_sanitizer_does() {
        assert_eq!(sanitize("user2"), "user2");
        assert_eq!(sanitize("a.b-c_d"), "a.b-c_d");
        assert_eq!(sanitize("user with space"), "user%20with%20space");
        assert_eq!(sanitize("*"), "%2A");
        assert_eq!(sanitize("CN=alice,O=acme:x"), "CN%3Dalice%2CO%3Dacme%3Ax");
        assert_eq!(sanitize("user1@DOMAIN.COM"), "user1%40DOMAIN.COM");
        assert_eq!(sanitize("ü"), "%C3%BC");
        assert_eq!(sanitize(""), "");
        assert_eq!(sanitize("a+b"), "a%2Bb");
    }
}
