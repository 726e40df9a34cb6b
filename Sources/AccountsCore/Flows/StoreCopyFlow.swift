import FoundationEssentials

/// `accounts store copy --from SOURCE --to TARGET` (administrator): a whole store moved, row by
/// row, ids and sequences kept, into an empty one (SQLite to PostgreSQL and back); every table
/// but the sessions (people log in again on the new store).
///
/// The source is read in one consistent view and the target written in one transaction: a
/// failure or a kill leaves the target as empty as it was. Nothing is added to either audit
/// log, so that the copy equals the source.
public enum StoreCopyFlow {
  /// What a copy moved.
  public struct Summary: Equatable, Sendable {
    public var accounts: Int
    public var events: Int
    public var secondFactors: Int

    public init(accounts: Int = 0, events: Int = 0, secondFactors: Int = 0) {
      self.accounts = accounts
      self.events = events
      self.secondFactors = secondFactors
    }
  }

  /// How many rows go to the target at once.
  public static let batchSize = 250

  /// Copies `source` (which must exist) into `target` (created when missing, refused when not
  /// empty).
  public static func run(source: AccountsEnvironment, target: AccountsEnvironment)
    throws(AccountsError) -> Summary
  {
    guard source.storeLocation != target.storeLocation else {
      throw .copyToItself(source.storeLocation)
    }
    guard let from = try source.readableStore() else {
      throw .noDatabase(location: source.storeLocation)
    }
    let to = try target.writableStore()
    return try from.read { reader throws(AccountsError) in
      try to.write { writer throws(AccountsError) in
        let accounts = try writer.rowCount(.account)
        let events = try writer.rowCount(.auditEvent)
        let others =
          try writer.rowCount(.loginThrottle) + writer.rowCount(.session)
          + writer.rowCount(.group)
        guard accounts == 0, events == 0, others == 0,
          try writer.deviceStatus().state == .publicState
        else {
          throw .copyTargetNotEmpty(
            location: target.storeLocation, accounts: accounts, events: events)
        }
        var summary = Summary()
        for table in StoreRecordKind.allCases where table.isCopied {
          // In batches: one statement per row would make a server's round trip the cost.
          var rows = 0
          var batch: [[StoreValue]] = []
          batch.reserveCapacity(batchSize)
          try reader.forEachRow(of: table) { values throws(AccountsError) in
            batch.append(
              table == .secondFactor
                ? try carried(
                  values, source: source, target: target,
                  fromServer: from.keepsSecondFactorsOnServer,
                  toServer: to.keepsSecondFactorsOnServer)
                : values)
            rows += 1
            if batch.count == batchSize {
              try writer.insertRows(batch, into: table)
              batch.removeAll(keepingCapacity: true)
            }
          }
          if !batch.isEmpty { try writer.insertRows(batch, into: table) }
          switch table {
          case .account: summary.accounts = rows
          case .auditEvent: summary.events = rows
          case .secondFactor: summary.secondFactors = rows
          default: break
          }
        }
        try writer.raiseIDPositions(to: reader.idPositions())
        return summary
      }
    }
  }
}
