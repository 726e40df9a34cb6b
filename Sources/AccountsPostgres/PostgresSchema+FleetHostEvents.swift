/// The SQL of PostgreSQL migration "v21" (SQLite's "v13"): the events of `store hosts` and of
/// `store upgrade`.
///
/// `store hosts add` and `remove`, and every `store upgrade` that applied a step from this one
/// on, are logged. New kinds of events only: every row stays, and an earlier release reads the
/// log as before (a kind it does not know is shown by its name).
let postgresSchemaV21 = """
  INSERT INTO accounts.audit_kind (name) VALUES
    ('fleet_host_added'), ('fleet_host_removed'), ('store_upgraded');
  """
