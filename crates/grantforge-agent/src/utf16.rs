//! Text as GrantForge's server measures it: its `@Size` limits count UTF-16 code units, so a
//! name the agent sends is cut to them here, never in the middle of a character.

/// The longest prefix of `text` of at most `limit` UTF-16 code units (the server's `@Size` counts
/// those), cut at a char boundary. Borrowed, and free for text of at most `limit` bytes.
pub(crate) fn clamp(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text; // a UTF-16 unit takes at least one UTF-8 byte
    }
    let mut units = 0;
    let mut end = 0;
    for c in text.chars() {
        units += c.len_utf16();
        if units > limit {
            break;
        }
        end += c.len_utf8();
    }
    &text[..end]
}
