import AccountsTestSupport
import Testing

@testable import AccountsCore

/// zxcvbn (the system's C port, opened at first use) as the password strength rule.
@Suite("Password strength (zxcvbn)")
struct PasswordStrengthTests {
  func estimate(
    _ password: String, username: String = "alice", fullName: String = "Alice Liddell",
    email: String = "alice@example.org"
  ) throws -> PasswordStrength {
    try PasswordStrength.estimate(password, username: username, fullName: fullName, email: email)
  }

  /// The threshold is 10^8 guesses, zxcvbn's score 3: log2(10^8) bits.
  @Test func thresholdIsScoreThree() {
    #expect(PasswordStrength.minimumGuesses == 1e8)
    #expect(abs(PasswordStrength.minimumBits - 26.575) < 0.001)
  }

  /// Long but guessable passwords, measured with the Python zxcvbn, get the same verdict from the
  /// C port.
  @Test(arguments: [
    ("passwordpassword", PasswordWeakness.repetition),
    ("qwertyuiopasdfgh", .commonWords),
    ("iloveyouiloveyou", .repetition),
  ])
  func guessableLongPasswordsAreRefused(_ password: String, _ weakness: PasswordWeakness) throws {
    let strength = try estimate(password)
    #expect(strength.guesses < 1e8)
    #expect(strength.weakness == weakness)
  }

  /// Passphrases of a few words pass, including the suite's main password.
  @Test(arguments: [
    "correct horse battery", "correct horse battery staple", "xkcd correct horse",
    "monkey dragon master", "1qaz2wsx3edc4rfv", "19/12/2001 01/01/1999",
  ])
  func strongPasswordsPass(_ password: String) throws {
    let strength = try estimate(password)
    #expect(strength.weakness == nil)
    #expect(strength.guesses >= 1e8)
  }

  /// Each kind of pattern zxcvbn finds has its own reason; the kind covering most of the
  /// password wins.
  @Test(arguments: [
    ("zzzzzzzzzzzzzzzzzz", PasswordWeakness.repetition),
    ("qwertyqwertyqwerty", .repetition),
    ("abcdefghijklmnopq", .sequence),
    ("ZYXWVUTSRQPONMLKJ", .sequence),
    ("0123456789abcdef", .sequence),
    (";lkjhgfdsa;lkjhg", .keyboardRow),
    ("zxcvbnm,./asdfgh", .keyboardRow),
    ("12/25/2000!!!!!!", .date),
    ("p@ssw0rdtrustno", .commonWords),
    ("trustno1trustno1", .commonWords),
  ])
  func eachKindHasItsReason(_ password: String, _ weakness: PasswordWeakness) throws {
    #expect(try estimate(password).weakness == weakness)
  }

  /// The user name, full name and e-mail are zxcvbn's user dictionary, whole and word by word.
  @Test(arguments: [
    "aliceliddell2024!", "liddellalice1234", "LiddellAliceLiddell", "alice@example.org!!",
  ])
  func wordsFromTheDetailsAreRefused(_ password: String) throws {
    #expect(try estimate(password).weakness == .personalDetails)
  }

  /// Without the details, the same password is judged on the dictionaries alone.
  @Test func theDictionaryIsThePersonsOwn() throws {
    let other = try estimate(
      "aliceliddell2024!", username: "bob", fullName: "Bob Builder", email: "bob@example.org")
    #expect(other.weakness != .personalDetails)
  }

  /// The details' words: whole, split on anything not a letter or digit, 3 characters or more.
  @Test func userWords() {
    #expect(
      PasswordStrength.userWords(
        username: "alice", fullName: "Alice Liddell", email: "a.liddell@example.org")
        == [
          "alice", "Alice Liddell", "a.liddell@example.org", "Alice", "Liddell", "liddell",
          "example", "org",
        ])
  }

  /// In the form, a guessable password is refused with the sentence for its kind.
  @Test func theFormSaysWhy() throws {
    let form = ActivationForm(
      username: "alice", fullName: "Alice Liddell", email: "alice@example.org",
      password: "aliceliddell2024!", passwordAgain: "aliceliddell2024!")
    #expect(throws: AccountsError.invalidForm(.guessable(.personalDetails))) {
      try form.validate(blocklist: nil)
    }
    #expect(
      AccountsError.invalidForm(.guessable(.personalDetails)).description
        == "Password is too easy to guess: it is mostly words from your name or e-mail!")
    #expect(AccountsError.invalidForm(.guessable(.date)).isFormProblem)
    #expect(AccountsError.invalidForm(.guessable(.date)).exitStatus == .refused)
  }

  /// Every kind has one sentence of its own, in the field rules' style.
  @Test func everySentenceIsDistinct() {
    let sentences = PasswordWeakness.allCases.map(Messages.passwordIsGuessable)
    #expect(Set(sentences).count == PasswordWeakness.allCases.count)
    #expect(sentences.allSatisfy { $0.hasPrefix("Password is too easy to guess: ") })
    #expect(sentences.allSatisfy { $0.hasSuffix("!") })
  }
}
