import AccountsCore

extension SQLiteStore {
  /// Opens one command's database once: a later request the open connection can serve gets
  /// the same store back (a state read opened for a change, then the change's write).
  ///
  /// A request it cannot serve (writing through a read-only connection) opens the file again,
  /// and the earlier connection is closed as the new one replaces it.
  public final class Opener {
    private let path: String
    private let busyTimeout: Double
    private var opened: (store: SQLiteStore, access: Access)?

    /// An opener for the database at `path`; nothing is opened yet.
    public init(path: String, busyTimeout: Double) {
      self.path = path
      self.busyTimeout = busyTimeout
    }

    /// The store for `access` (see `SQLiteStore.open`).
    public func open(_ access: Access) throws(StoreError) -> SQLiteStore? {
      if let opened, opened.store.acceptsWrites || access == .readOnly || access == opened.access {
        return opened.store
      }
      opened = nil
      let store = try SQLiteStore.open(path: path, access: access, busyTimeout: busyTimeout)
      opened = store.map { ($0, access) }
      return store
    }
  }
}
