import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// UTC ISO-8601 timestamps with milliseconds, as stored: `2026-11-21T23:25:24.123Z`.
///
/// Fixed width, so that text order is time order.
public enum Timestamp {
  /// Formats `date` as stored.
  public static func string(from date: Date) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(24)
    append(date, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Appends `date` as stored to `bytes`, digit by digit (a million rows of `user list`
  /// format two each).
  public static func append(_ date: Date, to bytes: inout [UInt8]) {
    let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    let (days, inDay) = floorDivision(milliseconds, 86_400_000)
    let (year, month, day) = civil(fromDays: days)
    func digits(_ value: Int64, _ width: Int) {
      var divisor: Int64 = 1
      for _ in 1..<width { divisor *= 10 }
      var remaining = max(value, 0) % (divisor * 10)
      while divisor > 0 {
        bytes.append(UInt8(ascii: "0") + UInt8(remaining / divisor))
        remaining %= divisor
        divisor /= 10
      }
    }
    digits(year, 4)
    bytes.append(UInt8(ascii: "-"))
    digits(month, 2)
    bytes.append(UInt8(ascii: "-"))
    digits(day, 2)
    bytes.append(UInt8(ascii: "T"))
    digits(inDay / 3_600_000, 2)
    bytes.append(UInt8(ascii: ":"))
    digits(inDay / 60_000 % 60, 2)
    bytes.append(UInt8(ascii: ":"))
    digits(inDay / 1000 % 60, 2)
    bytes.append(UInt8(ascii: "."))
    digits(inDay % 1000, 3)
    bytes.append(UInt8(ascii: "Z"))
  }

  /// `value` divided by `divisor`, rounded down, and the remainder (never negative).
  private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
    let remainder = value % divisor
    return remainder < 0
      ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
  }

  /// The proleptic Gregorian date of `days` since 1970-01-01 (Howard Hinnant's algorithm).
  static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of `civil`).
  static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// Parses a stored timestamp; nil when `text` is not in the stored form.
  public static func date(from text: String) -> Date? {
    let bytes = Array(text.utf8)
    guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
      bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
      bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
      bytes[23] == UInt8(ascii: "Z")
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      var value = 0
      for index in range {
        let byte = bytes[index]
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
      }
      return value
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      let millis = number(20..<23)
    else { return nil }
    // Only real dates and times: no February 30, no 25 o'clock (nothing rolls over).
    let dayNumber = days(year: Int64(year), month: Int64(month), day: Int64(day))
    guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60,
      civil(fromDays: dayNumber) == (Int64(year), Int64(month), Int64(day))
    else { return nil }
    let seconds =
      dayNumber * 86_400
      + Int64(hour * 3600 + minute * 60 + second)
    return Date(timeIntervalSince1970: Double(seconds) + Double(millis) / 1000)
  }
}
