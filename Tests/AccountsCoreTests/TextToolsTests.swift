import Foundation
import Testing

@testable import AccountsCore

/// The program's own string helpers against Foundation's, which the tests may still use as the
/// oracle: the same answers on the same inputs.
@Suite("Text tools")
struct TextToolsTests {
  static let texts = [
    "", "plain", "e\u{301}t\u{E9}", "\u{212B}ngstr\u{F6}m", "\u{FB01}ne",
    "\u{FF21}\u{FF42}\u{FF43}",
    "\u{2460}\u{00BD}", "\u{1100}\u{1161}\u{11A8}", "\u{FF76}", "\u{3000}x\u{3000}",
    "\u{1E9B}\u{323}", "Stra\u{DF}e", "\u{0041}\u{030A}\u{0301}", "\u{1F600} \u{0627}\u{0644}",
  ]

  /// NFC and NFKC as utf8proc makes them equal Foundation's on composed, decomposed,
  /// compatibility, Hangul and emoji text.
  @Test(arguments: texts) func normalizationForms(text: String) throws {
    #expect(
      Array(try UnicodeForms.nfc(text).unicodeScalars)
        == Array(text.precomposedStringWithCanonicalMapping.unicodeScalars))
    #expect(
      Array(try UnicodeForms.nfkc(text).unicodeScalars)
        == Array(text.precomposedStringWithCompatibilityMapping.unicodeScalars))
  }

  /// Half-width katakana with a half-width (semi-)voiced mark: UAX #15's NFKC composes the pair
  /// (Python's `unicodedata.normalize("NFKC", …)` gives U+30AC and U+30D1); Foundation on
  /// Linux leaves it decomposed (U+30AB U+3099), so here the standard is the oracle.
  @Test func nfkcComposesHalfWidthKana() throws {
    #expect(Array(try UnicodeForms.nfkc("\u{FF76}\u{FF9E}").unicodeScalars) == ["\u{30AC}"])
    #expect(Array(try UnicodeForms.nfkc("\u{FF8A}\u{FF9F}").unicodeScalars) == ["\u{30D1}"])
    #expect(Array(try UnicodeForms.nfc("\u{304B}\u{3099}").unicodeScalars) == ["\u{304C}"])
  }

  /// The password's form is still Foundation's, those marks included: every stored hash matches.
  @Test(
    arguments: texts + [
      "\u{FF76}\u{FF9E}", "\u{30AB}\u{FF9E}", "\u{FF76}\u{3099}", "\u{FF8A}\u{FF9F}x\u{FF9E}",
      "a\u{FF9E}", "\u{FF9E}", "\u{FF73}\u{FF9E}\u{FB01}", "\u{FF9F}\u{301}e\u{301}",
    ])
  func passwordFormIsFoundations(text: String) throws {
    #expect(
      Array(try PasswordRules.normalized(text).unicodeScalars)
        == Array(text.precomposedStringWithCompatibilityMapping.unicodeScalars))
  }

  /// Trimming: every White_Space scalar Foundation's sets name, at either end, and nothing else.
  @Test func trimming() {
    let spaces = (0...0x3000).compactMap(Unicode.Scalar.init).filter {
      CharacterSet.whitespacesAndNewlines.contains($0)
    }
    for space in spaces {
      let text = "\(space)a b\(space)"
      #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
      #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces))
    }
    #expect(" \t\n ".trimmingWhitespace() == "")
    #expect("x".trimmingSpaces() == "x")
  }

  /// Percent-decoding: the same text, and nil for the same malformed input.
  @Test(arguments: [
    "plain", "a%20b", "%E2%82%AC", "%e2%82%ac", "100%", "%4", "%zz", "%FF", "%25%32%35", "",
  ])
  func percentDecoding(text: String) {
    #expect(text.percentDecoded() == text.removingPercentEncoding)
  }

  /// Paths: a relative part after a folder, with or without its trailing slashes.
  @Test(arguments: ["/", "/home/a", "/home/a/", "/home/a//", "relative", "rel/"])
  func paths(base: String) {
    #expect(
      base.appendingPath(".local/share/x")
        == (base as NSString).appendingPathComponent(
          ".local/share/x"))
  }

  /// Grouped numbers, as Foundation groups them in English.
  @Test(arguments: [0, 7, 999, 1000, 12_345, 999_999, 1_000_000, 1_234_567_890, -4_321])
  func grouping(number: Int) {
    #expect(
      number.grouped
        == number.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US"))))
  }

  /// JSON values read as JSONSerialization reads them, shown compactly.
  @Test func jsonValues() throws {
    let text = #"{"b": [1, 2.5, -3e2, true, null, "x\"\n"], "a": {"u": 4294967294}}"#
    let value = try #require(JSONValue(parsing: Array(text.utf8)))
    #expect(value["a"]?["u"]?.integer == 4_294_967_294)
    #expect(value["b"]?.array?.map(\.text) == ["1", "2.5", "-300", "true", "null", #""x\"\n""#])
    #expect(value.text == #"{"a":{"u":4294967294},"b":[1,2.5,-300,true,null,"x\"\n"]}"#)
    #expect(JSONValue(parsing: Array("false".utf8)) == .bool(false))
    #expect(JSONValue(parsing: Array("[1,".utf8)) == nil)
    #expect(JSONValue(parsing: Array("1".utf8))?.bool == nil)
    #expect(JSONValue(parsing: Array("true".utf8))?.number == nil)
  }

  /// Dates as date(1) shows them: the day unpadded, the C locale's names, the zone's abbreviation,
  /// against DateFormatter in fixed zones.
  @Test(arguments: ["GMT", "GMT+0530", "GMT-0800"])
  func longDates(zone: String) throws {
    let timeZone = try #require(TimeZone(identifier: zone))
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = timeZone
    for seconds in [0.0, 1_764_201_924.9, 1_780_000_000, 951_782_400] {
      let date = Date(timeIntervalSince1970: seconds)
      let name = timeZone.abbreviation(for: date) ?? zone
      formatter.dateFormat = "EEE MMM d HH:mm:ss '\(name)' yyyy"
      #expect(TimeText.long(date, timeZone: timeZone) == formatter.string(from: date))
      formatter.dateFormat = "HH:mm:ss '\(name)'"
      #expect(TimeText.clock(date, timeZone: timeZone) == formatter.string(from: date))
    }
  }
}
