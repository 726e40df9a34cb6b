/// The SQL of PostgreSQL migration "v21" (SQLite's "v13"): the events of `store hosts`.
///
/// `store hosts add` and `remove` are logged. New kinds of events only: every row stays, and an
/// earlier release reads the log as before (a kind it does not know is shown by its name).
let postgresSchemaV21 = """
  INSERT INTO accounts.audit_kind (name) VALUES ('fleet_host_added'), ('fleet_host_removed');
  """
