import FoundationEssentials

/// What a host tells the store after each `userdb sync` (PostgreSQL migration "v19"): that it
/// was heard from, and how its last sync went.
public struct HostReport: Equatable, Sendable {
  /// The host, as this process names it (a host's own role names its host whatever is sent).
  public var host: String
  /// The store's change counter the host's records now hold; nil when the sync failed.
  public var applied: Int64?
  /// The program's release the host runs.
  public var release: String
  /// Why the sync failed, in one line; nil when it worked.
  public var failure: String?
  /// The syncs before it that could not reach the server (migration "v23"); nil for none.
  public var unreached: UnreachedSyncs?

  /// Creates a report.
  public init(
    host: String, applied: Int64?, release: String, failure: String? = nil,
    unreached: UnreachedSyncs? = nil
  ) {
    self.host = host
    self.applied = applied
    self.release = release
    self.failure = failure
    self.unreached = unreached
  }
}

/// One host as `store health` sees it: what it reported, and its newest event.
public struct HostHealthFacts: Equatable, Sendable {
  /// The host's name.
  public var name: String
  /// True when the host keeps user records of the store (so it syncs on a timer).
  public var keepsRecords: Bool
  /// When the host was last heard from: its last report or its newest event; nil for never.
  public var lastContact: Date?
  /// When its last sync that worked was reported; nil for never.
  public var lastSync: Date?
  /// The change counter its records hold, as it last reported; nil for never.
  public var applied: Int64?
  /// The release it last reported running; nil for never.
  public var release: String?
  /// Its syncs that failed in a row since the last that worked.
  public var failures: Int
  /// The last failure's one-line reason (kept after a sync that worked); nil for none.
  public var lastFailure: String?
  /// The syncs it last reported could not reach the server; nil for none.
  public var unreached: UnreachedReport?

  /// Creates a host's facts.
  public init(
    name: String, keepsRecords: Bool, lastContact: Date? = nil, lastSync: Date? = nil,
    applied: Int64? = nil, release: String? = nil, failures: Int = 0, lastFailure: String? = nil,
    unreached: UnreachedReport? = nil
  ) {
    self.name = name
    self.keepsRecords = keepsRecords
    self.lastContact = lastContact
    self.lastSync = lastSync
    self.applied = applied
    self.release = release
    self.failures = failures
    self.lastFailure = lastFailure
    self.unreached = unreached
  }
}

/// The syncs a host could not bring to the server, as its next report said (migration "v23").
public struct UnreachedReport: Equatable, Sendable {
  /// How many syncs could not reach the server.
  public var count: Int
  /// When the first failed (the host's clock).
  public var first: Date
  /// When the last failed (the host's clock).
  public var last: Date
  /// The last one's reason, one line.
  public var reason: String
  /// When the server was told (the server's clock).
  public var reportedAt: Date

  /// Creates a report of unreached syncs.
  public init(count: Int, first: Date, last: Date, reason: String, reportedAt: Date) {
    self.count = count
    self.first = first
    self.last = last
    self.reason = reason
    self.reportedAt = reportedAt
  }
}

/// What `store health` reads from a reachable store, in one snapshot.
public struct StoreHealthFacts: Equatable, Sendable {
  /// The server's time when it answered.
  public var now: Date
  /// The store's schema against this program's.
  public var schema: SchemaContents
  /// The newest migration the store holds and the newest this program knows (`vN`'s N).
  public var storeSchema: Int
  /// The newest migration this program knows.
  public var programSchema: Int
  /// When `store roles --apply` last gave the fleet's roles their rights; nil for never.
  public var rolesAppliedAt: Date?
  /// When the newest migration ran.
  public var migratedAt: Date?
  /// The store's change counter.
  public var generation: Int64
  /// Failed logins (`login_failure` events) in the last hour.
  public var failedLogins: Int
  /// Every host the store knows (keeping records, with a role of its own, or that reported),
  /// by name.
  public var hosts: [HostHealthFacts]

  /// Creates the facts.
  public init(
    now: Date, schema: SchemaContents, storeSchema: Int, programSchema: Int,
    rolesAppliedAt: Date?, migratedAt: Date?, generation: Int64, failedLogins: Int,
    hosts: [HostHealthFacts]
  ) {
    self.now = now
    self.schema = schema
    self.storeSchema = storeSchema
    self.programSchema = programSchema
    self.rolesAppliedAt = rolesAppliedAt
    self.migratedAt = migratedAt
    self.generation = generation
    self.failedLogins = failedLogins
    self.hosts = hosts
  }
}

/// The limits past which `store health` calls a store degraded.
public struct HealthThresholds: Equatable, Sendable {
  /// A host that keeps records and has not been heard from for this many minutes is silent.
  public var silentMinutes: Int
  /// A host behind the store whose last sync is this many minutes old is behind (its timer
  /// had time to catch up).
  public var behindMinutes: Int
  /// This many failed syncs in a row make a host failing.
  public var failures: Int
  /// This many failed logins in the last hour degrade the store; nil: never.
  public var failedLogins: Int?
  /// Syncs that could not reach the server, reported less than this many hours ago, make a
  /// host degraded.
  public var unreachedHours: Int

  /// The defaults: a timer every five minutes missed twice (silent after 15, behind after 10),
  /// one failed sync, failed logins only counted, unreached syncs for a day after their report.
  public init(
    silentMinutes: Int = 15, behindMinutes: Int = 10, failures: Int = 1, failedLogins: Int? = nil,
    unreachedHours: Int = 24
  ) {
    self.silentMinutes = silentMinutes
    self.behindMinutes = behindMinutes
    self.failures = failures
    self.failedLogins = failedLogins
    self.unreachedHours = unreachedHours
  }
}

/// Why a store is degraded; each says one thing, with its data.
public enum HealthProblem: Equatable, Sendable {
  /// The store's schema is older than the program's (`store`, `program`: the newest `vN`).
  case schemaOlder(store: Int, program: Int)
  /// The store's schema is newer than the program's.
  case schemaNewer(store: Int, program: Int)
  /// The fleet's roles got their rights before the newest migration ran.
  case rolesBeforeMigration(appliedAt: Date, migratedAt: Date)
  /// A host that keeps records was not heard from since `lastContact` (nil: never).
  case silent(host: String, lastContact: Date?)
  /// A host's records hold `applied` (nil: it never reported) of the store's `generation`.
  case behind(host: String, applied: Int64?, generation: Int64, lastSync: Date?)
  /// A host's last `failures` syncs failed, the last for `reason`.
  case failing(host: String, failures: Int, reason: String?)
  /// A host's `count` syncs from `first` to `last` could not reach the server, the last for
  /// `reason`; reported recently.
  case unreached(host: String, count: Int, first: Date, last: Date, reason: String)
  /// `count` failed logins in the last hour, at or above the limit.
  case failedLogins(count: Int)
}

/// `store health`'s verdict from the facts: what is wrong, by the thresholds.
public enum StoreHealth {
  /// What `store health` exits with: 0 healthy, 1 degraded (3, unreachable, is the store's
  /// error).
  public static func status(_ problems: [HealthProblem]) -> ExitStatus {
    problems.isEmpty ? .success : .refused
  }

  /// True when the fleet's roles got their rights before the store's newest migration ran.
  ///
  /// `appliedAt` is nil for never. Roles behind may lack what the migration added, until
  /// `store roles --apply` runs again; `store upgrade` keeps roles that are not behind so.
  public static func rolesBehind(appliedAt: Date?, migratedAt: Date?) -> Bool {
    guard let appliedAt, let migratedAt else { return false }
    return appliedAt < migratedAt
  }

  /// Every problem `facts` shows: the schema, the roles, then host by host (silent, behind,
  /// failing, unreached), then the failed logins.
  public static func problems(_ facts: StoreHealthFacts, _ limits: HealthThresholds)
    -> [HealthProblem]
  {
    var found: [HealthProblem] = []
    switch facts.schema {
    case .older:
      found.append(.schemaOlder(store: facts.storeSchema, program: facts.programSchema))
    case .newer, .needsRelease:
      found.append(.schemaNewer(store: facts.storeSchema, program: facts.programSchema))
    case .absent, .foreign, .current: break
    }
    if rolesBehind(appliedAt: facts.rolesAppliedAt, migratedAt: facts.migratedAt),
      let applied = facts.rolesAppliedAt, let migrated = facts.migratedAt
    {
      found.append(.rolesBeforeMigration(appliedAt: applied, migratedAt: migrated))
    }
    for host in facts.hosts {
      found += problems(of: host, facts, limits)
    }
    if let limit = limits.failedLogins, facts.failedLogins >= limit {
      found.append(.failedLogins(count: facts.failedLogins))
    }
    return found
  }

  private static func problems(
    of host: HostHealthFacts, _ facts: StoreHealthFacts, _ limits: HealthThresholds
  ) -> [HealthProblem] {
    var found: [HealthProblem] = []
    if host.keepsRecords {
      if !heard(host.lastContact, within: limits.silentMinutes, of: facts.now) {
        found.append(.silent(host: host.name, lastContact: host.lastContact))
      }
      if (host.applied ?? -1) < facts.generation,
        !heard(host.lastSync, within: limits.behindMinutes, of: facts.now)
      {
        found.append(
          .behind(
            host: host.name, applied: host.applied, generation: facts.generation,
            lastSync: host.lastSync))
      }
    }
    if host.failures > 0 && host.failures >= limits.failures {
      found.append(.failing(host: host.name, failures: host.failures, reason: host.lastFailure))
    }
    if let unreached = host.unreached,
      heard(unreached.reportedAt, within: limits.unreachedHours * 60, of: facts.now)
    {
      found.append(
        .unreached(
          host: host.name, count: unreached.count, first: unreached.first, last: unreached.last,
          reason: unreached.reason))
    }
    return found
  }

  /// Whether `date` is less than `minutes` before `now`.
  private static func heard(_ date: Date?, within minutes: Int, of now: Date) -> Bool {
    guard let date else { return false }
    return now.timeIntervalSince(date) < Double(minutes) * 60
  }
}
