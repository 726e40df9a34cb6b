import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

@Suite("Activation form validation")
struct ValidationTests {
  func check(
    _ name: String = "alice", _ full: String = "Alice Liddell",
    mail: String = "alice@example.org", first: String = password,
    second: String? = nil, blocklist: PasswordBlocklist? = nil
  ) -> String? {
    let form = ActivationForm(
      username: name, fullName: full, email: mail, password: first,
      passwordAgain: second ?? first)
    do {
      _ = try form.validate(blocklist: blocklist)
      return nil
    } catch {
      return error.description
    }
  }

  /// Empty and white-space-only fields come first, before the password match; the fixed
  /// message is followed by a line naming the empty fields.
  @Test func fillComesFirst() {
    let fill = "Please fill all fields!\n"
    #expect(check("") == fill + "Empty: User name.")
    #expect(check("alice", " \t ") == fill + "Empty: Full name.")
    #expect(
      check("alice", "Alice", mail: "", first: "a", second: "b") == fill + "Empty: E-mail address.")
    #expect(
      check("alice", "Alice", mail: "a@b.c", first: "   ", second: "   ")
        == fill + "Empty: Password, Password again.")
  }

  /// Different passwords come second, before any other rule.
  @Test func matchComesSecond() {
    #expect(
      check("bad name!", "A", mail: "nope", first: "short", second: "other")
        == "Passwords must match!")
    #expect(
      check("alice", "Alice", mail: "a@b.c", first: password, second: password + " ")
        == "Passwords must match!")
  }

  /// The same password typed as composed or decomposed characters matches (NFKC).
  @Test func matchAfterNormalization() {
    #expect(
      check(
        first: "caf\u{E9} au lait, s'il vous plait", second: "cafe\u{301} au lait, s'il vous plait")
        == nil)
  }

  /// User names: 1 to 64 letters, digits, `.`, `_`, `-`.
  @Test(arguments: [
    "a b", "alice!", "al@ce", String(repeating: "a", count: 65), "\u{202E}evil", "a\u{200B}b",
  ])
  func badUsernames(_ name: String) {
    let message = check(name)
    #expect(
      message == "User name must be 1 to 64 letters, digits, '.', '_' or '-'!"
        || message == "User name must not contain control or invisible formatting characters!")
  }

  /// Letters of any script, digits, dots, underscores and dashes are fine.
  @Test(arguments: ["alice", "Alice.Liddell_2-x", "Zoë", "李小龍", String(repeating: "a", count: 64)])
  func goodUsernames(_ name: String) {
    #expect(check(name) == nil)
  }

  /// E-mail: one @, a local part, a dotted domain, no spaces.
  @Test(arguments: [
    "alice", "alice@", "@example.org", "alice@example", "a@b@c.d", "a lice@x.org", "a@.org",
    "a@x..org",
  ])
  func badEmails(_ mail: String) {
    #expect(check(mail: mail) == "E-mail address must look like name@example.org, with no spaces!")
  }

  /// Each password rule, with its own sentence.
  @Test func passwordRules() {
    #expect(check(first: "fourteen chars") == "Password must be at least 15 characters!")
    #expect(
      check(first: String(repeating: "ab", count: 513))
        == "Password must be at most 1024 characters!")
    #expect(check(first: String(repeating: "xy", count: 512)) == nil)
    #expect(
      check("alicealicealice", first: "AliceAliceAlice")
        == "Password must not be your user name, full name or e-mail address!")
    #expect(
      check(first: "alice  liddell alice liddell")
        == "Password must not be your user name, full name or e-mail address!")
    #expect(
      check(first: "ALICE@example.org")
        == "Password must not be your user name, full name or e-mail address!")
    #expect(
      check(first: String(repeating: "z", count: 20))
        == "Password is too easy to guess: it is a repeat of a shorter pattern!")
    #expect(
      check(first: "12345678901234567890")
        == "Password is too easy to guess: it is a repeat of a shorter pattern!")
    #expect(
      check(first: "abcdefghijklmnopq")
        == "Password is too easy to guess: it is a run like 12345 or abcde!")
    #expect(
      check(first: "ZYXWVUTSRQPONMLKJ")
        == "Password is too easy to guess: it is a run like 12345 or abcde!")
  }

  /// No composition rules: a long lowercase phrase is fine.
  @Test func noCompositionRules() {
    #expect(check(first: "correct horse battery staple") == nil)
  }

  /// Length counts code points after NFKC: 15 characters typed as 19 code points make 15.
  @Test func lengthAfterNormalization() {
    let decomposed = "e\u{301}te\u{301} ro\u{302}ti cafe\u{301}s!"
    #expect(decomposed.unicodeScalars.count == 19)
    #expect(check(first: decomposed) == nil)
    let fourteen = String(repeating: "e\u{301}", count: 14)
    #expect(check(first: fourteen) == "Password must be at least 15 characters!")
  }

  /// The administrator's blocklist refuses its lines, ignoring case.
  @Test func blocklist() throws {
    let list = PasswordBlocklist(
      source: BlocklistText("first line ignored\nPassword123456789\r\nmonkey monkey monkey\n"))
    #expect(
      check(first: "password123456789", blocklist: list)
        == "Password is on the administrator's list of forbidden passwords!")
    #expect(
      check(first: "MONKEY MONKEY MONKEY", blocklist: list)
        == "Password is on the administrator's list of forbidden passwords!")
    #expect(check(first: password, blocklist: list) == nil)
    #expect(
      check(
        first: password,
        blocklist: PasswordBlocklist(
          source: BlocklistText(failing: .cannotOpen, path: "/nonexistent/list")))
        == "Cannot read the password blocklist /nonexistent/list: it cannot be opened.")
  }

  /// Bytes that are not UTF-8, and control characters, get a sentence naming the field.
  @Test func hostileBytes() {
    let form = ActivationForm(
      username: .text("alice"), fullName: FieldValue([0x41, 0xFF, 0x42]),
      email: .text("a@b.co"), password: .text(password), passwordAgain: .text(password))
    #expect(throws: AccountsError.invalidForm(.invalidUTF8(field: "Full name"))) {
      try form.validate(blocklist: nil)
    }
    #expect(
      check("alice", "Alice\u{1B}[31m")
        == "Full name must not contain control or invisible formatting characters!")
    #expect(
      check(first: "correct horse\u{0} battery")
        == "Password must not contain control or invisible formatting characters!")
  }
}

@Suite("User names")
struct UsernameTests {
  /// `Alice`, `alice`, `ALICE` and full-width `Ａｌｉｃｅ` are one user (RFC 8265 case mapping).
  @Test func caseAndWidthMapping() throws {
    let keys = try ["Alice", "alice", "ALICE", "\u{FF21}\u{FF4C}\u{FF49}\u{FF43}\u{FF45}"].map {
      name throws(AccountsError) in try UsernameRules.key(for: name)
    }
    #expect(keys == ["alice", "alice", "alice", "alice"].map(Optional.some))
  }

  /// Keys are NFC: a decomposed accent gives the same key as the composed one.
  @Test func nfc() throws {
    #expect(try UsernameRules.key(for: "Zoe\u{308}") == UsernameRules.key(for: "Zo\u{EB}"))
  }
}
