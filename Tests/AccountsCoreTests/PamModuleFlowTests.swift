import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

/// A PAM conversation that answers from a script and records what it was asked and told; a
/// question the script did not expect fails the test.
final class ScriptedConversation: PamConversation {
  var answers: [PamAnswer]
  /// Every request: `AUTHTOK Password: `, `INFO …`.
  private(set) var requests: [String] = []

  init(_ answers: [PamAnswer]) { self.answers = answers }

  private func next(_ kind: String, _ prompt: String) -> PamAnswer {
    requests.append("\(kind) \(prompt)")
    guard !answers.isEmpty else {
      Issue.record("unexpected question: \(kind) \(prompt)")
      return .none
    }
    return answers.removeFirst()
  }
  func password(prompt: String) -> PamAnswer { next("AUTHTOK", prompt) }
  func oldPassword(prompt: String) -> PamAnswer { next("OLDAUTHTOK", prompt) }
  func secret(prompt: String) -> PamAnswer { next("SECRET", prompt) }
  func info(_ text: String) { requests.append("INFO \(text)") }
  func error(_ text: String) { requests.append("ERROR \(text)") }
  func log(_ text: String) { requests.append("LOG \(text)") }
}

/// Typed text, as the module relays it.
func typed(_ text: String) -> PamAnswer { .typed(Array(text.utf8)) }

/// `pam-helper`'s stages: what each answers and asks, what it counts and records.
@Suite("pam_accounts.so stages")
struct PamModuleFlowTests {
  let world: World

  init() throws {
    world = try World()
    try world.activateAlice()
  }

  func run(
    _ stage: PamStage, _ answers: [PamAnswer], user: String = "Alice",
    request: PamModuleRequest? = nil
  ) -> (PamVerdict, ScriptedConversation) {
    let conversation = ScriptedConversation(answers)
    let verdict = PamModuleFlow.run(
      world.environment(ScriptedConsole([])), stage: stage,
      request: request ?? PamModuleRequest(username: user, service: "login", tty: "tty1"),
      conversation: conversation)
    #expect(conversation.answers.isEmpty, "answers left over")
    return (verdict, conversation)
  }

  func failures() throws -> Int {
    try world.store.tally(key: "alice").failures
  }

  /// The right password is a success, recorded with the service and terminal.
  @Test func authRight() throws {
    let (verdict, conversation) = run(.auth, [typed(password)])
    #expect(verdict == .success)
    #expect(conversation.requests == ["AUTHTOK Password: "])
    let event = try #require(try world.store.auditEvents(limit: 1).first)
    #expect(event.kind == .loginSuccess)
    #expect(event.detail == "password; pam service=login tty=tty1")
  }

  /// A wrong password, an unknown name and a non-exact name answer alike and are counted.
  @Test func authWrongUnknownAndInexact() throws {
    #expect(run(.auth, [typed("not the password at all")]).0 == .authenticationError)
    #expect(try failures() == 1)
    #expect(run(.auth, [typed(password)], user: "mallory").0 == .authenticationError)
    #expect(run(.auth, [typed(password)], user: "alice").0 == .authenticationError)
    #expect(try failures() == 2)
  }

  /// No answer, an empty one or one with a control character is refused before anything is
  /// counted (as pam-auth refuses it).
  @Test(arguments: [PamAnswer.none, typed(""), typed("pass\u{7}word")])
  func authUnusableAnswer(_ answer: PamAnswer) throws {
    #expect(run(.auth, [answer]).0 == .authenticationError)
    #expect(try failures() == 0)
  }

  /// A wrong token from the stack (try_first_pass) is followed by one question; a right typed
  /// password then passes.
  @Test func authStackedWrongThenTyped() throws {
    let (verdict, conversation) = run(
      .auth, [.stacked(Array("another module's password".utf8)), typed(password)])
    #expect(verdict == .success)
    #expect(conversation.requests == ["AUTHTOK Password: ", "AUTHTOK Password: "])
  }

  /// Under use_first_pass the module answers the second question with the same token: it is
  /// not checked, nor counted, twice.
  @Test func authStackedTwiceCountedOnce() throws {
    let stacked = PamAnswer.stacked(Array("another module's password".utf8))
    #expect(run(.auth, [stacked, stacked]).0 == .authenticationError)
    #expect(try failures() == 1)
  }

  /// A wrong typed password is not asked again.
  @Test func authTypedWrongNotAskedAgain() throws {
    let (verdict, conversation) = run(.auth, [typed("not the password at all")])
    #expect(verdict == .authenticationError)
    #expect(conversation.requests == ["AUTHTOK Password: "])
  }

  /// A locked name gets PAM_MAXTRIES and the lock's sentence.
  @Test func authLocked() throws {
    for _ in 0..<5 { _ = run(.auth, [typed("not the password at all")]) }
    let (verdict, conversation) = run(.auth, [typed(password)])
    #expect(verdict == .maximumTries)
    #expect(conversation.requests.last?.hasPrefix("ERROR Too many failed") == true)
  }

  /// On a Public device nobody authenticates, and every other stage knows no user.
  @Test func publicDevice() throws {
    let empty = try World()
    let conversation = ScriptedConversation([typed(password)])
    let request = PamModuleRequest(username: "Alice")
    let env = empty.environment(ScriptedConsole([]))
    #expect(
      PamModuleFlow.run(env, stage: .auth, request: request, conversation: conversation)
        == .authenticationError)
    for stage in [PamStage.account, .password, .openSession] {
      #expect(
        PamModuleFlow.run(env, stage: stage, request: request, conversation: conversation)
          == .userUnknown)
    }
  }

  /// The account stage: unknown, disabled, must change, fine.
  @Test func accountStage() throws {
    #expect(run(.account, [], user: "mallory").0 == .userUnknown)
    #expect(run(.account, []).0 == .success)
    let env = world.environment(ScriptedConsole(["a new password for alice!"]))
    try UserPasswordFlow.run(
      env, username: "Alice", passwordFromStandardInput: true, mustChange: true)
    let (must, told) = run(.account, [])
    #expect(must == .newPasswordRequired)
    #expect(told.requests == ["ERROR \(Messages.mustChangePassword)"])
    try UserAddFlow.run(
      world.environment(ScriptedConsole([password])),
      options: ActivationOptions(
        username: "bob", fullName: "Bob", email: "bob@example.org",
        passwordFromStandardInput: true))
    try UserStateFlow.run(world.environment(ScriptedConsole([])), username: "bob", disabled: true)
    let (disabled, said) = run(.account, [], user: "bob")
    #expect(disabled == .accountExpired)
    #expect(said.requests == ["ERROR \(Messages.pamAccountExpired)"])
  }

  /// `allow_groups`: an account in none of them is denied.
  @Test func accountStageGroups() throws {
    let denied = PamModuleRequest(username: "Alice", allowedGroups: ["wheel"])
    #expect(run(.account, [], request: denied).0 == .permissionDenied)
  }

  /// The password stage: the current password, then the new one twice; the new one works.
  @Test func passwordChange() throws {
    let fresh = "a brand new passphrase for alice"
    let (verdict, conversation) = run(.password, [typed(password), typed(fresh), typed(fresh)])
    #expect(verdict == .success)
    #expect(
      conversation.requests == [
        "OLDAUTHTOK Current password: ", "SECRET New password: ", "SECRET New password again: ",
        "INFO \(Messages.passwordChanged("Alice"))",
      ])
    #expect(run(.auth, [typed(fresh)]).0 == .success)
  }

  /// A wrong current password is counted and changes nothing; new passwords that differ are
  /// refused with the form's sentence.
  @Test func passwordChangeRefused() throws {
    let fresh = "a brand new passphrase for alice"
    #expect(run(.password, [typed("not the password at all")]).0 == .passwordRecoveryError)
    #expect(try failures() == 1)
    let (verdict, conversation) = run(
      .password, [typed(password), typed(fresh), typed(fresh + "!")])
    #expect(verdict == .passwordChangeError)
    #expect(conversation.requests.last == "ERROR \(Messages.passwordsMustMatch)")
    #expect(run(.auth, [typed(password)]).0 == .success)
  }

  /// A new password left unanswered (the conversation failed) is a failed change, not a wrong
  /// current password: nothing is counted or changed.
  @Test func passwordChangeUnanswered() throws {
    #expect(run(.password, [typed(password), .none]).0 == .passwordChangeError)
    #expect(try failures() == 0)
    #expect(run(.auth, [typed(password)]).0 == .success)
  }

  /// PAM_CHANGE_EXPIRED_AUTHTOK changes nothing for a password that need not change; root
  /// sets another user's password without the current one.
  @Test func passwordChangeExpiredOnlyAndRoot() throws {
    let quiet = PamModuleRequest(username: "Alice", expiredOnly: true, callerIsRoot: true)
    let (unchanged, asked) = run(.password, [], request: quiet)
    #expect(unchanged == .success)
    #expect(asked.requests.isEmpty)
    let fresh = "root chose this passphrase"
    let root = PamModuleRequest(username: "Alice", callerIsRoot: true)
    #expect(run(.password, [typed(fresh), typed(fresh)], request: root).0 == .success)
    #expect(run(.auth, [typed(fresh)]).0 == .success)
  }

  /// A forced change (PAM_CHANGE_EXPIRED_AUTHTOK) of an account with a second factor asks the
  /// code with the current password, unless this handle's auth accepted the person just before
  /// (a key login never ran auth).
  @Test func expiredChangeAsksTheCodeWithoutAuth() throws {
    // Given Alice with a second factor and a password that must change
    let (secret, _) = try world.enableAlice()
    try UserPasswordFlow.run(
      world.environment(ScriptedConsole(["a new password for alice!"])), username: "Alice",
      passwordFromStandardInput: true, mustChange: true)
    let current = "a new password for alice!"
    let fresh = "a brand new passphrase for alice"
    // When the forced change runs with no auth before it (a step after enrolment's), Then the
    // code is asked
    world.clock.now += 60
    let keyLogin = PamModuleRequest(username: "Alice", expiredOnly: true, callerIsRoot: true)
    let (verdict, asked) = run(
      .password, [typed(current), typed(try world.code(secret)), typed(fresh), typed(fresh)],
      request: keyLogin)
    #expect(verdict == .success)
    #expect(
      asked.requests.prefix(2) == ["OLDAUTHTOK Current password: ", "SECRET Verification code: "])
    // And a wrong code changes nothing
    try UserPasswordFlow.run(
      world.environment(ScriptedConsole([current])), username: "Alice",
      passwordFromStandardInput: true, mustChange: true)
    world.clock.now += 60
    #expect(
      run(.password, [typed(current), typed("000000")], request: keyLogin).0
        == .passwordRecoveryError)
    // When auth ran in this handle, Then only the passwords are asked
    let afterAuth = PamModuleRequest(
      username: "Alice", expiredOnly: true, authenticated: true, callerIsRoot: true)
    let (done, told) = run(
      .password, [typed(current), typed(fresh), typed(fresh)], request: afterAuth)
    #expect(done == .success)
    #expect(!told.requests.contains("SECRET Verification code: "))
  }

  /// Sessions are recorded with where they came from; another module's user is not.
  @Test func sessions() throws {
    #expect(run(.openSession, []).0 == .success)
    #expect(run(.closeSession, []).0 == .success)
    #expect(run(.openSession, [], user: "mallory").0 == .userUnknown)
    let events = try world.store.auditEvents(limit: 2)
    #expect(events.map(\.kind) == [.pamSessionOpened, .pamSessionClosed])
    #expect(events.map(\.detail) == ["pam service=login tty=tty1", "pam service=login tty=tty1"])
  }

  /// Every stage on `Alice` with a name service that knows what `names` says.
  func runNamed(
    _ stage: PamStage, _ answers: [PamAnswer], names: FakeNameService, user: String = "Alice"
  ) -> PamVerdict {
    var env = world.environment(ScriptedConsole([]))
    env.nameService = names
    let conversation = ScriptedConversation(answers)
    let verdict = PamModuleFlow.run(
      env, stage: stage, request: PamModuleRequest(username: user, service: "su"),
      conversation: conversation)
    #expect(conversation.answers.isEmpty, "answers left over")
    return verdict
  }

  /// Gives Alice's account the uid `uid`, as its first user record does.
  func giveAliceUID(_ uid: Int64) throws {
    let alice = try #require(try world.store.account(key: "alice"))
    try world.store.write { writer throws(AccountsError) in
      _ = try writer.givePosixID(uid, kind: .user, name: "Alice", at: world.clock.now)
      try writer.setUID(uid, home: "/home/Alice", accountID: alice.id)
    }
  }

  /// A name NSS gives another user (a system user, a directory's) never reaches the account at
  /// any stage: the right password is refused as a wrong one (and counted), and the other
  /// stages answer that the name is none of the module's.
  @Test func nameOfAnotherSystemUser() throws {
    // Given an account Alice whose record has uid 20001, and NSS giving Alice uid 0
    try giveAliceUID(20001)
    let names = FakeNameService()
    names.users["Alice"] = 0
    // When each stage runs for Alice, Then none succeeds
    #expect(runNamed(.auth, [typed(password)], names: names) == .authenticationError)
    #expect(try failures() == 1)
    #expect(runNamed(.account, [], names: names) == .userUnknown)
    #expect(runNamed(.openSession, [], names: names) == .userUnknown)
    #expect(runNamed(.password, [], names: names) == .userUnknown)
    // And with the account's own uid, or a name NSS does not know (a virtual user), it does
    names.users["Alice"] = 20001
    #expect(runNamed(.auth, [typed(password)], names: names) == .success)
    names.users = [:]
    #expect(runNamed(.auth, [typed(password)], names: names) == .success)
    #expect(runNamed(.account, [], names: names) == .success)
  }

  /// An account that never had a user record is not the system user NSS knows by its name.
  @Test func nameOfSystemUserWithoutRecord() throws {
    let names = FakeNameService()
    names.users["Alice"] = 1000
    #expect(runNamed(.auth, [typed(password)], names: names) == .authenticationError)
    #expect(runNamed(.account, [], names: names) == .userUnknown)
  }

  /// A user of /etc/passwd is refused at auth and answered as unknown at every other stage,
  /// before the store is read: nothing is asked, nothing counted, even with no store at all.
  @Test func localUserBeforeTheStore() throws {
    let names = FakeNameService()
    names.users["Alice"] = 1000
    names.localUsers = ["Alice"]
    for stage in PamStage.allCases {
      #expect(
        runNamed(stage, [], names: names) == (stage == .auth ? .authenticationError : .userUnknown))
    }
    #expect(try failures() == 0)
    // And with the store gone (unreadable), still unknown rather than unavailable
    var env = world.environment(ScriptedConsole([]))
    env.nameService = names
    env.openStore = { _ throws(StoreError) in
      throw StoreError.failure(location: "x", reason: "the server is away")
    }
    let verdict = PamModuleFlow.run(
      env, stage: .account, request: PamModuleRequest(username: "Alice"),
      conversation: ScriptedConversation([]))
    #expect(verdict == .userUnknown)
  }

  /// A user NSS gives from a directory (no user record of that uid names it) is none of the
  /// module's either, decided before the store: its account stage passes to the next module
  /// while the store is away.
  @Test func directoryUserBeforeTheStore() throws {
    let names = FakeNameService()
    names.users["Alice"] = 70001
    names.otherUsers = ["Alice"]
    var env = world.environment(ScriptedConsole([]))
    env.nameService = names
    env.openStore = { _ throws(StoreError) in
      throw StoreError.failure(location: "x", reason: "the server is away")
    }
    for stage in PamStage.allCases {
      let verdict = PamModuleFlow.run(
        env, stage: stage, request: PamModuleRequest(username: "Alice"),
        conversation: ScriptedConversation([]))
      #expect(verdict == (stage == .auth ? .authenticationError : .userUnknown))
    }
    // While a record's user with the store away is the store's to answer: unavailable
    names.otherUsers = []
    let verdict = PamModuleFlow.run(
      env, stage: .account, request: PamModuleRequest(username: "Alice"),
      conversation: ScriptedConversation([]))
    #expect(verdict == .storeUnavailable)
  }
}
