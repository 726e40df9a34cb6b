import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Dates and durations as a person reads them.
///
/// Written with the C library's calendar (`localtime_r`, `gmtime_r`) and English names of its
/// own, not Foundation's `DateFormatter`, which is in its internationalization part (ICU): the
/// text is `date`'s in the C locale, whatever the locale.
enum TimeText {
  private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  private static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  /// Like `date`: `Sat Nov 21 23:25:24 UTC 2026` (the day not padded).
  static func long(_ date: Date, timeZone: TimeZone) -> String {
    let (parts, zone) = broken(date, timeZone)
    let weekday = weekdays[Int(parts.tm_wday) % 7]
    let month = months[Int(parts.tm_mon) % 12]
    return
      "\(weekday) \(month) \(parts.tm_mday) \(clockText(parts)) \(zone) \(1900 + Int(parts.tm_year))"
  }

  /// `23:41:07 UTC`.
  static func clock(_ date: Date, timeZone: TimeZone) -> String {
    let (parts, zone) = broken(date, timeZone)
    return "\(clockText(parts)) \(zone)"
  }

  private static func clockText(_ parts: tm) -> String {
    [parts.tm_hour, parts.tm_min, parts.tm_sec].map { $0 < 10 ? "0\($0)" : "\($0)" }
      .joined(separator: ":")
  }

  /// The date's calendar fields in the zone, and the zone's abbreviation as `date` prints it.
  ///
  /// `UTC`, `CET`, `EST`: the process's own zone is the C library's (TZ, /etc/localtime), as
  /// `date` reads it; another zone (a test's) is its offset from UTC and its abbreviation.
  private static func broken(_ date: Date, _ timeZone: TimeZone) -> (tm, String) {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    if timeZone.identifier == TimeZone.current.identifier {
      tzset()
      if localtime_r(&seconds, &parts) != nil, let name = parts.tm_zone {
        return (parts, String(cString: name))
      }
    }
    seconds += time_t(timeZone.secondsFromGMT(for: date))
    _ = gmtime_r(&seconds, &parts)
    return (parts, timeZone.abbreviation(for: date) ?? timeZone.identifier)
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
