import AccountsCore
import Testing

/// A store's schema sorted once in the core, by the migrations it records.
@Suite("Schema contents")
struct SchemaContentsTests {
  private let known = ["v1", "v2", "v3"]

  private func sorted(_ recorded: Set<String>?, hasTables: Bool = false) -> SchemaContents {
    SchemaContents.sorting(known: known, recorded: recorded) { hasTables }
  }

  /// No migration record: absent when nothing else is there, foreign when tables are.
  @Test func withoutMigrationRecord() {
    #expect(sorted(nil) == .absent)
    #expect(sorted(nil, hasTables: true) == .foreign)
  }

  /// With a record: older, current or newer, whatever other tables there are.
  @Test func withMigrationRecord() {
    #expect(sorted(["v1"], hasTables: true) == .older)
    #expect(sorted(["v1", "v2", "v3"]) == .current)
    #expect(sorted(["v1", "v2", "v3", "v4"]) == .newer)
    #expect(sorted(["v1", "w9"]) == .newer)
  }

  /// Tables are looked for only when there is no migration record.
  @Test func asksForTablesOnlyWithoutRecord() {
    var asked = 0
    _ = SchemaContents.sorting(known: known, recorded: ["v1"]) {
      asked += 1
      return true
    }
    #expect(asked == 0)
  }

  /// Foreign and newer contents are refused, in their own errors about the store's location.
  @Test func refusals() {
    #expect(SchemaContents.foreign.refusal(location: "/x") == .foreignDatabase(location: "/x"))
    #expect(
      SchemaContents.foreign.refusal(location: "postgresql:///x", schema: "accounts")
        == .foreignSchema(location: "postgresql:///x", schema: "accounts"))
    #expect(SchemaContents.newer.refusal(location: "/x") == .newerSchema(location: "/x"))
    for contents in [SchemaContents.absent, .older, .current] {
      #expect(contents.refusal(location: "/x") == nil)
    }
  }
}
