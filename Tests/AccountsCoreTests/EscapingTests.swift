import AccountsCore
import Testing

@Suite("Escaping")
struct EscapingTests {
  /// Every printed text passes one escaping path: escapes, bidirectional overrides and
  /// separators become visible, printable text is untouched, and escaping twice changes
  /// nothing.
  @Test func escapingIsVisibleAndIdempotent() {
    let hostile = "Eve\u{1B}]0;pwned\u{07}\u{202E}\u{2028}\r\nend"
    let shown = Escaping.visible(hostile)
    #expect(shown == "Eve\\u{1b}]0;pwned\\u{7}\\u{202e}\\u{2028}\\u{d}\\u{a}end")
    #expect(Escaping.visible(shown) == shown)
    #expect(Escaping.visible("Zoë Ångström, C:\\x") == "Zoë Ångström, C:\\x")
    #expect(Escaping.unambiguous("a\\u{1b}") == "a\\\\u{1b}")
  }
}
