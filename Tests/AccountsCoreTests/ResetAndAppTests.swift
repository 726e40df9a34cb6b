import AccountsCore
import AccountsCrypto
import AccountsStore
import AccountsTestSupport
import Foundation
import Testing

@Suite("Reset and the whole flow")
struct ResetAndAppTests {
  /// Without a terminal and without --yes, reset refuses and changes nothing.
  @Test func resetNeedsConfirmation() throws {
    let world = try World()
    try world.activateAlice()
    #expect(throws: AccountsError.confirmationRequired(.reset)) {
      try ResetFlow.run(world.environment(ScriptedConsole([])), confirmed: false)
    }
    #expect(try world.store.status().state == .activated)
  }

  /// At a terminal the word must be typed; anything else cancels.
  @Test func resetConfirmation() throws {
    let world = try World()
    try world.activateAlice()
    #expect(throws: AccountsError.declined(.reset)) {
      try ResetFlow.run(
        world.environment(ScriptedConsole(interactive: true, ["yes"])), confirmed: false)
    }
    let console = ScriptedConsole(interactive: true, ["reset"])
    try ResetFlow.run(world.environment(console), confirmed: false)
    #expect(console.prompts == ["Type \"reset\" to confirm: "])
    #expect(console.outputs == ["Device reset: it is Public again and its accounts were deleted."])
    #expect(try world.store.status().state == .publicState)
    #expect(try world.store.user() == nil)
  }

  /// Bare `accounts` on a Public device: Activation → Form → Login → Home.
  @Test func wholeFlow() throws {
    let world = try World()
    let console = ScriptedConsole(
      interactive: true,
      ["", "alice", "Alice Liddell", "alice@example.org", password, password, "alice", password])
    let home = try AppFlow.run(world.environment(console))
    #expect(home.fullName == "Alice Liddell")
    #expect(
      console.messages == [
        "This device is not activated yet.", Messages.passwordRules, "Log in to continue.",
      ])
    #expect(console.prompts.first == "Activate now? [Y/n] ")
    #expect(console.prompts.suffix(2) == ["User name: ", "(secret) Password: "])
  }

  /// Answering no at the Activation screen stores nothing.
  @Test func declineActivation() throws {
    let world = try World()
    #expect(throws: AccountsError.declined(.activation)) {
      try AppFlow.run(world.environment(ScriptedConsole(interactive: true, ["n"])))
    }
    #expect(try world.store.status().state == .publicState)
  }

  /// At a terminal the flow gives three login attempts.
  @Test func threeAttempts() throws {
    let world = try World()
    try world.activateAlice()
    let console = ScriptedConsole(
      interactive: true,
      ["alice", "wrong wrong wrong", "alice", "wrong again wrong", "alice", password])
    let home = try AppFlow.run(world.environment(console))
    #expect(home.failuresSince == 2)
    #expect(
      console.messages == ["Invalid user name or password!", "Invalid user name or password!"])
  }

  /// End of input says what really happened at each place: after activation the device stays
  /// activated, at the reset confirmation nothing is deleted, at the first question nothing is
  /// stored.
  @Test func endOfInputSaysWhatHappened() throws {
    let world = try World()
    let bare = ScriptedConsole(
      interactive: true,
      ["", "alice", "Alice Liddell", "alice@example.org", password, password],
      endsWith: [.endOfInput])
    #expect(throws: AccountsError.inputEnded(.loginAfterActivation(username: "alice"))) {
      try AppFlow.run(world.environment(bare))
    }
    #expect(try world.store.status().state == .activated)
    #expect(
      AccountsError.inputEnded(.loginAfterActivation(username: "alice")).description
        == "Input ended before the login; the device stays activated for alice. Run "
        + "`accounts login` to log in.")
    let reset = ScriptedConsole(interactive: true, [], endsWith: [.endOfInput])
    #expect(throws: AccountsError.inputEnded(.resetConfirmation)) {
      try ResetFlow.run(world.environment(reset), confirmed: false)
    }
    #expect(try world.store.status().state == .activated)
    let question = ScriptedConsole(interactive: true, [], endsWith: [.endOfInput])
    let publicWorld = try World()
    #expect(throws: AccountsError.inputEnded(.activationQuestion)) {
      try AppFlow.run(publicWorld.environment(question))
    }
  }
}
