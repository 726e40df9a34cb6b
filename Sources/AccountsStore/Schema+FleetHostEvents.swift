/// The SQL of migration "v13" (the events of a fleet host's own role made and withdrawn, and of
/// a shared store upgraded, so that a PostgreSQL store's log copies in whole); never edit it
/// once shipped.
let schemaV13 = """
  -- Migration "v13": new kinds of events only; every row of v12 stays as it is.
  INSERT INTO audit_kind (name) VALUES
    ('fleet_host_added'), ('fleet_host_removed'), ('store_upgraded');
  """
