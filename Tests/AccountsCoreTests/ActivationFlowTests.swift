import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

@Suite("Activation flow")
struct ActivationFlowTests {
  /// From a pipe, the prompts are read in order and the user is stored with a Django hash.
  @Test func pipeActivation() throws {
    // Given a Public device
    let world = try World()
    let console = ScriptedConsole([
      "alice", "Alice Liddell", "alice@example.org", password, password,
    ])
    // When the form is filled from a pipe
    try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    // Then the prompts came in order, and the user is stored, hashed
    #expect(
      console.prompts == [
        "User name: ", "Full name: ", "E-mail address: ", "(secret) Password: ",
        "(secret) Password again: ",
      ])
    #expect(console.outputs == ["Device activated for alice."])
    let user = try #require(try world.store.user())
    #expect(user.fullName == "Alice Liddell")
    #expect(user.passwordHash.hasPrefix("pbkdf2_sha256$1000$"))
    #expect(!user.passwordHash.contains(password))
    #expect(try world.store.status().state == .activated)
  }

  /// From a pipe, a failing form exits with its message and stores nothing.
  @Test func pipeFailureStoresNothing() throws {
    let world = try World()
    let console = ScriptedConsole([
      "alice", "Alice", "alice@example.org", password, "different one!",
    ])
    #expect(throws: AccountsError.invalidForm(.passwordsMustMatch)) {
      try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    }
    #expect(try world.store.status().state == .publicState)
    #expect(try world.store.auditEvents(limit: nil).isEmpty)
  }

  /// End of input at any prompt cancels; nothing is stored.
  @Test(arguments: 0...4)
  func inputEnds(after lines: Int) throws {
    let world = try World()
    let all = ["alice", "Alice", "alice@example.org", password, password]
    let console = ScriptedConsole(Array(all.prefix(lines)), endsWith: [.endOfInput])
    #expect(throws: AccountsError.inputEnded(.form)) {
      try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    }
    #expect(try world.store.status().state == .publicState)
  }

  /// At a terminal a failed form shows its message and asks again, typed values as defaults.
  @Test func terminalAsksAgain() throws {
    let world = try World()
    let console = ScriptedConsole(
      interactive: true,
      [
        "alice", "Alice Liddell", "alice@example.org", password, "typo", "", "", "", password,
        password,
      ])
    try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    #expect(console.messages == [Messages.passwordRules, "Passwords must match!"])
    #expect(
      Array(console.prompts.suffix(5)) == [
        "User name [alice]: ", "Full name [Alice Liddell]: ",
        "E-mail address [alice@example.org]: ", "(secret) Password: ", "(secret) Password again: ",
      ])
    #expect(try world.store.user()?.email == "alice@example.org")
  }

  /// On an Activated device activation is refused before any prompt.
  @Test func alreadyActivated() throws {
    let world = try World()
    try world.activateAlice()
    let console = ScriptedConsole([])
    #expect(throws: AccountsError.alreadyActivated) {
      try ActivationFlow.run(world.environment(console), options: ActivationOptions())
    }
    #expect(AccountsError.alreadyActivated.description.contains("already activated"))
    #expect(console.prompts.isEmpty)
  }

  /// With flags and --password-stdin only the password is read, once.
  @Test func flagsAndPasswordStdin() throws {
    let world = try World()
    let console = ScriptedConsole([password])
    try ActivationFlow.run(
      world.environment(console),
      options: ActivationOptions(
        username: "bob", fullName: "Bob", email: "bob@example.org", passwordFromStandardInput: true)
    )
    #expect(console.prompts == ["(secret) Password: "])
    #expect(console.isExhausted)
  }
}
