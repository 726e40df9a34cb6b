/// Delivers the events a host's login cache queued while the server was away: by the next
/// command that reaches the server, or by `userdb sync`.
///
/// Exactly once, whatever stops the process: each event is written in a transaction of the
/// server's own, under the id the cache gave it (the server writes an id once), and the cache
/// forgets it only after that committed. Best effort: an event that cannot be delivered now
/// waits for the next command.
public enum OfflineEventDelivery {
  /// Delivers through the store this command opened, when this host keeps a login cache.
  public static func deliver(_ env: AccountsEnvironment) {
    guard let cache = LoginCacheRefresh.cache(env),
      let events = try? cache.queuedEvents(), !events.isEmpty,
      let store = try? env.writableStore()
    else { return }
    for event in events {
      guard (try? store.appendOfflineEvent(event)) != nil else { return }
      env.afterOfflineDelivery?()
      guard (try? cache.dequeue(offlineID: event.offlineID)) != nil else { return }
    }
  }
}
