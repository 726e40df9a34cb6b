/// `accounts store cache`: this host's cache of logins, for when the server is away.
public enum LoginCacheFlow {
  /// Turns the cache on (or sets its days); refused unless the store is a shared server's.
  public static func enable(_ env: AccountsEnvironment, days: Int) throws(AccountsError)
    -> LoginCacheStatus
  {
    let files = try cacheFiles(env)
    return try files.enable(days: days, at: env.now()).status()
  }

  /// What the cache holds; refused when it is off.
  public static func status(_ env: AccountsEnvironment) throws(AccountsError) -> LoginCacheStatus {
    let files = try cacheFiles(env)
    guard let cache = try files.open() else { throw .loginCacheNotEnabled(path: files.path) }
    return try cache.status()
  }

  /// Removes the cache; refused when it is off.
  public static func disable(_ env: AccountsEnvironment) throws(AccountsError) -> String {
    let files = try cacheFiles(env)
    guard try files.remove() else { throw .loginCacheNotEnabled(path: files.path) }
    return files.path
  }

  private static func cacheFiles(_ env: AccountsEnvironment) throws(AccountsError)
    -> any LoginCacheFiles
  {
    guard env.storeContainer == .sharedDatabase, let files = env.loginCacheFiles else {
      throw .loginCacheNeedsServer(location: env.storeLocation)
    }
    return files
  }
}
