/// The sentences of `pam-auth`, and the audit details of a PAM login.
extension Messages {
  /// An audit detail with where the login came from.
  public static func detail(_ detail: String, origin: String?) -> String {
    origin.map { "\(detail); \($0)" } ?? detail
  }
  /// Where a PAM login came from: `pam service=sshd rhost=203.0.113.5 tty=ssh`.
  public static func pamOrigin(service: String?, remoteHost: String?, tty: String?) -> String {
    var parts = ["pam"]
    for (name, value) in [("service", service), ("rhost", remoteHost), ("tty", tty)] {
      if let value, !value.isEmpty { parts.append("\(name)=\(value)") }
    }
    return parts.joined(separator: " ")
  }
  /// A login's factors, as its `login_success` event says them.
  public static func detailFactors(_ proof: VerificationProof?) -> String {
    switch proof {
    case nil: "password"
    case .totp, .serverCheck: "password and TOTP code"
    case .recovery: "password and recovery code"
    }
  }
  /// A login PAM's session stage records: sshd let the person in with a key.
  public static let detailKeyLogin = "ssh-key"
  /// A login PAM's session stage records: another module, or none (root's `su`), let the
  /// person in.
  public static let detailSessionLogin = "pam-session"
  /// Why PAM's account stage refused an account (`access_refused`).
  public static let detailRefusedDisabled = "account disabled"
  /// Why PAM's account stage refused an account (`access_refused`).
  public static let detailRefusedExpired = "account expired"
  /// Why PAM's account stage refused an account (`access_refused`).
  public static let detailRefusedGroups = "in none of the allowed groups"
  /// Audit detail: a 2FA account's PAM string without a code.
  public static let detailNoCode = "no verification code"
  /// `pam-auth` or `pam-helper` (`command`) without `--database`.
  public static func pamNeedsDatabase(_ command: String) -> String {
    "\(command) needs --database PATH (the environment's database is never used)."
  }
  /// A PAM item cut to its limit in the audit detail.
  public static func pamItemCut(_ kept: String) -> String { kept + "…" }
  /// `pam-auth --database` or `pam-helper --database` with a relative path (or anything else that is not a URI; not
  /// quoted, as libpq's keyword form may hold a password).
  public static func pamDatabaseRelative(_ command: String) -> String {
    "\(command) needs --database as an absolute path or a postgresql:// URI: a relative one "
      + "would depend on the caller's working folder."
  }
  /// `pam-auth` without PAM_USER (`caller`: what runs it, pam_exec or pam_accounts.so).
  public static func pamUserMissing(_ command: String, caller: String) -> String {
    "PAM_USER is not set: \(command) is run by \(caller)."
  }
  /// `pam-auth` with too much on standard input.
  public static func pamInputTooLong(_ limit: Int) -> String {
    "The password on standard input is longer than \(limit) bytes."
  }
  /// `pam-auth --time-limit` out of its range.
  public static func pamTimeLimitRange(_ range: ClosedRange<UInt32>) -> String {
    "--time-limit takes a whole number of seconds from \(range.lowerBound) to "
      + "\(range.upperBound)."
  }

  /// The module's account stage: a disabled or expired account.
  public static let pamAccountExpired =
    "Your account has expired or been disabled; please contact your administrator."
  /// The module's account stage: in none of the groups the service line allows.
  public static let pamNotInAllowedGroups = "Your account may not log in to this service."
  /// `pam-helper --allow-groups` with a name no group can have.
  public static func pamHelperGroupName(_ name: String) -> String {
    "--allow-groups takes group names separated by commas; \"\(Escaping.visible(name))\" is "
      + "not one."
  }
  /// `pam-helper` with a stage it does not know.
  public static func pamHelperStage(_ stage: String) -> String {
    "pam-helper takes a stage: auth, account, password, open-session or close-session, not "
      + "\"\(Escaping.visible(stage))\"."
  }
  /// `pam-helper --session-login` with a way it does not know.
  public static func pamHelperSessionLogin(_ value: String) -> String {
    "pam-helper --session-login takes ssh-key or pam-session, not "
      + "\"\(Escaping.visible(value))\"."
  }
}
