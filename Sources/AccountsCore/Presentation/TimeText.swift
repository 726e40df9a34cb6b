// Foundation, not FoundationEssentials: `DateFormatter`.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Dates and durations as a person reads them.
enum TimeText {
  /// Like `date`: `Sat Nov 21 23:25:24 UTC 2026`.
  static func long(_ date: Date, timeZone: TimeZone) -> String {
    format(date, "EEE MMM d HH:mm:ss '\(zone(date, timeZone))' yyyy", timeZone)
  }

  /// `23:41:07 UTC`.
  static func clock(_ date: Date, timeZone: TimeZone) -> String {
    format(date, "HH:mm:ss '\(zone(date, timeZone))'", timeZone)
  }

  /// The zone's abbreviation as `date` prints it (`UTC`, `CET`, `EST`).
  ///
  /// For the process's own zone the C library's name is used: Foundation on Linux says `GMT`
  /// for UTC and `GMT+1` for Paris.
  private static func zone(_ date: Date, _ timeZone: TimeZone) -> String {
    if timeZone == TimeZone.current {
      tzset()
      var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
      var parts = tm()
      if localtime_r(&seconds, &parts) != nil, let name = parts.tm_zone {
        return String(cString: name)
      }
    }
    return timeZone.abbreviation(for: date) ?? timeZone.identifier
  }

  private static func format(_ date: Date, _ pattern: String, _ timeZone: TimeZone) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = timeZone
    formatter.dateFormat = pattern
    return formatter.string(from: date)
  }

  /// `1 hour`, `24 hours`, `90 minutes`: a setting's length, in whole hours when it is.
  static func span(_ seconds: TimeInterval) -> String {
    let whole = Int(seconds)
    if whole % 3600 == 0 { return whole == 3600 ? "1 hour" : "\(whole / 3600) hours" }
    return duration(seconds)
  }

  /// `1 minute`, `45 seconds`, `2 minutes` (rounded up).
  static func duration(_ seconds: TimeInterval) -> String {
    let whole = max(1, Int(min(seconds, 1e9).rounded(.up)))
    if whole < 60 { return whole == 1 ? "1 second" : "\(whole) seconds" }
    let minutes = (whole + 59) / 60
    return minutes == 1 ? "1 minute" : "\(minutes) minutes"
  }
}
